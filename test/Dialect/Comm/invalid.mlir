// RUN: mgs-opt %s -split-input-file -verify-diagnostics

func.func @wait_wrong_result(%g: tensor<10xf32>) {
  %r = comm.all_reduce_start %g : tensor<10xf32>
  // expected-error @+1 {{'comm.wait' op failed to verify that the result has the request's type}}
  %a = "comm.wait"(%r) : (!comm.request<tensor<10xf32>>) -> tensor<11xf32>
  return
}

// -----

func.func @start_wrong_request(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.all_reduce_start' op failed to verify that the request carries the input's type}}
  %r = "comm.all_reduce_start"(%g) : (tensor<10xf32>) -> !comm.request<tensor<3xf32>>
  return
}

// -----

func.func @start_not_f32(%g: tensor<10xi64>) {
  // expected-error @+1 {{'comm.all_reduce_start' op operand #0 must be statically shaped tensor of 32-bit float values}}
  %r = "comm.all_reduce_start"(%g) : (tensor<10xi64>) -> !comm.request<tensor<10xi64>>
  return
}
