//===- Autodiff.h - Reverse-mode differentiation of train ops ---*- C++ -*-===//

#ifndef MGS_DIALECT_TRAIN_TRANSFORMS_AUTODIFF_H
#define MGS_DIALECT_TRAIN_TRANSFORMS_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mgs::train {

struct AutodiffResult {
  int64_t numGradients = 0;
  int64_t numBackwardOps = 0;
};

/// Emits, at `builder`'s insertion point, the backward pass of `forwardOps`
/// (straight-line, in program order) seeded with gradient `seedGrad` for the
/// value `seed`: per op in reverse order its gradient ops, and for every
/// trainable parameter, once its gradient is complete, `train.gradient`
/// (numbered in backprop order) followed by `train.sgd_update`. Fails with a
/// diagnostic on an op it cannot differentiate.
mlir::FailureOr<AutodiffResult> buildBackward(mlir::OpBuilder &builder,
                                              llvm::ArrayRef<mlir::Operation *> forwardOps,
                                              mlir::Value seed, mlir::Value seedGrad);

} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_TRANSFORMS_AUTODIFF_H
