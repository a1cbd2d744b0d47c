// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// The fused layer norm is one kernel call each way: rows 6, cols 8,
// epsilon 0.25 as a double's bits; the gradient's descriptor has epsilon 0.
// CHECK-DAG: llvm.mlir.global internal constant @[[FWD:__mgs_desc_[0-9]+]](dense<[6, 8, 4598175219545276416]> : tensor<3xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[BWD:__mgs_desc_[0-9]+]](dense<[6, 8, 0]> : tensor<3xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[FWD]]
// CHECK:         llvm.call @mgsrt_layer_norm_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[BWD]]
// CHECK:         llvm.call @mgsrt_layer_norm_bwd(%{{.*}}, %[[D2]], %{{.*}})

// The CUDA target lowers it the same way (runtime/lib/Kernels/CUDA/LayerNorm.cu).

train.parameter @s trainable : tensor<8xf32>
train.parameter @b trainable : tensor<8xf32>
func.func @forward(%x: tensor<6x8xf32> {train.name = "x"}) -> (tensor<6x8xf32> {train.name = "y"}) {
  %s = train.get_param @s : tensor<8xf32>
  %b = train.get_param @b : tensor<8xf32>
  %y, %m, %i = train.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 0.25 : f32}
      : (tensor<6x8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<6x8xf32>, tensor<6x1xf32>, tensor<6x1xf32>) loc("ln")
  return %y : tensor<6x8xf32>
}
