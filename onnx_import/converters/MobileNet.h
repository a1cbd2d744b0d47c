//===- MobileNet.h - Converters of MobileNetV3's activations ----*- C++ -*-===//
//
// ONNX HardSigmoid and HardSwish, registered in opConverters()'s table.
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

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_MOBILENET_H
