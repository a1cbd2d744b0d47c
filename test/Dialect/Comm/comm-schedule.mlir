// RUN: mgs-opt %s --pass-pipeline='builtin.module(func.func(comm-schedule))' | FileCheck %s

// Waits and the updates they feed sink to the end of the backward pass, in
// order, before the running-statistics assignments: every collective then
// overlaps the rest of the backward pass.
// CHECK-LABEL: func.func @step
//       CHECK:   %[[R2:.*]] = comm.all_reduce_start
//       CHECK:   %[[R1:.*]] = comm.all_reduce_start
//       CHECK:   train.relu
//       CHECK:   comm.wait %[[R2]]
//  CHECK-NEXT:   train.sgd_update @w2
//  CHECK-NEXT:   comm.wait %[[R1]]
//  CHECK-NEXT:   train.sgd_update @w1
//  CHECK-NEXT:   train.assign_param @s
train.parameter @w1 trainable : tensor<4xf32>
train.parameter @w2 trainable : tensor<3xf32>
train.parameter @s : tensor<4xf32>
func.func @step(%d1: tensor<4xf32>, %d2: tensor<3xf32>) -> tensor<4xf32> {
  %g2 = train.gradient @w2, %d2 {backprop_index = 0 : i64} : tensor<3xf32>
  %r2 = comm.all_reduce_start %g2 : tensor<3xf32>
  %a2 = comm.wait %r2 : !comm.request<tensor<3xf32>>
  train.sgd_update @w2, %a2 : tensor<3xf32>
  %g1 = train.gradient @w1, %d1 {backprop_index = 1 : i64} : tensor<4xf32>
  %r1 = comm.all_reduce_start %g1 : tensor<4xf32>
  %a1 = comm.wait %r1 : !comm.request<tensor<4xf32>>
  train.sgd_update @w1, %a1 : tensor<4xf32>
  %more = train.relu %d1 : tensor<4xf32>
  train.assign_param @s, %more : tensor<4xf32>
  return %more : tensor<4xf32>
}

// A running-statistics assignment before the exchange starts: the wait stays
// after its start (moving it before the assignment would use the request
// before it exists).
// CHECK-LABEL: func.func @negative_assign_before_start
//       CHECK:   train.assign_param @m
//  CHECK-NEXT:   %[[R:.*]] = comm.all_reduce_start
//  CHECK-NEXT:   %[[A:.*]] = comm.wait %[[R]]
//  CHECK-NEXT:   train.sgd_update @w, %[[A]]
train.parameter @w trainable : tensor<4xf32>
train.parameter @m : tensor<4xf32>
func.func @negative_assign_before_start(%g: tensor<4xf32>) {
  train.assign_param @m, %g : tensor<4xf32>
  %r = comm.all_reduce_start %g : tensor<4xf32>
  %a = comm.wait %r : !comm.request<tensor<4xf32>>
  train.sgd_update @w, %a : tensor<4xf32>
  return
}
