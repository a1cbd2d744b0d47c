//===- NormDesc.h - The batch-norm descriptor, parsed and checked -*- C++ -*-===//
//
// mgsrt_batch_norm_* descriptors (mgsrt.h): parsing, validation and buffer
// checks shared by the CPU and CUDA kernels, so both reject the same input
// with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_NORMDESC_H
#define MGSRT_KERNELS_CPU_NORMDESC_H

#include "Common.h"

#include <cmath>

namespace mgs::rt {

struct BnParams {
  int64_t n, c, d;
  bool training, unbiasedRunningVar, relu;
  double eps, momentum;
};

inline mgsrt_status_t parseBn(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                              BnParams &p) {
  p.n = desc[0];
  p.c = desc[1];
  p.d = desc[2];
  if (p.n < 0 || p.c < 0 || p.d < 0)
    return invalidArg(ctx, kernel, "N=", p.n, " C=", p.c, " D=", p.d, " must not be negative");
  p.training = desc[3] != 0;
  p.eps = descF64(desc, 4);
  p.momentum = descF64(desc, 5);
  p.unbiasedRunningVar = desc[6] != 0;
  p.relu = desc[7] != 0;
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

#endif // MGSRT_KERNELS_CPU_NORMDESC_H
