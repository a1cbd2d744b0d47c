//===- ModelSummary.h - What an imported model holds ------------*- C++ -*-===//

#ifndef MGS_ANALYSIS_MODELSUMMARY_H
#define MGS_ANALYSIS_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mgs {

/// Op counts and parameter sizes of a module in the train dialect.
struct ModelSummary {
  /// Compute ops by name (train.get_param, constants and returns excluded),
  /// in order of first appearance.
  llvm::MapVector<llvm::StringRef, int64_t> opCounts;
  int64_t numOps = 0;
  int64_t numTrainable = 0, trainableElements = 0;
  int64_t numState = 0, stateElements = 0;

  static ModelSummary compute(mlir::ModuleOp module);
  /// One line: "12 ops (conv 2, ...), 10 trainable parameters (1,234 values), 4 state buffers (96 values)".
  void print(llvm::raw_ostream &os) const;
};

/// 1234567 -> "1,234,567".
std::string withThousandsSeparators(int64_t value);

} // namespace mgs

#endif // MGS_ANALYSIS_MODELSUMMARY_H
