// The exchange of the sparse gradients chosen by comm-sparsify-topk's
// `collective`: the global top-k and the balanced sparse all-reduce.
// RUN: mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 collective=gtopk" | FileCheck %s --check-prefix=GTOPK
// RUN: mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 collective=sparse-allreduce" | FileCheck %s --check-prefix=SPARSE
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 collective=ring" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADNAME
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 collective=gtopk half-values=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADHALF
// RUN: mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 collective=gtopk" | mgs-opt | FileCheck %s --check-prefix=GTOPK

// gtopk: the k global entries arrive averaged and are scatter-added over one
// worker; the residual goes to the start (dropped entries return to it).
// GTOPK-LABEL: func.func @step
//       GTOPK:   %[[V:.*]], %[[I:.*]] = comm.topk_sparsify %{{.*}}, @"mgs.residual/w" {k = 4 : i64}
//       GTOPK:   %[[R:.*]] = comm.gtopk_start %[[V]], %[[I]], @"mgs.residual/w" {workers = 4 : i64} : tensor<4xf32>, tensor<4xi32> -> <tensor<4xf32>, tensor<4xi32>>
//       GTOPK:   %[[GV:.*]]:2 = comm.wait %[[R]]
//       GTOPK:   %[[AVG:.*]] = comm.scatter_add %[[GV]]#0, %[[GV]]#1 {workers = 1 : i64} : tensor<4xf32>, tensor<4xi32> -> tensor<16xf32>
//       GTOPK:   train.sgd_update @w, %[[AVG]]

// sparse-allreduce: the wait gives the dense average.
// SPARSE-LABEL: func.func @step
//       SPARSE:   %[[V:.*]], %[[I:.*]] = comm.topk_sparsify %{{.*}}, @"mgs.residual/w" {k = 4 : i64}
//       SPARSE:   %[[R:.*]] = comm.sparse_all_reduce_start %[[V]], %[[I]] {balanced, workers = 4 : i64} : tensor<4xf32>, tensor<4xi32> -> <tensor<16xf32>>
//       SPARSE:   %[[AVG:.*]] = comm.wait %[[R]]
//       SPARSE:   train.sgd_update @w, %[[AVG]]

// BADNAME: error: comm-sparsify-topk: collective must be allgather, gtopk or sparse-allreduce, got 'ring'
// BADHALF: error: comm-sparsify-topk: half-values applies to the allgather, not to gtopk
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 collective=sparse-allreduce bf16-values=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADBF16
// BADBF16: error: comm-sparsify-topk: bf16-values applies to the allgather, not to sparse-allreduce
train.parameter @w trainable : tensor<16xf32>
func.func @step(%dw: tensor<16xf32>) {
  %g = train.gradient @w, %dw {backprop_index = 0 : i64} : tensor<16xf32>
  %r = comm.all_reduce_start %g : tensor<16xf32>
  %a = comm.wait %r : !comm.request<tensor<16xf32>>
  train.sgd_update @w, %a : tensor<16xf32>
  return
}

// -----

// A plan's comm.collective on a group's all-reduce overrides the option for
// that gradient; the others keep the option's exchange.
// RUN: mgs-opt %s -split-input-file --comm-sparsify-topk="density=0.25 workers=4" | FileCheck %s --check-prefix=PLAN
// PLAN-LABEL: func.func @planned
//       PLAN:   comm.gtopk_start %{{.*}}, %{{.*}}, @"mgs.residual/p" {workers = 4 : i64}
//       PLAN:   comm.sparse_all_reduce_start %{{.*}}, %{{.*}} {balanced, workers = 4 : i64}
//       PLAN:   comm.all_gather_start %{{.*}}, %{{.*}} {workers = 4 : i64}
train.parameter @p trainable : tensor<16xf32>
train.parameter @q trainable : tensor<16xf32>
train.parameter @s trainable : tensor<16xf32>
func.func @planned(%dp: tensor<16xf32>, %dq: tensor<16xf32>, %ds: tensor<16xf32>) {
  %gp = train.gradient @p, %dp {backprop_index = 0 : i64} : tensor<16xf32>
  %rp = comm.all_reduce_start %gp {comm.collective = "gtopk"} : tensor<16xf32>
  %ap = comm.wait %rp : !comm.request<tensor<16xf32>>
  train.sgd_update @p, %ap : tensor<16xf32>
  %gq = train.gradient @q, %dq {backprop_index = 1 : i64} : tensor<16xf32>
  %rq = comm.all_reduce_start %gq {comm.collective = "sparse-allreduce"} : tensor<16xf32>
  %aq = comm.wait %rq : !comm.request<tensor<16xf32>>
  train.sgd_update @q, %aq : tensor<16xf32>
  %gs = train.gradient @s, %ds {backprop_index = 2 : i64} : tensor<16xf32>
  %rs = comm.all_reduce_start %gs : tensor<16xf32>
  %as = comm.wait %rs : !comm.request<tensor<16xf32>>
  train.sgd_update @s, %as : tensor<16xf32>
  return
}
