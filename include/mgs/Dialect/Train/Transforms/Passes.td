//===- Passes.td - train dialect passes --------------------*- tablegen -*-===//

#ifndef MGS_DIALECT_TRAIN_TRANSFORMS_PASSES_TD
#define MGS_DIALECT_TRAIN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TrainBuildStep : Pass<"train-build-step", "mlir::ModuleOp"> {
  let summary = "Build the training step (loss, backward, SGD) and the evaluation step from the forward graph";
  let description = [{
    Turns the imported forward function into two functions:

    - `@train_step(inputs..., labels) -> (loss, outputs...)`: the forward
      graph as exported (BatchNorm batch statistics, dropout on), the mean
      softmax cross-entropy of the first output (N x C logits) against the
      int64 labels (`ignore-index`, `label-smoothing`, `class-weights`:
      PyTorch's options; an output of rank >= 3 with `class-axis`: its class
      axis moved last and the rest flattened into rows (N * d1 * ..., C) in
      the forward graph itself, so `@eval_step`'s output has those rows too),
      or
      with `loss` a regression or multi-label loss against float targets of
      the first output's shape (`train.elementwise_loss`), reverse-mode autodiff of every op back to the trainable
      parameters, and per parameter, as its gradient completes, a
      `train.gradient` (tagged with its position in backprop order) and a
      `train.sgd_update`; then the BatchNorm running statistics are assigned.
    - `@eval_step(inputs...) -> outputs...`: the forward graph in inference
      form (running statistics, no dropout). With `inference-only`, only this
      function is built and it is the forward graph exactly as imported (ONNX
      semantics: a BatchNorm exported in training mode normalizes with the
      batch statistics), which is how the forward is checked against ONNX's
      reference outputs.

    Gradients are built only for values that depend on a trainable
    parameter, so e.g. the first convolution computes no input gradient.

    ```mlir
    // before
    func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
      %w = train.get_param @w : tensor<3x4xf32>
      %y = train.gemm %x, %w {... trans_b = true} : (...) -> tensor<2x3xf32>
      return %y : tensor<2x3xf32>
    }
    // after (train_step)
    %loss, %dy = train.softmax_cross_entropy %y, %labels : ...
    %dx, %dw = train.gemm_grad %x, %w, %dy {...} : ...
    %g = train.gradient @w, %dw {backprop_index = 0 : i64} : tensor<3x4xf32>
    train.sgd_update @w, %g : tensor<3x4xf32>
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect", "mlir::arith::ArithDialect"];
  let options = [
    Option<"forwardName", "forward", "std::string", /*default=*/"\"forward\"",
           "The forward function to build the steps from">,
    Option<"inferenceOnly", "inference-only", "bool", /*default=*/"false",
           "Build only @eval_step, the forward graph as imported (no loss, no backward)">,
    Option<"evalMode", "eval-mode", "bool", /*default=*/"false",
           "With inference-only: @eval_step in evaluation form (BatchNorm with its running "
           "statistics, dropout the identity), as the training step's own @eval_step">,
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "The loss of the first output: cross-entropy (against int64 class labels) or, "
           "against float targets of its shape, mse, l1, smooth-l1 or bce-with-logits "
           "(torch.nn's MSELoss, L1Loss, SmoothL1Loss, BCEWithLogitsLoss; mean reduction), "
           "or graph: the first output is a float32 scalar, the loss the graph computes "
           "(train.elementwise_loss \"value\", its labels an unread scalar)">,
    Option<"smoothL1Beta", "smooth-l1-beta", "double", /*default=*/"1.0",
           "smooth-l1's beta (PyTorch's; 0 is l1)">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "Labels of this value count neither in the loss nor in its mean (PyTorch's "
           "ignore_index, -100 by default: a padding token's label)">,
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"0.0",
           "Label smoothing e in [0, 1]: the target is (1 - e) onehot(label) + e / C "
           "(PyTorch's label_smoothing)">,
    ListOption<"classWeights", "class-weights", "double",
               "One weight >= 0 per class for the cross-entropy (PyTorch's weight=): class "
               "j's term weighted by it, the mean over the counted labels' weights">,
    ListOption<"posWeight", "pos-weight", "double",
               "bce-with-logits: one weight >= 0 per position of the output's last axis for "
               "its positive targets (PyTorch's pos_weight)">,
    Option<"reduction", "reduction", "std::string", /*default=*/"\"mean\"",
           "How the loss reduces over the samples (elements): mean (PyTorch's default) or "
           "sum (the loss and its gradient not divided by the count)">,
    Option<"classAxis", "class-axis", "int64_t", /*default=*/"0",
           "The cross-entropy's class axis in a first output of rank >= 3: 1 for classes "
           "second ((N, C, d1, ...), PyTorch's CrossEntropyLoss on the output as it is: "
           "per-pixel scores), -1 for classes last ((N, d1, ..., C): a language model's "
           "(N, L, vocab)), or any other axis but the batch's, negative from the back. The "
           "output is then trained as rows (N * d1 * ..., C), sample by sample, against "
           "labels (N, d1, ...). 0: not given (an N x C output needs none)">,
  ];
  let statistics = [
    Statistic<"numGradients", "num-gradients", "Parameter gradients built">,
    Statistic<"numBackwardOps", "num-backward-ops", "Backward ops created">,
  ];
}

def TrainFuseBatchNormRelu : Pass<"train-fuse-batch-norm-relu", "mlir::func::FuncOp"> {
  let summary = "Fuse a ReLU into the batch_norm that feeds it";
  let description = [{
    `relu(batch_norm(x))`, where the ReLU is the normalization's only user,
    becomes one `batch_norm {relu}`: one pass over the activation instead of
    two forward, and backward no separate ReLU gradient (the mask is
    recomputed inside the normalization's gradient). The ReLU's location is
    kept in a fused location.

    ```mlir
    // before
    %y, %rm, %rv, %sm, %si = train.batch_norm %x, %s, %b, %m, %v {..., training} : ...
    %r = train.relu %y : tensor<8x16x4x4xf32>
    // after
    %r, %rm, %rv, %sm, %si = train.batch_norm %x, %s, %b, %m, %v {..., relu, training} : ...
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "ReLUs fused into a batch_norm">,
  ];
}

def TrainAccumulateGradients : Pass<"train-accumulate-gradients", "mlir::ModuleOp"> {
  let summary = "Gradient accumulation: an optimizer step over the gradients of several batches";
  let description = [{
    Run after train-build-step, before the communication passes. With
    `steps` N > 1, an optimizer step (and its gradient exchange) takes the
    summed gradients of N batches, as N backward passes of `loss / N`
    accumulate into PyTorch's `.grad` (of `loss` itself with the loss's
    `sum` reduction). Per parameter with a gradient, a state parameter
    `mgs.accum/NAME` (zero at the start, each worker's own) holds the sum so
    far.

    - The loss's gradient in `@train_step` is multiplied by 1 / N (a mean
      reduction's).
    - `@accum_step`, a copy of `@train_step` for the first N - 1 batches of a
      step: each gradient is added to its accumulator instead of being
      exchanged and applied (BatchNorm running statistics still update per
      batch, as in PyTorch).
    - `@train_step`, the last batch: each `train.gradient` marks the
      accumulator plus the batch's gradient, so the exchange still starts as
      each gradient completes in backprop; the accumulators are set back to
      zero at its end.

    ```mlir
    // @train_step after (steps = 2)
    %a = train.get_param @"mgs.accum/w" : tensor<3x4xf32>
    %sum = train.add %a, %dw : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
    %g = train.gradient @w, %sum {backprop_index = 0 : i64} : tensor<3x4xf32>
    train.sgd_update @w, %g : tensor<3x4xf32>
    train.assign_param @"mgs.accum/w", %zeros : tensor<3x4xf32>
    // @accum_step
    %a = train.get_param @"mgs.accum/w" : tensor<3x4xf32>
    %sum = train.add %a, %dw : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
    train.assign_param @"mgs.accum/w", %sum : tensor<3x4xf32>
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect", "mlir::arith::ArithDialect"];
  let options = [
    Option<"steps", "steps", "int64_t", /*default=*/"1",
           "Batches per optimizer step (>= 1; 1 leaves the module as it is)">,
  ];
  let statistics = [
    Statistic<"numAccumulators", "num-accumulators", "Gradient accumulators created">,
  ];
}

def TrainClipGradNorm : Pass<"train-clip-grad-norm", "mlir::func::FuncOp"> {
  let summary = "Clip the global gradient norm before the parameter updates";
  let description = [{
    Global gradient-norm clipping as torch.nn.utils.clip_grad_norm_: one
    `train.clip_grad_norm` over the gradients of every `train.sgd_update` of
    the function, placed after the last update, and every update moved after
    it (in its order). Run after the communication passes: the norm is that
    of the averaged gradients (with top-k sparsification, of what the sparse
    exchange delivers, error feedback included), the same on every worker.
    The updates no longer overlap the backward pass, and every gradient lives
    until the norm is known.

    ```mlir
    // before
    train.sgd_update @w1, %g1 : tensor<10xf32>
    %g0 = ...
    train.sgd_update @w0, %g0 : tensor<4xf32>
    // after
    %g0 = ...
    train.clip_grad_norm %g1, %g0 {max_norm = 1.0 : f64} : tensor<10xf32>, tensor<4xf32>
    train.sgd_update @w1, %g1 : tensor<10xf32>
    train.sgd_update @w0, %g0 : tensor<4xf32>
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect"];
  let options = [
    Option<"maxNorm", "max-norm", "double", /*default=*/"1.0",
           "The largest global 2-norm of the gradients (> 0)">,
  ];
}

def TrainFuseLayerNorm : Pass<"train-fuse-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Fuse a decomposed layer normalization into train.layer_norm";
  let description = [{
    The ops PyTorch's opset-15 export of nn.LayerNorm is made of, which ONNX
    LayerNormalization also imports as (mean, subtract, square, mean, add
    epsilon, sqrt, divide, scale, shift; the means over the same trailing
    dimensions), become one `train.layer_norm` when no intermediate value has
    another user and scale and shift have the normalized dimensions' shape:
    one kernel forward and one backward (from the saved mean and inverse
    standard deviation) instead of about eight of each. A pattern that does
    not match exactly is left as it is. The location fuses the ops'.

    ```mlir
    // before
    %mu = train.reduce "mean" %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    %c = train.sub %x, %mu : ...
    ... (pow 2, mean, add epsilon, sqrt, div, mul %scale, add %bias)
    // after
    %y, %mean, %inv_std = train.layer_norm %x, %scale, %bias {axis = 1 : i64, epsilon = ...} : ...
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Layer norms fused">,
  ];
}

def TrainFuseGelu : Pass<"train-fuse-gelu", "mlir::func::FuncOp"> {
  let summary = "Fuse a decomposed GELU into train.gelu";
  let description = [{
    The ops PyTorch's opset-15 export of nn.GELU is made of become one
    `train.gelu`: 0.5 x (1 + erf(x / sqrt(2))) (the division may be a
    multiplication by 1 / sqrt(2)) with `approximate` "none", and
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (x^3 as x (x x) or
    pow(x, 3)) with "tanh"; 0.5, x and the sum multiplied in any order,
    commutative operands either way. Only when every x is the same value,
    no intermediate value has another user and every op has x's type: one
    kernel forward and one backward that recomputes from x, where the pieces
    kept four or more tensors of x's size for their gradients. A pattern
    that does not match exactly is left as it is. The location fuses the
    ops'.

    ```mlir
    // before
    %u = train.div %x, %sqrt2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    %e = train.erf %u : tensor<4x8xf32>
    ... (add 1, mul x, mul 0.5)
    // after
    %y = train.gelu %x : tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "GELUs fused">,
  ];
}

def TrainFoldTransposeIntoMatMul : Pass<"train-fold-transpose-into-matmul",
                                        "mlir::func::FuncOp"> {
  let summary = "Fold a transpose of a matmul operand's last two dimensions into its trans flag";
  let description = [{
    A `train.transpose` feeding a `train.matmul` operand (rank >= 2) whose
    permutation, its last two entries swapped, keeps the last dimension
    becomes the matmul's `trans_lhs` / `trans_rhs` (toggled): when the
    swapped permutation is the identity (a linear layer's W^T, a swap of the
    last two axes) the operand is the transpose's input and no transposed
    copy is made; otherwise (attention's K^T, perm [1, 2, 0] of
    sequence x batch*heads x head) a transpose by the swapped permutation,
    which moves whole rows, replaces the strided one (only when the matmul is
    its only user). The gradient follows: matmul_grad takes the same flags
    and writes each operand's gradient in the layout it is stored in.

    ```mlir
    // before
    %wt = train.transpose %w {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
    %y = train.matmul %x, %wt : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
    // after
    %y = train.matmul %x, %w {trans_rhs = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let dependentDialects = ["mgs::train::TrainDialect"];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Transposes folded into matmul operands">,
  ];
}

#endif // MGS_DIALECT_TRAIN_TRANSFORMS_PASSES_TD
