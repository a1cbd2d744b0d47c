//===- CommDialect.cpp - The comm dialect ---------------------------------===//

#include "mgs/Dialect/Comm/IR/CommDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mgs::comm;

#include "mgs/Dialect/Comm/IR/CommOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "mgs/Dialect/Comm/IR/CommOpsTypes.cpp.inc"

void CommDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "mgs/Dialect/Comm/IR/CommOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mgs/Dialect/Comm/IR/CommOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "mgs/Dialect/Comm/IR/CommOps.cpp.inc"
