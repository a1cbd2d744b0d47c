// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s

// An int64 input gathered from tables: the manifest bounds its values by the
// fewest rows of a table it indexes directly (index_rows NAME R TABLE), so
// the driver can refuse a token id beyond the vocabulary when it loads the
// data, naming the sample, rather than in a kernel at the first step. Here the
// ids index a 10-row embedding and a 7-row one: the bound is 7, @pos's.
// CHECK: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Aindex_input ids 1 2\0Aindex_rows ids 7 pos\0Aoutput y 2 2 3\0A{{.*}}")
train.parameter @embed trainable : tensor<10x4xf32>
train.parameter @pos trainable : tensor<7x4xf32>
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%ids: tensor<2xi64> {train.name = "ids"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %e = train.get_param @embed : tensor<10x4xf32>
  %p = train.get_param @pos : tensor<7x4xf32>
  %a = train.gather %e, %ids : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %b = train.gather %p, %ids : (tensor<7x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %h = train.add %a, %b : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %h, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
