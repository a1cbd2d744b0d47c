// RUN: mgs-opt %s --pass-pipeline='builtin.module(func.func(train-fuse-gelu),train-build-step)' | FileCheck %s

// The fused GELU's gradient is one gelu_grad from x, not the decomposition's
// elementwise gradients (which would keep erf's input and output, 1 + erf and
// x (1 + erf) for the backward pass).
// CHECK-LABEL: func.func @train_step
//       CHECK:   %[[H:.*]] = train.matmul
//       CHECK:   train.gelu %[[H]] :
//       CHECK:   train.gelu_grad %[[H]], %{{.*}} : tensor<6x8xf32>
//   CHECK-NOT:   train.unary_grad
//   CHECK-NOT:   train.binary_grad
train.parameter @w trainable : tensor<4x8xf32>
func.func @forward(%x: tensor<6x4xf32>) -> tensor<6x8xf32> {
  %w = train.get_param @w : tensor<4x8xf32>
  %h = train.matmul %x, %w : (tensor<6x4xf32>, tensor<4x8xf32>) -> tensor<6x8xf32>
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %u = train.div %h, %sqrt2 : tensor<6x8xf32>, tensor<f32> -> tensor<6x8xf32>
  %e = train.erf %u : tensor<6x8xf32>
  %a = train.add %e, %one : tensor<6x8xf32>, tensor<f32> -> tensor<6x8xf32>
  %m = train.mul %h, %a : tensor<6x8xf32>, tensor<6x8xf32> -> tensor<6x8xf32>
  %y = train.mul %m, %half : tensor<6x8xf32>, tensor<f32> -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
