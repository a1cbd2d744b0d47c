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
