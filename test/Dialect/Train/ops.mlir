// RUN: mgs-opt %s | mgs-opt | FileCheck %s
// RUN: mgs-opt %s --mlir-print-op-generic | mgs-opt | FileCheck %s

// Round trip of every train op through its custom and its generic form.
// Float attributes use values that are exact in f32 so that they print back
// unchanged.

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// Without an initial value a parameter is read from the weights file; with
// one, the value is kept inline.
// CHECK: train.parameter @fc.weight trainable : tensor<10x64xf32>{{$}}
// CHECK: train.parameter @fc.bias trainable : tensor<10xf32> = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00]> : tensor<10xf32>
// CHECK: train.parameter @bn.running_mean : tensor<16xf32> = dense<0.000000e+00> : tensor<16xf32>
train.parameter @fc.weight trainable : tensor<10x64xf32>
train.parameter @fc.bias trainable : tensor<10xf32> = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]> : tensor<10xf32>
train.parameter @bn.running_mean : tensor<16xf32> = dense<0.0> : tensor<16xf32>

// CHECK-LABEL: func.func @get_param
//       CHECK:   %[[W:.*]] = train.get_param @fc.weight : tensor<10x64xf32>
//       CHECK:   %[[B:.*]] = train.get_param @fc.bias : tensor<10xf32>
//       CHECK:   %[[M:.*]] = train.get_param @bn.running_mean : tensor<16xf32>
//       CHECK:   return %[[W]], %[[B]], %[[M]]
func.func @get_param() -> (tensor<10x64xf32>, tensor<10xf32>, tensor<16xf32>) {
  %w = train.get_param @fc.weight : tensor<10x64xf32>
  %b = train.get_param @fc.bias : tensor<10xf32>
  %m = train.get_param @bn.running_mean : tensor<16xf32>
  return %w, %b, %m : tensor<10x64xf32>, tensor<10xf32>, tensor<16xf32>
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Either operand may be the one that is broadcast.
// CHECK-LABEL: func.func @binary_broadcast
//  CHECK-SAME:   (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>)
//       CHECK:   %[[ADD:.*]] = train.add %[[A]], %[[B]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[SUB:.*]] = train.sub %[[B]], %[[A]] : tensor<3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[MUL:.*]] = train.mul %[[A]], %[[A]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[DIV:.*]] = train.div %[[A]], %[[B]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
//       CHECK:   return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]]
func.func @binary_broadcast(%a: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %add = train.add %a, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %sub = train.sub %b, %a : tensor<3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %mul = train.mul %a, %a : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %div = train.div %a, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return %add, %sub, %mul, %div : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @truths
//       CHECK:   %[[GT:.*]] = train.greater %[[A:.*]], %[[B:.*]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[GE:.*]] = train.greater_equal %[[B]], %[[A]] : tensor<3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[EQ:.*]] = train.equal %[[A]], %[[A]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[K:.*]] = train.keep_where %[[B]], %[[GT]] : tensor<3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
//       CHECK:   %[[R:.*]] = train.round %[[K]] : tensor<4x3xf32>
//       CHECK:   %[[F:.*]] = train.floor %[[R]] : tensor<4x3xf32>
//       CHECK:   train.ceil %[[F]] : tensor<4x3xf32>
func.func @truths(%a: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %gt = train.greater %a, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %ge = train.greater_equal %b, %a : tensor<3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %eq = train.equal %a, %a : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %k = train.keep_where %b, %gt : tensor<3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %r = train.round %k : tensor<4x3xf32>
  %f = train.floor %r : tensor<4x3xf32>
  %c = train.ceil %f : tensor<4x3xf32>
  return %ge, %eq, %c : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// Size-1 dimensions of both operands stretch at once (multidirectional).
// CHECK-LABEL: func.func @binary_broadcast_both_sides
//  CHECK-SAME:   (%[[A:.*]]: tensor<4x1xf32>, %[[B:.*]]: tensor<1x3xf32>)
//       CHECK:   %[[R:.*]] = train.add %[[A]], %[[B]] : tensor<4x1xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
//       CHECK:   return %[[R]]
func.func @binary_broadcast_both_sides(%a: tensor<4x1xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %r = train.add %a, %b : tensor<4x1xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @unary
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3xf32>)
//       CHECK:   %[[RELU:.*]] = train.relu %[[X]] : tensor<2x3xf32>
//       CHECK:   %[[SIG:.*]] = train.sigmoid %[[X]] : tensor<2x3xf32>
//       CHECK:   %[[TANH:.*]] = train.tanh %[[X]] : tensor<2x3xf32>
//       CHECK:   %[[LEAKY:.*]] = train.leaky_relu %[[X]] {alpha = 1.250000e-01 : f32} : tensor<2x3xf32>
//       CHECK:   return %[[RELU]], %[[SIG]], %[[TANH]], %[[LEAKY]]
func.func @unary(%x: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %relu = train.relu %x : tensor<2x3xf32>
  %sig = train.sigmoid %x : tensor<2x3xf32>
  %tanh = train.tanh %x : tensor<2x3xf32>
  %leaky = train.leaky_relu %x {alpha = 0.125 : f32} : tensor<2x3xf32>
  return %relu, %sig, %tanh, %leaky : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @stop_gradient
//       CHECK:   %[[S:.*]] = train.stop_gradient %{{.*}} : tensor<2x3xf32>
//       CHECK:   return %[[S]]
func.func @stop_gradient(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = train.stop_gradient %x : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// A bound may be a scalar or any one-element tensor.
// CHECK-LABEL: func.func @clip
//  CHECK-SAME:   (%[[X:.*]]: tensor<4xf32>, %[[LO:.*]]: tensor<f32>, %[[HI:.*]]: tensor<1xf32>)
//       CHECK:   %[[Y:.*]] = train.clip %[[X]], %[[LO]], %[[HI]] : tensor<4xf32>, tensor<f32>, tensor<1xf32>
//       CHECK:   return %[[Y]]
func.func @clip(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<1xf32>) -> tensor<4xf32> {
  %y = train.clip %x, %lo, %hi : tensor<4xf32>, tensor<f32>, tensor<1xf32>
  return %y : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gemm_with_c
//  CHECK-SAME:   (%[[X:.*]]: tensor<8x64xf32>, %[[W:.*]]: tensor<10x64xf32>, %[[B:.*]]: tensor<10xf32>)
//       CHECK:   %[[Y:.*]] = train.gemm %[[X]], %[[W]], %[[B]]
//  CHECK-SAME:     {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, trans_a = false, trans_b = true}
//  CHECK-SAME:     : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
//       CHECK:   return %[[Y]]
func.func @gemm_with_c(%x: tensor<8x64xf32>, %w: tensor<10x64xf32>, %b: tensor<10xf32>) -> tensor<8x10xf32> {
  %y = train.gemm %x, %w, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// CHECK-LABEL: func.func @gemm_without_c
//  CHECK-SAME:   (%[[A:.*]]: tensor<64x8xf32>, %[[B:.*]]: tensor<64x10xf32>)
//       CHECK:   %[[Y:.*]] = train.gemm %[[A]], %[[B]]
//  CHECK-SAME:     {alpha = 2.000000e+00 : f32, beta = 0.000000e+00 : f32, trans_a = true, trans_b = false}
//  CHECK-SAME:     : (tensor<64x8xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
//       CHECK:   return %[[Y]]
func.func @gemm_without_c(%a: tensor<64x8xf32>, %b: tensor<64x10xf32>) -> tensor<8x10xf32> {
  %y = train.gemm %a, %b {alpha = 2.0 : f32, beta = 0.0 : f32, trans_a = true, trans_b = false}
      : (tensor<64x8xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// CHECK-LABEL: func.func @matmul_2d
//  CHECK-SAME:   (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
//       CHECK:   %[[Y:.*]] = train.matmul %[[A]], %[[B]] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
//       CHECK:   return %[[Y]]
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %y = train.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// A 1-D operand is promoted to a matrix and the added dimension is removed
// from the result again (both removed for vector x vector: a scalar).
// CHECK-LABEL: func.func @matmul_1d
//  CHECK-SAME:   (%[[V:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<4x5xf32>, %[[N:.*]]: tensor<3x4xf32>)
//       CHECK:   %[[VM:.*]] = train.matmul %[[V]], %[[M]] : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
//       CHECK:   %[[NV:.*]] = train.matmul %[[N]], %[[V]] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
//       CHECK:   %[[VV:.*]] = train.matmul %[[V]], %[[V]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
//       CHECK:   return %[[VM]], %[[NV]], %[[VV]]
func.func @matmul_1d(%v: tensor<4xf32>, %m: tensor<4x5xf32>, %n: tensor<3x4xf32>)
    -> (tensor<5xf32>, tensor<3xf32>, tensor<f32>) {
  %vm = train.matmul %v, %m : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  %nv = train.matmul %n, %v : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %vv = train.matmul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %vm, %nv, %vv : tensor<5xf32>, tensor<3xf32>, tensor<f32>
}

// Leading (batch) dimensions broadcast like elementwise operands.
// CHECK-LABEL: func.func @matmul_batched
//  CHECK-SAME:   (%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[C:.*]]: tensor<7x1x4x5xf32>)
//       CHECK:   %[[Y:.*]] = train.matmul %[[A]], %[[B]] : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
//       CHECK:   %[[Z:.*]] = train.matmul %[[A]], %[[C]] : (tensor<2x3x4xf32>, tensor<7x1x4x5xf32>) -> tensor<7x2x3x5xf32>
//       CHECK:   return %[[Y]], %[[Z]]
func.func @matmul_batched(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<7x1x4x5xf32>)
    -> (tensor<2x3x5xf32>, tensor<7x2x3x5xf32>) {
  %y = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %z = train.matmul %a, %c : (tensor<2x3x4xf32>, tensor<7x1x4x5xf32>) -> tensor<7x2x3x5xf32>
  return %y, %z : tensor<2x3x5xf32>, tensor<7x2x3x5xf32>
}

// trans_lhs / trans_rhs: the operand's last two dimensions swapped; false
// (the default) is not printed.
// CHECK-LABEL: func.func @matmul_transposed
//       CHECK:   train.matmul %{{.*}}, %{{.*}} {trans_lhs = true, trans_rhs = true} : (tensor<2x4x3xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
//       CHECK:   train.matmul %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
func.func @matmul_transposed(%a: tensor<2x4x3xf32>, %b: tensor<5x4xf32>, %c: tensor<2x3x4xf32>,
                             %d: tensor<4x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %y = train.matmul %a, %b {trans_lhs = true, trans_rhs = true} : (tensor<2x4x3xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %z = train.matmul %c, %d {trans_lhs = false} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %y, %z : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @conv_with_bias
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<16x3x3x3xf32>, %[[B:.*]]: tensor<16xf32>)
//       CHECK:   %[[Y:.*]] = train.conv %[[X]], %[[W]], %[[B]]
//  CHECK-SAME:     {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
//  CHECK-SAME:     : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
//       CHECK:   return %[[Y]]
func.func @conv_with_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>)
    -> tensor<1x16x8x8xf32> {
  %y = train.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64,
                              pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// Dilation 2 makes the 3x3 kernel span 5 inputs: (9 - 5) / 2 + 1 = 3.
// CHECK-LABEL: func.func @conv_without_bias_strided_dilated
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3x9x9xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
//       CHECK:   %[[Y:.*]] = train.conv %[[X]], %[[W]]
//  CHECK-SAME:     {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
//  CHECK-SAME:     : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
//       CHECK:   return %[[Y]]
func.func @conv_without_bias_strided_dilated(%x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>)
    -> tensor<2x4x3x3xf32> {
  %y = train.conv %x, %w {dilations = array<i64: 2, 2>, group = 1 : i64,
                          pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %y : tensor<2x4x3x3xf32>
}

// Four groups of two input channels each.
// CHECK-LABEL: func.func @conv_grouped
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x8x6x6xf32>, %[[W:.*]]: tensor<8x2x3x3xf32>)
//       CHECK:   %[[Y:.*]] = train.conv %[[X]], %[[W]]
//  CHECK-SAME:     {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
//  CHECK-SAME:     : (tensor<1x8x6x6xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32>
//       CHECK:   return %[[Y]]
func.func @conv_grouped(%x: tensor<1x8x6x6xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64,
                          pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x8x6x6xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}

// Conv is N-D: one spatial axis here.
// CHECK-LABEL: func.func @conv_1d
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x2x10xf32>, %[[W:.*]]: tensor<3x2x4xf32>)
//       CHECK:   %[[Y:.*]] = train.conv %[[X]], %[[W]]
//  CHECK-SAME:     {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>}
//  CHECK-SAME:     : (tensor<1x2x10xf32>, tensor<3x2x4xf32>) -> tensor<1x3x7xf32>
//       CHECK:   return %[[Y]]
func.func @conv_1d(%x: tensor<1x2x10xf32>, %w: tensor<3x2x4xf32>) -> tensor<1x3x7xf32> {
  %y = train.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>,
                          strides = array<i64: 1>}
      : (tensor<1x2x10xf32>, tensor<3x2x4xf32>) -> tensor<1x3x7xf32>
  return %y : tensor<1x3x7xf32>
}

// CHECK-LABEL: func.func @max_pool
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x16x8x8xf32>)
//       CHECK:   %[[Y:.*]] = train.max_pool %[[X]]
//  CHECK-SAME:     {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
//  CHECK-SAME:     : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
//       CHECK:   return %[[Y]]
func.func @max_pool(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// The optional indices result; ceil_mode rounds 7 / 2 up to 4 windows.
// CHECK-LABEL: func.func @max_pool_with_indices
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x16x7x7xf32>)
//       CHECK:   %[[Y:.*]], %[[I:.*]] = train.max_pool %[[X]]
//  CHECK-SAME:     {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 1 : i64, strides = array<i64: 2, 2>}
//  CHECK-SAME:     : (tensor<1x16x7x7xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x4x4xi64>)
//       CHECK:   return %[[Y]], %[[I]]
func.func @max_pool_with_indices(%x: tensor<1x16x7x7xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x4x4xi64>) {
  %y, %i = train.max_pool %x {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, storage_order = 1 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x7x7xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x4x4xi64>)
  return %y, %i : tensor<1x16x4x4xf32>, tensor<1x16x4x4xi64>
}

// CHECK-LABEL: func.func @average_pool
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x16x8x8xf32>)
//       CHECK:   %[[Y:.*]] = train.average_pool %[[X]]
//  CHECK-SAME:     {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
//  CHECK-SAME:     : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
//       CHECK:   return %[[Y]]
func.func @average_pool(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// Same-size output with one element of padding on every side.
// CHECK-LABEL: func.func @average_pool_padded
//  CHECK-SAME:   (%[[X:.*]]: tensor<1x16x8x8xf32>)
//       CHECK:   %[[Y:.*]] = train.average_pool %[[X]]
//  CHECK-SAME:     {ceil_mode = false, count_include_pad = true, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
//  CHECK-SAME:     : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
//       CHECK:   return %[[Y]]
func.func @average_pool_padded(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = true, kernel_shape = array<i64: 3, 3>,
                              pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// Dilated taps (ONNX opset 19): a 2x2 window spanning 3x3.
// CHECK-LABEL: func.func @average_pool_dilated
//       CHECK:   train.average_pool %{{.*}} {ceil_mode = false, count_include_pad = false, dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
//  CHECK-SAME:     : (tensor<1x2x6x6xf32>) -> tensor<1x2x2x2xf32>
func.func @average_pool_dilated(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x2x2xf32> {
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 2, 2>,
                              kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>,
                              strides = array<i64: 2, 2>}
      : (tensor<1x2x6x6xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @global_average_pool
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x64x8x8xf32>)
//       CHECK:   %[[Y:.*]] = train.global_average_pool %[[X]] : (tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32>
//       CHECK:   return %[[Y]]
func.func @global_average_pool(%x: tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32> {
  %y = train.global_average_pool %x : (tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32>
  return %y : tensor<2x64x1x1xf32>
}

//===----------------------------------------------------------------------===//
// Normalization and regularization
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @batch_norm_inference
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x16x4x4xf32>, %[[S:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>, %[[M:.*]]: tensor<16xf32>, %[[V:.*]]: tensor<16xf32>)
//       CHECK:   %[[Y:[^,]*]], %[[RM:[^,]*]], %[[RV:[^,]*]], %{{[^,]*}}, %{{[^,]*}} = train.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]]
//  CHECK-SAME:     {epsilon = 7.812500e-03 : f32, momentum = 8.750000e-01 : f32}
//  CHECK-SAME:     : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
//  CHECK-SAME:     -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
//       CHECK:   return %[[Y]], %[[RM]], %[[RV]]
func.func @batch_norm_inference(%x: tensor<2x16x4x4xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>,
                                %m: tensor<16xf32>, %v: tensor<16xf32>)
    -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) {
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %s, %b, %m, %v {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y, %rm, %rv : tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>
}

// Training mode, on a rank-2 (N x C) input as after a fully connected layer.
// CHECK-LABEL: func.func @batch_norm_training
//  CHECK-SAME:   (%[[X:.*]]: tensor<8x16xf32>, %[[S:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>, %[[M:.*]]: tensor<16xf32>, %[[V:.*]]: tensor<16xf32>)
//       CHECK:   %[[Y:[^,]*]], %[[RM:[^,]*]], %[[RV:[^,]*]], %{{[^,]*}}, %{{[^,]*}} = train.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]]
//  CHECK-SAME:     {epsilon = 7.812500e-03 : f32, momentum = 8.750000e-01 : f32, training}
//  CHECK-SAME:     : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
//  CHECK-SAME:     -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
//       CHECK:   return %[[Y]], %[[RM]], %[[RV]]
func.func @batch_norm_training(%x: tensor<8x16xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>,
                               %m: tensor<16xf32>, %v: tensor<16xf32>)
    -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %s, %b, %m, %v {epsilon = 0.0078125 : f32, momentum = 0.875 : f32, training}
      : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y, %rm, %rv : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// CHECK-LABEL: func.func @dropout_inference
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x64xf32>)
//       CHECK:   %[[Y:.*]], %[[MASK:.*]] = train.dropout %[[X]] {ratio = 5.000000e-01 : f32}
//  CHECK-SAME:     : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
//       CHECK:   return %[[Y]], %[[MASK]]
func.func @dropout_inference(%x: tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>) {
  %y, %mask = train.dropout %x {ratio = 0.5 : f32} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
  return %y, %mask : tensor<2x64xf32>, tensor<2x64xi1>
}

// CHECK-LABEL: func.func @dropout_training
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x64xf32>)
//       CHECK:   %[[Y:.*]], %[[MASK:.*]] = train.dropout %[[X]] {ratio = 5.000000e-01 : f32, training}
//  CHECK-SAME:     : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
//       CHECK:   return %[[Y]], %[[MASK]]
func.func @dropout_training(%x: tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>) {
  %y, %mask = train.dropout %x {ratio = 0.5 : f32, training} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
  return %y, %mask : tensor<2x64xf32>, tensor<2x64xi1>
}

// CHECK-LABEL: func.func @random_normal
//       CHECK:   %[[E:.*]] = train.random_normal {mean = 0.000000e+00 : f32, scale = 1.000000e+00 : f32} : tensor<8x4xf32>
//       CHECK:   return %[[E]]
func.func @random_normal() -> tensor<8x4xf32> {
  %e = train.random_normal {mean = 0.0 : f32, scale = 1.0 : f32} : tensor<8x4xf32>
  return %e : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @random_uniform
//       CHECK:   %[[U:.*]] = train.random_uniform {high = 5.000000e+01 : f32, low = 0.000000e+00 : f32} : tensor<8xf32>
//       CHECK:   return %[[U]]
func.func @random_uniform() -> tensor<8xf32> {
  %u = train.random_uniform {high = 50.0 : f32, low = 0.0 : f32} : tensor<8xf32>
  return %u : tensor<8xf32>
}

// A seed makes the drawn mask reproducible.
// CHECK-LABEL: func.func @dropout_training_seeded
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x64xf32>)
//       CHECK:   %[[Y:.*]], %[[MASK:.*]] = train.dropout %[[X]] {ratio = 2.500000e-01 : f32, seed = 42 : i64, training}
//  CHECK-SAME:     : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
//       CHECK:   return %[[Y]], %[[MASK]]
func.func @dropout_training_seeded(%x: tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>) {
  %y, %mask = train.dropout %x {ratio = 0.25 : f32, seed = 42 : i64, training}
      : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
  return %y, %mask : tensor<2x64xf32>, tensor<2x64xi1>
}

// Stochastic depth: one mask element per sample.
// CHECK-LABEL: func.func @dropout_per_sample
//       CHECK:   train.dropout %{{.*}} {ratio = 1.000000e-01 : f32, training} : (tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<8x1x1x1xi1>)
//       CHECK:   train.dropout_grad %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f32} : (tensor<8x16x4x4xf32>, tensor<8x1x1x1xi1>) -> tensor<8x16x4x4xf32>
func.func @dropout_per_sample(%x: tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf32> {
  %y, %mask = train.dropout %x {ratio = 0.1 : f32, training} : (tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<8x1x1x1xi1>)
  %dx = train.dropout_grad %y, %mask {ratio = 0.1 : f32} : (tensor<8x16x4x4xf32>, tensor<8x1x1x1xi1>) -> tensor<8x16x4x4xf32>
  return %dx : tensor<8x16x4x4xf32>
}

// A negative axis counts from the back.
// CHECK-LABEL: func.func @softmax
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x10xf32>)
//       CHECK:   %[[Y:.*]] = train.softmax %[[X]] {axis = 1 : i64} : tensor<2x10xf32>
//       CHECK:   %[[Z:.*]] = train.log_softmax %[[X]] {axis = -1 : i64} : tensor<2x10xf32>
//       CHECK:   return %[[Y]], %[[Z]]
func.func @softmax(%x: tensor<2x10xf32>) -> (tensor<2x10xf32>, tensor<2x10xf32>) {
  %y = train.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  %z = train.log_softmax %x {axis = -1 : i64} : tensor<2x10xf32>
  return %y, %z : tensor<2x10xf32>, tensor<2x10xf32>
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

// Flatten's axis may also be the rank itself (everything in the first dim).
// CHECK-LABEL: func.func @flatten
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x16x2x2xf32>)
//       CHECK:   %[[A:.*]] = train.flatten %[[X]] {axis = 1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<2x64xf32>
//       CHECK:   %[[B:.*]] = train.flatten %[[X]] {axis = 0 : i64} : (tensor<2x16x2x2xf32>) -> tensor<1x128xf32>
//       CHECK:   %[[C:.*]] = train.flatten %[[X]] {axis = 4 : i64} : (tensor<2x16x2x2xf32>) -> tensor<128x1xf32>
//       CHECK:   %[[D:.*]] = train.flatten %[[X]] {axis = -1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<64x2xf32>
//       CHECK:   return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @flatten(%x: tensor<2x16x2x2xf32>)
    -> (tensor<2x64xf32>, tensor<1x128xf32>, tensor<128x1xf32>, tensor<64x2xf32>) {
  %a = train.flatten %x {axis = 1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<2x64xf32>
  %b = train.flatten %x {axis = 0 : i64} : (tensor<2x16x2x2xf32>) -> tensor<1x128xf32>
  %c = train.flatten %x {axis = 4 : i64} : (tensor<2x16x2x2xf32>) -> tensor<128x1xf32>
  %d = train.flatten %x {axis = -1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<64x2xf32>
  return %a, %b, %c, %d : tensor<2x64xf32>, tensor<1x128xf32>, tensor<128x1xf32>, tensor<64x2xf32>
}

// CHECK-LABEL: func.func @reshape
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3x4xf32>)
//       CHECK:   %[[Y:.*]] = train.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
//       CHECK:   return %[[Y]]
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %y = train.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @transpose
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3x4xf32>)
//       CHECK:   %[[Y:.*]] = train.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
//       CHECK:   return %[[Y]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = train.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}

// Three inputs along a negative axis, and a single input.
// CHECK-LABEL: func.func @concat
//  CHECK-SAME:   (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>, %[[C:.*]]: tensor<2x1xf32>)
//       CHECK:   %[[Y:.*]] = train.concat %[[A]], %[[B]], %[[C]] {axis = -1 : i64}
//  CHECK-SAME:     : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
//       CHECK:   %[[Z:.*]] = train.concat %[[A]] {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
//       CHECK:   return %[[Y]], %[[Z]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>)
    -> (tensor<2x9xf32>, tensor<2x3xf32>) {
  %y = train.concat %a, %b, %c {axis = -1 : i64}
      : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  %z = train.concat %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %z : tensor<2x9xf32>, tensor<2x3xf32>
}

// Negative pads remove elements: 2 - 1 + 0 rows, 3 + 2 - 1 columns.
// CHECK-LABEL: func.func @pad
//  CHECK-SAME:   (%[[X:.*]]: tensor<2x3xf32>)
//       CHECK:   %[[Y:.*]] = train.pad %[[X]] {pads = array<i64: 0, 1, 0, 1>, value = 0.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
//       CHECK:   %[[Z:.*]] = train.pad %[[X]] {pads = array<i64: -1, 2, 0, -1>, value = -1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<1x4xf32>
//       CHECK:   return %[[Y]], %[[Z]]
func.func @pad(%x: tensor<2x3xf32>) -> (tensor<2x5xf32>, tensor<1x4xf32>) {
  %y = train.pad %x {pads = array<i64: 0, 1, 0, 1>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  %z = train.pad %x {pads = array<i64: -1, 2, 0, -1>, value = -1.5 : f32} : (tensor<2x3xf32>) -> tensor<1x4xf32>
  return %y, %z : tensor<2x5xf32>, tensor<1x4xf32>
}

// Training-step ops.
// CHECK-LABEL: func.func @training_ops
//       CHECK:   %[[L:.*]], %[[DL:.*]] = train.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
//       CHECK:   train.softmax_cross_entropy %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f32} : (tensor<4x3xf32>, tensor<4xi64>)
//       CHECK:   train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %{{.*}} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
//       CHECK:   train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %{{.*}} {sum} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
//       CHECK:   train.softmax_cross_entropy %{{.*}}, %{{.*}} {in_graph, per_sample} : (tensor<4x3xf32>, tensor<2x2xi64>) -> (tensor<4xf32>, tensor<4x3xf32>)
//       CHECK:   train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %{{.*}} {in_graph, log_probabilities} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
//       CHECK:   train.elementwise_loss "mse" %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
//       CHECK:   train.elementwise_loss "mse" %{{.*}}, %{{.*}} {sum} : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
//       CHECK:   train.elementwise_loss "smooth_l1" %{{.*}}, %{{.*}} {beta = 5.000000e-01 : f32} : (tensor<4x3xf32>, tensor<4x3xf32>)
//       CHECK:   train.elementwise_loss "bce_with_logits" %{{.*}}, %{{.*}} pos_weight %{{.*}} : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>)
//       CHECK:   train.unary_grad "leaky_relu" %{{.*}}, %{{.*}}, %[[DL]] {alpha = 1.250000e-01 : f32} : tensor<4x3xf32>
//       CHECK:   train.clip_grad
//       CHECK:   train.binary_grad "mul" {{.*}} -> (tensor<4x3xf32>, tensor<3xf32>)
//       CHECK:   train.gemm_grad {{.*}} -> (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32>)
//       CHECK:   train.matmul_grad
//       CHECK:   train.conv_grad_data
//       CHECK:   train.conv_grad_weights {{.*}} -> (tensor<2x1x3x3xf32>, tensor<2xf32>)
//       CHECK:   train.pool_grad "max"
//       CHECK:   train.batch_norm_grad {{.*}} {relu}
//       CHECK:   train.dropout_grad
//       CHECK:   train.softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64, log} : tensor<4x3xf32>
//       CHECK:   train.split {{.*}} -> (tensor<4x1xf32>, tensor<4x2xf32>)
//       CHECK:   %[[G:.*]] = train.gradient @tw, %{{.*}} {backprop_index = 0 : i64} : tensor<3xf32>
//       CHECK:   train.sgd_update @tw, %[[G]] : tensor<3xf32>
//       CHECK:   train.assign_param @ts, %{{.*}} : tensor<3xf32>
train.parameter @tw trainable : tensor<3xf32>
train.parameter @ts : tensor<3xf32>
func.func @training_ops(%x: tensor<4x3xf32>, %labels: tensor<4xi64>, %v: tensor<3xf32>, %s: tensor<f32>,
                        %a: tensor<4x5xf32>, %w: tensor<3x5xf32>, %img: tensor<1x1x4x4xf32>,
                        %k: tensor<2x1x3x3xf32>, %dimg: tensor<1x2x2x2xf32>, %mask: tensor<4x3xi1>,
                        %labels22: tensor<2x2xi64>) {
  %l, %dl = train.softmax_cross_entropy %x, %labels : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  %l2, %dl2 = train.softmax_cross_entropy %x, %labels {ignore_index = 0 : i64, label_smoothing = 0.1 : f32} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  %lw, %dlw = train.softmax_cross_entropy %x, %labels weight %v : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %lws, %dlws = train.softmax_cross_entropy %x, %labels weight %v {sum} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %lps, %dlps = train.softmax_cross_entropy %x, %labels22 {in_graph, per_sample} : (tensor<4x3xf32>, tensor<2x2xi64>) -> (tensor<4xf32>, tensor<4x3xf32>)
  %lnll, %dlnll = train.softmax_cross_entropy %x, %labels weight %v {in_graph, log_probabilities} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %l3, %dl3 = train.elementwise_loss "mse" %x, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %l3s, %dl3s = train.elementwise_loss "mse" %x, %x {sum} : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %l4, %dl4 = train.elementwise_loss "smooth_l1" %x, %x {beta = 0.5 : f32} : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %l5, %dl5 = train.elementwise_loss "bce_with_logits" %x, %x pos_weight %v : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  %u = train.unary_grad "leaky_relu" %x, %x, %dl {alpha = 0.125 : f32} : tensor<4x3xf32>
  %c = train.clip_grad %x, %s, %s, %u : (tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %bl, %br = train.binary_grad "mul" %x, %v, %c : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  %ga, %gb, %gc = train.gemm_grad %a, %w, %x {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<4x5xf32>, tensor<3x5xf32>, tensor<4x3xf32>) -> (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32>)
  %ml, %mr = train.matmul_grad %a, %w, %x {trans_rhs = true} : (tensor<4x5xf32>, tensor<3x5xf32>, tensor<4x3xf32>) -> (tensor<4x5xf32>, tensor<3x5xf32>)
  %dx = train.conv_grad_data %dimg, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %dw, %db = train.conv_grad_weights %img, %dimg {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> (tensor<2x1x3x3xf32>, tensor<2xf32>)
  %dp = train.pool_grad "max" %img, %img {count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %bx, %bs, %bb = train.batch_norm_grad %x, %v, %v, %v, %x, %v {relu}
      : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %dd = train.dropout_grad %x, %mask {ratio = 0.5 : f32} : (tensor<4x3xf32>, tensor<4x3xi1>) -> tensor<4x3xf32>
  %ds = train.softmax_grad %x, %x {axis = 1 : i64, log} : tensor<4x3xf32>
  %p0, %p1 = train.split %x {axis = 1 : i64} : (tensor<4x3xf32>) -> (tensor<4x1xf32>, tensor<4x2xf32>)
  %g = train.gradient @tw, %v {backprop_index = 0 : i64} : tensor<3xf32>
  train.sgd_update @tw, %g : tensor<3xf32>
  train.assign_param @ts, %v : tensor<3xf32>
  return
}

// The LSTM and its gradient, whose result gradients are each optional.
// CHECK-LABEL: func.func @lstm
//       CHECK:   %[[Y:.*]], %[[YH:.*]], %[[YC:.*]], %[[S:.*]] = train.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>) -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
//       CHECK:   train.lstm_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[S]] y_h_grad %[[YH]] :
//       CHECK:   train.lstm_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[S]] y_grad %[[Y]] y_h_grad %[[YH]] y_c_grad %[[YC]] :
func.func @lstm(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %b: tensor<1x16xf32>) {
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  %dx, %dw, %dr, %db, %dh0, %dc0 = train.lstm_grad %x, %w, %r, %y, %s y_h_grad %yh
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x10xf32>, tensor<1x2x2xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
  %ex, %ew, %er, %eb, %eh0, %ec0 = train.lstm_grad %x, %w, %r, %y, %s y_grad %y y_h_grad %yh y_c_grad %yc
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x10xf32>, tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
  return
}

// Given initial states (absent ones are the zero state) and their gradients.
// CHECK-LABEL: func.func @lstm_initial_states
//       CHECK:   %[[Y:.*]], %{{.*}}, %{{.*}}, %[[S:.*]] = train.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} initial_h %[[H0:[a-z0-9_]+]] initial_c %[[C0:[a-z0-9_]+]] :
//       CHECK:   train.lstm_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[S]] initial_h %[[H0]] initial_c %[[C0]] y_grad %[[Y]] :
//       CHECK:   train.gru %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} initial_h %[[H0]] :
func.func @lstm_initial_states(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %b: tensor<1x16xf32>,
                               %h0: tensor<1x2x2xf32>, %c0: tensor<1x2x2xf32>, %gw: tensor<1x6x4xf32>,
                               %gr: tensor<1x6x2xf32>, %gb: tensor<1x12xf32>) {
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b initial_h %h0 initial_c %c0
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  %dx, %dw, %dr, %db, %dh0, %dc0 = train.lstm_grad %x, %w, %r, %y, %s initial_h %h0 initial_c %c0 y_grad %y
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x10xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x1x2x2xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
  %gy, %gyh, %gs = train.gru %x, %gw, %gr, %gb initial_h %h0
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>, tensor<1x2x2xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  return
}

// An embedding: rows of a table at integer indices, and its gradient.
// CHECK-LABEL: func.func @gather
//       CHECK:   %[[Y:.*]] = train.gather %{{.*}}, %{{.*}} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
//       CHECK:   train.gather_grad %{{.*}}, %[[Y]] : (tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<10x4xf32>
func.func @gather(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<10x4xf32> {
  %y = train.gather %t, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %d = train.gather_grad %i, %y : (tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<10x4xf32>
  return %d : tensor<10x4xf32>
}

// LayerNorm and GELU pieces: sqrt, erf, pow with a constant exponent, and
// reductions (keepdims or not) with their gradients.
// CHECK-LABEL: func.func @layer_norm_pieces
//       CHECK:   %[[S:.*]] = train.sqrt %{{.*}} : tensor<4x6xf32>
//       CHECK:   %[[E:.*]] = train.erf %[[S]] : tensor<4x6xf32>
//       CHECK:   %[[P:.*]] = train.pow %[[E]] {exponent = 5.000000e-01 : f32} : tensor<4x6xf32>
//       CHECK:   train.unary_grad "pow" %[[E]], %[[P]], %[[P]] {alpha = 5.000000e-01 : f32} : tensor<4x6xf32>
//       CHECK:   %[[M:.*]] = train.reduce "mean" %[[P]] {axes = array<i64: 1>, keepdims = true} : tensor<4x6xf32> -> tensor<4x1xf32>
//       CHECK:   %[[T:.*]] = train.reduce "sum" %[[P]] {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x6xf32> -> tensor<f32>
//       CHECK:   train.reduce_grad "mean" %[[M]] {axes = array<i64: 1>} : tensor<4x1xf32> -> tensor<4x6xf32>
//       CHECK:   train.reduce_grad "sum" %[[T]] {axes = array<i64: 0, 1>} : tensor<f32> -> tensor<4x6xf32>
func.func @layer_norm_pieces(%x: tensor<4x6xf32>) {
  %s = train.sqrt %x : tensor<4x6xf32>
  %e = train.erf %s : tensor<4x6xf32>
  %p = train.pow %e {exponent = 0.5 : f32} : tensor<4x6xf32>
  %dp = train.unary_grad "pow" %e, %p, %p {alpha = 0.5 : f32} : tensor<4x6xf32>
  %m = train.reduce "mean" %p {axes = array<i64: 1>, keepdims = true} : tensor<4x6xf32> -> tensor<4x1xf32>
  %t = train.reduce "sum" %p {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x6xf32> -> tensor<f32>
  %dm = train.reduce_grad "mean" %m {axes = array<i64: 1>} : tensor<4x1xf32> -> tensor<4x6xf32>
  %dt = train.reduce_grad "sum" %t {axes = array<i64: 0, 1>} : tensor<f32> -> tensor<4x6xf32>
  return
}

// exp (Swin V2's logit scale) and its gradient, which reads the result.
// CHECK-LABEL: func.func @exp
//       CHECK:   %[[E:.*]] = train.exp %{{.*}} : tensor<4x6xf32>
//       CHECK:   train.unary_grad "exp" %{{.*}}, %[[E]], %[[E]] : tensor<4x6xf32>
func.func @exp(%x: tensor<4x6xf32>) {
  %e = train.exp %x : tensor<4x6xf32>
  %de = train.unary_grad "exp" %x, %e, %e {alpha = 0.0 : f32} : tensor<4x6xf32>
  return
}

// cos and sin (rotary position embeddings' angles) and their gradients, which read the input.
// CHECK-LABEL: func.func @cos_sin
//       CHECK:   %[[C:.*]] = train.cos %[[X:.*]] : tensor<4x6xf32>
//       CHECK:   %[[S:.*]] = train.sin %[[X]] : tensor<4x6xf32>
//       CHECK:   train.unary_grad "cos" %[[X]], %[[C]], %[[S]] : tensor<4x6xf32>
//       CHECK:   train.unary_grad "sin" %[[X]], %[[S]], %[[C]] : tensor<4x6xf32>
func.func @cos_sin(%x: tensor<4x6xf32>) {
  %c = train.cos %x : tensor<4x6xf32>
  %s = train.sin %x : tensor<4x6xf32>
  %dc = train.unary_grad "cos" %x, %c, %s : tensor<4x6xf32>
  %ds = train.unary_grad "sin" %x, %s, %c : tensor<4x6xf32>
  return
}

// The GRU and its gradient, whose result gradients are each optional.
// CHECK-LABEL: func.func @gru
//       CHECK:   %[[Y:.*]], %[[YH:.*]], %[[S:.*]] = train.gru %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {linear_before_reset} : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
//       CHECK:   train.gru_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[S]] y_h_grad %[[YH]] {linear_before_reset} :
//       CHECK:   train.gru_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[S]] y_grad %[[Y]] y_h_grad %[[YH]] :
func.func @gru(%x: tensor<3x2x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %b: tensor<1x12xf32>) {
  %y, %yh, %s = train.gru %x, %w, %r, %b {linear_before_reset}
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  %dx, %dw, %dr, %db, %dh0 = train.gru_grad %x, %w, %r, %y, %s y_h_grad %yh {linear_before_reset}
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x8xf32>, tensor<1x2x2xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>, tensor<1x2x2xf32>)
  %ex, %ew, %er, %eb, %eh0 = train.gru_grad %x, %w, %r, %y, %s y_grad %y y_h_grad %yh
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x8xf32>, tensor<3x1x2x2xf32>, tensor<1x2x2xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>, tensor<1x2x2xf32>)
  return
}

// MobileNetV3's activations; their gradient reads x, with hard_sigmoid's
// alpha and beta (hard_swish's are ONNX's 1/6 and 1/2).
// CHECK-LABEL: func.func @hard_activations
//       CHECK:   %[[S:.*]] = train.hard_sigmoid %{{.*}} {alpha = 2.500000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
//       CHECK:   %[[W:.*]] = train.hard_swish %[[S]] : tensor<2x3xf32>
//       CHECK:   train.unary_grad "hard_sigmoid" %{{.*}}, %[[S]], %[[W]] {alpha = 2.500000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
//       CHECK:   train.unary_grad "hard_swish" %[[S]], %[[W]], %[[W]] {alpha = 1.250000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
func.func @hard_activations(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %s = train.hard_sigmoid %x {alpha = 0.25 : f32, beta = 0.5 : f32} : tensor<2x3xf32>
  %w = train.hard_swish %s : tensor<2x3xf32>
  %ds = train.unary_grad "hard_sigmoid" %x, %s, %w {alpha = 0.25 : f32, beta = 0.5 : f32} : tensor<2x3xf32>
  %dw = train.unary_grad "hard_swish" %s, %w, %w {alpha = 0.125 : f32, beta = 0.5 : f32} : tensor<2x3xf32>
  return %ds, %dw : tensor<2x3xf32>, tensor<2x3xf32>
}

// GELU, exact and tanh form, and its gradient (the default "none" not printed).
// CHECK-LABEL: func.func @gelu
//       CHECK:   %[[Y:.*]] = train.gelu %[[X:.*]] : tensor<2x8xf32>
//       CHECK:   %[[T:.*]] = train.gelu %[[X]] {approximate = "tanh"} : tensor<2x8xf32>
//       CHECK:   train.gelu_grad %[[X]], %[[Y]] : tensor<2x8xf32>
//       CHECK:   train.gelu_grad %[[X]], %[[T]] {approximate = "tanh"} : tensor<2x8xf32>
func.func @gelu(%x: tensor<2x8xf32>) {
  %y = train.gelu %x {approximate = "none"} : tensor<2x8xf32>
  %t = train.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
  %dy = train.gelu_grad %x, %y : tensor<2x8xf32>
  %dt = train.gelu_grad %x, %t {approximate = "tanh"} : tensor<2x8xf32>
  return
}

// A layer norm over the last dimension and its gradient.
// CHECK-LABEL: func.func @layer_norm
//       CHECK:   %[[Y:.*]], %[[M:.*]], %[[I:.*]] = train.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 2.500000e-01 : f32} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
//       CHECK:   train.layer_norm_grad %{{.*}}, %{{.*}}, %[[M]], %[[I]], %[[Y]] {axis = 2 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>, tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
func.func @layer_norm(%x: tensor<2x5x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) {
  %y, %m, %i = train.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 0.25 : f32}
      : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<2x5x8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  %dx, %ds, %db = train.layer_norm_grad %x, %s, %m, %i, %y {axis = 2 : i64}
      : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>, tensor<2x5x8xf32>)
      -> (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// Cumulative sums, inclusive and exclusive, forward and reverse, and floats
// to computed indices.
// CHECK-LABEL: func.func @cumsum_to_index
//       CHECK:   %[[C:.*]] = train.cumsum %[[X:.*]] {axis = 1 : i64} : tensor<2x8xf32>
//       CHECK:   train.cumsum %[[X]] {axis = 0 : i64, exclusive, reverse} : tensor<2x8xf32>
//       CHECK:   train.to_index %[[C]] : tensor<2x8xf32> -> tensor<2x8xi64>
func.func @cumsum_to_index(%x: tensor<2x8xf32>) {
  %c = train.cumsum %x {axis = 1 : i64} : tensor<2x8xf32>
  %r = train.cumsum %x {axis = 0 : i64, exclusive, reverse} : tensor<2x8xf32>
  %i = train.to_index %c : tensor<2x8xf32> -> tensor<2x8xi64>
  return
}

// Integers fed as data as floats, within a checked range.
// CHECK-LABEL: func.func @from_index
//       CHECK:   train.from_index %{{.*}} {hi = 9 : i64, lo = 0 : i64} : tensor<8x1xi64> -> tensor<8x1xf32>
func.func @from_index(%t: tensor<8x1xi64>) {
  %f = train.from_index %t {lo = 0 : i64, hi = 9 : i64} : tensor<8x1xi64> -> tensor<8x1xf32>
  return
}

// The positions of each row's top k (ONNX TopK's indices), greatest and least.
// CHECK-LABEL: func.func @topk_positions
//       CHECK:   train.topk_positions %{{.*}} {k = 2 : i64, largest = true} : tensor<4x3x8xf32> -> tensor<4x3x2xf32>
//       CHECK:   train.topk_positions %{{.*}} {k = 8 : i64, largest = false} : tensor<4x3x8xf32> -> tensor<4x3x8xf32>
func.func @topk_positions(%x: tensor<4x3x8xf32>) {
  %p = train.topk_positions %x {k = 2, largest = true} : tensor<4x3x8xf32> -> tensor<4x3x2xf32>
  %q = train.topk_positions %x {k = 8, largest = false} : tensor<4x3x8xf32> -> tensor<4x3x8xf32>
  return
}
