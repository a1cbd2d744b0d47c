//===- Buffers.cpp - Initializers that are not trained ---------------------===//
//
// A value is non-differentiable when every use of it is an input that
// carries no gradient (the table below), or an input of a node whose outputs
// are all non-differentiable (a Cast or Unsqueeze of a mask before Equal); a
// graph output is differentiable (it reaches the loss).
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "OnnxNodes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <vector>

namespace mgs::onnx_import {
namespace {

/// Whether input `index` of `node` carries no gradient to its outputs.
bool isNonDifferentiableInput(const onnx::NodeProto &node, int index) {
  llvm::StringRef op = node.op_type();
  // Every input: comparisons, logic, shapes, index generation.
  if (llvm::is_contained({"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Not",
                          "And", "Or", "Xor", "Shape", "Size", "ConstantOfShape", "Range",
                          "NonZero", "ArgMax", "ArgMin"},
                         op))
    return true;
  // Inputs after the first: indices, shapes, axes, bounds.
  if (llvm::is_contained({"Gather", "GatherElements", "GatherND", "Reshape", "Expand", "Tile",
                          "Slice", "Pad", "Unsqueeze", "Squeeze", "Split", "ReduceSum", "TopK",
                          "Resize", "OneHot",
                          // Opset 18 moved the other reductions' axes to an input.
                          "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                          "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"},
                         op))
    return index >= 1;
  if (op == "Where")
    return index == 0;
  // RotaryEmbedding's cos and sin caches are tables of fixed angles (buffers in
  // every model that has them), position_ids indices.
  if (op == "RotaryEmbedding")
    return index >= 1;
  if (op == "Attention")
    return index == 6;
  if (const onnx::AttributeProto *to = op == "Cast" ? findAttribute(node, "to") : nullptr)
    return to->i() != onnx::TensorProto::FLOAT && to->i() != onnx::TensorProto::DOUBLE &&
           to->i() != onnx::TensorProto::FLOAT16 && to->i() != onnx::TensorProto::BFLOAT16;
  return false;
}

class Analysis {
public:
  explicit Analysis(const onnx::GraphProto &graph) {
    for (const auto &node : graph.node())
      for (int i = 0; i < node.input_size(); ++i)
        if (!node.input(i).empty())
          uses[node.input(i)].push_back({&node, i});
    for (const auto &out : graph.output())
      memo[out.name()] = false;
  }

  bool nonDifferentiable(const std::string &name) {
    if (auto it = memo.find(name); it != memo.end())
      return it->second;
    memo[name] = false; // a graph is acyclic; this only guards malformed ones
    auto it = uses.find(name);
    bool result = it != uses.end() && llvm::all_of(it->second, [&](const Use &use) {
      if (isNonDifferentiableInput(*use.node, use.index))
        return true;
      return use.node->output_size() > 0 &&
             llvm::all_of(use.node->output(), [&](const std::string &out) {
               return out.empty() || nonDifferentiable(out);
             });
    });
    memo[name] = result;
    return result;
  }

private:
  struct Use {
    const onnx::NodeProto *node;
    int index;
  };
  llvm::StringMap<std::vector<Use>> uses;
  llvm::StringMap<bool> memo;
};

} // namespace

llvm::StringSet<> nonDifferentiableInitializers(const onnx::GraphProto &graph) {
  Analysis analysis(graph);
  llvm::StringSet<> result;
  for (const auto &init : graph.initializer())
    if (init.data_type() == onnx::TensorProto::FLOAT && analysis.nonDifferentiable(init.name()))
      result.insert(init.name());
  return result;
}

} // namespace mgs::onnx_import
