//===- Gather.cu - Rows of a table at computed indices, on a GPU ----------===//
//
// The CPU kernels' semantics (CPU/Gather.cpp) and checks
// (Descriptors/GatherDesc.h). Every index is checked on the device before
// anything is written (the first bad one is found with an atomic minimum
// and read back: one synchronization a call), so a bad token id leaves the
// outputs untouched and gets the CPU's error. The backward pass gives one
// thread to each column and adds the rows in index order, as the CPU does:
// the same sums, bit for bit, every run.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/GatherDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

/// ONNX's rule: a negative index counts from the end.
__device__ inline int64_t rowOf(int64_t index, int64_t rows) {
  return index < 0 ? index + rows : index;
}

/// *first = the smallest position of an index outside [-rows, rows).
__global__ void firstBadIndexKernel(const int64_t *__restrict__ indices, int64_t count,
                                    int64_t rows, unsigned long long *first) {
  for (int64_t i = firstIndex(); i < count; i += gridStride())
    if (indices[i] < -rows || indices[i] >= rows)
      atomicMin(first, static_cast<unsigned long long>(i));
}

__global__ void gatherFwdKernel(const float *__restrict__ table,
                                const int64_t *__restrict__ indices, float *__restrict__ y,
                                GatherShape g, const unsigned long long *__restrict__ bad) {
  if (*bad != ~0ull) // a graph's replay runs it regardless; the error comes after
    return;
  const int64_t total = g.count * g.rowSize;
  for (int64_t e = firstIndex(); e < total; e += gridStride()) {
    const int64_t i = e / g.rowSize, j = e % g.rowSize;
    y[e] = table[rowOf(indices[i], g.rows) * g.rowSize + j];
  }
}

__global__ void gatherBwdKernel(const int64_t *__restrict__ indices,
                                const float *__restrict__ dy, float *__restrict__ dtable,
                                GatherShape g, const unsigned long long *__restrict__ bad) {
  if (*bad != ~0ull)
    return;
  for (int64_t j = firstIndex(); j < g.rowSize; j += gridStride())
    for (int64_t i = 0; i < g.count; ++i)
      dtable[rowOf(indices[i], g.rows) * g.rowSize + j] += dy[i * g.rowSize + j];
}

/// Parses the descriptor and checks every index (device memory) against the
/// table; `bad` is the check's verdict word (firstRefused).
mgsrt_status_t parseGather(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                           const int64_t *indices, GatherShape &g,
                           const unsigned long long *&bad) {
  if (parseGatherShape(ctx, kernel, desc, g))
    return ctx->status;
  if (g.count == 0)
    return MGSRT_OK;
  const int64_t rows = g.rows;
  return firstRefused(
      ctx, kernel, indices,
      [&](unsigned long long *first, cudaStream_t st) {
        firstBadIndexKernel<<<gridFor(g.count, kThreads), kThreads, 0, st>>>(indices, g.count,
                                                                             g.rows, first);
      },
      [kernel, rows](mgsrt_ctx_t *c, int64_t at, int64_t value) {
        return badGatherIndex(c, kernel, at, value, rows);
      },
      bad);
}

mgsrt_status_t gatherFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gather_fwd);
  if (!BufferCheck(ctx, kernel, bufs).require(0, "table").require(1, "indices").require(2, "y").ok)
    return ctx->status;
  const auto *indices = static_cast<const int64_t *>(bufs[1]);
  GatherShape g;
  const unsigned long long *bad = nullptr;
  if (parseGather(ctx, kernel, desc, indices, g, bad))
    return ctx->status;
  if (g.count * g.rowSize == 0)
    return MGSRT_OK;
  gatherFwdKernel<<<gridFor(g.count * g.rowSize, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), indices, static_cast<float *>(bufs[2]), g, bad);
  return MGSRT_OK;
}

mgsrt_status_t gatherBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gather_bwd);
  if (!BufferCheck(ctx, kernel, bufs).require(0, "indices").require(1, "dy").require(2, "dtable").ok)
    return ctx->status;
  const auto *indices = static_cast<const int64_t *>(bufs[0]);
  GatherShape g;
  const unsigned long long *bad = nullptr;
  if (parseGather(ctx, kernel, desc, indices, g, bad))
    return ctx->status;
  auto *dtable = static_cast<float *>(bufs[2]);
  cudaStream_t st = state(ctx).stream;
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemsetAsync(dtable, 0, sizeof(float) * g.rows * g.rowSize, st));
  if (g.count * g.rowSize == 0)
    return MGSRT_OK;
  gatherBwdKernel<<<gridFor(g.rowSize, kThreads), kThreads, 0, st>>>(
      indices, static_cast<const float *>(bufs[1]), dtable, g, bad);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t gather_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gather_fwd), desc, bufs,
                       [&] { return gatherFwd(ctx, desc, bufs); });
}
mgsrt_status_t gather_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gather_bwd), desc, bufs,
                       [&] { return gatherBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
