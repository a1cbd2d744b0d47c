//===- Scatter.h - ScatterND of computed data -------------------*- C++ -*-===//
//
// ONNX ScatterND whose data is computed or trained and whose indices and
// updates are constants (Swin V2's qkv bias, whose key part PyTorch
// overwrites with zeros: `zero_()` on a slice), registered in
// opConverters()'s table. All-constant ScatterND is folded at import
// (ConstantFolding).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_SCATTER_H
#define MGS_ONNX_IMPORT_CONVERTERS_SCATTER_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// ScatterND(data, indices, updates), reduction "none": data * keep + placed,
/// keep a constant 0 where an index writes and 1 elsewhere, placed the
/// updates at their indices and 0 elsewhere (the add left out when every
/// update is 0). So the gradient reaches data only where nothing was
/// written, as PyTorch's does. Updates that are computed or trained, another
/// reduction and indices out of range are errors naming the node.
mlir::LogicalResult convertScatterND(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_SCATTER_H
