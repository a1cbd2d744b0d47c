//===- TokenIds.cpp - Token ids on their way to an embedding --------------===//
//
// INT64 graph inputs that a Gather reads as its indices are token ids (an
// embedding), as are RotaryEmbedding's position_ids; they stay int64 values
// (the function's index arguments). Ids reach their embedding through
// reshapes too (GPT-2's view(-1, T)) and, XLNet's time-major ids, a
// Transpose: the embedding gathers at the ids, then transposes its rows.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OnnxNodes.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace mgs::onnx_import {

namespace {

/// A Transpose of token ids on their way to an embedding (XLNet's time-major
/// ids): the embedding gathers at the ids, then transposes its rows.
bool isIndexTranspose(const onnx::NodeProto &node) {
  return node.op_type() == "Transpose" && node.input_size() == 1 && node.output_size() == 1;
}

} // namespace

llvm::StringSet<> GraphImporter::findTokenIds(const onnx::GraphProto &graph) {
  llvm::StringSet<> gatherIndices;
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
    }

  // Token ids reach an embedding through reshapes too (GPT-2's view(-1, T)).
  for (int idx = graph.node_size() - 1; idx >= 0; --idx) {
    const onnx::NodeProto &node = graph.node(idx);
    if ((isReshapeOnly(node) || isIndexTranspose(node)) && gatherIndices.contains(node.output(0))) {
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
  if (!isReshapeOnly(*curNode) && !transposes)
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
