//===- Gemm.cpp - Gemm and batched matmul on oneDNN -----------------------===//
//
// float32: dnnl_sgemm. bfloat16 (MGSRT_PRECISION_BF16): oneDNN's matmul
// primitive on bfloat16 copies of the operands (reorders), accumulating and
// writing float32; the primitives and the copies are cached per shape. Half
// (MGSRT_PRECISION_F16), and bfloat16 where oneDNN has no bfloat16 kernels:
// the float32 path on copies of the operands rounded (RoundedOperands.h).
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/GemmDesc.h"
#include "Kernels/CPU/Dnnl.h"
#include "Kernels/CPU/RoundedOperands.h"
#include "Kernels/CPU/SmallGemm.h"

#include <dnnl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

using namespace mgs::rt;
using mgs::rt::cpu::roundedOperands;
using mgs::rt::cpu::sgemm;

namespace {

/// dnnl_sgemm (oneDNN 2.6) with op(A) = A^T and B as it is -- a weight
/// gradient X^T dY -- reads an operand whose rows are a multiple of 2 KB apart
/// at about half speed on AVX2 (the rows fall into the same cache sets): at
/// 256 x 1024 x 512 on 2 cores 3.0 ms, 1.8 ms with B (1024 floats a row)
/// copied into rows 16 floats longer first, copy included. So such an operand
/// of 64 Ki floats or more is copied: GPT's and an LSTM's weight gradients
/// then take 0.57-0.83x plain sgemm's time, the other shapes measured within
/// 1.5% of it. Rows 768 floats apart gained 11% at GPT's 512 rows and lost
/// 4-14% at ViT's 1040 (the copy's cost grows with the rows), so they stay as
/// they are, as do the other transpositions, which gain nothing
/// (runtime/bench/SgemmStridesBench.cpp, bench/results/sgemm-strides-cpu.txt).
/// The copies hold the same numbers (oneDNN may sum them in another order, as
/// for any other stride). Nothing is padded when the scratch cannot grow; it
/// is kept with the context, as large as the largest operand copied so far.
void padStrides(mgsrt_ctx_t *ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                const float *&a, int64_t &lda, const float *&b, int64_t &ldb) {
  constexpr int64_t kStride = 512, kPad = 16, kLeast = 64 * 1024;
  if (!ta || tb)
    return;
  // A is k rows of m, B k rows of n.
  // A's copy (k x m) is paid back over n columns of products: at n = 128 it
  // lost 7% (an LSTM's input weights, 512 gates x 128 x 320 rows).
  const bool padA = lda % kStride == 0 && n >= 256 && k * lda >= kLeast;
  const bool padB = ldb % kStride == 0 && k * ldb >= kLeast;
  if (!padA && !padB)
    return;
  static const int64_t key = 0; // the padded copies' scratch
  // Rows kPad floats longer, or twice that where that is a multiple of
  // kStride again; B's copy starts a whole number of 64-byte lines after A's.
  auto padded = [](int64_t cols) { return cols + ((cols + kPad) % kStride ? kPad : 2 * kPad); };
  const int64_t aCount = padA ? (k * padded(m) + kPad - 1) / kPad * kPad : 0;
  const int64_t bCount = padB ? k * padded(n) : 0;
  float *scratch = floatScratch(ctx, &key, static_cast<size_t>(aCount + bCount));
  if (!scratch)
    return;
  auto copy = [&](const float *&from, int64_t &ld, int64_t cols, int64_t rows, float *to) {
    const int64_t stride = padded(cols);
#pragma omp parallel for if (rows * cols >= kParallelGrain) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(to + r * stride, from + r * ld, sizeof(float) * cols);
    from = to;
    ld = stride;
  };
  if (padA)
    copy(a, lda, m, k, scratch);
  if (padB)
    copy(b, ldb, n, k, scratch + aCount);
}

} // namespace

bool mgs::rt::cpu::sgemm(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t m, int64_t n,
           int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
           float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return true;
  padStrides(ctx, ta, tb, m, n, k, a, lda, b, ldb);
  if (k == 0) {
    // op(A) op(B) is zero; dnnl_sgemm needs k >= 1.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return true;
  }
  dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb,
                                beta, c, ldc);
  if (st != dnnl_success) {
    ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": dnnl_sgemm failed with status ",
                                          static_cast<int>(st)));
    return false;
  }
  return true;
}

namespace {

//===----------------------------------------------------------------------===//
// bfloat16 GEMM
//===----------------------------------------------------------------------===//

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

/// One shape's bfloat16 GEMM: the caller's float32 operands (handles set per
/// call), their bfloat16 copies in the same order (row- or column-major; in
/// the context's one scratch buffer, set per call too), the reorders that
/// fill them, and the matmul writing the float32 result.
struct Bf16Gemm {
  dnnl::memory a, b, c, aBf, bBf;
  dnnl::reorder toA, toB;
  dnnl::matmul matmul;
};

/// (m, n, k, ta, tb, lda, ldb, ldc, alpha bits, beta bits).
using Bf16GemmKey = std::array<int64_t, 10>;

/// The shapes' GEMMs and the scratch every one of them puts its bfloat16
/// operands in (the size of the largest pair; a GEMM runs to completion
/// before the next starts).
struct Bf16GemmCache : KernelCache {
  std::map<Bf16GemmKey, std::unique_ptr<Bf16Gemm>> shapes;
  std::vector<uint16_t> scratch;
};

std::unique_ptr<Bf16Gemm> makeBf16Gemm(const dnnl::engine &eng, bool ta, bool tb, int64_t m,
                                       int64_t n, int64_t k, float alpha, int64_t lda,
                                       int64_t ldb, float beta, int64_t ldc) {
  using dims = dnnl::memory::dims;
  // op(A) is m x k: stored row-major (lda) or, transposed, column-major.
  const dims aDims{m, k}, bDims{k, n}, cDims{m, n};
  const dnnl::memory::desc aUser(aDims, dt::f32, ta ? dims{1, lda} : dims{lda, 1});
  const dnnl::memory::desc bUser(bDims, dt::f32, tb ? dims{1, ldb} : dims{ldb, 1});
  const dnnl::memory::desc aBf(aDims, dt::bf16, ta ? tag::ba : tag::ab);
  const dnnl::memory::desc bBf(bDims, dt::bf16, tb ? tag::ba : tag::ab);
  const dnnl::memory::desc c(cDims, dt::f32, dims{ldc, 1});
  dnnl::primitive_attr attr;
  if (alpha != 1.0f)
    attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(aBf, bBf, c), attr, eng);
  auto g = std::make_unique<Bf16Gemm>();
  g->a = dnnl::memory(aUser, eng, DNNL_MEMORY_NONE);
  g->b = dnnl::memory(bUser, eng, DNNL_MEMORY_NONE);
  g->c = dnnl::memory(c, eng, DNNL_MEMORY_NONE);
  g->aBf = dnnl::memory(aBf, eng, DNNL_MEMORY_NONE);
  g->bBf = dnnl::memory(bBf, eng, DNNL_MEMORY_NONE);
  g->toA = dnnl::reorder(g->a, g->aBf);
  g->toB = dnnl::reorder(g->b, g->bBf);
  g->matmul = dnnl::matmul(pd);
  return g;
}

int64_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// C = alpha op(A) op(B) + beta C with A and B rounded to bfloat16 (k >= 1).
mgsrt_status_t bf16Gemm(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t m,
                        int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                        const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  return cpu::catchDnnl(ctx, kernel, [&]() -> mgsrt_status_t {
    static const int64_t key = 0;
    cpu::DnnlEnv &env = cpu::dnnlEnv(ctx);
    Bf16GemmCache &cache = getCache<Bf16GemmCache>(ctx, &key);
    auto &slot = cache.shapes[{m, n, k, ta, tb, lda, ldb, ldc, bitsOf(alpha), bitsOf(beta)}];
    if (!slot)
      slot = makeBf16Gemm(env.engine, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
    Bf16Gemm &g = *slot;
    const size_t aCount = static_cast<size_t>(m) * k, bCount = static_cast<size_t>(k) * n;
    if (cache.scratch.size() < aCount + bCount)
      cache.scratch.resize(aCount + bCount);
    g.aBf.set_data_handle(cache.scratch.data());
    g.bBf.set_data_handle(cache.scratch.data() + aCount);
    g.a.set_data_handle(const_cast<float *>(a));
    g.b.set_data_handle(const_cast<float *>(b));
    g.c.set_data_handle(c);
    g.toA.execute(env.stream, g.a, g.aBf);
    g.toB.execute(env.stream, g.b, g.bBf);
    g.matmul.execute(env.stream,
                     {{DNNL_ARG_SRC, g.aBf}, {DNNL_ARG_WEIGHTS, g.bBf}, {DNNL_ARG_DST, g.c}});
    env.stream.wait();
    return MGSRT_OK;
  }, /*bf16=*/true);
}

/// sgemm in the descriptor's precision.
bool gemm(mgsrt_ctx_t *ctx, const char *kernel, bool bf16, bool ta, bool tb, int64_t m,
          int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
          int64_t ldb, float beta, float *c, int64_t ldc) {
  if (!bf16 || m == 0 || n == 0 || k == 0)
    return sgemm(ctx, kernel, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return bf16Gemm(ctx, kernel, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
         MGSRT_OK;
}

/// Runs count GEMMs C_o = op(A_o) op(B_o) + beta C_o, each m x n x k, whose operands ptrs(o)
/// gives as {A_o, B_o, C_o}. When the C_o are distinct (disjoint) the float32 batches split
/// across the OpenMP threads, each running a single-threaded dnnl_sgemm (oneDNN does not nest):
/// at attention's shapes (many GEMMs of ~64x64x64) that beats threading each small GEMM in turn.
/// Otherwise (C_o repeat: broadcast batches accumulating), and in bfloat16 (one cached
/// primitive, itself threaded), they run one after another. Float32 GEMMs of 32 x 32 x 32 or
/// less (windowed attention's) run in cpu::smallGemm, without oneDNN's cost per call.
template <typename Ptrs>
void batchedGemm(mgsrt_ctx_t *ctx, const char *kernel, bool bf16, bool ta, bool tb, int64_t m,
                 int64_t n, int64_t k, int64_t count, bool disjoint, float beta, Ptrs ptrs) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  const bool small = !bf16 && cpu::isSmallGemm(m, n, k);
  if (bf16 || !disjoint || count == 1 || m == 0 || n == 0 || k == 0) {
    for (int64_t o = 0; o < count && !ctx->failed(); ++o) {
      auto [a, b, c] = ptrs(o);
      if (small)
        cpu::smallGemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, n);
      else
        gemm(ctx, kernel, bf16, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, n);
    }
    return;
  }
  int bad = dnnl_success;
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < count; ++o) {
    auto [a, b, c] = ptrs(o);
    if (small) {
      cpu::smallGemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, n);
      continue;
    }
    dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
                                  beta, c, n);
    if (st != dnnl_success) {
#pragma omp atomic write
      bad = static_cast<int>(st);
    }
  }
  if (bad != dnnl_success)
    ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": dnnl_sgemm failed with status ", bad));
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

mgsrt_status_t gemmFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gemm_fwd);
  GemmDesc g;
  if (parseGemm(ctx, kernel, desc, g))
    return ctx->status;
  if (!checkGemmFwdBufs(ctx, kernel, bufs, g))
    return ctx->status;
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *c = static_cast<const float *>(bufs[2]);
  float *y = static_cast<float *>(bufs[3]);
  const bool bf16 = cpu::nativeBf16(g.precision);
  if (roundedOperands(ctx, kernel, g.precision, {{a, g.m * g.k}, {b, g.k * g.n}}))
    return ctx->status;
  float beta = 0.0f;
  if (g.hasC) {
    // Y = beta * broadcast(C), then accumulate the product into it.
    const int64_t rs = g.c0 == 1 ? 0 : g.c1, cs = g.c1 == 1 ? 0 : 1;
#pragma omp parallel for if (g.m * g.n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j)
        y[i * g.n + j] = g.beta * c[i * rs + j * cs];
    beta = 1.0f;
  }
  gemm(ctx, kernel, bf16, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.ta ? g.m : g.k, b,
        g.tb ? g.k : g.n, beta, y, g.n);
  return ctx->status;
}

mgsrt_status_t gemmBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gemm_bwd);
  GemmDesc g;
  if (parseGemm(ctx, kernel, desc, g))
    return ctx->status;
  if (!checkGemmBwdBufs(ctx, kernel, bufs, g))
    return ctx->status;
  float *da = static_cast<float *>(bufs[3]);
  float *db = static_cast<float *>(bufs[4]);
  float *dc = static_cast<float *>(bufs[5]);
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *dy = static_cast<const float *>(bufs[2]);
  const int64_t m = g.m, n = g.n, k = g.k;
  const bool bf16 = cpu::nativeBf16(g.precision);
  const float *dySum = dy; // dC sums dY as it is; the products may read it rounded
  if ((da || db) && roundedOperands(ctx, kernel, g.precision,
                                    {{a, db ? m * k : 0}, {b, da ? k * n : 0}, {dy, m * n}}))
    return ctx->status;
  // With opA = op(A) (M x K) and opB = op(B) (K x N):
  //   d opA = alpha dY opB^T,  d opB = alpha opA^T dY.
  if (da) {
    if (!g.ta) // dA (M x K) = alpha dY op(B)^T
      gemm(ctx, kernel, bf16, false, !g.tb, m, k, n, g.alpha, dy, n, b, g.tb ? k : n, 0.0f, da,
           k);
    else // dA (K x M) = alpha op(B) dY^T
      gemm(ctx, kernel, bf16, g.tb, true, k, m, n, g.alpha, b, g.tb ? k : n, dy, n, 0.0f, da, m);
  }
  if (db && !ctx->failed()) {
    if (!g.tb) // dB (K x N) = alpha op(A)^T dY
      gemm(ctx, kernel, bf16, !g.ta, false, k, n, m, g.alpha, a, g.ta ? m : k, dy, n, 0.0f, db,
           n);
    else // dB (N x K) = alpha dY^T op(A)
      gemm(ctx, kernel, bf16, true, g.ta, n, k, m, g.alpha, dy, n, a, g.ta ? m : k, 0.0f, db, k);
  }
  if (dc && !ctx->failed()) {
    // dC = beta * dY summed over C's broadcast dims.
    const int64_t c0 = g.c0, c1 = g.c1;
    if (c0 == m && c1 == n) {
#pragma omp parallel for simd if (m * n >= kParallelGrain) schedule(static)
      for (int64_t i = 0; i < m * n; ++i)
        dc[i] = g.beta * dySum[i];
    } else if (c0 == 1 && c1 == n) {
      // Column sums, a block of columns at a time walking dY's rows (each
      // column still summed in row order, in double).
      constexpr int64_t kBlock = 256;
#pragma omp parallel for if (m * n >= kParallelGrain) schedule(static)
      for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
        const int64_t width = std::min(kBlock, n - j0);
        double s[kBlock] = {};
        for (int64_t i = 0; i < m; ++i) {
          const float *row = dySum + i * n + j0;
#pragma omp simd
          for (int64_t j = 0; j < width; ++j)
            s[j] += row[j];
        }
        for (int64_t j = 0; j < width; ++j)
          dc[j0 + j] = static_cast<float>(g.beta * s[j]);
      }
    } else if (c1 == 1 && c0 == m) {
#pragma omp parallel for if (m * n >= kParallelGrain) schedule(static)
      for (int64_t i = 0; i < m; ++i) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j)
          s += dySum[i * n + j];
        dc[i] = static_cast<float>(g.beta * s);
      }
    } else { // 1 x 1
      double s = 0.0;
      for (int64_t i = 0; i < m * n; ++i)
        s += dySum[i];
      dc[0] = static_cast<float>(g.beta * s);
    }
  }
  return ctx->status;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

mgsrt_status_t matmulFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::matmul_fwd);
  MatmulDesc d;
  if (parseMatmul(ctx, kernel, desc, d))
    return ctx->status;
  if (!checkMatmulFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *lhs = static_cast<const float *>(bufs[0]);
  const float *rhs = static_cast<const float *>(bufs[1]);
  float *out = static_cast<float *>(bufs[2]);
  const int64_t m = d.m, k = d.k, n = d.n;
  if (d.outCount == 0)
    return MGSRT_OK;
  const bool bf16 = cpu::nativeBf16(d.precision);
  if (roundedOperands(ctx, kernel, d.precision,
                      {{lhs, d.lhsCount * m * k}, {rhs, d.rhsCount * k * n}}))
    return ctx->status;
  if (d.rhsCount == 1 && d.lhsCount == d.outCount && !d.tl) {
    // One rhs for every batch: the batches stack into one (B*M) x K matrix.
    gemm(ctx, kernel, bf16, false, d.tr, d.outCount * m, n, k, 1.0f, lhs, k, rhs, d.tr ? k : n,
         0.0f, out, n);
    return ctx->status;
  }
  std::vector<int64_t> li, ri;
  batchMaps(d, li, ri);
  batchedGemm(ctx, kernel, bf16, d.tl, d.tr, m, n, k, d.outCount, true, 0.0f, [&](int64_t o) {
    return std::tuple(lhs + li[o] * m * k, rhs + ri[o] * k * n, out + o * m * n);
  });
  return ctx->status;
}

mgsrt_status_t matmulBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::matmul_bwd);
  MatmulDesc d;
  if (parseMatmul(ctx, kernel, desc, d))
    return ctx->status;
  if (!checkMatmulBwdBufs(ctx, kernel, bufs))
    return ctx->status;
  float *dl = static_cast<float *>(bufs[3]);
  float *dr = static_cast<float *>(bufs[4]);
  const float *lhs = static_cast<const float *>(bufs[0]);
  const float *rhs = static_cast<const float *>(bufs[1]);
  const float *dout = static_cast<const float *>(bufs[2]);
  const int64_t m = d.m, k = d.k, n = d.n;
  const bool tl = d.tl, tr = d.tr;
  const bool stackLhs = d.rhsCount == 1 && d.lhsCount == d.outCount && !tl;
  // A gradient whose operand broadcasts over the batches accumulates: it
  // starts from zero and each batch adds with beta = 1. One that does not
  // (each slice written by one GEMM, or the stacked lhs's one GEMM) is
  // written with beta = 0, never cleared or read.
  const bool lhsOwn = d.lhsCount == d.outCount, rhsOwn = d.rhsCount == d.outCount || stackLhs;
  if (dl && (!lhsOwn || d.outCount == 0))
    std::memset(dl, 0, sizeof(float) * d.lhsCount * m * k);
  if (dr && (!rhsOwn || d.outCount == 0))
    std::memset(dr, 0, sizeof(float) * d.rhsCount * k * n);
  if (d.outCount == 0)
    return MGSRT_OK;
  const float betaL = lhsOwn ? 0.0f : 1.0f, betaR = rhsOwn ? 0.0f : 1.0f;
  const bool bf16 = cpu::nativeBf16(d.precision);
  if (roundedOperands(ctx, kernel, d.precision,
                      {{lhs, dr ? d.lhsCount * m * k : 0},
                       {rhs, dl ? d.rhsCount * k * n : 0},
                       {dout, d.outCount * m * n}}))
    return ctx->status;
  const int64_t bm = d.outCount * m;
  std::vector<int64_t> li, ri;
  if (!stackLhs)
    batchMaps(d, li, ri);
  // With opL = op(lhs) (M x K) and opR = op(rhs) (K x N): d opL = dOut opR^T,
  // d opR = opL^T dOut; a transposed operand's gradient is their transpose.
  if (dl) {
    if (stackLhs) // dL (B*M x K) = dOut (B*M x N) opR^T
      gemm(ctx, kernel, bf16, false, !tr, bm, k, n, 1.0f, dout, n, rhs, tr ? k : n, 0.0f, dl, k);
    else if (!tl) // dL_l (M x K) += dOut_o opR_o^T; the l distinct when lhs does not broadcast
      batchedGemm(ctx, kernel, bf16, false, !tr, m, k, n, d.outCount, lhsOwn, betaL,
                  [&](int64_t o) {
                    return std::tuple(dout + o * m * n, rhs + ri[o] * k * n, dl + li[o] * m * k);
                  });
    else // dL_l (K x M) += opR_o dOut_o^T
      batchedGemm(ctx, kernel, bf16, tr, true, k, m, n, d.outCount, lhsOwn, betaL,
                  [&](int64_t o) {
                    return std::tuple(rhs + ri[o] * k * n, dout + o * m * n, dl + li[o] * m * k);
                  });
  }
  if (dr && !ctx->failed()) {
    if (stackLhs && !tr) // dR (K x N) = L^T (K x B*M) dOut (B*M x N)
      gemm(ctx, kernel, bf16, true, false, k, n, bm, 1.0f, lhs, k, dout, n, 0.0f, dr, n);
    else if (stackLhs) // dR (N x K) = dOut^T (N x B*M) L (B*M x K)
      gemm(ctx, kernel, bf16, true, false, n, k, bm, 1.0f, dout, n, lhs, k, 0.0f, dr, k);
    else if (!tr) // dR_r (K x N) += opL_o^T dOut_o; the r distinct when rhs does not broadcast
      batchedGemm(ctx, kernel, bf16, !tl, false, k, n, m, d.outCount, d.rhsCount == d.outCount,
                  betaR, [&](int64_t o) {
                    return std::tuple(lhs + li[o] * m * k, dout + o * m * n, dr + ri[o] * k * n);
                  });
    else // dR_r (N x K) += dOut_o^T opL_o
      batchedGemm(ctx, kernel, bf16, true, tl, n, k, m, d.outCount, d.rhsCount == d.outCount,
                  betaR, [&](int64_t o) {
                    return std::tuple(dout + o * m * n, lhs + li[o] * m * k, dr + ri[o] * k * n);
                  });
  }
  return ctx->status;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t gemm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gemm_fwd), desc, bufs, [&] { return gemmFwd(ctx, desc, bufs); });
}
mgsrt_status_t gemm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gemm_bwd), desc, bufs, [&] { return gemmBwd(ctx, desc, bufs); });
}
mgsrt_status_t matmul_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::matmul_fwd), desc, bufs, [&] { return matmulFwd(ctx, desc, bufs); });
}
mgsrt_status_t matmul_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::matmul_bwd), desc, bufs, [&] { return matmulBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
