//===- Select.cu - The positions of each row's top k, on a GPU ------------===//
//
// The CPU kernel's semantics (CPU/Select.cpp) and checks
// (Descriptors/SelectDesc.h). One thread a row: its j-th position is the
// entry ranked first (ranksBefore) among those ranked after the (j-1)-th,
// k passes over the row without scratch memory. The rows TopK runs on in a
// training step are short (a router's experts), so this is not the place
// for a block-wide selection.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/SelectDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 128;

__global__ void topKPositionsKernel(const float *__restrict__ x, float *__restrict__ y,
                                    TopKPositionsParams p) {
  for (int64_t r = firstIndex(); r < p.rows; r += gridStride()) {
    const float *row = x + r * p.len;
    int64_t prev = -1;
    for (int64_t j = 0; j < p.k; ++j) {
      int64_t best = -1;
      for (int64_t i = 0; i < p.len; ++i) {
        if (prev >= 0 && !ranksBefore(row[prev], prev, row[i], i, p.largest))
          continue; // already taken
        if (best < 0 || ranksBefore(row[i], i, row[best], best, p.largest))
          best = i;
      }
      y[r * p.k + j] = static_cast<float>(best);
      prev = best;
    }
  }
}

mgsrt_status_t topKPositions(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  TopKPositionsParams p;
  if (parseTopKPositions(ctx, kernelName(Kernel::topk_positions), desc, bufs, p))
    return ctx->status;
  if (p.rows == 0 || p.k == 0)
    return MGSRT_OK;
  topKPositionsKernel<<<gridFor(p.rows, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), static_cast<float *>(bufs[1]), p);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t topk_positions(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::topk_positions), desc, bufs,
                       [&] { return topKPositions(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
