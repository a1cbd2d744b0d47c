//===- Scatter.h - ScatterND, ScatterElements of computed data --*- C++ -*-===//
//
// ONNX ScatterND whose data is computed or trained and whose indices are
// constants: Swin V2's qkv bias, whose key part PyTorch overwrites with
// zeros (`zero_()` on a slice: constant updates), and a slice assignment of
// computed values (`x[..., idx] = y`, Funnel's as torch.export writes it),
// registered in opConverters()'s table; and ScatterElements of computed data
// at constant indices. Scatters of constants are folded at import
// (ConstantFolding).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_SCATTER_H
#define MGS_ONNX_IMPORT_CONVERTERS_SCATTER_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// ScatterND(data, indices, updates), reduction "none": a train.gather of
/// the data's rows (its first k = indices.shape[-1] dimensions) and the
/// updates' rows, concatenated, at constant indices choosing for each row
/// the last update written to it or else the data's own row. The result's
/// written elements are the updates whatever the data holds there (inf or
/// NaN included); the gradient reaches the data only where nothing was
/// written and the updates (computed, trained or constant) that were, as
/// PyTorch's does. Computed indices, another reduction and indices out of
/// range are errors naming the node.
mlir::LogicalResult convertScatterND(NodeImporter &n);

/// ScatterElements(data, indices, updates) at constant indices (those
/// computed at run time are RuntimeInts.cpp's): reduction "none" as
/// ScatterND's gather, each element a row (the last update written to a
/// place wins); "add" the updates added into their places by
/// train.gather_grad (a scatter-add, O(updates)); "max" and "min" each
/// place's data and updates gathered into a row, its extremum taken, the
/// gradient split evenly among tied entries (PyTorch's scatter_reduce).
/// "mul" and indices out of range are errors naming the node.
mlir::LogicalResult convertScatterElements(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_SCATTER_H
