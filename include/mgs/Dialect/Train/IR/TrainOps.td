//===- TrainOps.td - train dialect operations --------------*- tablegen -*-===//
//
// Forward ops mirror the ONNX operators they are imported from (same
// semantics, attributes resolved to explicit values: auto_pad becomes pads,
// constant inputs such as Clip's bounds or Pad's pads become attributes).
// Every verifier recomputes the result shape and compares it with the
// declared result type.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_DIALECT_TRAIN_IR_TRAINOPS_TD
#define MGS_DIALECT_TRAIN_IR_TRAINOPS_TD

include "mgs/Dialect/Train/IR/TrainDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Train_Tensor : StaticShapeTensorOf<[F32]>;
def Train_MaskTensor : StaticShapeTensorOf<[I1]>;
def Train_IndexTensor : StaticShapeTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Train_ParameterOp : Train_Op<"parameter", [Symbol, HasParent<"mlir::ModuleOp">]> {
  let summary = "A named model parameter or state buffer";
  let description = [{
    Declares one ONNX initializer. `trainable` marks the values that the
    optimizer updates (weights, biases, BatchNorm scale and shift); the others
    are state updated by the forward pass (BatchNorm running statistics).
    Without `initial_value` the values are read, by name, from the module's
    `train.weights_file`, so a 528 MB model prints as a few kilobytes.

    ```mlir
    train.parameter @fc.weight trainable : tensor<10x64xf32>
    train.parameter @bn.running_mean : tensor<16xf32> = dense<0.0> : tensor<16xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Train_Tensor>:$type,
                       UnitAttr:$trainable,
                       OptionalAttr<ElementsAttr>:$initial_value);
  let assemblyFormat = [{
    $sym_name (`trainable` $trainable^)? `:` $type (`=` $initial_value^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    mlir::RankedTensorType getTensorType() {
      return mlir::cast<mlir::RankedTensorType>(getType());
    }
  }];
}

def Train_GetParamOp : Train_Op<"get_param", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads the current value of a parameter";
  let description = [{
    ```mlir
    %w = train.get_param @fc.weight : tensor<10x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Train_BinaryOp<string mnemonic, string onnxName> : Train_Op<mnemonic, [Pure]> {
  let summary = "Elementwise " # onnxName # " with multidirectional (numpy) broadcasting";
  let description = [{
    ONNX `}] # onnxName # [{`: the operands broadcast against each other
    and the result has the broadcast shape.

    ```mlir
    %r = train.}] # mnemonic # [{ %a, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$lhs, Train_Tensor:$rhs);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

def Train_AddOp : Train_BinaryOp<"add", "Add">;
def Train_SubOp : Train_BinaryOp<"sub", "Sub">;
def Train_MulOp : Train_BinaryOp<"mul", "Mul">;
def Train_DivOp : Train_BinaryOp<"div", "Div">;

class Train_UnaryOp<string mnemonic, string onnxName, dag attrs = (ins)>
    : Train_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise " # onnxName;
  let description = [{
    ONNX `}] # onnxName # [{`, elementwise.
  }];
  let arguments = !con((ins Train_Tensor:$input), attrs);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_ReluOp : Train_UnaryOp<"relu", "Relu">;
def Train_SigmoidOp : Train_UnaryOp<"sigmoid", "Sigmoid">;
def Train_TanhOp : Train_UnaryOp<"tanh", "Tanh">;
def Train_LeakyReluOp : Train_UnaryOp<"leaky_relu", "LeakyRelu", (ins F32Attr:$alpha)>;
def Train_ClipOp : Train_Op<"clip", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Elementwise clamp to [min, max] (ONNX Clip)";
  let description = [{
    min(max(x, min), max) with one-element bounds. The importer passes the
    extreme floats for a missing bound, as ONNX defines it.

    ```mlir
    %y = train.clip %x, %lo, %hi : tensor<4xf32>, tensor<f32>, tensor<f32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$min, Train_Tensor:$max);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input `,` $min `,` $max attr-dict `:` type($input) `,` type($min) `,` type($max)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Train_GemmOp : Train_Op<"gemm", [Pure]> {
  let summary = "General matrix multiply: alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX `Gemm`. A and B are 2-D; op() transposes when `trans_a`/`trans_b`.
    C, when present, broadcasts unidirectionally to the M x N result.

    ```mlir
    %y = train.gemm %x, %w, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
        : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$a, Train_Tensor:$b, Optional<Train_Tensor>:$c,
                       F32Attr:$alpha, F32Attr:$beta, BoolAttr:$trans_a, BoolAttr:$trans_b);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_MatMulOp : Train_Op<"matmul", [Pure]> {
  let summary = "Matrix product with numpy.matmul semantics";
  let description = [{
    ONNX `MatMul`: 1-D operands are promoted (and the added dimension removed
    from the result); leading dimensions broadcast.

    ```mlir
    %y = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$lhs, Train_Tensor:$rhs);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Train_ConvOp : Train_Op<"conv", [Pure]> {
  let summary = "N-D grouped convolution (ONNX Conv)";
  let description = [{
    Input N x C x D1..Dn, weight M x C/group x k1..kn, optional bias M.
    `pads` holds the begin pads of every spatial axis, then the end pads
    (ONNX order); auto_pad is resolved to explicit pads at import.

    ```mlir
    %y = train.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64,
                                pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
        : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$weight, Optional<Train_Tensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_MaxPoolOp : Train_Op<"max_pool", [Pure]> {
  let summary = "N-D max pooling (ONNX MaxPool)";
  let description = [{
    Padded positions never win. The optional second result holds, per output,
    the flat index of the chosen input element (ONNX `Indices`; row-major
    when `storage_order` is 0, column-major per image when 1).

    ```mlir
    %y = train.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>,
                            pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>}
        : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode, I64Attr:$storage_order);
  let results = (outs Train_Tensor:$result, Optional<Train_IndexTensor>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_AveragePoolOp : Train_Op<"average_pool", [Pure]> {
  let summary = "N-D average pooling (ONNX AveragePool)";
  let description = [{
    With `count_include_pad` the divisor is the full window size, otherwise
    the number of non-padding elements in the window.

    ```mlir
    %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>,
                                pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
        : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_GlobalAveragePoolOp : Train_Op<"global_average_pool", [Pure]> {
  let summary = "Mean over all spatial dimensions (ONNX GlobalAveragePool)";
  let description = [{
    ```mlir
    %y = train.global_average_pool %x : (tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization and regularization
//===----------------------------------------------------------------------===//

def Train_BatchNormOp : Train_Op<"batch_norm", [Pure]> {
  let summary = "Batch normalization over the channel axis (ONNX BatchNormalization)";
  let description = [{
    Input N x C x D1..Dn; scale, bias, mean and var are C-vectors. Without
    `training` it normalizes with the given mean/var and returns them as the
    running statistics. With `training` it normalizes with the batch
    statistics (biased variance) and returns the updated running statistics
    `running = running * momentum + batch * (1 - momentum)` (ONNX opset 15;
    the opset-9..14 5-output training form is imported to the same op).

    ```mlir
    %y, %rm, %rv = train.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training}
        : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
        -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$scale, Train_Tensor:$bias,
                       Train_Tensor:$mean, Train_Tensor:$var,
                       F32Attr:$epsilon, F32Attr:$momentum, UnitAttr:$training);
  let results = (outs Train_Tensor:$result, Train_Tensor:$running_mean, Train_Tensor:$running_var);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_DropoutOp : Train_Op<"dropout", []> {
  let summary = "Dropout (ONNX Dropout)";
  let description = [{
    In `training` mode each element is zeroed with probability `ratio` and the
    kept ones are scaled by 1 / (1 - ratio); `mask` says which were kept. In
    inference mode the output is the input and the mask is all true. Not
    `Pure`: training mode draws random numbers.

    ```mlir
    %y, %mask = train.dropout %x {ratio = 5.0e-01 : f32, training} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, F32Attr:$ratio, UnitAttr:$training,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Train_Tensor:$result, Train_MaskTensor:$mask);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_SoftmaxOp : Train_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax along one axis (ONNX Softmax, opset 13 semantics)";
  let description = [{
    Opset-11/12 models, which softmax over the input flattened to 2-D at
    `axis`, are imported as reshape + softmax + reshape.

    ```mlir
    %y = train.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, I64Attr:$axis);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Train_LogSoftmaxOp : Train_Op<"log_softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Log of softmax along one axis (ONNX LogSoftmax, opset 13 semantics)";
  let description = [{
    ```mlir
    %y = train.log_softmax %x {axis = 1 : i64} : tensor<2x10xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, I64Attr:$axis);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Train_FlattenOp : Train_Op<"flatten", [Pure]> {
  let summary = "Flatten to 2-D at an axis (ONNX Flatten)";
  let description = [{
    ```mlir
    %y = train.flatten %x {axis = 1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, I64Attr:$axis);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_ReshapeOp : Train_Op<"reshape", [Pure]> {
  let summary = "Reshape to the result type (ONNX Reshape with a known target shape)";
  let description = [{
    The element order is unchanged; the number of elements must match.

    ```mlir
    %y = train.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_TransposeOp : Train_Op<"transpose", [Pure]> {
  let summary = "Permute dimensions (ONNX Transpose)";
  let description = [{
    Result dimension i is input dimension perm[i].

    ```mlir
    %y = train.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_ConcatOp : Train_Op<"concat", [Pure]> {
  let summary = "Concatenate along an axis (ONNX Concat)";
  let description = [{
    ```mlir
    %y = train.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_PadOp : Train_Op<"pad", [Pure]> {
  let summary = "Constant padding (ONNX Pad, mode constant)";
  let description = [{
    `pads` holds the begin amounts of every axis, then the end amounts; a
    negative amount removes elements.

    ```mlir
    %y = train.pad %x {pads = array<i64: 0, 1, 0, 1>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$pads, F32Attr:$value);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // MGS_DIALECT_TRAIN_IR_TRAINOPS_TD
