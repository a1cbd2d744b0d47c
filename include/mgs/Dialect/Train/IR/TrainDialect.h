//===- TrainDialect.h - The train dialect -----------------------*- C++ -*-===//

#ifndef MGS_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define MGS_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "mgs/Dialect/Train/IR/TrainOpsDialect.h.inc"

namespace mgs::train {
/// Module attribute naming the file the parameters without an inline
/// `initial_value` are read from.
inline constexpr llvm::StringLiteral kWeightsFileAttrName = "train.weights_file";
} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_IR_TRAINDIALECT_H
