// RUN: mgs-opt %s --pass-pipeline='builtin.module(func.func(train-fuse-layer-norm),train-build-step)' | FileCheck %s

// The fused layer norm's gradient is one layer_norm_grad from its saved
// statistics, not the decomposition's reduce_grad and elementwise gradients.
// CHECK-LABEL: func.func @train_step
//       CHECK:   %[[Y:[^,]*]], %[[M:[^,]*]], %[[I:[^ ]*]] = train.layer_norm
//       CHECK:   train.layer_norm_grad %{{.*}}, %{{.*}}, %[[M]], %[[I]], %{{.*}} {axis = 1 : i64}
//   CHECK-NOT:   train.reduce_grad
train.parameter @s trainable : tensor<8xf32>
train.parameter @b trainable : tensor<8xf32>
func.func @forward(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %mu = train.reduce "mean" %x {axes = array<i64: 1>, keepdims = true} : tensor<6x8xf32> -> tensor<6x1xf32>
  %c = train.sub %x, %mu : tensor<6x8xf32>, tensor<6x1xf32> -> tensor<6x8xf32>
  %sq = train.pow %c {exponent = 2.0 : f32} : tensor<6x8xf32>
  %var = train.reduce "mean" %sq {axes = array<i64: 1>, keepdims = true} : tensor<6x8xf32> -> tensor<6x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %sh = train.add %var, %eps : tensor<6x1xf32>, tensor<f32> -> tensor<6x1xf32>
  %sd = train.sqrt %sh : tensor<6x1xf32>
  %n = train.div %c, %sd : tensor<6x8xf32>, tensor<6x1xf32> -> tensor<6x8xf32>
  %s = train.get_param @s : tensor<8xf32>
  %y = train.mul %n, %s : tensor<6x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %b = train.get_param @b : tensor<8xf32>
  %z = train.add %y, %b : tensor<6x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  return %z : tensor<6x8xf32>
}
