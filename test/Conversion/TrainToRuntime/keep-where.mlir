// RUN: mgs-opt %s --train-build-step | FileCheck %s --check-prefix=STEP
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// masked_fill(h <= 0, -0.5) as mgs-import-onnx builds it from ONNX LessOrEqual and
// Where: keep_where(-0.5, 0 >= h) + keep_where(h, 1 - (0 >= h)). The comparison
// carries no gradient; h's is the result's kept where h is chosen (binary_grad
// "keep_where", whose rhs gradient nothing reads). Lowered to the runtime's
// binary op codes: 5 greater_equal, 7 keep_where.
// STEP-LABEL: func.func @train_step(
// STEP:         %[[H:.*]] = train.gemm
// STEP:         %[[C:.*]] = train.greater_equal %{{.*}}, %[[H]]
// STEP:         %[[N:.*]] = train.sub %{{.*}}, %[[C]]
// STEP:         train.keep_where %[[H]], %[[N]]
// STEP:         %{{.*}}, %[[DW:.*]] = train.gemm_grad
// STEP:         %[[DH:.*]], %{{.*}} = train.binary_grad "keep_where" %[[H]], %[[N]], %{{.*}}
// STEP-NOT:     train.binary_grad
// STEP:         train.gemm_grad %{{.*}}, %{{.*}}, %[[DH]]
// CHECK-DAG: llvm.mlir.global internal constant @[[GE:__mgs_desc_[0-9]+]](dense<[5, 2, 2, 3, 1, 1, 2, 3]> : tensor<8xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @[[KW:__mgs_desc_[0-9]+]](dense<[7, 2, 2, 3, 2, 3, 2, 3]> : tensor<8xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[D1:.*]] = llvm.mlir.addressof @[[GE]]
// CHECK:         llvm.call @mgsrt_binary_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK:         %[[D2:.*]] = llvm.mlir.addressof @[[KW]]
// CHECK:         llvm.call @mgsrt_binary_fwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK:         %[[D3:.*]] = llvm.mlir.addressof @[[KW]]
// CHECK-NEXT:    llvm.call @mgsrt_binary_bwd(%{{.*}}, %[[D3]], %{{.*}})
// CHECK:         llvm.return
train.parameter @w1 trainable : tensor<3x4xf32>
train.parameter @w2 trainable : tensor<2x3xf32>
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"}) -> (tensor<2x2xf32> {train.name = "y"}) {
  %w1 = train.get_param @w1 : tensor<3x4xf32>
  %h = train.gemm %x, %w1 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %fill = arith.constant dense<-0.5> : tensor<f32>
  %c = train.greater_equal %zero, %h : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %nc = train.sub %one, %c : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %f = train.keep_where %fill, %c : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %k = train.keep_where %h, %nc : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %m = train.add %f, %k : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %w2 = train.get_param @w2 : tensor<2x3xf32>
  %y = train.gemm %m, %w2 {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
