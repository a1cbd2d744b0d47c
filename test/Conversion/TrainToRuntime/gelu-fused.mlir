// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// A GELU is one kernel call each way, on 48 elements: exact (approximate 0)
// and tanh (1); the gradients read x, not the forward's output.
// CHECK-DAG: llvm.mlir.global internal constant @[[EXACT:__mgs_desc_[0-9]+]](dense<[48, 0]> : tensor<2xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[TANH:__mgs_desc_[0-9]+]](dense<[48, 1]> : tensor<2xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[EXACT]]
// CHECK:         llvm.call @mgsrt_gelu_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[TANH]]
// CHECK:         llvm.call @mgsrt_gelu_fwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK:         %[[D3:.*]] = llvm.mlir.addressof @[[TANH]]
// CHECK:         llvm.call @mgsrt_gelu_bwd(%{{.*}}, %[[D3]], %{{.*}})
// CHECK:         %[[D4:.*]] = llvm.mlir.addressof @[[EXACT]]
// CHECK:         llvm.call @mgsrt_gelu_bwd(%{{.*}}, %[[D4]], %{{.*}})

// The CUDA target lowers it the same way (runtime/lib/Kernels/CUDA/Gelu.cu).

train.parameter @s trainable : tensor<6x8xf32>
func.func @forward(%x: tensor<6x8xf32> {train.name = "x"}) -> (tensor<6x8xf32> {train.name = "y"}) {
  %s = train.get_param @s : tensor<6x8xf32>
  %h = train.mul %x, %s : tensor<6x8xf32>, tensor<6x8xf32> -> tensor<6x8xf32>
  %g = train.gelu %h : tensor<6x8xf32> loc("gelu")
  %t = train.gelu %g {approximate = "tanh"} : tensor<6x8xf32> loc("gelu_tanh")
  return %t : tensor<6x8xf32>
}
