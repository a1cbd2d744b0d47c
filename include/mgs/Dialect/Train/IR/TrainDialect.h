//===- TrainDialect.h - The train dialect -----------------------*- C++ -*-===//

#ifndef MGS_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define MGS_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "mgs/Dialect/Train/IR/TrainOpsDialect.h.inc"

namespace mgs::train {
/// Module attribute naming the file the parameters without an inline
/// `initial_value` are read from.
inline constexpr llvm::StringLiteral kWeightsFileAttrName = "train.weights_file";
/// The forward function's record of a loss the exported graph computed
/// itself, which the importer lifted out of it (the graph's first output is
/// then the loss's scores): a dictionary of `node` (the loss node's name),
/// `op` (its ONNX op type), `labels` (the graph input it read), `reduction`
/// ("mean" or "sum"),
/// `ignore_index` (i64; absent: every label counts) and `weight` (the class
/// weights, tensor<Cxf32>; absent: none); `dropped_label_smoothing` (f64)
/// when the exporter's metadata shows a label smoothing the ONNX node lost.
/// train-build-step trains that loss.
inline constexpr llvm::StringLiteral kGraphLossAttrName = "train.graph_loss";
/// On @train_step's labels argument (rows, one label each) when the rows
/// come from scores of rank >= 3 (train-build-step's class-axis): the shape
/// (N, d1, ...) of their positions, which the labels' data must have.
inline constexpr llvm::StringLiteral kLabelShapeAttrName = "train.label_shape";
/// Unit attribute of a train.parameter that the export says is the module's
/// buffer, not a parameter (torch.export's graph signature: a causal mask,
/// RoPE's inv_freq): imported frozen, never trained.
inline constexpr llvm::StringLiteral kExportBufferAttrName = "train.export_buffer";
/// Unit attribute of a train.parameter whose initial values are not all
/// finite (an attention mask's -inf kept as a float initializer): imported
/// frozen, as no update of such a tensor stays finite.
inline constexpr llvm::StringLiteral kNonFiniteInitAttrName = "train.nonfinite_initializer";
/// I64 attribute of @accum_step (train-accumulate-gradients): the batches
/// an optimizer step takes, @accum_step for all but the last.
inline constexpr llvm::StringLiteral kAccumulateAttrName = "train.accumulate";
} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_IR_TRAINDIALECT_H
