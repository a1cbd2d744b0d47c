//===- CalibrateTest.cpp - The calibration's sparse-collective fits -------===//
//
// --calibrate's message costs of the global top-k and the balanced sparse
// all-reduce: the planner's message counts and bytes (docs/design.md), the
// top-k curve as the planner reads it, the fit recovering a_p and b_p, the
// all-reduce's beta anchored at the model's largest gradient, and the
// optional profile keys.
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

// The sparse all-reduce's phases at the model's size: the boundaries (3
// messages of 168 bytes on 8 workers), the reduce (7, 44 KB) and the gather
// (3, 344 KB), as the timeline records them.
TEST(CalibrateTest, FitPhasesRecoversTheMessageCost) {
  const double ap = 1.7e-3, bp = 3.6e-8;
  std::vector<PhaseSample> phases;
  for (auto [messages, bytes] : {std::pair{3.0, 168.0}, {7.0, 45472.0}, {3.0, 344292.0}})
    phases.push_back({messages, bytes, messages * ap + bytes * bp});
  LinearCost c = fitPhases(phases);
  EXPECT_NEAR(c.alpha, ap, ap * 1e-9);
  EXPECT_NEAR(c.beta, bp, bp * 1e-9);
  // Measured times off the line: the fit weighs each phase's relative error,
  // so the small boundaries' time counts as much as the gather's.
  phases[0].seconds *= 2;
  c = fitPhases(phases);
  EXPECT_GT(c.alpha, ap);
  // A start-up that would come out negative is 0, the bytes refitted alone;
  // and the other way round.
  // (Through both points: a = -1e-6 s, b = 2e-9 s/B.)
  c = fitPhases({{1, 1000, 1e-6}, {1, 2000, 3e-6}});
  EXPECT_EQ(c.alpha, 0);
  // Least squares in relative error through 0: sum(B / t) / sum((B / t)^2).
  const double r1 = 1000 / 1e-6, r2 = 2000 / 3e-6;
  EXPECT_NEAR(c.beta, (r1 + r2) / (r1 * r1 + r2 * r2), 1e-18);
  // (Through both: a = 5e-3 s, b = -2e-6 s/B.)
  c = fitPhases({{1, 1000, 3e-3}, {2, 1000, 8e-3}});
  EXPECT_EQ(c.beta, 0);
  const double m1 = 1 / 3e-3, m2 = 2 / 8e-3;
  EXPECT_NEAR(c.alpha, (m1 + m2) / (m1 * m1 + m2 * m2), 1e-12);
  // Nothing to fit: zero.
  c = fitPhases({});
  EXPECT_EQ(c.alpha, 0);
  EXPECT_EQ(c.beta, 0);
}

TEST(CalibrateTest, AnchorBetaGoesThroughTheLargestSize) {
  LinearCost small{0.01, 3e-8, 1e-8, 0.5};
  // 25 MB in 0.51 s: (0.51 - 0.01) / 25e6 = 2e-8 s/B; alpha and the CPU terms stay.
  LinearCost c = anchorBeta(small, 25e6, 0.51);
  EXPECT_EQ(c.alpha, 0.01);
  EXPECT_NEAR(c.beta, 2e-8, 1e-20);
  EXPECT_EQ(c.cpuPerByte, 1e-8);
  EXPECT_EQ(c.cpuFraction, 0.5);
  // A time below the start-up keeps the fit's slope.
  EXPECT_EQ(anchorBeta(small, 25e6, 0.005).beta, 3e-8);
  EXPECT_EQ(anchorBeta(small, 0, 1.0).beta, 3e-8);
}

TEST(CalibrateTest, ProfileJsonWritesTheOptionalKeysWhenMeasured) {
  Calibration c;
  c.topk = {{16, 1e-6}};
  c.layers = {{"w", 4, 0.5}};
  std::string plain = profileJson(c);
  EXPECT_EQ(plain.find("cpu_fraction"), std::string::npos);
  EXPECT_EQ(plain.find("step_offset"), std::string::npos);
  c.allreduce.cpuFraction = 0.25;
  c.stepOffset = 0.125;
  std::string full = profileJson(c);
  EXPECT_NE(full.find("\"allreduce\": {\"alpha\": 0, \"beta\": 0, \"cpu_per_byte\": 0, "
                      "\"cpu_fraction\": 0.25}"),
            std::string::npos)
      << full;
  EXPECT_NE(full.find("\"step_offset\": 0.125,"), std::string::npos) << full;
  c.sparseAllreduce = LinearCost{};
  c.sparseAllreduce->perElement = 2e-9;
  full = profileJson(c);
  EXPECT_NE(full.find("\"sparse_allreduce\": {\"alpha\": 0, \"beta\": 0, \"cpu_per_byte\": 0, "
                      "\"per_element\": 2e-09}"),
            std::string::npos)
      << full;
}

} // namespace
