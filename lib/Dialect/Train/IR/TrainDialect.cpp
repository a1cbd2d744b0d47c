//===- TrainDialect.cpp - The train dialect -------------------------------===//

#include "mgs/Dialect/Train/IR/TrainDialect.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace mgs::train;

#include "mgs/Dialect/Train/IR/TrainOpsDialect.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mgs/Dialect/Train/IR/TrainOps.cpp.inc"
      >();
}
