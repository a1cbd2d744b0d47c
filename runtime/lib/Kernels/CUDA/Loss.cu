//===- Loss.cu - Elementwise losses against float targets, on a GPU -------===//
//
// The CPU kernel's semantics (CPU/Loss.cpp) and checks, and the same loss of
// an element (Descriptors/LossDesc.h). Each block sums its elements' losses
// in double into a partial; one block then sums the partials in a fixed
// order, so the loss does not depend on the scheduling.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/LossDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 1024;

/// The sum of `v` over the block (every thread's value), in thread 0.
__device__ double blockSum(double v) {
  __shared__ double s[kThreads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  return s[0];
}

__global__ void elementwiseLossKernel(const float *__restrict__ x, const float *__restrict__ t,
                                      ElementwiseLossParams p, double invN,
                                      double *__restrict__ partial, float *__restrict__ dx) {
  double sum = 0.0;
  for (int64_t i = firstIndex(); i < p.count; i += gridStride()) {
    double grad;
    sum += elementLoss(p, i, x[i], t[i], grad);
    if (dx)
      dx[i] = static_cast<float>(grad * invN);
  }
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = sum;
}

__global__ void meanOfPartialsKernel(const double *__restrict__ partial, unsigned blocks,
                                     double invN, float *__restrict__ loss) {
  double sum = 0.0;
  for (unsigned b = threadIdx.x; b < blocks; b += kThreads)
    sum += partial[b];
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    *loss = static_cast<float>(sum * invN);
}

mgsrt_status_t elementwiseLoss(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::elementwise_loss);
  ElementwiseLossParams p;
  if (parseElementwiseLoss(ctx, kernel, desc, bufs, p))
    return ctx->status;
  const unsigned blocks = std::min(gridFor(p.count, kThreads), kMaxBlocks);
  // Scratch: the blocks' partial sums, then a copy of pos_weight
  // (stageOnDevice).
  void *ws = nullptr;
  if (workspace(ctx, kernel,
                sizeof(double) * blocks + (p.posWeight ? sizeof(float) * p.last : 0), &ws))
    return ctx->status;
  cudaStream_t st = state(ctx).stream;
  const double invN = p.reductionScale();
  auto *partial = static_cast<double *>(ws);
  if (p.posWeight &&
      stageOnDevice(ctx, kernel, p.posWeight, reinterpret_cast<float *>(partial + blocks), p.last))
    return ctx->status;
  elementwiseLossKernel<<<blocks, kThreads, 0, st>>>(
      static_cast<const float *>(bufs[0]), static_cast<const float *>(bufs[1]), p,
      invN * static_cast<double>(ctx->lossScale), partial, static_cast<float *>(bufs[3]));
  meanOfPartialsKernel<<<1, kThreads, 0, st>>>(partial, blocks, invN,
                                               static_cast<float *>(bufs[2]));
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t elementwise_loss(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::elementwise_loss), desc, bufs,
                       [&] { return elementwiseLoss(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
