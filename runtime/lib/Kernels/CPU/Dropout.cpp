//===- Dropout.cpp - Dropout and random draws from the context's stream ---===//
//
// The draws and the checks are DropoutDesc.h's (shared with the CUDA kernels).
//
//===----------------------------------------------------------------------===//

#include "Descriptors/DropoutDesc.h"

#include <algorithm>
#include <cstring>

using namespace mgs::rt;

namespace {

mgsrt_status_t dropoutFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  DropoutParams p;
  if (parseDropout(ctx, kernelName(Kernel::dropout_fwd), desc, bufs, false, p))
    return ctx->status;
  const int64_t n = p.n;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  uint8_t *mask = static_cast<uint8_t *>(bufs[2]);
  if (!p.training) {
    if (y != x)
      std::memcpy(y, x, sizeof(float) * n);
    if (mask)
      std::memset(mask, 1, p.masks);
    return MGSRT_OK;
  }
  const uint64_t state = ctx->rngState, threshold = p.threshold;
  const float scale = p.scale;
  const int64_t inner = p.inner, masks = p.masks;
  if (inner == 1) {
#pragma omp parallel for simd if (n >= kParallelGrain / 4) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      bool keep = dropoutKeep(state, i, threshold);
      y[i] = keep ? x[i] * scale : 0.0f;
      if (mask)
        mask[i] = keep ? 1 : 0;
    }
  } else {
#pragma omp parallel for if (n >= kParallelGrain / 4) schedule(static)
    for (int64_t m = 0; m < masks; ++m) {
      const bool keep = dropoutKeep(state, m, threshold);
      const float *xm = x + m * inner;
      float *ym = y + m * inner;
      if (keep)
        for (int64_t j = 0; j < inner; ++j)
          ym[j] = xm[j] * scale;
      else
        std::fill(ym, ym + inner, 0.0f);
      if (mask)
        mask[m] = keep ? 1 : 0;
    }
  }
  ctx->rngState = dropoutAdvance(state, masks);
  return MGSRT_OK;
}

mgsrt_status_t dropoutBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  DropoutParams p;
  if (parseDropout(ctx, kernelName(Kernel::dropout_bwd), desc, bufs, true, p))
    return ctx->status;
  const int64_t n = p.n;
  const float *dy = static_cast<const float *>(bufs[0]);
  const uint8_t *mask = static_cast<const uint8_t *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  if (!p.training) {
    if (dx != dy)
      std::memcpy(dx, dy, sizeof(float) * n);
    return MGSRT_OK;
  }
  const float scale = p.scale;
  const int64_t inner = p.inner;
  if (inner == 1) {
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = mask[i] ? dy[i] * scale : 0.0f;
    return MGSRT_OK;
  }
#pragma omp parallel for if (n >= kParallelGrain) schedule(static)
  for (int64_t m = 0; m < p.masks; ++m) {
    const float *dym = dy + m * inner;
    float *dxm = dx + m * inner;
    if (mask[m])
      for (int64_t j = 0; j < inner; ++j)
        dxm[j] = dym[j] * scale;
    else
      std::fill(dxm, dxm + inner, 0.0f);
  }
  return MGSRT_OK;
}

/// random_normal or (`uniform`) random_uniform.
mgsrt_status_t randomFill(mgsrt_ctx_t *ctx, Kernel kernel, const int64_t *desc, void *const *bufs) {
  const bool uniform = kernel == Kernel::random_uniform;
  RandomParams p{};
  if (parseRandom(ctx, kernelName(kernel), desc, bufs, uniform, p))
    return ctx->status;
  const int64_t n = p.n;
  const uint64_t state = ctx->rngState;
  const double a = p.a, b = p.b;
  float *y = static_cast<float *>(bufs[0]);
  if (uniform) {
#pragma omp parallel for if (n >= kParallelGrain / 4) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = uniformDraw(state, i, a, b);
  } else {
#pragma omp parallel for if (n >= kParallelGrain / 16) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = normalDraw(state, i, a, b);
  }
  ctx->rngState = dropoutAdvance(state, n);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t dropout_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::dropout_fwd), desc, bufs, [&] { return dropoutFwd(ctx, desc, bufs); });
}
mgsrt_status_t dropout_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::dropout_bwd), desc, bufs, [&] { return dropoutBwd(ctx, desc, bufs); });
}

mgsrt_status_t random_normal(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::random_normal), desc, bufs,
                   [&] { return randomFill(ctx, Kernel::random_normal, desc, bufs); });
}
mgsrt_status_t random_uniform(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::random_uniform), desc, bufs,
                   [&] { return randomFill(ctx, Kernel::random_uniform, desc, bufs); });
}

} // namespace mgs::rt::cpu
