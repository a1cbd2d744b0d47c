//===- ImportFuzzer.cpp - ONNX models from users, fuzzed --------------------===//
//
// A libFuzzer target over the importer (mgs-import-onnx, mgsc's first step):
// the first byte picks the syntax (even: binary protobuf .onnx, odd: ONNX's
// text syntax .onnxtext), the rest is the file. The import must either
// succeed with a module that verifies, or fail having reported an error
// (MLIR diagnostic); never crash, hang or touch memory it should not
// (ASan/UBSan), whatever ONNX's checker and shape inference let through.
//
// Built with clang's -fsanitize=fuzzer by onnx_import/fuzz/run.sh; the test
// suite replays the committed corpus (onnx_import/fuzz/corpus) through the
// same entry point (test/onnx_import/fuzz-replay.test).
//
//===----------------------------------------------------------------------===//

#include "FuzzFiles.h"
#include "Importer.h"
#include "mgs/InitAllDialects.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

/// The MLIR context the imports share, made once rather than once an input
/// (making one and loading its dialects took most of an execution), without
/// a thread pool. What an import leaves in it (uniqued types, attributes,
/// names) only grows, so a new one replaces it every kInputsPerContext inputs.
mlir::MLIRContext &sharedContext() {
  constexpr unsigned kInputsPerContext = 4096;
  static mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry r;
    mgs::registerAllDialects(r);
    return r;
  }();
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned inputs = 0;
  if (!context || ++inputs % kInputsPerContext == 0) {
    context.reset(); // one context at a time
    context = std::make_unique<mlir::MLIRContext>(registry,
                                                  mlir::MLIRContext::Threading::DISABLED);
    context->printOpOnDiagnostic(false);
  }
  return *context;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const bool text = data[0] & 1;
  std::string path = mgs::fuzz::writeInput("mgs-import-fuzz", text ? "model.onnxtext" : "model.onnx",
                                           data + 1, size - 1);
  mlir::MLIRContext &context = sharedContext();
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error && firstError.empty())
      firstError = d.str().empty() ? "(empty message)" : d.str();
    return mlir::success();
  });
  mgs::onnx_import::ImportOptions options;
  options.batchSize = 2; // as mgsc --batch-size: also re-runs shape inference
  auto module = mgs::onnx_import::importOnnxFile(context, path, options);
  static const bool verbose = std::getenv("MGS_FUZZ_VERBOSE") != nullptr;
  if (mlir::failed(module)) {
    if (firstError.empty()) {
      std::fprintf(stderr, "the import failed without reporting an error\n");
      std::abort();
    }
    if (verbose)
      std::printf("import: error: %s\n", firstError.c_str());
    return 0;
  }
  if (mlir::failed(mlir::verify(**module))) {
    std::fprintf(stderr, "the imported module does not verify: %s\n", firstError.c_str());
    std::abort();
  }
  if (verbose)
    std::printf("import: ok\n");
  return 0;
}
