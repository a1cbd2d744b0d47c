//===- Split.cpp - Converter of ONNX Split --------------------------------===//
//
// ONNX Split becomes train.split, the op whose gradient is a concatenation
// (the Slice converter already splits with it).
//
//===----------------------------------------------------------------------===//

#include "converters/Split.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertSplit(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x->getType()).getShape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto normAxis = n.axisAttr("axis", 0, rank);
  if (failed(normAxis))
    return failure();
  const int64_t axis = *normAxis;
  const int64_t size = shape[axis];
  const int64_t outputs = n.node().output_size();

  SmallVector<int64_t> sizes;
  if (n.opset() < 13) {
    if (auto attr = n.intsAttr("split"))
      sizes = *attr;
  } else if (n.hasInput(1)) {
    auto given = n.constantInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
  }
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != outputs)
      return n.emitError() << "'split' holds " << sizes.size() << " sizes for " << outputs
                           << " outputs";
  } else if (const onnx::AttributeProto *num = n.findAttr("num_outputs"); num && n.opset() >= 18) {
    if (num->i() != outputs || outputs < 1)
      return n.emitError() << "num_outputs is " << num->i() << " for " << outputs << " outputs";
    const int64_t piece = (size + outputs - 1) / outputs;
    for (int64_t i = 0, left = size; i < outputs; ++i, left -= piece)
      sizes.push_back(std::max<int64_t>(0, std::min(piece, left)));
  } else {
    if (outputs < 1 || size % outputs != 0)
      return n.emitError() << "cannot split dimension " << axis << " of size " << size
                           << " into " << outputs << " equal pieces";
    sizes.assign(outputs, size / outputs);
  }
  auto pieces = splitAlong(n, *x, axis, sizes);
  if (failed(pieces))
    return failure();
  for (int64_t i = 0; i < outputs; ++i) {
    if (!n.hasOutput(i))
      continue;
    auto inferred = n.outputType(i);
    if (failed(inferred))
      return failure();
    if (*inferred != (*pieces)[i].getType())
      return n.emitError() << "output " << i << " has shape "
                           << shapeToString(shapeOf((*pieces)[i]))
                           << ", ONNX shape inference says " << shapeToString(inferred->getShape());
    n.setOutput(i, (*pieces)[i]);
  }
  return success();
}

FailureOr<SmallVector<Value>> splitAlong(NodeImporter &n, Value x, int64_t axis,
                                         ArrayRef<int64_t> sizes) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return n.emitError() << "'split' holds a negative size " << s;
    total += s;
  }
  if (total != shape[axis])
    return n.emitError() << "the sizes in 'split' add up to " << total << ", axis " << axis
                         << " has " << shape[axis] << " elements";
  SmallVector<Type> types;
  for (int64_t s : sizes) {
    SmallVector<int64_t> piece(shape);
    piece[axis] = s;
    types.push_back(RankedTensorType::get(piece, n.builder().getF32Type()));
  }
  OpBuilder &b = n.builder();
  auto split = SplitOp::create(b, n.loc(), types, x, b.getI64IntegerAttr(axis));
  return SmallVector<Value>(split.getResults());
}

} // namespace mgs::onnx_import
