//===- mgs-opt.cpp - mgs optimizer driver ---------------------------------===//
//
// The opt-style tool: parses MLIR, runs mgs and upstream passes, prints the
// result. Drives every lit test of the compiler.
//
//===----------------------------------------------------------------------===//

#include "mgs/InitAllDialects.h"
#include "mgs/InitAllPasses.h"
#include "mgs/Support/CommandLine.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mgs::registerAllDialects(registry);
  mgs::registerAllPasses();
  mgs::addVersionPrinter();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mgs optimizer driver\n", registry));
}
