// RUN: not mgs-opt %s --convert-train-to-runtime="density-schedule=0.5,0.1" 2>&1 | FileCheck %s

// A density warm-up sizes each gather from the gradient its top-k selected
// from; a gather of values from elsewhere cannot follow it.
// CHECK: error: 'comm.all_gather_start' op gathers values that no comm.topk_sparsify produced directly; a density schedule cannot size it
func.func @eval_step(%v: tensor<2xf32>, %i: tensor<2xi32>) -> tensor<4xf32> {
  %r = comm.all_gather_start %v, %i {workers = 2 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<4xf32>, tensor<4xi32>>
  %gv, %gi = comm.wait %r : !comm.request<tensor<4xf32>, tensor<4xi32>>
  return %gv : tensor<4xf32>
}
