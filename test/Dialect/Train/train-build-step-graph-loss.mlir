// train-build-step on a forward whose loss the exported graph computed (the
// importer lifted it out: train.graph_loss): the cross-entropy with the
// graph's ignore_index, class weights and reduction; options that say
// otherwise are errors, label smoothing adds to it.
// RUN: mgs-opt %s --split-input-file --train-build-step | FileCheck %s
// RUN: mgs-opt %s --split-input-file --train-build-step="label-smoothing=0.1" | FileCheck %s --check-prefix=SMOOTH
// RUN: not mgs-opt %s --split-input-file --train-build-step="loss=mse" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not mgs-opt %s --split-input-file --train-build-step="ignore-index=5" 2>&1 | FileCheck %s --check-prefixes=IGNORE,IGNORE-ALL
// RUN: not mgs-opt %s --split-input-file --train-build-step="ignore-index=2" 2>/dev/null | FileCheck %s
// RUN: not mgs-opt %s --split-input-file --train-build-step="class-weights=1,1,1" 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// RUN: not mgs-opt %s --split-input-file --train-build-step="reduction=max" 2>&1 | FileCheck %s --check-prefix=REDUCTION
// RUN: mgs-opt %s --split-input-file --train-build-step 2>&1 | FileCheck %s --check-prefix=MEAN
// RUN: not mgs-opt %s --split-input-file --train-build-step="reduction=sum" 2>&1 | FileCheck %s --check-prefix=SUMOPT
// RUN: not mgs-opt %s --split-input-file --train-build-step="class-weights=-1,1,1" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not mgs-opt %s --split-input-file --train-build-step="class-axis=1" 2>&1 | FileCheck %s --check-prefix=AXIS

// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[W:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 5.000000e-01]> : tensor<3xf32>
// CHECK:         train.softmax_cross_entropy %{{.*}}, %{{.*}} weight %[[W]] {ignore_index = 2 : i64, sum} : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// SMOOTH: train.softmax_cross_entropy {{.*}} {ignore_index = 2 : i64, label_smoothing = 1.000000e-01 : f32, sum}
// LOSS: error: train-build-step: @forward trains the graph's loss (node 'loss', SoftmaxCrossEntropyLoss), a cross-entropy; the loss option asks for mse
// IGNORE: error: train-build-step: the graph's loss (node 'loss', SoftmaxCrossEntropyLoss) ignores label 2; the ignore-index option says 5
// WEIGHTS: error: train-build-step: class-weights: the graph's loss (node 'loss', SoftmaxCrossEntropyLoss) has its own class weights, which are trained
// REDUCTION: error: train-build-step: reduction must be mean or sum, got 'max'
// AXIS: error: train-build-step: class-axis: the graph's loss sets the class axis (ONNX's: 1, its scores flattened at import)
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"})
    attributes {train.graph_loss = {ignore_index = 2 : i64, labels = "y", node = "loss", op = "SoftmaxCrossEntropyLoss", reduction = "sum", weight = dense<[1.0, 2.0, 0.5]> : tensor<3xf32>}} {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A graph's mean loss without weights: the option's defaults, and its
// class weights checked as the option's would be.
// MEAN-LABEL: func.func @train_step(
// MEAN:         train.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x3xf32>)
// SUMOPT: error: train-build-step: the graph's loss (node 'nll', NegativeLogLikelihoodLoss) takes the mean; the reduction option says sum
// IGNORE-ALL: error: train-build-step: the graph's loss (node 'nll', NegativeLogLikelihoodLoss) counts every label; the ignore-index option says 5
// NEG: error: train-build-step: class-weights: the graph's loss (node 'nll', NegativeLogLikelihoodLoss) has no class weights, which are trained
train.parameter @w trainable : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"})
    attributes {train.graph_loss = {labels = "y", node = "nll", op = "NegativeLogLikelihoodLoss", reduction = "mean"}} {
  %w = train.get_param @w : tensor<3x4xf32>
  %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
