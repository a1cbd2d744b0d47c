// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s

// MobileNetV3's activations are op codes of the unary kernels: descriptors
// [op, count, alpha_bits, beta_bits], hard_swish (5) with ONNX's alpha 1/6
// (as f32) and beta 1/2, hard_sigmoid (4) with its own; the gradients read x
// and carry the same alpha and beta.
// CHECK-DAG: llvm.mlir.global internal constant @[[SWISH:__mgs_desc_[0-9]+]](dense<[8, 10, 4595172819972653056, 4602678819172646912]> : tensor<4xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[SIG:__mgs_desc_[0-9]+]](dense<[7, 10, 4596373779801702400, 4602678819172646912]> : tensor<4xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[SWISH]]
// CHECK:         llvm.call @mgsrt_unary_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[SIG]]
// CHECK:         llvm.call @mgsrt_unary_fwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK:         %[[D3:.*]] = llvm.mlir.addressof @[[SIG]]
// CHECK:         llvm.call @mgsrt_unary_bwd(%{{.*}}, %[[D3]], %{{.*}})
// CHECK:         %[[D4:.*]] = llvm.mlir.addressof @[[SWISH]]
// CHECK:         llvm.call @mgsrt_unary_bwd(%{{.*}}, %[[D4]], %{{.*}})
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %s = train.hard_swish %h : tensor<2x5xf32>
  %a = train.hard_sigmoid %s {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %a, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
