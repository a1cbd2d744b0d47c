//===- CalibrateTest.cpp - The calibration's sparse-collective fits -------===//
//
// --calibrate's message costs of the global top-k and the balanced sparse
// all-reduce: the planner's message counts and bytes (docs/design.md), the
// top-k curve as the planner reads it, and the fit recovering a_p and b_p.
//
//===----------------------------------------------------------------------===//

#include "Driver/Calibrate.h"

#include <gtest/gtest.h>

using namespace mgs::rt::driver;

namespace {

TEST(CalibrateTest, GTopKShapeFollowsThePlanner) {
  // P a power of two: log2 P rounds of 8k bytes, log2 P merges.
  MessageShape s = gtopkShape(8, 100);
  EXPECT_EQ(s.messages, 3);
  EXPECT_EQ(s.bytes, 3 * 800);
  EXPECT_EQ(s.merges, 3);
  // Otherwise fold + butterfly + unfold: floor(log2 P) + 2 rounds, + 1 merges.
  s = gtopkShape(5, 10);
  EXPECT_EQ(s.messages, 4);
  EXPECT_EQ(s.bytes, 4 * 80);
  EXPECT_EQ(s.merges, 3);
  s = gtopkShape(1, 10);
  EXPECT_EQ(s.messages, 0);
  EXPECT_EQ(s.bytes, 0);
}

TEST(CalibrateTest, SparseAllreduceShapeFollowsThePlanner) {
  // P = 8, k = 800, n = 4 P k: boundaries 3 messages of 8 * 7 bytes; reduce 7
  // messages of 8k/P; gather 3 Bruck rounds of 7 regions of min(8k, 4n/P).
  MessageShape s = sparseAllreduceShape(8, 800, 4 * 8 * 800);
  EXPECT_EQ(s.messages, 3 + 7 + 3);
  EXPECT_DOUBLE_EQ(s.bytes, 3 * 8 * 7 + 7 * (6400.0 / 8 + 6400));
  EXPECT_EQ(s.merges, 0);
  // A dense region (4n/P < 8k) counts its 4n/P bytes.
  s = sparseAllreduceShape(4, 1000, 4000);
  EXPECT_DOUBLE_EQ(s.bytes, 2 * 8 * 3 + 3 * (8000.0 / 4 + 4000));
  EXPECT_EQ(sparseAllreduceShape(1, 10, 100).messages, 0);
}

TEST(CalibrateTest, TopKSecondsAtReadsTheCurveAsThePlanner) {
  std::vector<std::pair<int64_t, double>> pts = {{16, 1e-6}, {64, 2e-6}, {256, 8e-6}};
  EXPECT_DOUBLE_EQ(topkSecondsAt(pts, 4), 1e-6);
  EXPECT_DOUBLE_EQ(topkSecondsAt(pts, 64), 2e-6);
  EXPECT_DOUBLE_EQ(topkSecondsAt(pts, 40), 1.5e-6);
  EXPECT_DOUBLE_EQ(topkSecondsAt(pts, 448), 14e-6); // the last segment's line
  EXPECT_DOUBLE_EQ(topkSecondsAt({}, 100), 0);
}

TEST(CalibrateTest, FitMessagesRecoversTheMessageCost) {
  // Times made from a_p = 50 us, b_p = 8 ns/B by the planner's formulas.
  const double ap = 50e-6, bp = 8e-9;
  for (int workers : {2, 5, 8}) {
    std::vector<std::pair<MessageShape, double>> g, s;
    for (int64_t k : {1, 64, 1024, 16384, 131072}) {
      MessageShape a = gtopkShape(workers, k),
                   b = sparseAllreduceShape(workers, k, 4 * workers * k);
      g.emplace_back(a, a.messages * ap + a.bytes * bp);
      s.emplace_back(b, b.messages * ap + b.bytes * bp);
    }
    for (const LinearCost &c : {fitMessages(g), fitMessages(s)}) {
      EXPECT_NEAR(c.alpha, ap, ap * 1e-6) << workers << " workers";
      EXPECT_NEAR(c.beta, bp, bp * 1e-6) << workers << " workers";
    }
  }
  EXPECT_EQ(fitMessages({}).alpha, 0);
}

} // namespace
