// RUN: mgs-opt %s --train-build-step=loss=graph --convert-train-to-runtime | FileCheck %s
// RUN: mgs-opt %s --train-build-step=loss=graph --convert-train-to-runtime=target=cuda | FileCheck %s

// Class labels fed as data, one-hot by an equal with 0 .. 3 (what the
// importer makes of torch.export's F.one_hot): from_index's descriptor is
// [count, lo, hi]. Nothing flows back into the labels, so the step calls it
// once, before the scores' gradient.
// CHECK-DAG: llvm.mlir.global internal constant @[[D:__mgs_desc_[0-9]+]](dense<[2, -16777216, 16777216]> : tensor<3xi64>)
// CHECK-LABEL: llvm.func @mgs_train_step(
// CHECK:         %[[A:.*]] = llvm.mlir.addressof @[[D]]
// CHECK:         llvm.call @mgsrt_from_index(%{{.*}}, %[[A]], %{{.*}})
// CHECK-NOT:     llvm.call @mgsrt_from_index
// CHECK:         llvm.return
train.parameter @w trainable : tensor<2x4xf32>
func.func @forward(%t: tensor<2x1xi64> {train.name = "t"}) -> (tensor<f32> {train.name = "loss"}) {
  %w = train.get_param @w : tensor<2x4xf32>
  %f = train.from_index %t {lo = -16777216 : i64, hi = 16777216 : i64} : tensor<2x1xi64> -> tensor<2x1xf32>
  %r = arith.constant dense<[[0.0, 1.0, 2.0, 3.0]]> : tensor<1x4xf32>
  %h = train.equal %f, %r : tensor<2x1xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
  %p = train.mul %w, %h : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = train.reduce "sum" %p {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
