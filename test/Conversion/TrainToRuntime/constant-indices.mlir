// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s

// A gather at constant indices (Swin's relative position bias: a trainable
// table at an index constant, duplicates included): the indices are an int64
// global, read by gather_fwd and by gather_bwd, which adds each row of the
// gradient back to its table row.
// CHECK: llvm.mlir.global internal constant @__mgs_const_{{[0-9]+}}(dense<[2, 0, 2, 1]> : tensor<4xi64>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x i64>
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         llvm.mlir.addressof @__mgs_const_
// CHECK:         llvm.call @mgsrt_gather_fwd(
// CHECK:         llvm.mlir.addressof @__mgs_const_
// CHECK:         llvm.call @mgsrt_gather_bwd(
train.parameter @table trainable : tensor<3x2xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x4xf32> {train.name = "y"}) {
  %t = train.get_param @table : tensor<3x2xf32>
  %i = arith.constant dense<[[2, 0], [2, 1]]> : tensor<2x2xi64>
  %b = train.gather %t, %i : (tensor<3x2xf32>, tensor<2x2xi64>) -> tensor<2x2x2xf32>
  %r = train.reshape %b : (tensor<2x2x2xf32>) -> tensor<2x4xf32>
  %y = train.add %x, %r : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
