//===- LayerNormTest.cpp - GPU layer normalization against the CPU --------===//
//
// Both devices sum each row's statistics and the scale / bias gradients in
// double and round every float step alike; only the order of the double sums
// differs, so the results agree within kTol (relative to each tensor's
// largest value), mostly bit for bit. Rows narrow (a warp each on the GPU)
// and wide (a block each), a single column, no rows; absent gradients; the
// descriptor and buffer errors in the CPU's words.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include "mgsrt/contract.h"

#include <limits>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

using F = mgs::contract::LayerNormDesc;

constexpr double kTol = 1e-6;

struct LnShape {
  int64_t rows, cols;
};

// A transformer's tokens (width 192, 65 tokens x 2), the LayerNorm+GELU
// MLP's rows, a row wider than a warp's limit (a block per row), one column,
// an odd width, and no rows.
const LnShape kShapes[] = {{130, 192}, {32, 64}, {5, 3000}, {7, 1}, {300, 33}, {0, 8}};

std::vector<int64_t> lnDesc(const LnShape &s, double eps) {
  std::vector<int64_t> d(F::Size);
  d[F::Rows] = s.rows;
  d[F::Cols] = s.cols;
  d[F::EpsilonBits] = bits(eps);
  return d;
}

/// n random floats, at least one (a buffer of an empty tensor stays non-null).
std::vector<float> rnd(int64_t n, float lo = -1.0f, float hi = 1.0f) {
  return randomVec(n > 0 ? n : 1, lo, hi);
}

std::string traceOf(const LnShape &s) {
  return std::to_string(s.rows) + " x " + std::to_string(s.cols);
}

using GpuLayerNorm = GpuTest;

TEST_F(GpuLayerNorm, ForwardMatchesCpu) {
  for (const LnShape &s : kShapes)
    for (double eps : {1e-5, 0.25}) {
      SCOPED_TRACE(traceOf(s) + " eps " + std::to_string(eps));
      const std::vector<int64_t> desc = lnDesc(s, eps);
      // An offset mean tests the variance's cancellation.
      Buffers in = {rnd(s.rows * s.cols, -1.0f, 3.0f), rnd(s.cols, 0.5f, 1.5f), rnd(s.cols),
                    rnd(s.rows * s.cols), rnd(s.rows), rnd(s.rows)};
      const Buffers c = runCpu(cpu, mgsrt_layer_norm_fwd, desc.data(), in);
      const Buffers g = runGpu(gpu, mgsrt_layer_norm_fwd, desc.data(), in);
      const char *names[] = {"y", "mean", "inv_std"};
      for (int i = 0; i < 3; ++i)
        EXPECT_LE(relToMax(g[3 + i], c[3 + i]), kTol) << names[i];
    }
}

TEST_F(GpuLayerNorm, BackwardMatchesCpu) {
  for (const LnShape &s : kShapes) {
    SCOPED_TRACE(traceOf(s));
    const std::vector<int64_t> desc = lnDesc(s, 0.0);
    // The statistics the forward pass saved, from the CPU.
    Buffers fwd = {rnd(s.rows * s.cols, -1.0f, 3.0f), rnd(s.cols, 0.5f, 1.5f), rnd(s.cols),
                   rnd(s.rows * s.cols), rnd(s.rows), rnd(s.rows)};
    const Buffers f = runCpu(cpu, mgsrt_layer_norm_fwd, lnDesc(s, 1e-5).data(), fwd);
    const std::vector<float> dy = rnd(s.rows * s.cols);
    // Every gradient, then dx alone, then the parameters' alone.
    for (int which = 0; which < 3; ++which) {
      SCOPED_TRACE("gradients " + std::to_string(which));
      const bool wantDx = which != 2, wantParams = which != 1;
      Buffers in = {f[0], f[1], f[4], f[5], dy};
      in.push_back(wantDx ? rnd(s.rows * s.cols) : std::vector<float>());
      in.push_back(wantParams ? rnd(s.cols) : std::vector<float>());
      in.push_back(wantParams ? rnd(s.cols) : std::vector<float>());
      const Buffers c = runCpu(cpu, mgsrt_layer_norm_bwd, desc.data(), in);
      const Buffers g = runGpu(gpu, mgsrt_layer_norm_bwd, desc.data(), in);
      const char *names[] = {"dx", "dscale", "dbias"};
      for (int i = 0; i < 3; ++i) {
        if (!in[5 + i].empty()) {
          EXPECT_LE(relToMax(g[5 + i], c[5 + i]), kTol) << names[i];
        }
      }
    }
  }
}

TEST_F(GpuLayerNorm, BadCallsAreRefusedAsOnTheCpu) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<bool> all(6, true), allBwd(8, true);
  expectSameError(cpu, gpu, mgsrt_layer_norm_fwd, lnDesc({-1, 4}, 1e-5), all, "negative rows");
  expectSameError(cpu, gpu, mgsrt_layer_norm_fwd, lnDesc({2, 0}, 1e-5), all, "no columns");
  expectSameError(cpu, gpu, mgsrt_layer_norm_fwd, lnDesc({2, 4}, -1.0), all, "negative eps");
  expectSameError(cpu, gpu, mgsrt_layer_norm_bwd, lnDesc({2, 4}, nan), allBwd, "NaN eps");
  for (int i = 0; i < 6; ++i) {
    std::vector<bool> nn = all;
    nn[i] = false;
    expectSameError(cpu, gpu, mgsrt_layer_norm_fwd, lnDesc({2, 4}, 1e-5), nn,
                    "fwd null buffer " + std::to_string(i));
  }
  for (int i = 0; i < 5; ++i) {
    std::vector<bool> nn = allBwd;
    nn[i] = false;
    expectSameError(cpu, gpu, mgsrt_layer_norm_bwd, lnDesc({2, 4}, 1e-5), nn,
                    "bwd null buffer " + std::to_string(i));
  }
}

} // namespace
