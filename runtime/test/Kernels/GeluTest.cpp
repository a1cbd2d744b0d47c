//===- GeluTest.cpp - gelu_fwd / gelu_bwd ---------------------------------===//
//
// Both forms against their definitions in double over [-20, 20] (the bounds
// GeluMath.h states), the gradients against finite differences too, large
// inputs, NaN, on one thread and on several, and the error paths.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mgsrt_test;

namespace {

/// y and dy/dx of the form in double.
struct Reference {
  double y, dydx;
};
Reference reference(double x, bool tanh) {
  if (!tanh) {
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    return {x * cdf, cdf + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI)};
  }
  const double k = std::sqrt(2 / M_PI), t = std::tanh(k * (x + 0.044715 * x * x * x));
  return {0.5 * x * (1 + t),
          0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)};
}

/// Every float step of 1e-4 over [-20, 20], as float.
std::vector<float> grid() {
  std::vector<float> x;
  for (int64_t i = -200000; i <= 200000; ++i)
    x.push_back(static_cast<float>(i * 1e-4));
  return x;
}

class GeluTest : public ::testing::TestWithParam<int64_t> {
protected:
  bool tanh() const { return GetParam() == MGSRT_GELU_TANH; }
};

TEST_P(GeluTest, ForwardMatchesReference) {
  Ctx ctx;
  std::vector<float> x = grid(), y(x.size());
  auto desc = geluDesc(x.size(), GetParam());
  void *bufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_gelu_fwd(ctx, desc.data(), bufs));
  int reported = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = reference(x[i], tanh()).y, err = std::fabs(y[i] - want);
    // Phi within 2e-7 everywhere (y: x Phi, rounded); 1.5e-6 relative above -4.
    const bool ok =
        err <= 3e-7 * std::fabs(x[i]) && (x[i] <= -4 || err <= 1.5e-6 * std::fabs(want));
    if (!ok && reported++ < 8)
      ADD_FAILURE() << "x " << x[i] << ": y " << y[i] << ", want " << want;
  }
}

TEST_P(GeluTest, BackwardMatchesReference) {
  Ctx ctx;
  std::vector<float> x = grid(), dy = randomVec(x.size(), -2.0f, 2.0f), dx(x.size());
  auto desc = geluDesc(x.size(), GetParam());
  void *bufs[] = {x.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_gelu_bwd(ctx, desc.data(), bufs));
  int reported = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = dy[i] * reference(x[i], tanh()).dydx;
    if (!(std::fabs(dx[i] - want) <= 3e-7 * std::fabs(dy[i]) + 1e-30) && reported++ < 8)
      ADD_FAILURE() << "x " << x[i] << " dy " << dy[i] << ": dx " << dx[i] << ", want " << want;
  }
}

TEST_P(GeluTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  // A few elements, and enough for several threads and a partial last chunk.
  for (int64_t n : {int64_t{37}, int64_t{100003}}) {
    SCOPED_TRACE(n);
    std::vector<float> x = randomVec(n, -5.0f, 5.0f), dy = randomVec(n), dx(n);
    auto desc = geluDesc(n, GetParam());
    auto fwd = [&] {
      std::vector<float> y(x.size());
      void *bufs[] = {x.data(), y.data()};
      EXPECT_OK(ctx, mgsrt_gelu_fwd(ctx, desc.data(), bufs));
      return y;
    };
    void *bufs[] = {x.data(), dy.data(), dx.data()};
    ASSERT_OK(ctx, mgsrt_gelu_bwd(ctx, desc.data(), bufs));
    checkGrad(dx, x, dy, fwd, 1e-2, 2e-3, "dx");
  }
}

// Far out y is x or 0 and dy/dx 1 or 0, nothing overflows; NaN stays NaN;
// zero elements touch nothing.
TEST_P(GeluTest, LargeInputsNaNAndEmpty) {
  Ctx ctx;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {1e30f, -1e30f, 60.0f, -60.0f, nan}, y(x.size()),
                     dy(x.size(), 1.0f), dx(x.size());
  auto desc = geluDesc(x.size(), GetParam());
  void *fwd[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_gelu_fwd(ctx, desc.data(), fwd));
  void *bwd[] = {x.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_gelu_bwd(ctx, desc.data(), bwd));
  const float wantY[] = {1e30f, 0.0f, 60.0f, 0.0f}, wantDx[] = {1.0f, 0.0f, 1.0f, 0.0f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(y[i], wantY[i]) << x[i];
    EXPECT_EQ(dx[i], wantDx[i]) << x[i];
  }
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_TRUE(std::isnan(dx[4]));
  auto none = geluDesc(0, GetParam());
  void *empty[] = {nullptr, nullptr, nullptr};
  EXPECT_OK(ctx, mgsrt_gelu_fwd(ctx, none.data(), empty));
  EXPECT_OK(ctx, mgsrt_gelu_bwd(ctx, none.data(), empty));
}

INSTANTIATE_TEST_SUITE_P(Forms, GeluTest,
                         ::testing::Values(int64_t{MGSRT_GELU_NONE}, int64_t{MGSRT_GELU_TANH}),
                         [](const auto &info) {
                           return info.param == MGSRT_GELU_TANH ? "Tanh" : "Exact";
                         });

TEST(GeluTest, Errors) {
  float v[4] = {1, 2, 3, 4}, w[4];
  auto expectError = [](auto kernel, const std::vector<int64_t> &desc, void *const *bufs,
                        const std::string &words) {
    Ctx ctx; // errors are sticky: a context each
    EXPECT_EQ(kernel(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(ctx.message().find(words), std::string::npos) << ctx.message();
  };
  void *fwd[] = {v, w}, *bwd[] = {v, v, w};
  expectError(mgsrt_gelu_fwd, geluDesc(4, 2), fwd,
              "gelu_fwd: approximate 2 is neither MGSRT_GELU_NONE (0) nor MGSRT_GELU_TANH (1)");
  expectError(mgsrt_gelu_bwd, geluDesc(-1, MGSRT_GELU_NONE), bwd, "element count -1 is negative");
  void *noY[] = {v, nullptr};
  expectError(mgsrt_gelu_fwd, geluDesc(4, MGSRT_GELU_TANH), noY, "buffer 1 (y) is null");
  void *noDy[] = {v, nullptr, w};
  expectError(mgsrt_gelu_bwd, geluDesc(4, MGSRT_GELU_NONE), noDy, "buffer 1 (dy) is null");
}

} // namespace
