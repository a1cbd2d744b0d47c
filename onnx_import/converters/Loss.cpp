//===- Loss.cpp - Cross-entropies inside a loss the graph computes --------===//
//
// See Loss.h. The op computes its gradient with its loss (dlogits); the
// backward multiplies it by the gradient of its loss within the graph's
// (Autodiff.cpp).
//
//===----------------------------------------------------------------------===//

#include "converters/Loss.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertCrossEntropyInGraph(NodeImporter &n) {
  auto scores = n.input(0);
  if (failed(scores))
    return failure();
  const bool nll = n.node().op_type() == "NegativeLogLikelihoodLoss";
  Value logits = *scores;
  if (nll) {
    // -log_softmax(h)[label] is h's cross-entropy.
    auto logSoftmax = logits.getDefiningOp<LogSoftmaxOp>();
    if (!logSoftmax ||
        normalizedAxis(logSoftmax.getAxis(), static_cast<int64_t>(shapeOf(logits).size())) != 1)
      return n.emitError() << "its input '" << n.node().input(0)
                           << "' is not a LogSoftmax over the classes (axis 1): mgs trains the "
                              "negative log-likelihood of log-probabilities, a cross-entropy";
    logits = logSoftmax.getInput();
  }
  ArrayRef<int64_t> shape = shapeOf(logits);
  if (shape.size() != 2)
    return n.emitError() << "its scores have shape " << shapeToString(shape)
                         << "; inside a loss the graph computes, mgs takes a cross-entropy of "
                            "(N, C) scores (flatten the positions into rows before the loss)";
  const std::string reduction = n.stringAttr("reduction", "mean");
  if (reduction != "mean" && reduction != "sum")
    return n.emitError() << "reduction '" << reduction
                         << "'; mgs trains a cross-entropy reduced over the samples (reduction "
                            "'mean', PyTorch's default, or 'sum')";
  if (n.node().output_size() > 1)
    n.rejectOutput(1, "the log-probabilities output of a cross-entropy inside the graph's loss");

  OpBuilder &b = n.builder();
  auto labelsType = RankedTensorType::get({shape[0]}, b.getI64Type());
  Value labels;
  if (std::optional<Value> ids = n.indexInput(1)) {
    if (cast<RankedTensorType>(ids->getType()).getNumElements() != shape[0])
      return n.emitError() << "its labels '" << n.node().input(1) << "' hold "
                           << cast<RankedTensorType>(ids->getType()).getNumElements()
                           << " values for " << shape[0] << " rows of scores";
    labels = shapeOf(*ids).size() == 1 ? *ids : reshapeTo(n, *ids, labelsType.getShape());
  } else if (n.inputIsConstant(1)) {
    auto values = n.constantInts(1);
    if (failed(values))
      return failure();
    if (static_cast<int64_t>(values->size()) != shape[0])
      return n.emitError() << "its labels '" << n.node().input(1) << "' hold " << values->size()
                           << " values for " << shape[0] << " rows of scores";
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
    if (static_cast<int64_t>(values->size()) != shape[1])
      return n.emitError() << "its class weights '" << n.node().input(2) << "' hold "
                           << values->size() << " values for " << shape[1] << " classes";
    for (auto [j, w] : llvm::enumerate(*values))
      if (!(w >= 0.0f) || std::isinf(w))
        return n.emitError() << "the weight of class " << j << " must be finite and >= 0, got "
                             << w;
    auto weightType = RankedTensorType::get({shape[1]}, b.getF32Type());
    weight = arith::ConstantOp::create(b, n.loc(), weightType,
                                       DenseElementsAttr::get(weightType, ArrayRef(*values)));
  }
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  auto ce = SoftmaxCrossEntropyOp::create(
      b, n.loc(), scalar, logits.getType(), logits, labels, weight,
      b.getI64IntegerAttr(n.intAttr("ignore_index", -100)), b.getF32FloatAttr(0.0f),
      reduction == "sum" ? b.getUnitAttr() : nullptr, b.getUnitAttr());
  n.setOutput(0, ce.getLoss());
  return success();
}

} // namespace mgs::onnx_import
