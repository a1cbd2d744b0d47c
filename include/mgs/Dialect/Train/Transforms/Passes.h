//===- Passes.h - train dialect passes --------------------------*- C++ -*-===//

#ifndef MGS_DIALECT_TRAIN_TRANSFORMS_PASSES_H
#define MGS_DIALECT_TRAIN_TRANSFORMS_PASSES_H

#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mlir/Pass/Pass.h"

namespace mgs::train {

#define GEN_PASS_DECL
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_TRANSFORMS_PASSES_H
