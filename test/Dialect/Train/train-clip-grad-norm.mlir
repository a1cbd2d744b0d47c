// RUN: mgs-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(train-clip-grad-norm{max-norm=0.5}))' | FileCheck %s
// RUN: not mgs-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(train-clip-grad-norm{max-norm=-2}))' 2>&1 | FileCheck %s --check-prefix=BAD

// The updates interleaved with the backward pass all move after one
// clip_grad_norm over their gradients, which follows the last of them; the
// rest of the function (what reads no updated param) keeps its order.
// CHECK-LABEL: func.func @interleaved
// CHECK:         %[[G1:.*]] = train.gradient @w1
// CHECK-NEXT:    %[[X:.*]] = train.relu
// CHECK-NEXT:    %[[G0:.*]] = train.gradient @w0
// CHECK-NEXT:    train.clip_grad_norm %[[G1]], %[[G0]] {max_norm = 5.000000e-01 : f64} : tensor<3xf32>, tensor<4xf32>
// CHECK-NEXT:    train.sgd_update @w1, %[[G1]]
// CHECK-NEXT:    train.sgd_update @w0, %[[G0]]
// CHECK-NEXT:    return
// BAD: error: train-clip-grad-norm: max-norm must be a positive number, got -2
train.parameter @w0 trainable : tensor<4xf32>
train.parameter @w1 trainable : tensor<3xf32>
func.func @interleaved(%d1: tensor<3xf32>, %d0: tensor<4xf32>) {
  %g1 = train.gradient @w1, %d1 {backprop_index = 0 : i64} : tensor<3xf32>
  train.sgd_update @w1, %g1 : tensor<3xf32>
  %x = train.relu %d0 : tensor<4xf32>
  %g0 = train.gradient @w0, %x {backprop_index = 1 : i64} : tensor<4xf32>
  train.sgd_update @w0, %g0 : tensor<4xf32>
  return
}

// -----

// A function without updates (the evaluation step) is left alone.
// CHECK-LABEL: func.func @eval
// CHECK-NOT:     train.clip_grad_norm
func.func @eval(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = train.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
