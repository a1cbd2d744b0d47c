//===- ShapeUtilsTest.cpp - ONNX shape rules ------------------------------===//

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include <gtest/gtest.h>

using namespace mgs::train;
using Shape = llvm::SmallVector<int64_t>;
using Pad = std::pair<int64_t, int64_t>;

TEST(ShapeUtils, BroadcastAlignsTrailingDimensions) {
  EXPECT_EQ(broadcastShapes({4, 3}, {3}), Shape({4, 3}));
  EXPECT_EQ(broadcastShapes({2, 1, 5}, {7, 1}), Shape({2, 7, 5}));
  EXPECT_EQ(broadcastShapes({}, {2, 2}), Shape({2, 2}));
  EXPECT_FALSE(broadcastShapes({4, 3}, {4}).has_value());
}

TEST(ShapeUtils, UnidirectionalBroadcastNeverGrowsTheTarget) {
  EXPECT_TRUE(isUnidirectionallyBroadcastable({10}, {8, 10}));
  EXPECT_TRUE(isUnidirectionallyBroadcastable({8, 1}, {8, 10}));
  EXPECT_FALSE(isUnidirectionallyBroadcastable({8}, {8, 10}));
  EXPECT_FALSE(isUnidirectionallyBroadcastable({1, 8, 10}, {8, 10}));
}

TEST(ShapeUtils, MatmulFollowsNumpy) {
  EXPECT_EQ(matmulShape({2, 3, 4}, {4, 5}), Shape({2, 3, 5}));
  EXPECT_EQ(matmulShape({4}, {4, 5}), Shape({5}));
  EXPECT_EQ(matmulShape({3, 4}, {4}), Shape({3}));
  EXPECT_EQ(matmulShape({4}, {4}), Shape({}));
  EXPECT_EQ(matmulShape({2, 1, 3, 4}, {5, 4, 6}), Shape({2, 5, 3, 6}));
  EXPECT_FALSE(matmulShape({3, 4}, {5, 6}).has_value());
}

TEST(ShapeUtils, SlidingWindowMatchesOnnxShapeInference) {
  // 32 wide, 3x3 kernel, pad 1, stride 1 -> 32.
  EXPECT_EQ(slidingWindowSize(32, 3, 1, 1, 1, 1, false), 32);
  // ResNet-50 stem: 224, 7x7, stride 2, pad 3 -> 112.
  EXPECT_EQ(slidingWindowSize(224, 7, 2, 3, 3, 1, false), 112);
  // ceil_mode rounds the last partial window up: (5 - 2) / 2 -> 1 or 2, plus 1.
  EXPECT_EQ(slidingWindowSize(5, 2, 2, 0, 0, 1, false), 2);
  EXPECT_EQ(slidingWindowSize(5, 2, 2, 0, 0, 1, true), 3);
  // Dilation 2 makes a 3-tap kernel span 5.
  EXPECT_EQ(slidingWindowSize(7, 3, 1, 0, 0, 2, false), 3);
  // The window does not fit.
  EXPECT_LE(slidingWindowSize(2, 3, 1, 0, 0, 1, false), 0);
}

TEST(ShapeUtils, SamePaddingPutsTheOddPadWhereOnnxSays) {
  // 5 wide, 2x2 kernel, stride 1: total pad 1.
  EXPECT_EQ(samePadding(5, 2, 1, 1, /*upper=*/true), Pad(0, 1));
  EXPECT_EQ(samePadding(5, 2, 1, 1, /*upper=*/false), Pad(1, 0));
  // 32 wide, 3x3, stride 2: out 16, total pad max(0, 15*2 + 3 - 32) = 1.
  EXPECT_EQ(samePadding(32, 3, 2, 1, true), Pad(0, 1));
}

TEST(ShapeUtils, LeadingBlockMaskIsLeadingDimensionsThenOnes) {
  EXPECT_TRUE(isLeadingBlockMask({4, 3, 8, 8}, {4, 3, 8, 8}));  // elementwise dropout
  EXPECT_TRUE(isLeadingBlockMask({4, 3, 8, 8}, {4, 1, 1, 1}));  // one draw a sample
  EXPECT_TRUE(isLeadingBlockMask({4, 3, 8, 8}, {4, 3, 1, 1}));  // one a channel
  EXPECT_TRUE(isLeadingBlockMask({4, 3}, {1, 1}));              // one for all
  EXPECT_FALSE(isLeadingBlockMask({4, 3, 8, 8}, {4, 1, 8, 8})); // a hole after a one
  EXPECT_FALSE(isLeadingBlockMask({4, 3, 8, 8}, {1, 3, 1, 1})); // not leading
  EXPECT_FALSE(isLeadingBlockMask({4, 3, 8, 8}, {4, 1, 1}));    // rank differs
  EXPECT_FALSE(isLeadingBlockMask({4, 3}, {4, 2}));             // neither data nor one
}

TEST(ShapeUtils, Printing) {
  EXPECT_EQ(shapeToString({2, 3, 4}), "2x3x4");
  EXPECT_EQ(shapeToString({}), "scalar");
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({}), 1);
}
