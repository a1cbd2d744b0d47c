//===- ElementwiseTest.cpp - GPU unary, clip, binary, copy/zero/accumulate ===//
//
// Each test runs the CPU kernel (the oracle) and the GPU kernel on the same
// input and compares: bit for bit where the operation is exact, within 1e-6
// relative otherwise; errors must carry the CPU's status and message.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include <limits>
#include <memory>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {


/// Random values with the special cases the exact kernels must pass through.
std::vector<float> withSpecials(int64_t n, float lo, float hi, bool nonFinite) {
  std::vector<float> v = randomVec(n, lo, hi);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, lo, hi, 1e-30f, -1e-30f,
                            nonFinite ? inf : 1.0f, nonFinite ? -inf : -1.0f,
                            nonFinite ? std::numeric_limits<float>::quiet_NaN() : 0.5f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0] && i < v.size(); ++i)
    v[i * (v.size() / 9 + 1) % v.size()] = specials[i];
  return v;
}

const int64_t kSizes[] = {1, 1000, (1 << 20) + 7};

using GpuElementwise = GpuTest;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

TEST_F(GpuElementwise, UnaryMatchesCpu) {
  const double alpha = 0.15, beta = 0.5;
  for (int op = MGSRT_UNARY_RELU; op <= MGSRT_UNARY_HARD_SWISH; ++op) {
    if (op >= MGSRT_UNARY_SQRT && op <= MGSRT_UNARY_POW)
      continue; // not bit-exact across devices: compared with a bound below
    // The hard ops round alpha x + beta as the CPU does (no FMA): exact too.
    const bool exact = op != MGSRT_UNARY_SIGMOID && op != MGSRT_UNARY_TANH;
    for (int64_t n : kSizes) {
      SCOPED_TRACE("op " + std::to_string(op) + " n " + std::to_string(n));
      const int64_t desc[] = {op, n, bits(alpha), bits(beta)};
      std::vector<float> x = withSpecials(n, -8.0f, 8.0f, exact);
      Buffers fc = runCpu(cpu, mgsrt_unary_fwd, desc, {x, std::vector<float>(n)});
      Buffers fg = runGpu(gpu, mgsrt_unary_fwd, desc, {x, std::vector<float>(n)});
      if (exact)
        EXPECT_TRUE(bitsEqual(fg[1], fc[1]));
      else
        EXPECT_LE(maxRelDiff(fg[1], fc[1]), 1e-6);

      // Backward on the same (CPU) forward output.
      std::vector<float> dy = randomVec(n);
      Buffers in = {x, fc[1], dy, std::vector<float>(n)};
      Buffers bc = runCpu(cpu, mgsrt_unary_bwd, desc, in);
      Buffers bg = runGpu(gpu, mgsrt_unary_bwd, desc, in);
      if (exact)
        EXPECT_TRUE(bitsEqual(bg[3], bc[3]));
      else
        EXPECT_LE(maxRelDiff(bg[3], bc[3]), 1e-6);
    }
  }
}

/// Unary op `op` (exponent `alpha`) on the GPU against the CPU, forward and backward, on inputs
/// in [lo, hi): within 2e-6 relative (not bit-exact across devices).
void expectUnaryNearCpu(Ctx &cpu, Ctx &gpu, int op, double alpha, float lo, float hi) {
  for (int64_t n : kSizes) {
    SCOPED_TRACE("op " + std::to_string(op) + " alpha " + std::to_string(alpha) + " n " +
                 std::to_string(n));
    const int64_t desc[] = {op, n, bits(alpha)};
    std::vector<float> x = randomVec(n, lo, hi);
    Buffers fc = runCpu(cpu, mgsrt_unary_fwd, desc, {x, std::vector<float>(n)});
    Buffers fg = runGpu(gpu, mgsrt_unary_fwd, desc, {x, std::vector<float>(n)});
    EXPECT_LE(maxRelDiff(fg[1], fc[1]), 2e-6);
    std::vector<float> dy = randomVec(n);
    Buffers in = {x, fc[1], dy, std::vector<float>(n)};
    Buffers bc = runCpu(cpu, mgsrt_unary_bwd, desc, in);
    Buffers bg = runGpu(gpu, mgsrt_unary_bwd, desc, in);
    EXPECT_LE(maxRelDiff(bg[3], bc[3]), 2e-6);
  }
}

// sqrt, erf and pow (LayerNorm and GELU), on positive inputs where every
// exponent is real; pow with the exponents computed as products (2, 3), a
// square root (0.5) and powf (1.7); exp (Swin V2's logit scale).
TEST_F(GpuElementwise, LayerNormGeluUnaryMatchesCpu) {
  const std::pair<int, double> cases[] = {{MGSRT_UNARY_SQRT, 0.0}, {MGSRT_UNARY_ERF, 0.0},
                                          {MGSRT_UNARY_POW, 2.0},  {MGSRT_UNARY_POW, 3.0},
                                          {MGSRT_UNARY_POW, 0.5},  {MGSRT_UNARY_POW, 1.7},
                                          {MGSRT_UNARY_EXP, 0.0}};
  for (auto [op, alpha] : cases)
    expectUnaryNearCpu(cpu, gpu, op, alpha, 0.1f, 4.0f);
}

// cos and sin (rotary position embeddings), on (0.1, 1.4), where neither is near 0 (a
// relative difference of a few ulps there would be large).
TEST_F(GpuElementwise, RotaryUnaryMatchesCpu) {
  for (int op : {MGSRT_UNARY_COS, MGSRT_UNARY_SIN})
    expectUnaryNearCpu(cpu, gpu, op, 0.0, 0.1f, 1.4f);
}

TEST_F(GpuElementwise, ReluBackwardReadsOnlyX) {
  const int64_t desc[] = {MGSRT_UNARY_LEAKY_RELU, 3, bits(0.5)};
  Buffers in = {{-1, 0, 2}, {}, {5, 6, 7}, {0, 0, 0}};
  Buffers g = runGpu(gpu, mgsrt_unary_bwd, desc, in);
  EXPECT_EQ(g[3], (std::vector<float>{2.5f, 3.0f, 7.0f}));
}

TEST_F(GpuElementwise, EmptyTensorsAreNoOps) {
  const int64_t unary[] = {MGSRT_UNARY_TANH, 0, 0};
  void *none[] = {nullptr, nullptr, nullptr, nullptr, nullptr};
  EXPECT_OK(gpu, mgsrt_unary_fwd(gpu, unary, none));
  EXPECT_OK(gpu, mgsrt_unary_bwd(gpu, unary, none));
  const int64_t count[] = {0};
  EXPECT_OK(gpu, mgsrt_copy(gpu, count, none));
  EXPECT_OK(gpu, mgsrt_zero(gpu, count, none));
  EXPECT_OK(gpu, mgsrt_accumulate(gpu, count, none));
  EXPECT_OK(gpu, mgsrt_synchronize(gpu));
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

TEST_F(GpuElementwise, ClipMatchesCpuWithBoundsOnTheDevice) {
  for (int64_t n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t desc[] = {n};
    std::vector<float> x = withSpecials(n, -1.0f, 1.0f, true);
    x[0] = -0.5f; // exactly at the bounds: kept by bwd
    if (n > 1)
      x[n - 1] = 0.25f;
    const std::vector<float> lo = {-0.5f}, hi = {0.25f};
    Buffers fc = runCpu(cpu, mgsrt_clip_fwd, desc, {x, lo, hi, std::vector<float>(n)});
    Buffers fg = runGpu(gpu, mgsrt_clip_fwd, desc, {x, lo, hi, std::vector<float>(n)});
    EXPECT_TRUE(bitsEqual(fg[3], fc[3]));
    std::vector<float> dy = randomVec(n);
    Buffers in = {x, lo, hi, dy, std::vector<float>(n)};
    EXPECT_TRUE(bitsEqual(runGpu(gpu, mgsrt_clip_bwd, desc, in)[4],
                          runCpu(cpu, mgsrt_clip_bwd, desc, in)[4]));
  }
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

struct BinaryCase {
  std::vector<int64_t> lhs, rhs; // same rank (left-padded with 1s)
};

std::vector<int64_t> broadcastShape(const BinaryCase &c) {
  std::vector<int64_t> out(c.lhs.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = c.lhs[i] != 1 ? c.lhs[i] : c.rhs[i];
  return out;
}

std::vector<BinaryCase> binaryCases() {
  return {
      {{}, {}},                                   // rank 0
      {{1}, {37}},                                // rank 1, scalar lhs
      {{1000}, {1000}},                           // same shape
      {{64, 100}, {1, 100}},                      // bias over rows
      {{64, 100}, {64, 1}},                       // per-row scale
      {{1, 100}, {64, 1}},                        // both broadcast
      {{8, 1, 6}, {1, 5, 1}},                     // interleaved
      {{4, 5, 6, 7}, {4, 1, 6, 1}},               // rank 4, middle dims reduced
      {{2, 3, 4, 5, 6}, {1, 3, 1, 5, 1}},         // rank 5
      {{2, 1, 4, 1, 6}, {1, 3, 1, 5, 1}},         // rank 5, alternating
      {{7, 5, 3}, {1, 1, 1}},                     // scalar rhs
      {{1, 1}, {1, 1}},                           // one element
      {{0, 5}, {1, 5}},                           // empty output
      {{1024, 1024}, {1, 1}},                     // 1M to a scalar
      {{1024, 1024}, {1024, 1}},                  // 1M to a column
      {{1024, 1024}, {1, 1024}},                  // 1M to a row
      {{16, 256, 256}, {1, 256, 1}},              // 1M to the middle dim
  };
}

TEST_F(GpuElementwise, BinaryMatchesCpu) {
  for (const BinaryCase &c : binaryCases()) {
    const std::vector<int64_t> out = broadcastShape(c);
    const int64_t r = static_cast<int64_t>(out.size());
    const int64_t nl = product(c.lhs), nr = product(c.rhs), no = product(out);
    for (int op = MGSRT_BINARY_ADD; op <= MGSRT_BINARY_KEEP_WHERE; ++op) {
      SCOPED_TRACE("op " + std::to_string(op) + " lhs " + std::to_string(nl) + " rhs " +
                   std::to_string(nr) + " out " + std::to_string(no) + " rank " +
                   std::to_string(r));
      std::vector<int64_t> desc = {op, r};
      desc.insert(desc.end(), out.begin(), out.end());
      desc.insert(desc.end(), c.lhs.begin(), c.lhs.end());
      desc.insert(desc.end(), c.rhs.begin(), c.rhs.end());
      std::vector<float> a = randomVec(nl, -2.0f, 2.0f);
      std::vector<float> b = awayFromZero(nr, 0.5f); // divisors away from 0
      if (op >= MGSRT_BINARY_GREATER)                // comparisons and keep_where: ties and zeros
        for (auto *v : {&a, &b})
          for (float &x : *v)
            x = std::round(x * 2.0f) / 2.0f;
      // Empty operands still get a (never read) buffer: lhs/rhs/out are required.
      auto orOne = [](std::vector<float> v) { return v.empty() ? std::vector<float>(1) : v; };
      Buffers fin = {orOne(a), orOne(b), orOne(std::vector<float>(no))};
      Buffers fc = runCpu(cpu, mgsrt_binary_fwd, desc.data(), fin);
      Buffers fg = runGpu(gpu, mgsrt_binary_fwd, desc.data(), fin);
      EXPECT_TRUE(bitsEqual(fg[2], fc[2])) << "forward";

      std::vector<float> dout = orOne(randomVec(no));
      // NaN-filled gradients: everything must be written.
      const float nan = std::numeric_limits<float>::quiet_NaN();
      Buffers bin = {orOne(a), orOne(b), dout, std::vector<float>(nl, nan),
                     std::vector<float>(nr, nan)};
      Buffers bc = runCpu(cpu, mgsrt_binary_bwd, desc.data(), bin);
      Buffers bg = runGpu(gpu, mgsrt_binary_bwd, desc.data(), bin);
      EXPECT_LE(maxRelDiff(bg[3], bc[3]), 1e-6) << "dlhs";
      EXPECT_LE(maxRelDiff(bg[4], bc[4]), 1e-6) << "drhs";
      for (const auto &v : {bg[3], bg[4]})
        for (float f : v)
          ASSERT_FALSE(std::isnan(f)) << "an unwritten gradient element";
      // Deterministic: a second run gives the same bits.
      Buffers again = runGpu(gpu, mgsrt_binary_bwd, desc.data(), bin);
      EXPECT_TRUE(bitsEqual(again[3], bg[3])) << "dlhs rerun";
      EXPECT_TRUE(bitsEqual(again[4], bg[4])) << "drhs rerun";
      // Either gradient alone (the other null).
      Buffers onlyL = runGpu(gpu, mgsrt_binary_bwd, desc.data(),
                             {orOne(a), orOne(b), dout, std::vector<float>(nl), {}});
      EXPECT_TRUE(bitsEqual(onlyL[3], bg[3])) << "dlhs alone";
      Buffers onlyR = runGpu(gpu, mgsrt_binary_bwd, desc.data(),
                             {orOne(a), orOne(b), dout, {}, std::vector<float>(nr)});
      EXPECT_TRUE(bitsEqual(onlyR[4], bg[4])) << "drhs alone";
    }
  }
}

//===----------------------------------------------------------------------===//
// Copy, zero, accumulate
//===----------------------------------------------------------------------===//

TEST_F(GpuElementwise, CopyZeroAccumulateMatchCpu) {
  for (int64_t n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t desc[] = {n};
    std::vector<float> x = withSpecials(n, -1.0f, 1.0f, true), y = randomVec(n);
    EXPECT_TRUE(bitsEqual(runGpu(gpu, mgsrt_copy, desc, {x, y})[1], x));
    EXPECT_TRUE(bitsEqual(runGpu(gpu, mgsrt_zero, desc, {y})[0], std::vector<float>(n, 0.0f)));
    std::vector<float> a = randomVec(n), b = randomVec(n);
    EXPECT_TRUE(bitsEqual(runGpu(gpu, mgsrt_accumulate, desc, {a, b, y})[2],
                          runCpu(cpu, mgsrt_accumulate, desc, {a, b, y})[2]));
  }
}

TEST_F(GpuElementwise, AccumulateInPlace) {
  const int64_t n = (1 << 20) + 3;
  const int64_t desc[] = {n};
  std::vector<float> a = randomVec(n), b = randomVec(n);
  std::vector<float> sum(n), twice(n);
  for (int64_t i = 0; i < n; ++i) {
    sum[i] = a[i] + b[i];
    twice[i] = a[i] + a[i];
  }
  {
    DeviceBuffer<float> da(gpu, a), db(gpu, b);
    void *bufs[] = {da.ptr, db.ptr, da.ptr}; // y = a
    ASSERT_OK(gpu, mgsrt_accumulate(gpu, desc, bufs));
    EXPECT_TRUE(bitsEqual(da.download(), sum));
  }
  {
    DeviceBuffer<float> da(gpu, a), db(gpu, b);
    void *bufs[] = {da.ptr, db.ptr, db.ptr}; // y = b
    ASSERT_OK(gpu, mgsrt_accumulate(gpu, desc, bufs));
    EXPECT_TRUE(bitsEqual(db.download(), sum));
  }
  {
    DeviceBuffer<float> da(gpu, a);
    void *bufs[] = {da.ptr, da.ptr, da.ptr}; // y = a = b
    ASSERT_OK(gpu, mgsrt_accumulate(gpu, desc, bufs));
    EXPECT_TRUE(bitsEqual(da.download(), twice));
  }
  {
    DeviceBuffer<float> da(gpu, a);
    void *bufs[] = {da.ptr, da.ptr}; // copy onto itself: a no-op
    ASSERT_OK(gpu, mgsrt_copy(gpu, desc, bufs));
    EXPECT_TRUE(bitsEqual(da.download(), a));
  }
}

//===----------------------------------------------------------------------===//
// Errors: the CPU's status and words
//===----------------------------------------------------------------------===//

TEST_F(GpuElementwise, ErrorsMatchCpu) {
  const std::vector<bool> all(8, true);
  expectSameError(cpu, gpu, mgsrt_unary_fwd, {MGSRT_UNARY_SIN + 1, 4, 0}, all, "unary op");
  expectSameError(cpu, gpu, mgsrt_unary_fwd, {0, -4, 0}, all, "unary count");
  expectSameError(cpu, gpu, mgsrt_unary_fwd, {0, 4, 0}, {true, false}, "unary null y");
  expectSameError(cpu, gpu, mgsrt_unary_bwd, {MGSRT_UNARY_SIGMOID, 4, 0},
                  {true, false, true, true}, "sigmoid bwd needs y");
  expectSameError(cpu, gpu, mgsrt_unary_bwd, {MGSRT_UNARY_RELU, 4, 0},
                  {false, true, true, true}, "relu bwd needs x");
  expectSameError(cpu, gpu, mgsrt_clip_fwd, {-1}, all, "clip count");
  expectSameError(cpu, gpu, mgsrt_clip_fwd, {4}, {true, false, true, true}, "clip null min");
  expectSameError(cpu, gpu, mgsrt_clip_bwd, {4}, {true, true, true, true, false}, "clip null dx");
  expectSameError(cpu, gpu, mgsrt_binary_fwd, {7, 1, 4, 4, 4}, all, "binary op");
  expectSameError(cpu, gpu, mgsrt_binary_fwd, {0, 33}, all, "binary rank");
  expectSameError(cpu, gpu, mgsrt_binary_fwd, {0, 2, 4, 5, 4, 5, 3, 5}, all, "no broadcast");
  expectSameError(cpu, gpu, mgsrt_binary_fwd, {0, 1, -4, 1, 1}, all, "negative extent");
  expectSameError(cpu, gpu, mgsrt_binary_bwd, {0, 1, 4, 4, 4}, {true, true, false, true, true},
                  "binary null dout");
  expectSameError(cpu, gpu, mgsrt_copy, {-2}, all, "copy count");
  expectSameError(cpu, gpu, mgsrt_copy, {2}, {true, false}, "copy null y");
  expectSameError(cpu, gpu, mgsrt_zero, {-3}, all, "zero count");
  expectSameError(cpu, gpu, mgsrt_accumulate, {3}, {true, false, true}, "accumulate null b");
}

TEST_F(GpuElementwise, FailedContextIsSticky) {
  const int64_t bad[] = {-1};
  std::vector<float> host = {1, 2, 3};
  DeviceBuffer<float> x(gpu, host), y(gpu, std::vector<float>(3, 0.0f));
  void *bufs[] = {x.ptr, y.ptr};
  ASSERT_EQ(mgsrt_copy(gpu, bad, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  const int64_t good[] = {3};
  EXPECT_EQ(mgsrt_copy(gpu, good, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  mgsrt_ctx_clear(gpu);
  EXPECT_TRUE(bitsEqual(y.download(), std::vector<float>(3, 0.0f)));
  ASSERT_OK(gpu, mgsrt_copy(gpu, good, bufs));
  EXPECT_TRUE(bitsEqual(y.download(), host));
}

} // namespace
