//===- TopKDesc.h - Descriptor checks of top-k and scatter-add --*- C++ -*-===//
//
// The descriptor and buffer checks of mgsrt_topk_sparsify and
// mgsrt_scatter_add, shared by the CPU kernels (TopK.cpp) and the CUDA
// kernels (CUDA/TopK.cu) so both devices reject the same input with the
// same status and words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_TOPKDESC_H
#define MGSRT_DESCRIPTORS_TOPKDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <climits>
#include <cstdint>
#include <limits>

namespace mgs::rt {

/// topk_sparsify's desc [n, k] and bufs (grad, residual, values, indices).
/// Returns false after recording the error in ctx.
inline bool checkTopKDesc(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::topk_sparsify);
  const int64_t n = desc[mgs::contract::TopKDesc::Count], k = desc[mgs::contract::TopKDesc::K];
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative"), false;
  if (n > INT32_MAX)
    return invalidArg(ctx, kernel, "element count ", n, " exceeds the int32 index range"),
           false;
  if (k < 1 || k > n)
    return invalidArg(ctx, kernel, "k = ", k, " is outside [1, n = ", n, "]"), false;
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "grad")
      .require(1, "residual")
      .require(2, "values")
      .require(3, "indices")
      .ok;
}

/// scatter_add's desc [n, k, P] and bufs (values, indices, out). Returns
/// false after recording the error in ctx.
inline bool checkScatterAddDesc(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::scatter_add);
  using F = mgs::contract::ScatterAddDesc;
  const int64_t n = desc[F::Count], k = desc[F::K], P = desc[F::Workers];
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative"), false;
  if (k < 0)
    return invalidArg(ctx, kernel, "k = ", k, " is negative"), false;
  if (P < 1)
    return invalidArg(ctx, kernel, "rank count ", P, " is not positive"), false;
  if (P > (1 << 24))
    return invalidArg(ctx, kernel, "rank count ", P,
                      " exceeds 2^24 (the divisor must be exact)"),
           false;
  if (k > 0 && P > std::numeric_limits<int64_t>::max() / k)
    return invalidArg(ctx, kernel, "P * k overflows (P = ", P, ", k = ", k, ")"), false;
  const int64_t total = P * k;
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "values", total)
      .require(1, "indices", total)
      .require(2, "out", n)
      .ok;
}

/// The error of an index outside [0, n) at position `position` of a
/// scatter_add with k entries per rank.
inline mgsrt_status_t scatterAddBadIndex(mgsrt_ctx_t *ctx, int64_t n, int64_t k,
                                         int64_t position, int32_t index) {
  return invalidArg(ctx, kernelName(Kernel::scatter_add), "index ", index, " at position ", position, " (rank ",
                    position / k, ", entry ", position % k, ") is outside [0, ", n, ")");
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_TOPKDESC_H
