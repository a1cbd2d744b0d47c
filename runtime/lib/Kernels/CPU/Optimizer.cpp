//===- Optimizer.cpp - SGD and AdamW updates, gradient-norm clipping -------===//
//
// The update of one parameter as torch.optim.SGD or torch.optim.AdamW (which
// one the context says: mgsrt_ctx_set_adamw), its gradient scaled by what the
// step's clip_grad_norm set (torch.nn.utils.clip_grad_norm_).
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/OptimizerDesc.h"
#include "Kernels/CPU/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mgs::rt;

namespace {

/// Each update returns its `probe`, the sum of 0 * grad: NaN iff some
/// gradient is NaN or infinite, found as the gradient is read (no extra pass).
float sgd(float *__restrict param, const float *__restrict grad, float *__restrict vel,
          int64_t n, const mgsrt_ctx_t &c) {
  const float lr = c.lr, momentum = c.momentum, wd = c.weightDecay,
              scale = c.updateScale();
  // torch.optim.SGD (dampening 0, no nesterov): d = grad + wd * p;
  // buf = momentum * buf + d (buf = d on the first step, the same from a zero
  // buffer); p -= lr * buf. A scale of 1 leaves the gradient's bits as they are.
  float probe = 0.0f;
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static) reduction(+ : probe)
  for (int64_t i = 0; i < n; ++i) {
    probe += 0.0f * grad[i];
    float d = grad[i] * scale + wd * param[i];
    float v = momentum * vel[i] + d;
    vel[i] = v;
    param[i] = param[i] - lr * v;
  }
  return probe;
}

/// AdamW on n elements, one vector loop (its square root and divisions are
/// scalar instructions otherwise); returns the probe.
MGSRT_SIMD_CLONES float adamwRange(float *__restrict param, const float *__restrict grad,
                                   float *__restrict m, float *__restrict v, int64_t n,
                                   const AdamWStep &s, float scale) {
  float probe = 0.0f;
#pragma omp simd reduction(+ : probe)
  for (int64_t i = 0; i < n; ++i) {
    probe += 0.0f * grad[i];
    const float g = grad[i] * scale;
    const float mi = s.beta1 * m[i] + s.oneMinusBeta1 * g;
    const float vi = s.beta2 * v[i] + s.oneMinusBeta2 * (g * g);
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / s.bc2Sqrt + s.eps;
    param[i] = param[i] * s.decay - s.stepSize * (mi / denom);
  }
  return probe;
}

float adamw(float *__restrict param, const float *__restrict grad, float *__restrict m,
           float *__restrict v, int64_t n, const mgsrt_ctx_t &c) {
  const AdamWStep s = adamwStep(c);
  const float scale = c.updateScale();
  // torch.optim.AdamW (single tensor): p *= 1 - lr * wd; m = b1 m + (1 - b1) g;
  // v = b2 v + (1 - b2) g^2; p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps),
  // each operation rounded on its own (no FMA: Kernels/CMakeLists.txt).
  constexpr int64_t kBlock = 1 << 14;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  float probe = 0.0f;
#pragma omp parallel for if (n >= kParallelGrain) schedule(static) reduction(+ : probe)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t lo = b * kBlock;
    probe += adamwRange(param + lo, grad + lo, m + lo, v + lo, std::min(kBlock, n - lo), s, scale);
  }
  return probe;
}

mgsrt_status_t optimizerUpdate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const int64_t n = checkUpdateDesc(ctx, desc, bufs);
  if (n < 0)
    return ctx->status;
  float *param = static_cast<float *>(bufs[0]), *state = static_cast<float *>(bufs[2]);
  const float *grad = static_cast<const float *>(bufs[1]);
  const float probe = ctx->adamw ? adamw(param, grad, state, state + n, n, *ctx)
                                 : sgd(param, grad, state, n, *ctx);
  if (probe != 0.0f && ctx->nonfiniteUpdates++ == 0) // NaN: the gradient was not finite
    ctx->firstNonfiniteParam = param;
  return MGSRT_OK;
}

mgsrt_status_t clipGradNorm(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  using D = mgs::contract::ClipGradNormDesc;
  if (checkClipGradNormDesc(ctx, desc, bufs) < 0)
    return ctx->status;
  double total = 0;
  std::vector<double> partial;
  for (int64_t g = 0; g < desc[D::Count]; ++g) {
    const float *x = static_cast<const float *>(bufs[g]);
    const int64_t n = desc[D::sizeAt(g)], chunks = normChunks(n);
    partial.assign(static_cast<size_t>(chunks), 0.0);
#pragma omp parallel for if (n >= kParallelGrain) schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      double s = 0;
      for (int64_t i = c * kNormChunk; i < std::min(n, (c + 1) * kNormChunk); ++i)
        s += static_cast<double>(x[i]) * x[i];
      partial[static_cast<size_t>(c)] = s;
    }
    for (double s : partial)
      total += s;
  }
  setClipScale(ctx, desc, total);
  return MGSRT_OK;
}

} // namespace

mgsrt_status_t mgs::rt::cpu::sgd_update(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::sgd_update), desc, bufs,
                   [&] { return optimizerUpdate(ctx, desc, bufs); });
}

mgsrt_status_t mgs::rt::cpu::clip_grad_norm(mgsrt_ctx_t *ctx, const int64_t *desc,
                                            void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::clip_grad_norm), desc, bufs,
                   [&] { return clipGradNorm(ctx, desc, bufs); });
}
