//===- TorchExport.h - What torch.export says of the model ------*- C++ -*-===//
//
// PyTorch's torch.export-based exporter (torch.onnx.export's default since
// PyTorch 2.9) records the ExportedProgram's graph signature in the graph's
// metadata (pkg.torch.export.ExportedProgram.graph_signature): which inputs
// of the traced program are the module's parameters, buffers and constants,
// under their module paths. With its graph optimizer on (optimize=True, the
// default) the ONNX graph is not the training graph: BatchNorms are fused
// into convolutions, initializers of equal value (every LayerNorm weight of
// a fresh model) are merged into one, zero biases are removed and weights
// are folded into unnamed constants. The importer checks the graph against
// the signature, so that such a graph is an error that says what was lost
// rather than a different model trained in silence; and the signature's
// buffers (a causal mask, RoPE's inv_freq) are imported frozen, as PyTorch
// never trains them. Internal to onnx_import.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_TORCHEXPORT_H
#define MGS_ONNX_IMPORT_TORCHEXPORT_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <optional>

namespace mgs::onnx_import {

/// Keys of the metadata PyTorch's torch.export-based exporter writes.
inline constexpr llvm::StringLiteral kExportSignatureKey =
    "pkg.torch.export.ExportedProgram.graph_signature";
inline constexpr llvm::StringLiteral kFxNodeKey = "pkg.torch.onnx.fx_node";
inline constexpr llvm::StringLiteral kRewriteRuleKey = "pkg.onnxscript.rewriter.rule_name";

/// The value of the node's (graph's) metadata entry `key`; empty when it has
/// none, or when the linked ONNX predates metadata on nodes and graphs
/// (1.16).
llvm::StringRef nodeMetadata(const onnx::NodeProto &node, llvm::StringRef key);
llvm::StringRef graphMetadata(const onnx::GraphProto &graph, llvm::StringRef key);

/// The call of an aten op that an FX node records ("call_function[target=
/// torch.ops.aten.OP.OVERLOAD](args = (A0, A1, ...), kwargs = {})"): OP,
/// OVERLOAD and the arguments' texts. Nothing where the node records none
/// (the views into the metadata live as long as the node).
struct FxCall {
  llvm::StringRef op, overload;
  llvm::SmallVector<llvm::StringRef> args;
};
std::optional<FxCall> fxCall(const onnx::NodeProto &node);

/// Whether the FX node that PyTorch's torch.export-based exporter recorded
/// for a BatchNormalization ran it in training mode
/// (aten._native_batch_norm_legit_functional, aten.batch_norm and the like
/// with training=True): that exporter writes the op's inference form even
/// for a model in train(). False without that metadata.
bool exportedBatchNormTraining(const onnx::NodeProto &node);

/// With a graph signature: an error when parameters of the signature are
/// missing from the graph's initializers in a way that shows the exporter's
/// optimizer took them out (a node's metadata names the parameter while the
/// node reads another initializer, or a fused BatchNorm; or, without node
/// metadata, the optimizer's lifted constants beside missing parameters).
/// Parameters that are merely absent (unused by forward, or tied to another:
/// the exporter writes a tied weight once) are not errors. The diagnostic
/// names each lost parameter, where it went, and how to export instead.
mlir::LogicalResult checkExportedParameters(const onnx::GraphProto &graph,
                                            mlir::Location fileLoc);

/// With a graph signature: an error when the model updates buffers in its
/// forward (BUFFER_MUTATION outputs) other than BatchNorm's running
/// statistics, which mgs updates itself: spectral normalization's power
/// iteration, say, which PyTorch runs under no_grad and mgs would neither
/// run as an update nor keep out of the gradient.
mlir::LogicalResult checkBufferMutations(const onnx::GraphProto &graph, mlir::Location fileLoc);

/// PyTorch's TorchScript exporter in evaluation mode (its default) fuses
/// each BatchNorm into the convolution before it and names the fused weight
/// and bias after their reader ("onnx::Conv_19"), which in a training-mode
/// export every convolution's parameters keep their module names. Such a
/// graph is an error (for training) naming the convolutions and how to
/// export instead.
mlir::LogicalResult checkEvalModeExport(const onnx::ModelProto &model, mlir::Location fileLoc);

/// What the graph signature says of the initializers that are not the
/// module's parameters: both sets are empty without one.
struct ExportedNonParameters {
  /// Those it names as the module's buffers or constants (BUFFER,
  /// CONSTANT_TENSOR): never trained.
  llvm::StringSet<> buffers;
  /// The FLOAT initializers it does not name at all (the optimizer's lifted
  /// constants, such as attention's scale): constants, never trained.
  llvm::StringSet<> constants;
};
ExportedNonParameters exportedNonParameters(const onnx::GraphProto &graph);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_TORCHEXPORT_H
