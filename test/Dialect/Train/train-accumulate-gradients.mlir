// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(train-build-step,train-accumulate-gradients{steps=4})' | FileCheck %s
// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(train-build-step{reduction=sum},train-accumulate-gradients{steps=4})' | FileCheck %s --check-prefix=SUM
// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(train-build-step,train-accumulate-gradients{steps=1})' | FileCheck %s --check-prefix=ONE
// RUN: not mgs-opt %s -split-input-file --pass-pipeline='builtin.module(train-build-step,train-accumulate-gradients{steps=0})' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not mgs-opt %s -split-input-file --pass-pipeline='builtin.module(train-accumulate-gradients{steps=2})' 2>&1 | FileCheck %s --check-prefix=NOSTEP
// RUN: not mgs-opt %s -split-input-file --pass-pipeline='builtin.module(train-build-step,train-accumulate-gradients{steps=9223372036854775807})' 2>&1 | FileCheck %s --check-prefix=HUGE

// A two-layer MLP over 4 batches a step. Each trainable parameter gets an
// accumulator (state, zero at the start) beside it; the loss's gradient is
// divided by 4 (a mean's) in both steps.
// CHECK:       train.parameter @w1 trainable
// CHECK-NEXT:  train.parameter @"mgs.accum/w1" : tensor<5x4xf32> = dense<0.000000e+00>
// CHECK-NEXT:  train.parameter @w2 trainable
// CHECK-NEXT:  train.parameter @"mgs.accum/w2" : tensor<3x5xf32> = dense<0.000000e+00>

// The last batch: each gradient marks the accumulator plus the batch's, and
// is updated as before; the accumulators are zeroed at the end.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %{{.*}}, %[[DY:.*]] = train.softmax_cross_entropy
// CHECK-NEXT:    %[[Q:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[SDY:.*]] = train.mul %[[DY]], %[[Q]] : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}}, %[[DW2:.*]] = train.gemm_grad %{{.*}}, %{{.*}}, %[[SDY]]
// CHECK-NEXT:    %[[A2:.*]] = train.get_param @"mgs.accum/w2"
// CHECK-NEXT:    %[[S2:.*]] = train.add %[[A2]], %[[DW2]]
// CHECK-NEXT:    %[[G2:.*]] = train.gradient @w2, %[[S2]] {backprop_index = 0 : i64}
// CHECK-NEXT:    train.sgd_update @w2, %[[G2]]
// CHECK:         %[[A1:.*]] = train.get_param @"mgs.accum/w1"
// CHECK-NEXT:    %[[S1:.*]] = train.add %[[A1]], %{{.*}}
// CHECK-NEXT:    %[[G1:.*]] = train.gradient @w1, %[[S1]] {backprop_index = 1 : i64}
// CHECK-NEXT:    train.sgd_update @w1, %[[G1]]
// CHECK-NEXT:    %[[Z2:.*]] = arith.constant dense<0.000000e+00> : tensor<3x5xf32>
// CHECK-NEXT:    train.assign_param @"mgs.accum/w2", %[[Z2]]
// CHECK-NEXT:    %[[Z1:.*]] = arith.constant dense<0.000000e+00> : tensor<5x4xf32>
// CHECK-NEXT:    train.assign_param @"mgs.accum/w1", %[[Z1]]
// CHECK-NEXT:    return

// The batches before: each gradient is added to its accumulator; nothing is
// exchanged or updated.
// CHECK-LABEL: func.func @accum_step(
// CHECK-SAME:      -> (tensor<f32> {train.name = "loss"}, tensor<2x3xf32> {train.name = "y"})
// CHECK-SAME:      attributes {train.accumulate = 4 : i64}
// CHECK:         train.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<f32>
// CHECK:         %[[B2:.*]] = train.get_param @"mgs.accum/w2"
// CHECK-NEXT:    %[[T2:.*]] = train.add %[[B2]], %{{.*}}
// CHECK-NEXT:    train.assign_param @"mgs.accum/w2", %[[T2]]
// CHECK:         %[[B1:.*]] = train.get_param @"mgs.accum/w1"
// CHECK-NEXT:    %[[T1:.*]] = train.add %[[B1]], %{{.*}}
// CHECK-NEXT:    train.assign_param @"mgs.accum/w1", %[[T1]]
// CHECK-NEXT:    return
// CHECK-NOT:     train.gradient
// CHECK-NOT:     train.sgd_update
// CHECK-LABEL: func.func @eval_step(

// A summed loss is not divided: the step's gradient is the sum over every batch.
// SUM:         train.softmax_cross_entropy %{{.*}}, %{{.*}} {sum}
// SUM-NOT:     train.mul
// SUM:         func.func @accum_step

// One batch a step leaves the module as train-build-step built it.
// ONE-NOT:     mgs.accum
// ONE-NOT:     @accum_step

// ZERO: error: train-accumulate-gradients: steps must be a number of batches in [1, 1048576], got 0
// HUGE: error: train-accumulate-gradients: steps must be a number of batches in [1, 1048576], got 9223372036854775807
// NOSTEP: error: train-accumulate-gradients: no @train_step (run train-build-step first)
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %a = train.relu %h : tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %a, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
