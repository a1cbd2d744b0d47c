// RUN: mgs-opt %s -split-input-file -verify-diagnostics

// One case per verifier diagnostic of the train ops, then a few ODS
// constraint failures. The valid forms of these ops are in ops.mlir.

//===----------------------------------------------------------------------===//
// train.parameter / train.get_param
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'train.parameter' op initial value type 'tensor<16xi32>' does not match the parameter type 'tensor<16xf32>'}}
train.parameter @initial_value_element_type_mismatch : tensor<16xf32> = dense<0> : tensor<16xi32>

// -----

// expected-error @+1 {{'train.parameter' op initial value type 'tensor<8xf32>' does not match the parameter type 'tensor<16xf32>'}}
train.parameter @initial_value_shape_mismatch : tensor<16xf32> = dense<0.0> : tensor<8xf32>

// -----

func.func @parameter_inside_func() {
  // expected-error @+1 {{'train.parameter' op expects parent op 'builtin.module'}}
  train.parameter @w : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'train.parameter' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of 32-bit float values}}
train.parameter @parameter_type_f16 : tensor<4xf16>

// -----

// Parameters are symbols of the module: their names are unique.
// expected-note @+1 {{see existing symbol definition here}}
train.parameter @w : tensor<4xf32>
// expected-error @+1 {{redefinition of symbol named 'w'}}
train.parameter @w : tensor<8xf32>

// -----

func.func @get_param_unknown_symbol() -> tensor<4xf32> {
  // expected-error @+1 {{'train.get_param' op 'missing' does not name a train.parameter}}
  %w = train.get_param @missing : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @get_param_names_a_func() -> tensor<4xf32> {
  // expected-error @+1 {{'train.get_param' op 'get_param_names_a_func' does not name a train.parameter}}
  %w = train.get_param @get_param_names_a_func : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

train.parameter @w : tensor<4x8xf32>

func.func @get_param_type_mismatch() -> tensor<8x4xf32> {
  // expected-error @+1 {{'train.get_param' op result type 'tensor<8x4xf32>' does not match the type of parameter 'w' ('tensor<4x8xf32>')}}
  %w = train.get_param @w : tensor<8x4xf32>
  return %w : tensor<8x4xf32>
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @add_operands_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'train.add' op operand shapes 4x3 and 4 are not broadcast-compatible}}
  %r = train.add %a, %b : tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @keep_where_result_shape(%a: tensor<2x3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'train.keep_where' op result shape 3 does not match the expected 2x3}}
  %r = train.keep_where %a, %c : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @div_operands_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'train.div' op operand shapes 2x3 and 3x2 are not broadcast-compatible}}
  %r = train.div %a, %b : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @add_result_not_broadcast_shape(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'train.add' op result shape 4x1 does not match the expected 4x3}}
  %r = train.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}

// -----

func.func @sub_result_not_broadcast_shape(%a: tensor<3xf32>, %b: tensor<4x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'train.sub' op result shape 3 does not match the expected 4x3}}
  %r = train.sub %a, %b : tensor<3xf32>, tensor<4x3xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @mul_result_not_broadcast_shape(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'train.mul' op result shape 3x2 does not match the expected 2x3}}
  %r = train.mul %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Two scalars give a scalar, not a one-element vector.
func.func @div_result_not_broadcast_shape(%a: tensor<f32>, %b: tensor<f32>) -> tensor<1xf32> {
  // expected-error @+1 {{'train.div' op result shape 1 does not match the expected scalar}}
  %r = train.div %a, %b : tensor<f32>, tensor<f32> -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

func.func @clip_min_not_one_element(%x: tensor<4xf32>, %lo: tensor<2xf32>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.clip' op min must have exactly one element, got shape 2}}
  %y = train.clip %x, %lo, %hi : tensor<4xf32>, tensor<2xf32>, tensor<f32>
  return %y : tensor<4xf32>
}

// -----

func.func @clip_max_not_one_element(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<1x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.clip' op max must have exactly one element, got shape 1x4}}
  %y = train.clip %x, %lo, %hi : tensor<4xf32>, tensor<f32>, tensor<1x4xf32>
  return %y : tensor<4xf32>
}

// -----

// A bound with a zero extent has no element at all.
func.func @clip_min_empty(%x: tensor<4xf32>, %lo: tensor<0xf32>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.clip' op min must have exactly one element, got shape 0}}
  %y = train.clip %x, %lo, %hi : tensor<4xf32>, tensor<0xf32>, tensor<f32>
  return %y : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// -----

func.func @gemm_a_not_2d(%a: tensor<2x8x4xf32>, %b: tensor<4x5xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'train.gemm' op A and B must be 2-D, got 2x8x4 and 4x5}}
  %y = train.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false}
      : (tensor<2x8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  return %y : tensor<8x5xf32>
}

// -----

func.func @gemm_b_not_2d(%a: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'train.gemm' op A and B must be 2-D, got 8x4 and 4}}
  %y = train.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false}
      : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// trans_b is missing: B is 10x64, so op(B) has 10 rows, not 64.
func.func @gemm_inner_dimensions_differ(%x: tensor<8x64xf32>, %w: tensor<10x64xf32>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'train.gemm' op inner dimensions differ: op(A) is 8x64, op(B) is 10x64}}
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false}
      : (tensor<8x64xf32>, tensor<10x64xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

// C broadcasts unidirectionally only: an 8-vector does not fit the 10 columns.
func.func @gemm_c_not_broadcastable(%x: tensor<8x64xf32>, %w: tensor<10x64xf32>, %c: tensor<8xf32>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'train.gemm' op C of shape 8 does not broadcast to 8x10}}
  %y = train.gemm %x, %w, %c {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<8xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

func.func @gemm_c_higher_rank(%x: tensor<8x64xf32>, %w: tensor<10x64xf32>, %c: tensor<1x8x10xf32>) -> tensor<8x10xf32> {
  // expected-error @+1 {{'train.gemm' op C of shape 1x8x10 does not broadcast to 8x10}}
  %y = train.gemm %x, %w, %c {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<1x8x10xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

func.func @gemm_result_shape(%a: tensor<64x8xf32>, %b: tensor<64x10xf32>) -> tensor<64x10xf32> {
  // expected-error @+1 {{'train.gemm' op result shape 64x10 does not match the expected 8x10}}
  %y = train.gemm %a, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = true, trans_b = false}
      : (tensor<64x8xf32>, tensor<64x10xf32>) -> tensor<64x10xf32>
  return %y : tensor<64x10xf32>
}

// -----

func.func @matmul_inner_dimensions_differ(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{'train.matmul' op operand shapes 3x4 and 5x4 do not match for matmul}}
  %y = train.matmul %a, %b : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

func.func @matmul_batch_not_broadcastable(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{'train.matmul' op operand shapes 2x3x4 and 3x4x5 do not match for matmul}}
  %y = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

func.func @matmul_scalar_operand(%a: tensor<f32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'train.matmul' op operand shapes scalar and 4x5 do not match for matmul}}
  %y = train.matmul %a, %b : (tensor<f32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

// The dimension added to promote the 1-D operand is removed again.
func.func @matmul_1d_result_keeps_promoted_dim(%v: tensor<4xf32>, %m: tensor<4x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{'train.matmul' op result shape 1x5 does not match the expected 5}}
  %y = train.matmul %v, %m : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

func.func @matmul_trans_1d(%v: tensor<4xf32>, %m: tensor<4x5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'train.matmul' op trans_lhs needs an operand of rank >= 2, got rank 1}}
  %y = train.matmul %v, %m {trans_lhs = true} : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  return %y : tensor<5xf32>
}

// -----

func.func @matmul_trans_inner_differ(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'train.matmul' op operand shapes 3x4 and 4x5 (transposed) do not match for matmul}}
  %y = train.matmul %a, %b {trans_rhs = true} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// -----

func.func @conv_weight_rank_differs(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op weight rank 3 differs from input rank 4}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_group_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op group must be positive, got 0}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_input_channels_mismatch(%x: tensor<1x4x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op input has 4 channels but weight expects 3 per group x 1 groups}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x4x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

// 8 channels split into 3 groups.
func.func @conv_channels_not_divisible_by_group(%x: tensor<1x8x6x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32> {
  // expected-error @+1 {{'train.conv' op input has 8 channels but weight expects 2 per group x 3 groups}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x8x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// -----

func.func @conv_output_channels_not_divisible_by_group(%x: tensor<1x8x6x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32> {
  // expected-error @+1 {{'train.conv' op output channels (6) are not divisible by group (4)}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x8x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// -----

func.func @conv_bias_wrong_size(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op bias must have shape 16, got 8}}
  %y = train.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<8xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_bias_not_1d(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<1x16xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op bias must have shape 16, got 1x16}}
  %y = train.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<1x16xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

// N x C without spatial axes passes the channel checks, then fails the window check.
func.func @conv_input_without_spatial_axes(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'train.conv' op input must have rank >= 3 (N x C x spatial...), got rank 2}}
  %y = train.conv %x, %w {dilations = array<i64>, group = 1 : i64, pads = array<i64>, strides = array<i64>}
      : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @conv_strides_wrong_size(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op 'strides' has 1 entries, expected 2}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

// Begin pads only; the end pads are missing.
func.func @conv_pads_wrong_size(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+1 {{'train.conv' op 'pads' has 2 entries, expected 4}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// -----

func.func @conv_dilations_wrong_size(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op 'dilations' has 3 entries, expected 2}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op kernel_shape, strides and dilations must be positive (axis 1)}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 0>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_dilation_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // expected-error @+1 {{'train.conv' op kernel_shape, strides and dilations must be positive (axis 0)}}
  %y = train.conv %x, %w {dilations = array<i64: -1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

// The kernel extents of a conv are the weight's spatial dimensions.
func.func @conv_weight_empty_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x0x3xf32>) -> tensor<1x16x9x6xf32> {
  // expected-error @+1 {{'train.conv' op kernel_shape, strides and dilations must be positive (axis 0)}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x0x3xf32>) -> tensor<1x16x9x6xf32>
  return %y : tensor<1x16x9x6xf32>
}

// -----

// Negative pads are an end pad of -1 on axis 1 (pads are all begins, then all ends).
func.func @conv_pad_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x5xf32> {
  // expected-error @+1 {{'train.conv' op pads must be non-negative (axis 1)}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, -1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x5xf32>
  return %y : tensor<1x16x6x5xf32>
}

// -----

// A dilated 3-tap kernel spans 5 inputs; axis 1 has only 4.
func.func @conv_window_does_not_fit(%x: tensor<1x3x8x4xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x4x1xf32> {
  // expected-error @+1 {{'train.conv' op window of extent 5 does not fit spatial axis 1 of size 4 with its padding}}
  %y = train.conv %x, %w {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x4x1xf32>
  return %y : tensor<1x16x4x1xf32>
}

// -----

// The output keeps the input's spatial size only with pads of 1.
func.func @conv_result_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+1 {{'train.conv' op result shape 1x16x8x8 does not match the expected 1x16x6x6}}
  %y = train.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

func.func @max_pool_input_rank_2(%x: tensor<16x8xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'train.max_pool' op input must have rank >= 3 (N x C x spatial...), got rank 2}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64>, kernel_shape = array<i64>,
                          pads = array<i64>, storage_order = 0 : i64, strides = array<i64>}
      : (tensor<16x8xf32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

// -----

func.func @max_pool_kernel_shape_wrong_size(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op 'kernel_shape' has 1 entries, expected 2}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_strides_wrong_size(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op 'strides' has 0 entries, expected 2}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_pads_wrong_size(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op 'pads' has 3 entries, expected 4}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_dilations_wrong_size(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op 'dilations' has 1 entries, expected 2}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_kernel_zero(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op kernel_shape, strides and dilations must be positive (axis 1)}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 0>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_pad_negative(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op pads must be non-negative (axis 0)}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: -1, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_window_does_not_fit(%x: tensor<1x16x2x8xf32>) -> tensor<1x16x1x4xf32> {
  // expected-error @+1 {{'train.max_pool' op window of extent 3 does not fit spatial axis 0 of size 2 with its padding}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x2x8xf32>) -> tensor<1x16x1x4xf32>
  return %y : tensor<1x16x1x4xf32>
}

// -----

func.func @max_pool_storage_order_2(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op storage_order must be 0 or 1, got 2}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 2 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @max_pool_indices_shape(%x: tensor<1x16x8x8xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x8x8xi64>) {
  // expected-error @+1 {{'train.max_pool' op indices shape 1x16x8x8 does not match the expected 1x16x4x4}}
  %y, %i = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x8x8xi64>)
  return %y, %i : tensor<1x16x4x4xf32>, tensor<1x16x8x8xi64>
}

// -----

func.func @max_pool_indices_not_i64(%x: tensor<1x16x8x8xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x4x4xi32>) {
  // expected-error @+1 {{'train.max_pool' op result #1 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<1x16x4x4xi32>'}}
  %y, %i = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x4x4xi32>)
  return %y, %i : tensor<1x16x4x4xf32>, tensor<1x16x4x4xi32>
}

// -----

// Without ceil_mode 7 / 2 rounds down to 3 windows.
func.func @max_pool_result_shape(%x: tensor<1x16x7x7xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.max_pool' op result shape 1x16x4x4 does not match the expected 1x16x3x3}}
  %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                          pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x16x7x7xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @average_pool_input_rank_2(%x: tensor<16x8xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'train.average_pool' op input must have rank >= 3 (N x C x spatial...), got rank 2}}
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64>,
                              pads = array<i64>, strides = array<i64>}
      : (tensor<16x8xf32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

// -----

func.func @average_pool_kernel_shape_wrong_size(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.average_pool' op 'kernel_shape' has 3 entries, expected 2}}
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @average_pool_stride_zero(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.average_pool' op kernel_shape, strides and dilations must be positive (axis 0)}}
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 0, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @average_pool_window_does_not_fit(%x: tensor<1x16x8x1xf32>) -> tensor<1x16x4x1xf32> {
  // expected-error @+1 {{'train.average_pool' op window of extent 2 does not fit spatial axis 1 of size 1 with its padding}}
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x16x8x1xf32>) -> tensor<1x16x4x1xf32>
  return %y : tensor<1x16x4x1xf32>
}

// -----

func.func @average_pool_dilations_wrong_size(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.average_pool' op 'dilations' has 1 entries, expected 2}}
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 2>,
                              kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>,
                              strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

func.func @average_pool_dilation_zero(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'train.average_pool' op kernel_shape, strides and dilations must be positive (axis 1)}}
  %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 0>,
                              kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>,
                              strides = array<i64: 2, 2>}
      : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

// ceil_mode rounds 7 / 2 up to 4 windows.
func.func @average_pool_result_shape(%x: tensor<1x16x7x7xf32>) -> tensor<1x16x3x3xf32> {
  // expected-error @+1 {{'train.average_pool' op result shape 1x16x3x3 does not match the expected 1x16x4x4}}
  %y = train.average_pool %x {ceil_mode = true, count_include_pad = false, kernel_shape = array<i64: 2, 2>,
                              pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x16x7x7xf32>) -> tensor<1x16x3x3xf32>
  return %y : tensor<1x16x3x3xf32>
}

// -----

func.func @global_average_pool_input_rank_2(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'train.global_average_pool' op input must have rank >= 3 (N x C x spatial...), got rank 2}}
  %y = train.global_average_pool %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// The spatial dimensions are kept, as ones.
func.func @global_average_pool_result_drops_spatial(%x: tensor<2x64x8x8xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'train.global_average_pool' op result shape 2x64 does not match the expected 2x64x1x1}}
  %y = train.global_average_pool %x : (tensor<2x64x8x8xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

//===----------------------------------------------------------------------===//
// Normalization and regularization
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_input_rank_1(%x: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'train.batch_norm' op input must have rank >= 2 (N x C x ...), got rank 1}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %c, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<16xf32>
}

// -----

func.func @batch_norm_scale_shape(%x: tensor<2x16x4x4xf32>, %s: tensor<8xf32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op scale shape 8 does not match the expected 16}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %s, %c, %c, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

func.func @batch_norm_bias_shape(%x: tensor<2x16x4x4xf32>, %b: tensor<1x16xf32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op bias shape 1x16 does not match the expected 16}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %b, %c, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

// The channel axis is 1, not the last one.
func.func @batch_norm_mean_shape(%x: tensor<2x16x4x4xf32>, %m: tensor<4xf32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op mean shape 4 does not match the expected 16}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %m, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

func.func @batch_norm_var_shape(%x: tensor<2x16x4x4xf32>, %v: tensor<f32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op var shape scalar does not match the expected 16}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %c, %v {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<f32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

func.func @batch_norm_epsilon_negative(%x: tensor<2x16x4x4xf32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op epsilon must be non-negative}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %c, %c {epsilon = -0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

func.func @batch_norm_running_mean_shape(%x: tensor<2x16x4x4xf32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op running_mean shape 2x16 does not match the expected 16}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %c, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32, training}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<2x16xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

func.func @batch_norm_running_var_shape(%x: tensor<2x16x4x4xf32>, %c: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  // expected-error @+1 {{'train.batch_norm' op running_var shape 4 does not match the expected 16}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %c, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32, training}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x4x4xf32>
}

// -----

func.func @batch_norm_result_shape(%x: tensor<2x16x4x4xf32>, %c: tensor<16xf32>) -> tensor<2x16x16xf32> {
  // expected-error @+1 {{'train.batch_norm' op result shape 2x16x16 does not match the expected 2x16x4x4}}
  %y, %rm, %rv, %saved_mean, %saved_inv_std = train.batch_norm %x, %c, %c, %c, %c {epsilon = 0.0078125 : f32, momentum = 0.875 : f32}
      : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<2x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y : tensor<2x16x16xf32>
}

// -----

func.func @random_normal_infinite_scale() -> tensor<4xf32> {
  // expected-error @+1 {{'train.random_normal' op mean 0.000000e+00 and scale INF must be finite}}
  %e = train.random_normal {mean = 0.0 : f32, scale = 0x7F800000 : f32} : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @random_normal_integers() -> tensor<4xi64> {
  // expected-error @+1 {{'train.random_normal' op result #0 must be statically shaped tensor of 32-bit float values}}
  %e = train.random_normal {mean = 0.0 : f32, scale = 1.0 : f32} : tensor<4xi64>
  return %e : tensor<4xi64>
}

// -----

func.func @random_uniform_empty_range() -> tensor<4xf32> {
  // expected-error @+1 {{'train.random_uniform' op low 1.000000e+00 must be below high 1.000000e+00, both finite}}
  %u = train.random_uniform {high = 1.0 : f32, low = 1.0 : f32} : tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

// A ratio of 1 would drop everything and divide by zero.
func.func @dropout_ratio_one(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'train.dropout' op ratio must be in [0, 1), got 1.000000e+00}}
  %y, %mask = train.dropout %x {ratio = 1.0 : f32, training} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
  return %y : tensor<2x64xf32>
}

// -----

func.func @dropout_ratio_negative(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'train.dropout' op ratio must be in [0, 1), got -5.000000e-01}}
  %y, %mask = train.dropout %x {ratio = -0.5 : f32} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
  return %y : tensor<2x64xf32>
}

// -----

func.func @dropout_mask_shape(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'train.dropout' op mask shape 64 must be the data's shape 2x64 or its leading dimensions followed by ones}}
  %y, %mask = train.dropout %x {ratio = 0.5 : f32, training} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<64xi1>)
  return %y : tensor<2x64xf32>
}

// -----

// A broadcast mask keeps whole blocks: a trailing dimension kept with a
// leading one broadcast is not such a block.
func.func @dropout_mask_not_leading(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'train.dropout' op mask shape 1x3x1 must be the data's shape 2x3x4 or its leading dimensions followed by ones}}
  %y, %mask = train.dropout %x {ratio = 0.5 : f32, training} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<1x3x1xi1>)
  return %y : tensor<2x3x4xf32>
}

// -----

func.func @dropout_grad_mask_shape(%dy: tensor<2x3x4xf32>, %mask: tensor<2x3x2xi1>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'train.dropout_grad' op mask shape 2x3x2 must be the data's shape 2x3x4 or its leading dimensions followed by ones}}
  %dx = train.dropout_grad %dy, %mask {ratio = 0.5 : f32} : (tensor<2x3x4xf32>, tensor<2x3x2xi1>) -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}

// -----

func.func @dropout_result_shape(%x: tensor<2x64xf32>) -> tensor<64x2xf32> {
  // expected-error @+1 {{'train.dropout' op result shape 64x2 does not match the expected 2x64}}
  %y, %mask = train.dropout %x {ratio = 0.5 : f32, training} : (tensor<2x64xf32>) -> (tensor<64x2xf32>, tensor<2x64xi1>)
  return %y : tensor<64x2xf32>
}

// -----

func.func @dropout_mask_not_i1(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'train.dropout' op result #1 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<2x64xf32>'}}
  %y, %mask = train.dropout %x {ratio = 0.5 : f32, training} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xf32>)
  return %y : tensor<2x64xf32>
}

// -----

func.func @softmax_axis_too_large(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-error @+1 {{'train.softmax' op axis 2 is out of range for rank 2}}
  %y = train.softmax %x {axis = 2 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

func.func @softmax_axis_too_negative(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-error @+1 {{'train.softmax' op axis -3 is out of range for rank 2}}
  %y = train.softmax %x {axis = -3 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

func.func @log_softmax_axis_too_large(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-error @+1 {{'train.log_softmax' op axis 2 is out of range for rank 2}}
  %y = train.log_softmax %x {axis = 2 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// A scalar has no axis at all.
func.func @log_softmax_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'train.log_softmax' op axis 0 is out of range for rank 0}}
  %y = train.log_softmax %x {axis = 0 : i64} : tensor<f32>
  return %y : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

// -----

// Flatten accepts axis == rank, but not beyond.
func.func @flatten_axis_too_large(%x: tensor<2x16x2x2xf32>) -> tensor<128x1xf32> {
  // expected-error @+1 {{'train.flatten' op axis 5 is out of range for rank 4}}
  %y = train.flatten %x {axis = 5 : i64} : (tensor<2x16x2x2xf32>) -> tensor<128x1xf32>
  return %y : tensor<128x1xf32>
}

// -----

func.func @flatten_axis_too_negative(%x: tensor<2x16x2x2xf32>) -> tensor<1x128xf32> {
  // expected-error @+1 {{'train.flatten' op axis -5 is out of range for rank 4}}
  %y = train.flatten %x {axis = -5 : i64} : (tensor<2x16x2x2xf32>) -> tensor<1x128xf32>
  return %y : tensor<1x128xf32>
}

// -----

func.func @flatten_result_shape(%x: tensor<2x16x2x2xf32>) -> tensor<32x4xf32> {
  // expected-error @+1 {{'train.flatten' op result shape 32x4 does not match the expected 2x64}}
  %y = train.flatten %x {axis = 1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<32x4xf32>
  return %y : tensor<32x4xf32>
}

// -----

func.func @reshape_element_count(%x: tensor<2x3x4xf32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{'train.reshape' op cannot reshape 24 elements into 25}}
  %y = train.reshape %x : (tensor<2x3x4xf32>) -> tensor<5x5xf32>
  return %y : tensor<5x5xf32>
}

// -----

func.func @transpose_perm_wrong_size(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{'train.transpose' op perm has 2 entries for rank 3}}
  %y = train.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %y : tensor<3x2x4xf32>
}

// -----

func.func @transpose_perm_repeats_axis(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+1 {{'train.transpose' op perm is not a permutation of 0..2}}
  %y = train.transpose %x {perm = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<3x3x4xf32>
  return %y : tensor<3x3x4xf32>
}

// -----

// Unlike an axis, a perm entry may not count from the back.
func.func @transpose_perm_negative(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'train.transpose' op perm is not a permutation of 0..1}}
  %y = train.transpose %x {perm = array<i64: -1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @transpose_perm_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'train.transpose' op perm is not a permutation of 0..1}}
  %y = train.transpose %x {perm = array<i64: 2, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @transpose_result_shape(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // expected-error @+1 {{'train.transpose' op result shape 4x3x2 does not match the expected 4x2x3}}
  %y = train.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %y : tensor<4x3x2xf32>
}

// -----

func.func @concat_no_inputs() -> tensor<2x3xf32> {
  // expected-error @+1 {{'train.concat' op needs at least one input}}
  %y = train.concat {axis = 0 : i64} : () -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @concat_axis_out_of_range(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'train.concat' op axis 2 is out of range for rank 2}}
  %y = train.concat %a, %b {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @concat_input_differs_outside_axis(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<4x1xf32>) -> tensor<2x9xf32> {
  // expected-error @+1 {{'train.concat' op input 2 of shape 4x1 does not match input 0 (2x3) outside axis 1}}
  %y = train.concat %a, %b, %c {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<4x1xf32>) -> tensor<2x9xf32>
  return %y : tensor<2x9xf32>
}

// -----

func.func @concat_input_rank_differs(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'train.concat' op input 1 of shape 2x3x1 does not match input 0 (2x3) outside axis 0}}
  %y = train.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @concat_result_shape(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.concat' op result shape 4x8 does not match the expected 2x8}}
  %y = train.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @pad_pads_wrong_size(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'train.pad' op pads has 2 entries, expected 4}}
  %y = train.pad %x {pads = array<i64: 1, 1>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Removing 2 + 2 of the 3 columns.
func.func @pad_removes_too_much(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'train.pad' op pads remove more than the 3 elements of axis 1}}
  %y = train.pad %x {pads = array<i64: 0, -2, 0, -2>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// Pads are all begins then all ends, not (begin, end) per axis.
func.func @pad_result_shape(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'train.pad' op result shape 4x3 does not match the expected 3x4}}
  %y = train.pad %x {pads = array<i64: 1, 1, 0, 0>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

//===----------------------------------------------------------------------===//
// ODS constraints
//===----------------------------------------------------------------------===//

// -----

func.func @relu_dynamic_shape(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'train.relu' op operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<?x3xf32>'}}
  %y = train.relu %x : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

func.func @matmul_unranked(%a: tensor<*xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{'train.matmul' op operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<*xf32>'}}
  %y = train.matmul %a, %b : (tensor<*xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

func.func @add_f64_operand(%a: tensor<4xf64>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.add' op operand #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<4xf64>'}}
  %r = train.add %a, %b : tensor<4xf64>, tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @reshape_bf16_result(%x: tensor<2x3xf32>) -> tensor<6xbf16> {
  // expected-error @+1 {{'train.reshape' op result #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<6xbf16>'}}
  %y = train.reshape %x : (tensor<2x3xf32>) -> tensor<6xbf16>
  return %y : tensor<6xbf16>
}

// -----

func.func @get_param_dynamic_result() -> tensor<?xf32> {
  // expected-error @+1 {{'train.get_param' op result #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<?xf32>'}}
  %w = train.get_param @w : tensor<?xf32>
  return %w : tensor<?xf32>
}

// -----

// Clip's result has the input's type.
func.func @clip_result_type_differs(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'train.clip' op failed to verify that all of {input, result} have same type}}
  %y = "train.clip"(%x, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @sigmoid_result_type_differs(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'train.sigmoid' op requires the same type for all operands and results}}
  %y = "train.sigmoid"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @leaky_relu_missing_alpha(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.leaky_relu' op requires attribute 'alpha'}}
  %y = train.leaky_relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @gemm_alpha_not_f32(%a: tensor<8x4xf32>, %b: tensor<4x5xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'train.gemm' op attribute 'alpha' failed to satisfy constraint: 32-bit float attribute}}
  %y = "train.gemm"(%a, %b) <{alpha = 1.0 : f64, beta = 1.0 : f32, trans_a = false, trans_b = false}>
      : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  return %y : tensor<8x5xf32>
}

// -----

func.func @conv_rank0_operands(%x: tensor<f32>, %w: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'train.conv' op input must have rank >= 3 (N x C x spatial...), got rank 0}}
  %y = train.conv %x, %w {dilations = array<i64>, group = 1 : i64, pads = array<i64>, strides = array<i64>}
      : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @batch_norm_grad_relu_without_bias(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'train.batch_norm_grad' op takes the bias exactly when it has a fused relu}}
  %dx, %ds, %db = train.batch_norm_grad %x, %c, %c, %c, %x {relu}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @cross_entropy_logits_not_2d(%x: tensor<4xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op logits must be N x C, got 4}}
  %loss, %d = train.softmax_cross_entropy %x, %l : (tensor<4xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

func.func @cross_entropy_smoothing_range(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op label_smoothing must be in [0, 1], got -5.000000e-01}}
  %loss, %d = train.softmax_cross_entropy %x, %l {label_smoothing = -0.5 : f32} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @elementwise_loss_kind(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.elementwise_loss' op unknown kind 'hinge'; expected one of mse l1 smooth_l1 bce_with_logits}}
  %loss, %d = train.elementwise_loss "hinge" %x, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @elementwise_loss_beta(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.elementwise_loss' op beta must be finite and >= 0, got -1.000000e+00}}
  %loss, %d = train.elementwise_loss "smooth_l1" %x, %x {beta = -1.0 : f32} : (tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @elementwise_loss_target_shape(%x: tensor<4x3xf32>, %t: tensor<4x2xf32>) {
  // expected-error @+1 {{'train.elementwise_loss' op failed to verify that all of {prediction, target, dprediction} have same type}}
  %loss, %d = train.elementwise_loss "mse" %x, %t : (tensor<4x3xf32>, tensor<4x2xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @pos_weight_not_bce(%x: tensor<4x3xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'train.elementwise_loss' op pos_weight is bce_with_logits's, not mse's}}
  %loss, %d = train.elementwise_loss "mse" %x, %x pos_weight %w : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @pos_weight_shape(%x: tensor<4x3xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'train.elementwise_loss' op pos_weight shape 4 does not match the expected 3}}
  %loss, %d = train.elementwise_loss "bce_with_logits" %x, %x pos_weight %w : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @pos_weight_scalar(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'train.elementwise_loss' op pos_weight needs a prediction with a last axis, got a scalar}}
  %loss, %d = train.elementwise_loss "bce_with_logits" %x, %x pos_weight %w : (tensor<f32>, tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @cross_entropy_weight_shape(%x: tensor<4x3xf32>, %l: tensor<4xi64>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op weight shape 4 does not match the expected 3}}
  %loss, %d = train.softmax_cross_entropy %x, %l weight %w : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @cross_entropy_labels_shape(%x: tensor<4x3xf32>, %l: tensor<3xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op labels must hold one value a row of logits (4), got 3}}
  %loss, %d = train.softmax_cross_entropy %x, %l : (tensor<4x3xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @cross_entropy_per_sample_not_in_graph(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op per_sample (reduction "none") is a cross-entropy inside a loss the graph computes: it needs in_graph and not sum}}
  %loss, %d = train.softmax_cross_entropy %x, %l {per_sample} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @cross_entropy_per_sample_sum(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op per_sample (reduction "none") is a cross-entropy inside a loss the graph computes: it needs in_graph and not sum}}
  %loss, %d = train.softmax_cross_entropy %x, %l {in_graph, per_sample, sum} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @cross_entropy_log_probabilities_smoothed(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op label_smoothing 2.500000e-01 with log_probabilities: the negative log-likelihood has none}}
  %loss, %d = train.softmax_cross_entropy %x, %l {in_graph, log_probabilities, label_smoothing = 0.25 : f32} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @cross_entropy_per_sample_scalar(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op loss shape scalar does not match the expected 4}}
  %loss, %d = train.softmax_cross_entropy %x, %l {in_graph, per_sample} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  return
}

// -----

func.func @cross_entropy_mean_per_row(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op loss shape 4 does not match the expected scalar}}
  %loss, %d = train.softmax_cross_entropy %x, %l {in_graph} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @unary_grad_unknown_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.unary_grad' op unknown kind 'gelu'; expected one of relu leaky_relu sigmoid tanh sqrt erf pow exp cos sin hard_sigmoid hard_swish abs log softsign mish elu celu selu}}
  %d = train.unary_grad "gelu" %x, %x, %x : tensor<4xf32>
  return
}

// -----

func.func @binary_grad_types(%x: tensor<4x3xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'train.binary_grad' op gradient types must match the operand types}}
  %a, %b = train.binary_grad "add" %x, %v, %x : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @binary_grad_grad_shape(%x: tensor<4x3xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'train.binary_grad' op grad shape 3 does not match the expected 4x3}}
  %a, %b = train.binary_grad "add" %x, %v, %v : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @pool_grad_unknown_kind(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'train.pool_grad' op unknown kind 'min'; expected one of max average}}
  %d = train.pool_grad "min" %x, %x {count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @split_does_not_cover(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.split' op results cover 2 of the 3 elements of axis 1}}
  %a, %b = train.split %x {axis = 1 : i64} : (tensor<4x3xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

func.func @split_other_dims(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.split' op result 1 of shape 2x2 does not match the input (4x3) outside axis 1}}
  %a, %b = train.split %x {axis = 1 : i64} : (tensor<4x3xf32>) -> (tensor<4x1xf32>, tensor<2x2xf32>)
  return
}

// -----

train.parameter @state : tensor<3xf32>
func.func @gradient_of_state(%g: tensor<3xf32>) {
  // expected-error @+1 {{'train.gradient' op parameter 'state' is not trainable}}
  %t = train.gradient @state, %g {backprop_index = 0 : i64} : tensor<3xf32>
  return
}

// -----

train.parameter @w trainable : tensor<3xf32>
func.func @gradient_negative_index(%g: tensor<3xf32>) {
  // expected-error @+1 {{'train.gradient' op backprop_index must be non-negative}}
  %t = train.gradient @w, %g {backprop_index = -1 : i64} : tensor<3xf32>
  return
}

// -----

train.parameter @state : tensor<3xf32>
func.func @sgd_update_state(%g: tensor<3xf32>) {
  // expected-error @+1 {{'train.sgd_update' op parameter 'state' is not trainable}}
  train.sgd_update @state, %g : tensor<3xf32>
  return
}

// -----

train.parameter @w trainable : tensor<3xf32>
func.func @sgd_update_type(%g: tensor<4xf32>) {
  // expected-error @+1 {{'train.sgd_update' op gradient type 'tensor<4xf32>' does not match the type of parameter 'w' ('tensor<3xf32>')}}
  train.sgd_update @w, %g : tensor<4xf32>
  return
}

// -----

train.parameter @w trainable : tensor<3xf32>
func.func @assign_trainable(%v: tensor<3xf32>) {
  // expected-error @+1 {{'train.assign_param' op parameter 'w' is trainable; only state parameters are assigned}}
  train.assign_param @w, %v : tensor<3xf32>
  return
}

// -----

func.func @assign_missing(%v: tensor<3xf32>) {
  // expected-error @+1 {{'train.assign_param' op 'nothing' does not name a train.parameter}}
  train.assign_param @nothing, %v : tensor<3xf32>
  return
}

// -----

func.func @lstm_bad_w(%x: tensor<3x2x4xf32>, %w: tensor<1x8x5xf32>, %r: tensor<1x8x2xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{'train.lstm' op w must be 1 x 4H x I with I = 4, got shape 1x8x5}}
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x8x5xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  return
}

// -----

func.func @lstm_bad_r(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x3xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{'train.lstm' op r shape 1x8x3 does not match the expected 1x8x2}}
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x3xf32>, tensor<1x16xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  return
}

// -----

func.func @lstm_bad_saved(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{'train.lstm' op saved shape 3x2x8 does not match the expected 3x2x10}}
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  return
}

// -----

func.func @lstm_grad_bad_dy(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %y: tensor<3x1x2x2xf32>, %s: tensor<3x2x10xf32>, %dyh: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'train.lstm_grad' op y_h_grad shape 1x2x3 does not match the expected 1x2x2}}
  %dx, %dw, %dr, %db, %dh0, %dc0 = train.lstm_grad %x, %w, %r, %y, %s y_h_grad %dyh
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x10xf32>, tensor<1x2x3xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
  return
}

// -----

func.func @lstm_bad_initial_c(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %b: tensor<1x16xf32>, %c0: tensor<1x3x2xf32>) {
  // expected-error @+1 {{'train.lstm' op initial_c shape 1x3x2 does not match the expected 1x2x2}}
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b initial_c %c0
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x3x2xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  return
}

// -----

func.func @lstm_grad_bad_initial_c_grad(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x8x2xf32>, %y: tensor<3x1x2x2xf32>, %s: tensor<3x2x10xf32>) {
  // expected-error @+1 {{'train.lstm_grad' op initial_c_grad shape 2x2 does not match the expected 1x2x2}}
  %dx, %dw, %dr, %db, %dh0, %dc0 = train.lstm_grad %x, %w, %r, %y, %s
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x10xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x2x2xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @gather_bad_result(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'train.gather' op result shape 3x5 does not match the expected 3x4}}
  %y = train.gather %t, %i : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  return
}

// -----

func.func @gather_grad_bad_grad(%i: tensor<3xi64>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{'train.gather_grad' op grad shape 2x4 does not match the expected 3x4}}
  %d = train.gather_grad %i, %g : (tensor<3xi64>, tensor<2x4xf32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @reduce_bad_kind(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'train.reduce' op unknown kind 'max'; expected one of sum mean}}
  %m = train.reduce "max" %x {axes = array<i64: 1>, keepdims = true} : tensor<4x6xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'train.reduce' op axis 2 is out of range for rank 2}}
  %m = train.reduce "sum" %x {axes = array<i64: 2>, keepdims = true} : tensor<4x6xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_axes_unsorted(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'train.reduce' op axes must be distinct and ascending}}
  %m = train.reduce "sum" %x {axes = array<i64: 1, 0>, keepdims = false} : tensor<4x6xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_bad_result(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'train.reduce' op result shape 4x1 does not match the expected 4}}
  %m = train.reduce "mean" %x {axes = array<i64: 1>, keepdims = false} : tensor<4x6xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_grad_bad_grad(%g: tensor<6xf32>) {
  // expected-error @+1 {{'train.reduce_grad' op grad shape 6 is not the reduction of 4x6 over its axes}}
  %d = train.reduce_grad "mean" %g {axes = array<i64: 1>} : tensor<6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @unary_grad_bad_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.unary_grad' op unknown kind 'cbrt'; expected one of relu leaky_relu sigmoid tanh sqrt erf pow exp cos sin hard_sigmoid hard_swish abs log softsign mish elu celu selu}}
  %d = train.unary_grad "cbrt" %x, %x, %x : tensor<4xf32>
  return
}

// -----

func.func @gru_bad_w(%x: tensor<3x2x4xf32>, %w: tensor<1x8x4xf32>, %r: tensor<1x6x2xf32>, %b: tensor<1x12xf32>) {
  // expected-error @+1 {{'train.gru' op w must be 1 x 3H x I with I = 4, got shape 1x8x4}}
  %y, %yh, %s = train.gru %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  return
}

// -----

func.func @gru_bad_b(%x: tensor<3x2x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'train.gru' op b shape 1x8 does not match the expected 1x12}}
  %y, %yh, %s = train.gru %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x8xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  return
}

// -----

func.func @gru_bad_saved(%x: tensor<3x2x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %b: tensor<1x12xf32>) {
  // expected-error @+1 {{'train.gru' op saved shape 3x2x10 does not match the expected 3x2x8}}
  %y, %yh, %s = train.gru %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  return
}

// -----

func.func @gru_bad_initial_h(%x: tensor<3x2x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %b: tensor<1x12xf32>, %h0: tensor<2x2xf32>) {
  // expected-error @+1 {{'train.gru' op initial_h shape 2x2 does not match the expected 1x2x2}}
  %y, %yh, %s = train.gru %x, %w, %r, %b initial_h %h0
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>, tensor<2x2xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  return
}

// -----

func.func @gru_grad_bad_dy(%x: tensor<3x2x4xf32>, %w: tensor<1x6x4xf32>, %r: tensor<1x6x2xf32>, %y: tensor<3x1x2x2xf32>, %s: tensor<3x2x8xf32>, %dy: tensor<3x1x2x3xf32>) {
  // expected-error @+1 {{'train.gru_grad' op y_grad shape 3x1x2x3 does not match the expected 3x1x2x2}}
  %dx, %dw, %dr, %db, %dh0 = train.gru_grad %x, %w, %r, %y, %s y_grad %dy
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<3x1x2x2xf32>, tensor<3x2x8xf32>, tensor<3x1x2x3xf32>)
      -> (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>, tensor<1x2x2xf32>)
  return
}

// -----

func.func @hard_sigmoid_infinite_alpha(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.hard_sigmoid' op alpha and beta must be finite, got alpha INF and beta 5.000000e-01}}
  %y = train.hard_sigmoid %x {alpha = 0x7F800000 : f32, beta = 0.5 : f32} : tensor<4xf32>
  return
}

// -----

func.func @clip_grad_norm_not_positive(%g: tensor<4xf32>) {
  // expected-error @+1 {{'train.clip_grad_norm' op max_norm must be a positive number, got -1.000000e+00}}
  train.clip_grad_norm %g {max_norm = -1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @clip_grad_norm_no_gradient() {
  // expected-error @+1 {{'train.clip_grad_norm' op needs at least one gradient}}
  "train.clip_grad_norm"() {max_norm = 1.0 : f64} : () -> ()
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'train.layer_norm' op axis 2 is out of range [0, 2)}}
  %y, %m, %i = train.layer_norm %x, %s, %s {axis = 2 : i64, epsilon = 0.25 : f32}
      : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<2x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'train.layer_norm' op scale shape 2x8 does not match the expected 8}}
  %y, %m, %i = train.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 0.25 : f32}
      : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return
}

// -----

func.func @layer_norm_grad_stats(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %m: tensor<2xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op mean shape 2 does not match the expected 2x1}}
  %dx, %ds, %db = train.layer_norm_grad %x, %s, %m, %m, %x {axis = 1 : i64}
      : (tensor<2x8xf32>, tensor<8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x8xf32>)
      -> (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @gelu_bad_approximate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.gelu' op approximate 'sigmoid' is not "none" or "tanh"}}
  %y = train.gelu %x {approximate = "sigmoid"} : tensor<4xf32>
  return
}

// -----

func.func @gelu_grad_bad_approximate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.gelu_grad' op approximate 'erf' is not "none" or "tanh"}}
  %d = train.gelu_grad %x, %x {approximate = "erf"} : tensor<4xf32>
  return
}

// -----

func.func @gelu_grad_type_mismatch(%x: tensor<4xf32>, %g: tensor<2x2xf32>) {
  // expected-error @+1 {{'train.gelu_grad' op failed to verify that all of {input, grad, result} have same type}}
  %d = "train.gelu_grad"(%x, %g) : (tensor<4xf32>, tensor<2x2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cumsum_axis_out_of_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'train.cumsum' op axis 2 is out of range [0, 2) for input of shape 2x8}}
  %c = train.cumsum %x {axis = 2 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @cumsum_negative_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'train.cumsum' op axis -1 is out of range [0, 2)}}
  %c = train.cumsum %x {axis = -1 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @to_index_shape(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'train.to_index' op result shape 16 does not match the expected 2x8}}
  %i = train.to_index %x : tensor<2x8xf32> -> tensor<16xi64>
  return
}

// -----

func.func @to_index_not_int64(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'train.to_index' op result #0 must be statically shaped tensor of 64-bit signless integer values}}
  %i = "train.to_index"(%x) : (tensor<2x8xf32>) -> tensor<2x8xi32>
  return
}

// -----

func.func @from_index_range(%t: tensor<8xi64>) {
  // expected-error @+1 {{'train.from_index' op range [3, 2] must be non-empty and within [-2^24, 2^24], where floats hold every integer}}
  %f = train.from_index %t {lo = 3 : i64, hi = 2 : i64} : tensor<8xi64> -> tensor<8xf32>
  return
}

// -----

func.func @from_index_beyond_floats(%t: tensor<8xi64>) {
  // expected-error @+1 {{'train.from_index' op range [0, 16777217] must be non-empty}}
  %f = train.from_index %t {lo = 0 : i64, hi = 16777217 : i64} : tensor<8xi64> -> tensor<8xf32>
  return
}

// -----

func.func @from_index_shape(%t: tensor<8xi64>) {
  // expected-error @+1 {{'train.from_index' op result shape 2x4 does not match the expected 8}}
  %f = train.from_index %t {lo = 0 : i64, hi = 9 : i64} : tensor<8xi64> -> tensor<2x4xf32>
  return
}

// -----

func.func @topk_positions_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{'train.topk_positions' op input must have rank at least 1}}
  %p = train.topk_positions %x {k = 1, largest = true} : tensor<f32> -> tensor<1xf32>
  return
}

// -----

func.func @topk_positions_k_zero(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.topk_positions' op k = 0 must be in [1, 8] (the last axis' extent)}}
  %p = train.topk_positions %x {k = 0, largest = true} : tensor<4x8xf32> -> tensor<4x0xf32>
  return
}

// -----

func.func @topk_positions_k_over(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.topk_positions' op k = 9 must be in [1, 8] (the last axis' extent)}}
  %p = train.topk_positions %x {k = 9, largest = false} : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}

// -----

func.func @topk_positions_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.topk_positions' op result shape 4x3 does not match the expected 4x2}}
  %p = train.topk_positions %x {k = 2, largest = true} : tensor<4x8xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @topk_positions_too_long(%x: tensor<1x16777217xf32>) {
  // expected-error @+1 {{'train.topk_positions' op last axis has 16777217 entries, more than 2^24 (its positions are floats)}}
  %p = train.topk_positions %x {k = 1, largest = true} : tensor<1x16777217xf32> -> tensor<1x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Gradient ops: what their kernels read (ranks, axes, the forward op's shapes)
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_grad_axis_out_of_range(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'train.softmax_grad' op axis 9 is out of range for rank 2}}
  %r = train.softmax_grad %x, %x {axis = 9 : i64} : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @softmax_grad_negative_axis_out_of_range(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'train.softmax_grad' op axis -3 is out of range for rank 2}}
  %r = train.softmax_grad %x, %x {axis = -3 : i64, log} : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @matmul_grad_batch_not_broadcastable(%l: tensor<2x4x3xf32>, %r: tensor<5x3x2xf32>, %x: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.matmul_grad' op operand shapes 2x4x3 and 5x3x2 do not match for matmul}}
  %a, %b = train.matmul_grad %l, %r, %x : (tensor<2x4x3xf32>, tensor<5x3x2xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @matmul_grad_trans_1d(%v: tensor<4xf32>, %m: tensor<4x5xf32>, %dy: tensor<5xf32>) {
  // expected-error @+1 {{'train.matmul_grad' op trans_lhs needs an operand of rank >= 2, got rank 1}}
  %a, %b = train.matmul_grad %v, %m, %dy {trans_lhs = true} : (tensor<4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> (tensor<4xf32>, tensor<4x5xf32>)
  return
}

// -----

func.func @matmul_grad_grad_shape(%l: tensor<3x4xf32>, %r: tensor<4x5xf32>, %dy: tensor<3x4xf32>) {
  // expected-error @+1 {{'train.matmul_grad' op grad shape 3x4 does not match the expected 3x5}}
  %a, %b = train.matmul_grad %l, %r, %dy : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4x5xf32>)
  return
}

// -----

func.func @matmul_grad_lhs_grad_type(%l: tensor<3x4xf32>, %r: tensor<4x5xf32>, %dy: tensor<3x5xf32>) {
  // expected-error @+1 {{'train.matmul_grad' op lhs and lhs_grad must all have type 'tensor<3x4xf32>', got 'tensor<4x5xf32>'}}
  %a, %b = train.matmul_grad %l, %r, %dy : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  return
}

// -----

func.func @gemm_grad_a_not_2d(%a: tensor<4xf32>, %b: tensor<4xf32>, %dy: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.gemm_grad' op A and B must be 2-D, got 4 and 4}}
  %da, %db = train.gemm_grad %a, %b, %dy {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = false}
      : (tensor<4xf32>, tensor<4xf32>, tensor<4x3xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @gemm_grad_grad_shape(%a: tensor<8x4xf32>, %b: tensor<10x4xf32>, %dy: tensor<8x4xf32>) {
  // expected-error @+1 {{'train.gemm_grad' op grad shape 8x4 does not match the expected 8x10}}
  %da, %db = train.gemm_grad %a, %b, %dy {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<8x4xf32>, tensor<10x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<10x4xf32>)
  return
}

// -----

func.func @gemm_grad_b_grad_type(%a: tensor<8x4xf32>, %b: tensor<10x4xf32>, %dy: tensor<8x10xf32>) {
  // expected-error @+1 {{'train.gemm_grad' op B and b_grad must all have type 'tensor<10x4xf32>', got 'tensor<4x10xf32>'}}
  %da, %db = train.gemm_grad %a, %b, %dy {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<8x4xf32>, tensor<10x4xf32>, tensor<8x10xf32>) -> (tensor<8x4xf32>, tensor<4x10xf32>)
  return
}

// -----

func.func @gemm_grad_c_grad_not_broadcastable(%a: tensor<8x4xf32>, %b: tensor<10x4xf32>, %dy: tensor<8x10xf32>) {
  // expected-error @+1 {{'train.gemm_grad' op c_grad of shape 1x8x10 does not broadcast to 8x10}}
  %da, %db, %dc = train.gemm_grad %a, %b, %dy {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<8x4xf32>, tensor<10x4xf32>, tensor<8x10xf32>) -> (tensor<8x4xf32>, tensor<10x4xf32>, tensor<1x8x10xf32>)
  return
}

// -----

func.func @conv_grad_data_rank_1_result(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.conv_grad_data' op result must have rank >= 3 (N x C x spatial...), got rank 1}}
  %r = train.conv_grad_data %x, %w {strides = array<i64>, pads = array<i64>, dilations = array<i64>, group = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @conv_grad_data_channels(%dy: tensor<1x16x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv_grad_data' op result has 4 channels but weight expects 3 per group x 1 groups}}
  %dx = train.conv_grad_data %dy, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_grad_data_grad_shape(%dy: tensor<1x16x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv_grad_data' op grad shape 1x16x8x8 does not match the expected 1x16x6x6}}
  %dx = train.conv_grad_data %dy, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<1x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @conv_grad_weights_pads_size(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x16x8x8xf32>) {
  // expected-error @+1 {{'train.conv_grad_weights' op 'pads' has 2 entries, expected 4}}
  %dw = train.conv_grad_weights %x, %dy {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv_grad_weights_bias_grad_shape(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x16x8x8xf32>) {
  // expected-error @+1 {{'train.conv_grad_weights' op bias_grad must have shape 16, got 3}}
  %dw, %db = train.conv_grad_weights %x, %dy {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<1x16x8x8xf32>) -> (tensor<16x3x3x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @conv_grad_weights_rank(%x: tensor<1x3x8x8xf32>, %dy: tensor<1x16x8x8xf32>) {
  // expected-error @+1 {{'train.conv_grad_weights' op weight_grad rank 2 differs from input rank 4}}
  %dw = train.conv_grad_weights %x, %dy {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<16x27xf32>
  return
}

// -----

func.func @clip_grad_bound_not_one_element(%x: tensor<4xf32>, %lo: tensor<2xf32>, %hi: tensor<f32>) {
  // expected-error @+1 {{'train.clip_grad' op min must have exactly one element, got shape 2}}
  %d = train.clip_grad %x, %lo, %hi, %x : (tensor<4xf32>, tensor<2xf32>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @clip_grad_grad_type(%x: tensor<64xf32>, %lo: tensor<f32>, %hi: tensor<f32>, %dy: tensor<1xf32>) {
  // expected-error @+1 {{'train.clip_grad' op input, grad and result must all have type 'tensor<64xf32>', got 'tensor<1xf32>'}}
  %d = train.clip_grad %x, %lo, %hi, %dy : (tensor<64xf32>, tensor<f32>, tensor<f32>, tensor<1xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @pool_grad_rank(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.pool_grad' op input must have rank >= 3 (N x C x spatial...), got rank 2}}
  %d = train.pool_grad "max" %x, %x {count_include_pad = false, dilations = array<i64: 1>, kernel_shape = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @pool_grad_grad_shape(%x: tensor<1x2x8x8xf32>, %dy: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'train.pool_grad' op grad shape 1x2x8x8 is not the pooled shape of the input 1x2x8x8 (1x2x4x4, or its ceil-mode extents)}}
  %d = train.pool_grad "average" %x, %dy {count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @batch_norm_grad_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm_grad' op input must have rank >= 2 (N x C x ...), got rank 1}}
  %dx, %ds, %db = train.batch_norm_grad %x, %c, %c, %c, %x
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @batch_norm_grad_saved_mean_shape(%x: tensor<2x3xf32>, %c: tensor<3xf32>, %m: tensor<2xf32>) {
  // expected-error @+1 {{'train.batch_norm_grad' op saved_mean shape 2 does not match the expected 3}}
  %dx, %ds, %db = train.batch_norm_grad %x, %c, %m, %c, %x
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @softmax_cross_entropy_no_classes(%logits: tensor<2x0xf32>, %labels: tensor<2xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op logits must have at least one class, got 2x0}}
  %loss, %d = train.softmax_cross_entropy %logits, %labels : (tensor<2x0xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x0xf32>)
  return
}

// -----

func.func @celu_zero_alpha(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.celu' op alpha must be finite and not 0, got 0}}
  %y = train.celu %x {alpha = 0.0 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @selu_infinite_gamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.selu' op alpha and gamma must be finite, got INF}}
  %y = train.selu %x {alpha = 1.0 : f32, gamma = 0x7F800000 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @elu_nan_alpha(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.elu' op alpha must be finite, got nan}}
  %y = train.elu %x {alpha = 0x7FC00000 : f32} : tensor<4xf32>
  return %y : tensor<4xf32>
}
