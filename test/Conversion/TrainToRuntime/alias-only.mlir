// RUN: mgs-opt %s --train-build-step=inference-only=true --convert-train-to-runtime | FileCheck %s

// A step whose value is an alias of its input (a flatten) runs no kernel but
// the copy of its result into the output slot: the array of buffer pointers
// every call fills holds that copy's two pointers (it once held one, and the
// second overwrote the caller's stack).
// CHECK-LABEL: llvm.func @mgs_eval_step(
// CHECK:         %[[N:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK:         %[[BUFS:.*]] = llvm.alloca %[[N]] x !llvm.ptr
// CHECK:         llvm.getelementptr %[[BUFS]][1]
// CHECK:         llvm.call @mgsrt_copy
func.func @forward(%x: tensor<2x3x4xf32> {train.name = "x"}) -> (tensor<2x12xf32> {train.name = "y"}) {
  %y = train.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return %y : tensor<2x12xf32>
}
