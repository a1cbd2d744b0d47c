//===- ComparisonTest.cpp - The GPU tests' comparisons fail on NaN --------===//
//
// The GPU tests compare a GPU result with the CPU oracle through maxRelDiff
// and relToMax (runtime/test/CUDA); those headers use only the C ABI, so
// their comparisons are checked here, on any machine: a NaN (which
// std::max drops) or a length mismatch must fail every bound.
//
//===----------------------------------------------------------------------===//

#include "../CUDA/LayerTestUtil.h"

#include <gtest/gtest-spi.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(GpuComparison, MaxRelDiffFailsOnNaNAndLengths) {
  const std::vector<float> oracle = {1.0f, -2.0f, 3.0f};
  EXPECT_EQ(maxRelDiff(oracle, oracle), 0.0);
  EXPECT_NEAR(maxRelDiff({1.0f, -2.0f, 3.3f}, oracle), 0.1, 1e-6);
  // An all-NaN result, one NaN anywhere, a NaN in the oracle.
  EXPECT_FALSE(maxRelDiff({kNaN, kNaN, kNaN}, oracle) <= 1e30);
  EXPECT_FALSE(maxRelDiff({1.0f, -2.0f, kNaN}, oracle) <= 1e30);
  EXPECT_FALSE(maxRelDiff(oracle, {1.0f, kNaN, 3.0f}) <= 1e30);
  EXPECT_FALSE(maxRelDiff({kNaN, kNaN}, {kNaN, kNaN}) <= 1e30);
  // An infinity against a finite value; equal infinities agree.
  EXPECT_FALSE(maxRelDiff({1.0f, -2.0f, kInf}, oracle) <= 1e30);
  EXPECT_EQ(maxRelDiff({kInf, -kInf}, {kInf, -kInf}), 0.0);
  // Shorter or longer: no common prefix makes it pass.
  EXPECT_FALSE(maxRelDiff({1.0f, -2.0f}, oracle) <= 1e30);
  EXPECT_FALSE(maxRelDiff({}, oracle) <= 1e30);
  EXPECT_FALSE(maxRelDiff({1.0f, -2.0f, 3.0f, 4.0f}, oracle) <= 1e30);
}

TEST(GpuComparison, RelToMaxFailsOnNaNAndLengths) {
  const std::vector<float> oracle = {1.0f, -20.0f, 3.0f};
  EXPECT_EQ(relToMax(oracle, oracle), 0.0);
  EXPECT_NEAR(relToMax({1.0f, -20.0f, 5.0f}, oracle), 0.1, 1e-6);
  EXPECT_FALSE(relToMax({kNaN, kNaN, kNaN}, oracle) <= 1e30);
  EXPECT_FALSE(relToMax({1.0f, kNaN, 3.0f}, oracle) <= 1e30);
  EXPECT_FALSE(relToMax(oracle, {kNaN, -20.0f, 3.0f}) <= 1e30);
  EXPECT_FALSE(relToMax({1.0f, -20.0f, kInf}, oracle) <= 1e30);
  // A length mismatch is reported (a failure of its own) and fails the bound.
  double d = 0;
  EXPECT_NONFATAL_FAILURE(d = relToMax({1.0f, -20.0f}, oracle), "sizes 2 vs 3");
  EXPECT_FALSE(d <= 1e30);
}

} // namespace
