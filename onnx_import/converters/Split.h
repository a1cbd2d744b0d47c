//===- Split.h - Converter of ONNX Split -------------------------*- C++ -*-===//
//
// ONNX Split, registered in opConverters()'s table.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_SPLIT_H
#define MGS_ONNX_IMPORT_CONVERTERS_SPLIT_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// Split (opsets 11-18): the sizes come from the `split` attribute (before
/// opset 13) or input (from 13), else from `num_outputs` (18: pieces of
/// ceil(size / num_outputs), the last one smaller), else equal pieces, one
/// per output. One train.split; sizes that do not cover the axis are an
/// error naming the node.
mlir::LogicalResult convertSplit(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_SPLIT_H
