// RUN: mgs-opt %s -split-input-file --train-build-step | FileCheck %s
// RUN: mgs-opt %s -split-input-file --train-build-step="inference-only=true" | FileCheck %s --check-prefix=INFER
// RUN: mgs-opt %s -split-input-file --train-build-step="inference-only=true eval-mode=true" | FileCheck %s --check-prefix=EVAL
// RUN: mgs-opt %s -split-input-file --train-build-step="ignore-index=0 label-smoothing=0.25" | FileCheck %s --check-prefix=LOSSOPTS
// RUN: not mgs-opt %s -split-input-file --train-build-step="label-smoothing=1.5" 2>&1 | FileCheck %s --check-prefix=BADSMOOTH
// RUN: mgs-opt %s -split-input-file --train-build-step="loss=smooth-l1 smooth-l1-beta=0.5" | FileCheck %s --check-prefix=REGRESSION
// RUN: not mgs-opt %s -split-input-file --train-build-step="loss=hinge" 2>&1 | FileCheck %s --check-prefix=BADLOSS

// PyTorch's loss options: the ignored label (-100 unless given, and then not
// printed) and label smoothing are the loss op's attributes.
// LOSSOPTS: train.softmax_cross_entropy %{{.*}}, %{{.*}} {ignore_index = 0 : i64, label_smoothing = 2.500000e-01 : f32} : (tensor<2x3xf32>, tensor<2xi64>)
// BADSMOOTH: error: train-build-step: label-smoothing must be in [0, 1], got 1.5
// A regression loss: the targets are float, of the first output's type.
// REGRESSION-LABEL: func.func @train_step(
// REGRESSION-SAME:      %{{.*}}: tensor<2x4xf32> {train.name = "x"}, %[[T:.*]]: tensor<2x3xf32> {train.name = "labels"})
// REGRESSION:         %{{.*}}, %{{.*}} = train.elementwise_loss "smooth_l1" %{{.*}}, %[[T]] {beta = 5.000000e-01 : f32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// BADLOSS: error: train-build-step: unknown loss 'hinge'; expected cross-entropy, mse, l1, smooth-l1 or bce-with-logits

// A two-layer MLP: loss, backward in reverse order, one gradient per
// trainable parameter tagged in backprop order and followed by its update.
// The graph input gets no gradient.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32> {train.name = "x"}, %[[LABELS:.*]]: tensor<2xi64> {train.name = "labels"})
// CHECK-SAME:      -> (tensor<f32> {train.name = "loss"}, tensor<2x3xf32> {train.name = "y"})
// CHECK:         %[[W1:.*]] = train.get_param @w1
// CHECK:         %[[H:.*]] = train.gemm %[[X]], %[[W1]]
// CHECK:         %[[A:.*]] = train.relu %[[H]]
// CHECK:         %[[W2:.*]] = train.get_param @w2
// CHECK:         %[[Y:.*]] = train.gemm %[[A]], %[[W2]]
// CHECK:         %[[LOSS:.*]], %[[DY:.*]] = train.softmax_cross_entropy %[[Y]], %[[LABELS]] : (tensor<2x3xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK:         %[[DA:.*]], %[[DW2:.*]] = train.gemm_grad %[[A]], %[[W2]], %[[DY]]
// CHECK:         %[[G2:.*]] = train.gradient @w2, %[[DW2]] {backprop_index = 0 : i64}
// CHECK:         train.sgd_update @w2, %[[G2]]
// CHECK:         %[[DH:.*]] = train.unary_grad "relu" %[[H]], %[[A]], %[[DA]]
// CHECK:         %{{.*}}, %[[DW1:.*]] = train.gemm_grad %[[X]], %[[W1]], %[[DH]]
// CHECK:         %[[G1:.*]] = train.gradient @w1, %[[DW1]] {backprop_index = 1 : i64}
// CHECK:         train.sgd_update @w1, %[[G1]]
// CHECK:         return %[[LOSS]], %[[Y]]
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME:      %{{.*}}: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"})
// CHECK-NOT:     train.gradient
// CHECK-NOT:   func.func @forward

// INFER-NOT:   func.func @train_step
// INFER:       func.func @eval_step(
// INFER-NOT:   func.func @forward
train.parameter @w1 trainable : tensor<5x4xf32>
train.parameter @w2 trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<5x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %a = train.relu %h : tensor<2x5xf32>
  %w2 = train.get_param @w2 : tensor<3x5xf32>
  %y = train.gemm %a, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// BatchNorm: its gradient uses the saved batch statistics; the running
// statistics are assigned after the backward pass; the evaluation step uses
// the inference form. A value used twice gets one summed gradient.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[Y:[^,]*]], %[[RM:[^,]*]], %[[RV:[^,]*]], %[[SM:[^,]*]], %[[SI:[^,]*]] = train.batch_norm {{.*}}training
// CHECK:         %[[S:.*]] = train.mul %[[Y]], %[[Y]]
// CHECK:         train.softmax_cross_entropy
// CHECK:         %[[DL:.*]], %[[DR:.*]] = train.binary_grad "mul"
// CHECK:         %[[DSUM:.*]] = train.add %[[DL]], %[[DR]]
// CHECK:         %{{.*}}, %[[DSCALE:.*]], %[[DBIAS:.*]] = train.batch_norm_grad %{{.*}}, %{{.*}}, %[[SM]], %[[SI]], %[[DSUM]]
// CHECK:         train.gradient @bias, %[[DBIAS]] {backprop_index = 0 : i64}
// CHECK:         train.gradient @scale, %[[DSCALE]] {backprop_index = 1 : i64}
// CHECK:         train.assign_param @mean, %[[RM]]
// CHECK:         train.assign_param @var, %[[RV]]
// CHECK-LABEL: func.func @eval_step(
// CHECK:         train.batch_norm
// CHECK-NOT:     training
// CHECK-SAME:    : (
train.parameter @scale trainable : tensor<3xf32>
train.parameter @bias trainable : tensor<3xf32>
train.parameter @mean : tensor<3xf32>
train.parameter @var : tensor<3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = train.get_param @scale : tensor<3xf32>
  %b = train.get_param @bias : tensor<3xf32>
  %m = train.get_param @mean : tensor<3xf32>
  %v = train.get_param @var : tensor<3xf32>
  %y, %rm, %rv, %sm, %si = train.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %sum = train.mul %y, %y : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %sum : tensor<2x3xf32>
}

// -----

// An add without broadcasting (a residual connection) needs no gradient op:
// both operands get the result's gradient. One with broadcasting reduces it
// for the broadcast operand (a bias) alone: the other operand takes the
// result's gradient as it is, leaving the op's first result unused (its
// kernel then never writes it), as does a sub's lhs.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[LOSS:.*]], %[[DY:.*]] = train.softmax_cross_entropy
// CHECK:         %[[DB:.*]] = train.add %[[DY]], %[[DY]]
// CHECK:         %[[UNUSED:.*]], %[[DBIAS:.*]] = train.binary_grad "add" %{{.*}}, %{{.*}}, %[[DB]] : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
// CHECK-NOT:     %[[UNUSED]]
// CHECK:         %[[UNUSED2:.*]], %[[DSUB:.*]] = train.binary_grad "sub" %{{.*}}, %{{.*}}, %[[DB]] : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK-NOT:     %[[UNUSED2]]
// CHECK:         %{{.*}}, %[[DW:.*]] = train.binary_grad "mul" %{{.*}}, %{{.*}}, %[[DB]]
// CHECK-DAG:     train.gradient @b, %[[DBIAS]]
// CHECK-DAG:     train.gradient @c, %[[DSUB]]
// CHECK-DAG:     train.gradient @w, %[[DW]]
train.parameter @w trainable : tensor<2x3xf32>
train.parameter @b trainable : tensor<3xf32>
train.parameter @c trainable : tensor<1x3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = train.get_param @w : tensor<2x3xf32>
  %b = train.get_param @b : tensor<3xf32>
  %c = train.get_param @c : tensor<1x3xf32>
  %xw = train.mul %x, %w : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %d = train.sub %xw, %c : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  %h = train.add %d, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %r = train.add %h, %h : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Inference only: the forward graph exactly as imported (a BatchNorm in
// training mode stays in training mode, as ONNX defines the graph).
// INFER:       train.batch_norm {{.*}} {epsilon = 2.500000e-01 : f32, momentum = 8.750000e-01 : f32, training}
// With eval-mode, its evaluation form (the running statistics).
// EVAL:        train.batch_norm {{.*}} {epsilon = 2.500000e-01 : f32, momentum = 8.750000e-01 : f32} :
train.parameter @s trainable : tensor<3xf32>
train.parameter @m : tensor<3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = train.get_param @s : tensor<3xf32>
  %m = train.get_param @m : tensor<3xf32>
  %y, %rm, %rv, %sm, %si = train.batch_norm %x, %s, %s, %m, %m {epsilon = 0.25 : f32, momentum = 0.875 : f32, training}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y : tensor<2x3xf32>
}

// -----

// Split in the forward graph (an imported Gather at one index): its gradient
// is the pieces' gradients concatenated, zeros for the pieces nobody used.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<1x3xf32>
// CHECK:         %[[P:.*]]:2 = train.split
// CHECK:         train.softmax_cross_entropy
// CHECK:         %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1x3xf32>
// CHECK:         %[[DW:.*]] = train.concat %[[Z]], %{{.*}} {axis = 0 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK:         train.gradient @w, %[[DW]]
train.parameter @w trainable : tensor<2x3xf32>
func.func @forward(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %w = train.get_param @w : tensor<2x3xf32>
  %p:2 = train.split %w {axis = 0 : i64} : (tensor<2x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>)
  %y = train.mul %x, %p#1 : tensor<1x3xf32>, tensor<1x3xf32> -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}

// -----

// Several splits of one parameter reassembled in another order (PyTorch's
// LSTM gates, i f g o to ONNX's i o f c): the pieces' gradients become one
// concatenation in the parameter's order, with no zeros and no adds.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<4x3xf32>
// CHECK:         train.softmax_cross_entropy
// CHECK-NOT:     arith.constant
// CHECK-NOT:     train.add
// CHECK:         %[[G:.*]]:3 = train.split %{{.*}} {axis = 0 : i64} : (tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    %[[DW:.*]] = train.concat %[[G]]#0, %[[G]]#2, %[[G]]#1 {axis = 0 : i64} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
// CHECK-NOT:     train.add
// CHECK:         train.gradient @w, %[[DW]]
train.parameter @w trainable : tensor<4x3xf32>
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = train.get_param @w : tensor<4x3xf32>
  %a:2 = train.split %w {axis = 0 : i64} : (tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<3x3xf32>)
  %b:2 = train.split %w {axis = 0 : i64} : (tensor<4x3xf32>) -> (tensor<3x3xf32>, tensor<1x3xf32>)
  %c:3 = train.split %w {axis = 0 : i64} : (tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>)
  %p = train.concat %a#0, %b#1, %c#1 {axis = 0 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %y = train.mul %x, %p : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// LSTM: one lstm_grad from the gradients its results have (here y_h's
// alone; y and y_c are absent, so zero), into all four of its operands.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<3x2x4xf32>
// CHECK:         %[[Y:[a-z_0-9]+]], %[[YH:[a-z_0-9]+]], %{{[a-z_0-9]+}}, %[[S:[a-z_0-9]+]] = train.lstm
// CHECK:         train.softmax_cross_entropy
// CHECK:         %{{[a-z_0-9]+}}, %[[DW:[a-z_0-9]+]], %[[DR:[a-z_0-9]+]], %[[DB:[a-z_0-9]+]], %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = train.lstm_grad %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[Y]], %[[S]] y_h_grad %{{[a-z_0-9]+}} :
// CHECK:         train.gradient @b, %[[DB]]
// CHECK:         train.gradient @r, %[[DR]]
// CHECK:         train.gradient @w, %[[DW]]
train.parameter @w trainable : tensor<1x8x4xf32>
train.parameter @r trainable : tensor<1x8x2xf32>
train.parameter @b trainable : tensor<1x16xf32>
func.func @forward(%x: tensor<3x2x4xf32>) -> tensor<2x2xf32> {
  %w = train.get_param @w : tensor<1x8x4xf32>
  %r = train.get_param @r : tensor<1x8x2xf32>
  %b = train.get_param @b : tensor<1x16xf32>
  %y, %yh, %yc, %s = train.lstm %x, %w, %r, %b
      : (tensor<3x2x4xf32>, tensor<1x8x4xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x10xf32>)
  %h = train.reshape %yh : (tensor<1x2x2xf32>) -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}

// -----

// GRU: one gru_grad from the gradients its results have (here y_h's alone;
// y's is absent, so zero), keeping linear_before_reset, into all four of its
// operands.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<3x2x4xf32>
// CHECK:         %[[Y:[a-z_0-9]+]], %[[YH:[a-z_0-9]+]], %[[S:[a-z_0-9]+]] = train.gru
// CHECK:         train.softmax_cross_entropy
// CHECK:         %{{[a-z_0-9]+}}, %[[DW:[a-z_0-9]+]], %[[DR:[a-z_0-9]+]], %[[DB:[a-z_0-9]+]], %{{[a-z_0-9]+}} = train.gru_grad %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[Y]], %[[S]] y_h_grad %{{[a-z_0-9]+}} {linear_before_reset} :
// CHECK:         train.gradient @b, %[[DB]]
// CHECK:         train.gradient @r, %[[DR]]
// CHECK:         train.gradient @w, %[[DW]]
train.parameter @w trainable : tensor<1x6x4xf32>
train.parameter @r trainable : tensor<1x6x2xf32>
train.parameter @b trainable : tensor<1x12xf32>
func.func @forward(%x: tensor<3x2x4xf32>) -> tensor<2x2xf32> {
  %w = train.get_param @w : tensor<1x6x4xf32>
  %r = train.get_param @r : tensor<1x6x2xf32>
  %b = train.get_param @b : tensor<1x12xf32>
  %y, %yh, %s = train.gru %x, %w, %r, %b {linear_before_reset}
      : (tensor<3x2x4xf32>, tensor<1x6x4xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>)
      -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<3x2x8xf32>)
  %h = train.reshape %yh : (tensor<1x2x2xf32>) -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}

// -----

// AveragePool with dilations (ONNX opset 19): its pool_grad keeps them.
// CHECK-LABEL: func.func @train_step(
// CHECK:         train.average_pool %{{.*}} {ceil_mode = false, count_include_pad = false, dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK:         train.softmax_cross_entropy
// CHECK:         train.pool_grad "average" %{{.*}}, %{{.*}} {count_include_pad = false, dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK:         train.gradient @w
train.parameter @w trainable : tensor<1x2x6x6xf32>
func.func @forward(%x: tensor<1x2x6x6xf32>) -> tensor<1x8xf32> {
  %w = train.get_param @w : tensor<1x2x6x6xf32>
  %h = train.mul %x, %w : tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32> -> tensor<1x2x6x6xf32>
  %p = train.average_pool %h {ceil_mode = false, count_include_pad = false, dilations = array<i64: 2, 2>,
                              kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>,
                              strides = array<i64: 2, 2>}
      : (tensor<1x2x6x6xf32>) -> tensor<1x2x2x2xf32>
  %y = train.reshape %p : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

// A transposed convolution (ONNX ConvTranspose, imported as conv_grad_data
// in the forward graph): its input's gradient is the conv it is the adjoint
// of, its weight's that conv's weight gradient with input and output swapped.
// CHECK-LABEL: func.func @train_step(
// CHECK:         %[[C:.*]] = train.conv %{{.*}}, %[[WC:.*]] {{.*}}: (tensor<2x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x2x2xf32>
// CHECK:         %[[WT:.*]] = train.get_param @wt
// CHECK:         %[[T:.*]] = train.conv_grad_data %[[C]], %[[WT]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x2x2x2xf32>, tensor<2x3x3x3xf32>) -> tensor<2x3x4x4xf32>
// CHECK:         %{{.*}}, %[[DY:.*]] = train.softmax_cross_entropy
// CHECK:         %[[DT:.*]] = train.reshape %[[DY]]
// CHECK:         %[[DC:.*]] = train.conv %[[DT]], %[[WT]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<2x2x2x2xf32>
// CHECK:         %[[DWT:.*]] = train.conv_grad_weights %[[DT]], %[[C]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<2x3x3x3xf32>
// CHECK:         train.gradient @wt, %[[DWT]]
// CHECK:         train.conv_grad_weights %{{.*}}, %[[DC]]
// CHECK:         train.gradient @wc
train.parameter @wc trainable : tensor<2x1x3x3xf32>
train.parameter @wt trainable : tensor<2x3x3x3xf32>
func.func @forward(%x: tensor<2x1x4x4xf32>) -> tensor<2x48xf32> {
  %wc = train.get_param @wc : tensor<2x1x3x3xf32>
  %c = train.conv %x, %wc {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<2x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x2x2xf32>
  %wt = train.get_param @wt : tensor<2x3x3x3xf32>
  %t = train.conv_grad_data %c, %wt {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<2x2x2x2xf32>, tensor<2x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  %y = train.reshape %t : (tensor<2x3x4x4xf32>) -> tensor<2x48xf32>
  return %y : tensor<2x48xf32>
}
