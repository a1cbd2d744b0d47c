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

// -----

// The pass builds @eval_step (and @train_step): an existing one is a clash,
// reported where it is, before any IR is created.
module {
  func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
  // expected-error @below {{train-build-step: the module has a symbol @eval_step already; the pass builds @eval_step from @forward}}
  func.func @eval_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}

// -----

module {
  func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
  // expected-error @below {{train-build-step: the module has a symbol @train_step already; the pass builds @train_step from @forward}}
  func.func @train_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}

// -----

// A cross-entropy over no classes: the runtime has nothing to normalize.
module {
  train.parameter @w trainable : tensor<0x4xf32>
  // expected-error @below {{train-build-step: the first output is the logits and has no classes, got 'tensor<2x0xf32>'}}
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x0xf32> {
    %w = train.get_param @w : tensor<0x4xf32>
    %y = train.gemm %x, %w {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
        : (tensor<2x4xf32>, tensor<0x4xf32>) -> tensor<2x0xf32>
    return %y : tensor<2x0xf32>
  }
}
