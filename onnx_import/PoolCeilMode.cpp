//===- PoolCeilMode.cpp - Ceil-mode pools ONNX infers one window too many --===//
//
// In ceil mode a window that would start in the end padding is dropped
// (PyTorch's rule, ONNX's definition, and ONNX's shape inference for
// MaxPool-22 and AveragePool-22); ONNX 1.19's inference for the earlier
// versions (MaxPool-12, AveragePool-19, what opsets 11 to 21 export) keeps
// it: a 5-wide input, kernel 2, stride 2, pads 1 gives 3 outputs, inferred
// 4. Such a node is rewritten into floor mode with the end padding that
// gives its own windows, which every version infers the same.
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"
#include "Prepare.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include <stdexcept>
#include <string>

using namespace mlir;

namespace mgs::onnx_import {
namespace {

bool isPool(const onnx::NodeProto &node) {
  return (node.op_type() == "MaxPool" || node.op_type() == "AveragePool") && inDefaultDomain(node);
}

} // namespace

bool hasCeilModePool(const onnx::GraphProto &graph) {
  return llvm::any_of(graph.node(), [](const onnx::NodeProto &node) {
    return isPool(node) && intAttribute(node, "ceil_mode", 0) == 1;
  });
}

bool rewriteCeilModePools(onnx::ModelProto &model) {
  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringMap<SmallVector<int64_t>> shapes = knownShapes(graph);
  bool changed = false;
  for (auto [idx, node] : llvm::enumerate(*graph.mutable_node())) {
    const bool average = node.op_type() == "AveragePool";
    if (!isPool(node) || node.input_size() != 1 || node.output_size() < 1)
      continue;
    onnx::AttributeProto *ceil = findAttribute(node, "ceil_mode");
    onnx::AttributeProto *autoPad = findAttribute(node, "auto_pad");
    onnx::AttributeProto *kernelAttr = findAttribute(node, "kernel_shape");
    if (!ceil || ceil->i() != 1 || !kernelAttr || (autoPad && autoPad->s() != "NOTSET"))
      continue;
    auto in = shapes.find(node.input(0));
    auto out = shapes.find(node.output(0));
    const size_t spatial = kernelAttr->ints_size();
    if (in == shapes.end() || out == shapes.end() || in->second.size() != spatial + 2 ||
        out->second.size() != spatial + 2)
      continue;
    SmallVector<int64_t> kernel(kernelAttr->ints().begin(), kernelAttr->ints().end());
    std::vector<int64_t> strides = intsAttribute(node, "strides", spatial, 1);
    std::vector<int64_t> dilations = intsAttribute(node, "dilations", spatial, 1);
    std::vector<int64_t> pads = intsAttribute(node, "pads", 2 * spatial, 0);
    if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
      continue; // the importer's own checks name these
    // Floor mode gives each dimension its windows with the end padding
    // that makes the last one end inside it.
    SmallVector<int64_t> ends(spatial);
    bool differs = false, known = true;
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t size = in->second[2 + i], inferred = out->second[2 + i];
      const int64_t windows = train::slidingWindowSize(size, kernel[i], strides[i], pads[i],
                                                       pads[spatial + i], dilations[i], true);
      known &= size >= 0 && windows >= 1;
      differs |= inferred >= 0 && windows != inferred;
      ends[i] = std::max<int64_t>(0, (windows - 1) * strides[i] + (kernel[i] - 1) * dilations[i] +
                                         1 - size - pads[i]);
    }
    if (!known)
      continue;
    if (!differs)
      continue;
    // An average that counts the padding divides a window by its part inside
    // the given padding; with more end padding that part would grow.
    onnx::AttributeProto *countPad = findAttribute(node, "count_include_pad");
    if (average && countPad && countPad->i() != 0)
      for (size_t i = 0; i < spatial; ++i)
        if (ends[i] > pads[spatial + i])
          throw std::runtime_error(
              "node '" + labelOf(node, static_cast<int>(idx)) +
              "' (AveragePool): ceil_mode with count_include_pad = 1 where a window along "
              "spatial axis " +
              std::to_string(i) +
              " reaches past the end padding: ONNX's shape inference before opset 22 gives "
              "this node one window more than the op defines, and mgs rewrites it into floor "
              "mode only where the padding counted stays the same; export at opset 22 or "
              "later, or with count_include_pad = 0");
    ceil->set_i(0);
    onnx::AttributeProto *padsAttr = findAttribute(node, "pads");
    if (!padsAttr)
      padsAttr = &addIntsAttribute(node, "pads", {});
    padsAttr->clear_ints();
    for (size_t i = 0; i < spatial; ++i)
      padsAttr->add_ints(pads[i]);
    for (int64_t end : ends)
      padsAttr->add_ints(end);
    changed = true;
  }
  return changed;
}

} // namespace mgs::onnx_import
