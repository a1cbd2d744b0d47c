//===- Norm.cpp - Batch normalization -------------------------------------===//
//
// x is N x C x D. Statistics are gathered per (n, c) plane in parallel (in
// double), reduced per channel, then applied per plane in parallel, so the
// work spreads over N*C planes rather than C channels.
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/NormDesc.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mgs::rt;

namespace {

/// The normalized, scaled and shifted value, exactly as the forward pass
/// computes it (the fused ReLU's backward recomputes it bit for bit).
inline float affine(float x, float m, float a, float b) { return (x - m) * a + b; }

/// y = (x - m[c]) * a[c] + b[c] over every plane, then max(0, y) with p.relu.
void applyAffine(const BnParams &p, const float *x, const float *m, const float *a,
                 const float *b, float *y) {
  const int64_t planes = p.n * p.c, d = p.d;
#pragma omp parallel for if (planes * d >= kParallelGrain && planes > 1) schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl) {
    const int64_t c = pl % p.c;
    const float mc = m[c], ac = a[c], bc = b[c];
    const float *xp = x + pl * d;
    float *yp = y + pl * d;
    if (p.relu) {
#pragma omp simd
      for (int64_t i = 0; i < d; ++i)
        yp[i] = std::max(affine(xp[i], mc, ac, bc), 0.0f);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < d; ++i)
        yp[i] = affine(xp[i], mc, ac, bc);
    }
  }
}

mgsrt_status_t bnFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::batch_norm_fwd);
  BnParams p;
  if (parseBn(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkBnFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *scale = static_cast<const float *>(bufs[1]);
  const float *bias = static_cast<const float *>(bufs[2]);
  const float *meanIn = static_cast<const float *>(bufs[3]);
  const float *varIn = static_cast<const float *>(bufs[4]);
  float *y = static_cast<float *>(bufs[5]);
  float *runMean = static_cast<float *>(bufs[6]);
  float *runVar = static_cast<float *>(bufs[7]);
  float *savedMean = static_cast<float *>(bufs[8]);
  float *savedInvstd = static_cast<float *>(bufs[9]);
  const int64_t C = p.c, planes = p.n * p.c, d = p.d;
  std::vector<float> m(C), a(C), b(C);

  if (!p.training) {
    for (int64_t c = 0; c < C; ++c) {
      double invstd = 1.0 / std::sqrt(static_cast<double>(varIn[c]) + p.eps);
      m[c] = meanIn[c];
      a[c] = static_cast<float>(scale[c] * invstd);
      b[c] = bias[c];
    }
    applyAffine(p, x, m.data(), a.data(), b.data(), y);
    for (int64_t c = 0; c < C; ++c) {
      const float mv = meanIn[c], vv = varIn[c]; // alias-safe copy
      runMean[c] = mv;
      runVar[c] = vv;
    }
    return MGSRT_OK;
  }

  // Per-plane sum and sum of squares.
  std::vector<double> part(2 * planes);
#pragma omp parallel for if (planes * d >= kParallelGrain && planes > 1) schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float *xp = x + pl * d;
    double s = 0.0, sq = 0.0;
#pragma omp simd reduction(+ : s, sq)
    for (int64_t i = 0; i < d; ++i) {
      double v = xp[i];
      s += v;
      sq += v * v;
    }
    part[2 * pl] = s;
    part[2 * pl + 1] = sq;
  }
  const double count = static_cast<double>(p.n * d);
  for (int64_t c = 0; c < C; ++c) {
    double s = 0.0, sq = 0.0;
    for (int64_t n = 0; n < p.n; ++n) {
      s += part[2 * (n * C + c)];
      sq += part[2 * (n * C + c) + 1];
    }
    double mean = count > 0 ? s / count : 0.0;
    double var = count > 0 ? std::max(0.0, sq / count - mean * mean) : 0.0;
    double invstd = 1.0 / std::sqrt(var + p.eps);
    m[c] = static_cast<float>(mean);
    // From the float inverse std, as saved: the backward of a fused ReLU
    // recomputes a[c] from saved_invstd and must get the same bits.
    a[c] = static_cast<float>(scale[c] * static_cast<double>(static_cast<float>(invstd)));
    b[c] = bias[c];
    double runningVar = (p.unbiasedRunningVar && count > 1) ? var * count / (count - 1) : var;
    float newMean = static_cast<float>(meanIn[c] * p.momentum + mean * (1.0 - p.momentum));
    float newVar = static_cast<float>(varIn[c] * p.momentum + runningVar * (1.0 - p.momentum));
    runMean[c] = newMean;
    runVar[c] = newVar;
    if (savedMean)
      savedMean[c] = static_cast<float>(mean);
    if (savedInvstd)
      savedInvstd[c] = static_cast<float>(invstd);
  }
  applyAffine(p, x, m.data(), a.data(), b.data(), y);
  return MGSRT_OK;
}

mgsrt_status_t bnBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::batch_norm_bwd);
  BnParams p;
  if (parseBn(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkBnBwdBufs(ctx, kernel, bufs, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *scale = static_cast<const float *>(bufs[1]);
  const float *mean = static_cast<const float *>(bufs[2]);
  const float *invstd = static_cast<const float *>(bufs[3]);
  const float *dy = static_cast<const float *>(bufs[4]);
  float *dx = static_cast<float *>(bufs[5]);
  float *dscale = static_cast<float *>(bufs[6]);
  float *dbias = static_cast<float *>(bufs[7]);
  const int64_t C = p.c, planes = p.n * p.c, d = p.d;
  // A fused ReLU: dy reaches the normalization only where the forward
  // output, recomputed from x as the forward computed it, was positive.
  const float *shift = nullptr;
  std::vector<float> a;
  if (p.relu) {
    shift = static_cast<const float *>(bufs[8]);
    a.resize(C);
    for (int64_t c = 0; c < C; ++c)
      a[c] = static_cast<float>(scale[c] * static_cast<double>(invstd[c]));
  }

  // Per-plane sum(dy) and sum(dy * (x - mean)).
  std::vector<double> part(2 * planes);
#pragma omp parallel for if (planes * d >= kParallelGrain && planes > 1) schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl) {
    const int64_t c = pl % C;
    const float *xp = x + pl * d, *gp = dy + pl * d;
    const double m = mean[c];
    double s = 0.0, sx = 0.0;
    if (shift) {
      const float mc = mean[c], ac = a[c], bc = shift[c];
#pragma omp simd reduction(+ : s, sx)
      for (int64_t i = 0; i < d; ++i) {
        const double g = keepOrZero(affine(xp[i], mc, ac, bc) > 0.0f, gp[i]);
        s += g;
        sx += g * (xp[i] - m);
      }
    } else {
#pragma omp simd reduction(+ : s, sx)
      for (int64_t i = 0; i < d; ++i) {
        double g = gp[i];
        s += g;
        sx += g * (xp[i] - m);
      }
    }
    part[2 * pl] = s;
    part[2 * pl + 1] = sx;
  }
  // dx = scale * invstd * (dy - dbias / count - xhat * dscale / count)
  //    = dy * k1[c] + (x - mean) * k2[c] + k3[c].
  std::vector<float> k1(C), k2(C), k3(C);
  const double count = static_cast<double>(p.n * d);
  for (int64_t c = 0; c < C; ++c) {
    double s = 0.0, sx = 0.0;
    for (int64_t n = 0; n < p.n; ++n) {
      s += part[2 * (n * C + c)];
      sx += part[2 * (n * C + c) + 1];
    }
    const double is = invstd[c];
    const double ds = sx * is; // sum(dy * xhat)
    dbias[c] = static_cast<float>(s);
    dscale[c] = static_cast<float>(ds);
    const double g = scale[c] * is;
    const double inv = count > 0 ? 1.0 / count : 0.0;
    // xhat = (x - mean) * is
    const double kx = -g * ds * inv * is;
    k1[c] = static_cast<float>(g);
    k2[c] = static_cast<float>(kx);
    k3[c] = static_cast<float>(-g * s * inv);
  }
#pragma omp parallel for if (planes * d >= kParallelGrain && planes > 1) schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl) {
    const int64_t c = pl % C;
    const float k1c = k1[c], b = k2[c], e = k3[c], m = mean[c];
    const float *xp = x + pl * d, *gp = dy + pl * d;
    float *op = dx + pl * d;
    if (shift) {
      const float ac = a[c], bc = shift[c];
#pragma omp simd
      for (int64_t i = 0; i < d; ++i) {
        const float g = keepOrZero(affine(xp[i], m, ac, bc) > 0.0f, gp[i]);
        op[i] = g * k1c + (xp[i] - m) * b + e;
      }
    } else {
#pragma omp simd
      for (int64_t i = 0; i < d; ++i)
        op[i] = gp[i] * k1c + (xp[i] - m) * b + e;
    }
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t batch_norm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::batch_norm_fwd), desc, bufs, [&] { return bnFwd(ctx, desc, bufs); });
}
mgsrt_status_t batch_norm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::batch_norm_bwd), desc, bufs, [&] { return bnBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
