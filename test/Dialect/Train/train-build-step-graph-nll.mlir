// train-build-step on a forward whose lifted loss is the negative
// log-likelihood of its scores as they are (train.graph_loss's
// log_probabilities: NegativeLogLikelihoodLoss of torch.log(p + eps), not of
// a LogSoftmax): the step's train.softmax_cross_entropy has
// log_probabilities (no softmax), with the graph's ignore_index and weights;
// label smoothing, which the negative log-likelihood has none of, is an error.
// RUN: mgs-opt %s --train-build-step | FileCheck %s
// RUN: not mgs-opt %s --train-build-step="label-smoothing=0.1" 2>&1 | FileCheck %s --check-prefix=SMOOTH
// Lowered, its descriptor [N, C, ignore_index, 0 (no smoothing), 8: log-probabilities, the mean].
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s --check-prefix=DESC
// DESC: llvm.mlir.global internal constant @[[CE:__mgs_desc_[0-9]+]](dense<[2, 3, 2, 0, 8]> : tensor<5xi64>)
// DESC-LABEL: llvm.func @mgs_train_step(
// DESC:       llvm.mlir.addressof @[[CE]]
// DESC-NEXT:  llvm.call @mgsrt_softmax_cross_entropy

// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[W:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 5.000000e-01]> : tensor<3xf32>
// CHECK:         train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %[[W]] {ignore_index = 2 : i64, log_probabilities} : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// SMOOTH: error: train-build-step: label-smoothing: the graph's loss (node 'nll', NegativeLogLikelihoodLoss) is the negative log-likelihood of its input as it is, which has no label smoothing
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"})
    attributes {train.graph_loss = {ignore_index = 2 : i64, labels = "y", log_probabilities, node = "nll", op = "NegativeLogLikelihoodLoss", reduction = "mean", weight = dense<[1.0, 2.0, 0.5]> : tensor<3xf32>}} {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %l = train.log %y : tensor<2x3xf32>
  return %l : tensor<2x3xf32>
}
