//===- ElementwiseDesc.h - Elementwise descriptors, parsed and checked -*- C++ -*-===//
//
// The descriptor and buffer checks of unary, clip, binary, copy, zero and
// accumulate, shared by the CPU kernels (Elementwise.cpp) and the CUDA ones
// (CUDA/Elementwise.cu), so both reject the same input with the same words.
// Each parse* records the error in ctx and returns its status, else MGSRT_OK.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_ELEMENTWISEDESC_H
#define MGSRT_DESCRIPTORS_ELEMENTWISEDESC_H

#include "Support/Broadcast.h"
#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

/// desc[index] as an element count: "element count N is negative" otherwise.
inline mgsrt_status_t parseElementCount(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                        int index, int64_t &n) {
  n = desc[index];
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative");
  return MGSRT_OK;
}

//===--- Unary ------------------------------------------------------------===//

struct UnaryParams {
  int64_t op, n;
  float alpha;
  float beta; ///< hard_sigmoid, hard_swish and selu (gamma) only; 0 for the others.
};

/// Whether unary op `op`'s gradient reads x (else y).
inline bool unaryGradReadsInput(int64_t op) {
  return op == MGSRT_UNARY_RELU || op == MGSRT_UNARY_LEAKY_RELU || op == MGSRT_UNARY_ERF ||
         op == MGSRT_UNARY_POW || op == MGSRT_UNARY_HARD_SIGMOID || op == MGSRT_UNARY_HARD_SWISH ||
         op == MGSRT_UNARY_COS || op == MGSRT_UNARY_SIN ||
         (op >= MGSRT_UNARY_ABS && op <= MGSRT_UNARY_CEIL);
}

/// unary_fwd (bufs: x, y) or unary_bwd (bufs: x, y, dy, dx; relu, leaky, erf,
/// pow, the hard ops, cos and sin read x, sigmoid/tanh/sqrt/exp read y).
inline mgsrt_status_t parseUnary(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                 void *const *bufs, bool bwd, UnaryParams &p) {
  using F = mgs::contract::UnaryDesc;
  p.op = desc[F::Op];
  if (p.op < MGSRT_UNARY_RELU || p.op > MGSRT_UNARY_CEIL)
    return invalidArg(ctx, kernel, "op ", p.op, " is out of range [0, ", MGSRT_UNARY_CEIL, "]");
  if (parseElementCount(ctx, kernel, desc, F::Count, p.n))
    return ctx->status;
  p.alpha = static_cast<float>(descF64(desc, F::AlphaBits));
  const bool hasBeta = p.op == MGSRT_UNARY_HARD_SIGMOID || p.op == MGSRT_UNARY_HARD_SWISH ||
                       p.op == MGSRT_UNARY_SELU;
  p.beta = hasBeta ? static_cast<float>(descF64(desc, F::BetaBits)) : 0.0f;
  const int64_t n = p.n;
  BufferCheck check(ctx, kernel, bufs);
  if (!bwd) {
    check.require(0, "x", n).require(1, "y", n);
  } else {
    if (unaryGradReadsInput(p.op))
      check.require(0, "x", n);
    else
      check.require(1, "y", n);
    check.require(2, "dy", n).require(3, "dx", n);
  }
  return check.ok ? MGSRT_OK : ctx->status;
}

//===--- Clip -------------------------------------------------------------===//

/// clip_fwd (bufs: x, min, max, y) or clip_bwd (bufs: x, min, max, dy, dx).
inline mgsrt_status_t parseClip(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                void *const *bufs, bool bwd, int64_t &n) {
  if (parseElementCount(ctx, kernel, desc, mgs::contract::CountDesc::Count, n))
    return ctx->status;
  BufferCheck check(ctx, kernel, bufs);
  check.require(0, "x", n).require(1, "min").require(2, "max");
  if (!bwd)
    check.require(3, "y", n);
  else
    check.require(3, "dy", n).require(4, "dx", n);
  return check.ok ? MGSRT_OK : ctx->status;
}

//===--- Binary (broadcasting) --------------------------------------------===//

struct BinaryShape {
  int64_t op, rank;
  const int64_t *out, *lhs, *rhs;
  int64_t total, lhsSize, rhsSize; // element counts of out, lhs, rhs
};

/// binary_fwd (bufs: lhs, rhs, out) or binary_bwd (bufs: lhs, rhs, dout,
/// dlhs?, drhs?; the nullable gradients are not checked).
inline mgsrt_status_t parseBinary(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                  void *const *bufs, bool bwd, BinaryShape &s) {
  using F = mgs::contract::BinaryDesc;
  s.op = desc[F::Op];
  s.rank = desc[F::Rank];
  if (s.op < MGSRT_BINARY_ADD || s.op > MGSRT_BINARY_KEEP_WHERE)
    return invalidArg(ctx, kernel, "op ", s.op, " is out of range [0, ", MGSRT_BINARY_KEEP_WHERE,
                      "]");
  if (s.rank < 0 || s.rank > kMaxRank)
    return invalidArg(ctx, kernel, "rank ", s.rank, " is out of range [0, ", kMaxRank, "]");
  s.out = desc + F::at(F::Out, s.rank);
  s.lhs = desc + F::at(F::Lhs, s.rank);
  s.rhs = desc + F::at(F::Rhs, s.rank);
  for (int64_t i = 0; i < s.rank; ++i)
    if (s.out[i] < 0 || s.lhs[i] < 0 || s.rhs[i] < 0)
      return invalidArg(ctx, kernel, "negative extent in dim ", i);
  int64_t bad = badBroadcastDim(s.rank, s.out, s.lhs, s.rhs);
  if (bad >= 0)
    return invalidArg(ctx, kernel, "dim ", bad, ": lhs ", s.lhs[bad], " and rhs ", s.rhs[bad],
                      " do not broadcast to out ", s.out[bad]);
  s.total = product(s.out, s.rank);
  s.lhsSize = product(s.lhs, s.rank);
  s.rhsSize = product(s.rhs, s.rank);
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "lhs").require(1, "rhs").require(2, bwd ? "dout" : "out").ok)
    return ctx->status;
  return MGSRT_OK;
}

/// The collapsed iteration space over out with operands (out, lhs, rhs).
inline void buildBinarySpace(const BinaryShape &s, BroadcastSpace<3> &space) {
  int64_t so[kMaxRank], sl[kMaxRank], sr[kMaxRank];
  broadcastStrides(s.rank, s.out, s.out, so);
  broadcastStrides(s.rank, s.out, s.lhs, sl);
  broadcastStrides(s.rank, s.out, s.rhs, sr);
  const int64_t *strides[3] = {so, sl, sr};
  space.build(s.rank, s.out, strides);
}

//===--- Copy, zero, accumulate -------------------------------------------===//

/// copy (bufs: x, y).
inline mgsrt_status_t parseCopy(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                void *const *bufs, int64_t &n) {
  if (parseElementCount(ctx, kernel, desc, mgs::contract::CountDesc::Count, n))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs).require(0, "x", n).require(1, "y", n).ok)
    return ctx->status;
  return MGSRT_OK;
}

/// zero (bufs: y).
inline mgsrt_status_t parseZero(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                void *const *bufs, int64_t &n) {
  if (parseElementCount(ctx, kernel, desc, mgs::contract::CountDesc::Count, n))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs).require(0, "y", n).ok)
    return ctx->status;
  return MGSRT_OK;
}

/// accumulate (bufs: a, b, y).
inline mgsrt_status_t parseAccumulate(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                      void *const *bufs, int64_t &n) {
  if (parseElementCount(ctx, kernel, desc, mgs::contract::CountDesc::Count, n))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs).require(0, "a", n).require(1, "b", n).require(2, "y", n).ok)
    return ctx->status;
  return MGSRT_OK;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_ELEMENTWISEDESC_H
