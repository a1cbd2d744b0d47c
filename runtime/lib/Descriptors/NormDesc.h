//===- NormDesc.h - The batch-norm descriptor, parsed and checked -*- C++ -*-===//
//
// mgsrt_batch_norm_* descriptors (mgsrt.h; fields named in mgsrt/contract.h): parsing, validation and buffer
// checks shared by the CPU and CUDA kernels, so both reject the same input
// with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_NORMDESC_H
#define MGSRT_DESCRIPTORS_NORMDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <cmath>

namespace mgs::rt {

struct BnParams {
  int64_t n, c, d;
  bool training, unbiasedRunningVar, relu;
  double eps, momentum;
};

inline mgsrt_status_t parseBn(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                              BnParams &p) {
  using F = mgs::contract::BatchNormDesc;
  p.n = desc[F::Batch];
  p.c = desc[F::Channels];
  p.d = desc[F::Spatial];
  if (p.n < 0 || p.c < 0 || p.d < 0)
    return invalidArg(ctx, kernel, "N=", p.n, " C=", p.c, " D=", p.d, " must not be negative");
  p.training = desc[F::Training] != 0;
  p.eps = descF64(desc, F::EpsilonBits);
  p.momentum = descF64(desc, F::MomentumBits);
  p.unbiasedRunningVar = desc[F::UnbiasedRunningVar] != 0;
  p.relu = desc[F::Relu] != 0;
  if (!(p.eps >= 0.0) || !std::isfinite(p.eps))
    return invalidArg(ctx, kernel, "epsilon ", p.eps, " must be finite and non-negative");
  if (!std::isfinite(p.momentum))
    return invalidArg(ctx, kernel, "momentum ", p.momentum, " must be finite");
  return MGSRT_OK;
}

/// batch_norm_fwd's buffer checks (saved_mean / saved_invstd are nullable).
inline bool checkBnFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "scale").require(2, "bias").require(3, "mean")
      .require(4, "var").require(5, "y").require(6, "running_mean_out")
      .require(7, "running_var_out").ok;
}

/// batch_norm_bwd's buffer checks; a fused ReLU also needs the bias (bufs[8]).
inline bool checkBnBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs,
                           const BnParams &p) {
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "x").require(1, "scale").require(2, "saved_mean")
           .require(3, "saved_invstd").require(4, "dy").require(5, "dx").require(6, "dscale")
           .require(7, "dbias").ok)
    return false;
  return !p.relu || BufferCheck(ctx, kernel, bufs).require(8, "bias").ok;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_NORMDESC_H
