// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step --convert-train-to-runtime=target=cuda | FileCheck %s

// A mixture-of-experts router as mgs-import-onnx builds it from ONNX TopK: the
// positions of each row's 2 greatest router probabilities (descriptor [rows,
// len, k, largest] = [4, 3, 2, 1]), their values a gather of the flattened
// probabilities at row * 3 + position, and each row's two experts' weights
// gathered from a stacked parameter at the positions. The gradient reaches
// the router through the values' gather and the experts through theirs;
// nothing is computed for the positions in the backward pass.
// CHECK-DAG: llvm.mlir.global internal constant @[[TOPK:__mgs_desc_[0-9]+]](dense<[4, 3, 2, 1]> : tensor<4xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         llvm.call @mgsrt_softmax_fwd
// CHECK:         %[[D:.*]] = llvm.mlir.addressof @[[TOPK]]
// CHECK:         llvm.call @mgsrt_topk_positions(%{{.*}}, %[[D]], %{{.*}})
// CHECK:         llvm.call @mgsrt_to_index
// CHECK:         llvm.call @mgsrt_gather_fwd
// CHECK:         llvm.call @mgsrt_to_index
// CHECK:         llvm.call @mgsrt_gather_fwd
// CHECK:         llvm.call @mgsrt_gather_bwd
// CHECK:         llvm.call @mgsrt_gather_bwd
// CHECK:         llvm.call @mgsrt_softmax_bwd
// CHECK-NOT:     llvm.call @mgsrt_topk_positions
// CHECK:         llvm.return
train.parameter @router trainable : tensor<5x3xf32>
train.parameter @experts trainable : tensor<3x5xf32>
func.func @forward(%x: tensor<4x5xf32> {train.name = "x"}) -> (tensor<4x2xf32> {train.name = "y"}) {
  %w = train.get_param @router : tensor<5x3xf32>
  %logits = train.matmul %x, %w : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %probs = train.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %pos = train.topk_positions %probs {k = 2, largest = true} : tensor<4x3xf32> -> tensor<4x2xf32>
  %rows = arith.constant dense<[[0.0], [3.0], [6.0], [9.0]]> : tensor<4x1xf32>
  %flat = train.add %pos, %rows : tensor<4x2xf32>, tensor<4x1xf32> -> tensor<4x2xf32>
  %fi = train.to_index %flat : tensor<4x2xf32> -> tensor<4x2xi64>
  %table = train.reshape %probs : (tensor<4x3xf32>) -> tensor<12x1xf32>
  %v1 = train.gather %table, %fi : (tensor<12x1xf32>, tensor<4x2xi64>) -> tensor<4x2x1xf32>
  %vals = train.reshape %v1 : (tensor<4x2x1xf32>) -> tensor<4x2xf32>
  %ei = train.to_index %pos : tensor<4x2xf32> -> tensor<4x2xi64>
  %e = train.get_param @experts : tensor<3x5xf32>
  %we = train.gather %e, %ei : (tensor<3x5xf32>, tensor<4x2xi64>) -> tensor<4x2x5xf32>
  %x3 = train.reshape %x : (tensor<4x5xf32>) -> tensor<4x5x1xf32>
  %out = train.matmul %we, %x3 : (tensor<4x2x5xf32>, tensor<4x5x1xf32>) -> tensor<4x2x1xf32>
  %o2 = train.reshape %out : (tensor<4x2x1xf32>) -> tensor<4x2xf32>
  %y = train.mul %o2, %vals : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
