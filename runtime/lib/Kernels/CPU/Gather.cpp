//===- Gather.cpp - Rows of a table at computed indices (embeddings) ------===//
//
// mgsrt_gather_* (mgsrt.h). Every index is checked before anything is
// written, so a bad token id leaves the outputs untouched. The backward pass
// adds the rows in index order (one thread: the same sums every run).
//
//===----------------------------------------------------------------------===//

#include "Descriptors/GatherDesc.h"
#include "mgsrt/contract.h"

#include <algorithm>
#include <cstring>

using namespace mgs::rt;

namespace {

/// Parses the descriptor and checks every index against the table.
mgsrt_status_t parseGather(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                           const int64_t *indices, GatherShape &g) {
  if (parseGatherShape(ctx, kernel, desc, g))
    return ctx->status;
  for (int64_t i = 0; i < g.count; ++i)
    if (indices[i] < -g.rows || indices[i] >= g.rows)
      return badGatherIndex(ctx, kernel, i, indices[i], g.rows);
  return MGSRT_OK;
}

/// ONNX's rule: a negative index counts from the end.
int64_t rowOf(int64_t index, int64_t rows) { return index < 0 ? index + rows : index; }

mgsrt_status_t gatherFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gather_fwd);
  if (!BufferCheck(ctx, kernel, bufs).require(0, "table").require(1, "indices").require(2, "y").ok)
    return ctx->status;
  const float *table = static_cast<const float *>(bufs[0]);
  const int64_t *indices = static_cast<const int64_t *>(bufs[1]);
  float *y = static_cast<float *>(bufs[2]);
  GatherShape g;
  if (parseGather(ctx, kernel, desc, indices, g))
    return ctx->status;
  for (int64_t i = 0; i < g.count; ++i)
    std::memcpy(y + i * g.rowSize, table + rowOf(indices[i], g.rows) * g.rowSize,
                g.rowSize * sizeof(float));
  return MGSRT_OK;
}

mgsrt_status_t gatherBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gather_bwd);
  if (!BufferCheck(ctx, kernel, bufs).require(0, "indices").require(1, "dy").require(2, "dtable").ok)
    return ctx->status;
  const int64_t *indices = static_cast<const int64_t *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dtable = static_cast<float *>(bufs[2]);
  GatherShape g;
  if (parseGather(ctx, kernel, desc, indices, g))
    return ctx->status;
  std::fill(dtable, dtable + g.rows * g.rowSize, 0.0f);
  for (int64_t i = 0; i < g.count; ++i) {
    float *row = dtable + rowOf(indices[i], g.rows) * g.rowSize;
    const float *src = dy + i * g.rowSize;
    for (int64_t j = 0; j < g.rowSize; ++j)
      row[j] += src[j];
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t gather_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gather_fwd), desc, bufs, [&] { return gatherFwd(ctx, desc, bufs); });
}
mgsrt_status_t gather_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gather_bwd), desc, bufs, [&] { return gatherBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
