// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s --check-prefix=CUDA

// LayerNorm and GELU pieces as kernel calls. A mean over axis 1 of 2x5 is
// reduce [rank 2, scale 0.2, in 2 5, out 2 1]; its gradient reads the same
// descriptor. pow is unary op 6 with the exponent 2.0 as alpha; sqrt and erf
// are unary ops 4 and 5.
// CHECK-DAG: llvm.mlir.global internal constant @[[RED:__mgs_desc_[0-9]+]](dense<[2, 4596373779694328218, 2, 5, 2, 1]> : tensor<6xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[POW:__mgs_desc_[0-9]+]](dense<[6, 10, 4611686018427387904, 0]> : tensor<4xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[4, 10, 0, 0]> : tensor<4xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[5, 10, 0, 0]> : tensor<4xi64>)

// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         llvm.call @mgsrt_gemm_fwd
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[RED]]
// CHECK:         llvm.call @mgsrt_reduce_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         llvm.call @mgsrt_binary_fwd
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[POW]]
// CHECK:         llvm.call @mgsrt_unary_fwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK:         llvm.call @mgsrt_unary_fwd
// CHECK:         llvm.call @mgsrt_unary_fwd
// CHECK:         llvm.call @mgsrt_gemm_fwd
// CHECK:         llvm.call @mgsrt_softmax_cross_entropy
// CHECK:         llvm.call @mgsrt_unary_bwd
// CHECK:         llvm.call @mgsrt_unary_bwd
// CHECK:         llvm.call @mgsrt_unary_bwd
// CHECK:         llvm.call @mgsrt_binary_bwd
// CHECK:         %[[D3:.*]] = llvm.mlir.addressof @[[RED]]
// CHECK:         llvm.call @mgsrt_reduce_bwd(%{{.*}}, %[[D3]], %{{.*}})
// CHECK:         llvm.call @mgsrt_gemm_bwd

// The CUDA target calls the same kernels (its reductions: CUDA/Reduce.cu).
// CUDA-LABEL: llvm.func @mgs_train_step(
// CUDA:         llvm.call @mgsrt_reduce_fwd
// CUDA:         llvm.call @mgsrt_reduce_bwd

train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %m = train.reduce "mean" %h {axes = array<i64: 1>, keepdims = true} : tensor<2x5xf32> -> tensor<2x1xf32>
  %c = train.sub %h, %m : tensor<2x5xf32>, tensor<2x1xf32> -> tensor<2x5xf32>
  %p = train.pow %c {exponent = 2.0 : f32} : tensor<2x5xf32>
  %s = train.sqrt %p : tensor<2x5xf32>
  %e = train.erf %s : tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %e, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
