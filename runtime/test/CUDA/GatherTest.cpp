//===- GatherTest.cpp - GPU gather (embeddings) and its gradient vs the CPU ===//
//
// The GPU adds the gradient's rows in the CPU's order: forward and backward
// are the CPU's bit for bit, duplicates and negative indices included.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

#include "mgsrt/contract.h"

using namespace mgsrt_test;
using mgs::contract::GatherDesc;

namespace {

using GpuGather = GpuTest;

struct GatherRun {
  std::vector<float> y, dtable;
};

GatherRun runOn(mgsrt_ctx_t *ctx, bool onGpu, const int64_t *desc, const std::vector<float> &table,
          const std::vector<int64_t> &indices, const std::vector<float> &dy) {
  const int64_t rows = desc[GatherDesc::Rows], rowSize = desc[GatherDesc::RowSize];
  GatherRun r{std::vector<float>(dy.size()), std::vector<float>(rows * rowSize)};
  if (!onGpu) {
    std::vector<float> t = table, g = dy;
    std::vector<int64_t> idx = indices;
    void *fwd[] = {t.data(), idx.data(), r.y.data()};
    EXPECT_OK(ctx, mgsrt_gather_fwd(ctx, desc, fwd));
    void *bwd[] = {idx.data(), g.data(), r.dtable.data()};
    EXPECT_OK(ctx, mgsrt_gather_bwd(ctx, desc, bwd));
    return r;
  }
  DeviceBuffer<float> t(ctx, table), g(ctx, dy), y(ctx, dy.size()), dt(ctx, r.dtable.size());
  DeviceBuffer<int64_t> idx(ctx, indices);
  void *fwd[] = {t.ptr, idx.ptr, y.ptr};
  EXPECT_OK(ctx, mgsrt_gather_fwd(ctx, desc, fwd));
  void *bwd[] = {idx.ptr, g.ptr, dt.ptr};
  EXPECT_OK(ctx, mgsrt_gather_bwd(ctx, desc, bwd));
  EXPECT_OK(ctx, mgsrt_synchronize(ctx));
  return {y.download(), dt.download()};
}

TEST_F(GpuGather, ForwardAndBackwardEqualTheCpuBitForBit) {
  const int64_t rows = 50, rowSize = 33, count = 300;
  std::vector<int64_t> indices(count);
  for (int64_t i = 0; i < count; ++i) // duplicates, and negative indices from the end
    indices[i] = (i * 7) % rows - (i % 5 == 0 ? rows : 0);
  const int64_t desc[GatherDesc::Size] = {rows, rowSize, count};
  const std::vector<float> table = randomVec(rows * rowSize);
  const std::vector<float> dy = randomVec(count * rowSize);
  const GatherRun c = runOn(cpu, false, desc, table, indices, dy);
  const GatherRun g = runOn(gpu, true, desc, table, indices, dy);
  EXPECT_TRUE(bitsEqual(g.y, c.y)) << "forward";
  EXPECT_TRUE(bitsEqual(g.dtable, c.dtable)) << "backward";
}

TEST_F(GpuGather, AnIndexOutsideTheTableIsRefusedBeforeAnyWrite) {
  const int64_t desc[GatherDesc::Size] = {4, 2, 3};
  DeviceBuffer<float> table(gpu, std::vector<float>(8, 1.0f));
  DeviceBuffer<int64_t> idx(gpu, std::vector<int64_t>{0, 1, 4});
  DeviceBuffer<float> y(gpu, std::vector<float>(6, 9.0f));
  void *bufs[] = {table.ptr, idx.ptr, y.ptr};
  EXPECT_EQ(mgsrt_gather_fwd(gpu, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mgsrt_ctx_message(gpu)).find("index 2 is 4, outside the table's rows [-4, 4)"),
            std::string::npos)
      << mgsrt_ctx_message(gpu);
  mgsrt_ctx_clear(gpu); // the error is sticky: cleared so that y can be read back
  EXPECT_TRUE(bitsEqual(y.download(), std::vector<float>(6, 9.0f)));
}

} // namespace
