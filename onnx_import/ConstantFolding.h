//===- ConstantFolding.h - Shape arithmetic evaluated at import -*- C++ -*-===//
//
// Exporters compute some tensors from shapes: PyTorch builds an LSTM's zero
// initial state with Shape -> Gather -> Unsqueeze -> Concat -> Expand. With
// the static shapes mgs needs, every such node's inputs are known at import,
// so the importer evaluates it into a constant instead of converting it.
// Integer (INT64/INT32, results INT64), FLOAT and BOOL tensors
// (ConstantOfShape's value: INT64 or FLOAT); Shape and Size read the static
// shape ONNX shape inference gave their input. Besides shape and layout ops,
// the elementwise arithmetic, comparisons, Cast, Where and Range exporters
// compute on shapes, and ScatterND (FoldEvaluator.h).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONSTANTFOLDING_H
#define MGS_ONNX_IMPORT_CONSTANTFOLDING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <string>

namespace mgs::onnx_import {

/// The op types the folder evaluates.
bool isFoldableOp(llvm::StringRef opType);

struct FoldContext {
  int64_t opset;
  /// The constant named `name` (a non-FLOAT initializer, a Constant node or
  /// an earlier folded node; FLOAT initializers are parameters), or null.
  std::function<const onnx::TensorProto *(const std::string &name)> constant;
  /// The static shape of the value named `name`, if ONNX shape inference
  /// gave it one.
  std::function<std::optional<llvm::SmallVector<int64_t>>(const std::string &name)> staticShape;
  /// The ONNX element type of the value named `name` (CastLike's target when its second input
  /// is computed), if known; may be empty.
  std::function<int(const std::string &name)> elementType;
};

enum class FoldResult {
  Folded,      // `out` holds the node's output 0
  NotConstant, // an input is not a constant: the node is converted as usual
  Failed,      // the node is malformed; `error` says why
};

/// ONNX Slice's bounds on a tensor of shape `dims`: per dimension [lo, hi),
/// whole where not in `axes` (empty `axes`: the first starts.size()
/// dimensions). Starts and ends are clamped as ONNX does. Without `step`,
/// steps must be 1; with it, not 0, and `step` gets each dimension's; where
/// a step is negative, the elements are lo, lo + step, ... while above hi
/// (hi <= lo, hi may be -1). Returns the problem, or an empty string. Shared by the folder
/// (constant data) and the Slice converter (computed data).
std::string sliceBounds(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> starts,
                        llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
                        llvm::ArrayRef<int64_t> steps, llvm::SmallVectorImpl<int64_t> &lo,
                        llvm::SmallVectorImpl<int64_t> &hi,
                        llvm::SmallVectorImpl<int64_t> *step = nullptr);

/// The tensor of a Constant node whose attribute is value_float(s) or
/// value_int(s) into `out`; returns the problem, or an empty string. (A
/// `value` attribute is the tensor itself: callers read it in place.)
std::string scalarConstant(const onnx::NodeProto &node, onnx::TensorProto &out);

/// Evaluates `node` (of a foldable type) into `out`, named as its output 0.
FoldResult foldNode(const onnx::NodeProto &node, const FoldContext &ctx, onnx::TensorProto &out,
                    std::string &error);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONSTANTFOLDING_H
