//===- BuildTrainStep.cpp - Training and evaluation steps -----------------===//
//
// @forward -> @train_step (forward as exported, loss, backward, SGD, BatchNorm
// running statistics) and @eval_step (forward in inference form).
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/Transforms/Autodiff.h"
#include "mgs/Dialect/Train/IR/TrainDialect.h"
#include "mgs/Dialect/Train/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINBUILDSTEP
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

/// Switches BatchNorm and dropout to their inference form.
void makeInference(func::FuncOp func) {
  func.walk([](Operation *op) {
    if (auto bn = dyn_cast<BatchNormOp>(op))
      bn.setTraining(false);
    else if (auto drop = dyn_cast<DropoutOp>(op))
      drop.setTraining(false);
  });
}

struct TrainBuildStep : impl::TrainBuildStepBase<TrainBuildStep> {
  using TrainBuildStepBase::TrainBuildStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(forwardName);
    if (!forward) {
      module.emitError() << "train-build-step: no function @" << forwardName
                         << " (the imported forward graph) in the module";
      return signalPassFailure();
    }
    if (!forward.getBody().hasOneBlock()) {
      forward.emitError() << "train-build-step: @" << forwardName
                          << " must be one straight-line block";
      return signalPassFailure();
    }
    // The steps this pass builds: a symbol of that name already is a clash.
    for (StringRef step : {"eval_step", "train_step"}) {
      if (step == "train_step" && inferenceOnly)
        continue;
      if (Operation *existing = module.lookupSymbol(step)) {
        existing->emitError() << "train-build-step: the module has a symbol @" << step
                              << " already; the pass builds @" << step << " from @"
                              << forwardName;
        return signalPassFailure();
      }
    }

    if (elementwiseLossKind().empty() && loss != "cross-entropy") {
      module.emitError() << "train-build-step: unknown loss '" << loss
                         << "'; expected cross-entropy, mse, l1, smooth-l1 or bce-with-logits";
      return signalPassFailure();
    }
    if (!(smoothL1Beta >= 0.0) || std::isinf(static_cast<float>(smoothL1Beta))) {
      module.emitError() << "train-build-step: smooth-l1-beta must be finite and >= 0, got "
                         << smoothL1Beta;
      return signalPassFailure();
    }
    if (!(labelSmoothing >= 0.0 && labelSmoothing <= 1.0)) {
      module.emitError() << "train-build-step: label-smoothing must be in [0, 1], got "
                         << labelSmoothing;
      return signalPassFailure();
    }
    if (!classWeights.empty() && !elementwiseLossKind().empty()) {
      module.emitError() << "train-build-step: class-weights weigh the cross-entropy's classes; "
                            "the "
                         << loss << " loss has none";
      return signalPassFailure();
    }
    if (!posWeight.empty() && loss != "bce-with-logits") {
      module.emitError() << "train-build-step: pos-weight weighs bce-with-logits's positive "
                            "targets; the loss is "
                         << loss;
      return signalPassFailure();
    }
    if (reduction != "mean" && reduction != "sum") {
      module.emitError() << "train-build-step: reduction must be mean or sum, got '" << reduction
                         << "'";
      return signalPassFailure();
    }
    if (classAxis != 0 && (inferenceOnly || !elementwiseLossKind().empty())) {
      module.emitError() << "train-build-step: class-axis is the cross-entropy's class axis; "
                         << (inferenceOnly ? "inference-only builds no loss"
                                           : "the loss is " + loss);
      return signalPassFailure();
    }
    CrossEntropy crossEntropy{ignoreIndex,
                              SmallVector<double>(classWeights.begin(), classWeights.end()),
                              "class-weights", reduction == "sum"};
    if (!inferenceOnly && failed(applyGraphLoss(forward, crossEntropy)))
      return signalPassFailure();
    if (!inferenceOnly && elementwiseLossKind().empty() && failed(flattenClassAxis(forward)))
      return signalPassFailure();

    // With a training step, @eval_step is its evaluation counterpart (the
    // inference form); alone, it is the forward graph exactly as given, with
    // ONNX's semantics (a BatchNorm in training mode uses batch statistics),
    // unless eval-mode asks for the inference form.
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(forward);
    auto eval = cast<func::FuncOp>(b.clone(*forward));
    eval.setSymName("eval_step");
    if (!inferenceOnly || evalMode)
      makeInference(eval);
    if (failed(checkWeights(module, crossEntropy.weightsSource, "class", crossEntropy.weights)) ||
        failed(checkWeights(module, "pos-weight", "position", posWeight)))
      return signalPassFailure();
    if (!inferenceOnly && failed(buildTrainStep(forward, crossEntropy)))
      return signalPassFailure();
    forward.erase();
    // The gradients are built: a detached value is its input from here on.
    module.walk([](StopGradientOp stop) {
      stop.replaceAllUsesWith(stop.getInput());
      stop.erase();
    });
  }

  /// The cross-entropy's ignored label, class weights and reduction: the
  /// options', or those of the loss the exported graph computed.
  struct CrossEntropy {
    int64_t ignoreIndex;
    SmallVector<double> weights;
    std::string weightsSource; ///< how errors name the weights
    bool sum;                  ///< reduction "sum"
    /// The graph's NLL of its scores as they are (log_probabilities).
    bool logProbabilities = false;
  };

  /// The loss the exported graph computed (kGraphLossAttrName), if any: its
  /// ignore_index and class weights are trained, and options that say
  /// otherwise are errors. Label smoothing, which ONNX's loss ops cannot
  /// say, comes from the options.
  LogicalResult applyGraphLoss(func::FuncOp forward, CrossEntropy &ce) {
    auto record = forward->getAttrOfType<DictionaryAttr>(kGraphLossAttrName);
    if (!record)
      return success();
    auto node = record.getAs<StringAttr>("node");
    auto op = record.getAs<StringAttr>("op");
    if (!node || !op)
      return forward.emitError() << "train-build-step: " << kGraphLossAttrName
                                 << " needs 'node' and 'op' strings";
    std::string source =
        ("the graph's loss (node '" + node.getValue() + "', " + op.getValue() + ")").str();
    if (loss != "cross-entropy")
      return forward.emitError() << "train-build-step: @" << forward.getSymName() << " trains "
                                 << source << ", a cross-entropy; the loss option asks for "
                                 << loss;
    if (auto ignore = record.getAs<IntegerAttr>("ignore_index")) {
      if (ce.ignoreIndex != -100 && ce.ignoreIndex != ignore.getInt())
        return forward.emitError() << "train-build-step: " << source << " ignores label "
                                   << ignore.getInt() << "; the ignore-index option says "
                                   << ce.ignoreIndex;
      ce.ignoreIndex = ignore.getInt();
    } else if (ce.ignoreIndex != -100) {
      return forward.emitError() << "train-build-step: " << source
                                 << " counts every label; the ignore-index option says "
                                 << ce.ignoreIndex;
    }
    auto weight = record.getAs<DenseElementsAttr>("weight");
    if (weight && !weight.getElementType().isF32())
      return forward.emitError() << "train-build-step: " << kGraphLossAttrName
                                 << "'s weight must be float32 values, got " << weight.getType();
    if (!ce.weights.empty())
      return forward.emitError() << "train-build-step: class-weights: " << source
                                 << (weight ? " has its own class weights" : " has no class weights")
                                 << ", which are trained";
    if (weight) {
      for (float w : weight.getValues<float>())
        ce.weights.push_back(w);
      ce.weightsSource = "the class weights of " + source;
    }
    auto reductionAttr = record.getAs<StringAttr>("reduction");
    const bool graphSum = reductionAttr && reductionAttr.getValue() == "sum";
    if (ce.sum && !graphSum)
      return forward.emitError() << "train-build-step: " << source
                                 << " takes the mean; the reduction option says sum";
    ce.sum = graphSum;
    ce.logProbabilities = static_cast<bool>(record.get("log_probabilities"));
    if (ce.logProbabilities && labelSmoothing != 0.0)
      return forward.emitError() << "train-build-step: label-smoothing: " << source
                                 << " is the negative log-likelihood of its input as it is, "
                                    "which has no label smoothing";
    return success();
  }

  /// The cross-entropy of a first output of rank >= 3 (class-axis given):
  /// in @forward itself, the class axis moved last (train.transpose, unless
  /// it is last) and the rest flattened into rows (N * d1 * ..., C), sample
  /// by sample (train.reshape), as PyTorch's CrossEntropyLoss pairs the
  /// scores with labels (N, d1, ...). @eval_step, cloned from @forward after
  /// this, gives the driver's accuracy the same rows. An N x C output takes
  /// class-axis 1 (or -1) and stays as it is.
  LogicalResult flattenClassAxis(func::FuncOp forward) {
    FunctionType type = forward.getFunctionType();
    if (type.getNumResults() == 0)
      return success(); // buildTrainStep says it
    auto out = dyn_cast<RankedTensorType>(type.getResult(0));
    if (!out || out.getRank() < 2)
      return success(); // buildTrainStep says it
    const int64_t rank = out.getRank();
    const char *classesWhere =
        "class-axis 1 (classes second, (N, C, d1, ...): PyTorch's CrossEntropyLoss on the "
        "output as it is, as for per-pixel scores) or class-axis -1 (classes last, (N, d1, ..., "
        "C): a language model's (N, L, vocab)); or, against float targets of its shape, loss "
        "mse, l1, smooth-l1 or bce-with-logits";
    if (classAxis != 0 && forward->hasAttr(kGraphLossAttrName))
      return forward.emitError() << "train-build-step: class-axis: the graph's loss sets the "
                                    "class axis (ONNX's: 1, its scores flattened at import)";
    if (classAxis == 0 && rank == 2)
      return success();
    if (classAxis == 0)
      return forward.emitError() << "train-build-step: the first output " << out << " has rank "
                                 << rank
                                 << ": the cross-entropy needs its class axis: " << classesWhere;
    if (classAxis < -(rank - 1) || classAxis > rank - 1)
      return forward.emitError() << "train-build-step: class-axis "
                                 << static_cast<int64_t>(classAxis)
                                 << " is not an axis of the first output " << out
                                 << " but the batch's (1.." << rank - 1 << ", or -1..-" << rank - 1
                                 << " from the back)";
    const int64_t axis = classAxis < 0 ? classAxis + rank : classAxis;
    if (rank == 2)
      return success();
    if (!out.hasStaticShape() || out.getNumElements() == 0)
      return forward.emitError() << "train-build-step: the first output " << out
                                 << " must have a static shape and elements";
    auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    OpBuilder b(ret);
    Location loc = ret.getLoc();
    Value scores = ret.getOperand(0);
    if (axis != rank - 1) {
      SmallVector<int64_t> perm, dims;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis)
          perm.push_back(d);
      perm.push_back(axis);
      for (int64_t d : perm)
        dims.push_back(out.getDimSize(d));
      scores = TransposeOp::create(b, loc, RankedTensorType::get(dims, out.getElementType()),
                                   scores, b.getDenseI64ArrayAttr(perm));
    }
    const int64_t classes = out.getDimSize(axis);
    auto rows =
        RankedTensorType::get({out.getNumElements() / classes, classes}, out.getElementType());
    labelShape.clear();
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        labelShape.push_back(out.getDimSize(d));
    scores = ReshapeOp::create(b, loc, rows, scores);
    ret->setOperand(0, scores);
    SmallVector<Type> results(type.getResults());
    results[0] = rows;
    forward.setType(b.getFunctionType(type.getInputs(), results));
    return success();
  }

  /// The positions of the scores flattenClassAxis made rows of, (N, d1, ...):
  /// the shape of the labels' data (empty: one label a row, or (N, L)).
  SmallVector<int64_t> labelShape;

  /// Every weight of `option` finite (in float32) and >= 0.
  static LogicalResult checkWeights(ModuleOp module, StringRef option, StringRef what,
                                    ArrayRef<double> weights) {
    for (auto [j, w] : llvm::enumerate(weights))
      if (!(w >= 0.0) || std::isinf(static_cast<float>(w))) {
        char given[32];
        std::snprintf(given, sizeof given, "%g", w);
        return module.emitError() << "train-build-step: " << option << ": the weight of " << what
                                  << " " << j << " must be finite and >= 0, got " << given;
      }
    return success();
  }

  /// `option`'s weights as a float32 constant of `count` values (null when
  /// none are given); an error when there are not `count` of them, which
  /// says "the <output> <type> <has> <count> <what>".
  FailureOr<Value> weightsConstant(OpBuilder &b, func::FuncOp forward, StringRef option,
                                   ArrayRef<double> weights, int64_t count, StringRef output,
                                   RankedTensorType type, StringRef has, StringRef what) {
    if (weights.empty())
      return Value();
    if (static_cast<int64_t>(weights.size()) != count)
      return forward.emitError() << "train-build-step: " << option << " has " << weights.size()
                                 << " values, but the " << output << " " << type << " " << has
                                 << " " << count << " " << what;
    SmallVector<float> values(weights.begin(), weights.end());
    auto weightType = RankedTensorType::get({count}, b.getF32Type());
    return Value(arith::ConstantOp::create(
        b, forward.getLoc(), weightType, DenseElementsAttr::get(weightType, ArrayRef<float>(values))));
  }

  /// The train.elementwise_loss kind of `loss` (its CLI spelling with '-';
  /// "graph" is "value"), or "" for the cross-entropy (or an unknown name).
  StringRef elementwiseLossKind() const {
    if (loss == "graph")
      return "value";
    std::string name = loss;
    std::replace(name.begin(), name.end(), '-', '_');
    for (StringRef kind : kElementwiseLossKinds)
      if (name == kind)
        return kind;
    return "";
  }

  LogicalResult buildTrainStep(func::FuncOp forward, const CrossEntropy &crossEntropy) {
    FunctionType type = forward.getFunctionType();
    if (type.getNumResults() == 0)
      return forward.emitError() << "train-build-step: @" << forward.getSymName()
                                 << " has no outputs to train";
    auto logitsType = cast<RankedTensorType>(type.getResult(0));
    const StringRef lossKind = elementwiseLossKind();
    const bool lossInGraph = lossKind == "value";
    if (lossInGraph && (logitsType.getRank() != 0 || !logitsType.getElementType().isF32()))
      return forward.emitError() << "train-build-step: loss graph trains the first output as the "
                                    "loss the graph computes: a float32 scalar, got "
                                 << logitsType;
    if (lossKind.empty() && logitsType.getRank() != 2)
      return forward.emitError() << "train-build-step: the first output is the logits and must "
                                    "be N x C (batch x classes), or of rank >= 3 with "
                                    "class-axis, got "
                                 << logitsType
                                 << " (another output trains against float targets of its "
                                    "shape: loss mse, l1, smooth-l1 or bce-with-logits)";
    if (lossKind.empty() && logitsType.getDimSize(1) == 0)
      return forward.emitError() << "train-build-step: the first output is the logits and has no "
                                    "classes, got "
                                 << logitsType;
    if (!lossKind.empty() && !lossInGraph &&
        (logitsType.getRank() < 1 || !logitsType.getElementType().isF32()))
      return forward.emitError() << "train-build-step: the " << loss
                                 << " loss's first output must be a float32 tensor with the "
                                    "batch first, got "
                                 << logitsType;

    OpBuilder b(forward);
    auto step = cast<func::FuncOp>(b.clone(*forward));
    step.setSymName("train_step");
    Block &body = step.getBody().front();
    // Class labels (one per row), or float targets of the output's shape (a
    // scalar the graph's loss does not read).
    auto labelsType = lossKind.empty()
                          ? RankedTensorType::get({logitsType.getDimSize(0)}, b.getI64Type())
                          : logitsType;
    Value labels = body.addArgument(labelsType, step.getLoc());
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);

    b.setInsertionPoint(ret);
    Value logits = ret.getOperand(0);
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Value lossValue, dlogits;
    if (lossKind.empty()) {
      FailureOr<Value> weight =
          weightsConstant(b, forward, crossEntropy.weightsSource, crossEntropy.weights,
                          logitsType.getDimSize(1),
                          "logits", logitsType, "have", "classes");
      if (failed(weight))
        return failure();
      auto ce = SoftmaxCrossEntropyOp::create(
          b, ret.getLoc(), scalar, logitsType, logits, labels, *weight,
          b.getI64IntegerAttr(crossEntropy.ignoreIndex),
          b.getF32FloatAttr(static_cast<float>(labelSmoothing)),
          crossEntropy.sum ? b.getUnitAttr() : nullptr, /*in_graph=*/nullptr,
          /*per_sample=*/nullptr, crossEntropy.logProbabilities ? b.getUnitAttr() : nullptr);
      lossValue = ce.getLoss();
      dlogits = ce.getDlogits();
    } else {
      FailureOr<Value> positive = weightsConstant(
          b, forward, "pos-weight", posWeight, lossInGraph ? 0 : logitsType.getShape().back(),
          "output", logitsType, "has", "positions on its last axis");
      if (failed(positive))
        return failure();
      auto el = ElementwiseLossOp::create(b, ret.getLoc(), scalar, logitsType,
                                          b.getStringAttr(lossKind), logits, labels, *positive,
                                          b.getF32FloatAttr(static_cast<float>(smoothL1Beta)),
                                          reduction == "sum" ? b.getUnitAttr() : nullptr);
      lossValue = el.getLoss();
      dlogits = el.getDprediction();
    }
    auto result = buildBackward(b, forwardOps, logits, dlogits);
    if (failed(result))
      return failure();
    numGradients += result->numGradients;
    numBackwardOps += result->numBackwardOps;

    // BatchNorm running statistics become the new state.
    for (Operation *op : forwardOps) {
      auto bn = dyn_cast<BatchNormOp>(op);
      if (!bn || !bn.getTraining())
        continue;
      for (auto [stat, updated] : {std::pair{bn.getMean(), bn.getRunningMean()},
                                   std::pair{bn.getVar(), bn.getRunningVar()}})
        if (auto get = stat.getDefiningOp<GetParamOp>())
          AssignParamOp::create(b, bn.getLoc(), get.getNameAttr(), updated);
    }

    SmallVector<Value> results{lossValue};
    llvm::append_range(results, ret.getOperands());
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();

    SmallVector<Type> argTypes(type.getInputs());
    argTypes.push_back(labelsType);
    step.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
    step.setArgAttr(argTypes.size() - 1, "train.name", b.getStringAttr("labels"));
    // With class-axis, the positions the rows come from, (N, d1, ...): the
    // shape the labels' data must have (the manifest's label_shape).
    if (!labelShape.empty())
      step.setArgAttr(argTypes.size() - 1, kLabelShapeAttrName, b.getDenseI64ArrayAttr(labelShape));
    // Result attributes shift by one: the loss comes first.
    SmallVector<DictionaryAttr> resultAttrs{b.getDictionaryAttr(
        b.getNamedAttr("train.name", b.getStringAttr("loss")))};
    for (unsigned i = 0; i < type.getNumResults(); ++i)
      resultAttrs.push_back(forward.getResultAttrDict(i));
    step.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
} // namespace mgs::train
