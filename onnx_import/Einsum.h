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
