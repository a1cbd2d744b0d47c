//===- Scatter.cpp - ScatterND of computed data ---------------------------===//
//
// Built from train.gather (the embedding's kernel) over the data's rows and
// the updates' rows, concatenated: no kernel of its own, and no arithmetic
// on the data, so what the data holds where the updates go (inf, NaN) does
// not reach the result. The gather's gradient reaches the data where
// nothing was written and each update that was (not one overwritten by a
// later one).
//
//===----------------------------------------------------------------------===//

#include "converters/Scatter.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <onnx/defs/tensor_proto_util.h>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

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
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  auto f32 = [&](int64_t leading) {
    SmallVector<int64_t> shape{leading};
    shape.append(sliceDims.begin(), sliceDims.end());
    return RankedTensorType::get(shape, b.getF32Type());
  };
  Value table = *data;
  if (k != 1)
    table = ReshapeOp::create(b, loc, f32(rows), table);
  Value updateRows = *updates;
  if (shapeOf(updateRows) != ArrayRef<int64_t>(f32(tuples).getShape()))
    updateRows = ReshapeOp::create(b, loc, f32(tuples), updateRows);
  table = ConcatOp::create(b, loc, f32(rows + tuples), ValueRange{table, updateRows},
                           b.getI64IntegerAttr(0));
  auto indexType = RankedTensorType::get({rows}, b.getI64Type());
  Value at = arith::ConstantOp::create(b, loc, indexType,
                                       DenseElementsAttr::get(indexType, ArrayRef(source)));
  Value out = GatherOp::create(b, loc, f32(rows), table, at);
  if (k != 1)
    out = ReshapeOp::create(b, loc, *resultType, out);
  n.setOutput(0, out);
  return success();
}

} // namespace mgs::onnx_import
