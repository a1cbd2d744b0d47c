//===- RuntimeMask.cpp - Masks computed at run time from token ids --------===//
//
// A key-padding mask (`key_padding_mask = tokens == pad`, as PyTorch's
// nn.MultiheadAttention takes it) is computed at run time, but only from
// token ids an embedding also reads, whose rows bound them. Every value the
// mask leads to is then a constant table gathered at the ids (train.gather,
// exact, infinities included), reshaped and broadcast as the mask was: no
// new op or kernel. A float attention mask merged with it (nn.Transformer's
// masked_fill with -inf) is added to that table.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

Value GraphImporter::gatherMask(const RuntimeMask &mask, ArrayRef<float> table) {
  auto f32 = b.getF32Type();
  auto tableType = RankedTensorType::get({static_cast<int64_t>(table.size())}, f32);
  Value cst = arith::ConstantOp::create(b, curLoc, tableType, DenseElementsAttr::get(tableType, table));
  auto idsShape = cast<RankedTensorType>(mask.ids.getType()).getShape();
  Value v = GatherOp::create(b, curLoc, RankedTensorType::get(idsShape, f32), cst, mask.ids);
  for (const auto &[shape, expand] : mask.steps) {
    auto type = RankedTensorType::get(shape, f32);
    if (expand)
      v = AddOp::create(b, curLoc, type, v,
                        arith::ConstantOp::create(b, curLoc, type, DenseElementsAttr::get(type, 0.0f)));
    else
      v = ReshapeOp::create(b, curLoc, type, v);
  }
  return v;
}

LogicalResult GraphImporter::importRuntimeMask(bool &handled) {
  auto shapeOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  handled = false;
  const std::string &op = curNode->op_type();
  if (!hasOutput(0) || curNode->output_size() != 1)
    return success();
  if (op == "Equal") {
    int at = -1;
    for (int i = 0; i < 2 && at < 0; ++i)
      if (hasInput(i) && indexValues.count(curNode->input(i)))
        at = i;
    if (at < 0 || !hasInput(1 - at))
      return success();
    const std::string &ids = curNode->input(at);
    const onnx::TensorProto *c = foldableConstant(curNode->input(1 - at));
    if (!c || c->data_type() != onnx::TensorProto::INT64 || onnx::ParseData<int64_t>(c).size() != 1)
      return emitError() << "its input '" << ids
                         << "' (token ids) is compared at run time with something other than a "
                            "constant INT64 scalar; mgs compares token ids with a constant only "
                            "(a padding mask)";
    auto rows = embeddingRows.find(ids);
    if (rows == embeddingRows.end())
      return emitError() << "its input '" << ids
                         << "' (token ids) is compared at run time; mgs does so only for ids "
                            "an embedding (a Gather of an initializer) also reads, whose rows "
                            "bound them";
    const int64_t value = onnx::ParseData<int64_t>(c)[0];
    RuntimeMask mask{indexValues[ids], std::vector<bool>(rows->second, false), {}};
    if (value >= 0 && value < rows->second)
      mask.truth[value] = true;
    runtimeMasks[curNode->output(0)] = std::move(mask);
    handled = true;
    return success();
  }
  auto in = hasInput(0) ? runtimeMasks.find(curNode->input(0)) : runtimeMasks.end();
  if (in == runtimeMasks.end())
    return success();
  handled = true;
  RuntimeMask mask = in->second;
  auto outDims = [&]() -> FailureOr<SmallVector<int64_t>> {
    auto type = outputType(0, Type());
    if (failed(type))
      return failure();
    return SmallVector<int64_t>(type->getShape());
  };
  if (op == "Identity" || (op == "Cast" && curNode->attribute_size() == 1 &&
                           curNode->attribute(0).i() == onnx::TensorProto::BOOL)) {
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  if (op == "Not") {
    mask.truth.flip();
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  if (op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Expand") {
    auto dims = outDims();
    if (failed(dims))
      return failure();
    mask.steps.emplace_back(*dims, op == "Expand");
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  if (op == "Cast" && curNode->attribute_size() == 1) {
    // 1 where true: FLOAT data, or integers (RuntimeInts.cpp).
    using T = onnx::TensorProto;
    const int64_t to = curNode->attribute(0).i();
    const bool integer = llvm::is_contained(
        {T::INT8, T::INT16, T::INT32, T::INT64, T::UINT8, T::UINT16, T::UINT32, T::UINT64}, to);
    if (to == T::FLOAT || integer) {
      std::vector<float> table(mask.truth.begin(), mask.truth.end());
      Value v = gatherMask(mask, table);
      if (integer)
        return setRuntimeInt(v, 0.0, 1.0);
      setOutput(0, v);
      return success();
    }
  }
  if (op != "Where")
    return emitError() << "its input '" << curNode->input(0)
                       << "' is a mask computed at run time from token ids; mgs supports Not, "
                          "Reshape, Unsqueeze, Squeeze, Identity, Expand, Cast (to BOOL, FLOAT "
                          "or an integer type) and Where on such a mask";
  // Where(mask, x, y): each data branch times the 0/1 table of where it is
  // chosen, each constant branch of one value the table of its value where
  // chosen, summed; a branch of zeros adds nothing. A constant branch of
  // several finite values is multiplied by its 0/1 table as data is (exact:
  // each product is the value or a zero). One holding infinities (a float
  // attention mask PyTorch fills with -inf where the padding mask is true:
  // nn.Transformer given both masks) is added whole when the other branch
  // is a single infinity and it holds no NaN and no infinity of the other
  // sign: where that branch is chosen, the infinity absorbs every value
  // (-inf + c = -inf), elsewhere its table adds 0.
  auto outType = outputType(0, b.getF32Type());
  if (failed(outType))
    return failure();
  std::optional<std::vector<float>> constant[3];
  for (int branch = 1; branch <= 2; ++branch)
    if (inputIsConstant(branch)) {
      auto values = constantFloats(branch);
      if (failed(values))
        return failure();
      constant[branch] = std::move(*values);
    }
  auto oneValue = [](const std::optional<std::vector<float>> &values) {
    return values && !values->empty() && llvm::all_of(*values, [&](float v) {
             return std::memcmp(&v, &values->front(), sizeof v) == 0;
           });
  };
  Value sum;
  auto add = [&](Value term) {
    if (!sum) {
      sum = term;
      return;
    }
    auto shape = broadcastShapes(shapeOf(sum), shapeOf(term));
    sum = AddOp::create(b, curLoc, RankedTensorType::get(*shape, b.getF32Type()), sum, term);
  };
  for (int branch = 1; branch <= 2; ++branch) {
    std::vector<float> table(mask.truth.size());
    if (oneValue(constant[branch])) {
      const float value = constant[branch]->front();
      if (value == 0.0f)
        continue;
      for (size_t v = 0; v < table.size(); ++v)
        table[v] = mask.truth[v] == (branch == 1) ? value : 0.0f;
      add(gatherMask(mask, table));
      continue;
    }
    auto x = input(branch);
    if (failed(x))
      return failure();
    if (constant[branch] &&
        !llvm::all_of(*constant[branch], [](float v) { return std::isfinite(v); })) {
      const auto &other = constant[3 - branch];
      const float fill = oneValue(other) ? other->front() : 0.0f;
      if (!std::isinf(fill) || llvm::any_of(*constant[branch], [&](float v) {
            return std::isnan(v) || (std::isinf(v) && v != fill);
          }))
        return emitError() << "input " << branch << " ('" << curNode->input(branch)
                           << "') holds several values, infinities among them, where the "
                              "condition is a mask computed at run time from token ids; mgs "
                              "imports such a branch only when the other one is a single "
                              "infinity and this one holds no NaN and no infinity of the other "
                              "sign (a float mask filled with -inf where the mask is true)";
      add(*x);
      continue;
    }
    for (size_t v = 0; v < table.size(); ++v)
      table[v] = mask.truth[v] == (branch == 1) ? 1.0f : 0.0f;
    Value keep = gatherMask(mask, table);
    auto shape = broadcastShapes(shapeOf(*x), shapeOf(keep));
    if (!shape)
      return emitError() << "input " << branch << " of shape " << shapeToString(shapeOf(*x))
                         << " does not broadcast with the condition's "
                         << shapeToString(shapeOf(keep));
    add(MulOp::create(b, curLoc, RankedTensorType::get(*shape, b.getF32Type()), *x, keep));
  }
  auto zeros = arith::ConstantOp::create(b, curLoc, *outType, DenseElementsAttr::get(*outType, 0.0f));
  if (!sum)
    sum = zeros;
  else if (sum.getType() != *outType)
    sum = AddOp::create(b, curLoc, *outType, sum, zeros);
  setOutput(0, sum);
  return success();
}

} // namespace mgs::onnx_import
