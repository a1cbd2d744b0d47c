//===- FusionMatchers.h - Helpers of the train fusion patterns -*- C++ -*-===//
//
// What the patterns that fuse a decomposed op (train-fuse-layer-norm,
// train-fuse-gelu) ask of the IR they match: an operand's defining op when
// it has no other user, a one-value constant, the other operand of a
// commutative op.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_DIALECT_TRAIN_TRANSFORMS_FUSIONMATCHERS_H
#define MGS_LIB_DIALECT_TRAIN_TRANSFORMS_FUSIONMATCHERS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mgs::train {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

/// The op of type OpTy defining v when v has no other user.
template <typename OpTy> OpTy soleDef(mlir::Value v) {
  return v && v.hasOneUse() ? v.getDefiningOp<OpTy>() : OpTy();
}

/// The single f32 value of a constant `v` (any shape, one value), if it is one.
inline std::optional<float> splatValue(mlir::Value v) {
  mlir::DenseElementsAttr attr;
  if (!v || !mlir::matchPattern(v, mlir::m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<float>();
}

/// For a commutative a op b: the operand that is not `known`, or null.
inline mlir::Value otherOperand(mlir::Operation *op, mlir::Value known) {
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return mlir::Value();
}

} // namespace mgs::train

#endif // MGS_LIB_DIALECT_TRAIN_TRANSFORMS_FUSIONMATCHERS_H
