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

class Train_CompareOp<string mnemonic, string onnxName> : Train_BinaryOp<mnemonic, onnxName> {
  let summary = "Elementwise ONNX " # onnxName # " as 1.0 or 0.0, with numpy broadcasting";
  let description = [{
    1.0 where the comparison of the broadcast operands holds, 0.0 where it
    does not (where either operand is NaN). Piecewise constant: reverse-mode
    differentiation passes no gradient through it. ONNX's Less and
    LessOrEqual are these with the operands swapped.

    ```mlir
    %m = train.}] # mnemonic # [{ %a, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
    ```
  }];
}

def Train_GreaterOp : Train_CompareOp<"greater", "Greater">;
def Train_GreaterOrEqualOp : Train_CompareOp<"greater_equal", "GreaterOrEqual">;
def Train_EqualOp : Train_CompareOp<"equal", "Equal">;

def Train_KeepWhereOp : Train_BinaryOp<"keep_where", "Where"> {
  let summary = "lhs where rhs is not 0, else 0 (one branch of ONNX Where)";
  let description = [{
    The broadcast lhs where the broadcast rhs (a condition held as 1.0 or
    0.0) is not 0, and 0 elsewhere, whatever lhs holds there (NaN and
    infinities included: a multiplication by the condition would give NaN).
    ONNX `Where(c, x, y)` of computed data is keep_where(x, c) +
    keep_where(y, 1 - c). lhs's gradient is the result's kept likewise; rhs
    gets none.

    ```mlir
    %k = train.keep_where %x, %c : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
    ```
  }];
}

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
def Train_HardSigmoidOp : Train_UnaryOp<"hard_sigmoid", "HardSigmoid",
                                        (ins F32Attr:$alpha, F32Attr:$beta)> {
  let description = [{
    ONNX `HardSigmoid`: y = max(0, min(1, alpha x + beta)), alpha and beta
    finite (PyTorch's hardsigmoid exports alpha 1/6, beta 1/2).
  }];
  let hasVerifier = 1;
}
def Train_HardSwishOp : Train_UnaryOp<"hard_swish", "HardSwish"> {
  let description = [{
    ONNX `HardSwish`: y = x max(0, min(1, x / 6 + 1/2)).
  }];
}
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
    from the result); leading dimensions broadcast. `trans_lhs` / `trans_rhs`
    take that operand's last two dimensions swapped (rank >= 2), as a
    transpose of them would give (train-fold-transpose-into-matmul sets them).

    ```mlir
    %y = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
    %z = train.matmul %a, %w {trans_rhs = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$lhs, Train_Tensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_rhs);
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
    the number of non-padding elements in the window. `dilations` (ONNX
    opset 19; absent: all ones) spaces the window's taps as MaxPool's do.

    ```mlir
    %y = train.average_pool %x {ceil_mode = false, count_include_pad = false, kernel_shape = array<i64: 2, 2>,
                                pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
        : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `dilations`, or ones (one per spatial dimension) when it is absent.
    llvm::SmallVector<int64_t> getDilationsOrOnes();
  }];
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
    the opset-9..14 5-output training form is imported to the same op). The
    batch variance in that update is the biased one, as ONNX defines it, or
    the unbiased one with `unbiased_running_var` (PyTorch computes it so, and
    the importer sets it for models PyTorch exported).

    `saved_mean` and `saved_inv_std` are the batch mean and
    1 / sqrt(biased batch variance + epsilon) in training mode, kept for the
    backward pass (zero in inference mode).

    With `relu` (set by train-fuse-batch-norm-relu, not by the importer) the
    result is max(0, result): a ReLU fused into the normalization, which saves
    a pass over the activation forward and backward.

    ```mlir
    %y, %rm, %rv, %sm, %sis = train.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training}
        : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
        -> (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$scale, Train_Tensor:$bias,
                       Train_Tensor:$mean, Train_Tensor:$var,
                       F32Attr:$epsilon, F32Attr:$momentum, UnitAttr:$training,
                       UnitAttr:$unbiased_running_var, UnitAttr:$relu);
  let results = (outs Train_Tensor:$result, Train_Tensor:$running_mean, Train_Tensor:$running_var,
                      Train_Tensor:$saved_mean, Train_Tensor:$saved_inv_std);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_GatherOp : Train_Op<"gather", [Pure]> {
  let summary = "Rows of a table at computed indices (ONNX Gather on axis 0: an embedding)";
  let description = [{
    The result is `indices`'s shape followed by the table's rows' shape:
    result[i..., :] = table[indices[i...], :]. Every index must be in
    [-rows, rows) (a negative one counts from the end, as in ONNX); the
    runtime checks.
  }];
  let arguments = (ins Train_Tensor:$table, Train_IndexTensor:$indices);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$table `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_LSTMOp : Train_Op<"lstm", [Pure, AttrSizedOperandSegments]> {
  let summary = "One forward LSTM layer over a sequence (ONNX LSTM)";
  let description = [{
    ONNX's LSTM with one direction (forward), its default activations
    (sigmoid gates, tanh cell and output) and no peepholes. `input` is
    T x N x I (sequence first); `w` is 1 x 4H x I, `r` 1 x 4H x H and `b`
    1 x 8H, gates in ONNX's order i, o, f, c. The initial hidden and cell
    states `initial_h`, `initial_c` (1 x N x H) are optional: zero when
    absent. Results: every step's hidden state `y` (T x 1 x N x H), the last
    hidden and cell states `y_h`, `y_c` (1 x N x H), and `saved` (T x N x 5H:
    each step's four gate activations and cell state, for lstm_grad).

    ```mlir
    %y, %yh, %yc, %saved = train.lstm %x, %w, %r, %b initial_h %h0
        : (tensor<8x4x8xf32>, tensor<1x128x8xf32>, tensor<1x128x32xf32>, tensor<1x256xf32>,
           tensor<1x4x32xf32>)
        -> (tensor<8x1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<8x4x160xf32>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$w, Train_Tensor:$r, Train_Tensor:$b,
                       Optional<Train_Tensor>:$initial_h, Optional<Train_Tensor>:$initial_c);
  let results = (outs Train_Tensor:$y, Train_Tensor:$y_h, Train_Tensor:$y_c,
                      Train_Tensor:$saved);
  let assemblyFormat = [{
    $input `,` $w `,` $r `,` $b (`initial_h` $initial_h^)? (`initial_c` $initial_c^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_DropoutOp : Train_Op<"dropout", []> {
  let summary = "Dropout (ONNX Dropout)";
  let description = [{
    In `training` mode each element is zeroed with probability `ratio` and the
    kept ones are scaled by 1 / (1 - ratio); `mask` says which were kept. In
    inference mode the output is the input and the mask is all true. Not
    `Pure`: training mode draws random numbers.

    The mask may have fewer elements than the input: the input's leading
    dimensions followed by ones (e.g. `Nx1x1x1` for an `NxCxHxW` input). Each
    mask element then keeps or drops the whole block of input elements it
    broadcasts to: stochastic depth (drop path), which drops whole samples of
    a residual branch, is this op with a per-sample mask.

    ```mlir
    %y, %mask = train.dropout %x {ratio = 5.0e-01 : f32, training} : (tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xi1>)
    %z, %keep = train.dropout %a {ratio = 1.0e-01 : f32, training} : (tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<8x1x1x1xi1>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, F32Attr:$ratio, UnitAttr:$training,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Train_Tensor:$result, Train_MaskTensor:$mask);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_RandomNormalOp : Train_Op<"random_normal", []> {
  let summary = "Normally distributed values (ONNX RandomNormal, RandomNormalLike)";
  let description = [{
    A float32 tensor of values drawn from the normal distribution of `mean`
    and standard deviation `scale`, afresh at each execution (a VAE's
    reparameterization noise, a diffusion model's). Not `Pure`: it draws from
    the runtime's random stream (that of dropout), in training and in
    inference alike. No operand: nothing flows back through it.

    ```mlir
    %eps = train.random_normal {mean = 0.0 : f32, scale = 1.0 : f32} : tensor<8x4xf32>
    ```
  }];
  let arguments = (ins F32Attr:$mean, F32Attr:$scale);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_RandomUniformOp : Train_Op<"random_uniform", []> {
  let summary = "Uniformly distributed values (ONNX RandomUniform, RandomUniformLike)";
  let description = [{
    A float32 tensor of values drawn uniformly from [`low`, `high`), afresh at
    each execution (a diffusion objective's time steps: `(torch.rand(N) *
    T).long()`). Uniform draws that are a dropout mask (stochastic depth)
    import as `train.dropout` instead. Not `Pure`, no operand: as
    `train.random_normal`.

    ```mlir
    %u = train.random_uniform {high = 1.0 : f32, low = 0.0 : f32} : tensor<8xf32>
    ```
  }];
  let arguments = (ins F32Attr:$low, F32Attr:$high);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
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

//===----------------------------------------------------------------------===//
// Training step: loss, backward ops, optimizer
//===----------------------------------------------------------------------===//

def Train_SoftmaxCrossEntropyOp : Train_Op<"softmax_cross_entropy", [Pure]> {
  let summary = "Mean softmax cross-entropy against class labels, and its gradient";
  let description = [{
    `logits` is N x C, `labels` holds N class indices (in any shape: one a
    row, row-major), as
    torch.nn.functional.cross_entropy with reduction "mean": samples whose
    label is `ignore_index` (-100 unless given, PyTorch's default) count
    neither in the loss nor in the mean; with `label_smoothing` e in [0, 1]
    the target of a sample is (1 - e) onehot(label) + e / C. `loss` is the
    mean over the counted samples of -sum_j target_j log softmax(logits)_j
    (0 when every label of the batch is ignored, where PyTorch gives NaN);
    `dlogits` its gradient, (softmax(logits) - target) / count on the counted
    rows and 0 on the ignored ones. A label outside [0, C) that is not
    `ignore_index` is an error of the kernel (labels are data).

    With class weights (`weight`, C values: PyTorch's `weight=`), class j's
    term of every sample is weighted by weight[j] and the mean divides by the
    sum of weight[label] over the counted samples instead of their count (0
    when that sum is 0).

    With `sum` (reduction "sum") `loss` is the sum over the counted samples
    and `dlogits` is not divided by their count (or weight).

    With `in_graph` it is part of a loss the graph computes (its `loss` goes
    on into other ops: a sum of terms, a contrastive loss's two directions):
    a forward op, whose `dlogits` the backward multiplies by its loss's
    gradient (and so are not multiplied by the loss scale themselves).
    With `per_sample` as well (reduction "none"), `loss` holds each sample's
    loss (N values, 0 on an ignored sample; with class weights, weighted by
    its class's) and `dlogits` each row's own gradient, undivided: the
    backward multiplies row i by the gradient of loss[i].

    With `log_probabilities`, `logits` are log-probabilities already
    (torch.nn.functional.nll_loss, ONNX NegativeLogLikelihoodLoss, of
    anything): no softmax, a sample's term is -weight[label] logits[label]
    and `dlogits` -weight[label] (divided as above) at the label, 0
    elsewhere; `label_smoothing` must be 0.

    ```mlir
    %loss, %dlogits = train.softmax_cross_entropy %logits, %labels {label_smoothing = 0.1 : f32}
        : (tensor<32x10xf32>, tensor<32xi64>) -> (tensor<f32>, tensor<32x10xf32>)
    %wloss, %wdlogits = train.softmax_cross_entropy %logits, %labels weight %w
        : (tensor<32x10xf32>, tensor<32xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<32x10xf32>)
    ```
  }];
  let arguments = (ins Train_Tensor:$logits, Train_IndexTensor:$labels,
                       Optional<Train_Tensor>:$weight,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing,
                       UnitAttr:$sum, UnitAttr:$in_graph, UnitAttr:$per_sample,
                       UnitAttr:$log_probabilities);
  let results = (outs Train_Tensor:$loss, Train_Tensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $labels (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_ElementwiseLossOp : Train_Op<"elementwise_loss", [Pure,
    AllTypesMatch<["prediction", "target", "dprediction"]>]> {
  let summary = "Mean of a regression or multi-label loss against float targets, and its gradient";
  let description = [{
    The mean over every element of torch.nn's loss `kind` of `prediction`
    against `target` (the same shape): "mse" (x - t)^2, "l1" |x - t|,
    "smooth_l1" (0.5 (x - t)^2 / beta below beta, else |x - t| - 0.5 beta;
    beta 0 is l1), "bce_with_logits" (binary cross-entropy of sigmoid(x),
    computed stably: max(x, 0) - x t + log(1 + exp(-|x|))), "value" (x
    itself, `target` unread: a loss the model's graph computes, its gradient
    1). `dprediction` is
    the loss's gradient. bce_with_logits's `pos_weight` (BCEWithLogitsLoss's,
    one value per position of the last axis) weighs the positive term:
    -(p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))). With `sum`
    (reduction "sum") `loss` is the sum over the elements and `dprediction`
    is not divided by their count.

    ```mlir
    %loss, %dy = train.elementwise_loss "mse" %y, %targets
        : (tensor<32x4xf32>, tensor<32x4xf32>) -> (tensor<f32>, tensor<32x4xf32>)
    %bl, %bdy = train.elementwise_loss "bce_with_logits" %y, %targets pos_weight %p
        : (tensor<32x4xf32>, tensor<32x4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<32x4xf32>)
    ```
  }];
  let arguments = (ins StrAttr:$kind, Train_Tensor:$prediction, Train_Tensor:$target,
                       Optional<Train_Tensor>:$pos_weight,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta, UnitAttr:$sum);
  let results = (outs Train_Tensor:$loss, Train_Tensor:$dprediction);
  let assemblyFormat = [{
    $kind $prediction `,` $target (`pos_weight` $pos_weight^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_UnaryGradOp : Train_Op<"unary_grad", [Pure,
    AllTypesMatch<["input", "output", "grad", "result"]>]> {
  let summary = "Gradient of relu, leaky_relu, sigmoid, tanh, hard_sigmoid or hard_swish";
  let description = [{
    `kind` names the forward op; relu, leaky_relu, hard_sigmoid and hard_swish
    read `input`, sigmoid and tanh read the forward `output`. `alpha` is
    leaky_relu's slope and, with `beta`, the hard ops' alpha x + beta.

    ```mlir
    %dx = train.unary_grad "relu" %x, %y, %dy : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, Train_Tensor:$input, Train_Tensor:$output,
                       Train_Tensor:$grad, DefaultValuedAttr<F32Attr, "0.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.0f">:$beta);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$kind $input `,` $output `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_ClipGradOp : Train_Op<"clip_grad", [Pure]> {
  let summary = "Gradient of clip: the incoming gradient where min <= x <= max, else 0";
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$min, Train_Tensor:$max,
                       Train_Tensor:$grad);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input `,` $min `,` $max `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_BinaryGradOp : Train_Op<"binary_grad", [Pure]> {
  let summary = "Gradients of a broadcasting add, sub, mul or div";
  let description = [{
    Both operand gradients, each summed over the dimensions its operand was
    broadcast along. An unused result is not computed.

    ```mlir
    %dl, %dr = train.binary_grad "mul" %l, %r, %dy
        : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins StrAttr:$kind, Train_Tensor:$lhs, Train_Tensor:$rhs, Train_Tensor:$grad);
  let results = (outs Train_Tensor:$lhs_grad, Train_Tensor:$rhs_grad);
  let assemblyFormat = "$kind $lhs `,` $rhs `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_GemmGradOp : Train_Op<"gemm_grad", [Pure]> {
  let summary = "Gradients of gemm with respect to A, B and (if present) C";
  let arguments = (ins Train_Tensor:$a, Train_Tensor:$b, Train_Tensor:$grad,
                       F32Attr:$alpha, F32Attr:$beta, BoolAttr:$trans_a, BoolAttr:$trans_b);
  let results = (outs Train_Tensor:$a_grad, Train_Tensor:$b_grad, Optional<Train_Tensor>:$c_grad);
  let assemblyFormat = "$a `,` $b `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_MatMulGradOp : Train_Op<"matmul_grad", [Pure]> {
  let summary = "Gradients of matmul with respect to both operands";
  let arguments = (ins Train_Tensor:$lhs, Train_Tensor:$rhs, Train_Tensor:$grad,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_rhs);
  let results = (outs Train_Tensor:$lhs_grad, Train_Tensor:$rhs_grad);
  let assemblyFormat = "$lhs `,` $rhs `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_ConvGradDataOp : Train_Op<"conv_grad_data", [Pure]> {
  let summary = "Gradient of conv with respect to its input";
  let arguments = (ins Train_Tensor:$grad, Train_Tensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$grad `,` $weight attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_ConvGradWeightsOp : Train_Op<"conv_grad_weights", [Pure]> {
  let summary = "Gradients of conv with respect to its weight and (if present) bias";
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Train_Tensor:$weight_grad, Optional<Train_Tensor>:$bias_grad);
  let assemblyFormat = "$input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_PoolGradOp : Train_Op<"pool_grad", [Pure]> {
  let summary = "Gradient of max_pool, average_pool or global_average_pool";
  let description = [{
    `kind` is "max" or "average"; the window attributes are the forward op's
    (a global average pool is an average pool over the whole input).
  }];
  let arguments = (ins StrAttr:$kind, Train_Tensor:$input, Train_Tensor:$grad,
                       DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                       BoolAttr:$count_include_pad);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$kind $input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_BatchNormGradOp : Train_Op<"batch_norm_grad", [Pure]> {
  let summary = "Gradients of training-mode batch_norm";
  let description = [{
    With `relu` (the gradient of a batch_norm with a fused ReLU) `grad` is the
    gradient of the ReLU's output and `bias` is required: the ReLU's mask is
    recomputed from `input`.
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$scale, Train_Tensor:$saved_mean,
                       Train_Tensor:$saved_inv_std, Train_Tensor:$grad,
                       Optional<Train_Tensor>:$bias, UnitAttr:$relu);
  let results = (outs Train_Tensor:$input_grad, Train_Tensor:$scale_grad, Train_Tensor:$bias_grad);
  let assemblyFormat = "$input `,` $scale `,` $saved_mean `,` $saved_inv_std `,` $grad (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_GatherGradOp : Train_Op<"gather_grad", [Pure]> {
  let summary = "Gradient of gather: each result row added into its table row";
  let description = [{
    `grad` has gather's result shape; the result, the table's shape, is zero
    but for the rows indexed, which get the sum of their rows of `grad` in
    index order.
  }];
  let arguments = (ins Train_IndexTensor:$indices, Train_Tensor:$grad);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$indices `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_LSTMGradOp : Train_Op<"lstm_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "Gradients of lstm (backpropagation through time)";
  let description = [{
    From the forward's `y` and `saved`, its initial states (as the
    forward's: absent is zero) and the gradients of its results (each
    optional: an absent one is zero), the gradients of the input, of w, r
    and b, and of the two initial states (1 x N x H each; unused when the
    forward has none).
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$w, Train_Tensor:$r, Train_Tensor:$y,
                       Train_Tensor:$saved, Optional<Train_Tensor>:$initial_h,
                       Optional<Train_Tensor>:$initial_c, Optional<Train_Tensor>:$y_grad,
                       Optional<Train_Tensor>:$y_h_grad, Optional<Train_Tensor>:$y_c_grad);
  let results = (outs Train_Tensor:$input_grad, Train_Tensor:$w_grad, Train_Tensor:$r_grad,
                      Train_Tensor:$b_grad, Train_Tensor:$initial_h_grad,
                      Train_Tensor:$initial_c_grad);
  let assemblyFormat = [{
    $input `,` $w `,` $r `,` $y `,` $saved (`initial_h` $initial_h^)? (`initial_c` $initial_c^)?
    (`y_grad` $y_grad^)? (`y_h_grad` $y_h_grad^)? (`y_c_grad` $y_c_grad^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_DropoutGradOp : Train_Op<"dropout_grad", [Pure]> {
  let summary = "Gradient of training-mode dropout: grad * mask / (1 - ratio)";
  let description = [{
    The mask is the forward dropout's: the gradient's shape, or its leading
    dimensions followed by ones (one entry per block, as train.dropout).
  }];
  let arguments = (ins Train_Tensor:$grad, Train_MaskTensor:$mask, F32Attr:$ratio);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$grad `,` $mask attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_SoftmaxGradOp : Train_Op<"softmax_grad", [Pure, AllTypesMatch<["output", "grad", "result"]>]> {
  let summary = "Gradient of softmax or log_softmax from the forward output";
  let arguments = (ins Train_Tensor:$output, Train_Tensor:$grad, I64Attr:$axis, UnitAttr:$log);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$output `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_SplitOp : Train_Op<"split", [Pure]> {
  let summary = "Split along an axis (the gradient of concat)";
  let arguments = (ins Train_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Train_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_GradientOp : Train_Op<"gradient", [Pure, AllTypesMatch<["grad", "result"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Marks the complete gradient of a trainable parameter";
  let description = [{
    The value returned is `grad`. `backprop_index` is the position of this
    gradient in backprop order (0 = the first gradient completed); the
    communication passes group and reorder gradients by it.

    ```mlir
    %g = train.gradient @fc.weight, %dw {backprop_index = 0 : i64} : tensor<10x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Train_Tensor:$grad, I64Attr:$backprop_index);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$param `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_SGDUpdateOp : Train_Op<"sgd_update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The optimizer's update of a parameter (SGD or AdamW), in place";
  let description = [{
    As torch.optim.SGD: g = grad + wd * p; v = momentum * v + g; p -= lr * v,
    with the learning rate, momentum and weight decay read at run time and a
    velocity buffer per parameter kept by the runtime. The optimizer is the
    runtime's choice too: with AdamW (the executable's `--optimizer adamw`)
    the same op runs torch.optim.AdamW, its two moments in that state buffer.
    After a `train.clip_grad_norm`, the gradient is first multiplied by its
    factor.

    ```mlir
    train.sgd_update @fc.weight, %g : tensor<10x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Train_Tensor:$grad);
  let assemblyFormat = "$param `,` $grad attr-dict `:` type($grad)";
}

def Train_AssignParamOp : Train_Op<"assign_param", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Overwrites a state parameter (e.g. BatchNorm running statistics)";
  let arguments = (ins FlatSymbolRefAttr:$param, Train_Tensor:$value);
  let assemblyFormat = "$param `,` $value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// LayerNorm and GELU pieces: sqrt, erf, pow, reductions
//===----------------------------------------------------------------------===//

def Train_SqrtOp : Train_UnaryOp<"sqrt", "Sqrt">;
def Train_ErfOp : Train_UnaryOp<"erf", "Erf">;
// Swin V2's attention logit scale: exp of a clipped parameter.
def Train_ExpOp : Train_UnaryOp<"exp", "Exp">;
// Rotary position embeddings' cos and sin of the angles (inv_freq x positions, a float buffer
// that is an ONNX initializer: computed in the graph unless it is frozen and folded).
def Train_CosOp : Train_UnaryOp<"cos", "Cos">;
def Train_SinOp : Train_UnaryOp<"sin", "Sin">;
def Train_AbsOp : Train_UnaryOp<"abs", "Abs">;
def Train_RoundOp : Train_UnaryOp<"round", "Round"> {
  let description = [{
    ONNX `Round`: to the nearest integer, halves to even. Piecewise
    constant: reverse-mode differentiation passes no gradient through it.
  }];
}
def Train_FloorOp : Train_UnaryOp<"floor", "Floor"> {
  let description = [{
    ONNX `Floor`: the greatest integer not above x. Piecewise constant: no
    gradient flows through it (GridSample's corners are its results).
  }];
}
def Train_CeilOp : Train_UnaryOp<"ceil", "Ceil"> {
  let description = [{
    ONNX `Ceil`: the least integer not below x. Piecewise constant: no
    gradient flows through it.
  }];
}
def Train_LogOp : Train_UnaryOp<"log", "Log">;
def Train_SoftsignOp : Train_UnaryOp<"softsign", "Softsign">;
def Train_MishOp : Train_UnaryOp<"mish", "Mish"> {
  let description = [{
    ONNX `Mish`: y = x tanh(softplus(x)), softplus(x) = log(1 + exp(x)).
  }];
}
def Train_EluOp : Train_UnaryOp<"elu", "Elu", (ins F32Attr:$alpha)> {
  let description = [{
    ONNX `Elu`: y = x for x > 0, else alpha (exp(x) - 1); alpha finite.
  }];
  let hasVerifier = 1;
}
def Train_CeluOp : Train_UnaryOp<"celu", "Celu", (ins F32Attr:$alpha)> {
  let description = [{
    ONNX `Celu`: y = max(0, x) + min(0, alpha (exp(x / alpha) - 1)); alpha
    finite and not 0.
  }];
  let hasVerifier = 1;
}
def Train_SeluOp : Train_UnaryOp<"selu", "Selu", (ins F32Attr:$alpha, F32Attr:$gamma)> {
  let description = [{
    ONNX `Selu`: y = gamma x for x > 0, else gamma alpha (exp(x) - 1); alpha
    and gamma finite.
  }];
  let hasVerifier = 1;
}
def Train_PowOp : Train_UnaryOp<"pow", "Pow", (ins F32Attr:$exponent)> {
  let summary = "Elementwise power to a constant exponent (ONNX Pow)";
  let description = [{
    x^exponent, elementwise; ONNX Pow whose exponent is a one-element
    constant.

    ```mlir
    %y = train.pow %x {exponent = 2.0 : f32} : tensor<8x16xf32>
    ```
  }];
}

def Train_ReduceOp : Train_Op<"reduce", [Pure]> {
  let summary = "Sum or mean over some axes (ONNX ReduceSum, ReduceMean)";
  let description = [{
    `kind` is "sum" or "mean"; `axes` are distinct, ascending and in [0, rank).
    With `keepdims` each reduced axis stays with extent 1, else it is dropped.

    ```mlir
    %m = train.reduce "mean" %x {axes = array<i64: 1>, keepdims = true}
        : tensor<8x16xf32> -> tensor<8x1xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, Train_Tensor:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_ReduceGradOp : Train_Op<"reduce_grad", [Pure]> {
  let summary = "Gradient of reduce: the result's gradient broadcast back over the axes";
  let description = [{
    Each input element's gradient is the gradient of the result element it
    was summed into, divided by the number of elements reduced for "mean".
    `grad` has the reduce's result shape (with or without the kept axes).

    ```mlir
    %dx = train.reduce_grad "mean" %dm {axes = array<i64: 1>}
        : tensor<8x1xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, Train_Tensor:$grad, DenseI64ArrayAttr:$axes);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$kind $grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Train_GRUOp : Train_Op<"gru", [Pure]> {
  let summary = "One forward GRU layer over a sequence (ONNX GRU)";
  let description = [{
    ONNX's GRU with one direction (forward) and its default activations
    (sigmoid gates, tanh candidate). `input` is T x N x I (sequence first);
    `w` is 1 x 3H x I, `r` 1 x 3H x H and `b` 1 x 6H, gates in ONNX's order
    z, r, h. The initial hidden state `initial_h` (1 x N x H) is optional:
    zero when absent. `linear_before_reset` as ONNX's attribute (PyTorch's
    nn.GRU exports it set). Results: every step's hidden state `y`
    (T x 1 x N x H), the last hidden state `y_h` (1 x N x H), and `saved`
    (T x N x 4H: each step's z, r, candidate and the candidate's recurrent
    term, for gru_grad).

    ```mlir
    %y, %yh, %saved = train.gru %x, %w, %r, %b {linear_before_reset}
        : (tensor<8x4x8xf32>, tensor<1x96x8xf32>, tensor<1x96x32xf32>, tensor<1x192xf32>)
        -> (tensor<8x1x4x32xf32>, tensor<1x4x32xf32>, tensor<8x4x128xf32>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$w, Train_Tensor:$r, Train_Tensor:$b,
                       Optional<Train_Tensor>:$initial_h, UnitAttr:$linear_before_reset);
  let results = (outs Train_Tensor:$y, Train_Tensor:$y_h, Train_Tensor:$saved);
  let assemblyFormat = [{
    $input `,` $w `,` $r `,` $b (`initial_h` $initial_h^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_GRUGradOp : Train_Op<"gru_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "Gradients of gru (backpropagation through time)";
  let description = [{
    From the forward's `y` and `saved`, its initial state (absent: zero)
    and the gradients of its results (each optional: an absent one is zero),
    the gradients of the input, of w, r and b, and of the initial state
    (1 x N x H; unused when the forward has none); `linear_before_reset` as
    the forward's.
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$w, Train_Tensor:$r, Train_Tensor:$y,
                       Train_Tensor:$saved, Optional<Train_Tensor>:$initial_h,
                       Optional<Train_Tensor>:$y_grad, Optional<Train_Tensor>:$y_h_grad,
                       UnitAttr:$linear_before_reset);
  let results = (outs Train_Tensor:$input_grad, Train_Tensor:$w_grad, Train_Tensor:$r_grad,
                      Train_Tensor:$b_grad, Train_Tensor:$initial_h_grad);
  let assemblyFormat = [{
    $input `,` $w `,` $r `,` $y `,` $saved (`initial_h` $initial_h^)? (`y_grad` $y_grad^)?
    (`y_h_grad` $y_h_grad^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def Train_ClipGradNormOp : Train_Op<"clip_grad_norm"> {
  let summary = "Clips the global norm of the gradients the following updates apply";
  let description = [{
    As torch.nn.utils.clip_grad_norm_(max_norm): the 2-norm of all `grads`
    together (every trainable parameter's averaged gradient), and from it
    the factor min(1, max_norm / (norm + 1e-6)) that every `train.sgd_update`
    after this op multiplies its gradient by. The gradients are not changed
    and nothing is returned: the factor is the runtime's (the op has side
    effects, so it keeps its place between the last gradient and the first
    update, where `train-clip-grad-norm` puts it).

    ```mlir
    train.clip_grad_norm %g0, %g1 {max_norm = 1.0 : f64} : tensor<10x64xf32>, tensor<10xf32>
    train.sgd_update @fc.weight, %g0 : tensor<10x64xf32>
    train.sgd_update @fc.bias, %g1 : tensor<10xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_Tensor>:$grads, F64Attr:$max_norm);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layer normalization
//===----------------------------------------------------------------------===//

def Train_LayerNormOp : Train_Op<"layer_norm", [Pure]> {
  let summary = "Layer normalization over the trailing dimensions (ONNX LayerNormalization)";
  let description = [{
    Each slice of `input` over the dimensions from `axis` on is normalized:
    y = (x - mean) * inv_std * scale + bias with inv_std = 1 / sqrt(var +
    epsilon) (the biased variance). `scale` and `bias` have the normalized
    dimensions' shape; `mean` and `inv_std` the input's shape with those
    dimensions 1 (ONNX's Mean and InvStdDev), saved for layer_norm_grad.
    `train-fuse-layer-norm` forms it from the ops ONNX LayerNormalization
    imports as and PyTorch's opset-15 export of nn.LayerNorm.

    ```mlir
    %y, %mean, %inv_std = train.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
        : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<2x5x8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$scale, Train_Tensor:$bias,
                       I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Train_Tensor:$result, Train_Tensor:$mean, Train_Tensor:$inv_std);
  let assemblyFormat = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Train_LayerNormGradOp : Train_Op<"layer_norm_grad", [Pure]> {
  let summary = "Gradients of layer_norm from its saved mean and inv_std";
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$scale, Train_Tensor:$mean,
                       Train_Tensor:$inv_std, Train_Tensor:$grad, I64Attr:$axis);
  let results = (outs Train_Tensor:$input_grad, Train_Tensor:$scale_grad, Train_Tensor:$bias_grad);
  let assemblyFormat = "$input `,` $scale `,` $mean `,` $inv_std `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

def Train_GeluOp : Train_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise GELU, exact or tanh approximation (ONNX Gelu)";
  let description = [{
    y = x Phi(x), Phi the standard normal distribution function (`approximate`
    "none": 0.5 (1 + erf(x / sqrt(2)))), or with Phi(x) approximated by
    0.5 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (`approximate` "tanh"),
    as ONNX Gelu and PyTorch's nn.GELU. `train-fuse-gelu` forms it from the
    ops PyTorch's opset-15 export of nn.GELU is made of; its gradient,
    `train.gelu_grad`, recomputes from x, so x is all the backward keeps.

    ```mlir
    %y = train.gelu %x {approximate = "tanh"} : tensor<4x768xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Train_GeluGradOp : Train_Op<"gelu_grad", [Pure, AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "Gradient of gelu, recomputed from its input";
  let description = [{
    dx = dy (Phi(x) + x Phi'(x)) for `approximate` "none", the derivative of
    the tanh form for "tanh" (Phi as in `train.gelu`).

    ```mlir
    %dx = train.gelu_grad %x, %dy {approximate = "none"} : tensor<4x768xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, Train_Tensor:$grad,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Cumulative sums and computed indices
//===----------------------------------------------------------------------===//

def Train_CumSumOp : Train_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "Cumulative sum along one axis (ONNX CumSum)";
  let description = [{
    result[..., t, ...] = the sum of input[..., u, ...] over u <= t along
    `axis` (u < t with `exclusive`; u >= t, or u > t, with `reverse`), added
    in order in float as ONNX CumSum. Its gradient is the cumulative sum of
    the result's gradient in the other direction. The importer also builds
    it for integers computed at run time from token ids (RoBERTa's position
    ids: a running count of the non-padding tokens), which it proves stay
    below 2^24, where float sums are exact.

    ```mlir
    %c = train.cumsum %m {axis = 1 : i64} : tensor<4x128xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, I64Attr:$axis, UnitAttr:$exclusive,
                       UnitAttr:$reverse);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Train_ToIndexOp : Train_Op<"to_index", [Pure]> {
  let summary = "Float values to int64 indices, rounded toward zero (ONNX Cast to INT64)";
  let description = [{
    The indices a `train.gather` reads when they are computed at run time
    (position ids). Not differentiable: nothing flows back through an index.
    The runtime refuses a NaN, an infinity or a value outside int64.

    ```mlir
    %i = train.to_index %p : tensor<4x128xf32> -> tensor<4x128xi64>
    ```
  }];
  let arguments = (ins Train_Tensor:$input);
  let results = (outs Train_IndexTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_FromIndexOp : Train_Op<"from_index", [Pure]> {
  let summary = "Int64 values fed as data as floats, checked to lie in [lo, hi]";
  let description = [{
    Integers a model reads as data (class labels, token ids) as floats, for
    the arithmetic the importer does on such integers in float (a one-hot of
    the labels by an Equal with a range, a scatter at them): exact, since
    `lo` and `hi` lie within +-2^24. The runtime refuses a value outside
    [lo, hi], naming its position and value. Not differentiable: nothing
    flows back into integers.

    ```mlir
    %f = train.from_index %t {lo = 0 : i64, hi = 9 : i64} : tensor<8x1xi64> -> tensor<8x1xf32>
    ```
  }];
  let arguments = (ins Train_IndexTensor:$input, I64Attr:$lo, I64Attr:$hi);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_StopGradientOp : Train_Op<"stop_gradient", [Pure, SameOperandsAndResultType]> {
  let summary = "The input, through which no gradient flows (PyTorch's detach)";
  let description = [{
    Its input unchanged; reverse-mode differentiation treats it as a
    constant, so nothing before it gets a gradient through it (PyTorch's
    `x.detach()`, which torch.export's ONNX exporter writes as an Identity
    node whose FX node is `aten.detach`). train-build-step replaces it with
    its input once the gradients are built.

    ```mlir
    %d = train.stop_gradient %x : tensor<16x32xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_TopKPositionsOp : Train_Op<"topk_positions", [Pure]> {
  let summary = "The positions of the k greatest or least entries along the last axis (ONNX TopK's indices)";
  let description = [{
    Each row's (last axis') `k` greatest entries' positions, greatest first
    (`largest`; otherwise the least, least first), as floats: integers
    computed at run time, which `train.to_index` makes indices of. Equal
    entries come in ascending position; a NaN counts as greater than every
    number. TopK's values are a `train.gather` of the input at these
    positions, which carries their gradient; the positions themselves are
    piecewise constant and get none. The last axis is at most 2^24 long
    (floats hold its positions exactly).

    ```mlir
    %p = train.topk_positions %probs {k = 2, largest = true} : tensor<16x8xf32> -> tensor<16x2xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, I64Attr:$k, BoolAttr:$largest);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // MGS_DIALECT_TRAIN_IR_TRAINOPS_TD
