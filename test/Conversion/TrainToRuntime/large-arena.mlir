// RUN: mgs-opt %s --pass-pipeline='builtin.module(train-build-step{inference-only=true},convert-train-to-runtime)' | FileCheck %s

// Arena offsets past 2^28 bytes (VGG-16 and ResNet-50 arenas reach gigabytes)
// are i64 values, not constant GEP indices, which hold only 29 bits.
// CHECK: arena_bytes 800000000
// CHECK: %[[OFFSET:.*]] = llvm.mlir.constant(400000000 : i64) : i64
// CHECK: llvm.getelementptr %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
func.func @forward(%x: tensor<100000000xf32>) -> tensor<100000000xf32> {
  %a = train.relu %x : tensor<100000000xf32>
  %b = train.sigmoid %a : tensor<100000000xf32>
  %c = train.tanh %b : tensor<100000000xf32>
  return %c : tensor<100000000xf32>
}
