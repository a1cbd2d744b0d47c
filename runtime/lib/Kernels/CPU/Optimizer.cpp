//===- Optimizer.cpp - SGD update as torch.optim.SGD ----------------------===//

#include "Support/Common.h"
#include "mgsrt/contract.h"

using namespace mgs::rt;

namespace {

mgsrt_status_t sgdUpdate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::sgd_update);
  const int64_t n = desc[mgs::contract::CountDesc::Count];
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative");
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "param", n).require(1, "grad", n).require(2, "velocity", n).ok)
    return ctx->status;
  float *__restrict param = static_cast<float *>(bufs[0]);
  const float *__restrict grad = static_cast<const float *>(bufs[1]);
  float *__restrict vel = static_cast<float *>(bufs[2]);
  const float lr = ctx->lr, momentum = ctx->momentum, wd = ctx->weightDecay;
  // torch.optim.SGD (dampening 0, no nesterov): d = grad + wd * p;
  // buf = momentum * buf + d (buf = d on the first step, the same from a zero
  // buffer); p -= lr * buf. `probe` sums 0 * grad: NaN iff some gradient
  // is NaN or infinite, found as the gradient is read (no extra pass).
  float probe = 0.0f;
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static) reduction(+ : probe)
  for (int64_t i = 0; i < n; ++i) {
    probe += 0.0f * grad[i];
    float d = grad[i] + wd * param[i];
    float v = momentum * vel[i] + d;
    vel[i] = v;
    param[i] = param[i] - lr * v;
  }
  if (probe != 0.0f) { // NaN
    if (ctx->nonfiniteUpdates++ == 0)
      ctx->firstNonfiniteParam = param;
  }
  return MGSRT_OK;
}

} // namespace

mgsrt_status_t mgs::rt::cpu::sgd_update(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::sgd_update), desc, bufs, [&] { return sgdUpdate(ctx, desc, bufs); });
}
