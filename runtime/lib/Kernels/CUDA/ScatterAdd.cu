//===- ScatterAdd.cu - Scatter-add of gathered top-k entries on a GPU ------===//
//
// scatter_add: the pairs are stably sorted by index (CUB radix sort, which
// keeps the order of equal keys), so each output element's values are added
// in their original order starting from +0, exactly the CPU's serial loop,
// then divided by P once. Out-of-range indices are found on the device
// first; reading that result back is the one synchronization (the contract
// leaves `out` untouched on that error).
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "TopKDevice.cuh"

#include "Descriptors/TopKDesc.h"

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

using namespace mgs::rt;
using namespace mgs::rt::cuda;
using namespace mgs::rt::cuda::topk;

namespace {

__global__ void findBadIndex(const int32_t *indices, int64_t total, int64_t n,
                             unsigned long long *bad) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < total;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t i = indices[j];
    if (i < 0 || i >= n)
      atomicMin(bad, static_cast<u64>(j));
  }
}

__global__ void iota(u32 *out, int64_t total) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < total;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[j] = static_cast<u32>(j);
}

/// One thread per run of equal (sorted) indices: the values in their
/// original order, added from +0, then divided by P (x86's NaN results).
__global__ void sumRuns(const u32 *keys, const u32 *positions, const float *values,
                        int64_t total, int P, const u64 *bad, float *out) {
  if (*bad != ~0ull) // a graph's replay runs it regardless; the error comes after
    return;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < total;
       s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const u32 index = keys[s];
    if (s > 0 && keys[s - 1] == index)
      continue;
    float sum = 0.0f;
    for (int64_t u = s; u < total && keys[u] == index; ++u)
      sum = addLikeHost(sum, values[positions[u]]);
    if (P > 1)
      sum = sum != sum ? __uint_as_float(__float_as_uint(sum) | 0x00400000u)
                       : __fdiv_rn(sum, static_cast<float>(P));
    out[index] = sum;
  }
}

mgsrt_status_t scatterAdd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::scatter_add);
  if (!checkScatterAddDesc(ctx, desc, bufs))
    return ctx->status;
  using F = mgs::contract::ScatterAddDesc;
  const int64_t n = desc[F::Count], k = desc[F::K], P = desc[F::Workers];
  const int64_t total = P * k;
  if (total > INT32_MAX)
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                     strCat(kernel, ": P * k = ", total,
                            " entries exceed the CUDA kernel's limit (2^31 - 1)"));
  const float *values = static_cast<const float *>(bufs[0]);
  const int32_t *indices = static_cast<const int32_t *>(bufs[1]);
  float *out = static_cast<float *>(bufs[2]);
  cudaStream_t stream = state(ctx).stream;

  const u32 *keysIn = reinterpret_cast<const u32 *>(indices); // checked non-negative first
  int endBit = 1;
  while (endBit < 31 && (int64_t(1) << endBit) < n)
    ++endBit;
  size_t sortBytes = 0;
  if (total > 0)
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cub::DeviceRadixSort::SortPairs(
                         nullptr, sortBytes, keysIn, static_cast<u32 *>(nullptr),
                         static_cast<const u32 *>(nullptr), static_cast<u32 *>(nullptr),
                         static_cast<int>(total), 0, endBit, stream));
  const size_t arrayBytes = alignUp(static_cast<size_t>(total) * sizeof(u32), 256);
  void *ws = nullptr;
  if (mgsrt_status_t s = workspace(ctx, kernel, 256 + 3 * arrayBytes + sortBytes, &ws))
    return s;
  char *p = static_cast<char *>(ws); // (its first word: firstRefused's, kernel by kernel)
  u32 *keysOut = reinterpret_cast<u32 *>(p + 256);
  u32 *positions = reinterpret_cast<u32 *>(p + 256 + arrayBytes);
  u32 *positionsOut = reinterpret_cast<u32 *>(p + 256 + 2 * arrayBytes);
  void *sortTemp = p + 256 + 3 * arrayBytes;

  // Every index is checked before anything is written: the one host
  // synchronization of this kernel (in a graph, after the replay, and the
  // sums skip their work on a bad index).
  const unsigned long long *bad = nullptr;
  if (total > 0)
    if (mgsrt_status_t s = firstRefused(
            ctx, kernel, indices,
            [&](unsigned long long *first, cudaStream_t st) {
              findBadIndex<<<gridFor(total), 256, 0, st>>>(indices, total, n, first);
            },
            [n, k](mgsrt_ctx_t *c, int64_t at, int32_t index) {
              return scatterAddBadIndex(c, n, k, at, index);
            },
            bad))
      return s;
  if (n > 0)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(out, 0, n * sizeof(float), stream));
  if (total == 0)
    return MGSRT_OK;
  iota<<<gridFor(total), 256, 0, stream>>>(positions, total);
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cub::DeviceRadixSort::SortPairs(sortTemp, sortBytes, keysIn, keysOut,
                                                   static_cast<const u32 *>(positions),
                                                   positionsOut, static_cast<int>(total), 0,
                                                   endBit, stream));
  sumRuns<<<gridFor(total), 256, 0, stream>>>(keysOut, positionsOut, values, total,
                                              static_cast<int>(P), bad, out);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t scatter_add(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::scatter_add), desc, bufs,
                       [&] { return scatterAdd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
