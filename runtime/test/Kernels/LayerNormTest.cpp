//===- LayerNormTest.cpp - layer_norm_fwd / layer_norm_bwd ----------------===//
//
// The forward against the definition in double, the gradients against
// finite differences (x, scale, bias), absent gradients and the error paths.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mgsrt_test;

namespace {

struct LnCase {
  int64_t rows, cols;
};

class LayerNormTest : public ::testing::TestWithParam<LnCase> {};

constexpr double kEps = 1e-5;

std::vector<int64_t> lnDesc(const LnCase &c, double eps = kEps) {
  return {c.rows, c.cols, bits(eps)};
}

TEST_P(LayerNormTest, ForwardMatchesReference) {
  Ctx ctx;
  const LnCase c = GetParam();
  auto desc = lnDesc(c);
  std::vector<float> x = randomVec(c.rows * c.cols, -2.0f, 3.0f), s = randomVec(c.cols),
                     b = randomVec(c.cols), y(x.size()), mean(c.rows), inv(c.rows);
  void *bufs[] = {x.data(), s.data(), b.data(), y.data(), mean.data(), inv.data()};
  ASSERT_OK(ctx, mgsrt_layer_norm_fwd(ctx, desc.data(), bufs));
  std::vector<double> wantY(y.size()), wantM(c.rows), wantI(c.rows);
  for (int64_t r = 0; r < c.rows; ++r) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < c.cols; ++j)
      m += x[r * c.cols + j];
    m /= c.cols;
    for (int64_t j = 0; j < c.cols; ++j)
      v += (x[r * c.cols + j] - m) * (x[r * c.cols + j] - m);
    const double is = 1.0 / std::sqrt(v / c.cols + kEps);
    for (int64_t j = 0; j < c.cols; ++j)
      wantY[r * c.cols + j] = (x[r * c.cols + j] - m) * is * s[j] + b[j];
    wantM[r] = m;
    wantI[r] = is;
  }
  expectClose(y, wantY, 1e-5, 1e-5, "y");
  expectClose(mean, wantM, 1e-5, 1e-6, "mean");
  expectClose(inv, wantI, 1e-5, 1e-6, "inv_std");
}

TEST_P(LayerNormTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  const LnCase c = GetParam();
  auto desc = lnDesc(c);
  std::vector<float> x = randomVec(c.rows * c.cols, -2.0f, 3.0f), s = randomVec(c.cols),
                     b = randomVec(c.cols), dy = randomVec(x.size());
  std::vector<float> mean(c.rows), inv(c.rows), dx(x.size()), ds(c.cols), db(c.cols);
  auto fwd = [&] {
    std::vector<float> y(x.size());
    void *bufs[] = {x.data(), s.data(), b.data(), y.data(), mean.data(), inv.data()};
    EXPECT_OK(ctx, mgsrt_layer_norm_fwd(ctx, desc.data(), bufs));
    return y;
  };
  fwd();
  void *bufs[] = {x.data(), s.data(), mean.data(), inv.data(), dy.data(),
                  dx.data(), ds.data(), db.data()};
  ASSERT_OK(ctx, mgsrt_layer_norm_bwd(ctx, desc.data(), bufs));
  checkGrad(dx, x, dy, fwd, 1e-2, 2e-3, "dx");
  checkGrad(ds, s, dy, fwd, 1e-2, 2e-3, "dscale");
  checkGrad(db, b, dy, fwd, 1e-2, 2e-3, "dbias");

  // Absent gradients are not computed; the others do not change.
  fwd();
  std::vector<float> dx2(x.size(), 7.0f), ds2(c.cols, 7.0f);
  void *some[] = {x.data(), s.data(), mean.data(), inv.data(), dy.data(),
                  dx2.data(), nullptr, nullptr};
  ASSERT_OK(ctx, mgsrt_layer_norm_bwd(ctx, desc.data(), some));
  EXPECT_EQ(dx2, dx);
  void *params[] = {x.data(), s.data(), mean.data(), inv.data(), dy.data(),
                    nullptr, ds2.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_layer_norm_bwd(ctx, desc.data(), params));
  EXPECT_EQ(ds2, ds);
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormTest,
                         ::testing::Values(LnCase{1, 1}, LnCase{3, 5}, LnCase{7, 64},
                                           // big enough to run on several threads
                                           LnCase{260, 192}));

TEST(LayerNormTest, Errors) {
  float v[4] = {1, 2, 3, 4}, s[2] = {1, 1}, b[2] = {0, 0}, y[4], m[2], i[2];
  void *bufs[] = {v, s, b, y, m, i};
  auto expectError = [](auto kernel, const std::vector<int64_t> &desc, void *const *bufs,
                        const std::string &words) {
    Ctx ctx; // errors are sticky: a context each
    EXPECT_EQ(kernel(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(ctx.message().find(words), std::string::npos) << ctx.message();
  };
  expectError(mgsrt_layer_norm_fwd, lnDesc({2, 0}), bufs, "cols must be positive");
  expectError(mgsrt_layer_norm_fwd, lnDesc({2, 2}, -1.0), bufs,
              "epsilon -1 must be finite and non-negative");
  void *noBias[] = {v, s, nullptr, y, m, i};
  expectError(mgsrt_layer_norm_fwd, lnDesc({2, 2}), noBias, "buffer 2 (bias) is null");
  void *noDy[] = {v, s, m, i, nullptr, y, nullptr, nullptr};
  expectError(mgsrt_layer_norm_bwd, lnDesc({2, 2}), noDy, "buffer 4 (dy) is null");
}

} // namespace
