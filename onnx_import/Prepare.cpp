//===- Prepare.cpp - The ONNX model before the graph walk -----------------===//
//
// The checks run before ONNX's version converter and shape inference, the
// opset, the batch size, the shape-only copy and the folding of shape
// arithmetic (Prepare.h).
//
//===----------------------------------------------------------------------===//

#include "Prepare.h"
#include "ConstantFolding.h"
#include "Importer.h"
#include "ModelIO.h"
#include "OnnxNodes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/tensor_proto_util.h>

#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

using namespace mlir;

namespace mgs::onnx_import {

std::string labelOf(const onnx::NodeProto &node, int idx) {
  if (!node.name().empty())
    return node.name();
  return node.output_size() > 0 ? node.op_type() + " producing '" + node.output(0) + "'"
                                : node.op_type() + " #" + std::to_string(idx);
}

llvm::StringMap<SmallVector<int64_t>> knownShapes(const onnx::GraphProto &graph) {
  llvm::StringMap<SmallVector<int64_t>> shapes;
  auto addShapes = [&](const auto &infos) {
    for (const onnx::ValueInfoProto &vi : infos)
      if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) {
        SmallVector<int64_t> &shape = shapes[vi.name()];
        shape.clear();
        for (const auto &d : vi.type().tensor_type().shape().dim())
          shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      }
  };
  addShapes(graph.input());
  addShapes(graph.value_info());
  addShapes(graph.output());
  for (const auto &init : graph.initializer())
    shapes[init.name()] = SmallVector<int64_t>(init.dims().begin(), init.dims().end());
  for (const auto &node : graph.node()) // Constant nodes' values
    if (node.op_type() == "Constant" && node.output_size() == 1 && node.attribute_size() == 1 &&
        node.attribute(0).has_t())
      shapes[node.output(0)] =
          SmallVector<int64_t>(node.attribute(0).t().dims().begin(), node.attribute(0).t().dims().end());
  return shapes;
}

std::string supportedList() {
  std::string list;
  for (StringRef op : supportedOpTypes())
    list += (list.empty() ? "" : ", ") + op.str();
  return list;
}

namespace {
/// Why `tensor`'s dims and raw_data disagree, or nullopt when they agree (or
/// raw_data is absent: the typed fields' counts are ONNX's checker's). ONNX's
/// checker does not compare raw_data's size with the dims, and its readers
/// (ParseData, used by shape inference's data propagation) copy past the end
/// of a short one (a SIGSEGV found by scripts/mutate_onnx.py).
std::optional<std::string> rawDataMismatch(const onnx::TensorProto &tensor) {
  uint64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return "has the negative dimension " + std::to_string(d);
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / static_cast<uint64_t>(d))
      return std::string("has an element count that overflows");
    count *= static_cast<uint64_t>(d);
  }
  uint64_t bytes = elementBytes(tensor.data_type());
  if (!tensor.has_raw_data() || bytes == 0)
    return std::nullopt;
  uint64_t expected = count > std::numeric_limits<uint64_t>::max() / bytes
                          ? std::numeric_limits<uint64_t>::max()
                          : count * bytes;
  if (tensor.raw_data().size() == expected)
    return std::nullopt;
  std::string shape;
  for (int64_t d : tensor.dims())
    shape += (shape.empty() ? "" : "x") + std::to_string(d);
  return "holds " + std::to_string(tensor.raw_data().size()) + " bytes of raw data where its " +
         "shape [" + shape + "] of " + std::to_string(bytes) + "-byte values needs " +
         std::to_string(expected);
}
} // namespace

llvm::StringMap<const onnx::TensorProto *>
constantTensors(const onnx::GraphProto &graph, std::deque<onnx::TensorProto> &owned) {
  llvm::StringMap<const onnx::TensorProto *> constants;
  for (const auto &init : graph.initializer())
    constants[init.name()] = &init;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1 && node.attribute_size() == 1) {
      if (node.attribute(0).name() == "value")
        constants[node.output(0)] = &node.attribute(0).t();
      else if (scalarConstant(node, owned.emplace_back()).empty())
        constants[node.output(0)] = &owned.back();
    }
  return constants;
}

LogicalResult checkBeforeShapeInference(const onnx::GraphProto &graph, Location fileLoc) {
  // An error located at and naming node `idx`: "node 'LABEL' (OP): ...".
  auto nodeError = [&](const onnx::NodeProto &node, int idx) {
    std::string label = labelOf(node, idx);
    InFlightDiagnostic diag =
        mlir::emitError(NameLoc::get(StringAttr::get(fileLoc.getContext(), label), fileLoc));
    diag << "node '" << label << "' (" << node.op_type() << "): ";
    return diag;
  };
  static const llvm::StringSet<> windowOps = {"Conv",        "ConvTranspose", "MaxPool",
                                              "AveragePool", "LpPool",        "ConvInteger",
                                              "QLinearConv", "MaxUnpool",     "MaxRoiPool"};
  // Constant shapes: ONNX 1.12's data propagation crashes (SIGSEGV) on a
  // Reshape to a dimension below -1 whose result's Shape is taken.
  for (const auto &init : graph.initializer())
    if (std::optional<std::string> why = rawDataMismatch(init))
      return mlir::emitError(fileLoc) << "initializer '" << init.name() << "' " << *why;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    const onnx::NodeProto &node = graph.node(idx);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      SmallVector<const onnx::TensorProto *> tensors;
      if (attr.has_t())
        tensors.push_back(&attr.t());
      for (const onnx::TensorProto &t : attr.tensors())
        tensors.push_back(&t);
      for (const onnx::TensorProto *t : tensors)
        if (std::optional<std::string> why = rawDataMismatch(*t))
          return nodeError(node, idx) << "the tensor of attribute '" << attr.name() << "' "
                                      << *why;
    }
  }
  std::deque<onnx::TensorProto> fromAttrs; // value_ints, value_int, ... Constants as tensors
  llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(graph, fromAttrs);
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    const onnx::NodeProto &node = graph.node(idx);
    if (node.op_type() == "Reshape" && node.input_size() > 1) {
      auto it = constants.find(node.input(1));
      if (it != constants.end() && it->second->data_type() == onnx::TensorProto::INT64) {
        std::vector<int64_t> shape = onnx::ParseData<int64_t>(it->second);
        for (int64_t v : shape)
          if (v < -1)
            return nodeError(node, idx)
                   << "the shape holds " << v
                   << "; a dimension must be -1 (inferred), 0 (copied) or positive";
      }
    }
    for (const onnx::AttributeProto &attr : node.attribute()) {
      // A Loop's body and an If's branches, checked as graphs, are unrolled
      // or inlined after shape inference (Loops.cpp); no other subgraph is
      // read.
      const bool defaultDomain = inDefaultDomain(node);
      if (defaultDomain && attr.has_g() &&
          ((node.op_type() == "Loop" && attr.name() == "body") ||
           (node.op_type() == "If" &&
            (attr.name() == "then_branch" || attr.name() == "else_branch")))) {
        if (failed(checkBeforeShapeInference(attr.g(), fileLoc)))
          return failure();
        continue;
      }
      if (attr.has_g() || attr.graphs_size() > 0)
        return nodeError(node, idx) << "unsupported ONNX op '" << node.op_type()
                                    << "' (it holds a subgraph, attribute '" << attr.name()
                                    << "'); supported: " << supportedList();
    }
    // A constant shape that Expand or ConstantOfShape would make: ONNX's
    // shape inference builds a dimension by dimension, which for a dimension
    // of 2^40 does not end (found by scripts/mutate_onnx.py on Wav2Vec2).
    if ((node.op_type() == "Expand" && node.input_size() > 1) ||
        (node.op_type() == "ConstantOfShape" && node.input_size() > 0)) {
      auto it = constants.find(node.input(node.op_type() == "Expand" ? 1 : 0));
      if (it != constants.end() && it->second->data_type() == onnx::TensorProto::INT64 &&
          !rawDataMismatch(*it->second))
        for (int64_t v : onnx::ParseData<int64_t>(it->second))
          if (v > std::numeric_limits<int32_t>::max())
            return nodeError(node, idx)
                   << "the shape holds " << v << "; mgs supports dimensions up to 2^31 - 1";
    }
    // ONNX 1.19's GatherND shape inference reads out of bounds (SIGSEGV) for
    // a negative batch_dims (found by scripts/mutate_onnx.py on GPT-2).
    if (node.op_type() == "GatherND")
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "batch_dims" && attr.i() < 0)
          return nodeError(node, idx)
                 << "attribute 'batch_dims' must be 0 or more, got " << attr.i();
    // ONNX 1.19's ConvTranspose shape inference reads the weight's dimension
    // 1 unchecked (SIGSEGV for a weight of rank 1: found by
    // scripts/mutate_onnx.py).
    if ((node.op_type() == "ConvTranspose" || node.op_type() == "Conv") &&
        node.input_size() > 1)
      if (auto it = constants.find(node.input(1));
          it != constants.end() && it->second->dims_size() < 3)
        return nodeError(node, idx) << "its weight '" << node.input(1) << "' has rank "
                                    << it->second->dims_size()
                                    << "; a convolution's weight has rank 3 or more";
    if (!windowOps.contains(node.op_type()))
      continue;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      const std::string &name = attr.name();
      if (name != "strides" && name != "dilations" && name != "kernel_shape" && name != "group")
        continue;
      SmallVector<int64_t> values(attr.ints().begin(), attr.ints().end());
      if (name == "group")
        values.assign(1, attr.i());
      for (int64_t v : values)
        if (v < 1) {
          InFlightDiagnostic diag = nodeError(node, idx);
          diag << "attribute '" << name << "' must be at least 1";
          if (name != "group")
            diag << " in every dimension";
          diag << ", got " << v;
          return diag;
        }
    }
  }
  return success();
}

bool completeShapeInference(onnx::ModelProto &m) {
  onnx::GraphProto &g = *m.mutable_graph();
  auto hasShape = [](const onnx::TypeProto &t) {
    return t.has_tensor_type() && t.tensor_type().has_shape();
  };
  // The values with a shape, and the value_info entries without one.
  llvm::StringMap<const onnx::TypeProto *> shaped;
  llvm::StringMap<onnx::ValueInfoProto *> unshaped;
  for (const auto &vi : g.input())
    if (hasShape(vi.type()))
      shaped[vi.name()] = &vi.type();
  for (const auto &vi : g.output())
    if (hasShape(vi.type()))
      shaped[vi.name()] = &vi.type();
  for (auto &vi : *g.mutable_value_info())
    if (hasShape(vi.type()))
      shaped[vi.name()] = &vi.type();
    else
      unshaped[vi.name()] = &vi;
  std::vector<std::pair<std::string, onnx::TypeProto>> found;
  for (const auto &node : g.node())
    if (node.op_type() == "GroupNormalization" && node.input_size() >= 1 &&
        node.output_size() >= 1 && !shaped.count(node.output(0)))
      if (auto in = shaped.find(node.input(0)); in != shaped.end())
        found.emplace_back(node.output(0), *in->second);
  for (auto &[name, type] : found) {
    onnx::ValueInfoProto *vi = unshaped.lookup(name);
    if (!vi) {
      vi = g.add_value_info();
      vi->set_name(name);
    }
    *vi->mutable_type() = std::move(type);
  }
  return !found.empty();
}

std::optional<std::string>
reshapeCountMismatch(const onnx::GraphProto &graph,
                     std::optional<std::pair<int64_t, int64_t>> batch) {
  llvm::StringMap<std::vector<int64_t>> targets;
  for (const auto &init : graph.initializer())
    if (init.data_type() == onnx::TensorProto::INT64 && !rawDataMismatch(init))
      targets[init.name()] = onnx::ParseData<int64_t>(&init);
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1 && node.attribute_size() == 1) {
      const onnx::AttributeProto &attr = node.attribute(0);
      if (attr.name() == "value_ints")
        targets[node.output(0)] = {attr.ints().begin(), attr.ints().end()};
      else if (attr.name() == "value" && attr.t().data_type() == onnx::TensorProto::INT64 &&
               !rawDataMismatch(attr.t()))
        targets[node.output(0)] = onnx::ParseData<int64_t>(&attr.t());
    }
  llvm::StringMap<const onnx::TypeProto *> types;
  for (const auto &vi : graph.input())
    types[vi.name()] = &vi.type();
  for (const auto &vi : graph.value_info())
    types[vi.name()] = &vi.type();
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    const onnx::NodeProto &node = graph.node(idx);
    if (node.op_type() != "Reshape" || node.input_size() < 2)
      continue;
    auto target = targets.find(node.input(1));
    auto type = types.find(node.input(0));
    if (target == targets.end() || type == types.end() || !type->second->has_tensor_type() ||
        !type->second->tensor_type().has_shape())
      continue;
    // Only a target of positive dimensions (no -1, no 0 copying the input's).
    uint64_t want = 1;
    bool plain = true;
    for (int64_t d : target->second) {
      if (d <= 0 || want > (uint64_t(1) << 62) / static_cast<uint64_t>(d)) {
        plain = false;
        break;
      }
      want *= static_cast<uint64_t>(d);
    }
    uint64_t have = 1;
    for (const auto &dim : type->second->tensor_type().shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0 ||
          (dim.dim_value() > 0 && have > (uint64_t(1) << 62) / dim.dim_value())) {
        plain = false;
        break;
      }
      have *= static_cast<uint64_t>(dim.dim_value());
    }
    if (!plain || have == want)
      continue;
    std::string message = "node '" + labelOf(node, idx) + "' (Reshape): its input holds " +
                          std::to_string(have) + " values, its target shape " +
                          std::to_string(want);
    if (batch && !target->second.empty() && target->second.front() == batch->first)
      message += " (the export fixed its batch size, " + std::to_string(batch->first) +
                 ", in this target shape, and --batch-size is " + std::to_string(batch->second) +
                 ": export with a dynamic batch dimension, dynamic_axes or torch.export's "
                 "dynamic_shapes, or compile with --batch-size " +
                 std::to_string(batch->first) + ")";
    return message;
  }
  return std::nullopt;
}

onnx::ModelProto shapeOnlyCopy(onnx::ModelProto &model) {
  // The initializers are moved aside while the rest is copied (a 500 MB
  // model is not copied), then moved back.
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  onnx::ModelProto copy;
  copy.CopyFrom(model);
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  onnx::GraphProto *graph = copy.mutable_graph();
  llvm::StringSet<> inputs;
  for (const auto &vi : graph->input())
    inputs.insert(vi.name());
  for (const auto &init : model.graph().initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT) {
      graph->add_initializer()->CopyFrom(init);
      continue;
    }
    if (inputs.contains(init.name()))
      continue;
    onnx::ValueInfoProto *vi = graph->add_input();
    vi->set_name(init.name());
    auto *tensor = vi->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(init.data_type());
    auto *shape = tensor->mutable_shape();
    for (int64_t d : init.dims())
      shape->add_dim()->set_dim_value(d);
  }
  return copy;
}

FailureOr<int64_t> defaultOpset(const onnx::ModelProto &model, Location loc) {
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      return opset.version();
  return emitError(loc) << "the model imports no opset of the default ONNX domain";
}

LogicalResult checkOutputsProduced(const onnx::GraphProto &graph, Location loc) {
  llvm::StringSet<> defined;
  for (const auto &vi : graph.input())
    defined.insert(vi.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  for (const auto &node : graph.node())
    for (const std::string &out : node.output())
      defined.insert(out);
  for (const auto &vi : graph.output())
    if (!defined.contains(vi.name()))
      return emitError(loc) << "graph output '" << vi.name()
                            << "' is not produced by any node (nor a graph input or initializer)";
  return success();
}

void splitSequences(onnx::ModelProto &model, int64_t opset) {
  onnx::GraphProto *graph = model.mutable_graph();
  // Constant tensors by name: Constant nodes' values and initializers.
  std::deque<onnx::TensorProto> owned;
  llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(*graph, owned);
  auto constantInts = [&](const std::string &name) -> std::optional<std::vector<int64_t>> {
    const onnx::TensorProto *t = constants.lookup(name);
    if (!t || t->data_type() == onnx::TensorProto::BOOL)
      return std::nullopt;
    return tensorInts(t);
  };
  llvm::StringMap<SmallVector<int>> readers;
  for (int idx = 0; idx < graph->node_size(); ++idx)
    for (const std::string &in : graph->node(idx).input())
      readers[in].push_back(idx);
  for (const auto &out : graph->output())
    readers[out.name()].push_back(-1);
  for (int idx = 0; idx < graph->node_size(); ++idx) {
    onnx::NodeProto *node = graph->mutable_node(idx);
    if (node->op_type() != "SplitToSequence" || node->input_size() < 2 ||
        node->output_size() != 1)
      continue;
    const onnx::TensorProto *split = constants.lookup(node->input(1));
    std::optional<std::vector<int64_t>> sizes = constantInts(node->input(1));
    if (!split || split->dims_size() != 1 || !sizes || sizes->empty() ||
        llvm::any_of(*sizes, [](int64_t s) { return s < 1; }))
      continue;
    const int64_t count = static_cast<int64_t>(sizes->size());
    // Every reader a SequenceAt at a constant position in range.
    SmallVector<std::pair<int, int64_t>> picks;
    bool plain = true;
    for (int r : readers.lookup(node->output(0))) {
      const onnx::NodeProto *reader = r >= 0 ? &graph->node(r) : nullptr;
      std::optional<std::vector<int64_t>> at;
      if (reader && reader->op_type() == "SequenceAt" && reader->input_size() == 2 &&
          reader->input(0) == node->output(0) && reader->output_size() == 1)
        at = constantInts(reader->input(1));
      if (!at || at->size() != 1 || (*at)[0] < -count || (*at)[0] >= count) {
        plain = false;
        break;
      }
      picks.push_back({r, (*at)[0] < 0 ? (*at)[0] + count : (*at)[0]});
    }
    if (!plain || picks.empty())
      continue;
    const std::string base = node->output(0);
    onnx::NodeProto rewritten =
        makeNode("Split", node->name(), {node->input(0)}, base + "__piece0");
    if (const onnx::AttributeProto *axis = findAttribute(*node, "axis"))
      *rewritten.add_attribute() = *axis;
    if (opset >= 13)
      rewritten.add_input(node->input(1));
    else
      addIntsAttribute(rewritten, "split", *sizes);
    for (int64_t k = 1; k < count; ++k)
      rewritten.add_output(base + "__piece" + std::to_string(k));
    for (auto [r, at] : picks) {
      onnx::NodeProto *reader = graph->mutable_node(r);
      *reader = makeNode("Identity", reader->name(), {base + "__piece" + std::to_string(at)},
                         reader->output(0));
    }
    *node = std::move(rewritten);
  }
}

void foldSoftplusThreshold(onnx::ModelProto &model) {
  onnx::GraphProto *graph = model.mutable_graph();
  std::deque<onnx::TensorProto> owned;
  llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(*graph, owned);
  llvm::StringMap<int> producer;
  for (int idx = 0; idx < graph->node_size(); ++idx)
    for (const std::string &out : graph->node(idx).output())
      producer[out] = idx;
  auto nodeOf = [&](const std::string &name, StringRef op) -> const onnx::NodeProto * {
    auto it = producer.find(name);
    if (it == producer.end() || graph->node(it->second).op_type() != op)
      return nullptr;
    return &graph->node(it->second);
  };
  // A scalar FLOAT constant, through CastLike (torch.export's casts of
  // beta and threshold to the data's dtype).
  std::function<std::optional<float>(const std::string &)> scalar =
      [&](const std::string &name) -> std::optional<float> {
    if (const onnx::NodeProto *cast = nodeOf(name, "CastLike"))
      return cast->input_size() == 2 ? scalar(cast->input(0)) : std::nullopt;
    const onnx::TensorProto *t = constants.lookup(name);
    if (!t || t->data_type() != onnx::TensorProto::FLOAT)
      return std::nullopt;
    try {
      std::vector<float> v = onnx::ParseData<float>(t);
      return v.size() == 1 ? std::optional<float>(v[0]) : std::nullopt;
    } catch (const std::exception &) {
      return std::nullopt;
    }
  };
  std::vector<int> dead;
  for (int idx = 0; idx < graph->node_size(); ++idx) {
    onnx::NodeProto *where = graph->mutable_node(idx);
    if (where->op_type() != "Where" || where->input_size() != 3 || where->output_size() != 1)
      continue;
    const onnx::NodeProto *greater = nodeOf(where->input(0), "Greater");
    const onnx::NodeProto *div = nodeOf(where->input(2), "Div");
    if (!greater || !div || greater->input_size() != 2 || div->input_size() != 2)
      continue;
    const onnx::NodeProto *softplus = nodeOf(div->input(0), "Softplus");
    const onnx::NodeProto *mul = nodeOf(greater->input(0), "Mul");
    if (!softplus || !mul || softplus->input_size() != 1 ||
        softplus->input(0) != greater->input(0) || mul->input_size() != 2)
      continue;
    // s = x * beta, Where(s > threshold, x, softplus(s) / beta).
    const int xAt = mul->input(0) == where->input(1) ? 0 : mul->input(1) == where->input(1) ? 1 : -1;
    if (xAt < 0)
      continue;
    std::optional<float> beta = scalar(mul->input(1 - xAt)), betaDiv = scalar(div->input(1)),
                         threshold = scalar(greater->input(1));
    if (!beta || !betaDiv || !threshold || *beta != *betaDiv || !(*beta > 0) ||
        !(*threshold >= 15))
      continue;
    // Where the condition holds, softplus(s) / beta is x to float32's
    // precision (log1p(exp(-s)) < 3.1e-7 < half an ulp of s >= 15): the
    // Where is its third input.
    const std::string cond = where->input(0), kept = where->input(2), out = where->output(0);
    *where = makeNode("Identity", where->name(), {kept}, out);
    // The comparison, now read by no node, would be computed at run time.
    const bool read = llvm::any_of(graph->node(), [&](const onnx::NodeProto &n) {
      return llvm::is_contained(n.input(), cond);
    }) || llvm::any_of(graph->output(), [&](const auto &o) { return o.name() == cond; });
    if (!read)
      dead.push_back(producer.lookup(cond));
  }
  llvm::sort(dead);
  for (int idx : llvm::reverse(dead))
    graph->mutable_node()->DeleteSubrange(idx, 1);
}

std::optional<int64_t> setBatchSize(onnx::ModelProto &model, int64_t batch) {
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringSet<> inits;
  for (const auto &init : graph->initializer())
    inits.insert(init.name());
  SmallVector<onnx::TensorShapeProto_Dimension *> staticDims, symbolicDims;
  for (auto &vi : *graph->mutable_input()) {
    if (inits.contains(vi.name()) || !vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape() || vi.type().tensor_type().shape().dim_size() == 0)
      continue;
    auto *dim = vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
    (dim->has_dim_value() ? staticDims : symbolicDims).push_back(dim);
  }
  std::optional<int64_t> exported;
  if (symbolicDims.empty() && !staticDims.empty())
    exported = staticDims.front()->dim_value();
  for (auto *dim : symbolicDims.empty() ? staticDims : symbolicDims) {
    dim->clear_dim_param();
    dim->set_dim_value(batch);
  }
  graph->clear_value_info();
  for (auto &vi : *graph->mutable_output())
    if (vi.type().has_tensor_type())
      vi.mutable_type()->mutable_tensor_type()->clear_shape();
  return exported;
}

/// Uniform numbers of a constant's shape compared with a constant of that
/// same shape holding one value (torch.bernoulli(torch.full_like(x, p)) as
/// PyTorch 1.13 exports it at a fixed batch: RandomUniformLike(c), Less(u,
/// c')): the comparand becomes that value as a scalar, which compares the
/// same and, unlike the exported tensor, holds for any batch.
static void scalarDrawComparands(onnx::GraphProto &graph,
                                 const llvm::StringMap<const onnx::TensorProto *> &constants,
                                 std::vector<onnx::NodeProto> &added, std::vector<int> &addedAt) {
  llvm::StringMap<const onnx::TensorProto *> drawShapes; // a draw's output -> its shape's tensor
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    onnx::NodeProto *node = graph.mutable_node(idx);
    if (node->op_type() == "RandomUniformLike" && node->input_size() == 1 &&
        node->output_size() == 1)
      if (const onnx::TensorProto *t = constants.lookup(node->input(0)))
        drawShapes[node->output(0)] = t;
    const std::string &op = node->op_type();
    if (!isOrderComparison(op) || node->input_size() != 2)
      continue;
    for (int at = 0; at < 2; ++at) {
      const onnx::TensorProto *shape = drawShapes.lookup(node->input(at));
      const onnx::TensorProto *other = constants.lookup(node->input(1 - at));
      if (!shape || !other || other->data_type() != onnx::TensorProto::FLOAT ||
          other->dims_size() == 0 ||
          !std::equal(other->dims().begin(), other->dims().end(), shape->dims().begin(),
                      shape->dims().end()))
        continue;
      std::vector<float> values = onnx::ParseData<float>(other);
      if (values.empty() || llvm::any_of(values, [&](float v) { return v != values[0]; }))
        continue;
      onnx::TensorProto scalar;
      scalar.set_data_type(onnx::TensorProto::FLOAT);
      scalar.add_float_data(values[0]);
      onnx::NodeProto constant = makeNode("Constant", node->name() + "/mgs_scalar", {},
                                          node->input(1 - at) + "/mgs_scalar");
      addTensorAttribute(constant, "value") = std::move(scalar);
      node->set_input(1 - at, constant.output(0));
      added.push_back(std::move(constant));
      addedAt.push_back(idx);
      break;
    }
  }
}

void resizeRandomDraws(onnx::ModelProto &model, int64_t exported, int64_t batch) {
  onnx::GraphProto *graph = model.mutable_graph();
  // Constant nodes and initializers by name (their tensors are replaced, not
  // edited: another node may read the same one).
  std::deque<onnx::TensorProto> owned;
  llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(*graph, owned);
  std::vector<onnx::NodeProto> added; // Constants inserted before their reader
  std::vector<int> addedAt;
  scalarDrawComparands(*graph, constants, added, addedAt);
  auto insertAdded = [&] {
    // Each Constant just before its reader, from the back so that the
    // earlier positions stay valid.
    for (size_t i = added.size(); i-- > 0;) {
      auto *nodes = graph->mutable_node();
      *nodes->Add() = std::move(added[i]);
      for (int j = nodes->size() - 1; j > addedAt[i]; --j)
        nodes->SwapElements(j, j - 1);
    }
    added.clear();
    addedAt.clear();
  };
  insertAdded();
  if (exported == batch)
    return;
  // A draw for each sample: its first dimension the exported batch (with an
  // exported batch of 1, only one element a sample: a draw of (1, d, ...)
  // may as well be one for the whole batch).
  auto isPerSample = [&](auto dims) {
    return !dims.empty() && dims[0] == exported &&
           (exported > 1 || llvm::all_of(llvm::drop_begin(dims), [](int64_t d) { return d == 1; }));
  };
  for (int idx = 0; idx < graph->node_size(); ++idx) {
    onnx::NodeProto *node = graph->mutable_node(idx);
    if (node->op_type() == "RandomUniform") {
      for (auto &attr : *node->mutable_attribute())
        if (attr.name() == "shape" && isPerSample(llvm::ArrayRef<int64_t>(
                                          attr.ints().data(), attr.ints_size())))
          attr.set_ints(0, batch);
      continue;
    }
    if (node->op_type() == "RandomNormal") { // torch.randn(x.shape[0], ...) traced
      for (auto &attr : *node->mutable_attribute())
        if (attr.name() == "shape" && attr.ints_size() > 0 && attr.ints(0) == exported)
          attr.set_ints(0, batch);
      continue;
    }
    if ((node->op_type() != "RandomUniformLike" && node->op_type() != "Bernoulli") ||
        node->input_size() < 1)
      continue;
    const onnx::TensorProto *t = constants.lookup(node->input(0));
    if (!t || t->data_type() != onnx::TensorProto::FLOAT ||
        !isPerSample(llvm::ArrayRef<int64_t>(t->dims().data(), t->dims_size())))
      continue;
    // RandomUniformLike reads its input's shape and type only: a RandomUniform
    // of the batch's shape (FLOAT, its default) draws the same without a
    // tensor of that shape. Bernoulli reads its probabilities, which must be
    // one value to be resized.
    if (node->op_type() == "RandomUniformLike") {
      SmallVector<int64_t> shape{batch};
      shape.append(t->dims().begin() + 1, t->dims().end());
      node->set_op_type("RandomUniform");
      node->clear_input();
      addIntsAttribute(*node, "shape", shape);
      continue;
    }
    std::vector<float> values = onnx::ParseData<float>(t);
    if (llvm::any_of(values, [&](float v) { return v != values[0]; }))
      continue;
    const float probability = values[0];
    onnx::TensorProto resized;
    resized.set_data_type(t->data_type());
    resized.add_dims(batch);
    int64_t count = batch;
    for (int d = 1; d < t->dims_size(); ++d) {
      resized.add_dims(t->dims(d));
      count *= t->dims(d);
    }
    if (count > std::numeric_limits<int>::max()) // (left as exported: a shape error later)
      continue;
    resized.mutable_float_data()->Resize(static_cast<int>(count), probability);
    onnx::NodeProto constant = makeNode("Constant", node->name() + "/mgs_batch_shape", {},
                                        node->input(0) + "/mgs_batch" + std::to_string(batch));
    addTensorAttribute(constant, "value") = std::move(resized);
    node->set_input(0, constant.output(0));
    added.push_back(std::move(constant));
    addedAt.push_back(idx);
  }
  insertAdded();
}

void foldShapeArithmetic(onnx::ModelProto &model, int64_t opset,
                         llvm::function_ref<void(onnx::ModelProto &)> inferShapes) {
  onnx::GraphProto *graph = model.mutable_graph();
  for (bool changed = true; changed;) {
    changed = false;
    llvm::StringMap<const onnx::TensorProto *> constants;
    llvm::StringMap<SmallVector<int64_t>> shapes;
    std::deque<onnx::TensorProto> owned;
    for (const auto &init : graph->initializer()) {
      shapes[init.name()] = SmallVector<int64_t>(init.dims().begin(), init.dims().end());
      if (init.data_type() != onnx::TensorProto::FLOAT) // FLOAT ones are parameters
        constants[init.name()] = &init;
    }
    auto addShapes = [&](const auto &infos) {
      for (const onnx::ValueInfoProto &vi : infos) {
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
          continue;
        SmallVector<int64_t> dims;
        for (const auto &dim : vi.type().tensor_type().shape().dim())
          if (dim.has_dim_value() && dim.dim_value() >= 0)
            dims.push_back(dim.dim_value());
        if (static_cast<int>(dims.size()) == vi.type().tensor_type().shape().dim_size())
          shapes.try_emplace(vi.name(), std::move(dims));
      }
    };
    addShapes(graph->input());
    addShapes(graph->value_info());
    FoldContext ctx;
    ctx.opset = opset;
    ctx.constant = [&](const std::string &name) { return constants.lookup(name); };
    ctx.staticShape = [&](const std::string &name) -> std::optional<SmallVector<int64_t>> {
      if (auto it = shapes.find(name); it != shapes.end())
        return it->second;
      return std::nullopt;
    };
    for (onnx::NodeProto &node : *graph->mutable_node()) {
      if ((!node.domain().empty() && node.domain() != "ai.onnx") || node.output_size() != 1)
        continue;
      if (node.op_type() == "Constant") {
        if (node.attribute_size() == 1 && node.attribute(0).name() == "value")
          constants[node.output(0)] = &node.attribute(0).t();
        else if (scalarConstant(node, owned.emplace_back()).empty())
          constants[node.output(0)] = &owned.back();
        continue;
      }
      onnx::TensorProto value;
      std::string error;
      if (!isFoldableOp(node.op_type()) ||
          foldNode(node, ctx, value, error) != FoldResult::Folded)
        continue;
      // The node becomes the Constant of its value (its name kept for errors).
      node.clear_input();
      node.clear_attribute();
      node.set_op_type("Constant");
      onnx::TensorProto &folded = addTensorAttribute(node, "value");
      folded = std::move(value);
      constants[node.output(0)] = &folded;
      changed = true;
    }
    if (changed) {
      graph->clear_value_info();
      inferShapes(model);
    }
  }
}

} // namespace mgs::onnx_import
