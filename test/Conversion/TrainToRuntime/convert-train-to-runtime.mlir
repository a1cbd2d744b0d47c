// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s --check-prefix=CUDA
// RUN: not mgs-opt %s --train-build-step --convert-train-to-runtime=target=tpu 2>&1 | FileCheck %s --check-prefix=BADTARGET
// RUN: mgs-opt %s --train-build-step="ignore-index=2 label-smoothing=0.1 reduction=sum" --convert-train-to-runtime | FileCheck %s --check-prefix=LOSSOPTS
// RUN: mgs-opt %s --train-build-step="loss=mse reduction=sum" --convert-train-to-runtime | FileCheck %s --check-prefix=SUM
// RUN: mgs-opt %s --train-build-step="loss=smooth-l1 smooth-l1-beta=0.25" --convert-train-to-runtime | FileCheck %s --check-prefix=REGRESSION
// RUN: mgs-opt %s --train-build-step="class-weights=0.5,2,1" --convert-train-to-runtime | FileCheck %s --check-prefix=WEIGHTS
// RUN: mgs-opt %s --train-build-step="loss=bce-with-logits pos-weight=3,0.5,0.1" --convert-train-to-runtime | FileCheck %s --check-prefix=POS

// bce-with-logits's pos_weight: a constant global, the fifth buffer, and in
// the manifest (the evaluation's loss weighs the positives too), as float32.
// POS: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Alabels 2 2 3\0Aloss bce_with_logits\0Apos_weight 3 0.5 0.100000001\0Achecksum {{[0-9a-f]+}}\0A\00")
// POS: llvm.mlir.global internal constant @[[PW:__mgs_const_[0-9]+]](dense<[3.000000e+00, 5.000000e-01, 1.000000e-01]> : tensor<3xf32>)
// POS-LABEL: llvm.func @mgs_train_step(
// POS:       %[[PP:.*]] = llvm.mlir.addressof @[[PW]]
// POS:       %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// POS-NEXT:  llvm.store %[[PP]], %[[SLOT]]
// POS-NEXT:  llvm.mlir.addressof @__mgs_desc_
// POS-NEXT:  llvm.call @mgsrt_elementwise_loss

// Class weights: a constant global, the cross-entropy's fifth buffer.
// WEIGHTS: llvm.mlir.global internal constant @[[CW:__mgs_const_[0-9]+]](dense<[5.000000e-01, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>)
// WEIGHTS-LABEL: llvm.func @mgs_train_step(
// WEIGHTS:       %[[WP:.*]] = llvm.mlir.addressof @[[CW]]
// WEIGHTS:       %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// WEIGHTS-NEXT:  llvm.store %[[WP]], %[[SLOT]]
// WEIGHTS-NEXT:  llvm.mlir.addressof @__mgs_desc_
// WEIGHTS-NEXT:  llvm.call @mgsrt_softmax_cross_entropy

// A regression: float targets of the output's shape (labels 2 2 3), the loss
// and its beta instead of classes; the descriptor [kind 2 (smooth_l1),
// count 6, beta's float64 bits, the last axis 3, 0: the mean].
// REGRESSION: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Aoutput y 2 2 3\0Alabels 2 2 3\0Aloss smooth_l1 0.25\0Achecksum {{[0-9a-f]+}}\0A\00")
// REGRESSION: llvm.mlir.global internal constant @[[EL:__mgs_desc_[0-9]+]](dense<[2, 6, 4598175219545276416, 3, 0]> : tensor<5xi64>)
// REGRESSION-LABEL: llvm.func @mgs_train_step(
// REGRESSION:       llvm.mlir.addressof @[[EL]]
// REGRESSION-NEXT:  llvm.call @mgsrt_elementwise_loss

// reduction=sum: the descriptor's last entry 1 (not divided by the count).
// SUM: llvm.mlir.global internal constant @[[EL:__mgs_desc_[0-9]+]](dense<[0, 6, 4607182418800017408, 3, 1]> : tensor<5xi64>)
// SUM-LABEL: llvm.func @mgs_train_step(
// SUM:       llvm.mlir.addressof @[[EL]]
// SUM-NEXT:  llvm.call @mgsrt_elementwise_loss

// The loss's options: the descriptor is [N, C, ignore_index, the smoothing's
// float64 bits (of float32 0.1), 1: reduction "sum"]; the manifest names the ignored label (the
// driver accepts it in the data), which it leaves out at PyTorch's -100.
// LOSSOPTS: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Aclasses 3\0Aignore_index 2\0Achecksum {{[0-9a-f]+}}\0A\00")
// LOSSOPTS: llvm.mlir.global internal constant @[[CE:__mgs_desc_[0-9]+]](dense<[2, 3, 2, 4591870180174331904, 1]> : tensor<5xi64>)
// LOSSOPTS-LABEL: llvm.func @mgs_train_step(
// LOSSOPTS:       llvm.mlir.addressof @[[CE]]
// LOSSOPTS-NEXT:  llvm.call @mgsrt_softmax_cross_entropy

// target=cuda changes the manifest (the runtime dispatches the same calls) and, for a
// step with constants, how it reads them (constant-indices.mlir).
// CUDA: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Aclasses 3\0Atarget cuda\0Achecksum {{[0-9a-f]+}}\0A\00")
// BADTARGET: error: convert-train-to-runtime: unknown target 'tpu' (expected cpu or cuda)

// The manifest describes the io layout the runtime's driver fills.
// CHECK: llvm.mlir.global internal constant @__mgs_manifest("mgs-manifest 3\0Amode train\0Abatch_size 2\0Aarena_bytes [[ARENA:[0-9]+]]\0Aparam w1 trainable 2 5 4\0Aparam w2 trainable 2 3 5\0Ainput x 2 2 4\0Aoutput y 2 2 3\0Alabels 1 2\0Aclasses 3\0Achecksum {{[0-9a-f]+}}\0A\00")

// Descriptors are constants, one per call site: the first gemm is
// [M, N, K, trans_a, trans_b, alpha, beta, c0, c1, precision] with alpha = beta = 1.0
// and precision 0 (float32).
// CHECK-DAG: llvm.mlir.global internal constant @[[GEMM1:__mgs_desc_[0-9]+]](dense<[2, 5, 4, 0, 1, 4607182418800017408, 4607182418800017408, 0, 0, 0]> : tensor<10xi64>)

// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK-SAME:      %[[CTX:[^:]*]]: !llvm.ptr, %[[IO:[^:]*]]: !llvm.ptr) -> i32
// io[0] is the arena.
// CHECK:         %[[ARENA_SLOT:.*]] = llvm.getelementptr %[[IO]][0]
// CHECK:         %[[ARENA_PTR:.*]] = llvm.load %[[ARENA_SLOT]]
// CHECK:         %[[BUFS:.*]] = llvm.alloca
// io[5] is the input x (after the arena, 2 params and 2 velocities).
// CHECK:         llvm.getelementptr %[[IO]][5]
// CHECK:         %[[DESC:.*]] = llvm.mlir.addressof @[[GEMM1]]
// CHECK:         llvm.call @mgsrt_gemm_fwd(%[[CTX]], %[[DESC]], %[[BUFS]])
// CHECK:         llvm.call @mgsrt_unary_fwd
// CHECK:         llvm.call @mgsrt_gemm_fwd
// CHECK:         llvm.call @mgsrt_softmax_cross_entropy
// CHECK:         llvm.call @mgsrt_gemm_bwd
// CHECK:         llvm.call @mgsrt_sgd_update
// CHECK:         llvm.call @mgsrt_unary_bwd
// CHECK:         llvm.call @mgsrt_gemm_bwd
// CHECK:         llvm.call @mgsrt_sgd_update
// CHECK:         %[[STATUS:.*]] = llvm.call @mgsrt_ctx_status(%[[CTX]])
// CHECK:         llvm.return %[[STATUS]] : i32

// CHECK-LABEL: llvm.func @mgs_eval_step(
// CHECK:         llvm.call @mgsrt_gemm_fwd
// CHECK:         llvm.call @mgsrt_unary_fwd
// CHECK:         llvm.call @mgsrt_gemm_fwd
// CHECK-NOT:     llvm.call @mgsrt_sgd_update
// CHECK:         llvm.return

// CHECK-LABEL: llvm.func @mgs_model_manifest() -> !llvm.ptr
// CHECK-NOT:   train.
// CHECK-NOT:   func.func
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
