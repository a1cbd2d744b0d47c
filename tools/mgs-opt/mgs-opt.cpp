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
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mgs::registerAllDialects(registry);
  mgs::registerAllPasses();
  mgs::addVersionPrinter();
  // A diagnostic does not print the op it is on unless asked for
  // (--mlir-print-op-on-diagnostic): the passes report on the module, and a
  // one-line warning came with the whole module printed after it.
  std::vector<char *> args(argv, argv + argc);
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(args, [](const char *a) {
        return llvm::StringRef(a).contains("print-op-on-diagnostic");
      }))
    args.insert(args.begin() + (argc > 0 ? 1 : 0), quiet);
  return mlir::asMainReturnCode(mlir::MlirOptMain(static_cast<int>(args.size()), args.data(),
                                                  "mgs optimizer driver\n", registry));
}
