//===- LossDesc.h - elementwise_loss, parsed and checked --------*- C++ -*-===//
//
// The descriptor and buffer checks of elementwise_loss and the loss of one
// element, shared by the CPU kernel (CPU/Loss.cpp) and the CUDA one
// (CUDA/Loss.cu), so both reject the same input with the same words and
// compute the same values.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_LOSSDESC_H
#define MGSRT_DESCRIPTORS_LOSSDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <cmath>

namespace mgs::rt {

struct ElementwiseLossParams {
  int kind;     ///< MGSRT_LOSS_*
  int64_t count;
  double beta;  ///< smooth_l1's
  int64_t last; ///< the length of the last axis
  const float *posWeight; ///< bce_with_logits's, one per position of the last axis, or null
  bool sum;               ///< reduction "sum": not divided by count
  /// What the loss and its gradient are scaled by: 1 / count, or 1 for the sum.
  MGSRT_HOST_DEVICE double reductionScale() const {
    return sum ? 1.0 : 1.0 / static_cast<double>(count);
  }
  /// Element i's pos_weight (1 without).
  MGSRT_HOST_DEVICE double positiveWeight(int64_t i) const {
    return posWeight ? posWeight[i % last] : 1.0;
  }
};

/// elementwise_loss (bufs: x, t, loss, dx?, pos_weight?).
inline mgsrt_status_t parseElementwiseLoss(mgsrt_ctx_t *ctx, const char *kernel,
                                           const int64_t *desc, void *const *bufs,
                                           ElementwiseLossParams &p) {
  using F = mgs::contract::ElementwiseLossDesc;
  const int64_t kind = desc[F::Kind];
  if (kind < MGSRT_LOSS_MSE || kind > MGSRT_LOSS_VALUE)
    return invalidArg(ctx, kernel, "unknown loss kind ", kind);
  p.kind = static_cast<int>(kind);
  p.count = desc[F::Count];
  p.beta = descF64(desc, F::BetaBits);
  p.last = desc[F::Last];
  if (p.count < 1)
    return invalidArg(ctx, kernel, "count=", p.count, " must be positive");
  if (p.last < 1 || p.count % p.last != 0)
    return invalidArg(ctx, kernel, "last axis ", p.last, " must be positive and divide count=",
                      p.count);
  if (!(p.beta >= 0.0) || std::isinf(p.beta))
    return invalidArg(ctx, kernel, "smooth_l1 beta ", p.beta, " must be finite and >= 0");
  if (desc[F::Sum] != 0 && desc[F::Sum] != 1)
    return invalidArg(ctx, kernel, "sum flag ", desc[F::Sum], " must be 0 or 1");
  p.sum = desc[F::Sum] == 1;
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "x", p.count)
           .require(1, "t", p.count)
           .require(2, "loss", 1)
           .ok)
    return ctx->status;
  p.posWeight = static_cast<const float *>(bufs[4]);
  if (p.posWeight && p.kind != MGSRT_LOSS_BCE_WITH_LOGITS)
    return invalidArg(ctx, kernel, "pos_weight is bce_with_logits's, not loss kind ", kind);
  return MGSRT_OK;
}

/// The loss of prediction x against target t (element i), in double, and its
/// derivative in x (`grad`). smooth_l1 with beta 0 is l1, as in PyTorch.
MGSRT_HOST_DEVICE inline double elementLoss(const ElementwiseLossParams &p, int64_t i, float x,
                                            float t, double &grad) {
  const double d = static_cast<double>(x) - static_cast<double>(t);
  const double sign = (d > 0.0) - (d < 0.0);
  switch (p.kind) {
  case MGSRT_LOSS_MSE:
    grad = 2.0 * d;
    return d * d;
  case MGSRT_LOSS_L1:
    grad = sign;
    return std::fabs(d);
  case MGSRT_LOSS_SMOOTH_L1:
    if (std::fabs(d) < p.beta) {
      grad = d / p.beta;
      return 0.5 * d * d / p.beta;
    }
    grad = sign;
    return std::fabs(d) - 0.5 * p.beta;
  case MGSRT_LOSS_VALUE: // the graph's loss itself
    grad = 1.0;
    return x;
  default: { // MGSRT_LOSS_BCE_WITH_LOGITS
    const double xd = x, td = t, e = std::exp(-std::fabs(xd));
    const double sigmoid = xd >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    if (!p.posWeight) {
      grad = sigmoid - td;
      return (xd > 0.0 ? xd : 0.0) - xd * td + std::log1p(e);
    }
    // -log(1 - sigmoid(x)) = softplus(x) weighs 1 - t, -log sigmoid(x) =
    // softplus(-x) weighs pos_weight t.
    const double w = 1.0 + (p.positiveWeight(i) - 1.0) * td;
    grad = (1.0 - td) - w * (1.0 - sigmoid);
    return (1.0 - td) * xd + w * (std::log1p(e) + (xd < 0.0 ? -xd : 0.0));
  }
  }
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_LOSSDESC_H
