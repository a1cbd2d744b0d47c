//===- CommDialect.h - The comm dialect -------------------------*- C++ -*-===//

#ifndef MGS_DIALECT_COMM_IR_COMMDIALECT_H
#define MGS_DIALECT_COMM_IR_COMMDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mgs/Dialect/Comm/IR/CommOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "mgs/Dialect/Comm/IR/CommOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "mgs/Dialect/Comm/IR/CommOps.h.inc"

namespace mgs::comm {
/// The comm dialect of `ctx` (loaded on first use), whose attribute helpers
/// (getBucketAttrHelper, getDenseAttrHelper) read and write the attributes the
/// communication passes exchange.
inline CommDialect &commDialect(mlir::MLIRContext *ctx) {
  return *ctx->getOrLoadDialect<CommDialect>();
}
} // namespace mgs::comm

#endif // MGS_DIALECT_COMM_IR_COMMDIALECT_H
