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

__global__ void floatToHalfKernel(const float *in, __half *out, int64_t n) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = __float2half_rn(in[i]);
}

__global__ void halfToFloatKernel(const __half *in, float *out, int64_t n) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = __half2float(in[i]);
}

__global__ void floatToBf16Kernel(const float *in, __nv_bfloat16 *out, int64_t n) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void bf16ToFloatKernel(const __nv_bfloat16 *in, float *out, int64_t n) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = __bfloat162float(in[i]);
}

__global__ void divideKernel(float *data, int64_t n, float divisor) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    data[i] = __fdiv_rn(data[i], divisor);
}

} // namespace

namespace mgs::rt::cuda {

cudaError_t floatToHalf(const float *in, void *out, int64_t n, cudaStream_t stream) {
  if (n > 0)
    floatToHalfKernel<<<gridFor(n), 256, 0, stream>>>(in, static_cast<__half *>(out), n);
  return cudaPeekAtLastError();
}

cudaError_t halfToFloat(const void *in, float *out, int64_t n, cudaStream_t stream) {
  if (n > 0)
    halfToFloatKernel<<<gridFor(n), 256, 0, stream>>>(static_cast<const __half *>(in), out, n);
  return cudaPeekAtLastError();
}

cudaError_t floatToBf16(const float *in, void *out, int64_t n, cudaStream_t stream) {
  if (n > 0)
    floatToBf16Kernel<<<gridFor(n), 256, 0, stream>>>(in, static_cast<__nv_bfloat16 *>(out), n);
  return cudaPeekAtLastError();
}

cudaError_t bf16ToFloat(const void *in, float *out, int64_t n, cudaStream_t stream) {
  if (n > 0)
    bf16ToFloatKernel<<<gridFor(n), 256, 0, stream>>>(static_cast<const __nv_bfloat16 *>(in),
                                                      out, n);
  return cudaPeekAtLastError();
}

cudaError_t divideBy(float *data, int64_t n, float divisor, cudaStream_t stream) {
  if (n > 0)
    divideKernel<<<gridFor(n), 256, 0, stream>>>(data, n, divisor);
  return cudaPeekAtLastError();
}

} // namespace mgs::rt::cuda
