//===- Einsum.cpp - Einsum as ONNX Transpose and MatMul -------------------===//
//
// A batched matrix product written as an Einsum becomes ONNX Transpose,
// MatMul and Transpose nodes (each transpose left out where it is the
// identity) before shape inference runs again: ONNX 1.12 infers only an
// Einsum's rank, and the ops after it need static shapes. Their converters
// and gradients exist; train-fold-transpose-into-matmul then folds a
// transpose of the last two dimensions into the matmul.
//
//===----------------------------------------------------------------------===//

#include "Einsum.h"
#include "OnnxNodes.h"
#include "Prepare.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace mgs::onnx_import {
namespace {

/// How to compute an Einsum of two operands of ranks `rankA` and `rankB` as
/// MatMul(Transpose(A, permA), Transpose(B, permB)) then Transpose(permOut):
/// an empty permutation is the identity.
/// With several (or no) free labels of an operand or several contracted
/// ones, each group is merged into one dimension by a Reshape (reshapeA,
/// reshapeB: 0 copies a batch dimension) and the product's merged free
/// dimensions split again (reshapeOut), before permOut; empty: no Reshape.
struct EinsumPlan {
  llvm::SmallVector<int64_t> permA, permB, permOut;
  llvm::SmallVector<int64_t> reshapeA, reshapeB, reshapeOut;
  bool reshapesA = false, reshapesB = false, reshapesOut = false;
};

/// The positions in `from` of the labels of `to`, or empty when that is the
/// identity.
SmallVector<int64_t> permutation(StringRef from, StringRef to) {
  SmallVector<int64_t> perm;
  bool identity = true;
  for (auto [i, c] : llvm::enumerate(to)) {
    perm.push_back(static_cast<int64_t>(from.find(c)));
    identity &= perm.back() == static_cast<int64_t>(i);
  }
  return identity ? SmallVector<int64_t>() : perm;
}

bool contains(StringRef s, char c) { return s.find(c) != StringRef::npos; }

/// An Einsum's terms, each "..." replaced by letters the equation does not
/// use (the same ones in each term), and its output made explicit (ONNX's
/// implicit one: the "..." dimensions, then the labels used once, in
/// alphabetical order). Returns "" or why the equation cannot be read so.
std::string readEquation(StringRef equationIn, ArrayRef<int64_t> ranks,
                         SmallVectorImpl<std::string> &terms, std::string &out) {
  std::string equation;
  for (char c : equationIn)
    if (c != ' ')
      equation.push_back(c);
  const size_t arrow = equation.find("->");
  StringRef lhs = StringRef(equation).take_front(arrow);
  SmallVector<StringRef> given;
  lhs.split(given, ',');
  if (given.size() != ranks.size())
    return std::to_string(given.size()) + " term(s) for " + std::to_string(ranks.size()) +
           " operand(s)";
  std::string outTerm;
  if (arrow != std::string::npos) {
    outTerm = StringRef(equation).drop_front(arrow + 2).str();
  } else {
    std::string once;
    for (char c : lhs)
      if (llvm::isAlpha(c) && llvm::count(lhs, c) == 1)
        once.push_back(c);
    llvm::sort(once);
    outTerm = (contains(lhs, '.') ? "..." : "") + once;
  }
  // The letters that stand for "..." (their count is the operands').
  std::string spare;
  for (char c = 'A'; c <= 'z'; ++c)
    if (llvm::isAlpha(c) && !contains(equation, c))
      spare.push_back(c);
  int64_t dots = -1;
  for (auto [term, rank] : llvm::zip(given, ranks)) {
    if (!term.contains("..."))
      continue;
    const int64_t count = rank - (static_cast<int64_t>(term.size()) - 3);
    if (dots >= 0 && count != dots)
      return "'...' stands for " + std::to_string(dots) + " and " + std::to_string(count) +
             " dimensions in different operands";
    dots = count;
  }
  if (dots < 0 && StringRef(outTerm).contains("..."))
    return "'...' in the output is in no operand";
  auto expand = [&](StringRef term) {
    const size_t at = term.find("...");
    if (at == StringRef::npos)
      return term.str();
    return (term.take_front(at) + StringRef(spare).take_front(std::max<int64_t>(dots, 0)) +
            term.drop_front(at + 3))
        .str();
  };
  for (auto [term, rank] : llvm::zip(given, ranks)) {
    terms.push_back(expand(term));
    if (static_cast<int64_t>(terms.back().size()) != rank || dots > int64_t(spare.size()))
      return "term '" + term.str() + "' does not match its operand's rank " + std::to_string(rank);
  }
  out = expand(outTerm);
  for (const std::string &term : terms)
    for (char c : term)
      if (!llvm::isAlpha(c))
        return std::string("'") + c + "' is not a label";
  for (char c : out) {
    if (llvm::count(out, c) != 1)
      return std::string("label '") + c + "' repeats in the output";
    if (llvm::none_of(terms, [&](const std::string &t) { return contains(t, c); }))
      return std::string("output label '") + c + "' is in no operand";
  }
  return "";
}

/// One operand's Einsum `term` -> `outTerm` (its labels a subset of term's):
/// ReduceSum over the labels left out, then Transpose into outTerm's order
/// (an Identity when neither is needed).
void appendSingleOperand(onnx::GraphProto &graph, const std::string &base, const std::string &in,
                         StringRef term, StringRef outTerm, const std::string &out, int64_t opset) {
  SmallVector<int64_t> axes;
  std::string kept;
  for (auto [i, c] : llvm::enumerate(term))
    contains(outTerm, c) ? kept.push_back(c) : axes.push_back(static_cast<int64_t>(i));
  SmallVector<int64_t> perm = permutation(kept, outTerm);
  std::string value = in;
  if (!axes.empty()) {
    value = perm.empty() ? out : base + "/summed";
    appendReduceSum(graph, base + "/ReduceSum", in, axes, value, opset);
  }
  if (!perm.empty())
    appendTranspose(graph, base + "/Transpose", value, perm, out);
  if (axes.empty() && perm.empty())
    appendNode(graph, "Identity", base + "/Identity", {in}, out);
}

/// Appends a Constant -> out of `rank` dimensions, all 1 but `first` and
/// `second`, both `size`: 1 where their indices are equal, 0 elsewhere.
void appendDiagonalMask(onnx::GraphProto &graph, const std::string &name, int64_t rank,
                        int64_t first, int64_t second, int64_t size, const std::string &out) {
  onnx::TensorProto &t = appendConstant(graph, name, out);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d = 0; d < rank; ++d)
    t.add_dims(d == first || d == second ? size : 1);
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j)
      t.add_float_data(i == j ? 1.0f : 0.0f);
}

/// Appends Einsum(inputs) with `equation` -> out, the node named `name`.
void appendEinsum(onnx::GraphProto &graph, const std::string &name, ArrayRef<std::string> inputs,
                  const std::string &equation, const std::string &out) {
  onnx::AttributeProto *a = appendNode(graph, "Einsum", name, inputs, out)->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(equation);
}

/// Plans the product of two operands whose terms `a` and `b` and output
/// `out` readEquation wrote (each label once a term, "..." replaced, every
/// label of one operand alone kept by the output): its labels are batch
/// ones (in both operands and the output), contracted ones (in both operands
/// only) and free ones of each operand (in it and the output), in any order
/// and number (XLNet's "ibh,hnd->ibnd"). `shapeA` and `shapeB` are the
/// operands' shapes (-1: unknown; the dimensions merged must be known).
/// Returns "" or why the product cannot be planned.
std::string planEinsum(StringRef a, StringRef b, StringRef out, ArrayRef<int64_t> shapeA,
                       ArrayRef<int64_t> shapeB, EinsumPlan &plan) {
  std::string batch, contracted, freeA, freeB;
  for (char c : out) {
    (contains(a, c) && contains(b, c) ? batch : contains(a, c) ? freeA : freeB).push_back(c);
  }
  for (char c : a)
    if (!contains(out, c))
      contracted.push_back(c);
  // The size of each label (-1 unknown); a label of both operands has one.
  llvm::StringMap<int64_t> size;
  for (auto [term, shape] : {std::pair{a, shapeA}, std::pair{b, shapeB}})
    for (auto [i, c] : llvm::enumerate(term)) {
      const int64_t d = shape[i];
      auto [it, fresh] = size.try_emplace(StringRef(&c, 1), d);
      if (!fresh && it->second >= 0 && d >= 0 && it->second != d)
        return std::string("label '") + c + "' is " + std::to_string(it->second) +
               " in one operand and " + std::to_string(d) + " in the other";
      if (it->second < 0)
        it->second = d;
    }
  // Each group merged into one dimension: its labels' sizes, which must be known.
  std::string unknown;
  auto product = [&](StringRef labels) {
    int64_t p = 1;
    for (char c : labels) {
      const int64_t d = size.lookup(StringRef(&c, 1));
      if (d < 0)
        unknown.push_back(c);
      p *= d;
    }
    return p;
  };
  const SmallVector<int64_t> keepBatch(batch.size(), 0); // (Reshape's 0: copy)
  // [batch..., freeA, k] x [batch..., k, freeB] -> [batch..., freeA, freeB],
  // each of freeA, k, freeB one dimension (merged when not one label).
  plan.permA = permutation(a, batch + freeA + contracted);
  plan.permB = permutation(b, batch + contracted + freeB);
  plan.permOut = permutation(batch + freeA + freeB, out);
  plan.reshapesA = freeA.size() != 1 || contracted.size() != 1;
  plan.reshapesB = freeB.size() != 1 || contracted.size() != 1;
  plan.reshapesOut = freeA.size() != 1 || freeB.size() != 1;
  if (plan.reshapesA) {
    plan.reshapeA.assign(keepBatch);
    plan.reshapeA.append({product(freeA), product(contracted)});
  }
  if (plan.reshapesB) {
    plan.reshapeB.assign(keepBatch);
    plan.reshapeB.append({product(contracted), product(freeB)});
  }
  if (plan.reshapesOut) {
    plan.reshapeOut.assign(keepBatch);
    for (char c : freeA + freeB)
      plan.reshapeOut.push_back(size.lookup(StringRef(&c, 1)));
  }
  if (!unknown.empty())
    return "the sizes of labels '" + unknown + "', merged into one dimension, are unknown";
  return "";
}

} // namespace

LogicalResult lowerEinsums(onnx::ModelProto &model, Location fileLoc, int64_t opset, bool strict,
                           bool &changed) {
  changed = false;
  onnx::GraphProto *graph = model.mutable_graph();
  if (llvm::none_of(graph->node(), [](const onnx::NodeProto &n) {
        return n.op_type() == "Einsum" && inDefaultDomain(n);
      }))
    return success();
  llvm::StringMap<SmallVector<int64_t>> shapes = knownShapes(*graph);

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  for (auto [idx, node] : llvm::enumerate(nodes)) {
    if (node.op_type() != "Einsum" || !inDefaultDomain(node)) {
      graph->add_node()->Swap(&node);
      continue;
    }
    const onnx::AttributeProto *equationAttr = findAttribute(node, "equation");
    const std::string equation = equationAttr ? equationAttr->s() : std::string();
    const std::string label = labelOf(node, static_cast<int>(idx));
    auto fail = [&](const std::string &why) {
      return emitError(fileLoc) << "node '" << label << "' (Einsum): equation '" << equation
                                << "': " << why
                                << "; mgs supports ONNX's Einsum of any number of operands, "
                                   "diagonals included, once their shapes are known";
    };
    if (node.input_size() < 1 || node.output_size() != 1)
      return fail(std::to_string(node.input_size()) + " operand(s)");
    SmallVector<ArrayRef<int64_t>> operandShapes;
    SmallVector<int64_t> ranks;
    for (const std::string &in : node.input()) {
      auto it = shapes.find(in);
      if (it == shapes.end())
        break;
      operandShapes.push_back(it->second);
      ranks.push_back(static_cast<int64_t>(it->second.size()));
    }
    if (operandShapes.size() != static_cast<size_t>(node.input_size())) {
      if (strict)
        return fail("the operands' ranks are unknown after shape inference");
      graph->add_node()->Swap(&node); // perhaps known after another round
      continue;
    }
    SmallVector<std::string> terms;
    std::string out;
    if (std::string why = readEquation(equation, ranks, terms, out); !why.empty())
      return fail(why);
    const std::string base = node.name().empty() ? node.output(0) : node.name();
    // A label repeated in a term (a diagonal): the operand times a mask that
    // is 1 where the two dimensions' indices are equal, summed over the
    // second; then the Einsum of what is left (the next round).
    SmallVector<std::string> inputs(node.input().begin(), node.input().end());
    bool diagonal = false;
    for (size_t i = 0; i < terms.size(); ++i) {
      SmallVector<int64_t> shape(operandShapes[i]);
      std::string &term = terms[i];
      for (size_t q = 1; q < term.size();) {
        const size_t p = term.find(term[q]);
        if (p == q) {
          ++q;
          continue;
        }
        if (shape[p] < 0 || shape[q] < 0) {
          if (strict)
            return fail(std::string("the size of label '") + term[q] + "' is unknown");
          break; // perhaps known after another round
        }
        if (shape[p] != shape[q])
          return fail(std::string("label '") + term[q] + "' of operand " + std::to_string(i) +
                      " is " + std::to_string(shape[p]) + " and " + std::to_string(shape[q]));
        const std::string at =
            base + "/Diagonal" + std::to_string(i) + "_" + std::to_string(operandShapes[i].size() - term.size());
        appendDiagonalMask(*graph, at + "Mask", static_cast<int64_t>(term.size()),
                           static_cast<int64_t>(p), static_cast<int64_t>(q), shape[p],
                           at + "_mask");
        appendNode(*graph, "Mul", at + "Mul", {inputs[i], at + "_mask"}, at + "_masked");
        appendReduceSum(*graph, at + "Sum", at + "_masked", {static_cast<int64_t>(q)}, at, opset);
        inputs[i] = at;
        term.erase(q, 1);
        shape.erase(shape.begin() + q);
        diagonal = true;
      }
    }
    const bool repeats = llvm::any_of(terms, [](const std::string &term) {
      return llvm::any_of(term, [&](char c) { return llvm::count(term, c) > 1; });
    });
    if (repeats && !diagonal) {
      graph->add_node()->Swap(&node); // sizes unknown yet: another round
      continue;
    }
    if (diagonal) {
      changed = true;
      appendEinsum(*graph, base + "/OfDiagonals", inputs, llvm::join(terms, ",") + "->" + out,
                   node.output(0));
      continue;
    }
    const bool changedBefore = changed;
    changed = true;
    if (terms.size() == 1) {
      appendSingleOperand(*graph, base, node.input(0), terms[0], out, node.output(0), opset);
      continue;
    }
    // A label of one operand alone that the output drops is summed over
    // that operand first (an Einsum of it alone).
    bool reduced = false;
    for (size_t i = 0; i < terms.size(); ++i) {
      std::string kept;
      for (char c : terms[i])
        if (contains(out, c) || llvm::any_of(llvm::seq<size_t>(0, terms.size()), [&](size_t j) {
              return j != i && contains(terms[j], c);
            }))
          kept.push_back(c);
      if (kept == terms[i])
        continue;
      const std::string summed = base + "/operand" + std::to_string(i) + "_summed";
      appendSingleOperand(*graph, base + "/Sum" + std::to_string(i), inputs[i], terms[i], kept,
                          summed, opset);
      inputs[i] = summed;
      terms[i] = kept;
      reduced = true;
    }
    // Three or more operands: the first two contracted into what the others
    // and the output still need, then the rest (in the next round, when
    // that product's shape is known).
    if (terms.size() > 2) {
      std::string kept;
      for (char c : terms[0] + terms[1])
        if (!contains(kept, c) &&
            (contains(out, c) ||
             llvm::any_of(ArrayRef(terms).drop_front(2), [&](auto &t) { return contains(t, c); })))
          kept.push_back(c);
      const std::string pair = base + "/pair";
      appendEinsum(*graph, base + "/Pair", {inputs[0], inputs[1]},
                   terms[0] + "," + terms[1] + "->" + kept, pair);
      std::string rest = kept;
      for (size_t i = 2; i < terms.size(); ++i)
        rest += "," + terms[i];
      SmallVector<std::string> restInputs{pair};
      restInputs.append(inputs.begin() + 2, inputs.end());
      appendEinsum(*graph, base + "/Rest", restInputs, rest + "->" + out, node.output(0));
      continue;
    }
    if (reduced) {
      appendEinsum(*graph, base + "/Product", inputs, terms[0] + "," + terms[1] + "->" + out,
                   node.output(0));
      continue;
    }
    EinsumPlan plan;
    if (std::string why =
            planEinsum(terms[0], terms[1], out, operandShapes[0], operandShapes[1], plan);
        !why.empty()) {
      // Sizes unknown yet (an earlier Einsum's product, before it is lowered
      // and inferred): another round.
      const bool unknown = llvm::any_of(operandShapes, [](ArrayRef<int64_t> shape) {
        return llvm::is_contained(shape, int64_t{-1});
      });
      if (strict || !unknown)
        return fail(why);
      changed = changedBefore;
      graph->add_node()->Swap(&node);
      continue;
    }
    auto transpose = [&](const std::string &in, ArrayRef<int64_t> perm, const std::string &out,
                         StringRef suffix) {
      appendTranspose(*graph, base + "/" + suffix.str(), in, perm, out);
    };
    auto reshape = [&](const std::string &in, ArrayRef<int64_t> shape, const std::string &out,
                       StringRef suffix) {
      appendReshape(*graph, base + "/" + suffix.str(), in, shape, out);
    };
    std::string lhs = node.input(0), rhs = node.input(1);
    if (!plan.permA.empty()) {
      transpose(node.input(0), plan.permA, base + "/lhs_transposed", "TransposeLhs");
      lhs = base + "/lhs_transposed";
    }
    if (plan.reshapesA) {
      reshape(lhs, plan.reshapeA, base + "/lhs_merged", "ReshapeLhs");
      lhs = base + "/lhs_merged";
    }
    if (!plan.permB.empty()) {
      transpose(node.input(1), plan.permB, base + "/rhs_transposed", "TransposeRhs");
      rhs = base + "/rhs_transposed";
    }
    if (plan.reshapesB) {
      reshape(rhs, plan.reshapeB, base + "/rhs_merged", "ReshapeRhs");
      rhs = base + "/rhs_merged";
    }
    std::string product = base + "/product";
    const bool last = plan.permOut.empty() && !plan.reshapesOut;
    appendNode(*graph, "MatMul", base + "/MatMul", {lhs, rhs}, last ? node.output(0) : product);
    if (plan.reshapesOut) {
      const std::string split = plan.permOut.empty() ? node.output(0) : base + "/product_split";
      reshape(product, plan.reshapeOut, split, "ReshapeResult");
      product = split;
    }
    if (!plan.permOut.empty())
      transpose(product, plan.permOut, node.output(0), "TransposeResult");
  }
  return success();
}

} // namespace mgs::onnx_import
