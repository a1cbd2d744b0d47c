//===- Reduce.cpp - Sum or mean over axes, and its gradient ---------------===//
//
// ReduceSum / ReduceMean: each output element is the scaled sum of the input
// elements it covers (accumulated in double); the gradient broadcasts the
// scaled output gradient back over them. Output elements are independent, so
// both loops run in parallel over them.
//
//===----------------------------------------------------------------------===//

#include "Descriptors/ReduceDesc.h"

#include <vector>

#include <omp.h>

using namespace mgs::rt;

namespace {

/// The input offsets of one output element's reduced elements (from its
/// first) and, per output element, the offset of its first input element.
struct ReduceLayout {
  std::vector<int64_t> reducedOffsets;
  int64_t keptRank = 0;
  int64_t keptExt[kMaxRank], keptStride[kMaxRank];

  explicit ReduceLayout(const ReduceParams &p) {
    reducedOffsets.assign(1, 0);
    for (int64_t d = 0; d < p.rank; ++d) {
      if (!p.reduced[d]) {
        keptExt[keptRank] = p.ext[d];
        keptStride[keptRank++] = p.stride[d];
        continue;
      }
      // Row-major over the reduced dims: the innermost varies fastest.
      std::vector<int64_t> next;
      next.reserve(reducedOffsets.size() * p.ext[d]);
      for (int64_t base : reducedOffsets)
        for (int64_t c = 0; c < p.ext[d]; ++c)
          next.push_back(base + c * p.stride[d]);
      reducedOffsets.swap(next);
    }
  }

  int64_t base(int64_t o) const {
    int64_t off = 0;
    for (int64_t i = keptRank - 1; i >= 0; --i) {
      off += (o % keptExt[i]) * keptStride[i];
      o /= keptExt[i];
    }
    return off;
  }
};

mgsrt_status_t reduceFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ReduceParams p;
  if (parseReduce(ctx, kernelName(Kernel::reduce_fwd), desc, bufs, false, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  if (p.inTotal == 0) {
    for (int64_t o = 0; o < p.outTotal; ++o)
      y[o] = 0.0f;
    return MGSRT_OK;
  }
  const ReduceLayout layout(p);
  const int64_t *off = layout.reducedOffsets.data();
  const int64_t count = static_cast<int64_t>(layout.reducedOffsets.size());
  const double scale = p.scale;
#pragma omp parallel for if (p.inTotal >= kParallelGrain) schedule(static)
  for (int64_t o = 0; o < p.outTotal; ++o) {
    const float *xo = x + layout.base(o);
    double sum = 0.0;
    for (int64_t k = 0; k < count; ++k)
      sum += xo[off[k]];
    y[o] = static_cast<float>(scale * sum);
  }
  return MGSRT_OK;
}

mgsrt_status_t reduceBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ReduceParams p;
  if (parseReduce(ctx, kernelName(Kernel::reduce_bwd), desc, bufs, true, p))
    return ctx->status;
  const float *dy = static_cast<const float *>(bufs[0]);
  float *dx = static_cast<float *>(bufs[1]);
  if (p.inTotal == 0)
    return MGSRT_OK;
  const ReduceLayout layout(p);
  const int64_t *off = layout.reducedOffsets.data();
  const int64_t count = static_cast<int64_t>(layout.reducedOffsets.size());
  const double scale = p.scale;
#pragma omp parallel for if (p.inTotal >= kParallelGrain) schedule(static)
  for (int64_t o = 0; o < p.outTotal; ++o) {
    float *dxo = dx + layout.base(o);
    const float g = static_cast<float>(scale * dy[o]);
    for (int64_t k = 0; k < count; ++k)
      dxo[off[k]] = g;
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t reduce_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::reduce_fwd), desc, bufs,
                   [&] { return reduceFwd(ctx, desc, bufs); });
}
mgsrt_status_t reduce_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::reduce_bwd), desc, bufs,
                   [&] { return reduceBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
