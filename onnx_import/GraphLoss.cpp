//===- GraphLoss.cpp - A loss the exported graph computes itself ----------===//
//
// Lifts the SoftmaxCrossEntropyLoss (or NegativeLogLikelihoodLoss of a
// LogSoftmax) that a graph outputs out of it, and records it on the forward
// function (GraphLoss.h).
//
//===----------------------------------------------------------------------===//

#include "GraphLoss.h"
#include "GraphImporter.h"
#include "OnnxNodes.h"
#include "Prepare.h"
#include "TorchExport.h"

#include "mgs/Dialect/Train/IR/TrainDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cstring>
#include <deque>

using namespace mlir;

namespace mgs::onnx_import {

namespace {

bool isLossNode(const onnx::NodeProto &node) {
  return inDefaultDomain(node) && (node.op_type() == "SoftmaxCrossEntropyLoss" ||
                                   node.op_type() == "NegativeLogLikelihoodLoss");
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &node, StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

/// Nodes that only reshape the labels on their way to the loss.
bool reshapesLabels(const onnx::NodeProto &node) {
  static const llvm::StringSet<> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return inDefaultDomain(node) && ops.contains(node.op_type());
}

/// The label_smoothing argument of the aten.cross_entropy_loss call that
/// PyTorch's torch.export-based exporter records in the node's metadata
/// ("... aten.cross_entropy_loss.default](args = (%x, %y, None, 1, -100,
/// 0.1), kwargs = {})"); 0 when there is none.
double exportedSmoothing(const onnx::NodeProto &node) {
  std::optional<FxCall> call = fxCall(node);
  double smoothing = 0;
  if (!call || call->op != "cross_entropy_loss" || call->args.size() < 6 ||
      call->args[5].getAsDouble(smoothing) || !(smoothing > 0))
    return 0;
  return smoothing;
}

/// The axis a LogSoftmax or Softmax node normalizes over in a tensor of rank
/// `rank`, or -1 where that is not one axis (before opset 13 the dimensions
/// from `axis` on are normalized together: one axis only when it is the last).
int64_t normalizedAxis(const onnx::NodeProto &node, int64_t opset, int64_t rank) {
  int64_t axis = opset >= 13 ? -1 : 1;
  if (const onnx::AttributeProto *attr = attribute(node, "axis"))
    axis = attr->i();
  if (axis < 0)
    axis += rank;
  return opset >= 13 || axis == rank - 1 ? axis : -1;
}

constexpr const char *kTrains =
    "mgs trains a cross-entropy that the graph outputs as it is (or export the scores without "
    "the loss and give mgsc --loss)";

/// Whether `value` holds log-probabilities normalized over its axis 1, so that
/// its negative log-likelihood is its cross-entropy: a LogSoftmax over that
/// axis or the Log of such a Softmax (F.nll_loss(torch.log(probs), y)), or
/// either over the last axis of a tensor whose rows (M, C) it is, reshaped
/// (F.log_softmax(logits, -1).view(-1, C)).
bool holdsLogProbabilities(const onnx::GraphProto &graph, const llvm::StringMap<int> &producers,
                           const llvm::StringMap<SmallVector<int64_t>> &shapes, int64_t opset,
                           const std::string &value) {
  auto producer = [&](const std::string &name) -> const onnx::NodeProto * {
    auto it = producers.find(name);
    if (it == producers.end() || !inDefaultDomain(graph.node(it->second)))
      return nullptr;
    return &graph.node(it->second);
  };
  auto rankOf = [&](const std::string &name) {
    return static_cast<int64_t>(shapes.lookup(name).size());
  };
  // Normalized over `axis` of `name` (of rank `rank`).
  auto normalizedOver = [&](const std::string &name, int64_t axis) {
    const onnx::NodeProto *node = producer(name);
    const int64_t rank = rankOf(name);
    if (node && node->op_type() == "Log" && node->input_size() == 1) {
      node = producer(node->input(0));
      return node && node->op_type() == "Softmax" && normalizedAxis(*node, opset, rank) == axis;
    }
    return node && node->op_type() == "LogSoftmax" && normalizedAxis(*node, opset, rank) == axis;
  };
  if (normalizedOver(value, 1))
    return true;
  const onnx::NodeProto *reshape = producer(value);
  SmallVector<int64_t> rows = shapes.lookup(value);
  if (!reshape || (reshape->op_type() != "Reshape" && reshape->op_type() != "Flatten") ||
      reshape->input_size() < 1 || rows.size() != 2)
    return false;
  const std::string &in = reshape->input(0);
  SmallVector<int64_t> inShape = shapes.lookup(in);
  return !inShape.empty() && inShape.back() == rows[1] &&
         normalizedOver(in, static_cast<int64_t>(inShape.size()) - 1);
}

} // namespace

/// Whether `value` is FLOAT data, as far as its producers say before shape
/// inference: a FLOAT graph input or initializer, a Constant of FLOAT, a
/// Cast to FLOAT, or an elementwise or layout op of such a first input.
static bool isFloatValue(const onnx::GraphProto &graph, const llvm::StringMap<int> &producers,
                         const std::string &value, int depth = 0) {
  for (const onnx::ValueInfoProto &vi : graph.input())
    if (vi.name() == value)
      return vi.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT;
  for (const onnx::TensorProto &t : graph.initializer())
    if (t.name() == value)
      return t.data_type() == onnx::TensorProto::FLOAT;
  auto it = producers.find(value);
  if (it == producers.end() || depth > 64)
    return false;
  const onnx::NodeProto &node = graph.node(it->second);
  const std::string &op = node.op_type();
  if (op == "Constant") {
    const onnx::AttributeProto *v = attribute(node, "value");
    return v && v->t().data_type() == onnx::TensorProto::FLOAT;
  }
  if (op == "Cast") {
    const onnx::AttributeProto *to = attribute(node, "to");
    return to && to->i() == onnx::TensorProto::FLOAT;
  }
  static const llvm::StringSet<> keepsType = {
      "Softmax",   "LogSoftmax", "Sigmoid", "Exp",     "Log",       "Relu",   "Abs",   "Neg",
      "Add",       "Sub",        "Mul",     "Div",     "Pow",       "Sqrt",   "Clip",  "Identity",
      "Transpose", "Reshape",    "Flatten", "Squeeze", "Unsqueeze", "Concat", "Slice", "Gather"};
  return inDefaultDomain(node) && keepsType.contains(op) && node.input_size() > 0 &&
         isFloatValue(graph, producers, node.input(0), depth + 1);
}

/// The rank of `value` where the graph says it before shape inference: a
/// graph input's declared shape, through ops that keep the rank.
/// An error at the node labelled `name`: "node 'NAME' (OP): ".
static InFlightDiagnostic nodeError(Location fileLoc, const std::string &name,
                                    const onnx::NodeProto &node) {
  return emitError(NameLoc::get(StringAttr::get(fileLoc->getContext(), name), fileLoc))
         << "node '" << name << "' (" << node.op_type() << "): ";
}

static std::optional<int64_t> declaredRank(const onnx::GraphProto &graph,
                                           const llvm::StringMap<int> &producers,
                                           const std::string &value, int depth = 0) {
  for (const onnx::ValueInfoProto &vi : graph.input())
    if (vi.name() == value && vi.type().tensor_type().has_shape())
      return vi.type().tensor_type().shape().dim_size();
  auto it = producers.find(value);
  if (it == producers.end() || depth > 64)
    return std::nullopt;
  const onnx::NodeProto &node = graph.node(it->second);
  static const llvm::StringSet<> keepsRank = {"Softmax", "LogSoftmax", "Sigmoid",  "Exp",
                                              "Log",     "Relu",       "Abs",      "Neg",
                                              "Clip",    "Identity",   "Transpose"};
  if (!inDefaultDomain(node) || !keepsRank.contains(node.op_type()) || node.input_size() < 1)
    return std::nullopt;
  return declaredRank(graph, producers, node.input(0), depth + 1);
}

LogicalResult decomposeSoftTargetCrossEntropy(onnx::ModelProto &model, int64_t opset,
                                              Location fileLoc) {
  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringMap<int> producers;
  for (auto [idx, node] : llvm::enumerate(graph.node()))
    for (const std::string &out : node.output())
      producers[out] = static_cast<int>(idx);
  auto soft = [&](const onnx::NodeProto &node) {
    return inDefaultDomain(node) && node.op_type() == "SoftmaxCrossEntropyLoss" &&
           node.input_size() >= 2 && isFloatValue(graph, producers, node.input(1));
  };
  if (llvm::none_of(graph.node(), soft))
    return success();
  std::deque<onnx::TensorProto> owned;
  llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(graph, owned);
  onnx::GraphProto rewritten; // the graph's nodes, the decomposed ones in place
  for (auto [idx, node] : llvm::enumerate(graph.node())) {
    if (!soft(node)) {
      *rewritten.add_node() = node;
      continue;
    }
    const std::string name = labelOf(node, static_cast<int>(idx));
    auto fail = [&]() {
      return nodeError(fileLoc, name, node)
             << "its labels '" << node.input(1)
             << "' are probabilities (FLOAT: F.cross_entropy of soft targets); ";
    };
    if (opset < 13)
      return fail() << "mgs reads them from opset 13 on (LogSoftmax over one axis); export "
                       "with opset_version=13 or later";
    // Class weights weigh each class's term (the mean still divides by the
    // positions, as PyTorch's for probabilities): a constant along axis 1, so
    // of shape (C, 1, ...) beside targets of rank above 2 (a Constant node:
    // not a parameter).
    std::string targets = node.input(1);
    std::vector<float> weights;
    std::optional<int64_t> rank;
    if (node.input_size() > 2 && !node.input(2).empty()) {
      const onnx::TensorProto *w = constants.lookup(node.input(2));
      if (!w || w->data_type() != onnx::TensorProto::FLOAT)
        return fail() << "its class weights '" << node.input(2)
                      << "' are not a FLOAT constant (an initializer or a Constant node)";
      weights = onnx::ParseData<float>(w);
      rank = declaredRank(graph, producers, node.input(1));
      if (!rank)
        rank = declaredRank(graph, producers, node.input(0));
      if (!rank || *rank < 2)
        return fail() << "with class weights mgs needs their rank before shape inference (a "
                         "graph input's, or through ops that keep it); fold the weights into "
                         "the targets (t * w: the same loss)";
    }
    std::string reduction = "mean";
    if (const onnx::AttributeProto *attr = attribute(node, "reduction"))
      reduction = attr->s();
    if (!isLossReduction(reduction))
      return fail() << "reduction '" << reduction << "'" << kLossReductions;
    // -sum_j t_j log_softmax(x)_j at each position, then the reduction (the
    // mean over every position: PyTorch's for probability targets).
    const std::string base = (node.name().empty() ? name : node.name()) + "/mgs_soft_target";
    const std::string logProb =
        node.output_size() > 1 && !node.output(1).empty() ? node.output(1) : base + "/log_prob";
    const std::string perPosition = reduction == "none" ? node.output(0) : base + "/loss";
    auto add = [&](StringRef op, ArrayRef<std::string> in, const std::string &out) {
      return appendNode(rewritten, op, base + "/" + op.str(), in, out);
    };
    addIntAttribute(*add("LogSoftmax", {node.input(0)}, logProb), "axis", 1);
    if (rank) {
      onnx::TensorProto &w = appendConstant(rewritten, base + "/Constant", base + "/class_weights");
      w.set_data_type(onnx::TensorProto::FLOAT);
      w.add_dims(static_cast<int64_t>(weights.size()));
      for (int64_t d = 2; d < *rank; ++d)
        w.add_dims(1);
      w.mutable_float_data()->Add(weights.begin(), weights.end());
      add("Mul", {targets, base + "/class_weights"}, base + "/targets");
      targets = base + "/targets";
    }
    add("Mul", {targets, logProb}, base + "/weighted");
    appendReduceSum(rewritten, base + "/ReduceSum", base + "/weighted", {1}, base + "/sum", opset);
    add("Neg", {base + "/sum"}, perPosition);
    if (reduction != "none")
      addIntAttribute(
          *add(reduction == "sum" ? "ReduceSum" : "ReduceMean", {perPosition}, node.output(0)),
          "keepdims", 0);
  }
  graph.mutable_node()->Swap(rewritten.mutable_node());
  return success();
}

bool isLossReduction(StringRef reduction) {
  return reduction == "mean" || reduction == "sum" || reduction == "none";
}

FailureOr<std::optional<GraphLoss>> liftGraphLoss(onnx::ModelProto &model, int64_t opset,
                                                  Location fileLoc) {
  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringMap<SmallVector<int>> consumers;
  llvm::StringMap<int> producers;
  for (auto [idx, node] : llvm::enumerate(graph.node())) {
    for (const std::string &in : node.input())
      if (!in.empty())
        consumers[in].push_back(static_cast<int>(idx));
    for (const std::string &out : node.output())
      producers[out] = static_cast<int>(idx);
  }
  llvm::StringMap<int> graphOutputs;
  for (auto [k, out] : llvm::enumerate(graph.output()))
    graphOutputs[out.name()] = static_cast<int>(k);

  std::optional<int> lossIdx;
  std::string label;
  auto fail = [&](int idx) {
    return nodeError(fileLoc, labelOf(graph.node(idx), idx), graph.node(idx));
  };
  auto usersOf = [&](const std::string &value) {
    std::string users;
    for (int user : consumers.lookup(value))
      users += (users.empty() ? "'" : ", '") + labelOf(graph.node(user), user) + "' (" +
               graph.node(user).op_type() + ")";
    return users;
  };
  // A cross-entropy that is part of a larger loss (its loss goes on into
  // other nodes, or the graph has several) stays in the graph: the graph's
  // output is then the loss, trained as it is (converters/Loss.cpp).
  const std::optional<GraphLoss> inGraph;
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    const onnx::NodeProto &node = graph.node(idx);
    if (!isLossNode(node))
      continue;
    if (lossIdx)
      return inGraph;
    if (node.output_size() < 1 || node.output(0).empty())
      return fail(idx) << "it has no loss output";
    if (!graphOutputs.count(node.output(0)) && !consumers.count(node.output(0)))
      return fail(idx) << "its loss is neither a graph output nor read; " << kTrains;
    if (!graphOutputs.count(node.output(0)) || consumers.count(node.output(0)))
      return inGraph;
    // Its log-probabilities used too, or each sample's loss (reduction
    // "none") as the output: values of the graph (a scalar loss trains as
    // it is; mgsc refuses to train per-sample losses, which --inference
    // computes).
    if (node.output_size() > 1 && !node.output(1).empty() &&
        (consumers.count(node.output(1)) || graphOutputs.count(node.output(1))))
      return inGraph;
    if (const onnx::AttributeProto *attr = attribute(node, "reduction");
        attr && attr->s() == "none")
      return inGraph;
    lossIdx = idx;
    label = labelOf(node, idx);
  }
  if (!lossIdx)
    return inGraph;

  const onnx::NodeProto &loss = graph.node(*lossIdx);
  GraphLoss result;
  result.node = label;
  result.opType = loss.op_type();
  if (const onnx::AttributeProto *attr = attribute(loss, "reduction"))
    result.reduction = attr->s();
  if (result.reduction == "none" || !isLossReduction(result.reduction))
    return fail(*lossIdx) << "reduction '" << result.reduction << "'" << kLossReductions;
  if (const onnx::AttributeProto *attr = attribute(loss, "ignore_index"))
    result.ignoreIndex = attr->i();
  result.droppedSmoothing = exportedSmoothing(loss);
  if (loss.input_size() < 2)
    return fail(*lossIdx) << "it has no labels input";

  // The scores: the logits, or log-probabilities over the classes.
  llvm::StringMap<SmallVector<int64_t>> shapes = knownShapes(graph);
  std::string scores = loss.input(0);
  auto scoresShape = shapes.find(scores);
  if (scoresShape == shapes.end() || scoresShape->second.size() < 2 ||
      llvm::is_contained(scoresShape->second, -1)) {
    // A dynamic graph input (no --batch-size) is reported by the graph walk,
    // which says how to fix it.
    auto dynamic = [&](const onnx::ValueInfoProto &vi) {
      return llvm::any_of(vi.type().tensor_type().shape().dim(),
                          [](const auto &d) { return !d.has_dim_value(); });
    };
    if (llvm::any_of(graph.input(), dynamic))
      return std::optional<GraphLoss>();
    return fail(*lossIdx) << "the shape of its scores '" << scores
                          << "' is not known after shape inference (mgs needs (N, C) or (N, C, "
                             "d1, ...) with every dimension known)";
  }
  SmallVector<int64_t> dims = scoresShape->second;
  const int64_t rank = static_cast<int64_t>(dims.size());
  // The negative log-likelihood of anything else (torch.log(probs + eps))
  // is no cross-entropy: it is trained as it is (no softmax).
  result.logProbabilities = result.opType == "NegativeLogLikelihoodLoss" &&
                            !holdsLogProbabilities(graph, producers, shapes, opset, scores);

  // The labels: a graph input, reshaped at most, read by nothing else (nor
  // is any reshape of them: those reshapes go with the loss).
  SmallVector<int> removed{*lossIdx};
  std::string labels = loss.input(1);
  auto readElsewhere = [&](const std::string &value) -> LogicalResult {
    return fail(*lossIdx) << "its labels '" << value << "' are also read elsewhere (by node "
                          << usersOf(value) << "); mgs feeds the labels to the loss alone";
  };
  auto sharedOrOutput = [&](const std::string &value) {
    return consumers.lookup(value).size() > 1 || graphOutputs.count(value);
  };
  while (producers.count(labels)) {
    if (sharedOrOutput(labels))
      return readElsewhere(labels);
    const int idx = producers.lookup(labels);
    const onnx::NodeProto &node = graph.node(idx);
    // Labels the graph computes (torch.arange(N) of a contrastive loss):
    // the cross-entropy stays in the graph, whose converter takes constants.
    if (!reshapesLabels(node) || node.input_size() < 1)
      return inGraph;
    removed.push_back(idx);
    labels = node.input(0);
  }
  if (sharedOrOutput(labels))
    return readElsewhere(labels);
  const onnx::ValueInfoProto *labelsInput = nullptr;
  for (const auto &vi : graph.input())
    if (vi.name() == labels)
      labelsInput = &vi;
  const bool isInitializer = llvm::any_of(
      graph.initializer(), [&](const onnx::TensorProto &t) { return t.name() == labels; });
  if (!labelsInput || isInitializer) // constant labels: likewise
    return inGraph;
  const int dtype = labelsInput->type().tensor_type().elem_type();
  if (dtype != onnx::TensorProto::INT64 && dtype != onnx::TensorProto::INT32)
    return fail(*lossIdx) << "its labels input '" << labels << "' has dtype " << dtypeName(dtype)
                          << "; class labels are INT64 (or INT32)";
  int64_t rows = dims[0];
  for (int64_t d : ArrayRef(dims).drop_front(2))
    rows *= d;
  int64_t labelCount = shapes.count(labels) ? 1 : -1;
  for (int64_t d : shapes.lookup(labels))
    labelCount = d < 0 || labelCount < 0 ? -1 : labelCount * d;
  if (labelCount != rows)
    return fail(*lossIdx) << "its labels input '" << labels << "' holds " << labelCount
                          << " labels (-1: unknown) for " << rows << " rows of scores";
  result.labelsInput = labels;

  // The class weights: a constant.
  if (loss.input_size() > 2 && !loss.input(2).empty()) {
    std::deque<onnx::TensorProto> owned;
    llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(graph, owned);
    const onnx::TensorProto *weight = constants.lookup(loss.input(2));
    if (!weight)
      return fail(*lossIdx) << "its class weights '" << loss.input(2)
                            << "' are not a constant (an initializer or a Constant node)";
    if (weight->data_type() != onnx::TensorProto::FLOAT || weight->dims_size() != 1 ||
        weight->dims(0) != dims[1])
      return fail(*lossIdx) << "its class weights '" << loss.input(2) << "' must be "
                            << dims[1] << " FLOAT values, one per class";
    result.weights = onnx::ParseData<float>(weight);
    if (static_cast<int64_t>(result.weights.size()) != dims[1])
      return fail(*lossIdx) << "its class weights '" << loss.input(2) << "' hold "
                            << result.weights.size() << " values for " << dims[1] << " classes";
  }

  // Scores (N, C, d1, ...) become rows (N * d1 * ..., C), sample by sample.
  const std::string base = loss.name().empty() ? scores : loss.name();
  onnx::ValueInfoProto output;
  if (rank > 2) {
    SmallVector<int64_t> perm{0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    appendTranspose(graph, base + "/ClassesLast", scores, perm, base + "/classes_last");
    appendReshape(graph, base + "/Rows", base + "/classes_last", {rows, dims[1]},
                  base + "/rows");
    scores = base + "/rows";
    result.flattened = true;
  }
  output.set_name(scores);
  auto *tensor = output.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(rows);
  tensor->mutable_shape()->add_dim()->set_dim_value(dims[1]);

  // The graph without the loss, its labels and their reshapes; the scores
  // its first output.
  const std::string lossOutput = loss.output(0);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (auto [idx, node] : llvm::enumerate(nodes))
    if (!llvm::is_contained(removed, static_cast<int>(idx)))
      graph.add_node()->Swap(&node);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> outputs;
  outputs.Swap(graph.mutable_output());
  *graph.add_output() = output;
  for (auto &out : outputs)
    if (out.name() != lossOutput && out.name() != scores)
      graph.add_output()->Swap(&out);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  inputs.Swap(graph.mutable_input());
  for (auto &in : inputs)
    if (in.name() != labels)
      graph.add_input()->Swap(&in);
  return std::optional<GraphLoss>(std::move(result));
}

void recordGraphLoss(func::FuncOp forward, const GraphLoss &loss) {
  Builder b(forward.getContext());
  SmallVector<NamedAttribute> fields{b.getNamedAttr("node", b.getStringAttr(loss.node)),
                                     b.getNamedAttr("op", b.getStringAttr(loss.opType)),
                                     b.getNamedAttr("labels", b.getStringAttr(loss.labelsInput)),
                                     b.getNamedAttr("reduction", b.getStringAttr(loss.reduction))};
  if (loss.ignoreIndex)
    fields.push_back(b.getNamedAttr("ignore_index", b.getI64IntegerAttr(*loss.ignoreIndex)));
  if (!loss.weights.empty()) {
    auto type = RankedTensorType::get({static_cast<int64_t>(loss.weights.size())}, b.getF32Type());
    fields.push_back(
        b.getNamedAttr("weight", DenseElementsAttr::get(type, ArrayRef<float>(loss.weights))));
  }
  if (loss.logProbabilities)
    fields.push_back(b.getNamedAttr("log_probabilities", b.getUnitAttr()));
  if (loss.droppedSmoothing > 0)
    fields.push_back(
        b.getNamedAttr("dropped_label_smoothing", b.getF64FloatAttr(loss.droppedSmoothing)));
  forward->setAttr(mgs::train::kGraphLossAttrName, b.getDictionaryAttr(fields));
}

} // namespace mgs::onnx_import
