// mgs-train-pipeline with clip-grad-norm: train-clip-grad-norm runs last,
// on the gradients the exchange delivers, and the updates follow it.
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=none clip-grad-norm=0.5' --mlir-disable-threading --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES:     IR Dump Before TrainBuildStep (train-build-step)
// STAGES:     IR Dump Before TrainClipGradNorm (train-clip-grad-norm)
// STAGES:     IR Dump Before ConvertTrainToRuntime (convert-train-to-runtime)

// omgs: the norm of what the sparse exchange delivers (after the
// scatter-adds, error feedback before them), then both updates.
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=omgs workers=4 density=0.25 clip-grad-norm=0.5 lower=false' 2>/dev/null | FileCheck %s --check-prefix=OMGS
// OMGS-LABEL: func.func @train_step(
// OMGS:         comm.topk_sparsify
// OMGS:         comm.wait
// OMGS:         comm.scatter_add
// OMGS-NOT:     train.sgd_update
// OMGS:         train.clip_grad_norm %{{.*}}, %{{.*}} {max_norm = 5.000000e-01 : f64} : tensor<3x5xf32>, tensor<5x4xf32>
// OMGS-NEXT:    train.sgd_update @w2
// OMGS-NEXT:    train.sgd_update @w1
// OMGS-LABEL: func.func @eval_step(
// OMGS-NOT:     train.clip_grad_norm

// dense, lowered: every all-reduce waited for, then the norm (descriptor
// [count 2, max_norm 0.5, 15, 20]), then the updates.
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=dense clip-grad-norm=0.5' | FileCheck %s --check-prefix=DENSE
// DENSE-DAG:  llvm.mlir.global internal constant @[[CLIP:__mgs_desc_[0-9]+]](dense<[2, 4602678819172646912, 15, 20]> : tensor<4xi64>)
// DENSE-LABEL: llvm.func @mgs_train_step(
// DENSE-COUNT-2: llvm.call @mgsrt_comm_wait
// DENSE-NOT:     llvm.call @mgsrt_sgd_update
// DENSE:         llvm.mlir.addressof @[[CLIP]]
// DENSE-NEXT:    llvm.call @mgsrt_clip_grad_norm
// DENSE-COUNT-2: llvm.call @mgsrt_sgd_update
// DENSE-LABEL: llvm.func @mgs_eval_step(

// Options are checked when the pipeline is parsed.
// RUN: not mgs-opt %s --mgs-train-pipeline='clip-grad-norm=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: mgs-train-pipeline: clip-grad-norm must be a positive number (0: no clipping), got -1.000000
// RUN: not mgs-opt %s --mgs-train-pipeline='clip-grad-norm=1 inference=true' 2>&1 | FileCheck %s --check-prefix=INFERENCE
// INFERENCE: error: mgs-train-pipeline: clip-grad-norm applies to training; inference builds the forward alone

// A two-layer MLP as imported (test/Dialect/Train/train-build-step.mlir).
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %a = train.relu %h : tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %a, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
