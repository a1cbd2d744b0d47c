//===- RandomTest.cpp - random_normal/uniform: the stream, moments, errors ===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace mgsrt_test;

namespace {

/// mgsrt.h's definition, written out: Box-Muller on the halves of the
/// stream's next value, in double.
float referenceNormal(uint64_t &state, double mean, double scale) {
  const uint64_t r = splitmix64(state);
  const double u1 = (static_cast<double>(r >> 32) + 1.0) / 4294967296.0;
  const double u2 = static_cast<double>(r & 0xFFFFFFFFull) / 4294967296.0;
  const double pi = std::acos(-1.0);
  return static_cast<float>(mean + scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * pi * u2));
}

/// n values of `kernel` (mgsrt_random_normal: a mean, b scale;
/// mgsrt_random_uniform: a low, b high).
std::vector<float> drawWith(decltype(&mgsrt_random_normal) kernel, Ctx &ctx, int64_t n, double a,
                            double b) {
  std::vector<float> y(n, std::numeric_limits<float>::quiet_NaN());
  const int64_t desc[] = {n, bits(a), bits(b)};
  void *bufs[] = {y.data()};
  EXPECT_EQ(kernel(ctx, desc, bufs), MGSRT_OK) << ctx.message();
  return y;
}
std::vector<float> draw(Ctx &ctx, int64_t n, double mean, double scale) {
  return drawWith(mgsrt_random_normal, ctx, n, mean, scale);
}
std::vector<float> drawUniform(Ctx &ctx, int64_t n, double low, double high) {
  return drawWith(mgsrt_random_uniform, ctx, n, low, high);
}

TEST(RandomNormalTest, ValuesFollowTheStream) {
  Ctx ctx(777);
  const int64_t n = 20000;
  std::vector<float> y = draw(ctx, n, 0.5, 2.0);
  uint64_t state = 777;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], referenceNormal(state, 0.5, 2.0)) << i;
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), state); // advanced by n draws
}

TEST(RandomNormalTest, MomentsOfTheDistribution) {
  Ctx ctx(3);
  const int64_t n = 400000;
  const double mean = 2.0, scale = 0.5;
  std::vector<float> y = draw(ctx, n, mean, scale);
  double sum = 0, sq = 0;
  int64_t withinOne = 0;
  for (float v : y) {
    ASSERT_TRUE(std::isfinite(v));
    const double z = (v - mean) / scale;
    sum += z;
    sq += z * z;
    withinOne += std::fabs(z) < 1.0;
  }
  // Standard errors: mean 1/sqrt(n) = 0.0016, variance sqrt(2/n) = 0.0022,
  // P(|z| < 1) = 0.6827 with 0.0007: each bound is over 5 of them.
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.015);
  EXPECT_NEAR(static_cast<double>(withinOne) / n, 0.6827, 0.005);
}

TEST(RandomNormalTest, SameStateSameValuesAndTheStreamMovesOn) {
  Ctx ctx(5);
  const uint64_t start = mgsrt_ctx_rng_state(ctx);
  std::vector<float> a = draw(ctx, 1000, 0.0, 1.0), b = draw(ctx, 1000, 0.0, 1.0);
  EXPECT_NE(a, b);
  mgsrt_ctx_set_rng_state(ctx, start);
  EXPECT_EQ(draw(ctx, 1000, 0.0, 1.0), a);
  // It shares the stream with dropout: a dropout between two draws moves it.
  mgsrt_ctx_set_rng_state(ctx, start);
  std::vector<float> x(10, 1.0f), y(10);
  const int64_t dropout[] = {10, bits(0.5), 1, 1};
  void *bufs[] = {x.data(), y.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, dropout, bufs));
  EXPECT_NE(draw(ctx, 1000, 0.0, 1.0), a);
  // Nothing to draw: the stream stays.
  const uint64_t before = mgsrt_ctx_rng_state(ctx);
  draw(ctx, 0, 0.0, 1.0);
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), before);
}

TEST(RandomNormalTest, BadDescriptorsAreErrors) {
  std::vector<float> y(4);
  void *bufs[] = {y.data()};
  struct Case {
    int64_t desc[3];
    const char *message;
  } cases[] = {
      {{-1, bits(0.0), bits(1.0)}, "random_normal: element count -1 is negative"},
      {{4, bits(std::numeric_limits<double>::infinity()), bits(1.0)},
       "random_normal: mean inf or scale 1 is not finite"},
      {{4, bits(0.0), bits(std::nan(""))}, "random_normal: mean 0 or scale nan is not finite"},
  };
  for (const Case &c : cases) {
    Ctx ctx;
    EXPECT_EQ(mgsrt_random_normal(ctx, c.desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), c.message);
  }
  Ctx ctx;
  const int64_t desc[] = {4, bits(0.0), bits(1.0)};
  void *none[] = {nullptr};
  EXPECT_EQ(mgsrt_random_normal(ctx, desc, none), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "random_normal: buffer 0 (y) is null");
}

TEST(RandomUniformTest, ValuesFollowTheStream) {
  Ctx ctx(99);
  const int64_t n = 20000;
  std::vector<float> y = drawUniform(ctx, n, -2.0, 3.0);
  uint64_t state = 99;
  for (int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(splitmix64(state) >> 40) / 16777216.0;
    ASSERT_EQ(y[i], static_cast<float>(-2.0 + 5.0 * u)) << i;
  }
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), state);
}

TEST(RandomUniformTest, WithinTheRangeAndEvenlySpread) {
  Ctx ctx(4);
  const int64_t n = 400000, bins = 50;
  std::vector<float> y = drawUniform(ctx, n, 0.0, 50.0);
  std::vector<int64_t> counts(bins);
  for (float v : y) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 50.0f);
    ++counts[static_cast<int64_t>(v)]; // (torch.rand(N) * 50).long(): a time step
  }
  // 8000 expected a bin, standard deviation 88: every bin within 5 of them.
  for (int64_t b = 0; b < bins; ++b)
    EXPECT_NEAR(counts[b], n / bins, 450) << "bin " << b;
  // A range whose top rounds to `high` in float keeps the values below it.
  std::vector<float> tight = drawUniform(ctx, 100000, 1.0, 1.0 + 1e-7);
  for (float v : tight)
    ASSERT_LT(static_cast<double>(v), 1.0 + 1e-7);
}

TEST(RandomUniformTest, BadRangesAreErrors) {
  std::vector<float> y(4);
  void *bufs[] = {y.data()};
  struct Case {
    int64_t desc[3];
    const char *message;
  } cases[] = {
      {{4, bits(1.0), bits(1.0)}, "random_uniform: low 1 is not below high 1"},
      {{4, bits(2.0), bits(-1.0)}, "random_uniform: low 2 is not below high -1"},
      {{4, bits(0.0), bits(std::numeric_limits<double>::infinity())},
       "random_uniform: low 0 or high inf is not finite"},
  };
  for (const Case &c : cases) {
    Ctx ctx;
    EXPECT_EQ(mgsrt_random_uniform(ctx, c.desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), c.message);
  }
}

} // namespace
