//===- Scan.cu - Cumulative sums and floats to indices, on a GPU ----------===//
//
// The CPU kernels' semantics (CPU/Scan.cpp) and checks
// (Descriptors/ScanDesc.h). A cumulative sum gives one thread to each line
// and adds it in order with the CPU's code (cumSumLine): the same sums, bit for bit (the
// lines a cumulative sum runs over are short: position ids). to_index finds
// the first value that is no index with an atomic minimum and reads it back
// (one synchronization a call), so a bad value gets the CPU's error.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/ScanDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

__global__ void cumSumKernel(const float *__restrict__ x, float *__restrict__ y, CumSumParams p) {
  const int64_t lines = p.outer * p.inner;
  for (int64_t line = firstIndex(); line < lines; line += gridStride())
    cumSumLine(x, y, p, line / p.inner, line % p.inner);
}

/// y = x rounded toward zero; *first = the smallest position of a value that is no index.
__global__ void toIndexKernel(const float *__restrict__ x, int64_t *__restrict__ y, int64_t n,
                              unsigned long long *first) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    if (fitsIndex(x[i]))
      y[i] = static_cast<int64_t>(x[i]);
    else
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

/// y = x as floats; *first = the smallest position of a value outside [lo, hi].
__global__ void fromIndexKernel(const int64_t *__restrict__ x, float *__restrict__ y,
                                FromIndexParams p, unsigned long long *first) {
  for (int64_t i = firstIndex(); i < p.n; i += gridStride()) {
    if (x[i] >= p.lo && x[i] <= p.hi)
      y[i] = static_cast<float>(x[i]);
    else
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

mgsrt_status_t cumSum(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  CumSumParams p;
  if (parseCumSum(ctx, kernelName(Kernel::cumsum), desc, bufs, p))
    return ctx->status;
  if (p.total() == 0)
    return MGSRT_OK;
  cumSumKernel<<<gridFor(p.outer * p.inner, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), static_cast<float *>(bufs[1]), p);
  return MGSRT_OK;
}

mgsrt_status_t toIndex(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::to_index);
  int64_t n;
  if (parseToIndex(ctx, kernel, desc, bufs, n))
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  const auto *x = static_cast<const float *>(bufs[0]);
  auto *y = static_cast<int64_t *>(bufs[1]);
  // (What follows a bad value sees its index unset: the error comes first,
  // or right after a graph's replay.)
  const unsigned long long *first = nullptr;
  return firstRefused(
      ctx, kernel, x,
      [&](unsigned long long *word, cudaStream_t st) {
        toIndexKernel<<<gridFor(n, kThreads), kThreads, 0, st>>>(x, y, n, word);
      },
      [kernel](mgsrt_ctx_t *c, int64_t at, float value) {
        return badIndexValue(c, kernel, at, value);
      },
      first);
}

mgsrt_status_t fromIndex(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::from_index);
  FromIndexParams p;
  if (parseFromIndex(ctx, kernel, desc, bufs, p))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  const auto *x = static_cast<const int64_t *>(bufs[0]);
  auto *y = static_cast<float *>(bufs[1]);
  const unsigned long long *first = nullptr;
  return firstRefused(
      ctx, kernel, x,
      [&](unsigned long long *word, cudaStream_t st) {
        fromIndexKernel<<<gridFor(p.n, kThreads), kThreads, 0, st>>>(x, y, p, word);
      },
      [kernel, p](mgsrt_ctx_t *c, int64_t at, int64_t value) {
        return badFromIndexValue(c, kernel, at, value, p);
      },
      first);
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t cumsum(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::cumsum), desc, bufs,
                       [&] { return cumSum(ctx, desc, bufs); });
}
mgsrt_status_t to_index(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::to_index), desc, bufs,
                       [&] { return toIndex(ctx, desc, bufs); });
}
mgsrt_status_t from_index(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::from_index), desc, bufs,
                       [&] { return fromIndex(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
