//===- NcclKernels.cu - The NCCL collectives' own device work -------------===//
//
// The top-k values sent as IEEE half or bfloat16 (the allgather descriptor's
// values field): narrowed on the compute stream before the NCCL call, widened
// after its wait, with the same rounding as the CPU (to nearest even).
//
// The allreduce average: NCCL's ncclAvg multiplies each rank's input by 1/P
// before summing (for floats), which rounds differently from mgsrt.h's "sum
// divided by P" (the CPU backends' result); so the sum, then a division.
//
//===----------------------------------------------------------------------===//

#include "Kernels/CUDA/Device.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

/// x as T, rounded to nearest even (the pointer selects T).
__device__ __half narrowTo(float x, __half *) { return __float2half_rn(x); }
__device__ __nv_bfloat16 narrowTo(float x, __nv_bfloat16 *) { return __float2bfloat16_rn(x); }

template <typename T> __global__ void narrowKernel(const float *in, T *out, int64_t n) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = narrowTo(in[i], out);
}

template <typename T> __global__ void widenKernel(const T *in, float *out, int64_t n) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = static_cast<float>(in[i]);
}

template <typename T>
cudaError_t narrowAs(const float *in, void *out, int64_t n, cudaStream_t stream) {
  if (n > 0)
    narrowKernel<<<mgs::rt::cuda::gridFor(n), 256, 0, stream>>>(in, static_cast<T *>(out), n);
  return cudaPeekAtLastError();
}

template <typename T>
cudaError_t widenAs(const void *in, float *out, int64_t n, cudaStream_t stream) {
  if (n > 0)
    widenKernel<<<mgs::rt::cuda::gridFor(n), 256, 0, stream>>>(static_cast<const T *>(in), out,
                                                                 n);
  return cudaPeekAtLastError();
}

__global__ void divideKernel(float *data, int64_t n, float divisor) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    data[i] = __fdiv_rn(data[i], divisor);
}

} // namespace

namespace mgs::rt::cuda {

cudaError_t narrowFloats(const float *in, void *out, int64_t n, bool bf16, cudaStream_t stream) {
  return bf16 ? narrowAs<__nv_bfloat16>(in, out, n, stream)
              : narrowAs<__half>(in, out, n, stream);
}

cudaError_t widenFloats(const void *in, float *out, int64_t n, bool bf16, cudaStream_t stream) {
  return bf16 ? widenAs<__nv_bfloat16>(in, out, n, stream)
              : widenAs<__half>(in, out, n, stream);
}

cudaError_t divideBy(float *data, int64_t n, float divisor, cudaStream_t stream) {
  if (n > 0)
    divideKernel<<<gridFor(n), 256, 0, stream>>>(data, n, divisor);
  return cudaPeekAtLastError();
}

} // namespace mgs::rt::cuda
