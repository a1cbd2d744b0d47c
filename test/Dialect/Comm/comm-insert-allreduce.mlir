// RUN: mgs-opt %s --pass-pipeline='builtin.module(func.func(comm-insert-allreduce))' | FileCheck %s
// RUN: mgs-opt %s --pass-pipeline='builtin.module(func.func(comm-insert-allreduce,comm-insert-allreduce))' | FileCheck %s
// Nor after comm-sparsify-topk turned the all-reduces into top-k all-gathers (whose gradients
// no all-reduce reads any more): no second exchange of every gradient.
// RUN: mgs-opt %s --pass-pipeline='builtin.module(func.func(comm-insert-allreduce),comm-sparsify-topk{workers=2 density=0.5},func.func(comm-insert-allreduce))' | FileCheck %s --check-prefix=AFTER-SPARSE
// AFTER-SPARSE-COUNT-4: comm.all_gather_start
// AFTER-SPARSE-NOT: comm.all_reduce_start
// AFTER-SPARSE-NOT: comm.all_gather_start

// Every parameter gradient is averaged over the workers before its update;
// running the pass twice changes nothing more.
// CHECK-LABEL: func.func @step
//       CHECK:   %[[G2:.*]] = train.gradient @w2
//  CHECK-NEXT:   %[[R2:.*]] = comm.all_reduce_start %[[G2]] : tensor<3xf32>
//  CHECK-NEXT:   %[[A2:.*]] = comm.wait %[[R2]]
//  CHECK-NEXT:   train.sgd_update @w2, %[[A2]]
//       CHECK:   %[[G1:.*]] = train.gradient @w1
//  CHECK-NEXT:   %[[R1:.*]] = comm.all_reduce_start %[[G1]] : tensor<4xf32>
//  CHECK-NEXT:   %[[A1:.*]] = comm.wait %[[R1]]
//  CHECK-NEXT:   train.sgd_update @w1, %[[A1]]
//   CHECK-NOT:   comm.all_reduce_start
train.parameter @w1 trainable : tensor<4xf32>
train.parameter @w2 trainable : tensor<3xf32>
func.func @step(%d1: tensor<4xf32>, %d2: tensor<3xf32>) {
  %g2 = train.gradient @w2, %d2 {backprop_index = 0 : i64} : tensor<3xf32>
  train.sgd_update @w2, %g2 : tensor<3xf32>
  %g1 = train.gradient @w1, %d1 {backprop_index = 1 : i64} : tensor<4xf32>
  train.sgd_update @w1, %g1 : tensor<4xf32>
  return
}

// A gradient used in another block than its own: the wait goes before its own
// block's terminator, where it dominates every use (not before the first use
// of another block, which the start does not dominate).
// CHECK-LABEL: func.func @multi_block
//       CHECK:   %[[G:.*]] = train.gradient @w3
//  CHECK-NEXT:   %[[R:.*]] = comm.all_reduce_start %[[G]] : tensor<4xf32>
//  CHECK-NEXT:   %[[A:.*]] = comm.wait %[[R]]
//  CHECK-NEXT:   llvm.br ^bb1
//       CHECK: ^bb1:
//  CHECK-NEXT:   train.sgd_update @w3, %[[A]]
//  CHECK-NEXT:   train.relu %[[A]]
train.parameter @w3 trainable : tensor<4xf32>
func.func @multi_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = train.gradient @w3, %x {backprop_index = 0 : i64} : tensor<4xf32>
  llvm.br ^bb1
^bb1:
  train.sgd_update @w3, %g : tensor<4xf32>
  %y = train.relu %g : tensor<4xf32>
  return %y : tensor<4xf32>
}

// Uses in its own block and in another: the wait goes before the first use
// in its own block.
// CHECK-LABEL: func.func @multi_block_local_use
//       CHECK:   %[[G:.*]] = train.gradient @w4
//  CHECK-NEXT:   %[[R:.*]] = comm.all_reduce_start %[[G]] : tensor<4xf32>
//  CHECK-NEXT:   train.relu %{{.*}}
//  CHECK-NEXT:   %[[A:.*]] = comm.wait %[[R]]
//  CHECK-NEXT:   train.relu %[[A]]
//  CHECK-NEXT:   llvm.br ^bb1
//       CHECK: ^bb1:
//  CHECK-NEXT:   train.sgd_update @w4, %[[A]]
train.parameter @w4 trainable : tensor<4xf32>
func.func @multi_block_local_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = train.gradient @w4, %x {backprop_index = 0 : i64} : tensor<4xf32>
  %a = train.relu %x : tensor<4xf32>
  %y = train.relu %g : tensor<4xf32>
  llvm.br ^bb1
^bb1:
  train.sgd_update @w4, %g : tensor<4xf32>
  return %y : tensor<4xf32>
}
