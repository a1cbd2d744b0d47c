// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce,comm-schedule),convert-train-to-runtime)' | FileCheck %s
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-sparsify-topk{density=0.2 workers=2 half-values=true},func.func(comm-schedule),convert-train-to-runtime)' | FileCheck %s --check-prefix=SPARSE
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-sparsify-topk{density=0.2 workers=2 bf16-values=true},func.func(comm-schedule),convert-train-to-runtime)' | FileCheck %s --check-prefix=BF16
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-merge-buckets{strategy=single workers=2},func.func(comm-schedule),convert-train-to-runtime)' 2>/dev/null | FileCheck %s --check-prefix=BUCKET
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-sparsify-topk{density=0.2 workers=2 collective=gtopk},func.func(comm-schedule),convert-train-to-runtime)' | FileCheck %s --check-prefix=GTOPK
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-sparsify-topk{density=0.2 workers=2 collective=sparse-allreduce},func.func(comm-schedule),convert-train-to-runtime)' | FileCheck %s --check-prefix=SPARSEAR
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-sparsify-topk{density=0.2 workers=2 collective=gtopk},func.func(comm-schedule),convert-train-to-runtime{target=cuda})' | FileCheck %s --check-prefix=CUDA
// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step,func.func(comm-insert-allreduce),comm-sparsify-topk{density=0.2 workers=2 collective=sparse-allreduce},func.func(comm-schedule),convert-train-to-runtime{target=cuda})' | FileCheck %s --check-prefix=CUDA-SAR
// The manifest records one number of workers: exchanges compiled for two are refused.
// RUN: echo 'train.parameter @r1 : tensor<4xf32> = dense<0.0> : tensor<4xf32> train.parameter @r2 : tensor<4xf32> = dense<0.0> : tensor<4xf32> func.func @eval_step(%%g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) { %%v, %%i = comm.topk_sparsify %%g, @r1 {k = 2 : i64} : tensor<4xf32> -> tensor<2xf32>, tensor<2xi32> %%q1 = comm.all_gather_start %%v, %%i {workers = 2 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<4xf32>, tensor<4xi32>> %%a:2 = comm.wait %%q1 : !comm.request<tensor<4xf32>, tensor<4xi32>> %%s1 = comm.scatter_add %%a#0, %%a#1 {workers = 2 : i64} : tensor<4xf32>, tensor<4xi32> -> tensor<4xf32> %%w, %%j = comm.topk_sparsify %%g, @r2 {k = 2 : i64} : tensor<4xf32> -> tensor<2xf32>, tensor<2xi32> %%q2 = comm.all_gather_start %%w, %%j {workers = 3 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<6xf32>, tensor<6xi32>> %%b:2 = comm.wait %%q2 : !comm.request<tensor<6xf32>, tensor<6xi32>> %%s2 = comm.scatter_add %%b#0, %%b#1 {workers = 3 : i64} : tensor<6xf32>, tensor<6xi32> -> tensor<4xf32> return %%s1, %%s2 : tensor<4xf32>, tensor<4xf32> }' | not mgs-opt --convert-train-to-runtime 2>&1 | FileCheck %s --check-prefix=WORKERS
// WORKERS: error: convert-train-to-runtime: this exchange is compiled for 3 workers, an earlier one for 2; a step runs on one number of workers

// Global top-k: top-k [n, k], gtopk [k, slot, n] (buffers: values, indices,
// the residual parameter, the global values and indices), scatter-add over
// one worker [n, k, 1].
// GTOPK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[15, 3]> : tensor<2xi64>)
// GTOPK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[3, 0, 15]> : tensor<3xi64>)
// GTOPK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[15, 3, 1]> : tensor<3xi64>)
// GTOPK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[4, 1, 20]> : tensor<3xi64>)
// GTOPK-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[20, 4, 1]> : tensor<3xi64>)
// GTOPK-LABEL: llvm.func @mgs_train_step(
// GTOPK:         llvm.call @mgsrt_topk_sparsify
// GTOPK:         llvm.call @mgsrt_gtopk_start
// GTOPK:         llvm.call @mgsrt_comm_wait
// GTOPK:         llvm.call @mgsrt_scatter_add
// GTOPK:         llvm.call @mgsrt_sgd_update

// Balanced sparse all-reduce: [k, slot, n, balanced]; the wait's buffer is
// the average, read by the update with no scatter-add.
// SPARSEAR-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[3, 0, 15, 1]> : tensor<4xi64>)
// SPARSEAR-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[4, 1, 20, 1]> : tensor<4xi64>)
// SPARSEAR-LABEL: llvm.func @mgs_train_step(
// SPARSEAR:         llvm.call @mgsrt_topk_sparsify
// SPARSEAR:         llvm.call @mgsrt_sparse_allreduce_start
// SPARSEAR-NOT:     mgsrt_scatter_add
// SPARSEAR:         llvm.call @mgsrt_comm_wait
// SPARSEAR-NOT:     mgsrt_scatter_add
// SPARSEAR:         llvm.call @mgsrt_sgd_update
// SPARSEAR-LABEL: llvm.func @mgs_eval_step(

// For a GPU the sparse collectives lower to the same calls (a GPU context
// runs them on NCCL, or staged over MPI with --comm mpi), and the manifest
// names them.
// CUDA: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Atarget cuda\0Asparse_collectives gtopk\0Achecksum
// CUDA-LABEL: llvm.func @mgs_train_step(
// CUDA:         llvm.call @mgsrt_gtopk_start
// CUDA:         llvm.call @mgsrt_comm_wait
// CUDA-SAR: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Atarget cuda\0Asparse_collectives sparse-allreduce\0Achecksum
// CUDA-SAR-LABEL: llvm.func @mgs_train_step(
// CUDA-SAR:       llvm.call @mgsrt_sparse_allreduce_start


// A bucket costs no copy: both gradients are computed into their slices of
// the bucket (15 + 20 floats), which is all-reduced once; no concat or split
// kernel runs.
// BUCKET-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[35, 0]> : tensor<2xi64>)
// BUCKET-LABEL: llvm.func @mgs_train_step(
// BUCKET-NOT:     mgsrt_concat
// BUCKET-NOT:     mgsrt_split
// BUCKET:         llvm.call @mgsrt_allreduce_start
// BUCKET-NOT:     mgsrt_concat
// BUCKET-NOT:     mgsrt_split
// BUCKET:         llvm.call @mgsrt_comm_wait
// BUCKET-NOT:     mgsrt_split
// BUCKET-LABEL: llvm.func @mgs_eval_step(

// Sparse: top-k [n, k], the allgather [k, slot, n (for the density warm-up),
// half values], scatter-add [n, k, P].
// SPARSE-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[15, 3]> : tensor<2xi64>)
// SPARSE-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[3, 0, 15, 1]> : tensor<4xi64>)
// bf16-values: the same allgathers with values format 2 (MGSRT_VALUES_BF16).
// BF16-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[3, 0, 15, 2]> : tensor<4xi64>)
// BF16-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[4, 1, 20, 2]> : tensor<4xi64>)
// SPARSE-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[15, 3, 2]> : tensor<3xi64>)
// SPARSE-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[20, 4]> : tensor<2xi64>)
// SPARSE-DAG: llvm.mlir.global internal constant @{{__mgs_desc_[0-9]+}}(dense<[4, 1, 20, 1]> : tensor<4xi64>)

// Collectives become start/wait calls with one request slot each; the
// average lands in place in the gradient's buffer, which stays allocated
// until the update after the wait has read it.
// CHECK-DAG: llvm.mlir.global internal constant @[[START0:__mgs_desc_[0-9]+]](dense<[15, 0]> : tensor<2xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[START1:__mgs_desc_[0-9]+]](dense<[20, 1]> : tensor<2xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[WAIT0:__mgs_desc_[0-9]+]](dense<0> : tensor<1xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[WAIT1:__mgs_desc_[0-9]+]](dense<1> : tensor<1xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         llvm.call @mgsrt_gemm_bwd
// CHECK:         %[[D0:.*]] = llvm.mlir.addressof @[[START0]]
// CHECK:         llvm.call @mgsrt_allreduce_start(%{{.*}}, %[[D0]], %{{.*}})
// CHECK:         llvm.call @mgsrt_unary_bwd
// CHECK:         llvm.call @mgsrt_gemm_bwd
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[START1]]
// CHECK:         llvm.call @mgsrt_allreduce_start(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[W0:.*]] = llvm.mlir.addressof @[[WAIT0]]
// CHECK:         llvm.call @mgsrt_comm_wait(%{{.*}}, %[[W0]], %{{.*}})
// CHECK:         llvm.call @mgsrt_sgd_update
// CHECK:         %[[W1:.*]] = llvm.mlir.addressof @[[WAIT1]]
// CHECK:         llvm.call @mgsrt_comm_wait(%{{.*}}, %[[W1]], %{{.*}})
// CHECK:         llvm.call @mgsrt_sgd_update
// CHECK-LABEL: llvm.func @mgs_eval_step(
// CHECK-NOT:     mgsrt_allreduce_start
// CHECK:         llvm.return
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
