//===- SelectTest.cpp - topk_positions ------------------------------------===//
//
// topk_positions against a stable sort of each row (greatest or least
// first, equal values in ascending position, NaN greater than every
// number) for k from 0 to the row's length, rows with many ties, rows with
// NaNs and infinities, enough rows for the OpenMP threads; the error paths.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mgsrt_test;

namespace {

/// Each row's first k positions by a stable sort: the reference.
std::vector<float> sortedPositions(const std::vector<float> &x, int64_t rows, int64_t len, int64_t k,
                                   bool largest) {
  std::vector<float> y;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(len);
    std::iota(order.begin(), order.end(), 0);
    // Sort keys: NaN last when ascending (first when descending), then the value.
    auto key = [&](int64_t i) {
      const float v = x[r * len + i];
      return std::pair<int, float>{std::isnan(v) ? 1 : 0, std::isnan(v) ? 0.0f : v};
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key(b) < key(a) : key(a) < key(b);
    });
    for (int64_t j = 0; j < k; ++j)
      y.push_back(static_cast<float>(order[j]));
  }
  return y;
}

std::vector<float> run(const std::vector<float> &x, int64_t rows, int64_t len, int64_t k,
                       bool largest) {
  std::vector<float> xs = x, y(rows * k, -1.0f);
  auto desc = topKPositionsDesc(rows, len, k, largest);
  void *bufs[] = {xs.data(), y.data()};
  Ctx ctx;
  EXPECT_EQ(mgsrt_topk_positions(ctx, desc.data(), bufs), MGSRT_OK) << ctx.message();
  return y;
}

TEST(TopKPositionsTest, MatchesAStableSort) {
  for (bool largest : {true, false})
    for (auto [rows, len] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4}, {16, 8}, {5, 300},
                             {4096, 16}}) {
      std::vector<float> x = randomVec(rows * len);
      for (int64_t k : {int64_t{0}, int64_t{1}, std::min<int64_t>(2, len), len / 2, len}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(len) + " k " + std::to_string(k) +
                     (largest ? " largest" : " smallest"));
        EXPECT_EQ(run(x, rows, len, k, largest), sortedPositions(x, rows, len, k, largest));
      }
    }
}

TEST(TopKPositionsTest, TiesComeInAscendingPosition) {
  // Values from {-1, 0, 1}: every row full of ties; -0.0 equals 0.0.
  const int64_t rows = 64, len = 12;
  std::vector<float> x(rows * len);
  for (int64_t i = 0; i < rows * len; ++i)
    x[i] = static_cast<float>((i * 7) % 3) - 1.0f;
  x[5] = -0.0f;
  for (bool largest : {true, false})
    for (int64_t k : {1, 5, 12})
      EXPECT_EQ(run(x, rows, len, k, largest), sortedPositions(x, rows, len, k, largest))
          << "k " << k << (largest ? " largest" : " smallest");
  // The first row by hand: 1 at 2, 8, 11; 0 at 1, 4, 5 (-0.0), 7, 10; -1 at 0, 3, 6, 9.
  std::vector<float> first(x.begin(), x.begin() + len);
  EXPECT_EQ(run(first, 1, len, 6, true), (std::vector<float>{2, 8, 11, 1, 4, 5}));
  EXPECT_EQ(run(first, 1, len, 6, false), (std::vector<float>{0, 3, 6, 9, 1, 4}));
}

TEST(TopKPositionsTest, NaNIsGreaterThanEveryNumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1.0f, nan, inf, -inf, nan, 0.5f};
  EXPECT_EQ(run(x, 1, 6, 4, true), (std::vector<float>{1, 4, 2, 0}));
  EXPECT_EQ(run(x, 1, 6, 6, false), (std::vector<float>{3, 5, 0, 2, 1, 4}));
}

TEST(TopKPositionsTest, Errors) {
  float v[4] = {1, 2, 3, 4}, w[4];
  auto expectError = [](const std::vector<int64_t> &desc, void *const *bufs,
                        const std::string &words) {
    Ctx ctx; // errors are sticky: a context each
    EXPECT_EQ(mgsrt_topk_positions(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(ctx.message().find(words), std::string::npos) << ctx.message();
  };
  void *both[] = {v, w}, *noY[] = {v, nullptr}, *noX[] = {nullptr, w};
  expectError(topKPositionsDesc(-1, 4, 1, 1), both,
              "topk_positions: rows=-1 len=4: extents must be non-negative");
  expectError(topKPositionsDesc(1, (int64_t{1} << 24) + 1, 1, 1), both, "len at most 2^24");
  expectError(topKPositionsDesc(1, 4, 5, 1), both, "k=5 is outside [0, len=4]");
  expectError(topKPositionsDesc(1, 4, -1, 1), both, "k=-1 is outside");
  expectError(topKPositionsDesc(1, 4, 2, 2), both, "largest 2 is neither 0 nor 1");
  expectError(topKPositionsDesc(1, 4, 2, 1), noY, "buffer 1 (y) is null");
  expectError(topKPositionsDesc(1, 4, 2, 0), noX, "buffer 0 (x) is null");
}

} // namespace
