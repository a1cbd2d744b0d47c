//===- ShapeDesc.h - Shape-kernel descriptors, parsed and checked -*- C++ -*-===//
//
// The descriptor and buffer checks of transpose, concat / split and pad,
// shared by the CPU kernels (Shape.cpp) and the CUDA ones (CUDA/Shape.cu), so
// both reject the same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_SHAPEDESC_H
#define MGSRT_DESCRIPTORS_SHAPEDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

//===--- Transpose --------------------------------------------------------===//

/// A transpose with unit dims dropped and dims that stay adjacent merged:
/// output dim i has extent ext[i] and input stride is[i] (output strides are
/// row-major over ext).
struct TransposeParams {
  int64_t total;
  int64_t rank;
  int64_t ext[kMaxRank], is[kMaxRank];
};

/// The transpose of a row-major tensor of rank r with extents `in` whose
/// output dim i is input dim perm[i] (a permutation: callers check it).
inline TransposeParams transposeParams(const int64_t *in, const int64_t *perm, int64_t r) {
  TransposeParams p;
  p.total = product(in, r);
  int64_t inStride[kMaxRank];
  for (int64_t i = r - 1, s = 1; i >= 0; --i) {
    inStride[i] = s;
    s *= in[i];
  }
  p.rank = 0;
  for (int64_t i = 0; i < r; ++i) {
    const int64_t e = in[perm[i]], st = inStride[perm[i]];
    if (e == 1)
      continue;
    if (p.rank > 0 && p.is[p.rank - 1] == st * e) {
      p.ext[p.rank - 1] *= e;
      p.is[p.rank - 1] = st;
      continue;
    }
    p.ext[p.rank] = e;
    p.is[p.rank] = st;
    ++p.rank;
  }
  return p;
}

/// transpose (bufs: x, y).
inline mgsrt_status_t parseTranspose(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                     void *const *bufs, TransposeParams &p) {
  using F = mgs::contract::TransposeDesc;
  const int64_t r = desc[F::Rank];
  if (r < 0 || r > kMaxRank)
    return invalidArg(ctx, kernel, "rank ", r, " is out of range [0, ", kMaxRank, "]");
  const int64_t *in = desc + F::at(F::In, r), *perm = desc + F::at(F::Perm, r);
  bool seen[kMaxRank] = {};
  for (int64_t i = 0; i < r; ++i) {
    if (in[i] < 0)
      return invalidArg(ctx, kernel, "extent ", in[i], " of dim ", i, " is negative");
    if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
      return invalidArg(ctx, kernel, "perm is not a permutation of [0, ", r, ")");
    seen[perm[i]] = true;
  }
  if (!BufferCheck(ctx, kernel, bufs).require(0, "x").require(1, "y").ok)
    return ctx->status;
  p = transposeParams(in, perm, r);
  return MGSRT_OK;
}

//===--- Concat / split ---------------------------------------------------===//

constexpr int64_t kMaxConcatParts = 1 << 16;

struct ConcatParams {
  int64_t outer, inner, k;
  const int64_t *extent; // k extents
  int64_t sum;           // sum of the extents
};

/// concat (bufs: in_0 .. in_{K-1}, out) or split (bufs: out, in_0 ..
/// in_{K-1}, each part nullable).
inline mgsrt_status_t parseConcat(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                  void *const *bufs, bool split, ConcatParams &p) {
  using F = mgs::contract::ConcatDesc;
  p.outer = desc[F::Outer];
  p.inner = desc[F::Inner];
  p.k = desc[F::Parts];
  p.extent = desc + F::extentAt(0);
  if (p.outer < 0 || p.inner < 0)
    return invalidArg(ctx, kernel, "outer=", p.outer, " inner=", p.inner,
                      " must not be negative");
  if (p.k < 0 || p.k > kMaxConcatParts)
    return invalidArg(ctx, kernel, "part count ", p.k, " is out of range [0, ", kMaxConcatParts,
                      "]");
  for (int64_t i = 0; i < p.k; ++i)
    if (p.extent[i] < 0)
      return invalidArg(ctx, kernel, "extent ", p.extent[i], " of part ", i, " is negative");
  p.sum = 0;
  for (int64_t i = 0; i < p.k; ++i)
    p.sum += p.extent[i];
  BufferCheck check(ctx, kernel, bufs);
  if (split) {
    check.require(0, "out", p.outer * p.sum * p.inner);
  } else {
    for (int64_t i = 0; i < p.k; ++i)
      check.require(static_cast<int>(i), "in", p.outer * p.extent[i] * p.inner);
    check.require(static_cast<int>(p.k), "out", p.outer * p.sum * p.inner);
  }
  return check.ok ? MGSRT_OK : ctx->status;
}

//===--- Pad --------------------------------------------------------------===//

struct PadParams {
  int64_t r;
  const int64_t *in, *pads; // pads: begin[r], end[r]
  int64_t out[kMaxRank];
  float value;
};

/// pad_fwd (bufs: x, y) or pad_bwd (bufs: dy, dx).
inline mgsrt_status_t parsePad(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                               void *const *bufs, bool bwd, PadParams &p) {
  using F = mgs::contract::PadDesc;
  p.r = desc[F::Rank];
  if (p.r < 0 || p.r > kMaxRank)
    return invalidArg(ctx, kernel, "rank ", p.r, " is out of range [0, ", kMaxRank, "]");
  p.in = desc + F::inAt(p.r);
  p.pads = desc + F::padsAt(p.r);
  p.value = static_cast<float>(descF64(desc, static_cast<int>(F::valueBitsAt(p.r))));
  for (int64_t i = 0; i < p.r; ++i) {
    if (p.in[i] < 0)
      return invalidArg(ctx, kernel, "extent ", p.in[i], " of dim ", i, " is negative");
    p.out[i] = p.in[i] + p.pads[i] + p.pads[p.r + i];
    if (p.out[i] < 0)
      return invalidArg(ctx, kernel, "dim ", i, ": pads ", p.pads[i], "/", p.pads[p.r + i],
                        " crop more than the extent ", p.in[i]);
  }
  BufferCheck check(ctx, kernel, bufs);
  if (!bwd)
    check.require(0, "x").require(1, "y");
  else
    check.require(0, "dy").require(1, "dx");
  return check.ok ? MGSRT_OK : ctx->status;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_SHAPEDESC_H
