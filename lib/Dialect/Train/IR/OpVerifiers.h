//===- OpVerifiers.h - Shape checks the op verifiers share ------*- C++ -*-===//
//
// Internal to the dialect's verifiers (TrainOps.cpp, NormOps.cpp, RecurrentOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_DIALECT_TRAIN_IR_OPVERIFIERS_H
#define MGS_LIB_DIALECT_TRAIN_IR_OPVERIFIERS_H

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace mgs::train::detail {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

/// Checks that `result` has shape `expected`.
inline mlir::LogicalResult checkResultShape(mlir::Operation *op, mlir::Value result,
                                            llvm::ArrayRef<int64_t> expected,
                                            llvm::StringRef what = "result") {
  llvm::ArrayRef<int64_t> actual = shapeOf(result);
  if (actual == expected)
    return mlir::success();
  return op->emitOpError() << what << " shape " << shapeToString(actual)
                           << " does not match the expected " << shapeToString(expected);
}

} // namespace mgs::train::detail

#endif // MGS_LIB_DIALECT_TRAIN_IR_OPVERIFIERS_H
