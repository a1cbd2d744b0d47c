// RUN: mgs-opt %s --split-input-file --pass-pipeline='builtin.module(train-build-step,train-accumulate-gradients{steps=3},convert-train-to-runtime)' | FileCheck %s
// RUN: mgs-opt %s --split-input-file --pass-pipeline='builtin.module(train-build-step,train-accumulate-gradients{steps=3},convert-train-to-runtime)' | FileCheck %s --check-prefix=CALLS
// RUN: mgs-opt %s --split-input-file --pass-pipeline='builtin.module(train-build-step,convert-train-to-runtime)' | FileCheck %s --check-prefix=NONE

// With accumulation the model defines mgs_accum_step beside the other steps
// and its manifest says how many batches a step takes; the accumulators are
// state params.
// CHECK-DAG:   llvm.func @mgs_accum_step(
// CHECK-DAG:   llvm.func @mgs_train_step(
// CHECK-DAG:   llvm.func @mgs_eval_step(
// CHECK-DAG:   param mgs.accum/w state 2 3 4\0A
// CHECK-DAG:   accumulate 3\0A
// The accumulators are zeroed by the zero kernel (no constant of zeros in
// memory) and added to in place (no add into scratch and copy).
// CALLS-NOT:   dense<0.000000e+00>
// CALLS-LABEL: llvm.func @mgs_train_step(
// CALLS:         llvm.call @mgsrt_binary_fwd(
// CALLS:         llvm.call @mgsrt_zero(
// CALLS-NOT:     llvm.call @mgsrt_copy(
// CALLS-LABEL: llvm.func @mgs_accum_step(
// CALLS:         llvm.call @mgsrt_accumulate(
// CALLS-NOT:     llvm.call @mgsrt_copy(
// CALLS-LABEL: llvm.func @mgs_model_manifest(

// Without it, mgs_accum_step still links, and fails saying why.
// NONE-DAG:    llvm.mlir.global internal constant @__mgs_no_mgs_accum_step("this model was compiled without --accumulate: it has no accumulation step\00")
// NONE-DAG:    llvm.func @mgs_accum_step(
// NONE-NOT:    accumulate {{[0-9]}}
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
