//===- IndexOps.cpp - Verifiers of the gather and index ops ---------------===//
//
// train.gather and its gradient, and the ops that make or read indices at
// run time: train.cumsum (position ids), train.to_index, train.from_index
// and train.topk_positions.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "OpVerifiers.h"

using namespace mlir;
using namespace mgs::train;
using namespace mgs::train::detail;

namespace {
/// gather's result shape: the indices' shape, then the table's rows'.
SmallVector<int64_t> gatherShape(ArrayRef<int64_t> table, ArrayRef<int64_t> indices) {
  SmallVector<int64_t> shape(indices);
  shape.append(table.begin() + 1, table.end());
  return shape;
}
} // namespace

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> table = shapeOf(getTable());
  if (table.empty())
    return emitOpError() << "table must have rank >= 1";
  return checkResultShape(*this, getResult(), gatherShape(table, shapeOf(getIndices())));
}

LogicalResult GatherGradOp::verify() {
  ArrayRef<int64_t> table = shapeOf(getResult()), indices = shapeOf(getIndices());
  if (table.empty())
    return emitOpError() << "result (the table) must have rank >= 1";
  return checkResultShape(*this, getGrad(), gatherShape(table, indices), "grad");
}

LogicalResult CumSumOp::verify() {
  const int64_t rank = static_cast<int64_t>(shapeOf(getInput()).size());
  const int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range [0, " << rank
                         << ") for input of shape " << shapeToString(shapeOf(getInput()));
  return success();
}

LogicalResult ToIndexOp::verify() {
  return checkResultShape(*this, getResult(), shapeOf(getInput()));
}

LogicalResult FromIndexOp::verify() {
  const int64_t limit = int64_t{1} << 24;
  const auto lo = static_cast<int64_t>(getLo()), hi = static_cast<int64_t>(getHi());
  if (lo > hi || lo < -limit || hi > limit)
    return emitOpError() << "range [" << lo << ", " << hi
                         << "] must be non-empty and within [-2^24, 2^24], where floats hold "
                            "every integer";
  return checkResultShape(*this, getResult(), shapeOf(getInput()));
}

LogicalResult TopKPositionsOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.empty())
    return emitOpError() << "input must have rank at least 1";
  const int64_t len = in.back();
  if (len > (int64_t{1} << 24))
    return emitOpError() << "last axis has " << len
                         << " entries, more than 2^24 (its positions are floats)";
  const int64_t k = static_cast<int64_t>(getK());
  if (k < 1 || k > len)
    return emitOpError() << "k = " << k << " must be in [1, " << len
                         << "] (the last axis' extent)";
  SmallVector<int64_t> out(in);
  out.back() = k;
  return checkResultShape(*this, getResult(), out);
}
