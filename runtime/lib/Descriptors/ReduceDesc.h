//===- ReduceDesc.h - Reduction descriptors, parsed and checked -*- C++ -*-===//
//
// The descriptor and buffer checks of reduce_fwd / reduce_bwd (sum over some
// axes, times a scale), shared by every device's kernels so that they reject
// the same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_REDUCEDESC_H
#define MGSRT_DESCRIPTORS_REDUCEDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

/// A reduction with unit dims dropped and adjacent dims of the same kind
/// (kept or reduced) merged: dim i has extent ext[i], input stride stride[i]
/// and is reduced when reduced[i].
struct ReduceParams {
  int64_t inTotal, outTotal;
  double scale;
  int64_t rank;
  int64_t ext[kMaxRank], stride[kMaxRank];
  bool reduced[kMaxRank];
};

/// reduce_fwd (bufs: x, y) or reduce_bwd (bufs: dy, dx).
inline mgsrt_status_t parseReduce(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                  void *const *bufs, bool bwd, ReduceParams &p) {
  using F = mgs::contract::ReduceDesc;
  const int64_t r = desc[F::Rank];
  if (r < 0 || r > kMaxRank)
    return invalidArg(ctx, kernel, "rank ", r, " is out of range [0, ", kMaxRank, "]");
  const int64_t *in = desc + F::at(F::In, r), *out = desc + F::at(F::Out, r);
  for (int64_t i = 0; i < r; ++i) {
    if (in[i] < 0)
      return invalidArg(ctx, kernel, "extent ", in[i], " of dim ", i, " is negative");
    if (out[i] != in[i] && out[i] != 1)
      return invalidArg(ctx, kernel, "output extent ", out[i], " of dim ", i,
                        " is neither the input's (", in[i], ") nor 1");
  }
  p.scale = descF64(desc, F::ScaleBits);
  p.inTotal = product(in, r);
  p.outTotal = product(out, r);
  BufferCheck check(ctx, kernel, bufs);
  if (!bwd)
    check.require(0, "x", p.inTotal).require(1, "y", p.outTotal);
  else
    check.require(0, "dy", p.outTotal).require(1, "dx", p.inTotal);
  if (!check.ok)
    return ctx->status;
  p.rank = 0;
  int64_t stride = p.inTotal;
  for (int64_t i = 0; i < r; ++i) {
    if (in[i] != 0)
      stride /= in[i];
    if (in[i] == 1)
      continue;
    const bool red = out[i] != in[i];
    if (p.rank > 0 && p.reduced[p.rank - 1] == red) {
      p.ext[p.rank - 1] *= in[i];
      p.stride[p.rank - 1] = stride;
      continue;
    }
    p.ext[p.rank] = in[i];
    p.stride[p.rank] = stride;
    p.reduced[p.rank] = red;
    ++p.rank;
  }
  return MGSRT_OK;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_REDUCEDESC_H
