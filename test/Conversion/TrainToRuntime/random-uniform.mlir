// RUN: mgs-opt %s --train-build-step=loss=graph --convert-train-to-runtime | FileCheck %s

// Uniform draws read as numbers (here scaling a parameter): one
// mgsrt_random_uniform call of descriptor [count, low_bits, high_bits] (4
// values in [0, 1): 0 and 0x3FF0...) in each step, never differentiated.
// CHECK-DAG: llvm.mlir.global internal constant @[[DESC:__mgs_desc_[0-9]+]](dense<[4, 0, 4607182418800017408]> : tensor<3xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D:.*]] = llvm.mlir.addressof @[[DESC]]
// CHECK:         llvm.call @mgsrt_random_uniform(%{{.*}}, %[[D]], %{{.*}})
// CHECK-LABEL: llvm.func @mgs_eval_step(
// CHECK:         llvm.call @mgsrt_random_uniform(
train.parameter @w trainable : tensor<4xf32>
func.func @forward(%x: tensor<4xf32> {train.name = "x"}) -> (tensor<f32> {train.name = "loss"}) {
  %w = train.get_param @w : tensor<4xf32>
  %u = train.random_uniform {high = 1.0 : f32, low = 0.0 : f32} : tensor<4xf32>
  %n = train.mul %u, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %d = train.sub %n, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %sq = train.mul %d, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = train.reduce "mean" %sq {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
