//===- Loops.cpp - Control flow known at import; static sequences --------===//
//
// PyTorch's TorchScript exporter writes a loop of scripted code (`for i in
// range(n)`, a list built by append, MViT's pooling) as an ONNX Loop whose
// trip count shape arithmetic gives, and the list as a sequence
// (SequenceEmpty, SequenceInsert, read by SequenceAt or ConcatFromSequence).
// mgs has no control flow at run time: a Loop whose trip count is known at
// import and whose condition stays true (or a while loop that counts up to a
// constant: torch.export's EmbeddingBag) is unrolled into copies of its body,
// an If whose condition is known at import replaced by its branch (MViT's
// pooling of the skip connection), and sequences whose every element is
// known are replaced by those tensors, before shape inference runs again.
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"
#include "Prepare.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <deque>

using namespace mlir;

namespace mgs::onnx_import {
namespace {

/// The graph's constant tensors (constantTensors), the Constant nodes' copied:
/// the callers move the nodes they point into. The initializers (the weights:
/// large) are not moved, and are pointed to where they are.
llvm::StringMap<const onnx::TensorProto *> constantCopies(const onnx::GraphProto &graph,
                                                          std::deque<onnx::TensorProto> &kept) {
  std::deque<onnx::TensorProto> owned;
  llvm::StringMap<const onnx::TensorProto *> constants = constantTensors(graph, owned);
  llvm::DenseSet<const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &init : graph.initializer())
    initializers.insert(&init);
  for (auto &entry : constants)
    if (!initializers.contains(entry.second))
      entry.second = &kept.emplace_back(*entry.second);
  return constants;
}

void renameNode(onnx::NodeProto &node, const std::string &prefix,
                llvm::StringMap<std::string> &renamed);

/// A subgraph of a copied node (an If's branch in a Loop's body) renamed in
/// place: its inputs and its nodes' outputs get the prefix, what its nodes
/// read of the body by `renamed` (a copy: its own names stay its own).
void renameSubgraph(onnx::GraphProto &sub, const std::string &prefix,
                    llvm::StringMap<std::string> renamed) {
  for (onnx::ValueInfoProto &in : *sub.mutable_input()) {
    renamed[in.name()] = prefix + in.name();
    in.set_name(prefix + in.name());
  }
  for (onnx::NodeProto &node : *sub.mutable_node())
    renameNode(node, prefix, renamed);
  for (onnx::ValueInfoProto &out : *sub.mutable_output())
    if (auto it = renamed.find(out.name()); it != renamed.end())
      out.set_name(it->second);
  sub.clear_value_info();
}

/// `node` named `prefix` + its name, its outputs likewise, its inputs by
/// `renamed` (which gets the outputs' new names; a name not in it is an
/// outer value), and so the subgraphs it holds.
void renameNode(onnx::NodeProto &node, const std::string &prefix,
                llvm::StringMap<std::string> &renamed) {
  node.set_name(prefix + (node.name().empty() ? node.op_type() : node.name()));
  for (std::string &in : *node.mutable_input())
    if (auto it = renamed.find(in); !in.empty() && it != renamed.end())
      in = it->second;
  for (onnx::AttributeProto &a : *node.mutable_attribute()) {
    if (a.has_g())
      renameSubgraph(*a.mutable_g(), prefix, renamed);
    for (onnx::GraphProto &g : *a.mutable_graphs())
      renameSubgraph(g, prefix, renamed);
  }
  for (std::string &out : *node.mutable_output())
    if (!out.empty()) {
      renamed[out] = prefix + out;
      out = prefix + out;
    }
}

/// Appends a copy of each of `sub`'s nodes, renamed by renameNode.
void appendCopies(onnx::GraphProto &graph, const onnx::GraphProto &sub, const std::string &prefix,
                  llvm::StringMap<std::string> &renamed) {
  for (const onnx::NodeProto &b : sub.node()) {
    onnx::NodeProto *copy = graph.add_node();
    *copy = b;
    renameNode(*copy, prefix, renamed);
  }
}

/// `name` through the nodes that pass a value on unchanged in value
/// (Identity, Cast, CastLike's first input), at most 8 of them.
std::string throughCasts(std::string name,
                         const llvm::StringMap<const onnx::NodeProto *> &producers) {
  for (int hops = 0; hops < 8; ++hops) {
    const onnx::NodeProto *p = producers.lookup(name);
    if (!p || p->input_size() < 1 ||
        !llvm::is_contained({"Identity", "Cast", "CastLike"}, p->op_type()) ||
        (p->op_type() != "CastLike" && p->input_size() != 1))
      break;
    name = p->input(0);
  }
  return name;
}

/// The iterations of a while loop that counts: its body's condition out is
/// Less(next, n) of a carried value v whose next value is v + step (step >
/// 0 and n constants, v's initial value a constant integer), the Loop's own
/// condition a constant. PyTorch's torch.export writes nn.EmbeddingBag's
/// loop over the bags so. None when the body's condition is another.
std::optional<int64_t>
countedIterations(const onnx::NodeProto &loop, const onnx::GraphProto &body,
                  const llvm::StringMap<const onnx::NodeProto *> &producers,
                  llvm::function_ref<std::optional<int64_t>(const std::string &)> scalar) {
  const onnx::NodeProto *less = producers.lookup(throughCasts(body.output(0).name(), producers));
  if (!less || less->op_type() != "Less" || less->input_size() != 2)
    return std::nullopt;
  const std::string next = throughCasts(less->input(0), producers);
  const onnx::NodeProto *add = producers.lookup(next);
  std::optional<int64_t> bound = scalar(throughCasts(less->input(1), producers));
  if (!add || add->op_type() != "Add" || add->input_size() != 2 || !bound)
    return std::nullopt;
  const int carried = loop.input_size() - 2;
  for (int c = 0; c < carried; ++c) {
    const std::string &v = body.input(2 + c).name();
    if (throughCasts(body.output(1 + c).name(), producers) != next)
      continue;
    for (int side = 0; side < 2; ++side) {
      if (throughCasts(add->input(side), producers) != v)
        continue;
      std::optional<int64_t> step = scalar(throughCasts(add->input(1 - side), producers));
      std::optional<int64_t> start = scalar(loop.input(2 + c));
      std::optional<int64_t> cond =
          loop.input(1).empty() ? std::optional<int64_t>(1) : scalar(loop.input(1));
      if (!step || *step <= 0 || !start || !cond)
        return std::nullopt;
      if (*cond == 0)
        return 0;
      int64_t count = 1;
      for (int64_t value = *start + *step; value < *bound && count <= 4096; value += *step)
        ++count;
      return count;
    }
  }
  return std::nullopt;
}

/// `name` as `renamed` maps it (an outer value keeps its own).
std::string renamedOr(const llvm::StringMap<std::string> &renamed, const std::string &name) {
  auto it = renamed.find(name);
  return it == renamed.end() ? name : it->second;
}

} // namespace

bool hasOp(const onnx::GraphProto &graph, StringRef op) {
  return llvm::any_of(graph.node(), [&](const onnx::NodeProto &n) {
    return n.op_type() == op && inDefaultDomain(n);
  });
}

LogicalResult
rewriteEach(onnx::ModelProto &model, StringRef op, bool &changed,
            llvm::function_ref<FailureOr<bool>(onnx::NodeProto &, const std::string &,
                                               const llvm::StringMap<const onnx::TensorProto *> &)>
                rewrite) {
  changed = false;
  onnx::GraphProto *graph = model.mutable_graph();
  if (!hasOp(*graph, op))
    return success();
  std::deque<onnx::TensorProto> kept;
  llvm::StringMap<const onnx::TensorProto *> constants = constantCopies(*graph, kept);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  for (auto [idx, node] : llvm::enumerate(nodes)) {
    if (node.op_type() != op || !inDefaultDomain(node)) {
      graph->add_node()->Swap(&node);
      continue;
    }
    FailureOr<bool> replaced = rewrite(node, labelOf(node, static_cast<int>(idx)), constants);
    if (failed(replaced))
      return failure();
    if (!*replaced)
      graph->add_node()->Swap(&node);
    changed |= *replaced;
  }
  return success();
}

LogicalResult unrollLoops(onnx::ModelProto &model, Location fileLoc, int64_t opset, bool strict,
                          bool &changed) {
  onnx::GraphProto *graph = model.mutable_graph();
  return rewriteEach(
      model, "Loop", changed,
      [&](onnx::NodeProto &node, const std::string &label,
          const auto &constants) -> FailureOr<bool> {
        auto fail = [&](const std::string &why) {
          return emitError(fileLoc) << "node '" << label << "' (Loop): " << why
                                    << "; mgs unrolls a Loop whose trip count is known at import "
                                       "and whose condition stays true (a for loop)";
        };
        const onnx::AttributeProto *bodyAttr = findAttribute(node, "body");
        const onnx::GraphProto *body = bodyAttr && bodyAttr->has_g() ? &bodyAttr->g() : nullptr;
        if (!body || body->input_size() < 2 || body->output_size() < 1)
          return fail("it has no body of (iteration, condition, ...) -> (condition, ...)");
        const int carried = node.input_size() - 2;
        const int scans = body->output_size() - 1 - carried;
        if (carried < 0 || body->input_size() != carried + 2 || scans < 0 ||
            node.output_size() != carried + scans)
          return fail("its inputs, outputs and body's do not match");
        llvm::StringMap<const onnx::NodeProto *> producers;
        for (const onnx::NodeProto &b : body->node())
          for (const std::string &out : b.output())
            producers[out] = &b;
        std::deque<onnx::TensorProto> bodyOwned;
        llvm::StringMap<const onnx::TensorProto *> bodyConstants =
            constantTensors(*body, bodyOwned);
        // A scalar integer constant of the body's, or of the graph's.
        auto scalar = [&](const std::string &name) -> std::optional<int64_t> {
          const onnx::TensorProto *t = bodyConstants.lookup(name);
          std::optional<std::vector<int64_t>> v = tensorInts(t ? t : constants.lookup(name));
          return v && v->size() == 1 ? std::optional<int64_t>((*v)[0]) : std::nullopt;
        };
        // The trip count: a constant once shape arithmetic is folded, or
        // the iterations of a counting while loop.
        std::optional<int64_t> trips = node.input(0).empty() ? std::nullopt : scalar(node.input(0));
        std::optional<int64_t> counted = countedIterations(node, *body, producers, scalar);
        if (!trips && !counted) {
          if (!strict)
            return false; // perhaps known after another round of folding
          return fail(node.input(0).empty()
                          ? "it has no trip count (a while loop) and its condition does not "
                            "count to a constant"
                          : "its trip count '" + node.input(0) + "' is not known at import");
        }
        const int64_t count =
            trips && counted ? std::min(*trips, *counted) : *(trips ? trips : counted);
        if (count < 0 || count > 4096)
          return fail("its trip count is " +
                      (trips && count == *trips ? std::to_string(count) : "over 4096") +
                      " (at most 4096 are unrolled)");
        if (!counted && !node.input(1).empty()) {
          std::optional<int64_t> cond = scalar(node.input(1));
          if (!cond || *cond == 0)
            return fail("its condition '" + node.input(1) + "' is not a constant true");
        }
        if (count * body->node_size() > 200000)
          return fail("unrolled, its " + std::to_string(count) + " iterations of " +
                      std::to_string(body->node_size()) + " nodes would be more than 200000 nodes");
        if (scans > 0 && count == 0)
          return fail("it runs no iteration, so its scan outputs have no shape");
        // Unless it counts, the body's condition out must stay true: the
        // condition in, or a constant true (an outer one, or the body's own),
        // through Identity, Cast or CastLike.
        const std::string &condIn = body->input(1).name();
        const std::string cond = throughCasts(body->output(0).name(), producers);
        std::optional<int64_t> condValue = scalar(cond);
        if (!counted && cond != condIn && !(condValue && *condValue != 0))
          return fail("its body computes its condition ('" + body->output(0).name() +
                      "': a while loop)");

        // The copies: iteration i's names are the body's with a prefix.
        const std::string base = node.name().empty() ? node.output(0) : node.name();
        SmallVector<std::string> state(node.input().begin() + 2, node.input().end());
        SmallVector<SmallVector<std::string>> scanned(scans);
        for (int64_t i = 0; i < count; ++i) {
          const std::string prefix = base + "/iter" + std::to_string(i) + "/";
          llvm::StringMap<std::string> renamed;
          renamed[body->input(0).name()] = prefix + "iteration";
          appendScalarConstant(*graph, prefix + "Iteration", i, onnx::TensorProto::INT64,
                               prefix + "iteration");
          renamed[condIn] = prefix + "condition";
          appendScalarConstant(*graph, prefix + "Condition", 1, onnx::TensorProto::BOOL,
                               prefix + "condition");
          for (int c = 0; c < carried; ++c)
            renamed[body->input(2 + c).name()] = state[c];
          appendCopies(*graph, *body, prefix, renamed);
          auto outputOf = [&](int k) { return renamedOr(renamed, body->output(k).name()); };
          for (int c = 0; c < carried; ++c)
            state[c] = outputOf(1 + c);
          for (int s = 0; s < scans; ++s)
            scanned[s].push_back(outputOf(1 + carried + s));
        }
        // The Loop's outputs: the final state, each scan's values stacked.
        for (int c = 0; c < carried; ++c)
          if (!node.output(c).empty())
            appendNode(*graph, "Identity", base + "/Final" + std::to_string(c), {state[c]},
                       node.output(c));
        for (int s = 0; s < scans; ++s) {
          if (node.output(carried + s).empty())
            continue;
          SmallVector<std::string> rows;
          for (auto [i, value] : llvm::enumerate(scanned[s])) {
            const std::string at = base + "/Scan" + std::to_string(s) + "_" + std::to_string(i);
            appendUnsqueeze(*graph, at, value, 0, at + "_row", opset);
            rows.push_back(at + "_row");
          }
          addIntAttribute(*appendNode(*graph, "Concat", base + "/Scan" + std::to_string(s), rows,
                                      node.output(carried + s)),
                          "axis", 0);
        }
        return true;
      });
}

LogicalResult inlineIfs(onnx::ModelProto &model, Location fileLoc, bool strict, bool &changed) {
  onnx::GraphProto *graph = model.mutable_graph();
  return rewriteEach(
      model, "If", changed,
      [&](onnx::NodeProto &node, const std::string &label,
          const auto &constants) -> FailureOr<bool> {
        std::optional<std::vector<int64_t>> cond =
            node.input_size() == 1 ? tensorInts(constants.lookup(node.input(0))) : std::nullopt;
        if (!cond || cond->size() != 1) {
          if (!strict)
            return false; // perhaps known after another round of folding
          return emitError(fileLoc) << "node '" << label << "' (If): its condition '"
                                    << (node.input_size() ? node.input(0) : std::string())
                                    << "' is computed at run time; mgs takes an If whose condition "
                                       "is known at import (one constant), and only its branch";
        }
        const char *branchName = (*cond)[0] ? "then_branch" : "else_branch";
        const onnx::AttributeProto *branchAttr = findAttribute(node, branchName);
        const onnx::GraphProto *branch =
            branchAttr && branchAttr->has_g() ? &branchAttr->g() : nullptr;
        if (!branch || branch->output_size() != node.output_size())
          return emitError(fileLoc) << "node '" << label << "' (If): its " << branchName
                                    << " is missing or has " << (branch ? branch->output_size() : 0)
                                    << " outputs for the node's " << node.output_size();
        // The branch's nodes, its own names prefixed; its outputs the node's.
        const std::string base = node.name().empty() ? node.output(0) : node.name();
        const std::string prefix = base + "/" + branchName + "/";
        llvm::StringMap<std::string> renamed;
        appendCopies(*graph, *branch, prefix, renamed);
        for (int k = 0; k < node.output_size(); ++k)
          if (!node.output(k).empty())
            appendNode(*graph, "Identity", prefix + "Output" + std::to_string(k),
                       {renamedOr(renamed, branch->output(k).name())}, node.output(k));
        return true;
      });
}

bool resolveSequences(onnx::ModelProto &model, int64_t opset) {
  onnx::GraphProto *graph = model.mutable_graph();
  if (!hasOp(*graph, "SequenceEmpty") && !hasOp(*graph, "SequenceConstruct"))
    return false;
  std::deque<onnx::TensorProto> kept;
  llvm::StringMap<const onnx::TensorProto *> constants = constantCopies(*graph, kept);
  // Each known sequence's elements, by name.
  llvm::StringMap<std::vector<std::string>> sequences;
  bool changed = false;
  const google::protobuf::RepeatedPtrField<onnx::NodeProto> original = graph->node();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  for (onnx::NodeProto &node : nodes) {
    const std::string &op = node.op_type();
    auto known = [&](int i) {
      return node.input_size() > i ? sequences.find(node.input(i)) : sequences.end();
    };
    auto position = [&](int i) -> std::optional<int64_t> {
      std::optional<std::vector<int64_t>> v =
          node.input_size() > i ? tensorInts(constants.lookup(node.input(i))) : std::nullopt;
      return v && v->size() == 1 ? std::optional<int64_t>((*v)[0]) : std::nullopt;
    };
    if (!inDefaultDomain(node) || node.output_size() != 1) {
      graph->add_node()->Swap(&node);
      continue;
    }
    if (op == "SequenceEmpty" || op == "SequenceConstruct") {
      sequences[node.output(0)] = {node.input().begin(), node.input().end()};
      changed = true;
      continue;
    }
    if ((op == "SequenceInsert" || op == "Identity") && known(0) != sequences.end()) {
      std::vector<std::string> items = known(0)->second;
      if (op == "SequenceInsert") {
        const int64_t size = static_cast<int64_t>(items.size());
        std::optional<int64_t> at = node.input_size() > 2 ? position(2) : size;
        if (!at || *at < -size || *at > size) {
          graph->add_node()->Swap(&node); // the importer names it
          continue;
        }
        items.insert(items.begin() + (*at < 0 ? *at + size : *at), node.input(1));
      }
      sequences[node.output(0)] = std::move(items);
      continue;
    }
    if (op == "SequenceAt" && known(0) != sequences.end()) {
      const std::vector<std::string> &items = known(0)->second;
      const int64_t size = static_cast<int64_t>(items.size());
      std::optional<int64_t> at = position(1);
      if (!at || *at < -size || *at >= size) {
        graph->add_node()->Swap(&node);
        continue;
      }
      appendNode(*graph, "Identity", node.name(), {items[*at < 0 ? *at + size : *at]},
                 node.output(0));
      continue;
    }
    if (op == "SequenceLength" && known(0) != sequences.end()) {
      appendScalarConstant(*graph, node.name(), static_cast<int64_t>(known(0)->second.size()),
                           onnx::TensorProto::INT64, node.output(0));
      continue;
    }
    if (op == "ConcatFromSequence" && known(0) != sequences.end() && !known(0)->second.empty()) {
      const int64_t axis = intAttribute(node, "axis", 0);
      const bool newAxis = intAttribute(node, "new_axis", 0) != 0;
      std::vector<std::string> items = known(0)->second;
      if (newAxis) { // stacked: each gets the new dimension first
        for (auto [i, item] : llvm::enumerate(items)) {
          const std::string at = node.output(0) + "/Unsqueeze" + std::to_string(i);
          appendUnsqueeze(*graph, at, item, axis, at + "_out", opset);
          item = at + "_out";
        }
      }
      addIntAttribute(*appendNode(*graph, "Concat", node.name(), items, node.output(0)), "axis",
                      axis);
      continue;
    }
    graph->add_node()->Swap(&node);
  }
  // A sequence read otherwise (a graph output, SequenceAt at a position
  // computed at run time): the graph as it was, for the importer to name.
  auto isSequence = [&](const std::string &name) { return sequences.count(name) != 0; };
  bool unresolved = llvm::any_of(
      graph->output(), [&](const onnx::ValueInfoProto &o) { return isSequence(o.name()); });
  for (const onnx::NodeProto &node : graph->node())
    unresolved |= llvm::any_of(node.input(), isSequence);
  if (unresolved) {
    *graph->mutable_node() = original;
    return false;
  }
  return changed;
}

} // namespace mgs::onnx_import
