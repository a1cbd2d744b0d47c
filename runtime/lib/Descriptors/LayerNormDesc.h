//===- LayerNormDesc.h - The layer-norm descriptor, parsed and checked -*- C++ -*-===//
//
// mgsrt_layer_norm_* descriptors (mgsrt.h; fields named in mgsrt/contract.h):
// parsing, validation and buffer checks, so every implementation rejects the
// same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_LAYERNORMDESC_H
#define MGSRT_DESCRIPTORS_LAYERNORMDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <cmath>

namespace mgs::rt {

struct LayerNormParams {
  int64_t rows, cols;
  double eps;
};

inline mgsrt_status_t parseLayerNorm(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                     LayerNormParams &p) {
  using F = mgs::contract::LayerNormDesc;
  p.rows = desc[F::Rows];
  p.cols = desc[F::Cols];
  if (p.rows < 0 || p.cols < 1)
    return invalidArg(ctx, kernel, "rows=", p.rows, " cols=", p.cols,
                      ": rows must not be negative and cols must be positive");
  p.eps = descF64(desc, F::EpsilonBits);
  if (!(p.eps >= 0.0) || !std::isfinite(p.eps))
    return invalidArg(ctx, kernel, "epsilon ", p.eps, " must be finite and non-negative");
  return MGSRT_OK;
}

/// layer_norm_fwd's buffer checks (bufs: x, scale, bias, y, mean, inv_std).
inline bool checkLayerNormFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "scale").require(2, "bias").require(3, "y").require(4, "mean")
      .require(5, "inv_std").ok;
}

/// layer_norm_bwd's buffer checks (bufs: x, scale, mean, inv_std, dy, then the
/// nullable dx, dscale, dbias).
inline bool checkLayerNormBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "scale").require(2, "mean").require(3, "inv_std")
      .require(4, "dy").ok;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_LAYERNORMDESC_H
