//===- TopK.cpp - ONNX TopK of computed data ------------------------------===//
//
// A mixture-of-experts router picks each token's experts with TopK of its
// routing probabilities (Mixtral, Qwen2-MoE): the positions are chosen at
// run time (train.topk_positions, on the last axis; another axis is moved
// there and the positions back by transposes) and the values are the data
// gathered at those positions (gatherElementsAt: the data flattened to a
// column, read at each value's flat position), whose gradient adds each
// value's back where it came from. The
// indices output is an integer tensor computed at run time (RuntimeInts.cpp,
// held as floats in [0, len - 1]), which a Gather reads to fetch each
// token's experts' weights.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertTopK(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    return n.emitError() << "its input is a scalar; TopK needs at least one axis";
  auto axis = n.axisAttr("axis", -1, rank);
  if (failed(axis))
    return failure();
  const int64_t len = shape[*axis];
  int64_t k;
  if (n.opset() < 10) {
    k = n.intAttr("k", -1);
  } else {
    auto ks = n.constantInts(1);
    if (failed(ks))
      return failure();
    if (ks->size() != 1)
      return n.emitError() << "its K input holds " << ks->size() << " values; TopK takes one";
    k = ks->front();
  }
  if (k < 1 || k > len)
    return n.emitError() << "K = " << k << " is outside [1, " << len << "], the extent of axis "
                         << *axis << " it selects along";
  const int64_t count = cast<RankedTensorType>(x->getType()).getNumElements();
  if (count > kFloatExactIntegers)
    return n.emitError() << "its input has " << count
                         << " elements, more than 2^24: mgs computes the positions of the "
                            "values it selects in float, exact only up to 2^24";
  const bool largest = n.intAttr("largest", 1) != 0;
  // sorted = 0 leaves the order to the implementation: mgs's is sorted.

  OpBuilder &b = n.builder();
  Location loc = n.loc();
  // The axis moved last (and back at the end).
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + *axis);
  perm.push_back(*axis);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  const bool moved = *axis != rank - 1;
  Value last = moved ? permuteDims(b, loc, *x, perm) : *x;
  SmallVector<int64_t> selected(shapeOf(last));
  selected.back() = k;
  auto selectedType = RankedTensorType::get(selected, b.getF32Type());
  Value positions = TopKPositionsOp::create(b, loc, selectedType, last, b.getI64IntegerAttr(k),
                                            b.getBoolAttr(largest));

  Value back = moved ? permuteDims(b, loc, positions, inverse) : positions;
  if (n.hasOutput(0)) {
    Value values = gatherElementsAt(b, loc, *x, *axis, back);
    auto type = n.outputType(0);
    if (failed(type))
      return failure();
    if (type->getShape() != shapeOf(values))
      return n.emitError() << "its values have shape " << shapeToString(shapeOf(values))
                           << ", ONNX shape inference says " << shapeToString(type->getShape());
    n.setOutput(0, values);
  }
  if (n.hasOutput(1))
    n.setIntegerOutput(1, back, 0, static_cast<double>(len - 1), "by TopK");
  return success();
}

std::pair<Value, Value> selectExtremum(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                                       bool largest) {
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> perm, rows;
  int64_t len = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d)) {
      perm.push_back(d);
      rows.push_back(shape[d]);
    }
  for (int64_t d : axes) {
    perm.push_back(d);
    len *= shape[d];
  }
  Value v = x;
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    v = permuteDims(b, loc, v, perm);
  SmallVector<int64_t> flat(rows);
  flat.push_back(len);
  auto f32 = b.getF32Type();
  if (ArrayRef<int64_t>(flat) != shapeOf(v))
    v = ReshapeOp::create(b, loc, RankedTensorType::get(flat, f32), v);
  SmallVector<int64_t> one(rows);
  one.push_back(1);
  Value positions = TopKPositionsOp::create(b, loc, RankedTensorType::get(one, f32), v,
                                            b.getI64IntegerAttr(1), b.getBoolAttr(largest));
  Value values = gatherElementsAt(b, loc, v, static_cast<int64_t>(rows.size()), positions);
  return {values, positions};
}

} // namespace mgs::onnx_import
