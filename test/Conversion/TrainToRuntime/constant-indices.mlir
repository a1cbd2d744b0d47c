// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s --check-prefix=CUDA

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
// CHECK-LABEL: llvm.func @mgs_model_constants(
// CHECK:         llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.mlir.constant(0 : i64)

// On a GPU the kernels read device memory only: the steps read each constant
// through mgs_model_constants's table, whose entries (the host addresses at
// first) the driver replaces with device copies; each step's own constants,
// 32 bytes each.
// CUDA: llvm.mlir.global internal constant @__mgs_const_bytes(dense<32> : tensor<2xi64>)
// CUDA: llvm.mlir.global internal @__mgs_const_table() {{.*}} : !llvm.array<2 x ptr> {
// CUDA-COUNT-2: llvm.mlir.addressof @__mgs_const_{{[0-9]+}} : !llvm.ptr
// CUDA-LABEL: llvm.func @mgs_train_step(
// CUDA-NOT:     llvm.mlir.addressof @__mgs_const_{{[0-9]+}}
// CUDA:         %[[TABLE:.*]] = llvm.mlir.addressof @__mgs_const_table
// CUDA:         %[[ENTRY:.*]] = llvm.getelementptr %[[TABLE]][0]
// CUDA:         llvm.load %[[ENTRY]] : !llvm.ptr -> !llvm.ptr
// CUDA-NOT:     llvm.mlir.addressof @__mgs_const_{{[0-9]+}}
// CUDA:         llvm.call @mgsrt_gather_fwd(
// CUDA-NOT:     llvm.mlir.addressof @__mgs_const_{{[0-9]+}}
// CUDA:         llvm.call @mgsrt_gather_bwd(
// CUDA-LABEL: llvm.func @mgs_eval_step(
// CUDA-NOT:     llvm.mlir.addressof @__mgs_const_{{[0-9]+}}
// CUDA:         llvm.getelementptr %{{.*}}[1]
// CUDA-LABEL: llvm.func @mgs_model_constants(
// CUDA:         llvm.mlir.addressof @__mgs_const_table
// CUDA:         llvm.mlir.addressof @__mgs_const_bytes
// CUDA:         llvm.mlir.constant(2 : i64)
train.parameter @table trainable : tensor<3x2xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x4xf32> {train.name = "y"}) {
  %t = train.get_param @table : tensor<3x2xf32>
  %i = arith.constant dense<[[2, 0], [2, 1]]> : tensor<2x2xi64>
  %b = train.gather %t, %i : (tensor<3x2xf32>, tensor<2x2xi64>) -> tensor<2x2x2xf32>
  %r = train.reshape %b : (tensor<2x2x2xf32>) -> tensor<2x4xf32>
  %y = train.add %x, %r : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
