// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(train-fuse-batch-norm-relu))' | FileCheck %s
// RUN: mgs-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(train-fuse-batch-norm-relu),train-build-step)' | FileCheck %s --check-prefix=STEP

// A ReLU that is the normalization's only user is fused into it.
// CHECK-LABEL: func.func @forward
//       CHECK:   %[[Y:[^,]*]], {{.*}} = train.batch_norm {{.*}} {epsilon = {{.*}}, momentum = {{.*}}, relu, training}
//   CHECK-NOT:   train.relu
//       CHECK:   return %[[Y]]
// The backward recomputes the ReLU's mask inside the normalization's gradient.
// STEP-LABEL: func.func @train_step
//   STEP-NOT:   train.unary_grad
//       STEP:   train.batch_norm_grad %{{.*}}, %[[S:[^,]*]], %{{.*}}, %{{.*}}, %{{.*}}, %[[B:[^ ]*]] {relu}
train.parameter @s trainable : tensor<3xf32>
train.parameter @b trainable : tensor<3xf32>
train.parameter @m : tensor<3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = train.get_param @s : tensor<3xf32>
  %b = train.get_param @b : tensor<3xf32>
  %m = train.get_param @m : tensor<3xf32>
  %y, %rm, %rv, %sm, %si = train.batch_norm %x, %s, %b, %m, %m {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = train.relu %y : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// The normalized value is used elsewhere too: nothing is fused.
// CHECK-LABEL: func.func @forward(%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<3xf32>)
//       CHECK:   train.batch_norm
//   CHECK-NOT:   relu,
//       CHECK:   train.relu
func.func @forward(%x: tensor<2x3xf32>, %p: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %y, %rm, %rv, %sm, %si = train.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = train.relu %y : tensor<2x3xf32>
  return %r, %y : tensor<2x3xf32>, tensor<2x3xf32>
}
