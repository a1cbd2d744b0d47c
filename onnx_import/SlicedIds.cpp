//===- SlicedIds.cpp - Embeddings of slices of token ids ------------------===//
//
// nn.EmbeddingBag as the TorchScript exporter writes it is a Loop over the
// bags, each a Slice of the flattened token ids at constant offsets read by
// a Gather of the table and reduced; once the Loop is unrolled, each
// Gather(table, Slice(ids)) becomes Slice(Gather(table, ids)) along the
// gathered rows' axes, one Gather per (table, ids) shared by every bag: the
// ids reach their embedding unsliced (as reshaped ids do, TokenIds.cpp), and
// the rows are sliced.
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"
#include "Prepare.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <deque>

namespace mgs::onnx_import {

namespace {

/// Slice's starts, ends, axes (non-negative, of rank `rank`) and steps, when
/// all are constants (inputs from opset 10 on).
struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

std::optional<SliceParams> constantSlice(const onnx::NodeProto &slice, int64_t rank,
                                         const llvm::StringMap<const onnx::TensorProto *> &consts) {
  auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
    if (i >= slice.input_size() || slice.input(i).empty())
      return std::vector<int64_t>{};
    return tensorInts(consts.lookup(slice.input(i)));
  };
  auto starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
  if (slice.input_size() < 3 || !starts || !ends || !axes || !steps || starts->empty() ||
      starts->size() != ends->size())
    return std::nullopt;
  if (axes->empty())
    for (size_t a = 0; a < starts->size(); ++a)
      axes->push_back(static_cast<int64_t>(a));
  if (axes->size() != starts->size() || (!steps->empty() && steps->size() != starts->size()))
    return std::nullopt;
  for (int64_t &a : *axes) {
    if (a < -rank || a >= rank)
      return std::nullopt; // (the importer reports the Slice)
    a = a < 0 ? a + rank : a;
  }
  return SliceParams{*starts, *ends, *axes, *steps};
}

} // namespace

bool gatherBeforeSlices(onnx::ModelProto &model) {
  onnx::GraphProto *graph = model.mutable_graph();
  // Token ids: INT64 graph inputs, through the ops that only reshape them.
  llvm::StringSet<> ids;
  for (const auto &in : graph->input())
    if (in.type().tensor_type().elem_type() == onnx::TensorProto::INT64)
      ids.insert(in.name());
  for (const auto &node : graph->node())
    if (isReshapeOnly(node) && ids.contains(node.input(0)))
      ids.insert(node.output(0));
  if (ids.empty())
    return false;
  const llvm::StringMap<llvm::SmallVector<int64_t>> shapes = knownShapes(*graph);
  std::deque<onnx::TensorProto> owned;
  const llvm::StringMap<const onnx::TensorProto *> consts = constantTensors(*graph, owned);
  // Each constant Slice of ids, by its output: the ids and the slice.
  llvm::StringMap<std::pair<std::string, SliceParams>> slices;
  for (const auto &node : graph->node())
    if (node.op_type() == "Slice" && inDefaultDomain(node) && node.input_size() >= 3 &&
        node.output_size() == 1 && ids.contains(node.input(0)) && shapes.count(node.input(0)))
      if (std::optional<SliceParams> params = constantSlice(
              node, static_cast<int64_t>(shapes.lookup(node.input(0)).size()), consts))
        slices[node.output(0)] = {node.input(0), *params};

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  llvm::StringMap<std::string> gathered; // "table\nids" -> the shared Gather's output
  bool changed = false;
  for (onnx::NodeProto &node : nodes) {
    auto slice = slices.end();
    if (node.op_type() == "Gather" && inDefaultDomain(node) && node.input_size() == 2 &&
        node.output_size() == 1)
      slice = slices.find(node.input(1));
    const auto tableShape = slice != slices.end() ? shapes.find(node.input(0)) : shapes.end();
    if (tableShape == shapes.end() || tableShape->second.empty()) {
      graph->add_node()->Swap(&node);
      continue;
    }
    int64_t axis = intAttribute(node, "axis", 0);
    const int64_t tableRank = static_cast<int64_t>(tableShape->second.size());
    if (axis < -tableRank || axis >= tableRank) {
      graph->add_node()->Swap(&node); // (the importer reports the Gather)
      continue;
    }
    axis = axis < 0 ? axis + tableRank : axis;
    const std::string base = node.name().empty() ? node.output(0) : node.name();
    const auto &[sliced, params] = slice->second;
    std::string &rows = gathered[node.input(0) + "\n" + sliced];
    if (rows.empty()) {
      rows = base + "/rows";
      addIntAttribute(
          *appendNode(*graph, "Gather", base + "/AllIds", {node.input(0), sliced}, rows), "axis",
          axis);
    }
    // The ids' axis a is the gathered rows' axis + a.
    std::vector<int64_t> axes(params.axes);
    for (int64_t &a : axes)
      a += axis;
    llvm::SmallVector<std::string> inputs{rows};
    auto constant = [&](const char *what, llvm::ArrayRef<int64_t> values) {
      inputs.push_back(base + "/" + what);
      appendInt64Constant(*graph, base + "/" + what + "Constant", values, inputs.back());
    };
    constant("starts", params.starts);
    constant("ends", params.ends);
    constant("axes", axes);
    if (!params.steps.empty())
      constant("steps", params.steps);
    appendNode(*graph, "Slice", base + "/Rows", inputs, node.output(0));
    changed = true;
  }
  if (!changed)
    return false;
  // The slices of ids no Gather reads any more go (integers the walk would
  // otherwise have to compute).
  llvm::StringSet<> read;
  for (const auto &node : graph->node())
    for (const std::string &in : node.input())
      read.insert(in);
  for (const auto &out : graph->output())
    read.insert(out.name());
  auto *all = graph->mutable_node();
  all->erase(std::remove_if(all->begin(), all->end(),
                            [&](const onnx::NodeProto &node) {
                              return node.op_type() == "Slice" && node.output_size() == 1 &&
                                     slices.count(node.output(0)) && !read.contains(node.output(0));
                            }),
             all->end());
  return true;
}

} // namespace mgs::onnx_import
