//===- GraphLoss.h - A loss the exported graph computes itself --*- C++ -*-===//
//
// An export of a module whose forward returns its loss, F.cross_entropy(
// model(x), y) (or F.nll_loss of a log_softmax, which torch.onnx.export
// writes the same way), ends in a SoftmaxCrossEntropyLoss fed by a graph
// input of labels. mgs builds the training step's loss itself
// (train-build-step), so the importer lifts that node out before the graph
// walk: the graph's first output becomes the loss's scores, the labels input
// goes (the training executable feeds the labels), and what the node says is
// kept on the forward function (kGraphLossAttrName) for train-build-step.
// Internal to onnx_import.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_GRAPHLOSS_H
#define MGS_ONNX_IMPORT_GRAPHLOSS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mgs::onnx_import {

/// What the lifted loss node said.
struct GraphLoss {
  std::string node;   ///< the loss node, as errors name it
  std::string opType; ///< SoftmaxCrossEntropyLoss or NegativeLogLikelihoodLoss
  std::string labelsInput;
  std::optional<int64_t> ignoreIndex; ///< none: every label counts
  std::vector<float> weights;         ///< the class weights; empty: none
  std::string reduction = "mean";     ///< or "sum"
  /// NegativeLogLikelihoodLoss of other than log-probabilities: the negative
  /// log-likelihood of its input as it is (no softmax).
  bool logProbabilities = false;
  /// The label smoothing the model's F.cross_entropy had, which PyTorch's
  /// torch.export-based exporter drops (ONNX's loss cannot say it): read
  /// from the node's metadata (pkg.torch.onnx.fx_node); 0 if none.
  double droppedSmoothing = 0;
  /// Whether the scores were (N, C, d1, ...) and now are the rows
  /// (N * d1 * ..., C), sample by sample.
  bool flattened = false;
};

/// Whether `reduction` is one of ONNX's loss reductions: 'mean', 'sum' or
/// 'none'.
bool isLossReduction(llvm::StringRef reduction);

/// What an error at another reduction goes on to say.
inline constexpr const char *kLossReductions =
    "; ONNX's are 'mean' (PyTorch's default), 'sum' and 'none'";

/// Finds the loss node whose result is a graph output and lifts it out of
/// `model` (shape inference has run: the scores' shape must be known):
///  - the loss output is replaced by the scores, first among the outputs:
///    SoftmaxCrossEntropyLoss's input, or NegativeLogLikelihoodLoss's input
///    when it is a LogSoftmax over the classes (the cross-entropy of
///    log-probabilities is that of the logits), or else its input as it is
///    (logProbabilities: its negative log-likelihood); scores of rank above 2 are
///    transposed and reshaped into rows of C (appended nodes, so the caller
///    infers shapes again when `flattened`);
///  - the labels input and the reshapes between it and the node go.
/// No loss node, or one that stays in the graph (converters/Loss.cpp: its
/// result read by another node, a second loss, reduction 'none', constant or
/// computed labels): nullopt. A loss
/// node mgs can do neither with (weights that are not a constant, labels of
/// another dtype) fails with a diagnostic naming it.
mlir::FailureOr<std::optional<GraphLoss>> liftGraphLoss(onnx::ModelProto &model, int64_t opset,
                                                        mlir::Location fileLoc);

/// SoftmaxCrossEntropyLoss whose labels are probabilities (FLOAT: PyTorch
/// 1.13 exports F.cross_entropy of soft targets so, which ONNX's shape
/// inference refuses) becomes, before that inference, -sum_j t_j
/// LogSoftmax(x)_j over the classes (axis 1) at each position, then its
/// reduction (the mean over every position, as PyTorch's, the sum, or none);
/// its log-probabilities output is the LogSoftmax; class weights weigh the
/// classes' terms. Opsets before 13, and class weights beside targets whose
/// rank the graph does not declare, are errors naming the node.
mlir::LogicalResult decomposeSoftTargetCrossEntropy(onnx::ModelProto &model, int64_t opset,
                                                    mlir::Location fileLoc);

/// Records `loss` on the forward function as its kGraphLossAttrName
/// dictionary (TrainDialect.h), for train-build-step.
void recordGraphLoss(mlir::func::FuncOp forward, const GraphLoss &loss);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_GRAPHLOSS_H
