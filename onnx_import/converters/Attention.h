//===- Attention.h - Converters of attention's masking ops ------*- C++ -*-===//
//
// ONNX Where (attention's masked fill) and Expand of computed data (a class
// token broadcast over the batch), registered in opConverters()'s table.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_ATTENTION_H
#define MGS_ONNX_IMPORT_CONVERTERS_ATTENTION_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// Where(condition, x, y) with a constant BOOL condition (folded at import)
/// and FLOAT branches, each computed data or a constant (a -inf fill): the
/// condition becomes a 0/1 mask M and the result data_x * M + data_y * (1 - M)
/// plus the constant branches' values where they are chosen. A branch that is
/// data must be finite where it is not chosen (it is multiplied by 0): the
/// gradient there is 0. A condition computed by the graph is an error naming
/// the node.
mlir::LogicalResult convertWhere(NodeImporter &n);

/// Expand of computed data to a constant shape: a broadcasting add of zeros
/// of the result's shape, whose gradient sums over the broadcast axes.
mlir::LogicalResult convertExpand(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_ATTENTION_H
