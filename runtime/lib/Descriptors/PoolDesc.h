//===- PoolDesc.h - The pooling descriptor, parsed and checked ----*- C++ -*-===//
//
// mgsrt_pool_* descriptors (mgsrt.h; fields named in mgsrt/contract.h): parsing, validation and buffer checks
// shared by the CPU and CUDA kernels (same input rejected with the same
// words), and the window arithmetic both use (host and device code), so the
// ONNX rules (padding, ceil-mode overhang, divisors, index order) have one
// definition.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_POOLDESC_H
#define MGSRT_DESCRIPTORS_POOLDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#if defined(__CUDACC__)
#define MGSRT_POOL_HD __host__ __device__
#else
#define MGSRT_POOL_HD
#endif

namespace mgs::rt {

struct PoolParams {
  int64_t kind, s, n, c;
  // Spatial attributes padded to 3 dims (leading unit dims).
  int64_t in[3], kernel[3], out[3], strides[3], padsBegin[3], padsEnd[3], dilations[3];
  bool includePad;
  int64_t storageOrder;
  int64_t inPlane, outPlane;
};

inline mgsrt_status_t parsePool(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                PoolParams &p) {
  using F = mgs::contract::PoolDesc;
  p.kind = desc[F::Kind];
  p.s = desc[F::SpatialRank];
  if (p.kind != MGSRT_POOL_MAX && p.kind != MGSRT_POOL_AVG)
    return invalidArg(ctx, kernel, "kind ", p.kind, " is not 0 (max) or 1 (average)");
  if (p.s < 1 || p.s > 3)
    return invalidArg(ctx, kernel, "spatial rank ", p.s, " is not 1, 2 or 3");
  p.n = desc[F::Batch];
  p.c = desc[F::Channels];
  if (p.n < 0 || p.c < 0)
    return invalidArg(ctx, kernel, "N=", p.n, " C=", p.c, " must not be negative");
  const int64_t s = p.s, lead = 3 - s;
  // Each array padded in front to 3 dims with its unit (1; pads 0).
  auto take = [&](F::Array a, int64_t *field, int64_t unit) {
    for (int64_t i = 0; i < lead; ++i)
      field[i] = unit;
    for (int64_t i = 0; i < s; ++i)
      field[lead + i] = desc[F::at(a, s) + i];
  };
  take(F::In, p.in, 1);
  take(F::Kernel, p.kernel, 1);
  take(F::Out, p.out, 1);
  take(F::Strides, p.strides, 1);
  take(F::PadsBegin, p.padsBegin, 0);
  take(F::PadsEnd, p.padsEnd, 0);
  take(F::Dilations, p.dilations, 1);
  const int64_t countIncludePad = desc[F::at(F::CountIncludePad, s)],
                storageOrder = desc[F::at(F::StorageOrder, s)];
  if ((countIncludePad != 0 && countIncludePad != 1) || (storageOrder != 0 && storageOrder != 1))
    return invalidArg(ctx, kernel, "count_include_pad ", countIncludePad, " and storage_order ",
                      storageOrder, " must be 0 or 1");
  p.includePad = countIncludePad;
  p.storageOrder = storageOrder;
  for (int64_t i = lead; i < 3; ++i) {
    const int64_t d = i - lead;
    if (p.in[i] < 1 || p.kernel[i] < 1 || p.strides[i] < 1 || p.dilations[i] < 1)
      return invalidArg(ctx, kernel, "spatial dim ", d, ": in=", p.in[i], " kernel=",
                        p.kernel[i], " stride=", p.strides[i], " dilation=", p.dilations[i],
                        " must be positive");
    if (p.padsBegin[i] < 0 || p.padsEnd[i] < 0)
      return invalidArg(ctx, kernel, "spatial dim ", d, ": negative pad");
    // out lies between the floor-mode and the ceil-mode extent.
    int64_t span = p.in[i] + p.padsBegin[i] + p.padsEnd[i] - ((p.kernel[i] - 1) * p.dilations[i] + 1);
    int64_t floorOut = span / p.strides[i] + 1;
    int64_t ceilOut = (span + p.strides[i] - 1) / p.strides[i] + 1;
    if (span < 0 || p.out[i] < floorOut || p.out[i] > ceilOut)
      return invalidArg(ctx, kernel, "spatial dim ", d, ": out=", p.out[i],
                        " does not match in=", p.in[i], " kernel=", p.kernel[i], " stride=",
                        p.strides[i], " pads=", p.padsBegin[i], "/", p.padsEnd[i],
                        " dilation=", p.dilations[i]);
  }
  // The sizes the kernels index with must fit in int64.
  int64_t planes = 0, inSize = 0, outSize = 0;
  if (__builtin_mul_overflow(p.in[0], p.in[1], &p.inPlane) ||
      __builtin_mul_overflow(p.inPlane, p.in[2], &p.inPlane) ||
      __builtin_mul_overflow(p.out[0], p.out[1], &p.outPlane) ||
      __builtin_mul_overflow(p.outPlane, p.out[2], &p.outPlane) ||
      __builtin_mul_overflow(p.n, p.c, &planes) ||
      __builtin_mul_overflow(planes, p.inPlane, &inSize) ||
      __builtin_mul_overflow(planes, p.outPlane, &outSize))
    return invalidArg(ctx, kernel, "N=", p.n, " C=", p.c, " and the spatial dims (in ", p.in[0],
                      "x", p.in[1], "x", p.in[2], ", out ", p.out[0], "x", p.out[1], "x",
                      p.out[2], ") have more elements than int64 counts");
  return MGSRT_OK;
}

/// pool_fwd's buffer checks (bufs: x, y, indices (nullable)).
inline bool checkPoolFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs).require(0, "x").require(1, "y").ok;
}

/// pool_bwd's buffer checks (bufs: x (max only), dy, dx).
inline bool checkPoolBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs,
                             const PoolParams &p) {
  BufferCheck check(ctx, kernel, bufs);
  if (p.kind == MGSRT_POOL_MAX)
    check.require(0, "x");
  return check.require(1, "dy").require(2, "dx").ok;
}

/// One output position's window along one (padded-to-3) dim: the first input
/// position `start` (may be negative), the in-bounds taps [lo, hi) (input
/// position start + t * dilation), and the average's divisor factor.
struct PoolWindow {
  int64_t start, lo, hi;
  double divisor;
};

MGSRT_POOL_HD inline PoolWindow poolWindow(const PoolParams &p, int i, int64_t o) {
  const int64_t k = p.kernel[i], d = p.dilations[i], in = p.in[i], padEnd = in + p.padsEnd[i];
  PoolWindow w;
  w.start = o * p.strides[i] - p.padsBegin[i];
  const int64_t s0 = w.start;
  // Taps t with 0 <= s0 + t*d < in.
  int64_t l = s0 < 0 ? (-s0 + d - 1) / d : 0;
  int64_t h = s0 >= in ? 0 : ((in - s0 + d - 1) / d < k ? (in - s0 + d - 1) / d : k);
  if (h < l)
    h = l;
  w.lo = l;
  w.hi = h;
  if (p.includePad) {
    // The whole window up to the padded input's end (s0 >= -padsBegin): a
    // ceil-mode window overhanging it counts only up to there.
    int64_t hp = s0 >= padEnd ? 0 : ((padEnd - s0 + d - 1) / d < k ? (padEnd - s0 + d - 1) / d : k);
    w.divisor = static_cast<double>(hp);
  } else {
    w.divisor = static_cast<double>(h - l);
  }
  return w;
}

/// The flat ONNX index of spatial position (p0, p1, p2) in the plane.
MGSRT_POOL_HD inline int64_t onnxIndex(const PoolParams &p, int64_t p0, int64_t p1, int64_t p2) {
  if (p.storageOrder == 0)
    return (p0 * p.in[1] + p1) * p.in[2] + p2;
  // Column-major over the real dims; the leading unit dims contribute nothing.
  return p0 + p.in[0] * (p1 + p.in[1] * p2);
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_POOLDESC_H
