//===- Gemm.cpp - Gemm and batched matmul on dnnl_sgemm -------------------===//

#include "Broadcast.h"
#include "Common.h"

#include <dnnl.h>

#include <cstring>
#include <vector>

using namespace mgs::rt;

namespace {

/// Row-major C = alpha * op(A) op(B) + beta * C, C is m x n. Records a
/// backend error (and returns false) when oneDNN refuses.
bool sgemm(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t m, int64_t n,
           int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
           float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return true;
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

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

struct GemmDesc {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
  int64_t c0, c1;
  bool hasC;
};

mgsrt_status_t parseGemm(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                         GemmDesc &g) {
  g.m = desc[0];
  g.n = desc[1];
  g.k = desc[2];
  if (g.m < 0 || g.n < 0 || g.k < 0)
    return invalidArg(ctx, kernel, "negative size M=", g.m, " N=", g.n, " K=", g.k);
  if ((desc[3] != 0 && desc[3] != 1) || (desc[4] != 0 && desc[4] != 1))
    return invalidArg(ctx, kernel, "trans_a/trans_b must be 0 or 1, got ", desc[3], "/",
                      desc[4]);
  g.ta = desc[3];
  g.tb = desc[4];
  g.alpha = static_cast<float>(descF64(desc, 5));
  g.beta = static_cast<float>(descF64(desc, 6));
  g.c0 = desc[7];
  g.c1 = desc[8];
  g.hasC = !(g.c0 == 0 && g.c1 == 0);
  if (g.hasC && ((g.c0 != 1 && g.c0 != g.m) || (g.c1 != 1 && g.c1 != g.n)))
    return invalidArg(ctx, kernel, "C shape ", g.c0, "x", g.c1, " does not broadcast to ", g.m,
                      "x", g.n);
  return MGSRT_OK;
}

mgsrt_status_t gemmFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "gemm_fwd";
  GemmDesc g;
  if (parseGemm(ctx, kernel, desc, g))
    return ctx->status;
  BufferCheck check(ctx, kernel, bufs);
  check.require(0, "A").require(1, "B");
  if (g.hasC)
    check.require(2, "C");
  if (!check.require(3, "Y").ok)
    return ctx->status;
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *c = static_cast<const float *>(bufs[2]);
  float *y = static_cast<float *>(bufs[3]);
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
  sgemm(ctx, kernel, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.ta ? g.m : g.k, b,
        g.tb ? g.k : g.n, beta, y, g.n);
  return ctx->status;
}

mgsrt_status_t gemmBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "gemm_bwd";
  GemmDesc g;
  if (parseGemm(ctx, kernel, desc, g))
    return ctx->status;
  float *da = static_cast<float *>(bufs[3]);
  float *db = static_cast<float *>(bufs[4]);
  float *dc = static_cast<float *>(bufs[5]);
  if (dc && !g.hasC)
    return invalidArg(ctx, kernel, "dC is given but the descriptor has no C");
  BufferCheck check(ctx, kernel, bufs);
  if (db)
    check.require(0, "A");
  if (da)
    check.require(1, "B");
  if (!check.require(2, "dY").ok)
    return ctx->status;
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *dy = static_cast<const float *>(bufs[2]);
  const int64_t m = g.m, n = g.n, k = g.k;
  // With opA = op(A) (M x K) and opB = op(B) (K x N):
  //   d opA = alpha dY opB^T,  d opB = alpha opA^T dY.
  if (da) {
    if (!g.ta) // dA (M x K) = alpha dY op(B)^T
      sgemm(ctx, kernel, false, !g.tb, m, k, n, g.alpha, dy, n, b, g.tb ? k : n, 0.0f, da, k);
    else // dA (K x M) = alpha op(B) dY^T
      sgemm(ctx, kernel, g.tb, true, k, m, n, g.alpha, b, g.tb ? k : n, dy, n, 0.0f, da, m);
  }
  if (db && !ctx->failed()) {
    if (!g.tb) // dB (K x N) = alpha op(A)^T dY
      sgemm(ctx, kernel, !g.ta, false, k, n, m, g.alpha, a, g.ta ? m : k, dy, n, 0.0f, db, n);
    else // dB (N x K) = alpha dY^T op(A)
      sgemm(ctx, kernel, true, g.ta, n, k, m, g.alpha, dy, n, a, g.ta ? m : k, 0.0f, db, k);
  }
  if (dc && !ctx->failed()) {
    // dC = beta * dY summed over C's broadcast dims.
    const int64_t c0 = g.c0, c1 = g.c1;
    if (c0 == m && c1 == n) {
#pragma omp parallel for simd if (m * n >= kParallelGrain) schedule(static)
      for (int64_t i = 0; i < m * n; ++i)
        dc[i] = g.beta * dy[i];
    } else if (c0 == 1 && c1 == n) {
#pragma omp parallel for if (m * n >= kParallelGrain) schedule(static)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t i = 0; i < m; ++i)
          s += dy[i * n + j];
        dc[j] = static_cast<float>(g.beta * s);
      }
    } else if (c1 == 1 && c0 == m) {
#pragma omp parallel for if (m * n >= kParallelGrain) schedule(static)
      for (int64_t i = 0; i < m; ++i) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j)
          s += dy[i * n + j];
        dc[i] = static_cast<float>(g.beta * s);
      }
    } else { // 1 x 1
      double s = 0.0;
      for (int64_t i = 0; i < m * n; ++i)
        s += dy[i];
      dc[0] = static_cast<float>(g.beta * s);
    }
  }
  return ctx->status;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulDesc {
  int64_t b;
  const int64_t *outB, *lhsB, *rhsB;
  int64_t m, k, n;
  int64_t outCount, lhsCount, rhsCount;
};

mgsrt_status_t parseMatmul(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                           MatmulDesc &d) {
  d.b = desc[0];
  if (d.b < 0 || d.b > kMaxRank)
    return invalidArg(ctx, kernel, "batch rank ", d.b, " is out of range [0, ", kMaxRank, "]");
  d.outB = desc + 1;
  d.lhsB = d.outB + d.b;
  d.rhsB = d.lhsB + d.b;
  const int64_t *mkn = d.rhsB + d.b;
  d.m = mkn[0];
  d.k = mkn[1];
  d.n = mkn[2];
  if (d.m < 0 || d.k < 0 || d.n < 0)
    return invalidArg(ctx, kernel, "negative size M=", d.m, " K=", d.k, " N=", d.n);
  for (int64_t i = 0; i < d.b; ++i)
    if (d.outB[i] < 0 || d.lhsB[i] < 0 || d.rhsB[i] < 0)
      return invalidArg(ctx, kernel, "negative batch extent in dim ", i);
  int64_t bad = badBroadcastDim(d.b, d.outB, d.lhsB, d.rhsB);
  if (bad >= 0)
    return invalidArg(ctx, kernel, "batch dim ", bad, ": lhs ", d.lhsB[bad], " and rhs ",
                      d.rhsB[bad], " do not broadcast to out ", d.outB[bad]);
  d.outCount = product(d.outB, d.b);
  d.lhsCount = product(d.lhsB, d.b);
  d.rhsCount = product(d.rhsB, d.b);
  return MGSRT_OK;
}

/// For each out batch index, the lhs and rhs batch indices.
void batchMaps(const MatmulDesc &d, std::vector<int64_t> &li, std::vector<int64_t> &ri) {
  int64_t ls[kMaxRank], rs[kMaxRank];
  broadcastStrides(d.b, d.outB, d.lhsB, ls);
  broadcastStrides(d.b, d.outB, d.rhsB, rs);
  li.resize(d.outCount);
  ri.resize(d.outCount);
  for (int64_t o = 0; o < d.outCount; ++o) {
    int64_t q = o, l = 0, r = 0;
    for (int64_t i = d.b - 1; i >= 0; --i) {
      int64_t c = q % d.outB[i];
      q /= d.outB[i];
      l += c * ls[i];
      r += c * rs[i];
    }
    li[o] = l;
    ri[o] = r;
  }
}

mgsrt_status_t matmulFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "matmul_fwd";
  MatmulDesc d;
  if (parseMatmul(ctx, kernel, desc, d))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs).require(0, "lhs").require(1, "rhs").require(2, "out").ok)
    return ctx->status;
  const float *lhs = static_cast<const float *>(bufs[0]);
  const float *rhs = static_cast<const float *>(bufs[1]);
  float *out = static_cast<float *>(bufs[2]);
  const int64_t m = d.m, k = d.k, n = d.n;
  if (d.outCount == 0)
    return MGSRT_OK;
  if (d.rhsCount == 1 && d.lhsCount == d.outCount) {
    // One rhs for every batch: the batches stack into one (B*M) x K matrix.
    sgemm(ctx, kernel, false, false, d.outCount * m, n, k, 1.0f, lhs, k, rhs, n, 0.0f, out, n);
    return ctx->status;
  }
  std::vector<int64_t> li, ri;
  batchMaps(d, li, ri);
  for (int64_t o = 0; o < d.outCount && !ctx->failed(); ++o)
    sgemm(ctx, kernel, false, false, m, n, k, 1.0f, lhs + li[o] * m * k, k, rhs + ri[o] * k * n,
          n, 0.0f, out + o * m * n, n);
  return ctx->status;
}

mgsrt_status_t matmulBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "matmul_bwd";
  MatmulDesc d;
  if (parseMatmul(ctx, kernel, desc, d))
    return ctx->status;
  float *dl = static_cast<float *>(bufs[3]);
  float *dr = static_cast<float *>(bufs[4]);
  BufferCheck check(ctx, kernel, bufs);
  if (dr)
    check.require(0, "lhs");
  if (dl)
    check.require(1, "rhs");
  if (!check.require(2, "dout").ok)
    return ctx->status;
  const float *lhs = static_cast<const float *>(bufs[0]);
  const float *rhs = static_cast<const float *>(bufs[1]);
  const float *dout = static_cast<const float *>(bufs[2]);
  const int64_t m = d.m, k = d.k, n = d.n;
  // Batches that broadcast accumulate: start from zero, add with beta = 1.
  if (dl)
    std::memset(dl, 0, sizeof(float) * d.lhsCount * m * k);
  if (dr)
    std::memset(dr, 0, sizeof(float) * d.rhsCount * k * n);
  if (d.outCount == 0)
    return MGSRT_OK;
  const bool stackLhs = d.rhsCount == 1 && d.lhsCount == d.outCount;
  std::vector<int64_t> li, ri;
  if (!stackLhs)
    batchMaps(d, li, ri);
  if (dl) {
    if (stackLhs) // dL (B*M x K) = dOut (B*M x N) R^T
      sgemm(ctx, kernel, false, true, d.outCount * m, k, n, 1.0f, dout, n, rhs, n, 0.0f, dl, k);
    else
      for (int64_t o = 0; o < d.outCount && !ctx->failed(); ++o)
        sgemm(ctx, kernel, false, true, m, k, n, 1.0f, dout + o * m * n, n, rhs + ri[o] * k * n,
              n, 1.0f, dl + li[o] * m * k, k);
  }
  if (dr && !ctx->failed()) {
    if (stackLhs) // dR (K x N) = L^T (K x B*M) dOut (B*M x N)
      sgemm(ctx, kernel, true, false, k, n, d.outCount * m, 1.0f, lhs, k, dout, n, 0.0f, dr, n);
    else
      for (int64_t o = 0; o < d.outCount && !ctx->failed(); ++o)
        sgemm(ctx, kernel, true, false, k, n, m, 1.0f, lhs + li[o] * m * k, k, dout + o * m * n,
              n, 1.0f, dr + ri[o] * k * n, n);
  }
  return ctx->status;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t gemm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "gemm_fwd", desc, bufs, [&] { return gemmFwd(ctx, desc, bufs); });
}
mgsrt_status_t gemm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "gemm_bwd", desc, bufs, [&] { return gemmBwd(ctx, desc, bufs); });
}
mgsrt_status_t matmul_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "matmul_fwd", desc, bufs, [&] { return matmulFwd(ctx, desc, bufs); });
}
mgsrt_status_t matmul_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "matmul_bwd", desc, bufs, [&] { return matmulBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
