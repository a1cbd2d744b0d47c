//===- Random.cpp - Normally distributed draws ----------------------------===//

#include "converters/Random.h"

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include <onnx/onnx_pb.h>

#include <cmath>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertRandomNormal(NodeImporter &n) {
  if (const onnx::AttributeProto *dtype = n.findAttr("dtype");
      dtype && dtype->i() != onnx::TensorProto::FLOAT)
    return n.emitError() << "it draws values of ONNX dtype " << dtype->i()
                         << "; mgs draws float32 (dtype 1) only";
  const float mean = n.floatAttr("mean", 0.0f), scale = n.floatAttr("scale", 1.0f);
  if (!std::isfinite(mean) || !std::isfinite(scale))
    return n.emitError() << "its mean " << mean << " and scale " << scale << " must be finite";
  if (!n.hasOutput(0))
    return success();
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = n.builder();
  auto op =
      RandomNormalOp::create(b, n.loc(), *type, b.getF32FloatAttr(mean), b.getF32FloatAttr(scale));
  n.setOutput(0, op.getResult());
  return success();
}

} // namespace mgs::onnx_import
