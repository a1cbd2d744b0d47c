// train-build-step's class-weights (PyTorch's weight=): a constant of one
// float per class, the loss op's third operand; one weight per class of the
// logits, each finite and >= 0, for the cross-entropy only.
// RUN: mgs-opt %s --train-build-step="class-weights=0.5,2,0" | FileCheck %s
// RUN: not mgs-opt %s --train-build-step="class-weights=1,2" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not mgs-opt %s --train-build-step="class-weights=1,-2,3" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not mgs-opt %s --train-build-step="class-weights=1,inf,3" 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not mgs-opt %s --train-build-step="loss=mse class-weights=1,2,3" 2>&1 | FileCheck %s --check-prefix=LOSS

// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[W:.*]] = arith.constant dense<[5.000000e-01, 2.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK:         train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %[[W]] : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT:     arith.constant
// COUNT: error: train-build-step: class-weights has 2 values, but the logits 'tensor<2x3xf32>' have 3 classes
// NEG: error: train-build-step: class-weights: the weight of class 1 must be finite and >= 0, got -2
// INF: error: train-build-step: class-weights: the weight of class 1 must be finite and >= 0, got INF
// LOSS: error: train-build-step: class-weights weigh the cross-entropy's classes; the mse loss has none
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
