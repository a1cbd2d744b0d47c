// RUN: mgs-opt %s --train-build-step="class-axis=1" | FileCheck %s
// RUN: mgs-opt %s --train-build-step="class-axis=-1" | FileCheck %s
// RUN: not mgs-opt %s --train-build-step="class-axis=2" 2>&1 | FileCheck %s --check-prefix=RANGE

// An N x C output takes class-axis 1 or -1 (train-build-step-class-axis.mlir)
// and stays as it is.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:      %[[LABELS:[^:]*]]: tensor<2xi64> {train.name = "labels"})
// CHECK-NOT:     train.label_shape
// CHECK-NOT:     train.reshape
// CHECK:         train.softmax_cross_entropy %{{.*}}, %[[LABELS]] : (tensor<2x3xf32>, tensor<2xi64>)
// RANGE: error: train-build-step: class-axis 2 is not an axis of the first output 'tensor<2x3xf32>' but the batch's (1..1, or -1..-1 from the back)
train.parameter @b trainable : tensor<3xf32>
func.func @forward(%x: tensor<2x3xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "scores"}) {
  %b = train.get_param @b : tensor<3xf32>
  %y = train.add %x, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
