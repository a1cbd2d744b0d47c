//===- MobileNet.cpp - Converters of MobileNetV3's activations -------------===//
//
// HardSigmoid and HardSwish become the train dialect's elementwise ops of the
// same names; the runtime computes them as new op codes of its unary kernel.
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

} // namespace mgs::onnx_import
