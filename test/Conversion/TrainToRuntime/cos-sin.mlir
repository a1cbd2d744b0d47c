// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// cos and sin (rotary position embeddings' angles) are unary ops 10 and 11, forward and
// backward with the same descriptor [op, count, alpha_bits, beta_bits]; their gradients read
// the forward input.
// CHECK-DAG: llvm.mlir.global internal constant @[[COS:__mgs_desc_[0-9]+]](dense<[10, 10, 0, 0]> : tensor<4xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[SIN:__mgs_desc_[0-9]+]](dense<[11, 10, 0, 0]> : tensor<4xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[COS]]
// CHECK:         llvm.call @mgsrt_unary_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[SIN]]
// CHECK:         llvm.call @mgsrt_unary_fwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK:         llvm.call @mgsrt_unary_bwd
// CHECK:         llvm.call @mgsrt_unary_bwd
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %c = train.cos %h : tensor<2x5xf32>
  %s = train.sin %h : tensor<2x5xf32>
  %e = train.mul %c, %s : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %e, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
