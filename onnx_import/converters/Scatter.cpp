//===- Scatter.cpp - ScatterND of computed data ---------------------------===//
//
// Built from train.mul and train.add with constants: no kernel of its own.
//
//===----------------------------------------------------------------------===//

#include "converters/Scatter.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertScatterND(NodeImporter &n) {
  std::string reduction = n.stringAttr("reduction", "none");
  if (reduction != "none")
    return n.emitError() << "reduction '" << reduction
                         << "' on computed data is not supported; supported: none";
  for (int i : {1, 2})
    if (!n.inputIsConstant(i) || n.inputIsParameter(i))
      return n.emitError() << "its " << (i == 1 ? "indices" : "updates") << " ('"
                           << n.node().input(i)
                           << "') must be constants when its data is computed or trained";
  auto data = n.input(0);
  auto indexTensor = n.constantInput(1);
  auto indices = n.constantInts(1);
  auto updateTensor = n.constantInput(2);
  auto updates = n.constantFloats(2);
  if (failed(data) || failed(indexTensor) || failed(indices) || failed(updateTensor) ||
      failed(updates))
    return failure();
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
  SmallVector<int64_t> updateDims((*updateTensor)->dims().begin(),
                                  (*updateTensor)->dims().end());
  if (ArrayRef<int64_t>(want) != ArrayRef<int64_t>(updateDims))
    return n.emitError() << "updates have shape " << shapeToString(updateDims) << ", expected "
                         << shapeToString(want) << " (indices.shape[:-1] + data.shape[k:])";
  int64_t slice = 1;
  for (int64_t d = k; d < rank; ++d)
    slice *= dims[d];
  const int64_t count = type.getNumElements();
  std::vector<float> keep(count, 1.0f), placed(count, 0.0f);
  const int64_t tuples = static_cast<int64_t>(indices->size()) / k;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = (*indices)[t * k + d];
      if (i < -dims[d] || i >= dims[d])
        return n.emitError() << "index " << i << " is out of range for dimension " << d
                             << " of size " << dims[d];
      at = at * dims[d] + (i < 0 ? i + dims[d] : i);
    }
    for (int64_t j = 0; j < slice; ++j) {
      keep[at * slice + j] = 0.0f;
      placed[at * slice + j] = (*updates)[t * slice + j];
    }
  }
  auto resultType = n.outputType(0);
  if (failed(resultType))
    return failure();
  OpBuilder &b = n.builder();
  auto constant = [&](const std::vector<float> &values) {
    return arith::ConstantOp::create(b, n.loc(), type,
                                     DenseElementsAttr::get(type, ArrayRef<float>(values)))
        .getResult();
  };
  Value out = MulOp::create(b, n.loc(), *resultType, *data, constant(keep));
  if (llvm::any_of(placed, [](float v) { return v != 0.0f; }))
    out = AddOp::create(b, n.loc(), *resultType, out, constant(placed));
  n.setOutput(0, out);
  return success();
}

} // namespace mgs::onnx_import
