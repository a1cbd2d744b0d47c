// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(train-fuse-layer-norm))' | FileCheck %s

// PyTorch's opset-15 LayerNorm (the means over the last dimension, epsilon a
// scalar constant) becomes one layer_norm (its gradient: train-fuse-layer-norm-step.mlir).
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:     (%[[X:[^:]*]]: tensor<2x3x8xf32>
//       CHECK:   %[[S:.*]] = train.get_param @s
//       CHECK:   %[[B:.*]] = train.get_param @b
//       CHECK:   %[[Y:[^,]*]], %{{.*}}, %{{.*}} = train.layer_norm %[[X]], %[[S]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
//   CHECK-NOT:   train.reduce
//   CHECK-NOT:   train.sqrt
//       CHECK:   return %[[Y]]
train.parameter @s trainable : tensor<8xf32>
train.parameter @b trainable : tensor<8xf32>
func.func @forward(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %mu = train.reduce "mean" %x {axes = array<i64: 2>, keepdims = true} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  %c = train.sub %x, %mu : tensor<2x3x8xf32>, tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %sq = train.pow %c {exponent = 2.0 : f32} : tensor<2x3x8xf32>
  %var = train.reduce "mean" %sq {axes = array<i64: 2>, keepdims = true} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %sh = train.add %var, %eps : tensor<2x3x1xf32>, tensor<f32> -> tensor<2x3x1xf32>
  %sd = train.sqrt %sh : tensor<2x3x1xf32>
  %n = train.div %c, %sd : tensor<2x3x8xf32>, tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %s = train.get_param @s : tensor<8xf32>
  %y = train.mul %n, %s : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %b = train.get_param @b : tensor<8xf32>
  %z = train.add %y, %b : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  return %z : tensor<2x3x8xf32>
}

// -----

// Over the last two dimensions, scale and shift on the other side.
// CHECK-LABEL: func.func @forward
//       CHECK:   train.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 5.000000e-01 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
func.func @forward(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %mu = train.reduce "mean" %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  %c = train.sub %x, %mu : tensor<2x3x4xf32>, tensor<2x1x1xf32> -> tensor<2x3x4xf32>
  %sq = train.pow %c {exponent = 2.0 : f32} : tensor<2x3x4xf32>
  %var = train.reduce "mean" %sq {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  %eps = arith.constant dense<0.5> : tensor<1xf32>
  %sh = train.add %eps, %var : tensor<1xf32>, tensor<2x1x1xf32> -> tensor<2x1x1xf32>
  %sd = train.sqrt %sh : tensor<2x1x1xf32>
  %n = train.div %c, %sd : tensor<2x3x4xf32>, tensor<2x1x1xf32> -> tensor<2x3x4xf32>
  %y = train.mul %s, %n : tensor<3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %z = train.add %b, %y : tensor<3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %z : tensor<2x3x4xf32>
}

// -----

// The mean is used elsewhere too (LayerNormalization's Mean output): nothing
// is fused, the ops stay as they are.
// CHECK-LABEL: func.func @forward
//   CHECK-NOT:   train.layer_norm
//       CHECK:   train.reduce
//       CHECK:   train.sqrt
func.func @forward(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>) {
  %mu = train.reduce "mean" %x {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %c = train.sub %x, %mu : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %sq = train.pow %c {exponent = 2.0 : f32} : tensor<2x8xf32>
  %var = train.reduce "mean" %sq {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sh = train.add %var, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %sd = train.sqrt %sh : tensor<2x1xf32>
  %n = train.div %c, %sd : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %y = train.mul %n, %s : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %z = train.add %y, %s : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return %z, %mu : tensor<2x8xf32>, tensor<2x1xf32>
}

// -----

// Not a variance (the cube, not the square), and means over a leading
// dimension: neither is fused.
// CHECK-LABEL: func.func @forward
//   CHECK-NOT:   train.layer_norm
func.func @forward(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %t: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %mu = train.reduce "mean" %x {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %c = train.sub %x, %mu : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %sq = train.pow %c {exponent = 3.0 : f32} : tensor<2x8xf32>
  %var = train.reduce "mean" %sq {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sh = train.add %var, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %sd = train.sqrt %sh : tensor<2x1xf32>
  %n = train.div %c, %sd : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %y = train.mul %n, %s : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %z = train.add %y, %s : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %mu2 = train.reduce "mean" %t {axes = array<i64: 0>, keepdims = true} : tensor<2x8xf32> -> tensor<1x8xf32>
  %c2 = train.sub %t, %mu2 : tensor<2x8xf32>, tensor<1x8xf32> -> tensor<2x8xf32>
  %sq2 = train.pow %c2 {exponent = 2.0 : f32} : tensor<2x8xf32>
  %var2 = train.reduce "mean" %sq2 {axes = array<i64: 0>, keepdims = true} : tensor<2x8xf32> -> tensor<1x8xf32>
  %sh2 = train.add %var2, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %sd2 = train.sqrt %sh2 : tensor<1x8xf32>
  %n2 = train.div %c2, %sd2 : tensor<2x8xf32>, tensor<1x8xf32> -> tensor<2x8xf32>
  %y2 = train.mul %n2, %t : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %z2 = train.add %y2, %t : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %z, %z2 : tensor<2x8xf32>, tensor<2x8xf32>
}
