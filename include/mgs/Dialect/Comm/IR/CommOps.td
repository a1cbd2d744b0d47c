//===- CommOps.td - comm dialect: gradient communication ---*- tablegen -*-===//

#ifndef MGS_DIALECT_COMM_IR_COMMOPS_TD
#define MGS_DIALECT_COMM_IR_COMMOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
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
}

class Comm_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Comm_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Comm_RequestType : Comm_Type<"Request", "request"> {
  let summary = "A collective in flight, and the type of its result";
  let description = [{
    ```mlir
    !comm.request<tensor<10x64xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$resultType);
  let assemblyFormat = "`<` $resultType `>`";
}

class Comm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Comm_Dialect, mnemonic, traits>;

def Comm_AllReduceStartOp : Comm_Op<"all_reduce_start", [MemoryEffects<[MemWrite]>,
    TypesMatchWith<"the request carries the input's type", "input", "request",
                   "::mgs::comm::RequestType::get($_self.getContext(), ::mlir::cast<::mlir::RankedTensorType>($_self))">]> {
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
    TypesMatchWith<"the result has the request's type", "request", "result",
                   "::mlir::cast<::mgs::comm::RequestType>($_self).getResultType()">]> {
  let summary = "Waits for a collective and returns its result";
  let description = [{
    ```mlir
    %avg = comm.wait %r : !comm.request<tensor<10xf32>>
    ```
  }];
  let arguments = (ins Comm_RequestType:$request);
  let results = (outs StaticShapeTensorOf<[F32]>:$result);
  let assemblyFormat = "$request attr-dict `:` type($request)";
}

#endif // MGS_DIALECT_COMM_IR_COMMOPS_TD
