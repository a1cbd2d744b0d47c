//===- OptimizerDesc.h - Checks and constants of the optimizer kernels -*- C++ -*-===//
//
// The descriptor and buffer checks of mgsrt_sgd_update and
// mgsrt_clip_grad_norm, AdamW's per-step constants and the norm's chunking,
// shared by the CPU kernels (CPU/Optimizer.cpp) and the CUDA kernels
// (CUDA/Optimizer.cu), so both devices reject the same input with the same
// words and compute the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_OPTIMIZERDESC_H
#define MGSRT_DESCRIPTORS_OPTIMIZERDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <cmath>
#include <cstdint>

namespace mgs::rt {

/// sgd_update's desc [n] and bufs (param, grad, velocity); n, or -1 after
/// recording the error in ctx.
inline int64_t checkUpdateDesc(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::sgd_update);
  const int64_t n = desc[mgs::contract::CountDesc::Count];
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative"), -1;
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "param", n).require(1, "grad", n).require(2, "velocity", n).ok)
    return -1;
  return n;
}

/// AdamW's per-step constants, computed in double as torch does in Python,
/// from the context's lr, weight decay, betas, eps and step.
struct AdamWStep {
  float decay, beta1, oneMinusBeta1, beta2, oneMinusBeta2, stepSize, bc2Sqrt, eps;
};

inline AdamWStep adamwStep(const mgsrt_ctx_t &c) {
  const double t = static_cast<double>(c.adamStep);
  const double bc1 = 1.0 - std::pow(static_cast<double>(c.beta1), t);
  const double bc2 = 1.0 - std::pow(static_cast<double>(c.beta2), t);
  return {static_cast<float>(1.0 - static_cast<double>(c.lr) * c.weightDecay),
          c.beta1,
          static_cast<float>(1.0 - c.beta1),
          c.beta2,
          static_cast<float>(1.0 - c.beta2),
          static_cast<float>(c.lr / bc1),
          static_cast<float>(std::sqrt(bc2)),
          c.eps};
}

/// The gradient norm is summed in double over chunks of this many elements,
/// each in order, then the chunks in order: the same bits whatever the
/// threads (and on a GPU, whose threads each sum one chunk).
constexpr int64_t kNormChunk = 1 << 14;

inline int64_t normChunks(int64_t n) { return (n + kNormChunk - 1) / kNormChunk; }

/// clip_grad_norm's desc [C, max_norm_bits, n[C]] and bufs (C gradients);
/// the total number of chunks, or -1 after recording the error in ctx.
inline int64_t checkClipGradNormDesc(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  using D = mgs::contract::ClipGradNormDesc;
  const char *kernel = kernelName(Kernel::clip_grad_norm);
  const int64_t count = desc[D::Count];
  const double maxNorm = descF64(desc, D::MaxNormBits);
  if (count < 0)
    return invalidArg(ctx, kernel, "gradient count ", count, " is negative"), -1;
  if (!(maxNorm > 0) || !std::isfinite(maxNorm))
    return invalidArg(ctx, kernel, "max_norm ", maxNorm, " is not a positive number"), -1;
  BufferCheck check(ctx, kernel, bufs);
  int64_t chunks = 0;
  for (int64_t g = 0; g < count; ++g) {
    const int64_t n = desc[D::sizeAt(g)];
    if (n < 0)
      return invalidArg(ctx, kernel, "gradient ", g, " has a negative size ", n), -1;
    if (!check.require(static_cast<int>(g), "grad", n).ok)
      return -1;
    chunks += normChunks(n);
  }
  return chunks;
}

/// Records the factor torch.nn.utils.clip_grad_norm_ multiplies every
/// gradient by, min(1, max_norm / (norm + 1e-6)), for the updates that follow
/// (the norm of the gradients the loss scale multiplied: divided by it).
inline void setClipScale(mgsrt_ctx_t *ctx, const int64_t *desc, double sumOfSquares) {
  const double norm = std::sqrt(sumOfSquares) * static_cast<double>(ctx->invLossScale);
  const double coef =
      descF64(desc, mgs::contract::ClipGradNormDesc::MaxNormBits) / (norm + 1e-6);
  ctx->gradScale = static_cast<float>(coef < 1 ? coef : 1.0);
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_OPTIMIZERDESC_H
