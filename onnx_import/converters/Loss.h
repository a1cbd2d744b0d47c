//===- Loss.h - Cross-entropies inside a loss the graph computes -*- C++ -*-===//
//
// ONNX SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (of a
// LogSoftmax) that the importer did not lift out as the step's loss
// (GraphLoss.cpp): their loss goes on into other nodes (a sum of terms), or
// the graph has several (a contrastive loss's two directions), or their
// labels are constants. Registered in opConverters()'s table.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_LOSS_H
#define MGS_ONNX_IMPORT_CONVERTERS_LOSS_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// A cross-entropy of scores (N, C), or (N, C, d1, ...) with a label a
/// position (made rows: classes last, then (N d1 ..., C)), against labels
/// that are a graph input (int64, fed as data) or constants (torch.arange(N):
/// a contrastive loss), optional constant class weights: one
/// train.softmax_cross_entropy with in_graph, its loss a value of the graph;
/// reduction mean, sum, or none (per_sample: each position's loss, in the
/// labels' shape); SoftmaxCrossEntropyLoss's log-probabilities output, if
/// used, is a train.log_softmax. NegativeLogLikelihoodLoss takes the input of
/// the LogSoftmax (axis 1) it reads, or other log-probabilities as their own
/// logits (the Log of a Softmax, either over the last axis reshaped into
/// rows), or anything else as it is (log_probabilities: -w[label] x[label]).
/// Scores of rank < 2, labels of another count and labels computed at run
/// time are errors naming the node.
mlir::LogicalResult convertCrossEntropyInGraph(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_LOSS_H
