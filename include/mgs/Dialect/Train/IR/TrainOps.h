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

#include <optional>

#define GET_OP_CLASSES
#include "mgs/Dialect/Train/IR/TrainOps.h.inc"

namespace mgs::train {
/// The kind an elementwise op's gradient op names it by ("relu",
/// "leaky_relu", "sigmoid", "tanh", "hard_sigmoid", "hard_swish"; "add", "sub",
/// "mul", "div"), or "" for other ops. The one mapping shared by autodiff and
/// the lowering.
llvm::StringRef elementwiseKind(mlir::Operation *op);

/// A unary elementwise op (relu, sigmoid, ..., elu, selu) as the runtime's
/// unary kernels and train.unary_grad take it: its kind (elementwiseKind)
/// and its parameters alpha and beta (0 where the op has none). nullopt for
/// other ops. The one list of such ops autodiff and the lowering share.
struct UnaryParams {
  llvm::StringRef kind;
  double alpha = 0, beta = 0;
};
std::optional<UnaryParams> unaryParams(mlir::Operation *op);

/// train.unary_grad's kinds: those of unaryParams().
llvm::ArrayRef<llvm::StringRef> unaryKinds();

/// train.elementwise_loss's kinds (torch.nn's MSELoss, L1Loss, SmoothL1Loss,
/// BCEWithLogitsLoss; "value": the prediction is the loss, computed by the
/// graph).
inline constexpr llvm::StringRef kElementwiseLossKinds[] = {"mse", "l1", "smooth_l1",
                                                            "bce_with_logits", "value"};
} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_IR_TRAINOPS_H
