// RUN: mgs-opt %s | mgs-opt | FileCheck %s
// RUN: mgs-opt %s --mlir-print-op-generic | mgs-opt | FileCheck %s

// CHECK-LABEL: func.func @all_reduce
//  CHECK-SAME:   (%[[G:.*]]: tensor<10x4xf32>)
//       CHECK:   %[[R:.*]] = comm.all_reduce_start %[[G]] : tensor<10x4xf32>
//       CHECK:   %[[A:.*]] = comm.wait %[[R]] : <tensor<10x4xf32>>
//       CHECK:   return %[[A]]
func.func @all_reduce(%g: tensor<10x4xf32>) -> tensor<10x4xf32> {
  %r = comm.all_reduce_start %g : tensor<10x4xf32>
  %a = comm.wait %r : !comm.request<tensor<10x4xf32>>
  return %a : tensor<10x4xf32>
}

// CHECK-LABEL: func.func @sparse
//       CHECK:   %[[V:.*]], %[[I:.*]] = comm.topk_sparsify %{{.*}}, @res {k = 2 : i64} : tensor<10xf32> -> tensor<2xf32>, tensor<2xi32>
//       CHECK:   %[[R:.*]] = comm.all_gather_start %[[V]], %[[I]] {workers = 4 : i64} : tensor<2xf32>, tensor<2xi32> -> <tensor<8xf32>, tensor<8xi32>>
//       CHECK:   %[[GV:.*]]:2 = comm.wait %[[R]]
//       CHECK:   comm.scatter_add %[[GV]]#0, %[[GV]]#1 {workers = 4 : i64} : tensor<8xf32>, tensor<8xi32> -> tensor<10xf32>
train.parameter @res : tensor<10xf32>
func.func @sparse(%g: tensor<10xf32>) -> tensor<10xf32> {
  %v, %i = comm.topk_sparsify %g, @res {k = 2 : i64} : tensor<10xf32> -> tensor<2xf32>, tensor<2xi32>
  %r = comm.all_gather_start %v, %i {workers = 4 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<8xf32>, tensor<8xi32>>
  %gv, %gi = comm.wait %r : !comm.request<tensor<8xf32>, tensor<8xi32>>
  %d = comm.scatter_add %gv, %gi {workers = 4 : i64} : tensor<8xf32>, tensor<8xi32> -> tensor<10xf32>
  return %d : tensor<10xf32>
}

// Values sent as half precision.
// CHECK-LABEL: func.func @half
//       CHECK:   comm.all_gather_start %{{.*}}, %{{.*}} {half_values, workers = 2 : i64}
func.func @half(%v: tensor<2xf32>, %i: tensor<2xi32>) -> tensor<4xf32> {
  %r = comm.all_gather_start %v, %i {half_values, workers = 2 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<4xf32>, tensor<4xi32>>
  %gv, %gi = comm.wait %r : !comm.request<tensor<4xf32>, tensor<4xi32>>
  return %gv : tensor<4xf32>
}
