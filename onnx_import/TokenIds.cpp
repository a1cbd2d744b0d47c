//===- TokenIds.cpp - Token ids on their way to an embedding --------------===//
//
// INT64 graph inputs that a Gather reads as its indices are token ids (an
// embedding), as are RotaryEmbedding's position_ids; they stay int64 values
// (the function's index arguments). Ids reach their embedding through
// reshapes too (GPT-2's view(-1, T)), casts between integer types and
// slices that keep them whole (torch.export's t[:, None]) and, XLNet's
// time-major ids, a Transpose: the embedding gathers at the ids, then
// transposes its rows.
//
//===----------------------------------------------------------------------===//

#include "ConstantFolding.h"
#include "GraphImporter.h"
#include "OnnxNodes.h"
#include "Prepare.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"

#include <deque>

using namespace mlir;

namespace mgs::onnx_import {

namespace {

/// A Transpose of token ids on their way to an embedding (XLNet's time-major
/// ids): the embedding gathers at the ids, then transposes its rows.
bool isIndexTranspose(const onnx::NodeProto &node) {
  return node.op_type() == "Transpose" && node.input_size() == 1 && node.output_size() == 1;
}

/// A Cast of integers to INT64 or INT32 (torch.export writes one between
/// t[:, None] and torch.gather): ids stay ids through it. `isInteger` says
/// whether its input is an integer value.
bool isIndexCast(const onnx::NodeProto &node, bool inputIsInteger) {
  if (node.op_type() != "Cast" || node.input_size() != 1 || node.output_size() != 1 ||
      !inputIsInteger)
    return false;
  const int64_t to = intAttribute(node, "to", 0);
  return to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32;
}

/// A Slice that keeps all of its input: start 0, step 1 and to the end (an
/// end of 2^31 or more, as exporters write `:`) along each axis it names
/// (torch.export writes a[:, None] as such a Slice, then the Unsqueeze).
/// `constant` gives a constant input's tensor, or null.
bool isWholeSlice(const onnx::NodeProto &node,
                  llvm::function_ref<const onnx::TensorProto *(const std::string &)> constant) {
  if (node.op_type() != "Slice" || node.input_size() < 3 || node.output_size() != 1)
    return false;
  auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
    if (node.input_size() <= i || node.input(i).empty())
      return std::nullopt;
    return tensorInts(constant(node.input(i)));
  };
  std::optional<std::vector<int64_t>> starts = ints(1), ends = ints(2), steps = ints(4);
  if (!starts || !ends || starts->size() != ends->size())
    return false;
  if (node.input_size() > 4 && !node.input(4).empty() &&
      (!steps || llvm::any_of(*steps, [](int64_t v) { return v != 1; })))
    return false;
  for (size_t i = 0; i < starts->size(); ++i)
    if ((*starts)[i] != 0 || (*ends)[i] < (int64_t{1} << 31))
      return false;
  return true;
}

} // namespace

llvm::StringSet<> GraphImporter::findTokenIds(const onnx::GraphProto &graph) {
  llvm::StringSet<> gatherIndices;
  auto isInteger = [&](const std::string &name) {
    const int type = valueTypeOf(name);
    return type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32;
  };
  for (const auto &node : graph.node())
    if (node.op_type() == "Gather" && node.input_size() > 1) {
      gatherIndices.insert(node.input(1));
      if (auto it = initializers.find(node.input(0));
          it != initializers.end() && it->second->dims_size() > 0)
        embeddingRows[node.input(1)] = it->second->dims(0);
    } else if (node.op_type() == "GatherElements" && node.input_size() > 1) {
      // torch.gather(q, 1, a[:, None]) at labels or actions fed as data.
      gatherIndices.insert(node.input(1));
    } else if (node.op_type() == "OneHot" && node.input_size() > 0) {
      gatherIndices.insert(node.input(0)); // (F.one_hot(ids): rows of a one-hot table)
    } else if ((node.op_type() == "SoftmaxCrossEntropyLoss" ||
                node.op_type() == "NegativeLogLikelihoodLoss") &&
               node.input_size() > 1) {
      // A cross-entropy's labels inside a loss the graph computes (the
      // importer did not lift it): class indices fed as data.
      gatherIndices.insert(node.input(1));
    } else if (node.op_type() == "RotaryEmbedding" && node.input_size() > 3) {
      // position_ids: rows of the caches, gathered like an embedding's.
      gatherIndices.insert(node.input(3));
    } else if (node.op_type() == "ScatterElements" && node.input_size() > 1) {
      gatherIndices.insert(node.input(1)); // (a one-hot by scatter_ at labels)
    } else if (isOrderComparison(node.op_type()) || node.op_type() == "Equal" ||
               (node.op_type() == "Cast" &&
                intAttribute(node, "to", 0) == onnx::TensorProto::FLOAT)) {
      // Labels read as numbers (DataIntegers.cpp): F.one_hot as torch.export
      // writes it, a mask of each row's class, t.float().
      for (const std::string &in : node.input())
        if (!in.empty() && isInteger(in))
          gatherIndices.insert(in);
    }

  // Token ids reach an embedding through reshapes too (GPT-2's view(-1, T)),
  // casts between integer types and slices that keep them whole.
  std::deque<onnx::TensorProto> owned; // (value_ints and the other forms, as tensors)
  llvm::StringMap<const onnx::TensorProto *> constantNodes = constantTensors(graph, owned);
  auto constant = [&](const std::string &name) -> const onnx::TensorProto * {
    if (const onnx::TensorProto *t = constantNodes.lookup(name))
      return t;
    auto it = initializers.find(name);
    return it == initializers.end() ? nullptr : it->second;
  };
  for (int idx = graph.node_size() - 1; idx >= 0; --idx) {
    const onnx::NodeProto &node = graph.node(idx);
    if ((isReshapeOnly(node) || isIndexTranspose(node) || isWholeSlice(node, constant) ||
         isIndexCast(node, node.input_size() == 1 && isInteger(node.input(0)))) &&
        gatherIndices.contains(node.output(0))) {
      gatherIndices.insert(node.input(0));
      // (their embedding's rows bound the ids before the reshape too)
      if (auto rows = embeddingRows.find(node.output(0)); rows != embeddingRows.end())
        embeddingRows[node.input(0)] = rows->second;
    }
  }
  return gatherIndices;
}

LogicalResult GraphImporter::importIndexReshape(bool &handled) {
  handled = false;
  const bool transposes = isIndexTranspose(*curNode);
  // (A cast reaches here only of ids: the input is looked up below.)
  if (!isReshapeOnly(*curNode) && !transposes && !isIndexCast(*curNode, true) &&
      !isWholeSlice(*curNode, [&](const std::string &name) { return foldableConstant(name); }))
    return success();
  const std::string &in = curNode->input(0);
  if (auto it = transposedIndices.find(in);
      it != transposedIndices.end() && curNode->op_type() == "Identity") {
    transposedIndices[curNode->output(0)] = it->second; // (torch.export's clone)
    handled = true;
    return success();
  }
  Value ids;
  if (auto it = indexValues.find(in); it != indexValues.end())
    ids = it->second;
  else if (auto it = reshapedIndices.find(in); it != reshapedIndices.end())
    ids = it->second;
  else
    return success();
  if (transposes) {
    // (Of the graph's ids themselves: after a reshape the permutation would
    // apply to a layout the ids do not have.)
    if (!indexValues.count(in))
      return success();
    const int64_t rank = static_cast<int64_t>(shapeOf(ids).size());
    SmallVector<int64_t> perm;
    if (auto given = intsAttr("perm"))
      perm.assign(given->begin(), given->end());
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    for (int64_t d = 0; d < static_cast<int64_t>(sorted.size()); ++d)
      if (sorted[d] != d || static_cast<int64_t>(perm.size()) != rank)
        return emitError() << "perm is not a permutation of the ids' " << rank << " dimensions";
    transposedIndices[curNode->output(0)] = {ids, perm};
    handled = true;
    return success();
  }
  reshapedIndices[curNode->output(0)] = ids;
  handled = true;
  return success();
}

} // namespace mgs::onnx_import
