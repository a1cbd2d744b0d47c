//===- TrainOps.h - train dialect operations --------------------*- C++ -*-===//

#ifndef MGS_DIALECT_TRAIN_IR_TRAINOPS_H
#define MGS_DIALECT_TRAIN_IR_TRAINOPS_H

#include "mgs/Dialect/Train/IR/TrainDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "mgs/Dialect/Train/IR/TrainOps.h.inc"

namespace mgs::train {
/// The kind an elementwise op's gradient op names it by ("relu",
/// "leaky_relu", "sigmoid", "tanh", "hard_sigmoid", "hard_swish"; "add", "sub",
/// "mul", "div"), or "" for other ops. The one mapping shared by autodiff and
/// the lowering.
llvm::StringRef elementwiseKind(mlir::Operation *op);

/// train.elementwise_loss's kinds (torch.nn's MSELoss, L1Loss, SmoothL1Loss,
/// BCEWithLogitsLoss).
inline constexpr llvm::StringRef kElementwiseLossKinds[] = {"mse", "l1", "smooth_l1",
                                                            "bce_with_logits"};
} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_IR_TRAINOPS_H
