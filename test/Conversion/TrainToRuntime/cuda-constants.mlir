// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// A GPU step's zero-filled constant (the gradient of a split's unused piece,
// here the second half of @w along axis 1, whose concat makes @w's gradient)
// is read through mgs_model_constants's table like any other: its entry holds
// the zero-initialized global's address until the driver puts a device copy
// there, and its size is in __mgs_const_bytes (2 x 2 floats: 16 bytes).
// CHECK: llvm.mlir.global internal constant @__mgs_const_bytes(dense<16> : tensor<1xi64>)
// CHECK: llvm.mlir.global internal @__mgs_const_table() {{.*}} : !llvm.array<1 x ptr> {
// CHECK:   llvm.mlir.addressof @[[ZEROS:__mgs_const_[0-9]+]] : !llvm.ptr
// CHECK: llvm.mlir.global internal @[[ZEROS]](dense<0.000000e+00> : tensor<4xf32>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK-NOT:     llvm.mlir.addressof @[[ZEROS]]
// CHECK:         llvm.mlir.addressof @__mgs_const_table
// CHECK:         llvm.call @mgsrt_concat(
// CHECK-LABEL: llvm.func @mgs_model_constants(
// CHECK:         llvm.mlir.constant(1 : i64)
train.parameter @w trainable : tensor<2x4xf32>
func.func @forward(%x: tensor<2x2xf32> {train.name = "x"}) -> (tensor<2x2xf32> {train.name = "y"}) {
  %w = train.get_param @w : tensor<2x4xf32>
  %a, %b = train.split %w {axis = 1 : i64} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %y = train.add %x, %a : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
