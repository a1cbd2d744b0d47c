// RUN: mgs-opt %s -split-input-file -verify-diagnostics --convert-train-to-runtime
// RUN: not mgs-opt %s -split-input-file --convert-train-to-runtime="density-schedule=0.5,nan" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not mgs-opt %s -split-input-file --convert-train-to-runtime="density-schedule=-1" 2>&1 | FileCheck %s --check-prefix=SCHEDULE-NEG
// SCHEDULE: error: convert-train-to-runtime: density-schedule: each density must be in (0, 1], got nan
// SCHEDULE-NEG: error: convert-train-to-runtime: density-schedule: each density must be in (0, 1], got -1

// The step functions' signatures, as train-build-step builds them, are checked before the
// lowering relies on them (each of these crashed it).

// A scalar first input: no batch dimension.
// expected-error @+1 {{the model's input 0 ('x') is a scalar ('tensor<f32>'): a compiled model takes a batch of samples along its first input's dimension 0}}
func.func @eval_step(%x: tensor<f32> {train.name = "x"}) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

func.func @eval_step(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  return %x : tensor<4x10xf32>
}
// The loss and the output swapped.
// expected-error @+1 {{@train_step's first result must be the loss, a tensor<f32>; it is 'tensor<4x10xf32>'}}
func.func @train_step(%x: tensor<4x10xf32>, %y: tensor<4xi64>) -> (tensor<4x10xf32>, tensor<f32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %x, %c : tensor<4x10xf32>, tensor<f32>
}

// -----

func.func @eval_step(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  return %x : tensor<4x10xf32>
}
// No results.
// expected-error @+1 {{@train_step must take the inputs and the labels last and return the loss and the model's first output}}
func.func @train_step(%x: tensor<4x10xf32>, %y: tensor<4xi64>) {
  return
}

// -----

// A batch of no samples.
// expected-error @+1 {{the model's input 0 is 'tensor<0x10xf32>': a compiled model needs a static, positive batch size}}
func.func @eval_step(%x: tensor<0x10xf32>) -> tensor<0x10xf32> {
  return %x : tensor<0x10xf32>
}

// -----

func.func @eval_step(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  return %x : tensor<4x10xf32>
}
func.func @train_step(%x: tensor<4x10xf32>, %y: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %x : tensor<f32>, tensor<4x10xf32>
}
// An accumulation step without its batch count.
// expected-error @+1 {{@accum_step must have @train_step's type and a train.accumulate of 2 or more (as train-accumulate-gradients builds it)}}
func.func @accum_step(%x: tensor<4x10xf32>, %y: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %x : tensor<f32>, tensor<4x10xf32>
}
