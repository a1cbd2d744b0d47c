// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(train-fuse-gelu))' | FileCheck %s

// PyTorch's opset-15 nn.GELU() (torch 1.13): x / sqrt(2), erf, + 1, x * that,
// * 0.5 becomes one exact gelu (its gradient: train-fuse-gelu-step.mlir).
// CHECK-LABEL: func.func @exact_torch
//  CHECK-SAME:     (%[[X:[^:]*]]: tensor<4x8xf32>
//  CHECK-NEXT:   %[[Y:.*]] = train.gelu %[[X]] : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @exact_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %u = train.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %e = train.erf %u : tensor<4x8xf32>
  %a = train.add %e, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %m = train.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = train.mul %m, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// x * 0.70710677 instead of the division, 0.5 * x first, 1 on the left, the
// constants of shape [1]: the same gelu.
// CHECK-LABEL: func.func @exact_scaled
//  CHECK-SAME:     (%[[X:[^:]*]]: tensor<2x3x8xf32>
//  CHECK-NEXT:   %[[Y:.*]] = train.gelu %[[X]] : tensor<2x3x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @exact_scaled(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %r = arith.constant dense<0.707106769> : tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  %half = arith.constant dense<0.5> : tensor<1xf32>
  %hx = train.mul %half, %x : tensor<1xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %u = train.mul %r, %x : tensor<1xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %e = train.erf %u : tensor<2x3x8xf32>
  %a = train.add %one, %e : tensor<1xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %y = train.mul %hx, %a : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// PyTorch's nn.GELU(approximate="tanh") (torch 1.13): x * (x * x), * 0.044715,
// x + that, * sqrt(2 / pi), tanh, 1 +, x *, 0.5 *: a tanh gelu.
// CHECK-LABEL: func.func @tanh_torch
//  CHECK-SAME:     (%[[X:[^:]*]]: tensor<4x8xf32>
//  CHECK-NEXT:   %[[Y:.*]] = train.gelu %[[X]] {approximate = "tanh"} : tensor<4x8xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tanh_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %k = arith.constant dense<0.0447149985> : tensor<f32>
  %s = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %x2 = train.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %x3 = train.mul %x, %x2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %kx3 = train.mul %k, %x3 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %in = train.add %x, %kx3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %v = train.mul %s, %in : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = train.tanh %v : tensor<4x8xf32>
  %a = train.add %one, %t : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %m = train.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = train.mul %half, %m : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// pow(x, 3) for the cube, the sum and the products the other way round, x * 0.5
// first: a tanh gelu.
// CHECK-LABEL: func.func @tanh_pow
//  CHECK-NEXT:   %[[Y:.*]] = train.gelu %{{.*}} {approximate = "tanh"} : tensor<16xf32>
//  CHECK-NEXT:   return %[[Y]]
func.func @tanh_pow(%x: tensor<16xf32>) -> tensor<16xf32> {
  %k = arith.constant dense<0.044715> : tensor<f32>
  %s = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %hx = train.mul %x, %half : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %x3 = train.pow %x {exponent = 3.0 : f32} : tensor<16xf32>
  %kx3 = train.mul %x3, %k : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %in = train.add %kx3, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %v = train.mul %in, %s : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %t = train.tanh %v : tensor<16xf32>
  %a = train.add %t, %one : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %y = train.mul %a, %hx : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// The erf is used elsewhere too: nothing is fused.
// CHECK-LABEL: func.func @negative_erf_other_use
//   CHECK-NOT:   train.gelu
//       CHECK:   train.erf
func.func @negative_erf_other_use(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %u = train.div %x, %sqrt2 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %e = train.erf %u : tensor<4xf32>
  %a = train.add %e, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %m = train.mul %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y = train.mul %m, %half : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %y, %e : tensor<4xf32>, tensor<4xf32>
}

// -----

// x * x is used elsewhere too: nothing is fused.
// CHECK-LABEL: func.func @negative_square_other_use
//   CHECK-NOT:   train.gelu
//       CHECK:   train.tanh
func.func @negative_square_other_use(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k = arith.constant dense<0.044715> : tensor<f32>
  %s = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %x2 = train.mul %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %x3 = train.mul %x, %x2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %kx3 = train.mul %k, %x3 : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %in = train.add %x, %kx3 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %v = train.mul %s, %in : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %t = train.tanh %v : tensor<4xf32>
  %a = train.add %one, %t : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %m = train.mul %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y = train.mul %half, %m : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  return %y, %x2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The erf's argument is another value than the one multiplied: not a GELU.
// CHECK-LABEL: func.func @negative_two_inputs
//   CHECK-NOT:   train.gelu
func.func @negative_two_inputs(%x: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %u = train.div %z, %sqrt2 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %e = train.erf %u : tensor<4xf32>
  %a = train.add %e, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %m = train.mul %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y = train.mul %m, %half : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Another constant (0.6 for 0.5; x / 1.5 for x / sqrt(2)): not a GELU.
// CHECK-LABEL: func.func @negative_constants
//   CHECK-NOT:   train.gelu
func.func @negative_constants(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %d = arith.constant dense<1.5> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %bad = arith.constant dense<0.6> : tensor<f32>
  %u = train.div %x, %sqrt2 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %e = train.erf %u : tensor<4xf32>
  %a = train.add %e, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %m = train.mul %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y = train.mul %m, %bad : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %u2 = train.div %x, %d : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %e2 = train.erf %u2 : tensor<4xf32>
  %a2 = train.add %e2, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %m2 = train.mul %x, %a2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y2 = train.mul %m2, %half : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %y, %y2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The 0.5 broadcasts x up a dimension: the result is not x's shape.
// CHECK-LABEL: func.func @negative_broadcast
//   CHECK-NOT:   train.gelu
func.func @negative_broadcast(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<2x1xf32>
  %u = train.div %x, %sqrt2 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %e = train.erf %u : tensor<4xf32>
  %a = train.add %e, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %m = train.mul %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y = train.mul %m, %half : tensor<4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
