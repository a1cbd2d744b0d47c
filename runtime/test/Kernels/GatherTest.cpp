//===- GatherTest.cpp - rows of a table at indices (embeddings) -----------===//

#include "TestUtil.h"

using namespace mgsrt_test;

namespace {

TEST(Gather, ForwardCopiesTheRows) {
  Ctx ctx;
  std::vector<float> table = randomVec(5 * 3);
  std::vector<int64_t> idx = {4, 0, -1, 2}; // -1: the last row, as in ONNX
  std::vector<float> y(idx.size() * 3, -1.0f);
  const int64_t desc[] = {5, 3, 4};
  void *bufs[] = {table.data(), idx.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_gather_fwd(ctx, desc, bufs));
  for (size_t i = 0; i < idx.size(); ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(y[i * 3 + j], table[(idx[i] < 0 ? idx[i] + 5 : idx[i]) * 3 + j]) << i << "," << j;
}

TEST(Gather, BackwardAddsRowsInIndexOrder) {
  Ctx ctx;
  std::vector<int64_t> idx = {1, 3, -3};
  std::vector<float> dy = {1, 2, 10, 20, 100, 200};
  std::vector<float> dtable(4 * 2, -7.0f);
  const int64_t desc[] = {4, 2, 3};
  void *bufs[] = {idx.data(), dy.data(), dtable.data()};
  ASSERT_OK(ctx, mgsrt_gather_bwd(ctx, desc, bufs));
  EXPECT_EQ(dtable, (std::vector<float>{0, 0, 101, 202, 0, 0, 10, 20}));
}

TEST(Gather, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  std::vector<float> table = randomVec(6 * 4);
  std::vector<int64_t> idx = {5, 1, 1, 0, 5, 3, 2};
  std::vector<float> w = randomVec(idx.size() * 4);
  const int64_t desc[] = {6, 4, static_cast<int64_t>(idx.size())};
  auto fwd = [&] {
    std::vector<float> y(idx.size() * 4);
    void *bufs[] = {table.data(), idx.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_gather_fwd(ctx, desc, bufs));
    return y;
  };
  std::vector<float> dtable(table.size());
  void *bufs[] = {idx.data(), w.data(), dtable.data()};
  ASSERT_OK(ctx, mgsrt_gather_bwd(ctx, desc, bufs));
  checkGrad(dtable, table, w, fwd, 1e-2, 1e-3, "dtable");
}

TEST(Gather, AnIndexOutsideTheTableIsAnErrorAndWritesNothing) {
  for (int64_t bad : {int64_t(-6), int64_t(5)}) {
    Ctx ctx;
    std::vector<float> table(5 * 2, 1.0f), y(3 * 2, -3.0f);
    std::vector<int64_t> idx = {0, bad, 1};
    const int64_t desc[] = {5, 2, 3};
    void *bufs[] = {table.data(), idx.data(), y.data()};
    EXPECT_EQ(mgsrt_gather_fwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), "gather_fwd: index 1 is " + std::to_string(bad) +
                                 ", outside the table's rows [-5, 5)");
    EXPECT_EQ(y, std::vector<float>(6, -3.0f));
  }
  Ctx ctx;
  const int64_t desc[] = {0, 2, 3};
  std::vector<float> buf(8);
  void *bufs[] = {buf.data(), buf.data(), buf.data()};
  EXPECT_EQ(mgsrt_gather_bwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "gather_bwd: rows=0 row_size=2 count=3: rows must be positive, the "
                           "others non-negative");
}

} // namespace
