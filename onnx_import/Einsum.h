//===- Einsum.h - Einsum as ONNX Transpose and MatMul -----------*- C++ -*-===//
//
// An ONNX Einsum (attention written with torch.einsum: MaxViT's
// "bghid,bghjd->bghij"; a transpose or a sum of one operand; a chain of
// three) rewritten, before the graph walk, into the ONNX ops that already
// import. Internal to onnx_import.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_EINSUM_H
#define MGS_ONNX_IMPORT_EINSUM_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace mgs::onnx_import {

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

/// Plans `equation` (spaces allowed): an explicit output ("->"), two
/// operands, each label once a term, and the labels batch ones (in both
/// operands and the output), contracted ones (in both operands only) and
/// free ones of each operand (in it and the output), in any order and
/// number (XLNet's "ibh,hnd->ibnd"); "..." stands for the same leading
/// dimensions of both operands and the output. `shapeA` and `shapeB` are the
/// operands' shapes (-1: unknown; the dimensions merged must be known).
/// Returns "" or why the equation is not such a product.
std::string planEinsum(llvm::StringRef equation, llvm::ArrayRef<int64_t> shapeA,
                       llvm::ArrayRef<int64_t> shapeB, EinsumPlan &plan);

/// Replaces each Einsum node of the graph (named after it: errors still name
/// it), or fails naming the node and its equation: a product of two operands
/// by its plan's Transpose, MatMul and Transpose nodes; one operand by
/// ReduceSum and Transpose; a label that one operand alone has and the
/// output drops by a ReduceSum of that operand first; three or more operands
/// by an Einsum of the first two and one of that and the rest (lowered in
/// later rounds). The operands' ranks come from shape inference (run before);
/// an Einsum whose operands' ranks are unknown is kept, or with `strict` an
/// error. Returns whether any node was replaced in `changed`.
mlir::LogicalResult lowerEinsums(onnx::ModelProto &model, mlir::Location fileLoc, int64_t opset,
                                 bool strict, bool &changed);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_EINSUM_H
