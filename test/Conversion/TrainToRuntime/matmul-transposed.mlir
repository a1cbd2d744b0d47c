// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s

// A transposed operand's flag is the descriptor's trans_lhs / trans_rhs
// (after m, k, n: the op's shapes as it reads them), forward and backward:
// [batch rank 0, m 6, k 4, n 5, trans_lhs 0, trans_rhs 1, precision 0].
// CHECK-DAG: llvm.mlir.global internal constant @[[D:__mgs_desc_[0-9]+]](dense<[0, 6, 4, 5, 0, 1, 0]> : tensor<7xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[D]]
// CHECK:         llvm.call @mgsrt_matmul_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[D]]
// CHECK:         llvm.call @mgsrt_matmul_bwd(%{{.*}}, %[[D2]], %{{.*}})

train.parameter @w trainable : tensor<5x4xf32>
func.func @forward(%x: tensor<6x4xf32> {train.name = "x"}) -> (tensor<6x5xf32> {train.name = "y"}) {
  %w = train.get_param @w : tensor<5x4xf32>
  %y = train.matmul %x, %w {trans_rhs = true} : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
}
