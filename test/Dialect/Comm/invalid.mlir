// RUN: mgs-opt %s -split-input-file -verify-diagnostics

func.func @wait_wrong_result(%g: tensor<10xf32>) {
  %r = comm.all_reduce_start %g : tensor<10xf32>
  // expected-error @+2 {{'comm.wait' op inferred type(s) 'tensor<10xf32>' are incompatible with return type(s) of operation 'tensor<11xf32>'}}
  // expected-error @+1 {{'comm.wait' op failed to infer returned types}}
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

// -----

func.func @topk_k_too_large(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.topk_sparsify' op k (11) must be in [1, 10]}}
  %v, %i = comm.topk_sparsify %g, @r {k = 11 : i64} : tensor<10xf32> -> tensor<11xf32>, tensor<11xi32>
  return
}

// -----

func.func @topk_shapes(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.topk_sparsify' op values and indices must have shape 2}}
  %v, %i = comm.topk_sparsify %g, @r {k = 2 : i64} : tensor<10xf32> -> tensor<3xf32>, tensor<2xi32>
  return
}

// -----

func.func @topk_missing_residual(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.topk_sparsify' op residual 'r' does not name a train.parameter}}
  %v, %i = comm.topk_sparsify %g, @r {k = 2 : i64} : tensor<10xf32> -> tensor<2xf32>, tensor<2xi32>
  return
}

// -----

train.parameter @r : tensor<12xf32>
func.func @topk_residual_type(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.topk_sparsify' op residual 'r' must have the gradient's type 'tensor<10xf32>'}}
  %v, %i = comm.topk_sparsify %g, @r {k = 2 : i64} : tensor<10xf32> -> tensor<2xf32>, tensor<2xi32>
  return
}

// -----

func.func @gather_request(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.all_gather_start' op the request must carry 4 x 2 gathered values and indices}}
  %r = comm.all_gather_start %v, %i {workers = 4 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<6xf32>, tensor<8xi32>>
  return
}

// -----

func.func @gather_two_formats(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.all_gather_start' op half_values and bf16_values exclude each other}}
  %r = comm.all_gather_start %v, %i {half_values, bf16_values, workers = 2 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<4xf32>, tensor<4xi32>>
  return
}

// -----

func.func @gather_workers(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.all_gather_start' op workers must be in [1, 16777216], got 0}}
  %r = comm.all_gather_start %v, %i {workers = 0 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<0xf32>, tensor<0xi32>>
  return
}

// -----

func.func @scatter_sizes(%v: tensor<4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'comm.scatter_add' op values and indices differ in size}}
  %d = comm.scatter_add %v, %i {workers = 2 : i64} : tensor<4xf32>, tensor<3xi32> -> tensor<10xf32>
  return
}

// -----

// The attributes the communication passes exchange are declared and checked.
func.func @dense_not_unit(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.all_reduce_start' op 'comm.dense' must be a unit attribute}}
  %r = comm.all_reduce_start %g {comm.dense = 1 : i64} : tensor<10xf32>
  return
}

// -----

func.func @dense_on_wrong_op(%g: tensor<10xf32>) {
  %r = comm.all_reduce_start %g : tensor<10xf32>
  // expected-error @+1 {{'comm.wait' op 'comm.dense' belongs on a comm.all_reduce_start}}
  %a = comm.wait %r {comm.dense} : !comm.request<tensor<10xf32>>
  return
}

// -----

func.func @collective_unknown(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.all_reduce_start' op 'comm.collective' must be "gtopk" or "sparse-allreduce"}}
  %r = comm.all_reduce_start %g {comm.collective = "allgather"} : tensor<10xf32>
  return
}

// -----

func.func @collective_not_string(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.all_reduce_start' op 'comm.collective' must be "gtopk" or "sparse-allreduce"}}
  %r = comm.all_reduce_start %g {comm.collective = 1 : i64} : tensor<10xf32>
  return
}

// -----

func.func @collective_on_wrong_op(%g: tensor<10xf32>) {
  %r = comm.all_reduce_start %g {comm.collective = "gtopk"} : tensor<10xf32>
  // expected-error @+1 {{'comm.wait' op 'comm.collective' belongs on a comm.all_reduce_start}}
  %a = comm.wait %r {comm.collective = "sparse-allreduce"} : !comm.request<tensor<10xf32>>
  return
}

// -----

func.func @bucket_not_string(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'train.concat' op 'comm.bucket' must be a string (the bucket's name)}}
  %c = train.concat %a, %b {axis = 0 : i64, comm.bucket = 3 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @bucket_on_wrong_op(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.all_reduce_start' op 'comm.bucket' belongs on the train.concat of a bucket's gradients}}
  %r = comm.all_reduce_start %g {comm.bucket = "a..b"} : tensor<10xf32>
  return
}

// -----

func.func @unknown_comm_attribute(%g: tensor<10xf32>) {
  // expected-error @+1 {{'comm.all_reduce_start' op unknown comm dialect attribute 'comm.sparse'}}
  %r = comm.all_reduce_start %g {comm.sparse} : tensor<10xf32>
  return
}

// -----

func.func @gtopk_request_types(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.gtopk_start' op the request must carry the global values and indices, typed as the values and indices sent}}
  %r = comm.gtopk_start %v, %i, @res {workers = 4 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<8xf32>, tensor<8xi32>>
  return
}

// -----

func.func @gtopk_sizes(%v: tensor<2xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'comm.gtopk_start' op values and indices differ in size}}
  %r = comm.gtopk_start %v, %i, @res {workers = 4 : i64} : tensor<2xf32>, tensor<3xi32> -> !comm.request<tensor<2xf32>, tensor<3xi32>>
  return
}

// -----

func.func @gtopk_residual_not_a_parameter(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.gtopk_start' op residual 'nowhere' does not name a train.parameter}}
  %r = comm.gtopk_start %v, %i, @nowhere {workers = 4 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<2xf32>, tensor<2xi32>>
  return
}

// -----

func.func @sparse_all_reduce_result(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.sparse_all_reduce_start' op the request must carry one dense f32 tensor}}
  %r = comm.sparse_all_reduce_start %v, %i {workers = 4 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<10xf32>, tensor<10xf32>>
  return
}

// -----

func.func @sparse_all_reduce_too_small(%v: tensor<4xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'comm.sparse_all_reduce_start' op the dense result (3 elements) is smaller than the 4 entries sent}}
  %r = comm.sparse_all_reduce_start %v, %i {workers = 4 : i64} : tensor<4xf32>, tensor<4xi32> -> !comm.request<tensor<3xf32>>
  return
}

// -----

func.func @sparse_all_reduce_workers(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.sparse_all_reduce_start' op workers must be in [1, 16777216], got 0}}
  %r = comm.sparse_all_reduce_start %v, %i {workers = 0 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<10xf32>>
  return
}

// -----

// The residual of the global top-k is the sparsified gradient's: a smaller
// parameter would be written past its end.
train.parameter @tiny : tensor<1xf32> = dense<0.0> : tensor<1xf32>
train.parameter @res : tensor<64xf32> = dense<0.0> : tensor<64xf32>
func.func @gtopk_residual_type(%g: tensor<64xf32>) {
  %v, %i = comm.topk_sparsify %g, @res {k = 4 : i64} : tensor<64xf32> -> tensor<4xf32>, tensor<4xi32>
  // expected-error @+1 {{'comm.gtopk_start' op residual 'tiny' must have the gradient's type 'tensor<64xf32>'}}
  %q = comm.gtopk_start %v, %i, @tiny {workers = 2 : i64} : tensor<4xf32>, tensor<4xi32> -> !comm.request<tensor<4xf32>, tensor<4xi32>>
  return
}

// -----

// workers * k would wrap around int64: workers is bounded as the passes bound it.
func.func @gather_workers_too_many(%v: tensor<3xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'comm.all_gather_start' op workers must be in [1, 16777216], got 6148914691236517206}}
  %r = comm.all_gather_start %v, %i {workers = 6148914691236517206 : i64} : tensor<3xf32>, tensor<3xi32> -> !comm.request<tensor<2xf32>, tensor<2xi32>>
  return
}

// -----

func.func @gtopk_workers_too_many(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.gtopk_start' op workers must be in [1, 16777216], got 16777217}}
  %r = comm.gtopk_start %v, %i, @res {workers = 16777217 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<2xf32>, tensor<2xi32>>
  return
}

// -----

func.func @sparse_all_reduce_workers_negative(%v: tensor<2xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'comm.sparse_all_reduce_start' op workers must be in [1, 16777216], got -1}}
  %r = comm.sparse_all_reduce_start %v, %i {workers = -1 : i64} : tensor<2xf32>, tensor<2xi32> -> !comm.request<tensor<10xf32>>
  return
}

// -----

func.func @scatter_workers_too_many(%v: tensor<4xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'comm.scatter_add' op workers must be in [1, 16777216], got 33554432}}
  %d = comm.scatter_add %v, %i {workers = 33554432 : i64} : tensor<4xf32>, tensor<4xi32> -> tensor<10xf32>
  return
}
