//===- LossScale.cpp - Loss scaling for half-precision training ----------===//
//
// Half's smallest subnormal is 2^-24 (6e-8): gradients below it round to
// zero. Loss scaling (as torch.amp.GradScaler) multiplies the gradient the
// loss starts backprop with by a scale S (mgsrt_ctx_set_loss_scale), and the
// updates divide it out again, so what they apply does not change. Between
// the two, the gradients, the exchange and the error-feedback residuals are
// in scaled units: a residual carried into a step of another scale is
// rescaled here (scaleResiduals), and files hold residuals unscaled.
//
// --loss-scale dynamic (the default for a model compiled with --precision
// f16) starts at --loss-scale-init (2^16). A step whose gradients overflow
// (not finite, while the loss is) is dropped on every worker alike (the
// params, optimizer state and residuals go back to before it:
// Nonfinite.cpp) and S halves; after --loss-scale-window steps in a row
// without overflow S doubles. Powers of two change nothing but exponents,
// so residuals rescale exactly.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "mgsrt/contract.h"

#include <cmath>
#include <cstdio>

namespace mgs::rt::driver {

using contract::manifest::isWorkerStateName;

int Driver::setupLossScale() {
  const bool f16 = m.precision == MGSRT_PRECISION_F16;
  const LossScaling mode =
      o.lossScaling != LossScaling::Default
          ? o.lossScaling
          : (f16 ? LossScaling::Dynamic : LossScaling::None);
  dynamicLossScale = mode == LossScaling::Dynamic;
  for (const char *option : {"--loss-scale-init", "--loss-scale-window"})
    if (!dynamicLossScale && o.given.count(option))
      return error("%s is for dynamic loss scaling (--loss-scale dynamic, the default for a "
                   "model compiled with --precision f16); this run's loss scale is %s",
                   option, mode == LossScaling::Static ? "fixed (--loss-scale S)" : "none");
  lossScale = mode == LossScaling::Static    ? static_cast<float>(o.lossScale)
              : mode == LossScaling::Dynamic ? static_cast<float>(o.lossScaleInit)
                                             : 1.0f;
  // A resumed dynamic run goes on at its checkpoint's scale (unless the
  // scale's start is given again); a checkpoint of a run without one has 0.
  if (dynamicLossScale && haveResumed && resumed.lossScale > 0 &&
      !o.given.count("--loss-scale-init")) {
    lossScale = static_cast<float>(resumed.lossScale);
    lossScaleSteps = resumed.lossScaleSteps;
  }
  mgsrt_ctx_set_loss_scale(ctx, lossScale);
  if (dynamicLossScale)
    std::printf("loss scale dynamic: from %g, halved with the step dropped when a gradient "
                "overflows, doubled after %lld steps without\n",
                static_cast<double>(lossScale), static_cast<long long>(o.lossScaleWindow));
  else if (mode == LossScaling::Static)
    std::printf("loss scale %g (fixed)\n", static_cast<double>(lossScale));
  else if (f16)
    std::printf("loss scale none (--loss-scale none): gradients below 6e-8 round to zero in "
                "half precision\n");
  return lossScale == 1.0f ? 0 : scaleResiduals(lossScale);
}

int Driver::scaleResiduals(float factor) {
  for (size_t i = 0; i < m.params.size(); ++i) {
    if (!isWorkerStateName(m.params[i].name))
      continue;
    if (int rc = toHost(params[i]))
      return rc;
    float *p = params[i].f32();
    const int64_t n = m.params[i].numElements();
    for (int64_t j = 0; j < n; ++j)
      p[j] *= factor;
    if (int rc = toDevice(params[i]))
      return rc;
  }
  return 0;
}

std::vector<float> Driver::paramForFile(size_t i) {
  const float *p = params[i].f32();
  std::vector<float> v(p, p + m.params[i].numElements());
  if (lossScale != 1.0f && isWorkerStateName(m.params[i].name))
    for (float &x : v)
      x /= lossScale;
  return v;
}

int Driver::backOffLossScale(int64_t epoch, int64_t it) {
  const float next = lossScale * 0.5f;
  if (next < static_cast<float>(kMinLossScale)) {
    // Every worker is here at once (checkStep's gather agreed on the overflow,
    // and the scale is the same on all): worker 0 says it, no abort.
    return errorOnEveryWorker(
        formatted("epoch %lld, iteration %lld: the gradients overflow at every loss scale (down "
                  "to %g): the loss is finite but its gradients are not; lower --lr or check "
                  "the data, or train with --precision f32",
                  static_cast<long long>(epoch + 1), static_cast<long long>(it + 1),
                  static_cast<double>(lossScale)));
  }
  std::printf("epoch %lld, iteration %lld: loss scale %g -> %g: a gradient overflowed (step "
              "dropped)\n",
              static_cast<long long>(epoch + 1), static_cast<long long>(it + 1),
              static_cast<double>(lossScale), static_cast<double>(next));
  lossScale = next;
  lossScaleSteps = 0;
  ++overflowSteps;
  mgsrt_ctx_set_loss_scale(ctx, lossScale);
  return scaleResiduals(0.5f);
}

int Driver::growLossScale() {
  if (++lossScaleSteps < static_cast<uint64_t>(o.lossScaleWindow))
    return 0;
  lossScaleSteps = 0;
  if (lossScale * 2.0f > static_cast<float>(kMaxLossScale))
    return 0;
  lossScale *= 2.0f;
  ++lossScaleGrowths;
  mgsrt_ctx_set_loss_scale(ctx, lossScale);
  return scaleResiduals(2.0f);
}

void Driver::printLossScaleSummary() {
  if (!dynamicLossScale)
    return;
  std::printf("loss scale %g at the end: %lld step(s) dropped for overflow, %lld doubling(s) "
              "this run\n",
              static_cast<double>(lossScale), static_cast<long long>(overflowSteps),
              static_cast<long long>(lossScaleGrowths));
}

} // namespace mgs::rt::driver
