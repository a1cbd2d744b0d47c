//===- Split.h - Converter of ONNX Split ------------------------*- C++ -*-===//
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

/// `x` split along `axis` into pieces of `sizes` (one train.split), or an
/// error naming the node when a size is negative or they do not cover the
/// axis. Also SplitToSequence's split (Sequence.cpp).
mlir::FailureOr<llvm::SmallVector<mlir::Value>> splitAlong(NodeImporter &n, mlir::Value x,
                                                           int64_t axis,
                                                           llvm::ArrayRef<int64_t> sizes);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_SPLIT_H
