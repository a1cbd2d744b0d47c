//===- Loss.cpp - Cross-entropies inside a loss the graph computes --------===//
//
// See Loss.h. The op computes its gradient with its loss (dlogits); the
// backward multiplies it by the gradient of its loss within the graph's
// (Autodiff.cpp).
//
//===----------------------------------------------------------------------===//

#include "converters/Loss.h"
#include "GraphLoss.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

static int64_t rankOf(Value v) { return static_cast<int64_t>(shapeOf(v).size()); }

/// Whether `v` is normalized over its `axis`: a LogSoftmax, or the Log of a
/// Softmax, over it.
static bool normalizedOver(Value v, int64_t axis) {
  if (auto log = v.getDefiningOp<LogOp>()) {
    auto softmax = log.getInput().getDefiningOp<SoftmaxOp>();
    return softmax && normalizedAxis(softmax.getAxis(), rankOf(v)) == axis;
  }
  auto logSoftmax = v.getDefiningOp<LogSoftmaxOp>();
  return logSoftmax && normalizedAxis(logSoftmax.getAxis(), rankOf(v)) == axis;
}

/// Whether `v` holds log-probabilities over its axis 1 (GraphLoss.cpp's rule,
/// on the imported ops): normalized over it, or rows (M, C) reshaped from a
/// tensor normalized over its last axis, of C.
static bool holdsLogProbabilities(Value v) {
  if (normalizedOver(v, 1))
    return true;
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape || rankOf(v) != 2)
    return false;
  ArrayRef<int64_t> in = shapeOf(reshape.getInput());
  return !in.empty() && in.back() == shapeOf(v)[1] &&
         normalizedOver(reshape.getInput(), rankOf(reshape.getInput()) - 1);
}

LogicalResult convertCrossEntropyInGraph(NodeImporter &n) {
  auto scores = n.input(0);
  if (failed(scores))
    return failure();
  const bool nll = n.node().op_type() == "NegativeLogLikelihoodLoss";
  Value logits = *scores;
  // NLL of anything else (torch.log(probs + eps), a log-sigmoid, ...): its
  // input as it is, -w[label] x[label] a row (log_probabilities).
  bool logProbabilities = false;
  if (nll) {
    // -log_softmax(h)[label] is h's cross-entropy; and log-probabilities are
    // their own logits (log_softmax(log p) = log p), the gradient flowing on
    // through what computed them.
    auto logSoftmax = logits.getDefiningOp<LogSoftmaxOp>();
    if (logSoftmax && normalizedAxis(logSoftmax.getAxis(), rankOf(logits)) == 1)
      logits = logSoftmax.getInput();
    else
      logProbabilities = !holdsLogProbabilities(logits);
  }
  ArrayRef<int64_t> scoreShape = shapeOf(logits);
  if (scoreShape.size() < 2)
    return n.emitError() << "its scores have shape " << shapeToString(scoreShape)
                         << "; a cross-entropy takes (N, C) scores, or (N, C, d1, ...) with a "
                            "label per position";
  const std::string reduction = n.stringAttr("reduction", "mean");
  if (!isLossReduction(reduction))
    return n.emitError() << "reduction '" << reduction << "'" << kLossReductions;
  const bool perSample = reduction == "none";

  OpBuilder &b = n.builder();
  // SoftmaxCrossEntropyLoss's second output: the scores' log-probabilities.
  if (n.hasOutput(1))
    n.setOutput(1,
                LogSoftmaxOp::create(b, n.loc(), logits.getType(), logits, b.getI64IntegerAttr(1)));
  // Scores (N, C, d1, ...) with a label per position: one row per position,
  // (N d1 ..., C), the classes last; the mean over every counted position is
  // the same, and each position's loss (reduction "none") comes back in the
  // labels' shape.
  const int64_t classes = scoreShape[1];
  const int64_t rows = numElements(scoreShape) / classes;
  SmallVector<int64_t> positions{scoreShape[0]};
  llvm::append_range(positions, scoreShape.drop_front(2));
  if (scoreShape.size() > 2) {
    SmallVector<int64_t> perm{0}, moved(positions);
    for (int64_t d = 2; d < static_cast<int64_t>(scoreShape.size()); ++d)
      perm.push_back(d);
    perm.push_back(1);
    moved.push_back(classes);
    logits = TransposeOp::create(b, n.loc(), RankedTensorType::get(moved, b.getF32Type()), logits,
                                 b.getDenseI64ArrayAttr(perm));
    logits = reshapeTo(n, logits, {rows, classes});
  }
  auto labelsType = RankedTensorType::get({rows}, b.getI64Type());
  auto countError = [&](int64_t count) {
    return n.emitError() << "its labels '" << n.node().input(1) << "' hold " << count
                         << " values for scores of shape " << shapeToString(scoreShape)
                         << " (one label a position: " << rows << ")";
  };
  Value labels;
  if (std::optional<Value> ids = n.indexInput(1)) {
    // (The graph input itself, reshapes on the way left out: the op reads a
    // label a row, in any shape, row-major.)
    if (int64_t count = numElements(shapeOf(*ids)); count != rows)
      return countError(count);
    labels = *ids;
  } else if (n.inputIsConstant(1)) {
    auto values = n.constantInts(1);
    if (failed(values))
      return failure();
    if (static_cast<int64_t>(values->size()) != rows)
      return countError(static_cast<int64_t>(values->size()));
    labels = arith::ConstantOp::create(
        b, n.loc(), labelsType, DenseElementsAttr::get(labelsType, ArrayRef<int64_t>(*values)));
  } else {
    return n.emitError() << "its labels '" << n.node().input(1)
                         << "' are computed at run time; mgs takes a cross-entropy's labels "
                            "from the data (an INT64 graph input) or as constants";
  }

  Value weight;
  if (n.node().input_size() > 2 && !n.inputIsEmpty(2)) {
    auto values = n.constantFloats(2);
    if (failed(values))
      return failure();
    if (static_cast<int64_t>(values->size()) != classes)
      return n.emitError() << "its class weights '" << n.node().input(2) << "' hold "
                           << values->size() << " values for " << classes << " classes";
    for (auto [j, w] : llvm::enumerate(*values))
      if (!(w >= 0.0f) || std::isinf(w))
        return n.emitError() << "the weight of class " << j << " must be finite and >= 0, got "
                             << w;
    auto weightType = RankedTensorType::get({classes}, b.getF32Type());
    weight = arith::ConstantOp::create(b, n.loc(), weightType,
                                       DenseElementsAttr::get(weightType, ArrayRef(*values)));
  }
  auto lossType = perSample ? RankedTensorType::get({rows}, b.getF32Type())
                            : RankedTensorType::get({}, b.getF32Type());
  auto ce = SoftmaxCrossEntropyOp::create(
      b, n.loc(), lossType, logits.getType(), logits, labels, weight,
      b.getI64IntegerAttr(n.intAttr("ignore_index", -100)), b.getF32FloatAttr(0.0f),
      reduction == "sum" ? b.getUnitAttr() : nullptr, b.getUnitAttr(),
      perSample ? b.getUnitAttr() : nullptr, logProbabilities ? b.getUnitAttr() : nullptr);
  Value loss = ce.getLoss();
  if (perSample && positions.size() > 1)
    loss = reshapeTo(n, loss, positions);
  n.setOutput(0, loss);
  return success();
}

} // namespace mgs::onnx_import
