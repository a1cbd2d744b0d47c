//===- Pipelines.cpp - The mgs training pipeline --------------------------===//
//
// mgs-train-pipeline's builders and registration; mgsc calls the same
// builders.
//
//===----------------------------------------------------------------------===//

#include "mgs/Pipelines/Pipelines.h"

#include "mgs/Conversion/Passes.h"
#include "mgs/Dialect/Comm/Transforms/Passes.h"
#include "mgs/Dialect/Train/Transforms/Passes.h"
#include "mgs/Support/FormatNumber.h"
#include "mgsrt/contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace mlir;

namespace mgs {

/// Whether the strategy runs comm-sparsify-topk: the sparse strategies and
/// every merged one (a merged plan marks the groups that stay dense; mgwfbp's
/// marks them all).
static bool runsTopK(const planner::Strategy &strategy) {
  return strategy.isSparse() || strategy.isMerged();
}

LogicalResult verifyTrainPipelineOptions(const TrainPipelineOptions &options,
                                         llvm::function_ref<void(const llvm::Twine &)> emitError) {
  llvm::Expected<planner::Strategy> strategy = planner::Strategy::parseWithNone(options.strategy);
  if (!strategy) {
    emitError("strategy: " + llvm::toString(strategy.takeError()));
    return failure();
  }
  bool topk = runsTopK(*strategy);
  if (topk && options.workers < 1) {
    emitError("strategy " + options.strategy + " needs workers >= 1 (the number of MPI ranks)");
    return failure();
  }
  // (0, the default, is "not given": mgsc sets workers only when it is.)
  if ((options.workers.hasValue() ? options.workers < 1 : options.workers < 0) ||
      options.workers > planner::kMaxWorkers) {
    emitError("workers must be in [1, " + std::to_string(planner::kMaxWorkers) + "], got " +
              std::to_string(options.workers));
    return failure();
  }
  if (options.batchSize < 0) {
    emitError("batch-size must be positive (0: the model's own), got " +
              std::to_string(options.batchSize));
    return failure();
  }
  // What mgsc refuses, refused here too (mgs-opt's users build the same steps).
  // The 16-bit value formats of the allgather ("" when neither is asked for).
  const char *narrowValues = options.fp16Values   ? "fp16-values"
                             : options.bf16Values ? "bf16-values"
                                                  : "";
  if (options.fp16Values && options.bf16Values) {
    emitError("fp16-values and bf16-values exclude each other");
    return failure();
  }
  if (!topk && (*narrowValues || !options.densityWarmup.empty())) {
    emitError(std::string(*narrowValues ? narrowValues : "density-warmup") +
              " needs a sparse strategy (layerwise, omgs, ...); the strategy is " +
              options.strategy);
    return failure();
  }
  if (options.evalMode && !options.inference) {
    emitError("eval-mode applies to inference (a training step evaluates in evaluation form "
              "already)");
    return failure();
  }
  if (options.smoothL1Beta != 1.0 && options.loss != "smooth-l1") {
    emitError("smooth-l1-beta is smooth-l1's; the loss is " + options.loss.getValue());
    return failure();
  }
  if (!(options.density > 0.0 && options.density <= 1.0)) {
    emitError("density must be in (0, 1], got " + formatNumber(options.density));
    return failure();
  }
  for (double d : options.densityWarmup)
    if (!(d > 0.0 && d <= 1.0)) {
      emitError("density-warmup: each density must be in (0, 1], got " + formatNumber(d));
      return failure();
    }
  if (strategy->communicates() && options.inference) {
    emitError("strategy applies to training; inference builds the forward alone");
    return failure();
  }
  if (options.target != "cpu" && options.target != "cuda") {
    emitError("target must be cpu or cuda, got '" + options.target + "'");
    return failure();
  }
  if (options.precision != "f32" && options.precision != "bf16" && options.precision != "f16") {
    emitError("precision must be f32, bf16 or f16, got '" + options.precision + "'");
    return failure();
  }
  if (options.precision != "f32" && options.target == "cuda" &&
      !options.unverifiedGpuPrecision) {
    emitError("precision " + options.precision +
              " is not enabled for target cuda yet (its CUDA kernels have not run on a GPU); "
              "drop --precision or --target cuda");
    return failure();
  }
  if (options.clipGradNorm < 0 || !std::isfinite(options.clipGradNorm.getValue())) {
    emitError("clip-grad-norm must be a positive number (0: no clipping), got " +
              std::to_string(options.clipGradNorm.getValue()));
    return failure();
  }
  if (options.accumulate < 1 || options.accumulate > mgs::contract::manifest::kMaxAccumulate) {
    emitError("accumulate must be a number of batches in [1, " +
              std::to_string(mgs::contract::manifest::kMaxAccumulate) + "], got " +
              std::to_string(options.accumulate.getValue()));
    return failure();
  }
  if (options.accumulate > 1 && options.inference) {
    emitError("accumulate applies to training; inference builds the forward alone");
    return failure();
  }
  if (options.instrument && options.inference) {
    emitError("instrument calibrates training; inference builds the forward alone");
    return failure();
  }
  if (options.accumulate > 1 && options.instrument) {
    emitError("accumulate: a calibration build (mgsc --profile-generate) measures one batch's "
              "backward; compile it without accumulation");
    return failure();
  }
  if (options.clipGradNorm > 0 && options.inference) {
    emitError("clip-grad-norm applies to training; inference builds the forward alone");
    return failure();
  }
  const std::string &loss = options.loss;
  if (loss != "cross-entropy" && loss != "mse" && loss != "l1" && loss != "smooth-l1" &&
      loss != "bce-with-logits" && loss != "graph") {
    emitError("loss must be cross-entropy, mse, l1, smooth-l1, bce-with-logits or graph, got '" +
              loss + "'");
    return failure();
  }
  // (It becomes a float32 attribute: within float32's range.)
  if (!(options.smoothL1Beta >= 0.0) ||
      std::isinf(static_cast<float>(options.smoothL1Beta.getValue()))) {
    emitError("smooth-l1-beta must be finite and >= 0, got " +
              std::to_string(options.smoothL1Beta.getValue()));
    return failure();
  }
  const bool crossEntropyOptions = options.labelSmoothing != 0.0 || options.ignoreIndex != -100 ||
                                   !options.classWeights.empty() || options.classAxis != 0;
  if (loss != "cross-entropy" && crossEntropyOptions) {
    emitError("label-smoothing, ignore-index, class-weights and class-axis are the "
              "cross-entropy's; the loss is " +
              loss);
    return failure();
  }
  if (!(options.labelSmoothing >= 0.0 && options.labelSmoothing <= 1.0)) {
    emitError("label-smoothing must be in [0, 1], got " +
              std::to_string(options.labelSmoothing.getValue()));
    return failure();
  }
  if (!options.posWeight.empty() && loss != "bce-with-logits") {
    emitError("pos-weight is bce-with-logits's; the loss is " + loss);
    return failure();
  }
  if (options.reduction != "mean" && options.reduction != "sum") {
    emitError("reduction must be mean or sum, got '" + options.reduction + "'");
    return failure();
  }
  if (loss != "cross-entropy" && options.inference) {
    emitError("loss applies to training; inference builds the forward alone");
    return failure();
  }
  if ((crossEntropyOptions || !options.posWeight.empty() || options.reduction != "mean") &&
      options.inference) {
    emitError("label-smoothing, ignore-index, class-weights, class-axis, pos-weight and "
              "reduction apply to training's loss; inference builds the forward alone");
    return failure();
  }
  const std::string &collective = options.sparseCollective;
  if (collective != "allgather" && collective != "gtopk" && collective != "sparse-allreduce") {
    emitError("sparse-collective must be allgather, gtopk or sparse-allreduce, got '" +
              collective + "'");
    return failure();
  }
  if (collective != "allgather" && !topk) {
    emitError("sparse-collective " + collective +
              " needs a sparse strategy (layerwise, omgs, ...); the strategy is " +
              options.strategy);
    return failure();
  }
  if (collective != "allgather" && *narrowValues) {
    emitError(std::string(narrowValues) + " applies to the allgather, not to sparse-collective " +
              collective);
    return failure();
  }
  return success();
}

planner::Strategy getStrategy(const TrainPipelineOptions &options) {
  return llvm::cantFail(planner::Strategy::parseWithNone(options.strategy),
                        "mgs-train-pipeline: verifyTrainPipelineOptions checks the strategy");
}

/// train-clip-grad-norm when clipping: last, on the exchanged gradients.
static void addGradientClipping(OpPassManager &pm, const TrainPipelineOptions &options) {
  if (options.clipGradNorm <= 0 || options.inference)
    return;
  train::TrainClipGradNormOptions clip;
  clip.maxNorm = options.clipGradNorm;
  pm.addNestedPass<func::FuncOp>(train::createTrainClipGradNorm(clip));
}

void buildTrainStepPipeline(OpPassManager &pm, const TrainPipelineOptions &options) {
  planner::Strategy strategy = getStrategy(options);
  pm.addNestedPass<func::FuncOp>(train::createTrainFuseBatchNormRelu());
  // The CUDA kernels of the fused layer norm and GELU and the CUDA matmul's
  // trans flags have not run on a GPU: the GPU runs the pieces and the
  // transposes.
  if (options.target == "cpu") {
    pm.addNestedPass<func::FuncOp>(train::createTrainFuseLayerNorm());
    pm.addNestedPass<func::FuncOp>(train::createTrainFuseGelu());
    pm.addNestedPass<func::FuncOp>(train::createTrainFoldTransposeIntoMatMul());
  }
  train::TrainBuildStepOptions stepOptions;
  stepOptions.inferenceOnly = options.inference;
  stepOptions.evalMode = options.evalMode;
  stepOptions.loss = options.loss;
  stepOptions.smoothL1Beta = options.smoothL1Beta;
  stepOptions.ignoreIndex = options.ignoreIndex;
  stepOptions.labelSmoothing = options.labelSmoothing;
  stepOptions.classWeights.assign(options.classWeights.begin(), options.classWeights.end());
  stepOptions.posWeight.assign(options.posWeight.begin(), options.posWeight.end());
  stepOptions.reduction = options.reduction;
  stepOptions.classAxis = options.classAxis;
  pm.addPass(train::createTrainBuildStep(stepOptions));
  if (options.accumulate > 1) {
    train::TrainAccumulateGradientsOptions accumulate;
    accumulate.steps = options.accumulate;
    pm.addPass(train::createTrainAccumulateGradients(accumulate));
  }
  if (!strategy.communicates())
    return addGradientClipping(pm, options);
  pm.addNestedPass<func::FuncOp>(comm::createCommInsertAllReduce());
  if (strategy.isMerged()) {
    comm::CommMergeBucketsOptions merge;
    merge.strategy = options.strategy;
    merge.profile = options.profile;
    merge.workers = options.workers;
    merge.density = options.density;
    merge.batchSize = options.batchSize;
    merge.exactPlan = options.exactPlan;
    // The global top-k and the balanced sparse all-reduce have no 16-bit
    // values: auto chooses without them there. (Both run on a GPU, on NCCL
    // or staged over MPI with the executable's --comm mpi.)
    if (options.fp16Values || options.bf16Values)
      merge.autoCollectives = "allgather,allreduce";
    pm.addPass(comm::createCommMergeBuckets(merge));
  }
  if (runsTopK(strategy)) {
    double maxDensity = options.density;
    for (double d : options.densityWarmup)
      maxDensity = std::max(maxDensity, d);
    comm::CommSparsifyTopKOptions sparse;
    sparse.density = options.density;
    sparse.workers = options.workers;
    sparse.maxDensity = options.densityWarmup.empty() ? 0.0 : maxDensity;
    sparse.halfValues = options.fp16Values;
    sparse.bf16Values = options.bf16Values;
    sparse.collective = options.sparseCollective;
    pm.addPass(comm::createCommSparsifyTopK(sparse));
  }
  pm.addNestedPass<func::FuncOp>(comm::createCommSchedule());
  addGradientClipping(pm, options);
}

void buildLoweringPipeline(OpPassManager &pm, const TrainPipelineOptions &options) {
  ConvertTrainToRuntimeOptions lowerOptions;
  lowerOptions.target = options.target;
  lowerOptions.precision = options.precision;
  lowerOptions.unverifiedGpuPrecision = options.unverifiedGpuPrecision;
  lowerOptions.instrument = options.instrument;
  if (!options.densityWarmup.empty()) {
    lowerOptions.densitySchedule.assign(options.densityWarmup.begin(), options.densityWarmup.end());
    lowerOptions.densitySchedule.push_back(options.density);
  }
  pm.addPass(createConvertTrainToRuntime(lowerOptions));
}

void buildTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &options) {
  buildTrainStepPipeline(pm, options);
  if (options.lower)
    buildLoweringPipeline(pm, options);
}

void registerTrainPipeline() {
  // registerPassPipeline rather than PassPipelineRegistration: its builder
  // can refuse the options with a message.
  registerPassPipeline(
      "mgs-train-pipeline",
      "The mgs training pipeline (mgsc's passes): build the training step, its gradient "
      "exchange for a strategy, and lower it to runtime calls",
      [](OpPassManager &pm, StringRef optionsText,
         llvm::function_ref<LogicalResult(const llvm::Twine &)> errorHandler) {
        TrainPipelineOptions options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        if (failed(verifyTrainPipelineOptions(options, [&](const llvm::Twine &message) {
              (void)errorHandler("mgs-train-pipeline: " + message);
            })))
          return failure();
        buildTrainPipeline(pm, options);
        return success();
      },
      [](llvm::function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(TrainPipelineOptions());
      });
}

} // namespace mgs
