//===- MobileNet.h - Converters of gated activations ------------*- C++ -*-===//
//
// ONNX HardSigmoid, HardSwish (MobileNetV3) and Swish, registered in
// opConverters()'s table.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_MOBILENET_H
#define MGS_ONNX_IMPORT_CONVERTERS_MOBILENET_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// HardSigmoid (alpha 0.2, beta 0.5 by default): train.hard_sigmoid; a
/// non-finite alpha or beta is an error naming the node.
mlir::LogicalResult convertHardSigmoid(NodeImporter &n);
// HardSwish (no attributes) is convertUnary<HardSwishOp>.
/// Swish (opset 24; alpha 1 by default: SiLU) as x * sigmoid(alpha * x): a
/// non-finite alpha is an error naming the node.
mlir::LogicalResult convertSwish(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_MOBILENET_H
