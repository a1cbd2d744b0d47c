//===- SoftmaxDesc.h - Softmax descriptors, parsed and checked --*- C++ -*-===//
//
// The descriptor and buffer checks of softmax_fwd/bwd and
// softmax_cross_entropy, shared by the CPU kernels (Softmax.cpp) and the CUDA
// ones (CUDA/Softmax.cu), so both reject the same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_SOFTMAXDESC_H
#define MGSRT_DESCRIPTORS_SOFTMAXDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

struct SoftmaxParams {
  int64_t outer, axis, inner;
  bool log;
};

/// softmax_fwd (bufs: x, y) or softmax_bwd (bufs: y, dy, dx).
inline mgsrt_status_t parseSoftmax(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                   void *const *bufs, bool bwd, SoftmaxParams &p) {
  using F = mgs::contract::SoftmaxDesc;
  p.outer = desc[F::Outer];
  p.axis = desc[F::Axis];
  p.inner = desc[F::Inner];
  if (p.outer < 0 || p.axis < 0 || p.inner < 0)
    return invalidArg(ctx, kernel, "outer=", p.outer, " axis=", p.axis, " inner=", p.inner,
                      " must not be negative");
  const int64_t log = desc[F::Log];
  if (log != 0 && log != 1)
    return invalidArg(ctx, kernel, "log flag ", log, " must be 0 or 1");
  p.log = log;
  BufferCheck check(ctx, kernel, bufs);
  if (!bwd)
    check.require(0, "x").require(1, "y");
  else
    check.require(0, "y").require(1, "dy").require(2, "dx");
  return check.ok ? MGSRT_OK : ctx->status;
}

struct CrossEntropyParams {
  int64_t n, c;
  int64_t ignoreIndex;  ///< labels equal to it are not counted
  double smoothing;     ///< label smoothing, in [0, 1]
  const float *weight;  ///< the class weights (C), or null: every class 1
  bool sum;             ///< reduction "sum": not divided by the counted labels' weight
  bool perSample;       ///< reduction "none": each sample's loss, not divided
  bool unscaled;        ///< the gradient not multiplied by the loss scale
  bool logProbabilities; ///< no softmax: -w[label] logit[label] a row (NLL)
  /// What the loss and its gradient are scaled by, given the counted labels'
  /// weight `norm`: 1 / norm for the mean (0 when nothing counts: PyTorch's
  /// 0 / 0), 1 for the sum and for each sample's loss.
  MGSRT_HOST_DEVICE double reductionScale(double norm) const {
    return sum || perSample ? 1.0 : norm != 0.0 ? 1.0 / norm : 0.0;
  }
  /// Whether `label` is counted (false: ignored); `bad` is set when it is
  /// neither a class nor ignore_index.
  MGSRT_HOST_DEVICE bool counts(int64_t label, bool &bad) const {
    bad = label != ignoreIndex && (label < 0 || label >= c);
    return label != ignoreIndex;
  }
  /// Class j's weight (1 without weights).
  MGSRT_HOST_DEVICE double classWeight(int64_t j) const { return weight ? weight[j] : 1.0; }
  /// What a counted sample of class `label` weighs in the mean, and in its
  /// row's softmax term: (1 - e) w[label] + e / C sum_j w[j], given the sum
  /// of the weights.
  MGSRT_HOST_DEVICE double rowScale(int64_t label, double weightSum) const {
    return (1.0 - smoothing) * classWeight(label) + smoothing * weightSum / c;
  }
};

/// softmax_cross_entropy (bufs: logits, labels, loss, dlogits?, weight?).
/// The labels are checked by the kernel (they are data): see badLabel.
inline mgsrt_status_t parseCrossEntropy(mgsrt_ctx_t *ctx, const char *kernel,
                                        const int64_t *desc, void *const *bufs,
                                        CrossEntropyParams &p) {
  using F = mgs::contract::SoftmaxCrossEntropyDesc;
  p.n = desc[F::Batch];
  p.c = desc[F::Classes];
  p.ignoreIndex = desc[F::IgnoreIndex];
  p.smoothing = descF64(desc, F::LabelSmoothingBits);
  if (p.n < 1 || p.c < 1)
    return invalidArg(ctx, kernel, "N=", p.n, " C=", p.c, " must be positive");
  if (!(p.smoothing >= 0.0 && p.smoothing <= 1.0))
    return invalidArg(ctx, kernel, "label smoothing ", p.smoothing, " must be in [0, 1]");
  const int64_t flags = desc[F::Flags];
  const int64_t reduction = flags & ~F::kLogProbabilities;
  if ((reduction & ~(F::kSum | F::kUnscaled | F::kPerSample)) ||
      ((reduction & F::kPerSample) && reduction != (F::kPerSample | F::kUnscaled)))
    return invalidArg(ctx, kernel, "flags ", flags,
                      " must be 0 to 3, or 6 (each sample's loss, inside the graph's loss), "
                      "each maybe plus 8 (log-probabilities)");
  p.sum = (flags & F::kSum) != 0;
  p.unscaled = (flags & F::kUnscaled) != 0;
  p.perSample = (flags & F::kPerSample) != 0;
  p.logProbabilities = (flags & F::kLogProbabilities) != 0;
  if (p.logProbabilities && p.smoothing != 0.0)
    return invalidArg(ctx, kernel, "label smoothing ", p.smoothing,
                      " with log-probabilities (flag 8): the negative log-likelihood has none");
  if (!BufferCheck(ctx, kernel, bufs).require(0, "logits").require(1, "labels").require(2, "loss").ok)
    return ctx->status;
  p.weight = static_cast<const float *>(bufs[4]);
  return MGSRT_OK;
}

/// Records the error for the first sample whose label is outside [0, c) and
/// not the ignored index.
inline mgsrt_status_t badLabel(mgsrt_ctx_t *ctx, const char *kernel, int64_t label,
                               int64_t sample, const CrossEntropyParams &p) {
  return invalidArg(ctx, kernel, "label ", label, " of sample ", sample, " is outside [0, ", p.c,
                    ") and is not the ignored index ", p.ignoreIndex);
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_SOFTMAXDESC_H
