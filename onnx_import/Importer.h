//===- Importer.h - ONNX model -> train dialect -----------------*- C++ -*-===//
//
// The only public entry point of the importer. Callers need no ONNX or
// protobuf header: those stay inside this library.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_IMPORTER_H
#define MGS_ONNX_IMPORT_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mgs::onnx_import {

/// The largest batch size a model is imported at: far beyond any real batch,
/// and small enough that no tensor's size in bytes can overflow int64 (a
/// larger one overflowed the compiled model's arena size).
constexpr int64_t kMaxBatchSize = (int64_t(1) << 31) - 1;

/// A graph input that the training executable does not feed, given its
/// values in the graph instead (--bind-input): a constant (`NAME=VALUE`:
/// token_type_ids of single-segment data, an all-ones attention_mask) or a
/// mask computed from another input (`NAME=OTHER!=VALUE`, `NAME=OTHER==VALUE`:
/// Hugging Face's attention_mask from the token ids and the pad id), in
/// NAME's dtype.
struct InputBinding {
  std::string name;
  /// Empty for a constant.
  std::string other;
  bool equal = false;
  double value = 0;
};

struct ImportOptions {
  /// Sets dimension 0 of the graph inputs and re-runs shape inference: of the
  /// inputs whose dimension 0 is symbolic, or of every input if none is.
  std::optional<int64_t> batchSize;
  /// Symbolic dimensions of the graph inputs set by name (--dim NAME=N),
  /// before --batch-size: a sequence length an export left dynamic.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// Graph inputs replaced by values computed in the graph (--bind-input).
  std::vector<InputBinding> bindings;
  /// Trains every BatchNormalization with batch statistics (and updates its
  /// running ones), also one the export wrote in inference form
  /// (--train-batchnorm: PyTorch's torch.export-based exporter does so even
  /// for a model in train()).
  bool trainBatchNorm = false;
  /// The model is compiled for inference (mgsc --inference): a graph PyTorch's
  /// exporter optimized for inference is what is wanted, not an error
  /// (checkExportedParameters, TorchExport.h).
  bool forInference = false;
  /// Prints parameter values into the IR (small models and tests only).
  bool inlineWeights = false;
  /// Name of the function holding the forward graph.
  std::string functionName = "forward";
};

/// The help of the import options mgsc and mgs-import-onnx share.
inline constexpr const char *kInferenceHelp =
    "Import the model for inference (as mgsc --inference compiles it): a graph PyTorch's "
    "exporter optimized for inference (torch.onnx.export's default optimize=True) is taken, "
    "and BatchNormalization keeps the form the file gives";
inline constexpr const char *kDimHelp =
    "Set the graph inputs' symbolic dimension NAME to N (a sequence length an export left "
    "dynamic; the batch is --batch-size's)";
inline constexpr const char *kBindInputHelp =
    "Give a graph input its values in the model instead of the data: NAME=VALUE (a constant, "
    "e.g. token_type_ids=0) or NAME=INPUT!=VALUE / NAME=INPUT==VALUE (a mask of another input "
    "in NAME's dtype, e.g. attention_mask=input_ids!=PAD; quote '!' in an interactive shell)";
inline constexpr const char *kTrainBatchNormHelp =
    "Train every BatchNormalization with batch statistics, as model.train() does, also those "
    "the export wrote in inference form (PyTorch's torch.export-based exporter, dynamo=True, "
    "writes them so even for a model in train(); where the file keeps that exporter's node "
    "metadata, as it does by default, mgs reads the training flag there without this option)";

/// Fills options.dims and options.bindings from --dim's `NAME=N` and
/// --bind-input's `NAME=VALUE`, `NAME=OTHER!=VALUE` or `NAME=OTHER==VALUE`
/// specifications; on a malformed one returns the error (naming the option).
std::optional<std::string> parseInputOptions(llvm::ArrayRef<std::string> dimSpecs,
                                             llvm::ArrayRef<std::string> bindSpecs,
                                             ImportOptions &options);

/// Imports a model from a binary .onnx file or a textual .onnxtext file (ONNX's
/// own text syntax). Runs the ONNX checker and shape inference first. Every
/// problem is reported as an MLIR diagnostic on `context` (the file, or the
/// ONNX node, as location) and the result is a failure.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const ImportOptions &options);

/// Reads the float32 initializers `names` of the model at `path`, in that
/// order, and hands each to `consume` (its name, shape and values). Reports a
/// missing or non-float initializer as a diagnostic and fails.
mlir::LogicalResult readInitializers(
    mlir::MLIRContext &context, llvm::StringRef path, llvm::ArrayRef<std::string> names,
    llvm::function_ref<mlir::LogicalResult(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                                           llvm::ArrayRef<float> values)>
        consume);

/// The ONNX operator types the importer converts, sorted.
llvm::SmallVector<llvm::StringRef> supportedOpTypes();

/// The ONNX opset range (default domain) the converters implement. Older
/// models are upgraded with ONNX's version converter first. Opsets 21 to 24
/// changed none of the converted ops but for new element types; 23 added
/// Attention and RMSNormalization, 24 Swish and Attention's nonpad_kv_seqlen.
inline constexpr int64_t kMinOpset = 11;
inline constexpr int64_t kMaxOpset = 24;

/// The newest opset the importer reads: kMaxOpset, or the newest the linked
/// ONNX library (checker, shape inference) knows if that is older.
int64_t maxSupportedOpset();

/// "ONNX <version> (opsets <min>-<max>)": the linked ONNX library and the
/// opsets the importer reads with it, for --version.
std::string onnxLibraryDescription();

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_IMPORTER_H
