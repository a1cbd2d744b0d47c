//===- Scatter.cpp - ScatterND and ScatterElements of computed data -------===//
//
// Without a reduction, built from train.gather (the embedding's kernel) over
// the data's rows and the updates' rows, concatenated: no kernel of its own,
// and no arithmetic on the data, so what the data holds where the updates go
// (inf, NaN) does not reach the result. The gather's gradient reaches the
// data where nothing was written and each update that was (not one
// overwritten by a later one). ScatterElements' 'add' adds the updates with
// gather's gradient kernel; 'max' and 'min' gather each place's data and
// updates into a row of the same concatenation and take its extremum.
//
//===----------------------------------------------------------------------===//

#include "converters/Scatter.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <onnx/defs/tensor_proto_util.h>

#include <limits>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

/// Rows (of `sliceDims`) of [the data's rows; the updates' rows], the data's
/// and the updates' leading dimensions flattened: result row r is row
/// source[r] of that concatenation (one train.gather), of `resultType`.
Value gatherRows(OpBuilder &b, Location loc, Value data, Value updates, ArrayRef<int64_t> sliceDims,
                 ArrayRef<int64_t> source, RankedTensorType resultType) {
  const int64_t slice = numElements(sliceDims), rows = numElements(shapeOf(data)) / slice,
                tuples = numElements(shapeOf(updates)) / slice;
  auto f32 = [&](int64_t leading) {
    SmallVector<int64_t> shape{leading};
    shape.append(sliceDims.begin(), sliceDims.end());
    return RankedTensorType::get(shape, b.getF32Type());
  };
  Value table = data;
  if (shapeOf(table) != ArrayRef<int64_t>(f32(rows).getShape()))
    table = ReshapeOp::create(b, loc, f32(rows), table);
  Value updateRows = updates;
  if (shapeOf(updateRows) != ArrayRef<int64_t>(f32(tuples).getShape()))
    updateRows = ReshapeOp::create(b, loc, f32(tuples), updateRows);
  table = ConcatOp::create(b, loc, f32(rows + tuples), ValueRange{table, updateRows},
                           b.getI64IntegerAttr(0));
  const int64_t picked = static_cast<int64_t>(source.size());
  auto indexType = RankedTensorType::get({picked}, b.getI64Type());
  Value at =
      arith::ConstantOp::create(b, loc, indexType, DenseElementsAttr::get(indexType, source));
  Value out = GatherOp::create(b, loc, f32(picked), table, at);
  if (out.getType() != resultType)
    out = ReshapeOp::create(b, loc, resultType, out);
  return out;
}

/// The greatest (or least) of each row of `rows` ([places, width]) among
/// the entries `valid` marks (1.0), as [places, 1], its gradient split evenly
/// among the entries equal to it, as PyTorch's scatter_reduce with amax or
/// amin splits it: the extremum m (selectExtremum, detached), the
/// tied entries' weights w (1 / their count; no gradient through the
/// comparison), and m + (s - detach(s)) for s = sum(w * tied entries), exactly
/// m forward; where m is infinite (s - s would be NaN) m alone.
Value tiedExtremum(NodeImporter &n, Value rows, Value valid, bool largest) {
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  auto rowsType = cast<RankedTensorType>(rows.getType());
  auto colType = RankedTensorType::get({rowsType.getDimSize(0), 1}, b.getF32Type());
  Value m = selectExtremum(b, loc, rows, {1}, largest).first;
  if (m.getType() != colType)
    m = ReshapeOp::create(b, loc, colType, m);
  m = StopGradientOp::create(b, loc, colType, m);
  Value tie = MulOp::create(b, loc, rowsType, EqualOp::create(b, loc, rowsType, rows, m), valid);
  Value count = ReduceOp::create(b, loc, colType, b.getStringAttr("sum"), tie,
                                 b.getDenseI64ArrayAttr({1}), b.getBoolAttr(true));
  // (a NaN extremum ties nothing: its count 0 made 1, so the weights stay 0)
  count = AddOp::create(b, loc, colType, count,
                        EqualOp::create(b, loc, colType, count, f32Scalar(n, 0.0f)));
  Value weight = DivOp::create(b, loc, rowsType, tie, count);
  Value tied =
      MulOp::create(b, loc, rowsType, KeepWhereOp::create(b, loc, rowsType, rows, tie), weight);
  Value sum = ReduceOp::create(b, loc, colType, b.getStringAttr("sum"), tied,
                               b.getDenseI64ArrayAttr({1}), b.getBoolAttr(true));
  Value zero = SubOp::create(b, loc, colType, sum, StopGradientOp::create(b, loc, colType, sum));
  Value infinite = EqualOp::create(b, loc, colType, AbsOp::create(b, loc, colType, m),
                                   f32Scalar(n, std::numeric_limits<float>::infinity()));
  Value finite = SubOp::create(b, loc, colType, f32Scalar(n, 1.0f), infinite);
  return AddOp::create(b, loc, colType, m, KeepWhereOp::create(b, loc, colType, zero, finite));
}

} // namespace

LogicalResult convertScatterND(NodeImporter &n) {
  std::string reduction = n.stringAttr("reduction", "none");
  if (reduction != "none")
    return n.emitError() << "reduction '" << reduction
                         << "' on computed data is not supported; supported: none";
  if (!n.inputIsConstant(1))
    return n.emitError() << "its indices ('" << n.node().input(1)
                         << "') must be constants when its data is computed or trained";
  auto data = n.input(0);
  auto indexTensor = n.constantInput(1);
  auto updates = n.input(2);
  auto resultType = n.outputType(0);
  if (failed(data) || failed(indexTensor) || failed(updates) || failed(resultType))
    return failure();
  // ONNX's type inference has refused other types already (swin-v2-pieces.onnxtext's
  // int32 indices): a backstop for ParseData.
  if ((*indexTensor)->data_type() != onnx::TensorProto::INT64)
    return n.emitError() << "the indices must be INT64";
  const std::vector<int64_t> indices = onnx::ParseData<int64_t>(*indexTensor);
  auto type = cast<RankedTensorType>(data->getType());
  ArrayRef<int64_t> dims = type.getShape();
  const int64_t rank = static_cast<int64_t>(dims.size());
  SmallVector<int64_t> indexDims((*indexTensor)->dims().begin(), (*indexTensor)->dims().end());
  const int64_t k = indexDims.empty() ? 0 : indexDims.back();
  if (k < 1 || k > rank)
    return n.emitError() << "the indices' last dimension must be in [1, " << rank << "], got "
                         << shapeToString(indexDims);
  // updates: indices.shape[:-1] + data.shape[k:].
  SmallVector<int64_t> want(indexDims.begin(), indexDims.end() - 1);
  want.append(dims.begin() + k, dims.end());
  ArrayRef<int64_t> updateDims = shapeOf(*updates);
  if (ArrayRef<int64_t>(want) != updateDims)
    return n.emitError() << "updates have shape " << shapeToString(updateDims) << ", expected "
                         << shapeToString(want) << " (indices.shape[:-1] + data.shape[k:])";

  // The data as rows (its first k dimensions) of slices (the rest): each
  // row of the result is the data's row or the last update written to it.
  ArrayRef<int64_t> sliceDims = dims.drop_front(k);
  const int64_t rows = numElements(dims.take_front(k)), slice = numElements(sliceDims);
  const int64_t tuples = static_cast<int64_t>(indices.size()) / k;
  // Gathered from [the data's rows; the updates' rows]: row r of the data,
  // or row `rows + t` for the t-th update, the last written to row r.
  SmallVector<int64_t> source(rows);
  for (int64_t r = 0; r < rows; ++r)
    source[r] = r;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = indices[t * k + d];
      if (i < -dims[d] || i >= dims[d])
        return n.emitError() << "index " << i << " is out of range for dimension " << d
                             << " of size " << dims[d];
      at = at * dims[d] + (i < 0 ? i + dims[d] : i);
    }
    source[at] = rows + t;
  }
  if (tuples == 0 || slice == 0) {
    n.setOutput(0, *data);
    return success();
  }
  n.setOutput(0, gatherRows(n.builder(), n.loc(), *data, *updates, sliceDims, source, *resultType));
  return success();
}

LogicalResult convertScatterElements(NodeImporter &n) {
  std::string reduction = n.stringAttr("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "max" && reduction != "min")
    return n.emitError() << "reduction '" << reduction
                         << "' on computed data is not supported; supported: none, add, max, min";
  if (!n.inputIsConstant(1))
    return n.emitError() << "its indices ('" << n.node().input(1)
                         << "') must be constants or integers computed at run time (TopK's, "
                            "ArgMax's) when its data is computed or trained";
  auto data = n.input(0);
  auto indexTensor = n.constantInput(1);
  auto indexValues = n.constantInts(1);
  auto updates = n.input(2);
  auto resultType = n.outputType(0);
  if (failed(data) || failed(indexTensor) || failed(indexValues) || failed(updates) ||
      failed(resultType))
    return failure();
  ArrayRef<int64_t> dims = shapeOf(*data);
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto axis = n.axisAttr("axis", 0, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> indexDims((*indexTensor)->dims().begin(), (*indexTensor)->dims().end());
  bool fits = static_cast<int64_t>(indexDims.size()) == rank &&
              shapeOf(*updates) == ArrayRef<int64_t>(indexDims);
  for (int64_t d = 0; fits && d < rank; ++d)
    fits = d == *axis || indexDims[d] <= dims[d];
  if (!fits)
    return n.emitError() << "its indices " << shapeToString(indexDims) << " and updates "
                         << shapeToString(shapeOf(*updates)) << " must have one shape, of the "
                         << "data's rank and no larger than the data " << shapeToString(dims)
                         << " but along axis " << *axis;
  const int64_t extent = dims[*axis], count = numElements(dims);
  // Each index element's place in the data, row-major (negative indices
  // count from the axis' end).
  SmallVector<int64_t> strides(rank, 1), places;
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  for (int64_t e = 0; e < static_cast<int64_t>(indexValues->size()); ++e) {
    int64_t i = (*indexValues)[e];
    if (i < -extent || i >= extent)
      return n.emitError() << "index " << i << " is out of range for axis " << *axis << " of size "
                           << extent;
    int64_t place = 0;
    for (int64_t d = rank - 1, rest = e; d >= 0; --d) {
      const int64_t coord = rest % indexDims[d];
      rest /= indexDims[d];
      place += (d == *axis ? (i < 0 ? i + extent : i) : coord) * strides[d];
    }
    places.push_back(place);
  }
  OpBuilder &b = n.builder();
  if (reduction == "none") {
    // Each place reads the data or the last update written to it.
    SmallVector<int64_t> source(count);
    for (int64_t r = 0; r < count; ++r)
      source[r] = r;
    for (auto [e, place] : llvm::enumerate(places))
      source[place] = count + static_cast<int64_t>(e);
    n.setOutput(0, places.empty()
                       ? *data
                       : gatherRows(b, n.loc(), *data, *updates, {}, source, *resultType));
    return success();
  }
  Location loc = n.loc();
  auto f32 = [&](int64_t size) { return RankedTensorType::get({size}, b.getF32Type()); };
  Value out;
  if (reduction == "add") {
    // The updates summed into their places in index order by gather's
    // gradient kernel (a scatter-add, no one-hot: O(updates)); its own
    // gradient is the gather at the places.
    const int64_t writes = static_cast<int64_t>(places.size());
    auto placesType = RankedTensorType::get({writes}, b.getI64Type());
    Value at = arith::ConstantOp::create(
        b, loc, placesType, DenseElementsAttr::get(placesType, ArrayRef<int64_t>(places)));
    Value sums = GatherGradOp::create(b, loc, f32(count), at,
                                      ReshapeOp::create(b, loc, f32(writes), *updates));
    out = AddOp::create(b, loc, f32(count), ReshapeOp::create(b, loc, f32(count), *data), sums);
  } else {
    // max / min: each place's data and the updates written to it as a row
    // of a table gathered from [data; updates], short rows padded with the
    // place's own data element (masked out of the ties below).
    SmallVector<SmallVector<int64_t, 2>> writers(count);
    for (auto [e, place] : llvm::enumerate(places))
      writers[place].push_back(count + static_cast<int64_t>(e));
    int64_t width = 1;
    for (const auto &w : writers)
      width = std::max<int64_t>(width, 1 + static_cast<int64_t>(w.size()));
    if (count * width > (int64_t{1} << 27))
      return n.emitError() << "with reduction '" << reduction << "' it compares " << width
                           << " values at each of " << count << " places, more than 2^27 in all";
    SmallVector<int64_t> source(count * width);
    SmallVector<float> valid(count * width);
    for (int64_t p = 0; p < count; ++p)
      for (int64_t j = 0; j < width; ++j) {
        const bool written = j >= 1 && j <= static_cast<int64_t>(writers[p].size());
        source[p * width + j] = written ? writers[p][j - 1] : p;
        valid[p * width + j] = j == 0 || written ? 1.0f : 0.0f;
      }
    Value rows = gatherRows(b, loc, *data, *updates, {}, source,
                            RankedTensorType::get({count, width}, b.getF32Type()));
    out = tiedExtremum(n, rows, f32Constant(n, {count, width}, valid), reduction == "max");
  }
  n.setOutput(0, ReshapeOp::create(b, loc, *resultType, out).getResult());
  return success();
}

} // namespace mgs::onnx_import
