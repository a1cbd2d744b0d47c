//===- GeluDesc.h - The GELU descriptor, parsed and checked -----*- C++ -*-===//
//
// mgsrt_gelu_* descriptors (mgsrt.h; fields named in mgsrt/contract.h):
// parsing, validation and buffer checks, shared by the CPU kernels
// (CPU/Gelu.cpp) and the CUDA ones (CUDA/Gelu.cu), so both reject the same
// input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_GELUDESC_H
#define MGSRT_DESCRIPTORS_GELUDESC_H

#include "Descriptors/ElementwiseDesc.h" // parseElementCount
#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

struct GeluParams {
  int64_t n;
  bool tanh; ///< MGSRT_GELU_TANH, else MGSRT_GELU_NONE
};

/// gelu_fwd (bufs: x, y) or gelu_bwd (bufs: x, dy, dx).
inline mgsrt_status_t parseGelu(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                void *const *bufs, bool bwd, GeluParams &p) {
  using F = mgs::contract::GeluDesc;
  if (parseElementCount(ctx, kernel, desc, F::Count, p.n))
    return ctx->status;
  const int64_t approximate = desc[F::Approximate];
  if (approximate != MGSRT_GELU_NONE && approximate != MGSRT_GELU_TANH)
    return invalidArg(ctx, kernel, "approximate ", approximate,
                      " is neither MGSRT_GELU_NONE (0) nor MGSRT_GELU_TANH (1)");
  p.tanh = approximate == MGSRT_GELU_TANH;
  BufferCheck check(ctx, kernel, bufs);
  if (bwd)
    check.require(0, "x", p.n).require(1, "dy", p.n).require(2, "dx", p.n);
  else
    check.require(0, "x", p.n).require(1, "y", p.n);
  return check.ok ? MGSRT_OK : ctx->status;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_GELUDESC_H
