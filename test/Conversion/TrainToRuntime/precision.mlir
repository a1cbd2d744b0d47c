// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=precision=bf16 | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s --check-prefix=F32
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | not grep -q "precision bf16"
// RUN: not mgs-opt %s --train-build-step --convert-train-to-runtime=precision=fp8 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not mgs-opt %s --train-build-step "--convert-train-to-runtime=precision=bf16 target=cuda" 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=precision=f16 | FileCheck %s --check-prefix=F16
// RUN: not mgs-opt %s --train-build-step "--convert-train-to-runtime=precision=f16 target=cuda" 2>&1 | FileCheck %s --check-prefix=F16CUDA
// RUN: mgs-opt %s --train-build-step "--convert-train-to-runtime=precision=f16 target=cuda unverified-gpu-precision" | FileCheck %s --check-prefix=F16

// precision=bf16 sets the precision field (the last) of every convolution,
// matmul and gemm descriptor, forward and backward, to 1
// (MGSRT_PRECISION_BF16); no other kernel's descriptor has one.
// conv: [S 2, N 2, C 1, M 2, group 1, in 4 4, kernel 3 3, out 2 2,
//        strides 1 1, pads 0 0 / 0 0, dilations 1 1, precision]
// CHECK-DAG: @[[CONV:__mgs_desc_[0-9]+]](dense<[2, 2, 1, 2, 1, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1]> : tensor<20xi64>)
// matmul: [batch rank 0, m 2, k 8, n 5, trans 0 0, precision]
// CHECK-DAG: @[[MATMUL:__mgs_desc_[0-9]+]](dense<[0, 2, 8, 5, 0, 0, 1]> : tensor<7xi64>)
// gemm: [M 2, N 3, K 5, trans 0 1, alpha, beta, c0 0, c1 0, precision]
// CHECK-DAG: @[[GEMM:__mgs_desc_[0-9]+]](dense<[2, 3, 5, 0, 1, 4607182418800017408, 4607182418800017408, 0, 0, 1]> : tensor<10xi64>)
// The manifest says so, for the run's header (the float32 one has no such line).
// CHECK-DAG: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Aprecision bf16\0A
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK: %[[D1:.*]] = llvm.mlir.addressof @[[CONV]]
// CHECK: llvm.call @mgsrt_conv_fwd(%{{.*}}, %[[D1]], %{{.*}})
// CHECK: %[[D2:.*]] = llvm.mlir.addressof @[[MATMUL]]
// CHECK: llvm.call @mgsrt_matmul_fwd(%{{.*}}, %[[D2]], %{{.*}})
// CHECK: %[[D3:.*]] = llvm.mlir.addressof @[[GEMM]]
// CHECK: llvm.call @mgsrt_gemm_fwd(%{{.*}}, %[[D3]], %{{.*}})
// CHECK: %[[D4:.*]] = llvm.mlir.addressof @[[GEMM]]
// CHECK: llvm.call @mgsrt_gemm_bwd(%{{.*}}, %[[D4]], %{{.*}})
// CHECK: %[[D5:.*]] = llvm.mlir.addressof @[[MATMUL]]
// CHECK: llvm.call @mgsrt_matmul_bwd(%{{.*}}, %[[D5]], %{{.*}})
// CHECK: %[[D6:.*]] = llvm.mlir.addressof @[[CONV]]
// CHECK: llvm.call @mgsrt_conv_bwd_weights(%{{.*}}, %[[D6]], %{{.*}})

// The default is float32: the same descriptors end in 0.
// F32-DAG: dense<[2, 2, 1, 2, 1, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0]> : tensor<20xi64>
// F32-DAG: dense<[0, 2, 8, 5, 0, 0, 0]> : tensor<7xi64>
// F32-DAG: dense<[2, 3, 5, 0, 1, 4607182418800017408, 4607182418800017408, 0, 0, 0]> : tensor<10xi64>

// precision=f16: the same fields are 2 (MGSRT_PRECISION_F16), and the
// manifest's line says f16 (the driver then scales the loss).
// F16-DAG: dense<[2, 2, 1, 2, 1, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 2]> : tensor<20xi64>
// F16-DAG: dense<[0, 2, 8, 5, 0, 0, 2]> : tensor<7xi64>
// F16-DAG: dense<[2, 3, 5, 0, 1, 4607182418800017408, 4607182418800017408, 0, 0, 2]> : tensor<10xi64>
// F16-DAG: @__mgs_manifest("mgs-manifest 3\0Amode train{{.*}}\0Aprecision f16\0A

// BAD: error: convert-train-to-runtime: unknown precision 'fp8' (expected f32, bf16 or f16)
// CUDA: error: convert-train-to-runtime: precision bf16 is not enabled for target cuda yet (its CUDA kernels have not run on a GPU)
// F16CUDA: error: convert-train-to-runtime: precision f16 is not enabled for target cuda yet (its CUDA kernels have not run on a GPU)

train.parameter @wc trainable : tensor<2x1x3x3xf32>
train.parameter @wm trainable : tensor<8x5xf32>
train.parameter @wg trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<2x1x4x4xf32> {train.name = "x"}) -> (tensor<2x3xf32> {train.name = "y"}) {
  %wc = train.get_param @wc : tensor<2x1x3x3xf32>
  %c = train.conv %x, %wc {dilations = array<i64: 1, 1>, group = 1 : i64,
                           pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
      : (tensor<2x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x2x2xf32>
  %f = train.flatten %c {axis = 1 : i64} : (tensor<2x2x2x2xf32>) -> tensor<2x8xf32>
  %wm = train.get_param @wm : tensor<8x5xf32>
  %m = train.matmul %f, %wm : (tensor<2x8xf32>, tensor<8x5xf32>) -> tensor<2x5xf32>
  %wg = train.get_param @wg : tensor<3x5xf32>
  %y = train.gemm %m, %wg {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
      : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
