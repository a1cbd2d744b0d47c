//===- Sequence.cpp - SplitToSequence read at constant positions ----------===//
//
// PyTorch's torch.export-based exporter with optimize=False writes
// `x.chunk(n, dim)` and `x.split(size, dim)` as SplitToSequence followed by
// SequenceAt at constant positions (GPT-2's and GPT-NeoX's fused qkv, Phi-3's
// gate_up). mgs has no sequence values: the sequence is a train.split whose
// pieces SequenceAt picks; anything else done with a sequence is an error
// naming the node.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OpConverters.h"
#include "converters/Split.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult GraphImporter::importSequence(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  if (op == "SequenceAt") {
    auto it = sequences.find(curNode->input(0));
    if (it == sequences.end())
      return emitError() << "its sequence '" << curNode->input(0)
                         << "' is not a SplitToSequence's (mgs reads sequences only as the pieces "
                            "of a split)";
    auto position = constantInts(1);
    if (failed(position))
      return failure();
    const int64_t count = static_cast<int64_t>(it->second.size());
    if (position->size() != 1 || (*position)[0] < -count || (*position)[0] >= count)
      return emitError() << "position must be one index in [" << -count << ", " << count
                         << "), the sequence's length";
    const int64_t at = (*position)[0] < 0 ? (*position)[0] + count : (*position)[0];
    Value piece = it->second[at];
    auto type = outputType(0, b.getF32Type());
    if (failed(type))
      return failure();
    if (piece.getType() != *type)
      return emitError() << "piece " << at << " has shape " << shapeToString(shapeOf(piece))
                         << ", ONNX shape inference says " << shapeToString(type->getShape());
    setOutput(0, piece);
    handled = true;
    return success();
  }
  if (op == "SequenceEmpty" || op == "SequenceConstruct" || op == "SequenceInsert")
    return emitError() << "the sequence it builds is read where mgs cannot replace it by its "
                          "elements at import (mgs takes a sequence read only by SequenceInsert, "
                          "SequenceAt, SequenceLength and ConcatFromSequence, at positions known "
                          "at import, and not a graph output)";
  if (op != "SplitToSequence") {
    for (int i = 0; i < curNode->input_size(); ++i)
      if (sequences.count(curNode->input(i)))
        return emitError() << "input '" << curNode->input(i)
                           << "' is a sequence, which mgs reads only with SequenceAt at a "
                              "constant position";
    return success();
  }

  auto x = input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  auto normAxis = axisAttr("axis", 0, static_cast<int64_t>(shape.size()));
  if (failed(normAxis))
    return failure();
  const int64_t axis = *normAxis, size = shape[axis];
  // The pieces' sizes: `split` as one size (the last piece takes what is
  // left) or one size a piece; without it, pieces of 1 (squeezed unless
  // keepdims).
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (hasInput(1)) {
    auto given = constantInts(1);
    if (failed(given))
      return failure();
    const onnx::TensorProto *proto = *constantInput(1);
    if (proto->dims_size() == 0) {
      if (given->size() != 1 || (*given)[0] < 1)
        return emitError() << "split must be a positive size";
      for (int64_t left = size; left > 0; left -= (*given)[0])
        sizes.push_back(std::min(left, (*given)[0]));
    } else {
      sizes = *given;
    }
  } else {
    sizes.assign(size, 1);
    squeeze = intAttr("keepdims", 1) == 0;
  }
  for (int64_t s : sizes)
    if (s < 1)
      return emitError() << "split holds the size " << s << "; mgs needs pieces of 1 or more";
  auto split = splitAlong(*this, *x, axis, sizes);
  if (failed(split))
    return failure();
  SmallVector<Value> pieces = std::move(*split);
  if (squeeze) {
    SmallVector<int64_t> squeezed(shape);
    squeezed.erase(squeezed.begin() + axis);
    for (Value &p : pieces)
      p = ReshapeOp::create(b, loc(), RankedTensorType::get(squeezed, b.getF32Type()), p);
  }
  sequences[curNode->output(0)] = std::move(pieces);
  handled = true;
  return success();
}

} // namespace mgs::onnx_import
