//===- AccumulateGradients.cpp - Several batches per optimizer step -------===//
//
// train-accumulate-gradients: @accum_step (a batch's gradients added to the
// accumulators) beside @train_step (the last batch: accumulators plus its
// gradients exchanged and applied, then zeroed). Passes.td has the example.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainDialect.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Dialect/Train/Transforms/Passes.h"
#include "mgsrt/contract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINACCUMULATEGRADIENTS
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

/// The accumulator of `param`'s gradient.
std::string accumulatorName(StringRef param) {
  return std::string(contract::manifest::kAccumulatorPrefix) + param.str();
}

struct TrainAccumulateGradients : impl::TrainAccumulateGradientsBase<TrainAccumulateGradients> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (steps < 1 || steps > contract::manifest::kMaxAccumulate) {
      module.emitError() << "train-accumulate-gradients: steps must be a number of batches in "
                            "[1, "
                         << contract::manifest::kMaxAccumulate << "], got "
                         << static_cast<int64_t>(steps);
      return signalPassFailure();
    }
    if (steps == 1)
      return;
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train) {
      module.emitError() << "train-accumulate-gradients: no @train_step (run train-build-step "
                            "first)";
      return signalPassFailure();
    }
    if (module.lookupSymbol("accum_step")) {
      module.emitError() << "train-accumulate-gradients: the module already has @accum_step";
      return signalPassFailure();
    }
    if (failed(scaleLossGradient(train)))
      return signalPassFailure();

    // One accumulator per parameter with a gradient, beside the parameter.
    SmallVector<GradientOp> gradients(train.getOps<GradientOp>());
    for (GradientOp g : gradients) {
      std::string name = accumulatorName(g.getParam());
      auto param = module.lookupSymbol<ParameterOp>(g.getParam());
      if (!param) {
        g.emitOpError() << "names no train.parameter";
        return signalPassFailure();
      }
      if (module.lookupSymbol(name)) {
        g.emitOpError() << "has a second gradient, or the module a parameter @" << name
                        << " already";
        return signalPassFailure();
      }
      auto type = cast<RankedTensorType>(g.getType());
      OpBuilder b(param);
      b.setInsertionPointAfter(param);
      ParameterOp::create(b, param.getLoc(), b.getStringAttr(name), TypeAttr::get(type), UnitAttr(),
                          DenseElementsAttr::get(type, 0.0f));
      ++numAccumulators;
    }

    // @accum_step: the batch's gradients go into the accumulators; nothing
    // is exchanged or updated.
    OpBuilder mb(train);
    mb.setInsertionPointAfter(train);
    auto accum = cast<func::FuncOp>(mb.clone(*train));
    accum.setSymName("accum_step");
    // The batches per step, for the runtime's manifest.
    accum->setAttr(kAccumulateAttrName, mb.getI64IntegerAttr(steps));
    for (GradientOp g : llvm::make_early_inc_range(accum.getOps<GradientOp>())) {
      OpBuilder b(g);
      Value sum = addAccumulator(b, g);
      AssignParamOp::create(b, g.getLoc(), accumulatorRef(g), sum);
      for (Operation *user : llvm::make_early_inc_range(g->getUsers())) {
        if (!isa<SGDUpdateOp>(user)) {
          user->emitOpError() << "uses a gradient other than to update its parameter; "
                                 "train-accumulate-gradients runs before the passes that do";
          return signalPassFailure();
        }
        user->erase();
      }
      g.erase();
    }

    // @train_step: each gradient marks the accumulator plus the batch's;
    // the accumulators are zeroed last, after every update read them.
    auto ret = cast<func::ReturnOp>(train.getBody().front().getTerminator());
    for (GradientOp g : gradients) {
      OpBuilder b(g);
      g.getGradMutable().assign(addAccumulator(b, g));
      b.setInsertionPoint(ret);
      auto type = cast<RankedTensorType>(g.getType());
      Value zeros =
          arith::ConstantOp::create(b, g.getLoc(), type, DenseElementsAttr::get(type, 0.0f));
      AssignParamOp::create(b, g.getLoc(), accumulatorRef(g), zeros);
    }
  }

  FlatSymbolRefAttr accumulatorRef(GradientOp g) {
    return FlatSymbolRefAttr::get(&getContext(), accumulatorName(g.getParam()));
  }

  /// accumulator + g's gradient, built at b's insertion point.
  Value addAccumulator(OpBuilder &b, GradientOp g) {
    Type type = g.getType();
    Value acc = GetParamOp::create(b, g.getLoc(), type, accumulatorRef(g));
    return AddOp::create(b, g.getLoc(), type, acc, g.getGrad());
  }

  /// Multiplies the loss's gradient by 1 / steps, unless the loss sums.
  LogicalResult scaleLossGradient(func::FuncOp train) {
    Value grad;
    bool sum = false;
    int losses = 0;
    train.walk([&](Operation *op) {
      if (auto ce = dyn_cast<SoftmaxCrossEntropyOp>(op); ce && !ce.getInGraph()) {
        grad = ce.getDlogits();
        sum = ce.getSum();
        ++losses;
      } else if (auto el = dyn_cast<ElementwiseLossOp>(op)) {
        grad = el.getDprediction();
        sum = el.getSum();
        ++losses;
      }
    });
    if (losses != 1)
      return train.emitError() << "train-accumulate-gradients: @train_step must have one loss "
                                  "(train.softmax_cross_entropy or train.elementwise_loss), has "
                               << losses;
    if (sum)
      return success();
    OpBuilder b(train.getContext());
    b.setInsertionPointAfterValue(grad);
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    const float factor = static_cast<float>(1.0 / static_cast<double>(steps));
    Value c =
        arith::ConstantOp::create(b, grad.getLoc(), scalar, DenseElementsAttr::get(scalar, factor));
    auto scaled = MulOp::create(b, grad.getLoc(), grad.getType(), grad, c);
    grad.replaceAllUsesExcept(scaled, scaled);
    return success();
  }
};

} // namespace
} // namespace mgs::train
