//===- Layout.h - Converters that copy elements to new places --*- C++ -*-===//
//
// ONNX Pad, DepthToSpace, SpaceToDepth and Trilu of computed data, registered in
// opConverters()'s table.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_LAYOUT_H
#define MGS_ONNX_IMPORT_CONVERTERS_LAYOUT_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// Pad with constant pads (opset 18's axes too): mode constant as
/// train.pad; reflect, edge and wrap as a gather per padded axis.
mlir::LogicalResult convertPad(NodeImporter &n);
/// DepthToSpace (DCR and CRD: PixelShuffle exports CRD) and SpaceToDepth
/// (PixelUnshuffle) of N x C x H x W: reshape, transpose, reshape.
mlir::LogicalResult convertDepthToSpace(NodeImporter &n);
mlir::LogicalResult convertSpaceToDepth(NodeImporter &n);
/// Trilu of computed data (torch.triu / tril; k a constant): the triangle
/// kept by train.keep_where of a constant 0/1 mask over the last two axes
/// (exact: an infinity or NaN outside it gives 0).
mlir::LogicalResult convertTrilu(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_LAYOUT_H
