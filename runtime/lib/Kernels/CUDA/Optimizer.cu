//===- Optimizer.cu - SGD update as torch.optim.SGD on a GPU --------------===//
//
// The CPU kernel's math in its order, each operation rounded on its own
// (__fmul_rn / __fadd_rn are never contracted into FMAs), so the results
// equal the CPU's bit for bit (the CPU build has no FMA contraction).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "mgsrt/contract.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

__global__ void sgdKernel(float *__restrict__ param, const float *__restrict__ grad,
                          float *__restrict__ vel, int64_t n, float lr, float momentum,
                          float wd) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float p = param[i];
    // d = grad + wd * p; v = momentum * v + d; p -= lr * v
    const float d = __fadd_rn(grad[i], __fmul_rn(wd, p));
    const float v = __fadd_rn(__fmul_rn(momentum, vel[i]), d);
    vel[i] = v;
    param[i] = __fsub_rn(p, __fmul_rn(lr, v));
  }
}

mgsrt_status_t sgdUpdate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::sgd_update);
  const int64_t n = desc[mgs::contract::CountDesc::Count];
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative");
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "param", n).require(1, "grad", n).require(2, "velocity", n).ok)
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  sgdKernel<<<gridFor(n), 256, 0, state(ctx).stream>>>(
      static_cast<float *>(bufs[0]), static_cast<const float *>(bufs[1]),
      static_cast<float *>(bufs[2]), n, ctx->lr, ctx->momentum, ctx->weightDecay);
  return MGSRT_OK;
}

} // namespace

mgsrt_status_t mgs::rt::cuda::sgd_update(mgsrt_ctx_t *ctx, const int64_t *desc,
                                         void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::sgd_update), desc, bufs, [&] { return sgdUpdate(ctx, desc, bufs); });
}
