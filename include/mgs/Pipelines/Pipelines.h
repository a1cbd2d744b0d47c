//===- Pipelines.h - The mgs training pipeline ------------------*- C++ -*-===//
//
// mgs-train-pipeline: the passes that turn an imported model (train dialect)
// into a data-parallel training step and lower it to runtime calls, in the
// order mgsc runs them:
//
//   train-fuse-batch-norm-relu, [train-fuse-layer-norm,
//   train-fold-transpose-into-matmul (target cpu)], train-build-step,
//   [comm-insert-allreduce, comm-merge-buckets (merged strategies),
//    comm-sparsify-topk (sparse and merged strategies), comm-schedule],
//   [train-clip-grad-norm (clip-grad-norm > 0)], convert-train-to-runtime
//
// mgsc writes the weights file between the step and the lowering, so the two
// halves have their own builders; the registered pipeline runs both:
//
//   mgs-opt --mgs-train-pipeline='strategy=omgs workers=4 density=0.01' model.mlir
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PIPELINES_PIPELINES_H
#define MGS_PIPELINES_PIPELINES_H

#include "mgs/Planner/Strategy.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mgs {

/// The options of mgs-train-pipeline (mgsc's flags of the same names).
struct TrainPipelineOptions : public mlir::PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> strategy{*this, "strategy", llvm::cl::desc(planner::strategyHelp()),
                               llvm::cl::init("none")};
  Option<int64_t> workers{*this, "workers",
                          llvm::cl::desc("Sparse and merged strategies: the number of workers"),
                          llvm::cl::init(0)};
  Option<double> density{*this, "density",
                         llvm::cl::desc("Sparse strategies: fraction of each gradient sent"),
                         llvm::cl::init(0.001)};
  ListOption<double> densityWarmup{
      *this, "density-warmup",
      llvm::cl::desc("Sparse strategies: densities of the first epochs, before `density`")};
  Option<bool> fp16Values{*this, "fp16-values",
                          llvm::cl::desc("Sparse strategies: top-k values as IEEE half"),
                          llvm::cl::init(false)};
  Option<bool> bf16Values{*this, "bf16-values",
                          llvm::cl::desc("Sparse strategies: top-k values as bfloat16"),
                          llvm::cl::init(false)};
  Option<std::string> sparseCollective{
      *this, "sparse-collective",
      llvm::cl::desc("Sparse strategies: the exchange of the sparse gradients the plan does not "
                     "choose one for: allgather, gtopk (global top-k) or sparse-allreduce "
                     "(balanced sparse all-reduce)"),
      llvm::cl::init("allgather")};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("Merged strategies: the calibration profile (empty: an estimate)"),
      llvm::cl::init("")};
  Option<bool> exactPlan{
      *this, "exact-plan",
      llvm::cl::desc("Merged strategies: search the exact optimum however long it takes "
                     "(default: stop past the search's budget, within a certified gap)"),
      llvm::cl::init(false)};
  Option<int64_t> batchSize{
      *this, "batch-size",
      llvm::cl::desc("Merged strategies: the per-worker batch size the step is compiled for "
                     "(0: unknown), checked against the profile's"),
      llvm::cl::init(0)};
  Option<bool> inference{*this, "inference",
                         llvm::cl::desc("Build the forward alone (@eval_step), no training"),
                         llvm::cl::init(false)};
  Option<bool> evalMode{*this, "eval-mode",
                        llvm::cl::desc("With inference: evaluation semantics (BatchNorm with "
                                       "its running statistics, dropout the identity)"),
                        llvm::cl::init(false)};
  Option<std::string> target{*this, "target", llvm::cl::desc("Where the kernels run: cpu or cuda"),
                             llvm::cl::init("cpu")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("The arithmetic of GEMMs, matmuls and convolutions: f32, bf16 or f16 "
                     "(bfloat16 or half operands, float32 accumulation; target cpu)"),
      llvm::cl::init("f32")};
  Option<bool> unverifiedGpuPrecision{
      *this, "unverified-gpu-precision",
      llvm::cl::desc("Allow precision bf16 or f16 with target cuda, whose CUDA kernels have "
                     "not been verified on a GPU yet (bench/gpu_check.sh verifies them)"),
      llvm::cl::init(false)};
  Option<bool> instrument{*this, "instrument",
                          llvm::cl::desc("Calibration build (mgsc --profile-generate)"),
                          llvm::cl::init(false)};
  Option<double> clipGradNorm{
      *this, "clip-grad-norm",
      llvm::cl::desc("Clip the global norm of the averaged gradients to this (0: no clipping); "
                     "the updates then wait for every gradient"),
      llvm::cl::init(0.0)};
  Option<int64_t> accumulate{
      *this, "accumulate",
      llvm::cl::desc("Batches per optimizer step: their gradients (each of the loss over N) "
                     "summed before the exchange and the update (gradient accumulation)"),
      llvm::cl::init(1)};
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("The loss: cross-entropy (class labels), or mse, l1, smooth-l1, "
                     "bce-with-logits (float targets of the first output's shape)"),
      llvm::cl::init("cross-entropy")};
  Option<double> smoothL1Beta{*this, "smooth-l1-beta",
                              llvm::cl::desc("smooth-l1's beta (0 is l1)"), llvm::cl::init(1.0)};
  Option<int64_t> ignoreIndex{
      *this, "ignore-index",
      llvm::cl::desc("The label the loss ignores (padding; PyTorch's default -100)"),
      llvm::cl::init(-100)};
  Option<double> labelSmoothing{
      *this, "label-smoothing",
      llvm::cl::desc("Label smoothing of the cross-entropy, in [0, 1] (0: none)"),
      llvm::cl::init(0.0)};
  ListOption<double> classWeights{
      *this, "class-weights",
      llvm::cl::desc("One weight >= 0 per class for the cross-entropy (PyTorch's weight=)")};
  ListOption<double> posWeight{
      *this, "pos-weight",
      llvm::cl::desc("bce-with-logits: one weight >= 0 per position of the output's last axis "
                     "for the positive targets (PyTorch's pos_weight)")};
  Option<int64_t> classAxis{
      *this, "class-axis",
      llvm::cl::desc("The cross-entropy's class axis in a first output of rank >= 3 (1: "
                     "(N, C, d1, ...); -1: (N, d1, ..., C)), trained as rows against labels "
                     "(N, d1, ...); 0: not given"),
      llvm::cl::init(0)};
  Option<std::string> reduction{
      *this, "reduction",
      llvm::cl::desc("The loss's reduction over the samples: mean (PyTorch's default) or sum"),
      llvm::cl::init("mean")};
  Option<bool> lower{*this, "lower",
                     llvm::cl::desc("Lower the step to runtime calls (false: stop after the "
                                    "communication passes, as mgsc --emit=mlir)"),
                     llvm::cl::init(true)};
};

/// Checks what the builders need: a known strategy, workers >= 1 and a
/// density in (0, 1] for a strategy that exchanges top-k or plans, densities
/// of the warm-up in (0, 1], no strategy with `inference`, a known target.
/// Each problem is reported through `emitError`.
mlir::LogicalResult
verifyTrainPipelineOptions(const TrainPipelineOptions &options,
                           llvm::function_ref<void(const llvm::Twine &)> emitError);

/// The options' strategy; they must pass verifyTrainPipelineOptions.
planner::Strategy getStrategy(const TrainPipelineOptions &options);

/// Adds the passes that build the training step and its gradient exchange
/// (train-fuse-batch-norm-relu ... comm-schedule) to a module pass manager.
/// The options must pass verifyTrainPipelineOptions.
void buildTrainStepPipeline(mlir::OpPassManager &pm, const TrainPipelineOptions &options);

/// Adds the lowering of the step to runtime calls (convert-train-to-runtime).
void buildLoweringPipeline(mlir::OpPassManager &pm, const TrainPipelineOptions &options);

/// buildTrainStepPipeline, then buildLoweringPipeline unless `lower` is
/// false: what mgs-train-pipeline runs.
void buildTrainPipeline(mlir::OpPassManager &pm, const TrainPipelineOptions &options);

/// Registers mgs-train-pipeline (its options are checked when it is parsed).
void registerTrainPipeline();

} // namespace mgs

#endif // MGS_PIPELINES_PIPELINES_H
