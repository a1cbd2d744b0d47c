// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce,comm-schedule),convert-train-to-runtime)' | FileCheck %s

// @p's gradient is the add's incoming gradient, which the gemm's backward
// still reads: the in-place all-reduce gets a copy of its own, taken before
// the collective starts. @w's gradient has no other reader: no copy.
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         llvm.call @mgsrt_softmax_cross_entropy
// CHECK-NEXT:    llvm.mlir.constant
// CHECK:         llvm.call @mgsrt_copy
// CHECK:         llvm.call @mgsrt_allreduce_start
// CHECK:         llvm.call @mgsrt_gemm_bwd
// CHECK-NOT:     llvm.call @mgsrt_copy
// CHECK:         llvm.call @mgsrt_allreduce_start
train.parameter @w trainable : tensor<3x4xf32>
train.parameter @p trainable : tensor<2x3xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %p = train.get_param @p : tensor<2x3xf32>
  %z = train.add %y, %p : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}
