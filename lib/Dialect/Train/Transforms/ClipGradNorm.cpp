//===- ClipGradNorm.cpp - Global gradient-norm clipping -------------------===//
//
// train-clip-grad-norm: one train.clip_grad_norm over every update's
// gradient, the updates moved after it (Passes.td has the example).
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Dialect/Train/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINCLIPGRADNORM
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

struct TrainClipGradNorm : impl::TrainClipGradNormBase<TrainClipGradNorm> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!(maxNorm > 0) || !std::isfinite(maxNorm)) {
      func.emitError() << "train-clip-grad-norm: max-norm must be a positive number, got "
                       << maxNorm;
      return signalPassFailure();
    }
    SmallVector<SGDUpdateOp> updates(func.getOps<SGDUpdateOp>());
    if (updates.empty())
      return;
    // Every gradient is defined before its update, so all of them before the
    // last update: the norm goes right after it, and the updates after the norm.
    Operation *last = updates.front();
    for (SGDUpdateOp u : updates)
      if (u->getBlock() != last->getBlock()) {
        u.emitOpError() << "is not in the block of the other updates; cannot clip the "
                           "global gradient norm";
        return signalPassFailure();
      } else if (last->isBeforeInBlock(u)) {
        last = u;
      }
    SmallVector<Value> grads;
    for (SGDUpdateOp u : updates)
      grads.push_back(u.getGrad());
    OpBuilder b(func.getContext());
    b.setInsertionPointAfter(last);
    auto clip = ClipGradNormOp::create(b, last->getLoc(), grads, b.getF64FloatAttr(maxNorm));
    Operation *after = clip;
    for (SGDUpdateOp u : updates) {
      u->moveAfter(after);
      after = u;
    }
  }
};

} // namespace
} // namespace mgs::train
