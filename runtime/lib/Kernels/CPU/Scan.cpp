//===- Scan.cpp - Cumulative sums and floats to indices -------------------===//
//
// mgsrt_cumsum and mgsrt_to_index (mgsrt.h). A cumulative sum runs each line
// (one outer, inner position) in order, in float, as ONNX CumSum does; the
// lines are spread over the OpenMP threads. to_index checks every value
// before it writes one.
//
//===----------------------------------------------------------------------===//

#include "Descriptors/ScanDesc.h"
#include "Support/Common.h"

using namespace mgs::rt;

namespace {

mgsrt_status_t cumSum(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  CumSumParams p;
  if (parseCumSum(ctx, kernelName(Kernel::cumsum), desc, bufs, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  const int64_t lines = p.outer * p.inner;
#pragma omp parallel for if (p.total() >= kParallelGrain) schedule(static)
  for (int64_t line = 0; line < lines; ++line)
    cumSumLine(x, y, p, line / p.inner, line % p.inner);
  return MGSRT_OK;
}

mgsrt_status_t toIndex(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::to_index);
  int64_t n;
  if (parseToIndex(ctx, kernel, desc, bufs, n))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  int64_t *y = static_cast<int64_t *>(bufs[1]);
  for (int64_t i = 0; i < n; ++i)
    if (!fitsIndex(x[i]))
      return badIndexValue(ctx, kernel, i, x[i]);
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<int64_t>(x[i]);
  return MGSRT_OK;
}

mgsrt_status_t fromIndex(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::from_index);
  FromIndexParams p;
  if (parseFromIndex(ctx, kernel, desc, bufs, p))
    return ctx->status;
  const int64_t *x = static_cast<const int64_t *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  for (int64_t i = 0; i < p.n; ++i)
    if (x[i] < p.lo || x[i] > p.hi)
      return badFromIndexValue(ctx, kernel, i, x[i], p);
  for (int64_t i = 0; i < p.n; ++i)
    y[i] = static_cast<float>(x[i]);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t cumsum(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::cumsum), desc, bufs, [&] { return cumSum(ctx, desc, bufs); });
}
mgsrt_status_t to_index(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::to_index), desc, bufs, [&] { return toIndex(ctx, desc, bufs); });
}
mgsrt_status_t from_index(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::from_index), desc, bufs,
                   [&] { return fromIndex(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
