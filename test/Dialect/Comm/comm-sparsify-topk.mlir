// RUN: mgs-opt %s -split-input-file --comm-sparsify-topk="density=0.25 workers=4 min-elements=8" | FileCheck %s
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0 workers=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADDENSITY
// RUN: mgs-opt %s -split-input-file --comm-sparsify-topk="density=0.25 max-density=0.5 workers=4 min-elements=8" | FileCheck %s --check-prefix=WARMUP
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 max-density=0.1 workers=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADMAX
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADWORKERS
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADWORKERSNEG
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4294967300" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADWORKERSBIG
// BADWORKERS: error: comm-sparsify-topk: workers must be in [1, 16777216], got 0{{$}}
// BADWORKERSNEG: error: comm-sparsify-topk: workers must be in [1, 16777216], got -1{{$}}
// BADWORKERSBIG: error: comm-sparsify-topk: workers must be in [1, 16777216], got 4294967300{{$}}
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 workers=4 min-elements=-5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADMIN
// BADMIN: error: comm-sparsify-topk: min-elements must be >= 0 (0: every gradient is sparsified), got -5{{$}}
// A symbol that has the name of a residual the pass creates is not taken for
// it (here it is too small for the gradient).
// RUN: echo 'train.parameter @w trainable : tensor<4xf32> train.parameter @"mgs.residual/w" : tensor<1xf32> func.func @f(%%d: tensor<4xf32>) { %%g = train.gradient @w, %%d {backprop_index = 0 : i64} : tensor<4xf32> %%r = comm.all_reduce_start %%g : tensor<4xf32> %%a = comm.wait %%r : !comm.request<tensor<4xf32>> train.sgd_update @w, %%a : tensor<4xf32> return }' | not mgs-opt --comm-sparsify-topk="density=0.5 workers=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RESIDUAL
// RESIDUAL: error: comm-sparsify-topk: the module has a symbol @"mgs.residual/w" already, the name of the residual of 'w' this pass creates
// RUN: mgs-opt %s -split-input-file --comm-sparsify-topk="density=0.25 half-values=true workers=4 min-elements=8" | FileCheck %s --check-prefix=HALF

// half-values: the gather sends the values as IEEE half precision;
// bf16-values as bfloat16; not both.
// HALF: comm.all_gather_start {{.*}} {half_values, workers = 4 : i64}
// RUN: mgs-opt %s -split-input-file --comm-sparsify-topk="density=0.25 bf16-values=true workers=4 min-elements=8" | FileCheck %s --check-prefix=BF16
// BF16: comm.all_gather_start {{.*}} {bf16_values, workers = 4 : i64}
// RUN: not mgs-opt %s --comm-sparsify-topk="density=0.25 half-values=true bf16-values=true workers=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: comm-sparsify-topk: half-values and bf16-values exclude each other
// RUN: echo 'train.parameter @w trainable : tensor<4xf32> func.func @f(%%d: tensor<4xf32>) { %%g = train.gradient @w, %%d {backprop_index = 0 : i64} : tensor<4xf32> return }' | mgs-opt --comm-sparsify-topk="density=0.25 workers=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTHING
// Gradients but nothing to sparsify (a step before comm-insert-allreduce): a
// warning, not silence. With no gradient at all (every parameter frozen),
// nothing to say.
// NOTHING: warning: comm-sparsify-topk: no comm.all_reduce_start to sparsify (comm-insert-allreduce inserts one for each gradient)
// RUN: echo 'module {}' | mgs-opt --comm-sparsify-topk="density=0.25 workers=4" -o /dev/null 2>&1 | count 0

// max-density (a run-time density warm-up): the exchange holds floor(0.5 * 16) entries.
// WARMUP: comm.topk_sparsify {{.*}} {k = 8 : i64} : tensor<16xf32> -> tensor<8xf32>, tensor<8xi32>
// BADMAX: error: comm-sparsify-topk: max-density must be in [density, 1], got 1.000000e-01

// A large gradient becomes top-k values and indices, gathered from every
// worker and scatter-added; its residual is a new zero state parameter.
// CHECK:       train.parameter @"mgs.residual/w" : tensor<16xf32> = dense<0.000000e+00> : tensor<16xf32>
// CHECK-LABEL: func.func @sparsify_large
//       CHECK:   %[[G:.*]] = train.gradient @w
//       CHECK:   %[[V:.*]], %[[I:.*]] = comm.topk_sparsify %[[G]], @"mgs.residual/w" {k = 4 : i64} : tensor<16xf32> -> tensor<4xf32>, tensor<4xi32>
//       CHECK:   %[[R:.*]] = comm.all_gather_start %[[V]], %[[I]] {workers = 4 : i64} : tensor<4xf32>, tensor<4xi32> -> <tensor<16xf32>, tensor<16xi32>>
//       CHECK:   %[[GV:.*]]:2 = comm.wait %[[R]]
//       CHECK:   %[[AVG:.*]] = comm.scatter_add %[[GV]]#0, %[[GV]]#1 {workers = 4 : i64} : tensor<16xf32>, tensor<16xi32> -> tensor<16xf32>
//       CHECK:   train.sgd_update @w, %[[AVG]]
// Below min-elements the dense all-reduce is kept.
//       CHECK:   comm.all_reduce_start %{{.*}} : tensor<4xf32>
// BADDENSITY: comm-sparsify-topk: density must be in (0, 1], got 0
train.parameter @w trainable : tensor<16xf32>
train.parameter @b trainable : tensor<4xf32>
func.func @sparsify_large(%dw: tensor<16xf32>, %db: tensor<4xf32>) {
  %g = train.gradient @w, %dw {backprop_index = 0 : i64} : tensor<16xf32>
  %r = comm.all_reduce_start %g : tensor<16xf32>
  %a = comm.wait %r : !comm.request<tensor<16xf32>>
  train.sgd_update @w, %a : tensor<16xf32>
  %gb = train.gradient @b, %db {backprop_index = 1 : i64} : tensor<4xf32>
  %rb = comm.all_reduce_start %gb : tensor<4xf32>
  %ab = comm.wait %rb : !comm.request<tensor<4xf32>>
  train.sgd_update @b, %ab : tensor<4xf32>
  return
}
