//===- ScanTest.cpp - cumsum / to_index / from_index ----------------------===//
//
// cumsum against a naive sum in double on every axis position (outer, len,
// inner), inclusive and exclusive, forward and reverse; integers summed
// exactly; to_index rounding toward zero and refusing NaN, infinities and
// values outside int64 before it writes anything; from_index exact on
// integers up to 2^24 and refusing a value outside its range before it
// writes anything; the error paths.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mgsrt_test;

namespace {

struct Shape {
  int64_t outer, len, inner;
};

class CumSumTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(CumSumTest, MatchesNaiveSums) {
  const auto [exclusive, reverse] = GetParam();
  for (Shape s : {Shape{1, 1, 1}, Shape{3, 7, 1}, Shape{2, 5, 4}, Shape{1, 300, 3},
                  Shape{400, 128, 2}}) {
    SCOPED_TRACE(std::to_string(s.outer) + "x" + std::to_string(s.len) + "x" +
                 std::to_string(s.inner));
    Ctx ctx;
    const int64_t n = s.outer * s.len * s.inner;
    std::vector<float> x = randomVec(n), y(n, -7.0f);
    auto desc = cumSumDesc(s.outer, s.len, s.inner, exclusive, reverse);
    void *bufs[] = {x.data(), y.data()};
    ASSERT_OK(ctx, mgsrt_cumsum(ctx, desc.data(), bufs));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i)
        for (int64_t t = 0; t < s.len; ++t) {
          double want = 0;
          for (int64_t u = 0; u < s.len; ++u) {
            const bool before = reverse ? u > t : u < t;
            if (before || (!exclusive && u == t))
              want += x[(o * s.len + u) * s.inner + i];
          }
          const float got = y[(o * s.len + t) * s.inner + i];
          ASSERT_NEAR(got, want, 1e-6 * s.len) << "o " << o << " t " << t << " i " << i;
        }
  }
}

TEST_P(CumSumTest, IntegersAreExact) {
  // Position ids: a 0/1 mask's running count, up to 4096 a line.
  const auto [exclusive, reverse] = GetParam();
  const int64_t len = 4096;
  std::vector<float> x(2 * len), y(2 * len);
  for (int64_t i = 0; i < 2 * len; ++i)
    x[i] = (i * 7919) % 5 == 0 ? 0.0f : 1.0f;
  auto desc = cumSumDesc(2, len, 1, exclusive, reverse);
  void *bufs[] = {x.data(), y.data()};
  Ctx ctx;
  ASSERT_OK(ctx, mgsrt_cumsum(ctx, desc.data(), bufs));
  for (int64_t line = 0; line < 2; ++line) {
    int64_t count = 0;
    for (int64_t s = 0; s < len; ++s) {
      const int64_t t = line * len + (reverse ? len - 1 - s : s);
      if (!exclusive)
        count += static_cast<int64_t>(x[t]);
      ASSERT_EQ(y[t], static_cast<float>(count)) << "at " << t;
      if (exclusive)
        count += static_cast<int64_t>(x[t]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, CumSumTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto &info) {
                           return std::string(std::get<0>(info.param) ? "Exclusive" : "Inclusive") +
                                  (std::get<1>(info.param) ? "Reverse" : "Forward");
                         });

TEST(ToIndexTest, RoundsTowardZero) {
  std::vector<float> x = {0.0f, 1.0f, 2.75f, -2.75f, 16777216.0f, -1e18f, 513.0f};
  std::vector<int64_t> y(x.size(), -1);
  std::vector<int64_t> desc = {static_cast<int64_t>(x.size())};
  void *bufs[] = {x.data(), y.data()};
  Ctx ctx;
  ASSERT_OK(ctx, mgsrt_to_index(ctx, desc.data(), bufs));
  const std::vector<int64_t> want = {0, 1, 2, -2, 16777216, static_cast<int64_t>(-1e18f), 513};
  EXPECT_EQ(y, want);
}

TEST(ToIndexTest, RefusesValuesThatAreNoIndexBeforeWriting) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {nan, inf, -inf, 9.3e18f, -1e19f}) {
    std::vector<float> x = {1.0f, 2.0f, bad, 3.0f};
    std::vector<int64_t> y(4, -5);
    std::vector<int64_t> desc = {4};
    void *bufs[] = {x.data(), y.data()};
    Ctx ctx;
    EXPECT_EQ(mgsrt_to_index(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(ctx.message().find("to_index: value 2 is "), std::string::npos) << ctx.message();
    EXPECT_NE(ctx.message().find("which is not an int64 index"), std::string::npos);
    EXPECT_EQ(y, std::vector<int64_t>(4, -5));
  }
}

TEST(FromIndexTest, IntegersAreExactUpTo2To24) {
  const int64_t limit = int64_t{1} << 24;
  std::vector<int64_t> x = {0, 1, -1, 9, limit, -limit, limit - 1, 12345678};
  std::vector<float> y(x.size(), -7.0f);
  std::vector<int64_t> desc = {static_cast<int64_t>(x.size()), -limit, limit};
  void *bufs[] = {x.data(), y.data()};
  Ctx ctx;
  ASSERT_OK(ctx, mgsrt_from_index(ctx, desc.data(), bufs));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(static_cast<int64_t>(y[i]), x[i]) << "element " << i;
}

TEST(FromIndexTest, RefusesValuesOutsideItsRangeBeforeWriting) {
  // Labels of 10 classes: -1 (a padding label) and 10 are outside.
  for (int64_t bad : {int64_t{-1}, int64_t{10}, int64_t{-100}, int64_t{1} << 40}) {
    std::vector<int64_t> x = {3, 9, 0, bad, 4};
    std::vector<float> y(5, -7.0f);
    std::vector<int64_t> desc = {5, 0, 9};
    void *bufs[] = {x.data(), y.data()};
    Ctx ctx;
    EXPECT_EQ(mgsrt_from_index(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    const std::string want = "from_index: value 3 is " + std::to_string(bad) + ", outside [0, 9]";
    EXPECT_NE(ctx.message().find(want), std::string::npos) << ctx.message();
    EXPECT_EQ(y, std::vector<float>(5, -7.0f));
  }
}

TEST(ScanTest, Errors) {
  float v[4] = {1, 2, 3, 4}, w[4];
  auto expectError = [](auto kernel, const std::vector<int64_t> &desc, void *const *bufs,
                        const std::string &words) {
    Ctx ctx; // errors are sticky: a context each
    EXPECT_EQ(kernel(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(ctx.message().find(words), std::string::npos) << ctx.message();
  };
  void *both[] = {v, w}, *noY[] = {v, nullptr};
  expectError(mgsrt_cumsum, cumSumDesc(1, -4, 1, false, false), both,
              "cumsum: outer=1 len=-4 inner=1: extents must be non-negative");
  expectError(mgsrt_cumsum, cumSumDesc(1, 4, 1, 2, false), both, "exclusive 2 is neither 0 nor 1");
  auto badReverse = cumSumDesc(1, 4, 1, false, false);
  badReverse[mgs::contract::CumSumDesc::Reverse] = -1;
  expectError(mgsrt_cumsum, badReverse, both, "reverse -1 is neither 0 nor 1");
  expectError(mgsrt_cumsum, cumSumDesc(1, 4, 1, false, true), noY, "buffer 1 (y) is null");
  expectError(mgsrt_to_index, {-3}, both, "to_index: element count -3 is negative");
  expectError(mgsrt_to_index, {4}, noY, "buffer 1 (y) is null");
  expectError(mgsrt_from_index, {-3, 0, 9}, both, "from_index: element count -3 is negative");
  expectError(mgsrt_from_index, {4, 9, 0}, both,
              "from_index: range [9, 0] is empty or not within [-2^24, 2^24]");
  expectError(mgsrt_from_index, {4, 0, (int64_t{1} << 24) + 1}, both,
              "range [0, 16777217] is empty or not within");
  expectError(mgsrt_from_index, {4, 0, 9}, noY, "buffer 1 (y) is null");
}

} // namespace
