//===- Diagnostics.cpp - Diagnostics for command-line users ---------------===//

#include "mgs/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;

namespace mgs {

static void printLocation(Location loc, llvm::raw_ostream &os) {
  FileLineColLoc file;
  loc->walk([&](Location inner) {
    if (auto f = dyn_cast<FileLineColLoc>(inner)) {
      file = f;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!file) {
    os << "<unknown>: ";
    return;
  }
  os << file.getFilename().getValue();
  if (file.getLine() > 0)
    os << ":" << file.getLine() << ":" << file.getColumn();
  os << ": ";
}

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

PlainDiagnosticHandler::PlainDiagnosticHandler(MLIRContext *ctx, llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(ctx), os(os) {
  setHandler([this](Diagnostic &diag) {
    auto emit = [this](Diagnostic &d) {
      printLocation(d.getLocation(), this->os);
      this->os << severityName(d.getSeverity()) << ": " << d.str() << "\n";
    };
    emit(diag);
    for (Diagnostic &note : diag.getNotes())
      emit(note);
    this->os.flush();
    return success();
  });
}

} // namespace mgs
