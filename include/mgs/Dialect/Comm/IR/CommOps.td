//===- CommOps.td - comm dialect: gradient communication ---*- tablegen -*-===//

#ifndef MGS_DIALECT_COMM_IR_COMMOPS_TD
#define MGS_DIALECT_COMM_IR_COMMOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Comm_Dialect : Dialect {
  let name = "comm";
  let cppNamespace = "::mgs::comm";
  let summary = "Gradient communication between data-parallel workers";
  let description = [{
    Collectives over the workers of a data-parallel job, asynchronous: a
    `*_start` op returns a `!comm.request` and `comm.wait` gives its result, so
    that communication overlaps the rest of the backward pass (wait-free
    backprop). Results are averages over the workers.
  }];
  let useDefaultTypePrinterParser = 1;

  // The attributes the communication passes hand each other, declared here
  // so that each is named once (CommDialect::get*AttrHelper()) and verified
  // (CommDialect::verifyOperationAttribute).
  let discardableAttrs = (ins
    // On the train.concat that comm-merge-buckets builds from a bucket's
    // gradients: the bucket's name ("first..last" parameter), which
    // comm-sparsify-topk names its residual after and convert-train-to-runtime
    // uses to compute the gradients in place in the bucket's buffer.
    "::mlir::StringAttr":$bucket,
    // On a comm.all_reduce_start that the plan keeps dense: comm-sparsify-topk
    // leaves it alone.
    "::mlir::UnitAttr":$dense,
    // On a comm.all_reduce_start whose plan exchanges it by another sparse
    // collective than the all-gather: "gtopk" (global top-k) or
    // "sparse-allreduce" (balanced sparse all-reduce); comm-sparsify-topk
    // lowers it to that collective.
    "::mlir::StringAttr":$collective
  );
  let hasOperationAttrVerify = 1;
}

class Comm_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Comm_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Comm_RequestType : Comm_Type<"Request", "request"> {
  let summary = "A collective in flight, and the types of its results";
  let description = [{
    ```mlir
    !comm.request<tensor<10x64xf32>>
    !comm.request<tensor<16xf32>, tensor<16xi32>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::Type">:$resultTypes);
  let assemblyFormat = "`<` $resultTypes `>`";
}

class Comm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Comm_Dialect, mnemonic, traits>;

def Comm_AllReduceStartOp : Comm_Op<"all_reduce_start", [MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the request carries the input's type", "input", "request",
                   "::mgs::comm::RequestType::get($_self.getContext(), {$_self})">]> {
  let summary = "Starts averaging a dense tensor over the workers";
  let description = [{
    The average over the workers of `input` is the result of the `comm.wait`
    on the returned request. Not `Pure`: it talks to the other workers, and
    every worker must start the same collectives in the same order.

    ```mlir
    %r = comm.all_reduce_start %g : tensor<10xf32>
    %avg = comm.wait %r : !comm.request<tensor<10xf32>>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$input);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Comm_WaitOp : Comm_Op<"wait", [MemoryEffects<[MemWrite]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Waits for a collective and returns its results";
  let description = [{
    ```mlir
    %avg = comm.wait %r : !comm.request<tensor<10xf32>>
    ```
  }];
  let arguments = (ins Comm_RequestType:$request);
  let results = (outs Variadic<StaticShapeTensorOf<[F32, I32]>>:$results);
  let assemblyFormat = "$request attr-dict `:` type($request)";
}

def Comm_TopKSparsifyOp : Comm_Op<"topk_sparsify", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, MemoryEffects<[MemWrite]>]> {
  let summary = "Top-k of a gradient plus its residual, with error feedback";
  let description = [{
    acc = grad + residual; `values` and `indices` are the `k` entries of
    largest magnitude of acc (ties: the lower index; indices ascending) and
    the residual parameter becomes acc with those entries zeroed, so nothing
    is lost: what is not sent now is added back next step.

    ```mlir
    %v, %i = comm.topk_sparsify %g, @"mgs.residual/fc.weight" {k = 8 : i64}
        : tensor<10x64xf32> -> tensor<8xf32>, tensor<8xi32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$grad, FlatSymbolRefAttr:$residual, I64Attr:$k);
  let results = (outs StaticShapeTensorOf<[F32]>:$values, StaticShapeTensorOf<[I32]>:$indices);
  let assemblyFormat = "$grad `,` $residual attr-dict `:` type($grad) `->` type($values) `,` type($indices)";
  let hasVerifier = 1;
}

def Comm_AllGatherStartOp : Comm_Op<"all_gather_start", [MemoryEffects<[MemWrite]>]> {
  let summary = "Starts gathering every worker's sparse gradient";
  let description = [{
    After the wait, the first result holds every worker's `values` (worker r
    at r * k) and the second their `indices`; `workers` is the number of
    workers the model is compiled for. With `half_values` the values travel
    as IEEE half precision, with `bf16_values` as bfloat16 (either rounded to
    nearest even; not both), and arrive widened back to f32: 6 bytes per entry
    instead of 8.

    ```mlir
    %r = comm.all_gather_start %v, %i {workers = 4 : i64}
        : tensor<8xf32>, tensor<8xi32> -> !comm.request<tensor<32xf32>, tensor<32xi32>>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$values, StaticShapeTensorOf<[I32]>:$indices,
                       I64Attr:$workers, UnitAttr:$half_values, UnitAttr:$bf16_values);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = "$values `,` $indices attr-dict `:` type($values) `,` type($indices) `->` type($request)";
  let hasVerifier = 1;
}

def Comm_GTopKStartOp : Comm_Op<"gtopk_start", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, MemoryEffects<[MemWrite]>]> {
  let summary = "Starts the global top-k of every worker's sparse gradient";
  let description = [{
    gTop-k (Shi et al., ICDCS 2019): log2(P) rounds of pairwise exchange of k
    entries, each keeping the top k of the merge (values at a shared index
    summed), the workers beyond a power of two folded in first. After the
    wait, the results are the k global entries (values summed over the
    workers and divided by `workers`, indices ascending), the same on every
    worker; each of this worker's entries the global top-k dropped is added
    back into the `residual` parameter (error feedback stays exact). Apply
    with `comm.scatter_add` over 1 worker.

    ```mlir
    %r = comm.gtopk_start %v, %i, @"mgs.residual/fc.weight" {workers = 4 : i64}
        : tensor<8xf32>, tensor<8xi32> -> !comm.request<tensor<8xf32>, tensor<8xi32>>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$values, StaticShapeTensorOf<[I32]>:$indices,
                       FlatSymbolRefAttr:$residual, I64Attr:$workers);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = "$values `,` $indices `,` $residual attr-dict `:` type($values) `,` type($indices) `->` type($request)";
  let hasVerifier = 1;
}

def Comm_SparseAllReduceStartOp : Comm_Op<"sparse_all_reduce_start", [MemoryEffects<[MemWrite]>]> {
  let summary = "Starts the balanced sparse all-reduce of every worker's sparse gradient";
  let description = [{
    Ok-Topk / SparCML: the index space is split into one region a worker
    (`balanced`: at the workers' mean index quantiles; else equal ranges),
    each worker sums its region's entries and the reduced regions (sparse, or
    dense when more than half full) are gathered. The wait's result is the
    dense average over the workers of their sparse gradients, bit for bit
    what `comm.scatter_add` of every worker's entries gives.

    ```mlir
    %r = comm.sparse_all_reduce_start %v, %i {workers = 4 : i64, balanced}
        : tensor<8xf32>, tensor<8xi32> -> !comm.request<tensor<10x64xf32>>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$values, StaticShapeTensorOf<[I32]>:$indices,
                       I64Attr:$workers, UnitAttr:$balanced);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = "$values `,` $indices attr-dict `:` type($values) `,` type($indices) `->` type($request)";
  let hasVerifier = 1;
}

def Comm_ScatterAddOp : Comm_Op<"scatter_add", [Pure]> {
  let summary = "The average of the workers' sparse gradients, as a dense tensor";
  let description = [{
    result = 0; result.flat[indices[j]] += values[j] for every j; result /= workers.

    ```mlir
    %avg = comm.scatter_add %vs, %is {workers = 4 : i64} : tensor<32xf32>, tensor<32xi32> -> tensor<10x64xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$values, StaticShapeTensorOf<[I32]>:$indices,
                       I64Attr:$workers);
  let results = (outs StaticShapeTensorOf<[F32]>:$result);
  let assemblyFormat = "$values `,` $indices attr-dict `:` type($values) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

#endif // MGS_DIALECT_COMM_IR_COMMOPS_TD
