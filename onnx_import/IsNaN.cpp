//===- IsNaN.cpp - IsNaN of an attention's probabilities ------------------===//
//
// The TorchScript exporter writes scaled_dot_product_attention with a BOOL
// mask as softmax(scores + Where(mask, 0, -inf)) followed by
// Where(IsNaN(p), 0, p), which zeroes the rows the mask hides entirely (their
// softmax is 0 / 0). Every Hugging Face decoder exported that way has it.
// When the mask is a constant that leaves every row a finite logit (a causal
// mask), no element is NaN (for finite scores): IsNaN is a constant all-false
// tensor, and the Where that reads it passes the probabilities through.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OnnxNodes.h"

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cmath>

using namespace mlir;

namespace mgs::onnx_import {

LogicalResult GraphImporter::importIsNaN(bool &handled) {
  handled = false;
  if (curNode->op_type() != "IsNaN" || curNode->input_size() != 1 ||
      foldableConstant(curNode->input(0)))
    return success(); // IsNaN of a constant: the folder's (or unsupported)
  const std::string &probs = curNode->input(0);
  // Not provably all false: computed, 1 - (p == p).
  auto notProven = [&](const Twine &) -> LogicalResult {
    handled = true;
    auto p = input(0);
    if (failed(p))
      return failure();
    auto type = cast<RankedTensorType>(p->getType());
    Value same = train::EqualOp::create(b, curLoc, type, *p, *p);
    return setTruth(train::SubOp::create(b, curLoc, type, f32Constant(1.0f), same));
  };
  auto producer = [&](const std::string &name) -> const onnx::NodeProto * {
    auto it = producers.find(name);
    return it == producers.end() ? nullptr : it->second;
  };
  const onnx::NodeProto *softmax = producer(probs);
  if (!softmax || softmax->op_type() != "Softmax" || softmax->input_size() != 1)
    return notProven("it is not a Softmax's result");
  auto inType = valueTypes.find(softmax->input(0));
  std::optional<int64_t> rank;
  if (inType != valueTypes.end() && inType->second->has_tensor_type() &&
      inType->second->tensor_type().has_shape())
    rank = inType->second->tensor_type().shape().dim_size();
  int64_t axis = intAttribute(*softmax, "axis", opsetVersion >= 13 ? -1 : 1);
  if (!rank || (axis != -1 && axis != *rank - 1))
    return notProven("its Softmax '" + softmax->name() + "' is not over the last axis");
  const onnx::NodeProto *add = producer(softmax->input(0));
  const onnx::TensorProto *bias = nullptr;
  if (add && add->op_type() == "Add" && add->input_size() == 2)
    for (const std::string &in : add->input())
      if (const onnx::TensorProto *c = foldableConstant(in))
        bias = c;
  // Plus a padding mask made at run time from token ids (Hugging Face's
  // attention_mask): 0 where a key is kept, -inf elsewhere. Each row keeps a
  // key unless its sequence is padding up to it (entirely, or, causal, from
  // its start), which the data decide: mgs takes IsNaN as all false, and
  // such a row's probabilities are NaN where PyTorch's are 0 (its gradient
  // is NaN in both).
  if (!bias && add && add->op_type() == "Add" && add->input_size() == 2 &&
      llvm::any_of(add->input(), [&](const std::string &in) {
        return runtimeMaskBiases.contains(in);
      }))
    return allFalse(handled);
  if (!bias || bias->data_type() != onnx::TensorProto::FLOAT)
    return notProven("its Softmax's input is not scores plus a constant FLOAT mask");

  // Each row of the mask along the last axis (one value broadcast along it
  // when that axis is 1) must hold a value above -inf, and none NaN or +inf.
  std::vector<float> values = onnx::ParseData<float>(bias);
  const int64_t row = bias->dims_size() ? std::max<int64_t>(bias->dims(bias->dims_size() - 1), 1)
                                        : 1;
  for (size_t start = 0; start < values.size(); start += row) {
    bool open = false;
    for (int64_t k = 0; k < row; ++k) {
      const float v = values[start + k];
      if (std::isnan(v) || v == INFINITY)
        return notProven("its mask holds " + std::string(std::isnan(v) ? "NaN" : "+inf"));
      open |= v > -INFINITY;
    }
    if (!open)
      return notProven("row " + std::to_string(start / row) + " of its mask hides every key, "
                       "whose probabilities are NaN");
  }

  return allFalse(handled);
}

LogicalResult GraphImporter::allFalse(bool &handled) {
  auto type = outputType(0, Type());
  if (failed(type))
    return failure();
  onnx::TensorProto none;
  none.set_name(curNode->output(0));
  none.set_data_type(onnx::TensorProto::BOOL);
  for (int64_t d : type->getShape())
    none.add_dims(d);
  none.mutable_int32_data()->Resize(type->getNumElements(), 0);
  ownedConstants.push_back(std::move(none));
  constants[curNode->output(0)] = &ownedConstants.back();
  handled = true;
  return success();
}

} // namespace mgs::onnx_import
