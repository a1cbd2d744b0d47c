//===- Passes.td - comm dialect passes ---------------------*- tablegen -*-===//

#ifndef MGS_DIALECT_COMM_TRANSFORMS_PASSES_TD
#define MGS_DIALECT_COMM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CommInsertAllReduce : Pass<"comm-insert-allreduce", "mlir::func::FuncOp"> {
  let summary = "Average every parameter gradient over the workers with a dense all-reduce";
  let description = [{
    The dense data-parallel baseline: each `train.gradient` is followed by a
    `comm.all_reduce_start`, and the `train.sgd_update` of the parameter uses
    the result of the matching `comm.wait`, placed right before it.
    comm-schedule then sinks the waits so that communication overlaps the
    rest of the backward pass.

    ```mlir
    // before
    %g = train.gradient @w, %dw {backprop_index = 0 : i64} : tensor<10xf32>
    train.sgd_update @w, %g : tensor<10xf32>
    // after
    %g = train.gradient @w, %dw {backprop_index = 0 : i64} : tensor<10xf32>
    %r = comm.all_reduce_start %g : tensor<10xf32>
    %avg = comm.wait %r : !comm.request<tensor<10xf32>>
    train.sgd_update @w, %avg : tensor<10xf32>
    ```
  }];
  let dependentDialects = ["mgs::comm::CommDialect"];
  let statistics = [
    Statistic<"numAllReduces", "num-all-reduces", "Gradients averaged with an all-reduce">,
  ];
}

def CommMergeBuckets : Pass<"comm-merge-buckets", "mlir::ModuleOp"> {
  let summary = "Merge the all-reduces of neighbouring gradients into buckets chosen by the planner";
  let description = [{
    Groups the `train_step`'s gradients (runs of consecutive layers in backprop
    order) by a planner strategy (lib/Planner: omgs, auto, single,
    threshold:BYTES, mgwfbp, greedy, layerwise, dense) over a calibration
    profile, or, without one, an analytic estimate (said in a remark). Each
    group of two or more gradients is concatenated into one bucket with one
    `comm.all_reduce_start`, and split back after its wait. Groups the plan
    keeps dense get the `comm.dense` attribute, which comm-sparsify-topk
    respects; groups exchanged by the global top-k or the balanced sparse
    all-reduce get `comm.collective` ("gtopk", "sparse-allreduce"). Run after
    comm-insert-allreduce, before comm-sparsify-topk.
  }];
  let dependentDialects = ["mgs::comm::CommDialect", "mgs::train::TrainDialect"];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"omgs\"",
           "The planner strategy">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "Calibration profile (JSON); empty: an analytic estimate">,
    Option<"workers", "workers", "int64_t", /*default=*/"1", "Data-parallel workers">,
    Option<"density", "density", "double", /*default=*/"0.001", "Top-k density">,
    Option<"batchSize", "batch-size", "int64_t", /*default=*/"0",
           "Per-worker batch size the step is compiled for (0: unknown); a profile "
           "measured at another one is used with a warning">,
    Option<"autoCollectives", "auto-collectives", "std::string", /*default=*/"\"\"",
           "The collectives strategy auto chooses from, comma-separated (allgather, "
           "allreduce, gtopk, sparse-allreduce); empty: all four">,
    Option<"exactPlan", "exact-plan", "bool", /*default=*/"false",
           "Search the exact optimum however long it takes (default: the search stops "
           "past its label budget with the plan the bounds certify within a gap, said "
           "in a remark)">,
  ];
  let statistics = [
    Statistic<"numBuckets", "num-buckets", "Buckets of two or more gradients">,
  ];
}

def CommSchedule : Pass<"comm-schedule", "mlir::func::FuncOp"> {
  let summary = "Start collectives as early and wait for them as late as possible";
  let description = [{
    Wait-free backprop: every collective already starts right after the last
    gradient it carries is produced; this pass moves each `comm.wait`, with
    the parameter updates that use its result, to the end of the step, after
    the backward pass, keeping their order. Updates only write their own
    parameter, which no later op of the backward pass reads (its gradient is
    complete), so moving them is always legal.
  }];
  let statistics = [
    Statistic<"numMoved", "num-moved", "Waits moved to the end of the step">,
  ];
}

def CommSparsifyTopK : Pass<"comm-sparsify-topk", "mlir::ModuleOp"> {
  let summary = "Replace dense gradient all-reduces by top-k sparsification with error feedback";
  let description = [{
    Each `comm.all_reduce_start` of a parameter gradient of at least
    `min-elements` elements becomes OMGS-SGD's sparse exchange: the top
    k = max(1, floor(density * n)) entries of gradient + residual are
    all-gathered from the `workers` workers, and the wait's result is their
    scatter-added average. The residual is a new state parameter
    `mgs.residual/<param>`, zero at the start, which keeps what was not sent.

    ```mlir
    // before
    %r = comm.all_reduce_start %g : tensor<1000xf32>
    %avg = comm.wait %r : !comm.request<tensor<1000xf32>>
    // after (density 0.01, 4 workers)
    %v, %i = comm.topk_sparsify %g, @"mgs.residual/w" {k = 10 : i64} : tensor<1000xf32> -> tensor<10xf32>, tensor<10xi32>
    %r = comm.all_gather_start %v, %i {workers = 4 : i64} : ... -> !comm.request<tensor<40xf32>, tensor<40xi32>>
    %gv, %gi = comm.wait %r : !comm.request<tensor<40xf32>, tensor<40xi32>>
    %avg = comm.scatter_add %gv, %gi {workers = 4 : i64} : tensor<40xf32>, tensor<40xi32> -> tensor<1000xf32>
    ```

    `collective` chooses the exchange of the sparse gradients: `allgather`
    (above), `gtopk` (comm.gtopk_start, whose k global entries are
    scatter-added over 1 worker) or `sparse-allreduce`
    (comm.sparse_all_reduce_start, balanced regions, whose wait gives the
    average itself). A `comm.collective` string attribute on an all-reduce
    (the plan's choice for its group) overrides it for that gradient.
  }];
  let dependentDialects = ["mgs::comm::CommDialect", "mgs::train::TrainDialect"];
  let options = [
    Option<"density", "density", "double", /*default=*/"0.001",
           "Fraction of each gradient's entries sent, in (0, 1]">,
    Option<"workers", "workers", "int64_t", /*default=*/"1",
           "Number of data-parallel workers the model runs on">,
    Option<"minElements", "min-elements", "int64_t", /*default=*/"0",
           "Gradients with fewer elements stay dense">,
    Option<"halfValues", "half-values", "bool", /*default=*/"false",
           "Send the values as IEEE half precision (6 bytes per entry, not 8)">,
    Option<"bf16Values", "bf16-values", "bool", /*default=*/"false",
           "Send the values as bfloat16 (6 bytes per entry, not 8; float32's range)">,
    Option<"maxDensity", "max-density", "double", /*default=*/"0",
           "The largest density a run-time warm-up may ask for (0: density); "
           "the exchange buffers hold floor(max-density * n) entries">,
    Option<"collective", "collective", "std::string", /*default=*/"\"allgather\"",
           "The exchange of the sparse gradients: allgather, gtopk (global top-k) or "
           "sparse-allreduce (balanced sparse all-reduce)">,
  ];
  let statistics = [
    Statistic<"numSparsified", "num-sparsified", "Gradients sent as top-k values and indices">,
  ];
}

#endif // MGS_DIALECT_COMM_TRANSFORMS_PASSES_TD
