//===- Indexing.cpp - Gather and strided Slice of computed data -----------===//
//
// Built from ops mgs already differentiates and runs: train.gather (the
// embedding's kernel; its gradient adds rows back), train.split,
// train.reshape, train.transpose and train.concat.
//
//===----------------------------------------------------------------------===//

#include "converters/Indexing.h"
#include "ConstantFolding.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <algorithm>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

RankedTensorType f32Tensor(OpBuilder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b.getF32Type());
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  return ReshapeOp::create(b, loc, f32Tensor(b, shape), v);
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// For each element of GatherElements' indices (of `indexShape`, row-major),
/// its flat position in data of `shape` with its coordinate along `axis` 0:
/// the position it reads, less index * stride(axis).
SmallVector<int64_t> elementOffsets(ArrayRef<int64_t> shape, ArrayRef<int64_t> indexShape,
                                    int64_t axis) {
  SmallVector<int64_t> strides = stridesOf(shape);
  const int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> offsets(numElements(indexShape));
  for (size_t e = 0; e < offsets.size(); ++e) {
    int64_t rest = static_cast<int64_t>(e), pos = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d != axis)
        pos += (rest % indexShape[d]) * strides[d];
      rest /= indexShape[d];
    }
    offsets[e] = pos;
  }
  return offsets;
}

/// `x` flattened to a column, read at the flat positions `at` (INT64) and
/// reshaped to their shape: a train.gather, whose gradient adds each element
/// back where it was read.
Value gatherFlat(OpBuilder &b, Location loc, Value x, Value at) {
  const int64_t count = cast<RankedTensorType>(x.getType()).getNumElements();
  Value column = reshape(b, loc, x, {count, 1});
  ArrayRef<int64_t> atShape = cast<RankedTensorType>(at.getType()).getShape();
  SmallVector<int64_t> gathered(atShape);
  gathered.push_back(1);
  Value rows = GatherOp::create(b, loc, f32Tensor(b, gathered), column, at);
  return reshape(b, loc, rows, atShape);
}

} // namespace

LogicalResult checkGatherElementsShapes(NodeImporter &n, ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> indexShape, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (static_cast<int64_t>(indexShape.size()) != rank)
    return n.emitError() << "indices of rank " << indexShape.size() << " for data of rank "
                         << rank << "; GatherElements needs equal ranks";
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indexShape[d] > shape[d])
      return n.emitError() << "indices dimension " << d << " (" << indexShape[d]
                           << ") exceeds the data's (" << shape[d] << ")";
  return success();
}

Value gatherElementsAt(OpBuilder &b, Location loc, Value data, int64_t axis, Value positions) {
  ArrayRef<int64_t> shape = shapeOf(data), indexShape = shapeOf(positions);
  SmallVector<int64_t> offsets = elementOffsets(shape, indexShape, axis);
  SmallVector<float> asFloat(offsets.begin(), offsets.end());
  auto type = f32Tensor(b, indexShape);
  Value flat = positions;
  if (const int64_t stride = stridesOf(shape)[axis]; stride != 1) {
    auto scalar = f32Tensor(b, {});
    flat = MulOp::create(b, loc, type, flat,
                         arith::ConstantOp::create(
                             b, loc, scalar,
                             DenseElementsAttr::get(scalar, static_cast<float>(stride))));
  }
  flat = AddOp::create(b, loc, type, flat,
                       arith::ConstantOp::create(b, loc, type,
                                                 DenseElementsAttr::get(type, ArrayRef<float>(asFloat))));
  Value at = ToIndexOp::create(b, loc, RankedTensorType::get(indexShape, b.getI64Type()), flat);
  return gatherFlat(b, loc, data, at);
}

Value oneHotAt(OpBuilder &b, Location loc, Value positions, int64_t depth, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(positions);
  SmallVector<int64_t> inserted(shape), iotaShape(shape.size() + 1, 1), out(shape);
  inserted.insert(inserted.begin() + axis, 1);
  iotaShape[axis] = depth;
  out.insert(out.begin() + axis, depth);
  SmallVector<float> iota(depth);
  for (int64_t i = 0; i < depth; ++i)
    iota[i] = static_cast<float>(i);
  auto iotaType = f32Tensor(b, iotaShape);
  Value along = arith::ConstantOp::create(b, loc, iotaType,
                                          DenseElementsAttr::get(iotaType, ArrayRef<float>(iota)));
  return EqualOp::create(b, loc, f32Tensor(b, out), reshape(b, loc, positions, inserted), along);
}

Value scatterElementsAt(OpBuilder &b, Location loc, Value data, int64_t axis, Value positions,
                        Value updates, bool add) {
  ArrayRef<int64_t> shape = shapeOf(data);
  // [.., J, K, ..]: hit[.., j, k, ..] = positions[.., k, ..] == j.
  Value hit = oneHotAt(b, loc, positions, shape[axis], axis);
  ArrayRef<int64_t> hitShape = shapeOf(hit);
  SmallVector<int64_t> inserted(shapeOf(updates));
  inserted.insert(inserted.begin() + axis, 1);
  Value placed =
      MulOp::create(b, loc, f32Tensor(b, hitShape), hit, reshape(b, loc, updates, inserted));
  auto sumOverUpdates = [&](Value v) -> Value {
    return ReduceOp::create(b, loc, f32Tensor(b, shape), b.getStringAttr("sum"), v,
                            b.getDenseI64ArrayAttr({axis + 1}), b.getBoolAttr(false));
  };
  Value scattered = sumOverUpdates(placed);
  Value kept = data;
  if (!add) {
    auto zero = f32Tensor(b, {});
    Value untouched = EqualOp::create(
        b, loc, f32Tensor(b, shape), sumOverUpdates(hit),
        arith::ConstantOp::create(b, loc, zero, DenseElementsAttr::get(zero, 0.0f)));
    kept = KeepWhereOp::create(b, loc, f32Tensor(b, shape), data, untouched);
  }
  return AddOp::create(b, loc, f32Tensor(b, shape), kept, scattered);
}

Value permuteDims(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  ArrayRef<int64_t> shape = shapeOf(v);
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return TransposeOp::create(b, loc, f32Tensor(b, out), v, b.getDenseI64ArrayAttr(perm));
}

Value gatherAlongAxis(OpBuilder &b, Location loc, Value x, int64_t axis, Value indices) {
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  ArrayRef<int64_t> indexShape = cast<RankedTensorType>(indices.getType()).getShape();
  const int64_t indexRank = static_cast<int64_t>(indexShape.size());
  // The axis first: the table's rows.
  Value table = x;
  if (axis != 0) {
    SmallVector<int64_t> perm{axis};
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        perm.push_back(d);
    table = permuteDims(b, loc, x, perm);
  }
  SmallVector<int64_t> gathered(indexShape);
  llvm::append_range(gathered, shapeOf(table).drop_front());
  Value y = GatherOp::create(b, loc, f32Tensor(b, gathered), table, indices);
  if (axis == 0)
    return y;
  // gathered is indices..., x's before the axis, x's after it: back to
  // x's before, indices..., x's after.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < axis; ++d)
    perm.push_back(indexRank + d);
  for (int64_t d = 0; d < indexRank; ++d)
    perm.push_back(d);
  for (int64_t d = axis + 1; d < rank; ++d)
    perm.push_back(indexRank + d - 1);
  return permuteDims(b, loc, y, perm);
}

Value pickAlongAxis(OpBuilder &b, Location loc, Value x, int64_t axis, ArrayRef<int64_t> at) {
  auto type = RankedTensorType::get({static_cast<int64_t>(at.size())}, b.getI64Type());
  Value indices = arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, at));
  return gatherAlongAxis(b, loc, x, axis, indices);
}

Value sliceAxis(OpBuilder &b, Location loc, Value v, int64_t axis, int64_t lo, int64_t hi) {
  SmallVector<int64_t> shape(shapeOf(v));
  const int64_t dim = shape[axis];
  if (lo == 0 && hi == dim)
    return v;
  SmallVector<Type> pieces;
  int keep = 0;
  for (auto [from, to] : {std::pair{int64_t(0), lo}, {lo, hi}, {hi, dim}}) {
    if (from == to)
      continue;
    if (from == lo)
      keep = pieces.size();
    shape[axis] = to - from;
    pieces.push_back(f32Tensor(b, shape));
  }
  return SplitOp::create(b, loc, pieces, v, b.getI64IntegerAttr(axis)).getResult(keep);
}

Value strideAxis(OpBuilder &b, Location loc, Value v, int64_t axis, int64_t lo, int64_t count,
                 int64_t step) {
  SmallVector<int64_t> shape(shapeOf(v));
  const int64_t dim = shape[axis];
  if (count == 1)
    return sliceAxis(b, loc, v, axis, lo, lo + 1);
  // A window [lo - k, lo - k + count * step) inside the axis: the elements
  // are at offset k of each group of step.
  const int64_t kMin = std::max<int64_t>(0, lo + count * step - dim);
  const int64_t kMax = std::min(step - 1, lo);
  if (kMin > kMax) {
    // No window fits: the first count - 1 so, then the last one.
    Value head = strideAxis(b, loc, v, axis, lo, count - 1, step);
    const int64_t last = lo + (count - 1) * step;
    Value tail = sliceAxis(b, loc, v, axis, last, last + 1);
    shape[axis] = count;
    return ConcatOp::create(b, loc, f32Tensor(b, shape), ValueRange{head, tail},
                            b.getI64IntegerAttr(axis));
  }
  const int64_t k = kMin;
  Value window = sliceAxis(b, loc, v, axis, lo - k, lo - k + count * step);
  SmallVector<int64_t> grouped(shape);
  grouped[axis] = count;
  grouped.insert(grouped.begin() + axis + 1, step);
  Value picked = sliceAxis(b, loc, reshape(b, loc, window, grouped), axis + 1, k, k + 1);
  shape[axis] = count;
  return reshape(b, loc, picked, shape);
}

LogicalResult convertGatherND(NodeImporter &n) {
  auto data = n.input(0);
  auto type = n.outputType(0);
  if (failed(data) || failed(type))
    return failure();
  if (n.intAttr("batch_dims", 0) != 0)
    return n.emitError() << "unsupported value " << n.intAttr("batch_dims", 0)
                         << " of attribute 'batch_dims'; supported: 0";
  if (!n.inputIsConstant(1))
    return n.emitError() << "the indices '" << n.node().input(1)
                         << "' must be a constant (evaluated at import); here they are computed "
                            "by the graph";
  auto proto = n.constantInput(1);
  auto indices = n.constantInts(1);
  if (failed(proto) || failed(indices))
    return failure();
  const SmallVector<int64_t> indexShape((*proto)->dims().begin(), (*proto)->dims().end());
  const SmallVector<int64_t> shape(shapeOf(*data));
  const int64_t depth = indexShape.empty() ? 0 : indexShape.back();
  if (depth < 1 || depth > static_cast<int64_t>(shape.size()))
    return n.emitError() << "indices of shape " << shapeToString(indexShape)
                         << " must end in a dimension of 1 to the data's rank "
                         << shape.size();
  // Each index tuple as one row of the data's first `depth` dimensions
  // flattened: a gather along axis 0 of the data reshaped to (rows, rest...).
  SmallVector<int64_t> rows;
  for (size_t t = 0; t < indices->size(); t += depth) {
    int64_t row = 0;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t i = (*indices)[t + d];
      if (i < -shape[d] || i >= shape[d])
        return n.emitError() << "index " << i << " is out of range for dimension " << d
                             << " of size " << shape[d];
      row = row * shape[d] + (i < 0 ? i + shape[d] : i);
    }
    rows.push_back(row);
  }
  OpBuilder &b = n.builder();
  SmallVector<int64_t> table{numElements(ArrayRef<int64_t>(shape).take_front(depth))};
  table.append(shape.begin() + depth, shape.end());
  SmallVector<int64_t> rowShape(indexShape.begin(), indexShape.end() - 1);
  if (rowShape.empty())
    rowShape.push_back(1);
  auto rowType = RankedTensorType::get(rowShape, b.getI64Type());
  Value at = arith::ConstantOp::create(b, n.loc(), rowType,
                                       DenseElementsAttr::get(rowType, ArrayRef<int64_t>(rows)));
  Value y = gatherAlongAxis(b, n.loc(), reshape(b, n.loc(), *data, table), 0, at);
  if (numElements(shapeOf(y)) != numElements(type->getShape()))
    return n.emitError() << "the gather has shape " << shapeToString(shapeOf(y))
                         << ", ONNX shape inference says " << shapeToString(type->getShape());
  n.setOutput(0, shapeOf(y) == type->getShape() ? y : reshape(b, n.loc(), y, type->getShape()));
  return success();
}

LogicalResult convertTile(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto repeats = n.constantInts(1);
  auto outType = n.outputType(0);
  if (failed(repeats) || failed(outType))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  if (repeats->size() != shape.size())
    return n.emitError() << "repeats holds " << repeats->size()
                         << " values for an input of rank " << shape.size();
  SmallVector<int64_t> spread, tiled;
  for (auto [dim, times] : llvm::zip(shape, *repeats)) {
    if (times < 1)
      return n.emitError() << "repeats holds " << times
                           << "; mgs tiles computed data by positive repeats only";
    spread.append({1, dim});
    tiled.append({times, dim});
  }
  OpBuilder &b = n.builder();
  Value v = reshape(b, n.loc(), *x, spread);
  v = broadcastTo(b, n.loc(), v, f32Tensor(b, tiled));
  n.setOutput(0, reshape(b, n.loc(), v, outType->getShape()));
  return success();
}

/// GatherElements at indices fed as data (an INT64 graph input, reshaped on
/// the way: a label or an action a row, torch.gather(q, 1, a[:, None])) or
/// computed as indices at run time: their values as FLOAT, read from a
/// column 0 .. extent - 1 by a train.gather at them (a negative one counts
/// from the end, one out of range is that gather's error at run time), then
/// gatherElementsAt.
static LogicalResult gatherElementsAtIds(NodeImporter &n, Value x, Value ids) {
  auto outType = n.outputType(0);
  if (failed(outType))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x), indexShape = outType->getShape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto axis = n.axisAttr("axis", 0, rank);
  if (failed(axis) || failed(checkGatherElementsShapes(n, shape, indexShape, *axis)))
    return failure();
  if (numElements(shapeOf(ids)) != numElements(indexShape))
    return n.emitError() << "its indices '" << n.node().input(1) << "' hold "
                         << numElements(shapeOf(ids)) << " values for a result of shape "
                         << shapeToString(indexShape);
  if (numElements(shape) > kFloatExactIntegers)
    return n.emitError() << "its data holds " << numElements(shape)
                         << " values; mgs gathers at indices fed as data from at most 2^24";
  const int64_t extent = shape[*axis];
  SmallVector<float> column(extent);
  for (int64_t i = 0; i < extent; ++i)
    column[i] = static_cast<float>(i);
  OpBuilder &b = n.builder();
  Value positions = gatherAlongAxis(b, n.loc(), f32Constant(n, {extent, 1}, column), 0, ids);
  positions = reshape(b, n.loc(), positions, indexShape);
  n.setOutput(0, gatherElementsAt(b, n.loc(), x, *axis, positions));
  return success();
}

LogicalResult convertGatherElements(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  if (std::optional<Value> ids = n.indexInput(1))
    return gatherElementsAtIds(n, *x, *ids);
  if (!n.inputIsConstant(1))
    return n.emitError() << "its indices '" << n.node().input(1)
                         << "' are computed at run time; mgs gathers computed data at "
                            "constant indices, or at indices fed as data (an INT64 graph "
                            "input)";
  auto constant = n.constantInput(1);
  auto indices = n.constantInts(1);
  auto outType = n.outputType(0);
  if (failed(constant) || failed(indices) || failed(outType))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto axis = n.axisAttr("axis", 0, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> indexShape((*constant)->dims().begin(), (*constant)->dims().end());
  if (failed(checkGatherElementsShapes(n, shape, indexShape, *axis)))
    return failure();
  // Each element's flat position in the data: its own coordinates, the
  // axis' replaced by its index.
  SmallVector<int64_t> flat = elementOffsets(shape, indexShape, *axis);
  const int64_t stride = stridesOf(shape)[*axis];
  for (size_t e = 0; e < flat.size(); ++e) {
    const int64_t index = (*indices)[e];
    if (index < -shape[*axis] || index >= shape[*axis])
      return n.emitError() << "index " << index << " is out of range for dimension " << *axis
                           << " of size " << shape[*axis];
    flat[e] += (index < 0 ? index + shape[*axis] : index) * stride;
  }
  OpBuilder &b = n.builder();
  auto indexType = RankedTensorType::get(indexShape, b.getI64Type());
  Value at = arith::ConstantOp::create(b, n.loc(), indexType,
                                       DenseElementsAttr::get(indexType, ArrayRef<int64_t>(flat)));
  Value y = gatherFlat(b, n.loc(), *x, at);
  if (shapeOf(y) != outType->getShape())
    return n.emitError() << "its result has shape " << shapeToString(shapeOf(y))
                         << ", ONNX shape inference says " << shapeToString(outType->getShape());
  n.setOutput(0, y);
  return success();
}

/// Gather at an INT64 graph input's indices (an embedding on axis 0, or any
/// other axis), or of a computed tensor at one constant index (PyTorch's
/// h[-1]: the slice at that index, the axis dropped), at consecutive constant
/// indices (position ids, arange(T): the slice, reshaped to the result) or at
/// any other constant indices (a gather at an index constant). Constant data
/// is evaluated at import.
LogicalResult convertOneHot(NodeImporter &n) {
  // (OneHot of integers computed at run time is RuntimeInts.cpp's.)
  std::optional<Value> ids = n.indexInput(0);
  if (!ids)
    return n.emitError() << "its indices ('" << n.node().input(0)
                         << "') must be token ids (an INT64 graph input) or integers computed "
                            "at run time (TopK's, ArgMax's)";
  auto depths = n.constantInts(1);
  auto values = n.constantInput(2);
  if (failed(depths) || failed(values))
    return failure();
  if (depths->size() != 1 || (*depths)[0] < 1 || (*depths)[0] * (*depths)[0] > kFloatExactIntegers)
    return n.emitError() << "its depth (input 1) must be one number in [1, 4096] (a depth x "
                            "depth table of its rows)";
  const int64_t depth = (*depths)[0];
  const bool isFloat = (*values)->data_type() == onnx::TensorProto::FLOAT;
  SmallVector<double> offOn;
  if (isFloat) {
    auto floats = n.constantFloats(2);
    if (failed(floats))
      return failure();
    offOn.assign(floats->begin(), floats->end());
  } else {
    auto ints = n.constantInts(2);
    if (failed(ints))
      return failure();
    offOn.assign(ints->begin(), ints->end());
  }
  if (offOn.size() != 2)
    return n.emitError() << "its values (input 2) must be [off, on]";
  // Row i of the table is the one-hot of i: the rows gathered at the ids.
  SmallVector<float> table(depth * depth, static_cast<float>(offOn[0]));
  for (int64_t i = 0; i < depth; ++i)
    table[i * depth + i] = static_cast<float>(offOn[1]);
  OpBuilder &b = n.builder();
  Value y = gatherAlongAxis(b, n.loc(), f32Constant(n, {depth, depth}, table), 0, *ids);
  const int64_t rank = static_cast<int64_t>(shapeOf(*ids).size());
  auto axis = n.axisAttr("axis", -1, rank + 1);
  if (failed(axis))
    return failure();
  if (*axis != rank) { // the one-hot dimension moved from last to the axis
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *axis)
        perm.push_back(rank);
      perm.push_back(d);
    }
    y = permuteDims(b, n.loc(), y, perm);
  }
  if (isFloat)
    n.setOutput(0, y);
  else
    n.setIntegerOutput(0, y, std::min(offOn[0], offOn[1]), std::max(offOn[0], offOn[1]),
                       "by OneHot of token ids");
  return success();
}

LogicalResult convertGather(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  auto normAxis = n.axisAttr("axis", 0, static_cast<int64_t>(shape.size()));
  if (failed(normAxis))
    return failure();
  const int64_t axis = *normAxis;
  OpBuilder &b = n.builder();
  // A gather at `indices` along the axis, of ONNX's shape.
  auto gather = [&](Value indices) -> LogicalResult {
    Value y = gatherAlongAxis(b, n.loc(), *x, axis, indices);
    if (shapeOf(y) != type->getShape())
      return n.emitError() << "the gather has shape " << shapeToString(shapeOf(y))
                           << ", ONNX shape inference says " << shapeToString(type->getShape());
    n.setOutput(0, y);
    return success();
  };
  // Transposed ids (XLNet's time-major ones): the rows at the ids, transposed
  // as the ids were (the rows' own dimensions last).
  if (auto transposed = n.transposedIndexInput(1)) {
    auto [ids, perm] = *transposed;
    if (axis != 0)
      return n.emitError() << "it gathers transposed token ids along axis " << axis
                           << "; mgs gathers them along axis 0 (an embedding)";
    Value rows = gatherAlongAxis(b, n.loc(), *x, 0, ids);
    const int64_t idRank = static_cast<int64_t>(perm.size());
    SmallVector<int64_t> full(perm);
    for (int64_t d = idRank; d < static_cast<int64_t>(shapeOf(rows).size()); ++d)
      full.push_back(d);
    Value y = permuteDims(b, n.loc(), rows, full);
    if (shapeOf(y) != type->getShape())
      return n.emitError() << "the gather has shape " << shapeToString(shapeOf(y))
                           << ", ONNX shape inference says " << shapeToString(type->getShape());
    n.setOutput(0, y);
    return success();
  }
  // An embedding: rows of the table at the graph's integer inputs. Ids
  // reshaped on their way (GPT-2's view(-1, T)) give the same rows, reshaped.
  if (std::optional<Value> indices = n.indexInput(1)) {
    if (axis == 0 && shapeOf(*indices) != ArrayRef<int64_t>(type->getShape()).drop_back(
                                               shape.size() - 1)) {
      Value rows = gatherAlongAxis(b, n.loc(), *x, axis, *indices);
      if (cast<RankedTensorType>(rows.getType()).getNumElements() != type->getNumElements())
        return n.emitError() << "the gather has shape " << shapeToString(shapeOf(rows))
                             << ", ONNX shape inference says " << shapeToString(type->getShape());
      n.setOutput(0, reshapeTo(n, rows, type->getShape()));
      return success();
    }
    return gather(*indices);
  }
  auto index = n.constantInts(1);
  if (failed(index))
    return failure();
  SmallVector<int64_t> at(*index);
  for (int64_t &i : at) {
    if (i < -shape[axis] || i >= shape[axis])
      return n.emitError() << "index " << i << " is out of range for dimension " << axis
                           << " of size " << shape[axis];
    if (i < 0)
      i += shape[axis];
  }
  const int64_t count = static_cast<int64_t>(at.size());
  if (count == 0)
    return n.emitError() << "input 1 holds no index";
  for (int64_t j = 1; j < count; ++j) {
    if (at[j] == at[0] + j)
      continue;
    // Any other indices (Swin's relative position bias): a gather at them.
    auto proto = n.constantInput(1);
    if (failed(proto))
      return failure();
    auto indexType = RankedTensorType::get(
        SmallVector<int64_t>((*proto)->dims().begin(), (*proto)->dims().end()), b.getI64Type());
    return gather(arith::ConstantOp::create(
        b, n.loc(), indexType, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(at))));
  }
  // The slice [at[0], at[0] + count) along the axis, reshaped to the result
  // (the axis dropped for a scalar index, replaced by the indices' shape).
  Value slice = *x;
  if (count < shape[axis]) {
    // One index: unit pieces, as mgs has always split (h[-1]); a range: the
    // rows before, the range, the rows after.
    SmallVector<int64_t> sizes;
    if (count == 1)
      sizes.assign(shape[axis], 1);
    else
      for (int64_t size : {at[0], count, shape[axis] - at[0] - count})
        if (size > 0)
          sizes.push_back(size);
    SmallVector<Type> pieces;
    for (int64_t size : sizes) {
      SmallVector<int64_t> pieceShape(shape);
      pieceShape[axis] = size;
      pieces.push_back(RankedTensorType::get(pieceShape, b.getF32Type()));
    }
    slice = SplitOp::create(b, n.loc(), pieces, *x, b.getI64IntegerAttr(axis))
                .getResult(count == 1 ? at[0] : at[0] > 0 ? 1 : 0);
  }
  n.setOutput(0, ReshapeOp::create(b, n.loc(), *type, slice));
  return success();
}

/// Slice with constant starts/ends/axes/steps: per sliced axis, a split into
/// the part before, the slice and the part after, keeping the slice (PyTorch
/// re-slices an LSTM's weights into ONNX's gate order so); with a step,
/// every step-th element of the slice (Swin's patch merging, x[:, 0::2]:
/// strideAxis); with a negative step (torch.flip), the elements picked in
/// their order by a gather.
FailureOr<Value> sliceByNode(NodeImporter &n, Value x) {
  auto starts = n.constantInts(1), ends = n.constantInts(2);
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  for (auto [i, list] : {std::pair{3, &axes}, std::pair{4, &steps}}) {
    if (!n.hasInput(i))
      continue;
    auto given = n.constantInts(i);
    if (failed(given))
      return failure();
    *list = *given;
  }
  SmallVector<int64_t> los, his, stepOf;
  if (std::string problem = sliceBounds(shapeOf(x), *starts, *ends, axes, steps, los, his, &stepOf);
      !problem.empty())
    return n.emitError() << problem;
  const int64_t rank = static_cast<int64_t>(los.size());
  OpBuilder &b = n.builder();
  Value v = x;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t lo = los[axis], hi = his[axis], step = stepOf[axis];
    if (lo == 0 && hi == shapeOf(v)[axis] && step == 1)
      continue;
    if (lo == hi) // Phi-3's rotary pass-through part at partial_rotary_factor 1
      return Value();
    if (step < 0) {
      SmallVector<int64_t> at;
      for (int64_t i = lo; i > hi; i += step)
        at.push_back(i);
      v = pickAlongAxis(b, n.loc(), v, axis, at);
      continue;
    }
    v = step == 1 ? sliceAxis(b, n.loc(), v, axis, lo, hi)
                  : strideAxis(b, n.loc(), v, axis, lo, (hi - lo + step - 1) / step, step);
  }
  return v;
}

LogicalResult convertSlice(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto v = sliceByNode(n, *x);
  if (failed(v))
    return failure();
  if (!*v) {
    n.setEmptyOutput(0);
    return success();
  }
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (v->getType() != *type)
    return n.emitError() << "the slice has shape " << shapeToString(shapeOf(*v))
                         << ", ONNX shape inference says " << shapeToString(type->getShape());
  n.setOutput(0, *v);
  return success();
}

} // namespace mgs::onnx_import
