//===- Reduce.cu - Sum or mean over axes, and its gradient, on a GPU ------===//
//
// The CPU kernels' semantics (CPU/Reduce.cpp) and checks
// (Descriptors/ReduceDesc.h). One thread per output element sums the input
// elements it covers in double, in the CPU's order (row-major over the
// reduced dims), so the result is the CPU's bit for bit. The gradient runs
// one thread per input element: dx = scale * dy at its output element.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/ReduceDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

/// The offset of `index` counted row-major over the dims whose `reduced`
/// flag equals `which` (the innermost varying fastest), in input elements.
__device__ inline int64_t offsetOver(const ReduceParams &p, bool which, int64_t index) {
  int64_t off = 0;
  for (int64_t d = p.rank - 1; d >= 0; --d) {
    if (p.reduced[d] != which)
      continue;
    off += (index % p.ext[d]) * p.stride[d];
    index /= p.ext[d];
  }
  return off;
}

__global__ void reduceFwdKernel(const float *__restrict__ x, float *__restrict__ y,
                                ReduceParams p, int64_t count) {
  for (int64_t o = firstIndex(); o < p.outTotal; o += gridStride()) {
    const float *xo = x + offsetOver(p, false, o);
    double sum = 0.0;
    for (int64_t k = 0; k < count; ++k)
      sum += xo[offsetOver(p, true, k)];
    y[o] = static_cast<float>(p.scale * sum);
  }
}

/// The output element of input element i: its kept coordinates, row-major.
__device__ inline int64_t outputOf(const ReduceParams &p, int64_t i) {
  int64_t o = 0;
  for (int64_t d = 0; d < p.rank; ++d)
    if (!p.reduced[d])
      o = o * p.ext[d] + (i / p.stride[d]) % p.ext[d];
  return o;
}

__global__ void reduceBwdKernel(const float *__restrict__ dy, float *__restrict__ dx,
                                ReduceParams p) {
  for (int64_t i = firstIndex(); i < p.inTotal; i += gridStride())
    dx[i] = static_cast<float>(p.scale * dy[outputOf(p, i)]);
}

/// The number of input elements one output element covers.
int64_t reducedCount(const ReduceParams &p) {
  int64_t count = 1;
  for (int64_t d = 0; d < p.rank; ++d)
    if (p.reduced[d])
      count *= p.ext[d];
  return count;
}

mgsrt_status_t reduceFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ReduceParams p;
  if (parseReduce(ctx, kernelName(Kernel::reduce_fwd), desc, bufs, false, p))
    return ctx->status;
  float *y = static_cast<float *>(bufs[1]);
  cudaStream_t st = state(ctx).stream;
  if (p.outTotal == 0)
    return MGSRT_OK;
  if (p.inTotal == 0) { // a sum over nothing
    MGSRT_CUDA_CHECK(ctx, kernelName(Kernel::reduce_fwd),
                     cudaMemsetAsync(y, 0, sizeof(float) * p.outTotal, st));
    return MGSRT_OK;
  }
  reduceFwdKernel<<<gridFor(p.outTotal, kThreads), kThreads, 0, st>>>(
      static_cast<const float *>(bufs[0]), y, p, reducedCount(p));
  return MGSRT_OK;
}

mgsrt_status_t reduceBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ReduceParams p;
  if (parseReduce(ctx, kernelName(Kernel::reduce_bwd), desc, bufs, true, p))
    return ctx->status;
  if (p.inTotal == 0)
    return MGSRT_OK;
  reduceBwdKernel<<<gridFor(p.inTotal, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), static_cast<float *>(bufs[1]), p);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t reduce_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::reduce_fwd), desc, bufs,
                       [&] { return reduceFwd(ctx, desc, bufs); });
}
mgsrt_status_t reduce_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::reduce_bwd), desc, bufs,
                       [&] { return reduceBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
