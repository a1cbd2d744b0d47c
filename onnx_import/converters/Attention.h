//===- Attention.h - Converters of attention's masking ops ------*- C++ -*-===//
//
// ONNX Attention and RotaryEmbedding (opset 23), Where (attention's masked fill) and Expand of
// computed data (a class token broadcast over the batch), registered in
// opConverters()'s table.
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
/// Input `input` of `n` (a Where's condition, an attention mask), a constant
/// BOOL, as 0/1 floats with its shape in `shape`; an error naming the node
/// otherwise.
mlir::FailureOr<std::vector<float>>
conditionMask(NodeImporter &n, llvm::SmallVectorImpl<int64_t> &shape, int input = 0);

/// Expand of computed data to a constant shape: a broadcasting add of zeros
/// of the result's shape, whose gradient sums over the broadcast axes.
mlir::LogicalResult convertExpand(NodeImporter &n);

/// Attention (opsets 23-24) as its decomposition: (Q * scale) K^T, the
/// optional softcap (tanh), one constant additive bias (a constant attn_mask,
/// is_causal's bottom-right aligned mask, a constant nonpad_kv_seqlen's
/// padding) plus a FLOAT attn_mask computed by the graph, softmax over the
/// keys, times V. 3-D inputs are split into heads; grouped-query attention
/// broadcasts K and V over each group instead of repeating them; a cache
/// (past_key, past_value) is concatenated before the new keys and values and
/// is present_key / present_value. A row masked entirely gives 0 (ONNX's
/// convention). Output 3 (the scores) and a softmax_precision other than
/// FLOAT are errors naming the node, as is a BOOL mask computed by the graph.
mlir::LogicalResult convertAttention(NodeImporter &n);

/// RotaryEmbedding (opset 23) as its decomposition: the caches' rows at
/// position_ids (a gather; constant ids or an INT64 graph input) or the
/// caches as given, the rotated part's halves (or, interleaved, its even and
/// odd elements) x1, x2 turned into x1 cos - x2 sin and x1 sin + x2 cos, and
/// the rest of each head passed through; 3-D inputs are split into heads.
mlir::LogicalResult convertRotaryEmbedding(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_ATTENTION_H
