//===- Gelu.cu - GELU and its gradient on a GPU ---------------------------===//
//
// The CPU kernels' arithmetic (Kernels/GeluMath.h, here as _rn intrinsics:
// the CPU's results bit for bit) and checks (Descriptors/GeluDesc.h); one
// thread an element, grid-strided.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/GeluDesc.h"
#include "Kernels/GeluMath.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

template <bool Tanh>
__global__ void geluFwdKernel(const float *__restrict__ x, float *__restrict__ y, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    y[i] = Tanh ? gelu::geluTanh(x[i]) : gelu::geluExact(x[i]);
}

template <bool Tanh>
__global__ void geluBwdKernel(const float *__restrict__ x, const float *__restrict__ dy,
                              float *__restrict__ dx, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    dx[i] = Tanh ? gelu::geluTanhGrad(x[i], dy[i]) : gelu::geluExactGrad(x[i], dy[i]);
}

mgsrt_status_t geluFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  GeluParams p;
  if (parseGelu(ctx, kernelName(Kernel::gelu_fwd), desc, bufs, false, p))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  const auto *x = static_cast<const float *>(bufs[0]);
  auto *y = static_cast<float *>(bufs[1]);
  const unsigned grid = gridFor(p.n, kThreads);
  cudaStream_t st = state(ctx).stream;
  if (p.tanh)
    geluFwdKernel<true><<<grid, kThreads, 0, st>>>(x, y, p.n);
  else
    geluFwdKernel<false><<<grid, kThreads, 0, st>>>(x, y, p.n);
  return MGSRT_OK;
}

mgsrt_status_t geluBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  GeluParams p;
  if (parseGelu(ctx, kernelName(Kernel::gelu_bwd), desc, bufs, true, p))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  const auto *x = static_cast<const float *>(bufs[0]);
  const auto *dy = static_cast<const float *>(bufs[1]);
  auto *dx = static_cast<float *>(bufs[2]);
  const unsigned grid = gridFor(p.n, kThreads);
  cudaStream_t st = state(ctx).stream;
  if (p.tanh)
    geluBwdKernel<true><<<grid, kThreads, 0, st>>>(x, dy, dx, p.n);
  else
    geluBwdKernel<false><<<grid, kThreads, 0, st>>>(x, dy, dx, p.n);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t gelu_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gelu_fwd), desc, bufs,
                       [&] { return geluFwd(ctx, desc, bufs); });
}
mgsrt_status_t gelu_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gelu_bwd), desc, bufs,
                       [&] { return geluBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
