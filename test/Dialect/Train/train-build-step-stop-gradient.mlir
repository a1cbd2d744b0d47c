// RUN: mgs-opt %s --train-build-step | FileCheck %s
// RUN: mgs-opt %s --train-build-step="inference-only=true" | FileCheck %s --check-prefix=INFER

// A straight-through estimator, h + stop_gradient(relu(h) - h): the forward
// computes relu(h), and the gradient reaches h through the add alone (the
// identity's), never through the relu or the sub. Once the gradients are
// built, the stop_gradient is its input in both steps.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT:     train.stop_gradient
// CHECK:         %[[H:.*]] = train.gemm
// CHECK:         %[[R:.*]] = train.relu %[[H]]
// CHECK:         %[[D:.*]] = train.sub %[[R]], %[[H]]
// CHECK:         %[[S:.*]] = train.add %[[H]], %[[D]]
// CHECK:         %[[DS:.*]], %[[DW2:.*]] = train.gemm_grad %[[S]]
// CHECK-NOT:     train.unary_grad
// CHECK-NOT:     train.binary_grad
// CHECK:         train.gemm_grad %{{.*}}, %{{.*}}, %[[DS]]
// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT:     train.stop_gradient
// CHECK:         return
// INFER-LABEL: func.func @eval_step(
// INFER-NOT:     train.stop_gradient
// INFER:         train.add
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %r = train.relu %h : tensor<2x5xf32>
  %d = train.sub %r, %h : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %stop = train.stop_gradient %d : tensor<2x5xf32>
  %s = train.add %h, %stop : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %s, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
