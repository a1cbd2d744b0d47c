//===- Pool.cpp - Max / average pooling (ONNX semantics) ------------------===//
//
// 1-D and 2-D pools run as 3-D ones with leading unit dims. Each (n, c)
// plane is independent: the planes are split across threads, and the
// per-dim window ranges are computed once per call.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace mgs::rt;

namespace {

struct PoolParams {
  int64_t kind, s, n, c;
  // Spatial attributes padded to 3 dims (leading unit dims).
  int64_t in[3], kernel[3], out[3], strides[3], padsBegin[3], padsEnd[3], dilations[3];
  bool includePad;
  int64_t storageOrder;
  int64_t inPlane, outPlane;
};

mgsrt_status_t parsePool(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                         PoolParams &p) {
  p.kind = desc[0];
  p.s = desc[1];
  if (p.kind != MGSRT_POOL_MAX && p.kind != MGSRT_POOL_AVG)
    return invalidArg(ctx, kernel, "kind ", p.kind, " is not 0 (max) or 1 (average)");
  if (p.s < 1 || p.s > 3)
    return invalidArg(ctx, kernel, "spatial rank ", p.s, " is not 1, 2 or 3");
  p.n = desc[2];
  p.c = desc[3];
  if (p.n < 0 || p.c < 0)
    return invalidArg(ctx, kernel, "N=", p.n, " C=", p.c, " must not be negative");
  const int64_t s = p.s, lead = 3 - s;
  const int64_t *v = desc + 4;
  int64_t *fields[7] = {p.in, p.kernel, p.out, p.strides, p.padsBegin, p.padsEnd, p.dilations};
  const int64_t unit[7] = {1, 1, 1, 1, 0, 0, 1};
  for (int f = 0; f < 7; ++f) {
    for (int64_t i = 0; i < lead; ++i)
      fields[f][i] = unit[f];
    for (int64_t i = 0; i < s; ++i)
      fields[f][lead + i] = v[f * s + i];
  }
  const int64_t countIncludePad = v[7 * s], storageOrder = v[7 * s + 1];
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
  p.inPlane = p.in[0] * p.in[1] * p.in[2];
  p.outPlane = p.out[0] * p.out[1] * p.out[2];
  return MGSRT_OK;
}

/// Per dim and output position: the first input position of the window, the
/// in-bounds window taps [lo, hi), and the divisor factor.
struct Windows {
  std::vector<int64_t> start[3], lo[3], hi[3];
  std::vector<double> divisor[3];

  explicit Windows(const PoolParams &p) {
    for (int i = 0; i < 3; ++i) {
      const int64_t n = p.out[i], k = p.kernel[i], st = p.strides[i], d = p.dilations[i],
                    in = p.in[i], padEnd = in + p.padsEnd[i];
      start[i].resize(n);
      lo[i].resize(n);
      hi[i].resize(n);
      divisor[i].resize(n);
      for (int64_t o = 0; o < n; ++o) {
        const int64_t s0 = o * st - p.padsBegin[i];
        // Taps t with 0 <= s0 + t*d < in.
        int64_t l = s0 < 0 ? (-s0 + d - 1) / d : 0;
        int64_t h = s0 >= in ? 0 : std::min(k, (in - s0 + d - 1) / d);
        if (h < l)
          h = l;
        start[i][o] = s0;
        lo[i][o] = l;
        hi[i][o] = h;
        if (p.includePad) {
          // The whole window up to the padded input's end (s0 >= -padsBegin).
          int64_t hp = s0 >= padEnd ? 0 : std::min(k, (padEnd - s0 + d - 1) / d);
          divisor[i][o] = static_cast<double>(hp);
        } else {
          divisor[i][o] = static_cast<double>(h - l);
        }
      }
    }
  }
};

/// The flat ONNX index of spatial position (p0, p1, p2) in the plane.
inline int64_t onnxIndex(const PoolParams &p, int64_t p0, int64_t p1, int64_t p2) {
  if (p.storageOrder == 0)
    return (p0 * p.in[1] + p1) * p.in[2] + p2;
  // Column-major over the real dims; the leading unit dims contribute nothing.
  return p0 + p.in[0] * (p1 + p.in[1] * p2);
}

/// The row-major offset in the plane of the window's max (the first in
/// row-major window order on ties; padding never wins), or -1 for a window
/// with no in-bounds tap.
inline int64_t windowArgMax(const PoolParams &p, const Windows &w, const float *x, int64_t o0,
                            int64_t o1, int64_t o2) {
  const int64_t d0 = p.dilations[0], d1 = p.dilations[1], d2 = p.dilations[2];
  const int64_t s0 = w.start[0][o0], s1 = w.start[1][o1], s2 = w.start[2][o2];
  const int64_t l2 = w.lo[2][o2], h2 = w.hi[2][o2];
  int64_t best = -1;
  float bestV = 0.0f;
  for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
    const int64_t q0 = s0 + k0 * d0;
    for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1) {
      const int64_t row = (q0 * p.in[1] + s1 + k1 * d1) * p.in[2] + s2;
      for (int64_t k2 = l2; k2 < h2; ++k2) {
        const int64_t off = row + k2 * d2;
        const float v = x[off];
        if (best < 0 || v > bestV) {
          best = off;
          bestV = v;
        }
      }
    }
  }
  return best;
}

mgsrt_status_t poolFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "pool_fwd";
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs).require(0, "x").require(1, "y").ok)
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  int64_t *indices = p.kind == MGSRT_POOL_MAX ? static_cast<int64_t *>(bufs[2]) : nullptr;
  const Windows w(p);
  const int64_t planes = p.n * p.c;
  const int64_t work = planes * p.outPlane * p.kernel[0] * p.kernel[1] * p.kernel[2];
  const bool isMax = p.kind == MGSRT_POOL_MAX;
#pragma omp parallel for if (work >= kParallelGrain && planes > 1) schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float *xp = x + plane * p.inPlane;
    float *yp = y + plane * p.outPlane;
    int64_t *ip = indices ? indices + plane * p.outPlane : nullptr;
    int64_t oi = 0;
    for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++oi) {
          if (isMax) {
            int64_t arg = windowArgMax(p, w, xp, o0, o1, o2);
            // A window with no in-bounds tap (pads wider than the window)
            // yields 0 and index -1, as ONNX's 2-D reference does.
            yp[oi] = arg >= 0 ? xp[arg] : 0.0f;
            if (ip) {
              if (arg < 0) {
                ip[oi] = -1;
              } else {
                int64_t q2 = arg % p.in[2], q1 = (arg / p.in[2]) % p.in[1],
                        q0 = arg / (p.in[2] * p.in[1]);
                ip[oi] = plane * p.inPlane + onnxIndex(p, q0, q1, q2);
              }
            }
            continue;
          }
          const double div = w.divisor[0][o0] * w.divisor[1][o1] * w.divisor[2][o2];
          double sum = 0.0;
          const int64_t s0 = w.start[0][o0], s1 = w.start[1][o1], s2 = w.start[2][o2];
          for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
            const int64_t q0 = s0 + k0 * p.dilations[0];
            for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1) {
              const float *row = xp + (q0 * p.in[1] + s1 + k1 * p.dilations[1]) * p.in[2] + s2;
              for (int64_t k2 = w.lo[2][o2]; k2 < w.hi[2][o2]; ++k2)
                sum += row[k2 * p.dilations[2]];
            }
          }
          yp[oi] = div > 0.0 ? static_cast<float>(sum / div) : 0.0f;
        }
  }
  return MGSRT_OK;
}

mgsrt_status_t poolBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "pool_bwd";
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  BufferCheck check(ctx, kernel, bufs);
  if (p.kind == MGSRT_POOL_MAX)
    check.require(0, "x");
  if (!check.require(1, "dy").require(2, "dx").ok)
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  const Windows w(p);
  const int64_t planes = p.n * p.c;
  const int64_t work = planes * p.outPlane * p.kernel[0] * p.kernel[1] * p.kernel[2];
  const bool isMax = p.kind == MGSRT_POOL_MAX;
#pragma omp parallel for if (work >= kParallelGrain && planes > 1) schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float *xp = isMax ? x + plane * p.inPlane : nullptr;
    const float *dyp = dy + plane * p.outPlane;
    float *dxp = dx + plane * p.inPlane;
    std::memset(dxp, 0, sizeof(float) * p.inPlane);
    int64_t oi = 0;
    for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++oi) {
          if (isMax) {
            int64_t arg = windowArgMax(p, w, xp, o0, o1, o2);
            if (arg >= 0)
              dxp[arg] += dyp[oi];
            continue;
          }
          const double div = w.divisor[0][o0] * w.divisor[1][o1] * w.divisor[2][o2];
          if (div <= 0.0)
            continue;
          const float g = static_cast<float>(dyp[oi] / div);
          const int64_t s0 = w.start[0][o0], s1 = w.start[1][o1], s2 = w.start[2][o2];
          for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
            const int64_t q0 = s0 + k0 * p.dilations[0];
            for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1) {
              float *row = dxp + (q0 * p.in[1] + s1 + k1 * p.dilations[1]) * p.in[2] + s2;
              for (int64_t k2 = w.lo[2][o2]; k2 < w.hi[2][o2]; ++k2)
                row[k2 * p.dilations[2]] += g;
            }
          }
        }
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t pool_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "pool_fwd", desc, bufs, [&] { return poolFwd(ctx, desc, bufs); });
}
mgsrt_status_t pool_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "pool_bwd", desc, bufs, [&] { return poolBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
