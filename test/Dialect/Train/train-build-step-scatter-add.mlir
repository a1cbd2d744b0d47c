// RUN: mgs-opt %s --train-build-step | FileCheck %s

// A scatter-add in the forward pass (ONNX ScatterElements 'add' at constant
// indices, imported as train.gather_grad: each message row added into its
// node's row, PyTorch Geometric's sum aggregation): the messages' gradient
// is the gather of the nodes' gradient at the same indices.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[M:.*]] = train.gemm
// CHECK:         %[[AT:.*]] = arith.constant dense<[0, 2, 2, 1]> : tensor<4xi64>
// CHECK:         %[[S:.*]] = train.gather_grad %[[AT]], %[[M]] : (tensor<4xi64>, tensor<4x3xf32>) -> tensor<3x3xf32>
// CHECK:         %[[DS:.*]], %{{.*}} = train.gemm_grad %[[S]]
// CHECK:         %[[DM:.*]] = train.gather %[[DS]], %[[AT]] : (tensor<3x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
// CHECK:         train.gemm_grad %{{.*}}, %{{.*}}, %[[DM]]
train.parameter @w1 trainable : tensor<3x2xf32>
train.parameter @w2 trainable : tensor<5x3xf32>
func.func @forward(%x: tensor<4x2xf32> {train.name = "x"}) -> (tensor<3x5xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<3x2xf32>
  %m = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  %at = arith.constant dense<[0, 2, 2, 1]> : tensor<4xi64>
  %s = train.gather_grad %at, %m : (tensor<4xi64>, tensor<4x3xf32>) -> tensor<3x3xf32>
  %w2 = train.get_param @w2 : tensor<5x3xf32>
  %y = train.gemm %s, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<3x3xf32>, tensor<5x3xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}
