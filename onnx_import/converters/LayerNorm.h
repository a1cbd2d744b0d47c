//===- LayerNorm.h - Converters of LayerNorm and GELU pieces ----*- C++ -*-===//
//
// The ONNX ops a LayerNorm + GELU network exports to: ReduceMean/ReduceSum,
// Pow with a constant exponent, LayerNormalization (opset 17) and
// RMSNormalization (opset 23), each imported as its decomposition.
// Registered in the table of OpConverters.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_LAYERNORM_H
#define MGS_ONNX_IMPORT_CONVERTERS_LAYERNORM_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// ReduceMean (axes attribute before opset 18, an input from 18) and
/// ReduceSum (axes a constant input from opset 13) as train.reduce.
mlir::LogicalResult convertReduceMean(NodeImporter &n);
mlir::LogicalResult convertReduceSum(NodeImporter &n);
/// ReduceL2 (axes an input from opset 18; F.normalize's norm, Swin V2's cosine
/// attention) as train.mul of x by itself, train.reduce "sum" and train.sqrt:
/// at a zero vector its gradient is not finite (PyTorch's norm gives 0).
mlir::LogicalResult convertReduceL2(NodeImporter &n);
/// ReduceL1 (abs, sum), ReduceSumSquare (x * x, sum) and ReduceLogSum
/// (sum, log), axes an input from opset 18.
mlir::LogicalResult convertReduceSumLike(NodeImporter &n);
/// ReduceMax and ReduceMin of computed data: the element selected by its
/// position (selectExtremum), whose gradient goes to it alone (PyTorch's
/// amax splits it among equal elements; torch.max(dim) does not).
mlir::LogicalResult convertReduceMaxMin(NodeImporter &n);
/// ReduceLogSumExp as log(sum(exp(x - m))) + m, m the detached greatest
/// element: finite for any finite x, its gradient the softmax.
mlir::LogicalResult convertReduceLogSumExp(NodeImporter &n);
/// ArgMax and ArgMin of computed data (select_last_index 0): integers
/// computed at run time, as TopK's indices.
mlir::LogicalResult convertArgMaxMin(NodeImporter &n);
/// Pow whose exponent is a one-element constant, as train.pow.
mlir::LogicalResult convertPow(NodeImporter &n);
/// LayerNormalization as mean, variance, sqrt and the affine map over the
/// axes from `axis` on: train.reduce, sub, pow, add, sqrt, div, mul, add.
mlir::LogicalResult convertLayerNormalization(NodeImporter &n);
/// RMSNormalization (opset 23) as x / sqrt(mean(x^2) + epsilon) * scale over
/// the axes from `axis` on: train.pow, reduce, add, sqrt, div, mul.
mlir::LogicalResult convertRMSNormalization(NodeImporter &n);
/// InstanceNormalization and GroupNormalization: the same decomposition over
/// each sample's spatial axes, or its groups of channels.
mlir::LogicalResult convertInstanceNormalization(NodeImporter &n);
mlir::LogicalResult convertGroupNormalization(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_LAYERNORM_H
