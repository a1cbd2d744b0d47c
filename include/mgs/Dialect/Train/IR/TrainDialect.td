//===- TrainDialect.td - The train dialect -----------------*- tablegen -*-===//
//
// The `train` dialect holds an imported model (its forward ops and its
// parameters) and, later in the pipeline, the training step built from it.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_DIALECT_TRAIN_IR_TRAINDIALECT_TD
#define MGS_DIALECT_TRAIN_IR_TRAINDIALECT_TD

include "mlir/IR/OpBase.td"

def Train_Dialect : Dialect {
  let name = "train";
  let cppNamespace = "::mgs::train";
  let summary = "Model layers, parameters and the training step";
  let description = [{
    The forward graph of a model imported from ONNX, with ONNX's forward
    semantics, over statically shaped tensors. Parameters are module-level
    symbols (`train.parameter`) read with `train.get_param`; their values live
    outside the IR (the ONNX file the module was imported from, named by the
    module attribute `train.weights_file`) unless given inline.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect"];
}

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, traits>;

#endif // MGS_DIALECT_TRAIN_IR_TRAINDIALECT_TD
