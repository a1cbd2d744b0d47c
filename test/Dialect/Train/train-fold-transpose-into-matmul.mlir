// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(train-fold-transpose-into-matmul))' | FileCheck %s

// A linear layer's W^T (the weight transposed, as nn.Linear on a 3-D input
// exports): the matmul reads the weight with trans_rhs, no transpose left.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:     (%[[X:[^:]*]]: tensor<2x3x4xf32>
//       CHECK:   %[[W:.*]] = train.get_param @w
//   CHECK-NOT:   train.transpose
//       CHECK:   %[[Y:.*]] = train.matmul %[[X]], %[[W]] {trans_rhs = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
//       CHECK:   return %[[Y]]
train.parameter @w trainable : tensor<5x4xf32>
func.func @forward(%x: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> {
  %w = train.get_param @w : tensor<5x4xf32>
  %wt = train.transpose %w {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %y = train.matmul %x, %wt : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Attention: K (sequence x batch*heads x head) permuted [1, 2, 0] into K^T
// becomes the row-moving permutation [1, 0, 2] (as Q's) and trans_rhs; Q's
// [1, 0, 2] is not a swap of the last two axes and stays.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:     (%[[Q:[^:]*]]: tensor<5x6x4xf32>, %[[K:[^:]*]]: tensor<5x6x4xf32>
//       CHECK:   %[[QT:.*]] = train.transpose %[[Q]] {perm = array<i64: 1, 0, 2>}
//       CHECK:   %[[KT:.*]] = train.transpose %[[K]] {perm = array<i64: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
//       CHECK:   %[[S:.*]] = train.matmul %[[QT]], %[[KT]] {trans_rhs = true} : (tensor<6x5x4xf32>, tensor<6x5x4xf32>) -> tensor<6x5x5xf32>
//       CHECK:   return %[[S]]
func.func @forward(%q: tensor<5x6x4xf32>, %k: tensor<5x6x4xf32>) -> tensor<6x5x5xf32> {
  %qt = train.transpose %q {perm = array<i64: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
  %kt = train.transpose %k {perm = array<i64: 1, 2, 0>} : (tensor<5x6x4xf32>) -> tensor<6x4x5xf32>
  %s = train.matmul %qt, %kt : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  return %s : tensor<6x5x5xf32>
}

// -----

// Both operands, a batched swap of the last two axes: trans_lhs and
// trans_rhs; a transpose that already had trans set toggles it back.
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:     (%[[A:[^:]*]]: tensor<2x4x3xf32>, %[[B:[^:]*]]: tensor<2x5x4xf32>
//   CHECK-NOT:   train.transpose
//       CHECK:   %[[Y:.*]] = train.matmul %[[A]], %[[B]] {trans_lhs = true, trans_rhs = true} : (tensor<2x4x3xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
//       CHECK:   %[[Z:.*]] = train.matmul %[[A]], %[[A]] {trans_lhs = true} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
func.func @forward(%a: tensor<2x4x3xf32>, %b: tensor<2x5x4xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x3xf32>) {
  %at = train.transpose %a {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  %bt = train.transpose %b {perm = array<i64: 0, 2, 1>} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
  %y = train.matmul %at, %bt : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %z = train.matmul %at, %at {trans_rhs = true} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x3xf32>
  return %y, %z : tensor<2x3x5xf32>, tensor<2x3x3xf32>
}

// -----

// Left alone: a transpose moving the last axis elsewhere than second-last
// ([2, 0, 1]), a K^T whose transpose has another user (folding would add a
// copy), and a 1-D operand.
// CHECK-LABEL: func.func @forward
//       CHECK:   %[[T:.*]] = train.transpose %{{.*}} {perm = array<i64: 2, 0, 1>}
//       CHECK:   train.matmul %[[T]], %{{.*}} : (tensor<4x5x6xf32>, tensor<6x3xf32>)
//       CHECK:   %[[KT:.*]] = train.transpose %{{.*}} {perm = array<i64: 1, 2, 0>}
//       CHECK:   train.matmul %{{.*}}, %[[KT]] : (tensor<6x5x4xf32>, tensor<6x4x5xf32>)
//       CHECK:   train.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<3x2xf32>)
//   CHECK-NOT:   trans_
func.func @forward(%x: tensor<5x6x4xf32>, %w: tensor<6x3xf32>, %q: tensor<6x5x4xf32>,
                   %v: tensor<3xf32>, %u: tensor<3x2xf32>)
    -> (tensor<4x5x3xf32>, tensor<6x5x5xf32>, tensor<6x4x5xf32>, tensor<2xf32>) {
  %t = train.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<5x6x4xf32>) -> tensor<4x5x6xf32>
  %a = train.matmul %t, %w : (tensor<4x5x6xf32>, tensor<6x3xf32>) -> tensor<4x5x3xf32>
  %kt = train.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<5x6x4xf32>) -> tensor<6x4x5xf32>
  %s = train.matmul %q, %kt : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %c = train.matmul %v, %u : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  return %a, %s, %kt, %c : tensor<4x5x3xf32>, tensor<6x5x5xf32>, tensor<6x4x5xf32>, tensor<2xf32>
}
