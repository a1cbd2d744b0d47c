// RUN: mgs-opt %s --train-build-step=loss=graph --convert-train-to-runtime | FileCheck %s

// A VAE's reparameterization z = mu + eps * sigma with eps from
// train.random_normal: one mgsrt_random_normal call of descriptor [count,
// mean_bits, scale_bits] (here 8 values, mean 0, scale 1 = 0x3FF0...) in the
// training step, drawn before the forward reads it and never differentiated;
// the evaluation step draws too.
// CHECK-DAG: llvm.mlir.global internal constant @[[DESC:__mgs_desc_[0-9]+]](dense<[8, 0, 4607182418800017408]> : tensor<3xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[DESC]]
// CHECK:         llvm.call @mgsrt_random_normal(%{{.*}}, %[[D1]], %{{.*}})
// CHECK-NOT:     llvm.call @mgsrt_random_normal(
// CHECK-LABEL: llvm.func @mgs_eval_step(
// CHECK:         llvm.call @mgsrt_random_normal(
train.parameter @mu trainable : tensor<2x4xf32>
train.parameter @sigma trainable : tensor<2x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<f32> {train.name = "loss"}) {
  %mu = train.get_param @mu : tensor<2x4xf32>
  %sigma = train.get_param @sigma : tensor<2x4xf32>
  %eps = train.random_normal {mean = 0.0 : f32, scale = 1.0 : f32} : tensor<2x4xf32>
  %n = train.mul %eps, %sigma : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %z = train.add %mu, %n : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %d = train.sub %z, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %sq = train.mul %d, %d : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = train.reduce "mean" %sq {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
