//===- Passes.h - comm dialect passes ---------------------------*- C++ -*-===//

#ifndef MGS_DIALECT_COMM_TRANSFORMS_PASSES_H
#define MGS_DIALECT_COMM_TRANSFORMS_PASSES_H

#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mgs::comm {

#define GEN_PASS_DECL
#include "mgs/Dialect/Comm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mgs/Dialect/Comm/Transforms/Passes.h.inc"

} // namespace mgs::comm

#endif // MGS_DIALECT_COMM_TRANSFORMS_PASSES_H
