// mgs-train-pipeline: the passes mgsc runs, registered once (lib/Pipelines).
//
// The step's stages, in order, for a merged sparse strategy, a dense one and
// none (lower=false stops before the lowering, as mgsc --emit=mlir does).
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=omgs workers=4 density=0.25' --mlir-disable-threading --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES-OMGS
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=dense lower=false' --mlir-disable-threading --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES-DENSE
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=none' --mlir-disable-threading --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES-NONE
// STAGES-OMGS:      IR Dump Before TrainFuseBatchNormRelu (train-fuse-batch-norm-relu)
// STAGES-OMGS:      IR Dump Before TrainBuildStep (train-build-step)
// STAGES-OMGS:      IR Dump Before CommInsertAllReduce (comm-insert-allreduce)
// STAGES-OMGS:      IR Dump Before CommMergeBuckets (comm-merge-buckets)
// STAGES-OMGS:      IR Dump Before CommSparsifyTopK (comm-sparsify-topk)
// STAGES-OMGS:      IR Dump Before CommSchedule (comm-schedule)
// STAGES-OMGS:      IR Dump Before ConvertTrainToRuntime (convert-train-to-runtime)
// STAGES-DENSE:     IR Dump Before TrainBuildStep (train-build-step)
// STAGES-DENSE-NOT: CommMergeBuckets
// STAGES-DENSE-NOT: CommSparsifyTopK
// STAGES-DENSE:     IR Dump Before CommInsertAllReduce (comm-insert-allreduce)
// STAGES-DENSE-NOT: CommMergeBuckets
// STAGES-DENSE-NOT: CommSparsifyTopK
// STAGES-DENSE:     IR Dump Before CommSchedule (comm-schedule)
// STAGES-DENSE-NOT: ConvertTrainToRuntime
// STAGES-NONE:      IR Dump Before TrainBuildStep (train-build-step)
// STAGES-NONE-NOT:  IR Dump Before Comm
// STAGES-NONE:      IR Dump Before ConvertTrainToRuntime (convert-train-to-runtime)

// omgs: the two gradients merged into one bucket, top-k sparsified and
// all-gathered; no dense all-reduce is left.
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=omgs workers=4 density=0.25 lower=false' 2>&1 | FileCheck %s --check-prefix=OMGS
// OMGS:       remark: comm-merge-buckets: no profile; planning with an analytic estimate
// OMGS-LABEL: func.func @train_step(
// OMGS-NOT:     comm.all_reduce_start
// OMGS:         comm.topk_sparsify %{{.*}} {k = 8 : i64} : tensor<35xf32> -> tensor<8xf32>, tensor<8xi32>
// OMGS:         comm.all_gather_start %{{.*}}, %{{.*}} {workers = 4 : i64}
// OMGS:         comm.wait
// OMGS:         comm.scatter_add
// OMGS-NOT:     comm.all_reduce_start
// OMGS-LABEL: func.func @eval_step(

// dense: one all-reduce per gradient, no top-k.
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=dense lower=false' | FileCheck %s --check-prefix=DENSE
// DENSE-LABEL: func.func @train_step(
// DENSE-NOT:     comm.topk_sparsify
// DENSE-COUNT-2: comm.all_reduce_start
// DENSE-NOT:     comm.topk_sparsify
// DENSE-LABEL: func.func @eval_step(

// The whole pipeline ends in runtime calls: no train or comm op is left.
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=omgs workers=4 density=0.25' | FileCheck %s --check-prefix=LOWERED-OMGS
// RUN: mgs-opt %s --mgs-train-pipeline='strategy=dense' | FileCheck %s --check-prefix=LOWERED-DENSE
// LOWERED-OMGS-NOT:  {{train|comm}}.{{[a-z_]+}} %
// LOWERED-OMGS:      llvm.call @mgsrt_topk_sparsify
// LOWERED-OMGS:      llvm.call @mgsrt_allgather_start
// LOWERED-OMGS-NOT:  llvm.call @mgsrt_allreduce_start
// LOWERED-DENSE-NOT: {{train|comm}}.{{[a-z_]+}} %
// LOWERED-DENSE-NOT: llvm.call @mgsrt_topk_sparsify
// LOWERED-DENSE:     llvm.call @mgsrt_allreduce_start
// LOWERED-DENSE-NOT: llvm.call @mgsrt_topk_sparsify

// Options are checked when the pipeline is parsed.
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=fastest workers=4' 2>&1 | FileCheck %s --check-prefix=BAD-STRATEGY
// BAD-STRATEGY: error: mgs-train-pipeline: strategy: unknown strategy 'fastest'; expected one of none, dense, mgwfbp, single, layerwise, threshold:BYTES, greedy, omgs, gtopk, sparse-allreduce, auto
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=threshold:0 workers=4' 2>&1 | FileCheck %s --check-prefix=BAD-THRESHOLD
// BAD-THRESHOLD: error: mgs-train-pipeline: strategy: strategy 'threshold:0': BYTES must be a positive integer
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=layerwise' 2>&1 | FileCheck %s --check-prefix=NO-WORKERS
// NO-WORKERS: error: mgs-train-pipeline: strategy layerwise needs workers >= 1 (the number of MPI ranks)
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=omgs workers=4 density=0' 2>&1 | FileCheck %s --check-prefix=BAD-DENSITY
// BAD-DENSITY: error: mgs-train-pipeline: density must be in (0, 1], got 0
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=dense inference=true' 2>&1 | FileCheck %s --check-prefix=INFERENCE
// INFERENCE: error: mgs-train-pipeline: strategy applies to training; inference builds the forward alone
// RUN: not mgs-opt %s --mgs-train-pipeline='target=tpu' 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: mgs-train-pipeline: target must be cpu or cuda, got 'tpu'
// RUN: not mgs-opt %s --mgs-train-pipeline='label-smoothing=-0.1' 2>&1 | FileCheck %s --check-prefix=SMOOTH
// SMOOTH: error: mgs-train-pipeline: label-smoothing must be in [0, 1], got -0.100000
// RUN: not mgs-opt %s --mgs-train-pipeline='ignore-index=0 inference=true' 2>&1 | FileCheck %s --check-prefix=LOSS-INFERENCE
// RUN: not mgs-opt %s --mgs-train-pipeline='loss=hinge' 2>&1 | FileCheck %s --check-prefix=LOSS-NAME
// LOSS-NAME: error: mgs-train-pipeline: loss must be cross-entropy, mse, l1, smooth-l1, bce-with-logits or graph, got 'hinge'
// RUN: not mgs-opt %s --mgs-train-pipeline='loss=mse label-smoothing=0.1' 2>&1 | FileCheck %s --check-prefix=LOSS-CE
// RUN: not mgs-opt %s --mgs-train-pipeline='loss=l1 class-weights=1,2' 2>&1 | FileCheck %s --check-prefix=LOSS-CE
// RUN: not mgs-opt %s --mgs-train-pipeline='loss=bce-with-logits class-axis=1' 2>&1 | FileCheck %s --check-prefix=LOSS-CE
// RUN: not mgs-opt %s --mgs-train-pipeline='class-axis=-1 inference=true' 2>&1 | FileCheck %s --check-prefix=LOSS-INFERENCE
// RUN: not mgs-opt %s --mgs-train-pipeline='loss=mse pos-weight=1,2' 2>&1 | FileCheck %s --check-prefix=LOSS-POS
// LOSS-POS: error: mgs-train-pipeline: pos-weight is bce-with-logits's; the loss is mse
// LOSS-CE: error: mgs-train-pipeline: label-smoothing, ignore-index, class-weights and class-axis are the cross-entropy's; the loss is {{mse|l1|bce-with-logits}}
// RUN: not mgs-opt %s --mgs-train-pipeline='loss=smooth-l1 smooth-l1-beta=-1' 2>&1 | FileCheck %s --check-prefix=LOSS-BETA
// LOSS-BETA: error: mgs-train-pipeline: smooth-l1-beta must be finite and >= 0, got -1.000000
// LOSS-INFERENCE: error: mgs-train-pipeline: label-smoothing, ignore-index, class-weights, class-axis, pos-weight and reduction apply to training's loss; inference builds the forward alone

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

// Option combinations mgsc refuses are refused here too.
// RUN: not mgs-opt %s --mgs-train-pipeline='eval-mode=true' 2>&1 | FileCheck %s --check-prefix=EVAL-MODE
// EVAL-MODE: error: mgs-train-pipeline: eval-mode applies to inference
// RUN: not mgs-opt %s --mgs-train-pipeline='smooth-l1-beta=2' 2>&1 | FileCheck %s --check-prefix=BETA
// BETA: error: mgs-train-pipeline: smooth-l1-beta is smooth-l1's; the loss is cross-entropy
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=dense fp16-values=true' 2>&1 | FileCheck %s --check-prefix=FP16
// FP16: error: mgs-train-pipeline: fp16-values needs a sparse strategy (layerwise, omgs, ...); the strategy is dense
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=dense density-warmup=0.5' 2>&1 | FileCheck %s --check-prefix=WARMUP
// WARMUP: error: mgs-train-pipeline: density-warmup needs a sparse strategy
// RUN: not mgs-opt %s --mgs-train-pipeline='batch-size=-3' 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: mgs-train-pipeline: batch-size must be positive (0: the model's own), got -3
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=dense workers=-1' 2>&1 | FileCheck %s --check-prefix=WORKERS
// WORKERS: error: mgs-train-pipeline: workers must be in [1, 16777216], got -1
// RUN: not mgs-opt %s --mgs-train-pipeline='workers=0' 2>&1 | FileCheck %s --check-prefix=WORKERS-ZERO
// WORKERS-ZERO: error: mgs-train-pipeline: workers must be in [1, 16777216], got 0
// RUN: not mgs-opt %s --mgs-train-pipeline='strategy=dense density=5' 2>&1 | FileCheck %s --check-prefix=DENSITY-DENSE
// DENSITY-DENSE: error: mgs-train-pipeline: density must be in (0, 1], got 5
// RUN: not mgs-opt %s --mgs-train-pipeline='density=nan' 2>&1 | FileCheck %s --check-prefix=DENSITY-NAN
// DENSITY-NAN: error: mgs-train-pipeline: density must be in (0, 1], got nan
// RUN: not mgs-opt %s --mgs-train-pipeline='inference=true instrument=true' 2>&1 | FileCheck %s --check-prefix=INSTRUMENT-INFERENCE
// INSTRUMENT-INFERENCE: error: mgs-train-pipeline: instrument calibrates training; inference builds the forward alone
// RUN: not mgs-opt %s --mgs-train-pipeline='inference=true loss=mse' 2>&1 | FileCheck %s --check-prefix=LOSS-KIND-INFERENCE
// LOSS-KIND-INFERENCE: error: mgs-train-pipeline: loss applies to training; inference builds the forward alone
