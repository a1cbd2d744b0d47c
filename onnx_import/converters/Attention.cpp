//===- Attention.cpp - Converters of attention's masking ops ---------------===//
//
// Attention masks arrive as a Where whose condition the importer evaluated
// (a causal mask from Range/Equal on shapes, or a BOOL initializer): with
// the condition known, Where is a multiplication by a constant 0/1 mask and
// an addition of the fill, ops every target has, whose gradients are exact
// (the gradient is 0 where the fill is chosen). Expand of computed data
// (ViT's class token expanded over the batch) is a broadcasting add of zeros.
//
//===----------------------------------------------------------------------===//

#include "converters/Attention.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <onnx/defs/tensor_proto_util.h>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {
namespace {

/// `values` (row-major, of shape `from`) broadcast to `to` (numpy rules;
/// `from` is broadcastable to `to`).
std::vector<float> broadcastTo(ArrayRef<float> values, ArrayRef<int64_t> from,
                               ArrayRef<int64_t> to) {
  const size_t rank = to.size(), offset = rank - from.size();
  // The stride of each result axis in `values` (0 where it is broadcast).
  SmallVector<int64_t> strides(rank, 0);
  for (int64_t d = static_cast<int64_t>(from.size()) - 1, s = 1; d >= 0; --d) {
    strides[offset + d] = from[d] == 1 ? 0 : s;
    s *= from[d];
  }
  std::vector<float> out(numElements(to));
  SmallVector<int64_t> index(rank, 0);
  for (float &v : out) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += index[d] * strides[d];
    v = values[at];
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0 && ++index[d] == to[d]; --d)
      index[d] = 0;
  }
  return out;
}

Value constantOf(NodeImporter &n, ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, n.builder().getF32Type());
  return arith::ConstantOp::create(n.builder(), n.loc(), type, DenseElementsAttr::get(type, values));
}

/// The condition of a Where as 0/1 floats, or failure (reported).
FailureOr<std::vector<float>> conditionMask(NodeImporter &n, SmallVectorImpl<int64_t> &shape) {
  if (!n.inputIsConstant(0))
    return n.emitError() << "the condition '" << n.node().input(0)
                         << "' must be a constant (an initializer, a Constant node or shape "
                            "arithmetic on them, evaluated at import); here it is computed by "
                            "the graph";
  auto t = n.constantInput(0);
  if (failed(t))
    return failure();
  const onnx::TensorProto &tensor = **t;
  if (tensor.data_type() != onnx::TensorProto::BOOL)
    return n.emitError() << "the condition must be BOOL, got data type " << tensor.data_type();
  shape.assign(tensor.dims().begin(), tensor.dims().end());
  std::vector<float> mask;
  if (tensor.has_raw_data())
    for (char c : tensor.raw_data())
      mask.push_back(c != 0 ? 1.0f : 0.0f);
  else
    for (int32_t v : tensor.int32_data())
      mask.push_back(v != 0 ? 1.0f : 0.0f);
  if (static_cast<int64_t>(mask.size()) != numElements(shape))
    return n.emitError() << "the condition holds " << mask.size() << " values for shape "
                         << shapeToString(shape);
  return mask;
}

} // namespace

LogicalResult convertWhere(NodeImporter &n) {
  SmallVector<int64_t> condShape;
  auto mask = conditionMask(n, condShape);
  if (failed(mask))
    return failure();
  auto outType = n.outputType(0);
  if (failed(outType))
    return failure();
  ArrayRef<int64_t> outShape = outType->getShape();
  OpBuilder &b = n.builder();
  Location loc = n.loc();

  // The constant branches' values where the condition chooses them, at the
  // shape they and the condition broadcast to (a mask's T x T, not the
  // scores' N x T x T); the data branches times their mask, summed.
  SmallVector<int64_t> fillShape(condShape);
  for (int branch = 1; branch <= 2; ++branch) {
    if (!n.inputIsConstant(branch))
      continue;
    auto t = n.constantInput(branch);
    if (failed(t))
      return failure();
    SmallVector<int64_t> shape((*t)->dims().begin(), (*t)->dims().end());
    auto joined = broadcastShapes(fillShape, shape);
    if (!joined || !isUnidirectionallyBroadcastable(*joined, outShape))
      return n.emitError() << "input " << branch << " of shape " << shapeToString(shape)
                           << " does not broadcast to the result's " << shapeToString(outShape);
    fillShape = *joined;
  }
  std::vector<float> condFull = broadcastTo(*mask, condShape, fillShape);
  std::vector<float> fill(condFull.size(), 0.0f);
  bool anyFill = false;
  Value sum;
  for (int branch = 1; branch <= 2; ++branch) {
    const bool chosenWhenTrue = branch == 1;
    if (n.inputIsConstant(branch)) {
      auto t = n.constantInput(branch);
      auto values = n.constantFloats(branch);
      if (failed(t) || failed(values))
        return failure();
      SmallVector<int64_t> shape((*t)->dims().begin(), (*t)->dims().end());
      std::vector<float> full = broadcastTo(*values, shape, fillShape);
      for (size_t i = 0; i < full.size(); ++i)
        if ((condFull[i] != 0.0f) == chosenWhenTrue && full[i] != 0.0f) {
          fill[i] = full[i];
          anyFill = true;
        }
      continue;
    }
    auto x = n.input(branch);
    if (failed(x))
      return failure();
    std::vector<float> keep = *mask;
    if (!chosenWhenTrue)
      for (float &v : keep)
        v = 1.0f - v;
    auto xShape = cast<RankedTensorType>(x->getType()).getShape();
    auto shape = broadcastShapes(xShape, condShape);
    if (!shape || !isUnidirectionallyBroadcastable(*shape, outShape))
      return n.emitError() << "input " << branch << " of shape " << shapeToString(xShape)
                           << " and the condition of shape " << shapeToString(condShape)
                           << " do not broadcast to the result's " << shapeToString(outShape);
    auto type = RankedTensorType::get(*shape, b.getF32Type());
    Value masked = MulOp::create(b, loc, type, *x, constantOf(n, condShape, keep));
    if (sum) {
      auto sumShape = broadcastShapes(cast<RankedTensorType>(sum.getType()).getShape(), *shape);
      sum = AddOp::create(b, loc, RankedTensorType::get(*sumShape, b.getF32Type()), sum, masked);
    } else {
      sum = masked;
    }
  }
  Value result;
  if (!sum)
    result = constantOf(n, outShape, broadcastTo(fill, fillShape, outShape));
  else if (anyFill || cast<RankedTensorType>(sum.getType()) != *outType)
    result = AddOp::create(b, loc, *outType, sum, constantOf(n, fillShape, fill));
  else
    result = sum;
  n.setOutput(0, result);
  return success();
}

LogicalResult convertExpand(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto shape = n.constantInts(1);
  auto outType = n.outputType(0);
  if (failed(shape) || failed(outType))
    return failure();
  auto zerosType = RankedTensorType::get(outType->getShape(), n.builder().getF32Type());
  Value zeros = arith::ConstantOp::create(n.builder(), n.loc(), zerosType,
                                          DenseElementsAttr::get(zerosType, 0.0f));
  return buildSingle<AddOp>(n, *x, zeros);
}

} // namespace mgs::onnx_import
