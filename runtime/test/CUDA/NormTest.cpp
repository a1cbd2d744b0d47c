//===- NormTest.cpp - GPU batch normalization against the CPU -------------===//
//
// Training and inference forms, with and without the fused ReLU, biased and
// unbiased running variance; backward with and without the ReLU. Both devices
// accumulate the statistics in double, so outputs agree within 1e-6.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include <limits>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

constexpr double kTol = 1e-6;

struct BnShape {
  int64_t n, c, d;
};

// ResNet-20 stages (D = 32x32 and 8x8), a fully connected BN (D = 1), large
// planes (a block per plane on the GPU), one element per channel (no
// unbiased correction), and empty batches / planes.
const BnShape kShapes[] = {{32, 16, 1024}, {2, 64, 64}, {1, 4, 7},  {8, 3, 1},
                           {4, 5, 3000},   {1, 3, 1},   {0, 3, 5}, {3, 2, 0}};

std::vector<int64_t> bnDesc(const BnShape &s, bool training, bool unbiased, bool relu) {
  return {s.n, s.c, s.d, training, bits(1e-5), bits(0.9), unbiased, relu};
}

/// A non-empty vector of n elements (one element when n is 0: still non-null).
std::vector<float> rnd(int64_t n, float lo = -1.0f, float hi = 1.0f) {
  return randomVec(n > 0 ? n : 1, lo, hi);
}
std::vector<float> zeros(int64_t n) { return std::vector<float>(n > 0 ? n : 1, 0.0f); }

std::string traceOf(const BnShape &s, bool training, bool unbiased, bool relu) {
  return "N" + std::to_string(s.n) + " C" + std::to_string(s.c) + " D" + std::to_string(s.d) +
         (training ? " training" : " inference") + (unbiased ? " unbiased" : "") +
         (relu ? " relu" : "");
}

using GpuBatchNorm = GpuTest;

TEST_F(GpuBatchNorm, ForwardMatchesCpu) {
  for (const BnShape &s : kShapes)
    for (bool training : {true, false})
      for (bool unbiased : {false, true})
        for (bool relu : {false, true}) {
          if (!training && unbiased)
            continue;
          SCOPED_TRACE(traceOf(s, training, unbiased, relu));
          const std::vector<int64_t> desc = bnDesc(s, training, unbiased, relu);
          const int64_t total = s.n * s.c * s.d;
          // An offset mean tests the variance's cancellation.
          Buffers in = {rnd(total, -1.0f, 3.0f), rnd(s.c, 0.5f, 1.5f), rnd(s.c),
                        rnd(s.c),                rnd(s.c, 0.5f, 2.0f), zeros(total),
                        zeros(s.c),              zeros(s.c),           zeros(s.c),
                        zeros(s.c)};
          Buffers c = runCpu(cpu, mgsrt_batch_norm_fwd, desc.data(), in);
          Buffers g = runGpu(gpu, mgsrt_batch_norm_fwd, desc.data(), in);
          const char *names[] = {"y", "running_mean", "running_var", "saved_mean",
                                 "saved_invstd"};
          for (int i = 5; i < 10; ++i)
            EXPECT_LE(maxRelDiff(g[i], c[i]), kTol) << names[i - 5];
          if (!training) { // normalizing with given statistics: one rounding path
            EXPECT_TRUE(bitsEqual(g[5], c[5])) << "inference y";
          }
        }
}

TEST_F(GpuBatchNorm, SavedStatisticsAreOptional) {
  const BnShape s = kShapes[1];
  const std::vector<int64_t> desc = bnDesc(s, true, true, false);
  const int64_t total = s.n * s.c * s.d;
  Buffers in = {rnd(total), rnd(s.c), rnd(s.c), rnd(s.c), rnd(s.c, 0.5f, 2.0f),
                zeros(total), zeros(s.c), zeros(s.c), {}, {}};
  Buffers c = runCpu(cpu, mgsrt_batch_norm_fwd, desc.data(), in);
  Buffers g = runGpu(gpu, mgsrt_batch_norm_fwd, desc.data(), in);
  for (int i = 5; i < 8; ++i)
    EXPECT_LE(maxRelDiff(g[i], c[i]), kTol) << i;
}

TEST_F(GpuBatchNorm, BackwardMatchesCpu) {
  for (const BnShape &s : kShapes)
    for (bool relu : {false, true}) {
      SCOPED_TRACE(traceOf(s, true, false, relu));
      const std::vector<int64_t> desc = bnDesc(s, true, false, relu);
      const int64_t total = s.n * s.c * s.d;
      std::vector<float> x = rnd(total, -1.0f, 3.0f), scale = rnd(s.c, 0.5f, 1.5f),
                         bias = rnd(s.c);
      // The saved statistics come from the CPU forward (both devices then
      // recompute the same ReLU mask from them).
      Buffers f = runCpu(cpu, mgsrt_batch_norm_fwd, desc.data(),
                         {x, scale, bias, rnd(s.c), rnd(s.c, 0.5f, 2.0f), zeros(total),
                          zeros(s.c), zeros(s.c), zeros(s.c), zeros(s.c)});
      Buffers in = {x,     scale, f[8], f[9], rnd(total), zeros(total), zeros(s.c), zeros(s.c),
                    relu ? bias : std::vector<float>()};
      Buffers c = runCpu(cpu, mgsrt_batch_norm_bwd, desc.data(), in);
      Buffers g = runGpu(gpu, mgsrt_batch_norm_bwd, desc.data(), in);
      EXPECT_LE(maxRelDiff(g[5], c[5]), kTol) << "dx";
      EXPECT_LE(maxRelDiff(g[6], c[6]), kTol) << "dscale";
      EXPECT_LE(maxRelDiff(g[7], c[7]), kTol) << "dbias";
    }
}

TEST_F(GpuBatchNorm, ErrorsMatchCpu) {
  const BnShape s{2, 3, 4};
  const std::vector<bool> all(10, true);
  auto desc = [&](double eps, double momentum, int64_t n) {
    return std::vector<int64_t>{n, s.c, s.d, 1, bits(eps), bits(momentum), 0, 1};
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  for (KernelFn fn : {mgsrt_batch_norm_fwd, mgsrt_batch_norm_bwd}) {
    // Required: fwd's first 8 buffers; bwd's first 8 and, with the ReLU, the bias.
    const int required = fn == mgsrt_batch_norm_fwd ? 8 : 9;
    expectSameError(cpu, gpu, fn, desc(1e-5, 0.9, -1), all, "negative N");
    expectSameError(cpu, gpu, fn, desc(-1.0, 0.9, 2), all, "negative eps");
    expectSameError(cpu, gpu, fn, desc(nan, 0.9, 2), all, "NaN eps");
    expectSameError(cpu, gpu, fn, desc(1e-5, inf, 2), all, "infinite momentum");
    for (int i = 0; i < required; ++i) {
      std::vector<bool> nn = all;
      nn[i] = false;
      expectSameError(cpu, gpu, fn, desc(1e-5, 0.9, 2), nn, "null buffer " + std::to_string(i));
    }
  }
}

} // namespace
