// RUN: mgs-opt %s --train-build-step="class-axis=1" | FileCheck %s --check-prefix=SECOND
// RUN: mgs-opt %s --train-build-step="class-axis=-3" | FileCheck %s --check-prefix=SECOND
// RUN: mgs-opt %s --train-build-step="class-axis=-2" | FileCheck %s --check-prefix=THIRD
// RUN: mgs-opt %s --train-build-step="class-axis=-1" | FileCheck %s --check-prefix=LAST
// RUN: mgs-opt %s --train-build-step="class-axis=2" | FileCheck %s --check-prefix=THIRD
// RUN: not mgs-opt %s --train-build-step 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not mgs-opt %s --train-build-step="class-axis=4" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not mgs-opt %s --train-build-step="class-axis=-4" 2>&1 | FileCheck %s --check-prefix=RANGE-NEG
// RUN: not mgs-opt %s --train-build-step="class-axis=1 loss=mse" 2>&1 | FileCheck %s --check-prefix=ELEMENTWISE
// RUN: not mgs-opt %s --train-build-step="class-axis=1 inference-only=true" 2>&1 | FileCheck %s --check-prefix=INFERENCE

// Per-position scores (N, C, d1, d2) = 2 x 3 x 4 x 5 trained with the
// cross-entropy (PyTorch's CrossEntropyLoss on the output as it is,
// class-axis 1): the classes moved last and the rest flattened into rows
// N * d1 * d2 = 40, sample by sample, in the forward graph itself, so that
// @eval_step's output has the same rows; the labels are one per row.
// The labels are rows too, their data's shape the positions' (2, 4, 5)
// (the manifest's label_shape, which the driver checks the data against).
// SECOND-LABEL: func.func @train_step(
// SECOND-SAME:      %{{.*}}: tensor<2x3x4x5xf32> {train.name = "x"}, %[[LABELS:.*]]: tensor<40xi64> {train.label_shape = array<i64: 2, 4, 5>, train.name = "labels"})
// SECOND-SAME:      -> (tensor<f32> {train.name = "loss"}, tensor<40x3xf32> {train.name = "scores"})
// SECOND:         %[[Y:.*]] = train.mul
// SECOND:         %[[T:.*]] = train.transpose %[[Y]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
// SECOND:         %[[R:.*]] = train.reshape %[[T]] : (tensor<2x4x5x3xf32>) -> tensor<40x3xf32>
// SECOND:         train.softmax_cross_entropy %[[R]], %[[LABELS]] : (tensor<40x3xf32>, tensor<40xi64>)
// SECOND:         train.gradient @w
// SECOND:         return %{{.*}}, %[[R]]
// SECOND-LABEL: func.func @eval_step(
// SECOND-SAME:      -> (tensor<40x3xf32> {train.name = "scores"})
// SECOND:         train.transpose {{.*}} {perm = array<i64: 0, 2, 3, 1>}
// SECOND:         train.reshape {{.*}} -> tensor<40x3xf32>
// Classes last (class-axis -1, a language model's (N, L, vocab)): no
// transpose, the rows of 5 classes as they are.
// LAST-LABEL: func.func @train_step(
// LAST-SAME:      %[[LABELS:[^:]*]]: tensor<24xi64> {train.label_shape = array<i64: 2, 3, 4>, train.name = "labels"})
// LAST-NOT:       train.transpose
// LAST:           %[[R:.*]] = train.reshape %{{.*}} : (tensor<2x3x4x5xf32>) -> tensor<24x5xf32>
// LAST:           train.softmax_cross_entropy %[[R]], %[[LABELS]] : (tensor<24x5xf32>, tensor<24xi64>)
// Any other axis but the batch's.
// THIRD:          {train.label_shape = array<i64: 2, 3, 5>, train.name = "labels"}
// THIRD:          train.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x3x4x5xf32>) -> tensor<2x3x5x4xf32>
// THIRD:          train.reshape %{{.*}} : (tensor<2x3x5x4xf32>) -> tensor<30x4xf32>
// NONE: error: train-build-step: the first output 'tensor<2x3x4x5xf32>' has rank 4: the cross-entropy needs its class axis: class-axis 1 (classes second, (N, C, d1, ...): PyTorch's CrossEntropyLoss on the output as it is, as for per-pixel scores) or class-axis -1 (classes last, (N, d1, ..., C): a language model's (N, L, vocab))
// RANGE: error: train-build-step: class-axis 4 is not an axis of the first output 'tensor<2x3x4x5xf32>' but the batch's (1..3, or -1..-3 from the back)
// RANGE-NEG: error: train-build-step: class-axis -4 is not an axis of the first output
// ELEMENTWISE: error: train-build-step: class-axis is the cross-entropy's class axis; the loss is mse
// INFERENCE: error: train-build-step: class-axis is the cross-entropy's class axis; inference-only builds no loss
train.parameter @w trainable : tensor<5xf32>
func.func @forward(%x: tensor<2x3x4x5xf32> {train.name = "x"}) -> (tensor<2x3x4x5xf32> {train.name = "scores"}) {
  %w = train.get_param @w : tensor<5xf32>
  %y = train.mul %x, %w : tensor<2x3x4x5xf32>, tensor<5xf32> -> tensor<2x3x4x5xf32>
  return %y : tensor<2x3x4x5xf32>
}
