// RUN: mgs-opt %s --comm-merge-buckets="strategy=single workers=4" -verify-diagnostics | FileCheck %s
// RUN: mgs-opt %s --comm-merge-buckets="strategy=layerwise workers=4" | FileCheck %s --check-prefix=LAYERWISE
// RUN: not mgs-opt %s --comm-merge-buckets="strategy=omgs workers=4 profile=%S/Inputs/wrong-profile.json" 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: not mgs-opt %s --comm-merge-buckets="strategy=fastest" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not mgs-opt %s --comm-merge-buckets="strategy=omgs workers=0" 2>&1 | FileCheck %s --check-prefix=WORKERS
// WORKERS: error: comm-merge-buckets: workers must be in [1, 16777216], got 0
// RUN: not mgs-opt %s --comm-merge-buckets="strategy=omgs workers=4 batch-size=-4" 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: comm-merge-buckets: batch-size must be positive (0: unknown), got -4
// RUN: not mgs-opt %s --comm-merge-buckets="strategy=omgs workers=4 density=nan" 2>&1 | FileCheck %s --check-prefix=DENSITY
// DENSITY: error: comm-merge-buckets: density must be in (0, 1], got nan
// A parameter of no elements is refused where it is declared, by name.
// RUN: echo 'train.parameter @z trainable : tensor<3x0xf32> func.func @train_step(%%d: tensor<3x0xf32>) { %%g = train.gradient @z, %%d {backprop_index = 0 : i64} : tensor<3x0xf32> %%r = comm.all_reduce_start %%g : tensor<3x0xf32> %%a = comm.wait %%r : !comm.request<tensor<3x0xf32>> train.sgd_update @z, %%a : tensor<3x0xf32> return }' | not mgs-opt --comm-merge-buckets="strategy=omgs workers=4" 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: <stdin>:1:1: error: comm-merge-buckets: parameter 'z' has no elements ('tensor<3x0xf32>'): its gradient is nothing to plan or exchange
// RUN: mgs-opt %s --comm-merge-buckets="strategy=gtopk workers=8" 2>/dev/null | FileCheck %s --check-prefix=GTOPK
// RUN: mgs-opt %s --comm-merge-buckets="strategy=sparse-allreduce workers=8" 2>/dev/null | FileCheck %s --check-prefix=SPARSE
// RUN: mgs-opt %s --comm-merge-buckets="strategy=auto workers=8 auto-collectives=allreduce" 2>/dev/null | FileCheck %s --check-prefix=AUTO-DENSE
// RUN: not mgs-opt %s --comm-merge-buckets="strategy=auto auto-collectives=allgather,ring" 2>&1 | FileCheck %s --check-prefix=AUTO-BAD

// strategy=single: the three gradients form one bucket, concatenated after
// the last of them, all-reduced once and split back for the updates.
// CHECK-LABEL: func.func @train_step
//       CHECK:   %[[G2:.*]] = train.gradient @w2
//       CHECK:   %[[G1:.*]] = train.gradient @w1
//       CHECK:   %[[G0:.*]] = train.gradient @b
// Forward order (b, w1, w2): the reverse of backprop order.
//       CHECK:   %[[F1:.*]] = train.reshape %[[G1]] : (tensor<2x3xf32>) -> tensor<6xf32>
//       CHECK:   %[[CAT:.*]] = train.concat {{.*}} {axis = 0 : i64, comm.bucket = "b..w2"} : (tensor<3xf32>, tensor<6xf32>, tensor<4xf32>) -> tensor<13xf32>
//       CHECK:   %[[R:.*]] = comm.all_reduce_start %[[CAT]] : tensor<13xf32>
//       CHECK:   %[[W:.*]] = comm.wait %[[R]]
//       CHECK:   %[[S:.*]]:3 = train.split %[[W]] {axis = 0 : i64}
//   CHECK-NOT:   comm.all_reduce_start
//   CHECK-DAG:   train.sgd_update @w2
//   CHECK-DAG:   train.sgd_update @w1
//   CHECK-DAG:   train.sgd_update @b
// LAYERWISE-COUNT-3: comm.all_reduce_start
// LAYERWISE-NOT: train.concat
// MISMATCH: error: comm-merge-buckets: profile '{{.*}}wrong-profile.json': layers: the profile has 1 layers, the model has 3 trainable parameters
// Every group's start carries the collective of strategies that name one.
// GTOPK: comm.all_reduce_start {{.*}}{comm.collective = "gtopk"}
// GTOPK-NOT: comm.all_reduce_start %{{[a-z0-9]+}} :
// SPARSE: comm.all_reduce_start {{.*}}{comm.collective = "sparse-allreduce"}
// SPARSE-NOT: comm.all_reduce_start %{{[a-z0-9]+}} :
// AUTO-DENSE: comm.all_reduce_start {{.*}}{comm.dense}
// AUTO-DENSE-NOT: comm.collective
// AUTO-BAD: error: comm-merge-buckets: auto-collectives: unknown collective 'ring'; expected allgather, allreduce, gtopk or sparse-allreduce
// STRATEGY: error: comm-merge-buckets: unknown strategy 'fastest'; expected one of dense, mgwfbp, single, layerwise, threshold:BYTES, greedy, omgs, gtopk, sparse-allreduce, auto
// expected-remark @below {{comm-merge-buckets: no profile; planning with an analytic estimate (calibrate for a better plan)}}
module {
  train.parameter @w1 trainable : tensor<2x3xf32>
  train.parameter @w2 trainable : tensor<4xf32>
  train.parameter @b trainable : tensor<3xf32>
  func.func @train_step(%d1: tensor<2x3xf32>, %d2: tensor<4xf32>, %db: tensor<3xf32>) {
    %g2 = train.gradient @w2, %d2 {backprop_index = 0 : i64} : tensor<4xf32>
    %r2 = comm.all_reduce_start %g2 : tensor<4xf32>
    %a2 = comm.wait %r2 : !comm.request<tensor<4xf32>>
    train.sgd_update @w2, %a2 : tensor<4xf32>
    %g1 = train.gradient @w1, %d1 {backprop_index = 1 : i64} : tensor<2x3xf32>
    %r1 = comm.all_reduce_start %g1 : tensor<2x3xf32>
    %a1 = comm.wait %r1 : !comm.request<tensor<2x3xf32>>
    train.sgd_update @w1, %a1 : tensor<2x3xf32>
    %gb = train.gradient @b, %db {backprop_index = 2 : i64} : tensor<3xf32>
    %rb = comm.all_reduce_start %gb : tensor<3xf32>
    %ab = comm.wait %rb : !comm.request<tensor<3xf32>>
    train.sgd_update @b, %ab : tensor<3xf32>
    return
  }
}
