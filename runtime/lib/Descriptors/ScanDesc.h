//===- ScanDesc.h - cumsum, to_index, from_index: parsed and checked -*- C++ -*-===//
//
// The descriptor and buffer checks of cumsum (a running sum along one axis),
// to_index (floats to int64 indices) and from_index (int64 values fed as
// data to floats, within a range), shared by the CPU kernels
// (CPU/Scan.cpp) and the CUDA ones (CUDA/Scan.cu), so both reject the same
// input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_SCANDESC_H
#define MGSRT_DESCRIPTORS_SCANDESC_H

#include "Descriptors/ElementwiseDesc.h" // parseElementCount
#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <cmath>

namespace mgs::rt {

struct CumSumParams {
  int64_t outer, len, inner;
  bool exclusive, reverse;
  int64_t total() const { return outer * len * inner; }
};

/// cumsum (bufs: x, y).
inline mgsrt_status_t parseCumSum(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                  void *const *bufs, CumSumParams &p) {
  using F = mgs::contract::CumSumDesc;
  p.outer = desc[F::Outer];
  p.len = desc[F::Len];
  p.inner = desc[F::Inner];
  if (p.outer < 0 || p.len < 0 || p.inner < 0)
    return invalidArg(ctx, kernel, "outer=", p.outer, " len=", p.len, " inner=", p.inner,
                      ": extents must be non-negative");
  for (int field : {int(F::Exclusive), int(F::Reverse)})
    if (desc[field] != 0 && desc[field] != 1)
      return invalidArg(ctx, kernel, field == F::Exclusive ? "exclusive " : "reverse ",
                        desc[field], " is neither 0 nor 1");
  p.exclusive = desc[F::Exclusive] == 1;
  p.reverse = desc[F::Reverse] == 1;
  const int64_t n = p.total();
  return BufferCheck(ctx, kernel, bufs).require(0, "x", n).require(1, "y", n).ok ? MGSRT_OK
                                                                                 : ctx->status;
}

/// The cumulative sum of one line (outer `o`, inner `i`), added in order in
/// float: the same sums on every device.
MGSRT_HOST_DEVICE inline void cumSumLine(const float *x, float *y, const CumSumParams &p,
                                         int64_t o, int64_t i) {
  const float *xl = x + o * p.len * p.inner + i;
  float *yl = y + o * p.len * p.inner + i;
  float sum = 0.0f;
  for (int64_t s = 0; s < p.len; ++s) {
    const int64_t at = (p.reverse ? p.len - 1 - s : s) * p.inner;
    const float v = xl[at];
    if (p.exclusive)
      yl[at] = sum;
    sum += v;
    if (!p.exclusive)
      yl[at] = sum;
  }
}

/// to_index (bufs: x, y).
inline mgsrt_status_t parseToIndex(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                   void *const *bufs, int64_t &n) {
  if (parseElementCount(ctx, kernel, desc, mgs::contract::CountDesc::Count, n))
    return ctx->status;
  return BufferCheck(ctx, kernel, bufs).require(0, "x", n).require(1, "y", n).ok ? MGSRT_OK
                                                                                 : ctx->status;
}

/// Whether `x` rounded toward zero is an int64 (not NaN, no infinity, in
/// [-2^63, 2^63)).
MGSRT_HOST_DEVICE inline bool fitsIndex(float x) {
  return x >= -9223372036854775808.0f && x < 9223372036854775808.0f;
}

/// Value `x` at position `i` is no index: the error.
inline mgsrt_status_t badIndexValue(mgsrt_ctx_t *ctx, const char *kernel, int64_t i, float x) {
  return invalidArg(ctx, kernel, "value ", i, " is ", x,
                    ", which is not an int64 index (NaN, infinite or out of range)");
}

struct FromIndexParams {
  int64_t n, lo, hi;
};

/// from_index (bufs: x, y).
inline mgsrt_status_t parseFromIndex(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                     void *const *bufs, FromIndexParams &p) {
  using F = mgs::contract::FromIndexDesc;
  if (parseElementCount(ctx, kernel, desc, F::Count, p.n))
    return ctx->status;
  p.lo = desc[F::Lo];
  p.hi = desc[F::Hi];
  const int64_t limit = int64_t{1} << 24;
  if (p.lo > p.hi || p.lo < -limit || p.hi > limit)
    return invalidArg(ctx, kernel, "range [", p.lo, ", ", p.hi,
                      "] is empty or not within [-2^24, 2^24]");
  return BufferCheck(ctx, kernel, bufs).require(0, "x", p.n).require(1, "y", p.n).ok ? MGSRT_OK
                                                                                     : ctx->status;
}

/// Value `v` at position `i` lies outside [lo, hi]: the error.
inline mgsrt_status_t badFromIndexValue(mgsrt_ctx_t *ctx, const char *kernel, int64_t i, int64_t v,
                                        const FromIndexParams &p) {
  return invalidArg(ctx, kernel, "value ", i, " is ", v, ", outside [", p.lo, ", ", p.hi,
                    "], the range the compiled model reads these integers in");
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_SCANDESC_H
