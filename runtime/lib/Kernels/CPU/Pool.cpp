//===- Pool.cpp - Max / average pooling (ONNX semantics) ------------------===//
//
// 1-D and 2-D pools run as 3-D ones with leading unit dims. Each (n, c)
// plane is independent: the planes are split across threads, and the
// per-dim window ranges are computed once per call.
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/PoolDesc.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace mgs::rt;

namespace {

/// Per dim and output position: the first input position of the window, the
/// in-bounds window taps [lo, hi), and the divisor factor.
struct Windows {
  std::vector<int64_t> start[3], lo[3], hi[3];
  std::vector<double> divisor[3];

  explicit Windows(const PoolParams &p) {
    for (int i = 0; i < 3; ++i) {
      const int64_t n = p.out[i];
      start[i].resize(n);
      lo[i].resize(n);
      hi[i].resize(n);
      divisor[i].resize(n);
      for (int64_t o = 0; o < n; ++o) {
        const PoolWindow w = poolWindow(p, i, o);
        start[i][o] = w.start;
        lo[i][o] = w.lo;
        hi[i][o] = w.hi;
        divisor[i][o] = w.divisor;
      }
    }
  }
};

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
  const char *kernel = kernelName(Kernel::pool_fwd);
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkPoolFwdBufs(ctx, kernel, bufs))
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
  const char *kernel = kernelName(Kernel::pool_bwd);
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkPoolBwdBufs(ctx, kernel, bufs, p))
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
  return runKernel(ctx, kernelName(Kernel::pool_fwd), desc, bufs, [&] { return poolFwd(ctx, desc, bufs); });
}
mgsrt_status_t pool_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::pool_bwd), desc, bufs, [&] { return poolBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
