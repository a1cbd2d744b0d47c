//===- InitAllDialects.h - Every dialect mgs tools load ---------*- C++ -*-===//

#ifndef MGS_INITALLDIALECTS_H
#define MGS_INITALLDIALECTS_H

#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Dialect/Train/IR/TrainDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectRegistry.h"

namespace mgs {

/// Registers the mgs dialects and the upstream ones their IR uses.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<train::TrainDialect, comm::CommDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::LLVM::LLVMDialect>();
}

} // namespace mgs

#endif // MGS_INITALLDIALECTS_H
