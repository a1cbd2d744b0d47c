// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s

// Stochastic depth's dropout with one mask element per sample: descriptors
// [count, ratio_bits, training, inner], inner = the elements of a sample (5 of
// 10); the training step draws (training 1) and its gradient reads the same
// mask, the evaluation step passes the data through (training 0).
// CHECK-DAG: llvm.mlir.global internal constant @[[TRAIN:__mgs_desc_[0-9]+]](dense<[10, 4598175219545276416, 1, 5]> : tensor<4xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[EVAL:__mgs_desc_[0-9]+]](dense<[10, 4598175219545276416, 0, 5]> : tensor<4xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[TRAIN]]
// CHECK:         llvm.call @mgsrt_dropout_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[TRAIN]]
// CHECK:         llvm.call @mgsrt_dropout_bwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK-LABEL: llvm.func @mgs_eval_step(
// CHECK:         %[[D3:.*]] = llvm.mlir.addressof @[[EVAL]]
// CHECK:         llvm.call @mgsrt_dropout_fwd(%{{.*}}, %[[D3]], %{{.*}})
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %d, %mask = train.dropout %h {ratio = 0.25 : f32, training}
      : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x1xi1>)
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %d, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
