// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// A cumulative sum on the gradient's path and one that makes indices (RoBERTa's
// position ids: a running count, made int64 by to_index, read by a gather).
// cumsum's descriptor is [outer, len, inner, exclusive, reverse]: the data's
// along axis 1 of 2x4x3, its gradient the same sum reversed; to_index's is
// [count]. Nothing flows back through the indices.
// CHECK-DAG: llvm.mlir.global internal constant @[[FWD:__mgs_desc_[0-9]+]](dense<[2, 4, 3, 0, 0]> : tensor<5xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[BWD:__mgs_desc_[0-9]+]](dense<[2, 4, 3, 0, 1]> : tensor<5xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[POS:__mgs_desc_[0-9]+]](dense<[1, 4, 1, 1, 0]> : tensor<5xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[IDX:__mgs_desc_[0-9]+]](dense<4> : tensor<1xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[FWD]]
// CHECK:         llvm.call @mgsrt_cumsum(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[POS]]
// CHECK:         llvm.call @mgsrt_cumsum(%{{.*}}, %[[D2]], %{{.*}})
// CHECK:         %[[D3:.*]] = llvm.mlir.addressof @[[IDX]]
// CHECK:         llvm.call @mgsrt_to_index(%{{.*}}, %[[D3]], %{{.*}})
// CHECK:         llvm.call @mgsrt_gather_fwd
// CHECK:         llvm.call @mgsrt_gather_bwd
// CHECK:         %[[D4:.*]] = llvm.mlir.addressof @[[BWD]]
// CHECK:         llvm.call @mgsrt_cumsum(%{{.*}}, %[[D4]], %{{.*}})
// CHECK-NOT:     llvm.call @mgsrt_cumsum
// CHECK-NOT:     llvm.call @mgsrt_to_index
// CHECK:         llvm.return
train.parameter @w trainable : tensor<2x4x3xf32>
train.parameter @pos trainable : tensor<6x3xf32>
func.func @forward(%x: tensor<2x4x3xf32> {train.name = "x"}) -> (tensor<2x12xf32> {train.name = "y"}) {
  %w = train.get_param @w : tensor<2x4x3xf32>
  %h = train.mul %x, %w : tensor<2x4x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  %c = train.cumsum %h {axis = 1 : i64} : tensor<2x4x3xf32>
  %m = arith.constant dense<[[1.0, 1.0, 0.0, 1.0]]> : tensor<1x4xf32>
  %p = train.cumsum %m {axis = 1 : i64, exclusive} : tensor<1x4xf32>
  %i = train.to_index %p : tensor<1x4xf32> -> tensor<1x4xi64>
  %t = train.get_param @pos : tensor<6x3xf32>
  %e = train.gather %t, %i : (tensor<6x3xf32>, tensor<1x4xi64>) -> tensor<1x4x3xf32>
  %y = train.add %c, %e : tensor<2x4x3xf32>, tensor<1x4x3xf32> -> tensor<2x4x3xf32>
  %l = train.reshape %y : (tensor<2x4x3xf32>) -> tensor<2x12xf32>
  return %l : tensor<2x12xf32>
}
