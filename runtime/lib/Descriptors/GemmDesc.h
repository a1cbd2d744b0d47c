//===- GemmDesc.h - Gemm and MatMul descriptors, parsed and checked -*- C++ -*-===//
//
// mgsrt_gemm_* and mgsrt_matmul_* descriptors (mgsrt.h; fields named in mgsrt/contract.h): parsing, validation
// and buffer checks shared by the CPU (dnnl_sgemm) and CUDA (cuBLAS)
// kernels, so both reject the same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_GEMMDESC_H
#define MGSRT_DESCRIPTORS_GEMMDESC_H

#include "Support/Broadcast.h"
#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <vector>

namespace mgs::rt {

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

struct GemmDesc {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
  int64_t c0, c1;
  bool hasC;
  Precision precision; ///< what the operands are rounded to (MGSRT_PRECISION_*)
};

inline mgsrt_status_t parseGemm(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                GemmDesc &g) {
  using F = mgs::contract::GemmDesc;
  g.m = desc[F::M];
  g.n = desc[F::N];
  g.k = desc[F::K];
  if (g.m < 0 || g.n < 0 || g.k < 0)
    return invalidArg(ctx, kernel, "negative size M=", g.m, " N=", g.n, " K=", g.k);
  const int64_t ta = desc[F::TransA], tb = desc[F::TransB];
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
    return invalidArg(ctx, kernel, "trans_a/trans_b must be 0 or 1, got ", ta, "/", tb);
  g.ta = ta;
  g.tb = tb;
  g.alpha = static_cast<float>(descF64(desc, F::AlphaBits));
  g.beta = static_cast<float>(descF64(desc, F::BetaBits));
  g.c0 = desc[F::C0];
  g.c1 = desc[F::C1];
  g.hasC = !(g.c0 == 0 && g.c1 == 0);
  if (g.hasC && ((g.c0 != 1 && g.c0 != g.m) || (g.c1 != 1 && g.c1 != g.n)))
    return invalidArg(ctx, kernel, "C shape ", g.c0, "x", g.c1, " does not broadcast to ", g.m,
                      "x", g.n);
  return parsePrecision(ctx, kernel, desc[F::Precision], g.precision);
}

/// gemm_fwd's buffer checks (bufs: A, B, C, Y).
inline bool checkGemmFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs,
                             const GemmDesc &g) {
  BufferCheck check(ctx, kernel, bufs);
  check.require(0, "A").require(1, "B");
  if (g.hasC)
    check.require(2, "C");
  return check.require(3, "Y").ok;
}

/// gemm_bwd's buffer checks (bufs: A, B, dY, dA, dB, dC; the gradients nullable).
inline bool checkGemmBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs,
                             const GemmDesc &g) {
  if (bufs[5] && !g.hasC) {
    invalidArg(ctx, kernel, "dC is given but the descriptor has no C");
    return false;
  }
  BufferCheck check(ctx, kernel, bufs);
  if (bufs[4])
    check.require(0, "A");
  if (bufs[3])
    check.require(1, "B");
  return check.require(2, "dY").ok;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulDesc {
  int64_t b;
  const int64_t *outB, *lhsB, *rhsB;
  int64_t m, k, n;
  bool tl, tr; ///< lhs stored k x m, rhs stored n x k (each batch)
  Precision precision; ///< what the operands are rounded to (MGSRT_PRECISION_*)
  int64_t outCount, lhsCount, rhsCount;
};

inline mgsrt_status_t parseMatmul(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                  MatmulDesc &d) {
  using F = mgs::contract::MatMulDesc;
  d.b = desc[F::BatchRank];
  if (d.b < 0 || d.b > kMaxRank)
    return invalidArg(ctx, kernel, "batch rank ", d.b, " is out of range [0, ", kMaxRank, "]");
  d.outB = desc + F::at(F::OutBatch, d.b);
  d.lhsB = desc + F::at(F::LhsBatch, d.b);
  d.rhsB = desc + F::at(F::RhsBatch, d.b);
  d.m = desc[F::at(F::M, d.b)];
  d.k = desc[F::at(F::K, d.b)];
  d.n = desc[F::at(F::N, d.b)];
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
  const int64_t tl = desc[F::at(F::TransLhs, d.b)], tr = desc[F::at(F::TransRhs, d.b)];
  if ((tl != 0 && tl != 1) || (tr != 0 && tr != 1))
    return invalidArg(ctx, kernel, "trans_lhs ", tl, " and trans_rhs ", tr, " must be 0 or 1");
  d.tl = tl;
  d.tr = tr;
  return parsePrecision(ctx, kernel, desc[F::at(F::Precision, d.b)], d.precision);
}

/// matmul_fwd's buffer checks (bufs: lhs, rhs, out).
inline bool checkMatmulFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs).require(0, "lhs").require(1, "rhs").require(2, "out").ok;
}

/// matmul_bwd's buffer checks (bufs: lhs, rhs, dout, dlhs, drhs; the gradients nullable).
inline bool checkMatmulBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  BufferCheck check(ctx, kernel, bufs);
  if (bufs[4])
    check.require(0, "lhs");
  if (bufs[3])
    check.require(1, "rhs");
  return check.require(2, "dout").ok;
}

/// For each out batch index, the lhs and rhs batch indices.
inline void batchMaps(const MatmulDesc &d, std::vector<int64_t> &li, std::vector<int64_t> &ri) {
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

namespace cpu {
/// Row-major C = alpha * op(A) op(B) + beta * C, C is m x n, on dnnl_sgemm.
/// Records a backend error (and returns false) when oneDNN refuses.
bool sgemm(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t m, int64_t n,
           int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
           float beta, float *c, int64_t ldc);
} // namespace cpu

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_GEMMDESC_H
