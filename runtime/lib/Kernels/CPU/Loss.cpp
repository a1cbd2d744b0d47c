//===- Loss.cpp - Elementwise losses against float targets ----------------===//
//
// mgsrt_elementwise_loss (mgsrt.h): the mean of elementLoss
// (Descriptors/LossDesc.h) over every element, summed in double, and its
// gradient, the elements spread over the OpenMP threads.
//
//===----------------------------------------------------------------------===//

#include "Descriptors/LossDesc.h"
#include "Support/Common.h"

using namespace mgs::rt;

namespace {

mgsrt_status_t elementwiseLoss(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ElementwiseLossParams p;
  if (parseElementwiseLoss(ctx, kernelName(Kernel::elementwise_loss), desc, bufs, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *t = static_cast<const float *>(bufs[1]);
  float *loss = static_cast<float *>(bufs[2]);
  float *dx = static_cast<float *>(bufs[3]);
  const double invN = p.reductionScale();
  const double gradScale = invN * static_cast<double>(ctx->lossScale); // invN at scale 1
  double total = 0.0;
#pragma omp parallel for reduction(+ : total) if (p.count >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < p.count; ++i) {
    double grad;
    total += elementLoss(p, i, x[i], t[i], grad);
    if (dx)
      dx[i] = static_cast<float>(grad * gradScale);
  }
  *loss = static_cast<float>(total * invN);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t elementwise_loss(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::elementwise_loss), desc, bufs,
                   [&] { return elementwiseLoss(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
