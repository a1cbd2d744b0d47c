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

#endif // MGS_DIALECT_TRAIN_IR_TRAINOPS_H
