//===- Executable.h - mgsc's output files: object, weights, link -*- C++ -*-===//
//
// What mgsc writes for --emit=exe (and obj): the object file compiled
// in-process, the executable linked with the runtime, and OUT.weights, the
// parameters' initial values, which take their name only with the executable.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_TOOLS_MGSC_EXECUTABLE_H
#define MGS_TOOLS_MGSC_EXECUTABLE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Module.h"

#include <string>

namespace mgsc {

/// Compiles `module` to an object file at `path` for the host.
bool emitObject(llvm::Module &module, llvm::StringRef path, std::string &error);

/// Links `object` with the runtime into the executable `output`.
bool link(llvm::StringRef object, llvm::StringRef output, std::string &error);

/// OUT.weights: the parameters' initial values (inline ones, or the ONNX
/// initializers; not the error-feedback residuals, zero at the start) in the
/// runtime's weights format, written beside it under a
/// temporary name and renamed over it by commit() once the executable is
/// linked, so a failure before leaves no weights without their executable
/// (nor a previous executable without its own). Dropped unless committed.
class PendingWeights {
public:
  PendingWeights() = default;
  PendingWeights(const PendingWeights &) = delete;
  PendingWeights &operator=(const PendingWeights &) = delete;
  ~PendingWeights();

  /// Where the weights go: `path`, or the file a link there leads to (the
  /// link stays). False, with `error`, when something other than a file is
  /// in the way.
  bool prepare(std::string path, std::string &error);
  /// Writes them under the temporary name (errors are reported).
  bool write(mlir::MLIRContext &context, mlir::ModuleOp module);
  /// Gives them their name.
  bool commit(std::string &error);
  const std::string &path() const { return target; }

private:
  std::string target, pending;
};

} // namespace mgsc

#endif // MGS_TOOLS_MGSC_EXECUTABLE_H
