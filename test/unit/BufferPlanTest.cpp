//===- BufferPlanTest.cpp - Liveness-based arena placement ----------------===//

#include "mgs/Conversion/TrainToRuntime/BufferPlan.h"

#include <gtest/gtest.h>

using namespace mgs;

namespace {

/// True when no two buffers that are alive at the same step overlap in memory.
bool isValid(llvm::ArrayRef<BufferInterval> bufs, const BufferPlan &plan) {
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (plan.offsets[i] < 0 || plan.offsets[i] + bufs[i].bytes > plan.arenaBytes)
      return false;
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      bool timeOverlap = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
      bool memOverlap = plan.offsets[i] < plan.offsets[j] + bufs[j].bytes &&
                        plan.offsets[j] < plan.offsets[i] + bufs[i].bytes;
      if (timeOverlap && memOverlap)
        return false;
    }
  }
  return true;
}

TEST(BufferPlan, DisjointLifetimesShareMemory) {
  std::vector<BufferInterval> bufs{{1000, 0, 1}, {1000, 2, 3}, {1000, 4, 5}};
  BufferPlan plan = planBuffers(bufs);
  EXPECT_TRUE(isValid(bufs, plan));
  EXPECT_EQ(plan.arenaBytes, 1024); // one aligned slot for all three
}

TEST(BufferPlan, OverlappingLifetimesDoNot) {
  std::vector<BufferInterval> bufs{{100, 0, 5}, {100, 1, 2}, {100, 2, 3}};
  BufferPlan plan = planBuffers(bufs);
  EXPECT_TRUE(isValid(bufs, plan));
  EXPECT_EQ(plan.arenaBytes, 3 * 128);
  for (int64_t offset : plan.offsets)
    EXPECT_EQ(offset % 64, 0);
}

TEST(BufferPlan, ForwardBackwardChainReusesActivations) {
  // A chain of 20 activations each read once by the next op, then a backward
  // that releases them in reverse: at most a handful are alive at once.
  std::vector<BufferInterval> bufs;
  for (int i = 0; i < 20; ++i)
    bufs.push_back({4096, i, i + 1});
  BufferPlan plan = planBuffers(bufs);
  EXPECT_TRUE(isValid(bufs, plan));
  EXPECT_LE(plan.arenaBytes, 2 * 4096);
}

TEST(BufferPlan, RandomIntervalsAreAlwaysValid) {
  uint64_t state = 42;
  auto next = [&](int64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state >> 33) % n);
  };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferInterval> bufs;
    for (int i = 0; i < 60; ++i) {
      int64_t first = next(100);
      bufs.push_back({1 + next(5000), first, first + next(30)});
    }
    EXPECT_TRUE(isValid(bufs, planBuffers(bufs))) << "trial " << trial;
  }
}

} // namespace
