//===- Diagnostics.h - Diagnostics for command-line users -------*- C++ -*-===//

#ifndef MGS_SUPPORT_DIAGNOSTICS_H
#define MGS_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

namespace mgs {

/// Prints diagnostics as "FILE[:LINE:COL]: error: MESSAGE", taking the file
/// from the innermost file location (ONNX node locations are a node name
/// around the model file; the message itself names the node).
class PlainDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  PlainDiagnosticHandler(mlir::MLIRContext *ctx, llvm::raw_ostream &os = llvm::errs());

private:
  llvm::raw_ostream &os;
};

} // namespace mgs

#endif // MGS_SUPPORT_DIAGNOSTICS_H
