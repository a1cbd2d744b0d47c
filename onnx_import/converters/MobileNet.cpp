//===- MobileNet.cpp - Converters of gated activations ---------------------===//
//
// HardSigmoid and HardSwish (MobileNetV3) become the train dialect's
// elementwise ops of the same names; the runtime computes them as op codes of
// its unary kernel. Swish (opset 24) is x * sigmoid(alpha * x).
//
//===----------------------------------------------------------------------===//

#include "converters/MobileNet.h"

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertHardSigmoid(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  float alpha = n.floatAttr("alpha", 0.2f), beta = n.floatAttr("beta", 0.5f);
  if (!std::isfinite(alpha) || !std::isfinite(beta))
    return n.emitError() << "alpha and beta must be finite, got alpha " << alpha << " and beta "
                         << beta;
  OpBuilder &b = n.builder();
  return buildSingle<HardSigmoidOp>(n, *x, b.getF32FloatAttr(alpha), b.getF32FloatAttr(beta));
}

LogicalResult convertSwish(NodeImporter &n) {
  auto x = n.input(0);
  auto type = n.outputType(0);
  if (failed(x) || failed(type))
    return failure();
  const float alpha = n.floatAttr("alpha", 1.0f);
  if (!std::isfinite(alpha))
    return n.emitError() << "alpha must be finite, got " << alpha;
  OpBuilder &b = n.builder();
  Value gateInput = *x;
  if (alpha != 1.0f)
    gateInput = MulOp::create(b, n.loc(), *type, *x, f32Scalar(n, alpha));
  Value gate = SigmoidOp::create(b, n.loc(), *type, gateInput);
  n.setOutput(0, MulOp::create(b, n.loc(), *type, *x, gate).getResult());
  return success();
}

} // namespace mgs::onnx_import
