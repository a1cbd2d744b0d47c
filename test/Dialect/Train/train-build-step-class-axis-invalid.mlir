// RUN: mgs-opt %s -split-input-file --train-build-step="class-axis=1" -verify-diagnostics

// Scores with no elements have no rows to train.
module {
  // expected-error @below {{train-build-step: the first output 'tensor<2x0x4xf32>' must have a static shape and elements}}
  func.func @forward(%x: tensor<2x0x4xf32>) -> tensor<2x0x4xf32> {
    return %x : tensor<2x0x4xf32>
  }
}

// -----

// A graph's own loss flattened its scores at import: no class axis to give.
module {
  // expected-error @below {{train-build-step: class-axis: the graph's loss sets the class axis (ONNX's: 1, its scores flattened at import)}}
  func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32>
      attributes {train.graph_loss = {labels = "y", node = "loss", op = "SoftmaxCrossEntropyLoss"}} {
    return %x : tensor<2x3xf32>
  }
}
