//===- NormOps.cpp - Verifiers of the layer-norm and GELU ops -------------===//
//
// train.layer_norm, train.layer_norm_grad, train.gelu and train.gelu_grad
// (the fused forms train-fuse-layer-norm and train-fuse-gelu build).
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "OpVerifiers.h"

using namespace mlir;
using namespace mgs::train;
using namespace mgs::train::detail;

namespace {
/// Checks a layer norm's input, axis, scale and saved statistics.
LogicalResult verifyLayerNorm(Operation *op, Value input, int64_t axis, Value scale, Value mean,
                              Value invStd) {
  ArrayRef<int64_t> x = shapeOf(input);
  const int64_t rank = x.size();
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << "axis " << axis << " is out of range [0, " << rank << ")";
  SmallVector<int64_t> stats(x.take_front(axis));
  stats.append(rank - axis, 1);
  if (failed(checkResultShape(op, scale, x.drop_front(axis), "scale")) ||
      failed(checkResultShape(op, mean, stats, "mean")))
    return failure();
  return checkResultShape(op, invStd, stats, "inv_std");
}
} // namespace

LogicalResult LayerNormOp::verify() {
  if (failed(verifyLayerNorm(*this, getInput(), getAxis(), getScale(), getMean(), getInvStd())) ||
      failed(checkResultShape(*this, getBias(), shapeOf(getScale()), "bias")))
    return failure();
  return checkResultShape(*this, getResult(), shapeOf(getInput()));
}

LogicalResult LayerNormGradOp::verify() {
  if (failed(verifyLayerNorm(*this, getInput(), getAxis(), getScale(), getMean(), getInvStd())) ||
      failed(checkResultShape(*this, getGrad(), shapeOf(getInput()), "grad")) ||
      failed(checkResultShape(*this, getInputGrad(), shapeOf(getInput()), "input_grad")) ||
      failed(checkResultShape(*this, getScaleGrad(), shapeOf(getScale()), "scale_grad")))
    return failure();
  return checkResultShape(*this, getBiasGrad(), shapeOf(getScale()), "bias_grad");
}

/// GELU's `approximate`: ONNX Gelu's values.
static LogicalResult verifyGeluApproximate(Operation *op, StringRef approximate) {
  if (approximate == "none" || approximate == "tanh")
    return success();
  return op->emitOpError() << "approximate '" << approximate << "' is not \"none\" or \"tanh\"";
}

LogicalResult GeluOp::verify() { return verifyGeluApproximate(*this, getApproximate()); }

LogicalResult GeluGradOp::verify() { return verifyGeluApproximate(*this, getApproximate()); }
