//===- RuntimeMask.cpp - Masks computed at run time from token ids --------===//
//
// A key-padding mask (`key_padding_mask = tokens == pad`, as PyTorch's
// nn.MultiheadAttention takes it) is computed at run time, but only from
// token ids an embedding also reads, whose rows bound them. Every value the
// mask leads to is then a constant table gathered at the ids (train.gather,
// exact, infinities included), laid out as the mask was (reshaped,
// broadcast, or gathered at constant positions: any data-movement op, whose
// positions the folder computes): no new op or kernel. A float attention
// mask merged with it (nn.Transformer's masked_fill with -inf) is added to
// that table; a constant BOOL mask And-ed with it (Hugging Face's causal or
// all-true mask and its attention_mask) is kept beside it and applied where
// the mask is used: added as 0 / -inf, or multiplied in.
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

SmallVector<int64_t> GraphImporter::RuntimeMask::shape() const {
  if (!steps.empty())
    return steps.back().shape;
  return SmallVector<int64_t>(cast<RankedTensorType>(ids.getType()).getShape());
}

Value GraphImporter::gatherMask(const RuntimeMask &mask, ArrayRef<float> table) {
  auto f32 = b.getF32Type();
  auto tableType = RankedTensorType::get({static_cast<int64_t>(table.size())}, f32);
  Value cst = arith::ConstantOp::create(b, curLoc, tableType, DenseElementsAttr::get(tableType, table));
  auto idsShape = cast<RankedTensorType>(mask.ids.getType()).getShape();
  Value v = GatherOp::create(b, curLoc, RankedTensorType::get(idsShape, f32), cst, mask.ids);
  auto reshaped = [&](Value x, RankedTensorType type) -> Value {
    return x.getType() == type ? x : ReshapeOp::create(b, curLoc, type, x).getResult();
  };
  for (const RuntimeMask::Step &step : mask.steps) {
    auto type = RankedTensorType::get(step.shape, f32);
    switch (step.kind) {
    case RuntimeMask::Step::Reshape:
      v = reshaped(v, type);
      break;
    case RuntimeMask::Step::Expand:
      v = broadcastTo(b, curLoc, v, type);
      break;
    case RuntimeMask::Step::Gather: {
      // The previous layout as one column, its rows at the flat positions.
      const int64_t count = cast<RankedTensorType>(v.getType()).getNumElements();
      Value column = reshaped(v, RankedTensorType::get({count, 1}, f32));
      auto atType = RankedTensorType::get(step.shape, b.getI64Type());
      Value at = arith::ConstantOp::create(b, curLoc, atType,
                                           DenseElementsAttr::get(atType, ArrayRef<int64_t>(step.at)));
      SmallVector<int64_t> rows(step.shape);
      rows.push_back(1);
      Value gathered = GatherOp::create(b, curLoc, RankedTensorType::get(rows, f32), column, at);
      v = ReshapeOp::create(b, curLoc, type, gathered);
      break;
    }
    }
  }
  return v;
}

namespace {

/// Whether Where(mask, kept, hidden) of one value each is an attention bias
/// whose softmax rows IsNaN.cpp may take as free of NaN: hidden is -inf
/// (TorchScript's masks; a row the data pad entirely is NaN, see there) or
/// both are finite (torch.export's dtype minimum: no row is ever NaN).
bool isMaskBias(float kept, float hidden) {
  return std::isfinite(kept) && (hidden == -INFINITY || std::isfinite(hidden));
}

/// For each element of `to`, the flat position in `from` NumPy broadcasting
/// reads it from (`from` broadcasts to `to`).
std::vector<int64_t> broadcastPositions(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  const size_t rank = to.size();
  SmallVector<int64_t> in(rank, 1);
  std::copy(from.begin(), from.end(), in.begin() + (rank - from.size()));
  std::vector<int64_t> at(mgs::train::numElements(to));
  for (size_t i = 0; i < at.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), pos = 0, stride = 1;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      const int64_t coord = rest % to[d];
      rest /= to[d];
      pos += (in[d] == 1 ? 0 : coord) * stride;
      stride *= in[d];
    }
    at[i] = pos;
  }
  return at;
}

} // namespace

LogicalResult GraphImporter::layOutMask(RuntimeMask &mask) {
  const std::string &name = curNode->input(0);
  const SmallVector<int64_t> from = mask.shape();
  // A stand-in for the mask: its flat positions, which the node moves.
  onnx::TensorProto positions;
  positions.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : from)
    positions.add_dims(d);
  const int64_t count = mgs::train::numElements(from);
  for (int64_t i = 0; i < count; ++i)
    positions.add_int64_data(i);
  FoldContext fc = foldContext();
  auto constant = fc.constant;
  fc.constant = [&](const std::string &n) { return n == name ? &positions : constant(n); };
  auto shape = fc.staticShape;
  fc.staticShape = [&](const std::string &n) -> std::optional<SmallVector<int64_t>> {
    return n == name ? std::optional<SmallVector<int64_t>>(from) : shape(n);
  };
  onnx::TensorProto moved;
  std::string error;
  switch (foldNode(*curNode, fc, moved, error)) {
  case FoldResult::Folded:
    break;
  case FoldResult::NotConstant:
    return emitError() << "its input '" << name
                       << "' is a mask computed at run time from token ids, and its other "
                          "inputs are computed at run time too; mgs moves such a mask only by "
                          "constant shapes, indices and permutations";
  case FoldResult::Failed:
    return emitError() << error;
  }
  RuntimeMask::Step step;
  step.shape.assign(moved.dims().begin(), moved.dims().end());
  step.at = onnx::ParseData<int64_t>(&moved);
  bool inOrder = static_cast<int64_t>(step.at.size()) == count;
  for (int64_t i = 0; inOrder && i < count; ++i)
    inOrder = step.at[i] == i;
  step.kind = inOrder ? RuntimeMask::Step::Reshape
              : curNode->op_type() == "Expand" ? RuntimeMask::Step::Expand
                                               : RuntimeMask::Step::Gather;
  if (!mask.andConstant.empty()) {
    std::vector<float> moves(step.at.size());
    for (size_t i = 0; i < moves.size(); ++i)
      moves[i] = mask.andConstant[step.at[i]];
    mask.andConstant = std::move(moves);
  }
  if (step.kind != RuntimeMask::Step::Gather)
    step.at.clear();
  mask.steps.push_back(std::move(step));
  return success();
}

Value GraphImporter::selectConstants(const RuntimeMask &mask, float x, float y) {
  std::vector<float> table(mask.truth.size());
  for (size_t v = 0; v < table.size(); ++v)
    table[v] = mask.truth[v] ? x : y;
  Value chosen = gatherMask(mask, table);
  if (mask.andConstant.empty())
    return chosen;
  // Where(m and c, x, y) with c constant: where c is false, y.
  auto type = cast<RankedTensorType>(chosen.getType());
  auto constant = [&](auto value) {
    std::vector<float> values;
    for (float c : mask.andConstant)
      values.push_back(value(c != 0.0f));
    return arith::ConstantOp::create(b, curLoc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
  };
  if (y == -INFINITY && std::isfinite(x)) // -inf absorbs: add 0 where c, -inf elsewhere
    return AddOp::create(b, curLoc, type, chosen,
                         constant([](bool c) { return c ? 0.0f : -INFINITY; }));
  if (std::isfinite(x) && std::isfinite(y)) { // chosen where c, y elsewhere: each exact
    Value kept = MulOp::create(b, curLoc, type, chosen,
                               constant([](bool c) { return c ? 1.0f : 0.0f; }));
    return AddOp::create(b, curLoc, type, kept, constant([&](bool c) { return c ? 0.0f : y; }));
  }
  emitError() << "it selects " << x << " and " << y
              << " by a mask computed at run time from token ids and And-ed with a constant "
                 "mask; mgs selects finite values, or a finite value and -inf, there";
  return Value();
}

int GraphImporter::paddingMaskIds() {
  if (curNode->op_type() != "Equal" || curNode->input_size() != 2)
    return -1;
  for (int i = 0; i < 2; ++i) {
    if (!hasInput(i) || !hasInput(1 - i) || !indexValues.count(curNode->input(i)) ||
        !embeddingRows.count(curNode->input(i)))
      continue;
    const onnx::TensorProto *c = foldableConstant(curNode->input(1 - i));
    if (c && c->data_type() == onnx::TensorProto::INT64 && onnx::ParseData<int64_t>(c).size() == 1)
      return i;
  }
  return -1;
}

LogicalResult GraphImporter::importRuntimeMask(bool &handled) {
  auto shapeOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  handled = false;
  const std::string &op = curNode->op_type();
  if (!hasOutput(0) || curNode->output_size() != 1)
    return success();
  if (op == "Equal") {
    // (Other comparisons of ids are truths: DataIntegers.cpp.)
    const int at = paddingMaskIds();
    if (at < 0)
      return success();
    const std::string &ids = curNode->input(at);
    auto rows = embeddingRows.find(ids);
    const int64_t value = onnx::ParseData<int64_t>(foldableConstant(curNode->input(1 - at)))[0];
    RuntimeMask mask{indexValues[ids], std::vector<bool>(rows->second, false), {}};
    if (value >= 0 && value < rows->second)
      mask.truth[value] = true;
    runtimeMasks[curNode->output(0)] = std::move(mask);
    handled = true;
    return success();
  }
  // Attention reading such a mask (torch.export's scaled_dot_product_attention
  // with Hugging Face's attention_mask): its additive bias, 0 where the mask
  // is true (attend), -inf elsewhere, computed here for the converter.
  if (op == "Attention" && hasInput(3)) {
    auto mask = runtimeMasks.find(curNode->input(3));
    if (mask == runtimeMasks.end())
      return success();
    Value bias = selectConstants(mask->second, 0.0f, -INFINITY);
    if (!bias)
      return failure();
    values[curNode->input(3)] = bias;
    runtimeMaskBiases.insert(curNode->input(3));
    return success(); // not handled: the converter goes on
  }
  if (op == "And") {
    // A mask And-ed with a constant BOOL mask: kept beside it, in the
    // output's shape (the mask broadcast to it).
    int at = -1;
    for (int i = 0; i < 2 && at < 0; ++i)
      if (hasInput(i) && runtimeMasks.count(curNode->input(i)))
        at = i;
    if (at < 0)
      return success();
    handled = true;
    RuntimeMask mask = runtimeMasks.lookup(curNode->input(at));
    const std::string &other = curNode->input(1 - at);
    const onnx::TensorProto *c = hasInput(1 - at) ? foldableConstant(other) : nullptr;
    if (!c || c->data_type() != onnx::TensorProto::BOOL)
      return emitError() << "its input '" << curNode->input(at)
                         << "' is a mask computed at run time from token ids; mgs And-s it only "
                            "with a constant BOOL mask, and '"
                         << other << "' is not one";
    auto outShape = knownShape(curNode->output(0));
    if (!outShape)
      return emitError() << "output '" << curNode->output(0)
                         << "' has no static shape after ONNX shape inference";
    const SmallVector<int64_t> from = mask.shape();
    if (from != *outShape) {
      RuntimeMask::Step step{RuntimeMask::Step::Expand, *outShape, {}};
      if (!mask.andConstant.empty()) {
        std::vector<float> moved;
        for (int64_t p : broadcastPositions(from, *outShape))
          moved.push_back(mask.andConstant[p]);
        mask.andConstant = std::move(moved);
      }
      mask.steps.push_back(std::move(step));
    }
    const std::vector<int64_t> cAt =
        broadcastPositions(SmallVector<int64_t>(c->dims().begin(), c->dims().end()), *outShape);
    // BOOL data: a byte a value in raw_data, else an int32 a value.
    auto cValue = [&](int64_t i) -> bool {
      return c->has_raw_data() ? c->raw_data()[i] != 0 : c->int32_data(i) != 0;
    };
    std::vector<float> andConstant(cAt.size());
    for (size_t i = 0; i < cAt.size(); ++i)
      andConstant[i] = cValue(cAt[i]) && (mask.andConstant.empty() || mask.andConstant[i] != 0.0f)
                           ? 1.0f
                           : 0.0f;
    mask.andConstant = std::move(andConstant);
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  auto in = hasInput(0) ? runtimeMasks.find(curNode->input(0)) : runtimeMasks.end();
  if (in == runtimeMasks.end())
    return success();
  handled = true;
  RuntimeMask mask = in->second;
  if (op == "Identity" || (op == "Cast" && curNode->attribute_size() == 1 &&
                           curNode->attribute(0).i() == onnx::TensorProto::BOOL)) {
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  if (op == "Not") {
    if (!mask.andConstant.empty())
      return emitError() << "its input '" << curNode->input(0)
                         << "' is a mask computed at run time from token ids And-ed with a "
                            "constant mask; mgs does not negate such a mask";
    mask.truth.flip();
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  if (llvm::is_contained({"Reshape", "Unsqueeze", "Squeeze", "Expand", "Flatten", "Transpose",
                          "Slice", "Tile", "Gather", "GatherND", "GatherElements"},
                         op)) {
    if (failed(layOutMask(mask)))
      return failure();
    runtimeMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  if (op == "Cast" && curNode->attribute_size() == 1) {
    // 1 where true: FLOAT data, or integers (RuntimeInts.cpp), which
    // remember the mask they are (a Cast back to BOOL is the mask again).
    using T = onnx::TensorProto;
    const int64_t to = curNode->attribute(0).i();
    const bool integer = llvm::is_contained(
        {T::INT8, T::INT16, T::INT32, T::INT64, T::UINT8, T::UINT16, T::UINT32, T::UINT64}, to);
    if (to == T::FLOAT || integer) {
      Value v = selectConstants(mask, 1.0f, 0.0f);
      if (!v)
        return failure();
      if (!integer) {
        setOutput(0, v);
        return success();
      }
      if (failed(setRuntimeInt(v, 0.0, 1.0, "from token ids")))
        return failure();
      runtimeInts[curNode->output(0)].mask = std::move(mask);
      return success();
    }
  }
  if (op != "Where")
    return emitError() << "its input '" << curNode->input(0)
                       << "' is a mask computed at run time from token ids; mgs supports Not, "
                          "And (with a constant mask), Cast (to BOOL, FLOAT or an integer type), "
                          "Where and ops that move its elements (Reshape, Expand, Transpose, "
                          "Gather, ...) on such a mask";
  if (!mask.andConstant.empty()) {
    // Where(mask and c, x, y) of one-valued constant branches (a mask's 0 and -inf).
    float branch[2];
    for (int i = 0; i < 2; ++i) {
      auto values = inputIsConstant(i + 1) ? constantFloats(i + 1) : FailureOr<std::vector<float>>();
      if (failed(values) || values->empty() ||
          llvm::any_of(*values, [&](float v) {
            return std::memcmp(&v, &values->front(), sizeof v) != 0;
          }))
        return emitError() << "its condition is a mask computed at run time from token ids And-ed "
                              "with a constant mask; mgs selects between two constants of one "
                              "value each there, and input "
                           << i + 1 << " ('" << curNode->input(i + 1) << "') is not one";
      branch[i] = values->front();
    }
    Value v = selectConstants(mask, branch[0], branch[1]);
    if (!v)
      return failure();
    auto outType = outputType(0, b.getF32Type());
    if (failed(outType))
      return failure();
    if (v.getType() != *outType)
      v = broadcastTo(b, curLoc, v, *outType);
    if (isMaskBias(branch[0], branch[1]))
      runtimeMaskBiases.insert(curNode->output(0));
    setOutput(0, v);
    return success();
  }
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
  if (oneValue(constant[2]) &&
      (constant[2]->front() == -INFINITY ||
       (oneValue(constant[1]) && isMaskBias(constant[1]->front(), constant[2]->front()))))
    runtimeMaskBiases.insert(curNode->output(0));
  if (!sum)
    sum = arith::ConstantOp::create(b, curLoc, *outType, DenseElementsAttr::get(*outType, 0.0f));
  else if (sum.getType() != *outType)
    sum = broadcastTo(b, curLoc, sum, *outType);
  setOutput(0, sum);
  return success();
}

} // namespace mgs::onnx_import
