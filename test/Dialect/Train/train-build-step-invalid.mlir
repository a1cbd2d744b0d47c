// RUN: mgs-opt %s -split-input-file --train-build-step -verify-diagnostics

// expected-error @below {{train-build-step: no function @forward (the imported forward graph) in the module}}
module {
  func.func @other() {
    return
  }
}

// -----

module {
  // expected-error @below {{train-build-step: the first output is the logits and must be N x C (batch x classes), or of rank >= 3 with class-axis, got 'tensor<6xf32>'}}
  func.func @forward(%x: tensor<6xf32>) -> tensor<6xf32> {
    return %x : tensor<6xf32>
  }
}

// -----

module {
  // expected-error @below {{train-build-step: the first output 'tensor<2x3x4xf32>' has rank 3: the cross-entropy needs its class axis: class-axis 1}}
  func.func @forward(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    return %x : tensor<2x3x4xf32>
  }
}

// -----

module {
  train.parameter @m : tensor<3xf32>
  train.parameter @s trainable : tensor<3xf32>
  func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %s = train.get_param @s : tensor<3xf32>
    %m = train.get_param @m : tensor<3xf32>
    // expected-error @below {{'train.batch_norm' op in inference form (fixed statistics) cannot be trained; export the model in training mode (torch.onnx.export(..., training=TrainingMode.TRAINING); PyTorch 2.x's torch.export-based exporter (dynamo=True) writes BatchNorm in inference form even then, and mgs finds it trained only in the node metadata that exporter keeps by default: compile with mgsc --train-batchnorm, or export with dynamo=False)}}
    %y, %rm, %rv, %sm, %si = train.batch_norm %x, %s, %s, %m, %m {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32}
        : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
        -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    return %y : tensor<2x3xf32>
  }
}
