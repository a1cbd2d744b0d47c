//===- GemmTest.cpp - GPU Gemm and MatMul (cuBLAS) against the CPU --------===//
//
// Gemm with every trans_a / trans_b combination and every C broadcast (none,
// M x N, 1 x N, M x 1, 1 x 1), forward and backward (dA, dB, dC); batched
// MatMul with broadcast batch dims, forward and backward. FP32 without TF32
// on both sides: within 1e-5 of the tensor's scale.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include <cstdint>
#include <cstring>
#include <string>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

constexpr double kTol = 1e-5;

/// " bf16" / " f16" after a case's name; "" for float32.
std::string precisionName(int64_t precision) {
  return precision == MGSRT_PRECISION_BF16 ? " bf16"
         : precision == MGSRT_PRECISION_F16 ? " f16"
                                            : "";
}

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  double alpha, beta;
  int64_t c0, c1;
  int64_t precision = MGSRT_PRECISION_F32;
  std::vector<int64_t> desc() const {
    return {m, n, k, ta, tb, bits(alpha), bits(beta), c0, c1, precision};
  }
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " ta" +
           std::to_string(ta) + " tb" + std::to_string(tb) + " C" + std::to_string(c0) + "x" +
           std::to_string(c1) + precisionName(precision);
  }
};

void checkGemm(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, const GemmCase &g) {
  SCOPED_TRACE(g.name());
  const std::vector<int64_t> desc = g.desc();
  const bool hasC = g.c0 || g.c1;
  // Zero-sized buffers are still passed (non-null) as one element.
  auto rnd = [](int64_t n) { return randomVec(n > 0 ? n : 1); };
  auto filled = [](int64_t n) { return std::vector<float>(n > 0 ? n : 1, 7.0f); };
  std::vector<float> a = rnd(g.m * g.k), b = rnd(g.k * g.n),
                     c = hasC ? rnd(g.c0 * g.c1) : std::vector<float>(), dy = rnd(g.m * g.n);
  Buffers in = {a, b, c, filled(g.m * g.n)};
  Buffers fc = runCpu(cpu, mgsrt_gemm_fwd, desc.data(), in);
  Buffers fg = runGpu(gpu, mgsrt_gemm_fwd, desc.data(), in);
  EXPECT_LE(relToMax(fg[3], fc[3]), kTol) << "Y";

  in = {a, b, dy, filled(g.m * g.k), filled(g.k * g.n),
        hasC ? filled(g.c0 * g.c1) : std::vector<float>()};
  Buffers bc = runCpu(cpu, mgsrt_gemm_bwd, desc.data(), in);
  Buffers bg = runGpu(gpu, mgsrt_gemm_bwd, desc.data(), in);
  EXPECT_LE(relToMax(bg[3], bc[3]), kTol) << "dA";
  EXPECT_LE(relToMax(bg[4], bc[4]), kTol) << "dB";
  if (hasC) {
    EXPECT_LE(relToMax(bg[5], bc[5]), kTol) << "dC";
  }
}

using GpuGemm = GpuTest;

TEST_F(GpuGemm, EveryTransposeAndBroadcastMatchesCpu) {
  const int64_t m = 33, n = 20, k = 45;
  const std::pair<int64_t, int64_t> cShapes[] = {{0, 0}, {m, n}, {1, n}, {m, 1}, {1, 1}};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (auto [c0, c1] : cShapes)
        checkGemm(cpu, gpu, {m, n, k, bool(ta), bool(tb), 0.7, -1.3, c0, c1});
}

// bfloat16 and half (roundedOperands: the operands rounded, then the float32
// products): the CPU's arithmetic, so the same tolerance.
void checkRoundedGemms(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, int64_t precision) {
  const int64_t m = 33, n = 20, k = 45;
  const std::pair<int64_t, int64_t> cShapes[] = {{0, 0}, {m, n}, {1, n}, {m, 1}, {1, 1}};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (auto [c0, c1] : cShapes)
        checkGemm(cpu, gpu, {m, n, k, bool(ta), bool(tb), 0.7, -1.3, c0, c1, precision});
  checkGemm(cpu, gpu, {256, 200, 300, false, true, 1.0, 1.0, 1, 200, precision});
}

TEST_F(GpuGemm, Bf16MatchesCpu) {
  checkRoundedGemms(cpu, gpu, MGSRT_PRECISION_BF16);
}

TEST_F(GpuGemm, F16MatchesCpu) { checkRoundedGemms(cpu, gpu, MGSRT_PRECISION_F16); }

/// x rounded to bfloat16 (to nearest even; x finite), as a float.
float bf16Of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// The rounding of the operands itself, bit for bit and without the CPU's
// kernels: 1 x 1 x 1 products a * b of values at ties and past the ends of
// half's and bfloat16's ranges against the host's own rounding (_Float16;
// bf16Of). A product of two rounded values is exact in float32 here.
TEST_F(GpuGemm, OperandsRoundToNearestEven) {
  const std::pair<float, float> pairs[] = {
      {1.0f + 0x1p-11f, 1.0f},          // half: a tie, to even (1)
      {1.0f + 3 * 0x1p-11f, 1.0f},      // half: a tie, to even (up)
      {1.0f + 0x1p-8f, 1.0f},           // bfloat16: a tie, to even (1)
      {1.0f + 3 * 0x1p-8f, 1.0f},       // bfloat16: a tie, to even (up)
      {65519.0f, 1.0f},                 // half: its largest, 65504
      {65520.0f, 1.0f},                 // half: infinity
      {1.0f + 0x1p-12f, 3.0f + 0x1p-9f}, // both rounded
      {-7.0f / 3.0f, 5.0f / 7.0f},
  };
  for (int64_t precision : {MGSRT_PRECISION_F16, MGSRT_PRECISION_BF16})
    for (auto [a, b] : pairs) {
      SCOPED_TRACE(std::to_string(a) + " * " + std::to_string(b) + precisionName(precision));
      const std::vector<int64_t> desc = GemmCase{1, 1, 1, false, false, 1.0, 0.0, 0, 0,
                                                 precision}
                                            .desc();
      Buffers in = {{a}, {b}, {}, {0.0f}};
      Buffers out = runGpu(gpu, mgsrt_gemm_fwd, desc.data(), in);
      const float want =
          precision == MGSRT_PRECISION_F16
              ? static_cast<float>(static_cast<_Float16>(a)) *
                    static_cast<float>(static_cast<_Float16>(b))
              : bf16Of(a) * bf16Of(b);
      EXPECT_TRUE(bitsEqual(out[3], {want}));
    }
}

TEST_F(GpuGemm, ClassifierShapesMatchCpu) {
  // A fully connected layer: batch 32, 64 -> 10 (ONNX Gemm with transB).
  checkGemm(cpu, gpu, {32, 10, 64, false, true, 1.0, 1.0, 1, 10});
  checkGemm(cpu, gpu, {1, 10, 64, false, true, 1.0, 1.0, 1, 10});
  checkGemm(cpu, gpu, {256, 200, 300, false, false, 1.0, 0.5, 256, 200});
  checkGemm(cpu, gpu, {1, 1, 1, true, true, 2.0, 3.0, 1, 1});
}

TEST_F(GpuGemm, EmptyInnerDimension) {
  // K = 0: Y = beta * C, dA and dB are empty, dC = beta * dY summed.
  checkGemm(cpu, gpu, {4, 5, 0, false, false, 1.0, 2.0, 4, 5});
  checkGemm(cpu, gpu, {4, 5, 0, true, true, 1.0, 2.0, 1, 5});
  checkGemm(cpu, gpu, {4, 5, 0, false, false, 1.0, 2.0, 0, 0});
}

TEST_F(GpuGemm, ErrorsMatchCpu) {
  const int64_t one = bits(1.0);
  const std::vector<bool> all(6, true);
  expectSameError(cpu, gpu, mgsrt_gemm_fwd, {-1, 3, 4, 0, 0, one, one, 0, 0, 0}, all, "negative M");
  expectSameError(cpu, gpu, mgsrt_gemm_fwd, {2, 3, 4, 2, 0, one, one, 0, 0, 0}, all, "trans_a 2");
  expectSameError(cpu, gpu, mgsrt_gemm_bwd, {2, 3, 4, 0, 0, one, one, 2, 5, 0}, all, "C 2x5");
  expectSameError(cpu, gpu, mgsrt_gemm_fwd, {2, 3, 4, 0, 0, one, one, 1, 3, 0},
                  {true, true, false, true}, "null C");
  expectSameError(cpu, gpu, mgsrt_gemm_fwd, {2, 3, 4, 0, 0, one, one, 0, 0, 0},
                  {true, true, false, false}, "null Y");
  expectSameError(cpu, gpu, mgsrt_gemm_bwd, {2, 3, 4, 0, 0, one, one, 0, 0, 0},
                  {true, true, true, true, true, true}, "dC without C");
  expectSameError(cpu, gpu, mgsrt_gemm_bwd, {2, 3, 4, 0, 0, one, one, 0, 0, 0},
                  {false, true, true, true, true, false}, "dB without A");
  expectSameError(cpu, gpu, mgsrt_gemm_bwd, {2, 3, 4, 0, 0, one, one, 0, 0, 0},
                  {true, false, true, true, false, false}, "dA without B");
  expectSameError(cpu, gpu, mgsrt_gemm_bwd, {2, 3, 4, 0, 0, one, one, 0, 0, 0},
                  {true, true, false, true, true, false}, "null dY");
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

struct MatmulCase {
  std::vector<int64_t> out, lhs, rhs;
  int64_t m, k, n;
  bool tl = false, tr = false; // lhs stored k x m, rhs stored n x k
  int64_t precision = MGSRT_PRECISION_F32;
  std::vector<int64_t> desc() const {
    std::vector<int64_t> d = {static_cast<int64_t>(out.size())};
    for (const auto *v : {&out, &lhs, &rhs})
      d.insert(d.end(), v->begin(), v->end());
    d.insert(d.end(), {m, k, n, tl, tr, precision});
    return d;
  }
  std::string name() const {
    auto dims = [](const std::vector<int64_t> &v) {
      std::string s = "[";
      for (int64_t x : v)
        s += std::to_string(x) + ",";
      return s + "]";
    };
    return "out" + dims(out) + " lhs" + dims(lhs) + " rhs" + dims(rhs) + " " +
           std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) +
           (tl ? " trans_lhs" : "") + (tr ? " trans_rhs" : "") + precisionName(precision);
  }
};

using GpuMatmul = GpuTest;

TEST_F(GpuMatmul, BroadcastBatchesMatchCpu) {
  const MatmulCase cases[] = {
      {{}, {}, {}, 7, 5, 3},                          // plain 2-D
      {{4}, {4}, {4}, 6, 5, 7},                       // batched, strided in one call
      {{4}, {4}, {1}, 6, 5, 7},                       // one rhs: stacked into one gemm
      {{4}, {1}, {4}, 6, 5, 7},                       // one lhs: dlhs sums over batches
      {{2, 3}, {2, 1}, {1, 3}, 4, 3, 5},              // both broadcast
      {{3, 2, 4}, {3, 1, 4}, {1, 2, 4}, 5, 6, 2},     // broadcast in the middle
      {{2, 3}, {2, 3}, {2, 1}, 8, 16, 8},             // rhs repeated along the last dim
      {{8, 4}, {8, 4}, {8, 4}, 16, 16, 16},           // attention-like
      {{0}, {0}, {1}, 3, 4, 5},                       // no batches
      {{0}, {1}, {0}, 3, 4, 5},                       // no batches, dlhs summed over none
      {{3}, {3}, {3}, 4, 0, 5},                       // K = 0
      {{}, {}, {}, 7, 5, 3, true, true},              // transposed operands
      {{4}, {4}, {1}, 6, 5, 7, false, true},          // W^T: stacked
      {{4}, {4}, {1}, 6, 5, 7, true, false},          // lhs transposed: not stacked
      {{4}, {1}, {4}, 6, 5, 7, true, true},           // one lhs, summed
      {{2, 3}, {2, 1}, {1, 3}, 4, 3, 5, false, true}, // both broadcast
      {{8, 4}, {8, 4}, {8, 4}, 16, 16, 16, false, true}, // attention's K^T
  };
  // Each in float32, then in half and bfloat16: roundedOperands, the CPU's
  // arithmetic, so the same tolerance.
  std::vector<MatmulCase> all(std::begin(cases), std::end(cases));
  for (int64_t precision : {MGSRT_PRECISION_F16, MGSRT_PRECISION_BF16})
    for (MatmulCase mc : cases) {
      mc.precision = precision;
      all.push_back(mc);
    }
  for (const MatmulCase &mc : all) {
    SCOPED_TRACE(mc.name());
    const std::vector<int64_t> desc = mc.desc();
    const int64_t lc = product(mc.lhs), rc = product(mc.rhs), oc = product(mc.out);
    // A zero-sized buffer is still passed (non-null) as one element.
    auto sized = [](int64_t n, float v) { return std::vector<float>(n > 0 ? n : 1, v); };
    auto rnd = [](int64_t n) { return randomVec(n > 0 ? n : 1); };
    std::vector<float> l = rnd(lc * mc.m * mc.k), r = rnd(rc * mc.k * mc.n),
                       dout = rnd(oc * mc.m * mc.n);
    Buffers in = {l, r, sized(oc * mc.m * mc.n, 7.0f)};
    Buffers fc = runCpu(cpu, mgsrt_matmul_fwd, desc.data(), in);
    Buffers fg = runGpu(gpu, mgsrt_matmul_fwd, desc.data(), in);
    EXPECT_LE(relToMax(fg[2], fc[2]), kTol) << "out";

    in = {l, r, dout, sized(lc * mc.m * mc.k, 7.0f), sized(rc * mc.k * mc.n, 7.0f)};
    Buffers bc = runCpu(cpu, mgsrt_matmul_bwd, desc.data(), in);
    Buffers bg = runGpu(gpu, mgsrt_matmul_bwd, desc.data(), in);
    EXPECT_LE(relToMax(bg[3], bc[3]), kTol) << "dlhs";
    EXPECT_LE(relToMax(bg[4], bc[4]), kTol) << "drhs";

    // Each gradient alone, without the operand it does not read (null, as
    // the contract allows: dlhs reads rhs and dout, drhs lhs and dout).
    in[4].clear();
    in[0].clear();
    bg = runGpu(gpu, mgsrt_matmul_bwd, desc.data(), in);
    EXPECT_LE(relToMax(bg[3], bc[3]), kTol) << "dlhs alone";
    in[4] = sized(rc * mc.k * mc.n, 7.0f);
    in[0] = l;
    in[3].clear();
    in[1].clear();
    bg = runGpu(gpu, mgsrt_matmul_bwd, desc.data(), in);
    EXPECT_LE(relToMax(bg[4], bc[4]), kTol) << "drhs alone";
  }
}

TEST_F(GpuMatmul, ErrorsMatchCpu) {
  const std::vector<bool> all(5, true);
  expectSameError(cpu, gpu, mgsrt_matmul_fwd, {-1, 2, 2, 2}, all, "batch rank -1");
  expectSameError(cpu, gpu, mgsrt_matmul_fwd, {33}, all, "batch rank 33");
  expectSameError(cpu, gpu, mgsrt_matmul_fwd, {1, 3, 2, 1, 2, 2, 2}, all, "2 vs 3");
  expectSameError(cpu, gpu, mgsrt_matmul_bwd, {0, -2, 2, 2}, all, "negative M");
  expectSameError(cpu, gpu, mgsrt_matmul_bwd, {1, 2, -2, 2, 2, 2, 2}, all, "negative batch");
  expectSameError(cpu, gpu, mgsrt_matmul_fwd, {0, 2, 2, 2, 0, 0, 0}, {true, false, true},
                  "null rhs");
  expectSameError(cpu, gpu, mgsrt_matmul_bwd, {0, 2, 2, 2, 0, 0, 0},
                  {false, true, true, true, true}, "drhs without lhs");
  expectSameError(cpu, gpu, mgsrt_matmul_bwd, {0, 2, 2, 2, 0, 0, 0},
                  {true, true, false, true, false}, "null dout");
  expectSameError(cpu, gpu, mgsrt_matmul_fwd, {0, 2, 2, 2, 2, 0, 0}, all, "trans_lhs 2");
}

} // namespace
