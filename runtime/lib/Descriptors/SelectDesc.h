//===- SelectDesc.h - topk_positions, parsed and checked --------*- C++ -*-===//
//
// The descriptor and buffer checks of topk_positions (each row's k greatest
// or least entries' positions) and the order it ranks entries in, shared by
// the CPU kernel (CPU/Select.cpp) and the CUDA one (CUDA/Select.cu), so both
// reject the same input with the same words and pick the same positions.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_SELECTDESC_H
#define MGSRT_DESCRIPTORS_SELECTDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

/// Positions are written as floats: exact up to here.
constexpr int64_t kMaxSelectLen = int64_t{1} << 24;

struct TopKPositionsParams {
  int64_t rows, len, k;
  bool largest;
};

/// topk_positions (bufs: x, y).
inline mgsrt_status_t parseTopKPositions(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                         void *const *bufs, TopKPositionsParams &p) {
  using F = mgs::contract::TopKPositionsDesc;
  p.rows = desc[F::Rows];
  p.len = desc[F::Len];
  p.k = desc[F::K];
  if (p.rows < 0 || p.len < 0 || p.len > kMaxSelectLen)
    return invalidArg(ctx, kernel, "rows=", p.rows, " len=", p.len,
                      ": extents must be non-negative and len at most 2^24 (positions are floats)");
  if (p.k < 0 || p.k > p.len)
    return invalidArg(ctx, kernel, "k=", p.k, " is outside [0, len=", p.len, "]");
  if (desc[F::Largest] != 0 && desc[F::Largest] != 1)
    return invalidArg(ctx, kernel, "largest ", desc[F::Largest], " is neither 0 nor 1");
  p.largest = desc[F::Largest] == 1;
  return BufferCheck(ctx, kernel, bufs)
                 .require(0, "x", p.rows * p.len)
                 .require(1, "y", p.rows * p.k)
                 .ok
             ? MGSRT_OK
             : ctx->status;
}

/// Whether entry `a` at position `pa` ranks before entry `b` at `pb`: the
/// greater (largest) or lesser value first, a NaN greater than every number,
/// equal values in ascending position. A strict total order on a row's
/// entries, so every device picks the same positions.
MGSRT_HOST_DEVICE inline bool ranksBefore(float a, int64_t pa, float b, int64_t pb, bool largest) {
  const bool aNaN = a != a, bNaN = b != b;
  if (aNaN || bNaN) {
    if (aNaN && bNaN)
      return pa < pb;
    return largest ? aNaN : bNaN;
  }
  if (a != b)
    return largest ? a > b : a < b;
  return pa < pb;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_SELECTDESC_H
