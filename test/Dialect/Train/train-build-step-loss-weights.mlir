// train-build-step's loss weights, PyTorch's: class-weights (the
// cross-entropy's weight=) and pos-weight (bce-with-logits's pos_weight),
// each a constant of one float per class (per position of the last axis),
// the loss op's last operand; one weight per class, each finite and >= 0,
// for their own loss only.
// RUN: mgs-opt %s --train-build-step="class-weights=0.5,2,0" | FileCheck %s
// RUN: not mgs-opt %s --train-build-step="class-weights=1,2" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not mgs-opt %s --train-build-step="class-weights=1,-2,3" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not mgs-opt %s --train-build-step="class-weights=1,inf,3" 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not mgs-opt %s --train-build-step="loss=mse class-weights=1,2,3" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: mgs-opt %s --train-build-step="loss=bce-with-logits pos-weight=3,1,0.25" | FileCheck %s --check-prefix=POS
// RUN: not mgs-opt %s --train-build-step="loss=bce-with-logits pos-weight=3,1" 2>&1 | FileCheck %s --check-prefix=POSCOUNT
// RUN: not mgs-opt %s --train-build-step="loss=bce-with-logits pos-weight=3,nan,1" 2>&1 | FileCheck %s --check-prefix=POSNAN
// RUN: not mgs-opt %s --train-build-step="loss=l1 pos-weight=3,1,1" 2>&1 | FileCheck %s --check-prefix=POSLOSS
// RUN: not mgs-opt %s --train-build-step="pos-weight=3,1,1" 2>&1 | FileCheck %s --check-prefix=POSCE

// POS-LABEL: func.func @train_step(
// POS:         %[[P:.*]] = arith.constant dense<[3.000000e+00, 1.000000e+00, 2.500000e-01]> : tensor<3xf32>
// POS:         train.elementwise_loss "bce_with_logits" %{{.*}}, %{{.*}} pos_weight %[[P]] : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// POSCOUNT: error: train-build-step: pos-weight has 2 values, but the output 'tensor<2x3xf32>' has 3 positions on its last axis
// POSNAN: error: train-build-step: pos-weight: the weight of position 1 must be finite and >= 0, got nan
// POSLOSS: error: train-build-step: pos-weight weighs bce-with-logits's positive targets; the loss is l1
// POSCE: error: train-build-step: pos-weight weighs bce-with-logits's positive targets; the loss is cross-entropy
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[W:.*]] = arith.constant dense<[5.000000e-01, 2.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK:         train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %[[W]] : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT:     arith.constant
// COUNT: error: train-build-step: class-weights has 2 values, but the logits 'tensor<2x3xf32>' have 3 classes
// NEG: error: train-build-step: class-weights: the weight of class 1 must be finite and >= 0, got -2
// INF: error: train-build-step: class-weights: the weight of class 1 must be finite and >= 0, got inf
// LOSS: error: train-build-step: class-weights weigh the cross-entropy's classes; the mse loss has none
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
