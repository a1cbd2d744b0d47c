//===- Select.cpp - The positions of each row's top k ---------------------===//
//
// mgsrt_topk_positions (mgsrt.h): a partial sort of each row's positions by
// ranksBefore (Descriptors/SelectDesc.h), the rows spread over the OpenMP
// threads.
//
//===----------------------------------------------------------------------===//

#include "Descriptors/SelectDesc.h"
#include "Support/Common.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <omp.h>

using namespace mgs::rt;

namespace {

mgsrt_status_t topKPositions(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  TopKPositionsParams p;
  if (parseTopKPositions(ctx, kernelName(Kernel::topk_positions), desc, bufs, p))
    return ctx->status;
  if (p.k == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  const bool parallel = p.rows * p.len >= kParallelGrain;
  // One row of positions a thread, allocated here so that running out of
  // memory is an error, not an exception inside the parallel region.
  std::vector<int64_t> scratch(static_cast<size_t>((parallel ? omp_get_max_threads() : 1) * p.len));
#pragma omp parallel if (parallel)
  {
    int64_t *order = scratch.data() + (parallel ? omp_get_thread_num() : 0) * p.len;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < p.rows; ++r) {
      const float *row = x + r * p.len;
      std::iota(order, order + p.len, int64_t{0});
      std::partial_sort(order, order + p.k, order + p.len, [&](int64_t a, int64_t b) {
        return ranksBefore(row[a], a, row[b], b, p.largest);
      });
      for (int64_t j = 0; j < p.k; ++j)
        y[r * p.k + j] = static_cast<float>(order[j]);
    }
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t topk_positions(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::topk_positions), desc, bufs,
                   [&] { return topKPositions(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
