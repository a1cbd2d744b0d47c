//===- Train.cpp - The training loop --------------------------------------===//
//
// The batches, the learning-rate schedule, the epochs of mgs_train_step
// with progress lines, the checkpoints, --trace's window and the final saves
// (the data sets: LoadData.cpp; the evaluation: Evaluate.cpp).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "FileIO.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <omp.h>

// Weak: a model compiled by an mgsc before accumulation has none; one whose
// manifest says `accumulate N` does (runTraining checks).
#pragma weak mgs_accum_step

namespace mgs::rt::driver {

namespace {

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    seconds = 0;
  long s = std::lround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
  return buf;
}

using Clock = std::chrono::steady_clock;

/// --trace skips this many iterations (oneDNN primitive creation, cuDNN's
/// algorithm choice) before recording.
constexpr int64_t kTraceWarmup = 2;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

mgsrt_status_t Driver::trainStep(bool first) {
  if (!o.cudaGraph || graphRefused || first)
    return mgs_train_step(ctx, trainIo.data());
  int ran = 0;
  if (mgsrt_graph_launch(ctx, &ran) != MGSRT_OK)
    return mgsrt_ctx_status(ctx);
  if (!ran) { // none yet, or stale: capture the step, then run it
    if (mgsrt_graph_begin(ctx) == MGSRT_OK) {
      mgs_train_step(ctx, trainIo.data()); // captured: its status is graph_end's
      if (mgsrt_graph_end(ctx, 1) == MGSRT_OK && mgsrt_graph_launch(ctx, &ran) == MGSRT_OK &&
          ran)
        ++graphCaptures;
    }
    if (!ran) {
      // Nothing of the step ran: it runs kernel by kernel. A step captured
      // before (its graph went stale: the density or loss scale changed,
      // scratch moved) may need one such step to grow its memory, so it is
      // captured again on the next; else it stays so, said once.
      std::string why = mgsrt_ctx_message(ctx);
      mgsrt_ctx_clear(ctx);
      if (graphCaptures == 0 || graphRetried) {
        graphRefused = true;
        if (rank == 0)
          std::printf("--cuda-graph: the step runs kernel by kernel: %s\n", why.c_str());
      }
      graphRetried = true;
      return mgs_train_step(ctx, trainIo.data());
    }
    graphRetried = false;
  }
  ++graphReplays;
  return MGSRT_OK;
}

// Copies `count` samples (and labels) into the batch; the rest is zero. An
// int64 input (token ids) gets the samples' values as integers.
bool Driver::fillBatch(const Dataset &from, const int64_t *indices, int64_t count,
                       void *const *inputsOut, void *labelsOut, bool augment) {
  void *labelMemory = labelsOut ? labelsOut : labels.get();
  int64_t *lab = labelMemory && m.loss.empty() ? static_cast<int64_t *>(labelMemory) : nullptr;
  float *targets = labelMemory && !m.loss.empty() ? static_cast<float *>(labelMemory) : nullptr;
  const int64_t L = labelsPerSample;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const Dataset &set = i == 0 ? from : otherInput(from, i);
    const bool ints = m.inputs[i].int64;
    const int64_t size = inputSampleSizes[i];
    void *inputMemory = inputsOut ? inputsOut[i] : inputs[i].get();
    float *in = static_cast<float *>(inputMemory);
    int64_t *inInts = static_cast<int64_t *>(inputMemory);
    for (int64_t j = 0; j < count; ++j) {
      if (ints)
        set.copySampleIds(indices[j], inInts + j * size);
      else
        set.copySample(indices[j], in + j * size);
    }
    const size_t rest = static_cast<size_t>((m.batchSize - count) * size);
    if (ints)
      std::fill(inInts + count * size, inInts + count * size + rest, 0);
    else
      std::fill(in + count * size, in + count * size + rest, 0.0f);
  }
  const bool ints = m.inputs[0].int64;
  float *in = static_cast<float *>(inputsOut ? inputsOut[0] : inputs[0].get());
  for (int64_t j = 0; j < count; ++j) {
    if (lab)
      from.copyLabels(indices[j], lab + j * L);
    if (targets)
      std::copy_n(from.targets.data() + indices[j] * L, L, targets + j * L);
    if (!ints)
      transformSample(indices[j], augment, in + j * sampleSize, lab ? lab + j * L : nullptr,
                      targets ? targets + j * L : nullptr);
  }
  if (count < m.batchSize) {
    if (lab)
      std::fill(lab + count * L, lab + m.batchSize * L, 0);
    if (targets)
      std::fill(targets + count * L, targets + m.batchSize * L, 0.0f);
  }
  return true;
}

int Driver::setupStaging() {
  for (BatchStaging &st : staging) {
    st.inputs.assign(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (mgsrt_host_alloc(ctx, inputs[i].bytes(), &st.inputs[i]) != MGSRT_OK)
        return error("allocating page-locked host memory for the batches: %s",
                     mgsrt_ctx_message(ctx));
    if (mgsrt_host_alloc(ctx, labels.bytes(), &st.labels) != MGSRT_OK)
      return error("allocating page-locked host memory for the batches: %s",
                   mgsrt_ctx_message(ctx));
  }
  return 0;
}

int Driver::accumulateBatches(const std::vector<int64_t> &order, int64_t epoch, int64_t it,
                              int64_t step, double allowance, double &lossSum) {
  for (int64_t a = 0; a + 1 < m.accumulate; ++a) {
    const int64_t u = it * m.accumulate + a;
    // Each batch is progress: a step of many batches is not a hang.
    markProgress("a training step", step, a == 0 ? allowance : 1);
    if (int rc = loadBatch(order, u))
      return rc;
    if (mgs_accum_step(ctx, trainIo.data()) != MGSRT_OK)
      return error("mgs_accum_step failed (epoch %lld, iteration %lld, batch %lld of %lld): %s%s",
                   static_cast<long long>(epoch + 1), static_cast<long long>(it + 1),
                   static_cast<long long>(a + 1), static_cast<long long>(m.accumulate),
                   mgsrt_ctx_message(ctx), peersNote().c_str());
    if (m.cuda)
      stageBatch(order, u + 1); // the step's batches are never its last
    if (int rc = toHost(loss))
      return rc;
    lossSum += *loss.f32();
  }
  return 0;
}

void Driver::stageBatch(const std::vector<int64_t> &order, int64_t it) {
  const BatchStaging &st = staging[it % 2];
  fillBatch(data, batchIndices(order, it), m.batchSize, st.inputs.data(), st.labels,
            /*augment=*/true);
}

int Driver::stagedToDevice(int64_t it) {
  const BatchStaging &st = staging[it % 2];
  bool copied =
      mgsrt_copy_to_device_async(ctx, labels.device, st.labels, labels.bytes()) == MGSRT_OK;
  for (size_t i = 0; copied && i < inputs.size(); ++i)
    copied = mgsrt_copy_to_device_async(ctx, inputs[i].device, st.inputs[i], inputs[i].bytes()) ==
             MGSRT_OK;
  if (!copied)
    return error("copying the batch to the GPU: %s%s", mgsrt_ctx_message(ctx),
                 peersNote().c_str());
  return 0;
}

int Driver::loadBatch(const std::vector<int64_t> &order, int64_t u) {
  if (m.cuda)
    return stagedToDevice(u);
  fillBatch(data, batchIndices(order, u), m.batchSize, nullptr, nullptr, /*augment=*/true);
  return 0;
}

double Driver::learningRate(int64_t epoch, int64_t iteration) const {
  return scheduledLearningRate(o, epoch * itersPerEpoch + iteration, itersPerEpoch,
                               scheduleEpochs() * itersPerEpoch);
}

int Driver::runTraining() {
  // What the driver needs of the model: batched inputs (the first fed by
  // --data, the others by --input-data), labels, and a batched first output
  // to take the argmax of.
  if (m.inputs.empty())
    return error("the model has no input; the training driver feeds the samples to one");
  inputSampleSizes.clear();
  for (const TensorSpec &in : m.inputs) {
    if (in.dims.empty() || in.dims[0] != m.batchSize)
      return error("the model's input '%s' %s does not have the batch size %lld as its first "
                   "dimension",
                   in.name.c_str(), formatShape(in.dims).c_str(),
                   static_cast<long long>(m.batchSize));
    inputSampleSizes.push_back(in.numElements() / m.batchSize);
  }
  const TensorSpec &in = m.inputs[0];
  // The loss's labels: one per sample, or several (one per token); none for
  // a loss the graph computes (its first output, a scalar).
  const TensorSpec &out = m.outputs[0];
  if (lossInGraph() && out.numElements() != 1)
    return error("the model's first output '%s' %s is not a scalar, the loss its graph computes "
                 "(manifest 'loss value')",
                 out.name.c_str(), formatShape(out.dims).c_str());
  int64_t labelCount = lossInGraph() ? m.batchSize : 1;
  for (int64_t d : m.labelDims)
    labelCount *= d;
  if (labelCount < m.batchSize || labelCount % m.batchSize != 0)
    return error("the model's loss takes %lld labels, not a multiple of the batch size %lld",
                 static_cast<long long>(labelCount), static_cast<long long>(m.batchSize));
  labelsPerSample = lossInGraph() ? 0 : labelCount / m.batchSize;
  if (!m.loss.empty() && !lossInGraph() && out.numElements() != labelCount)
    return error("the model's first output '%s' %s does not hold the %lld target values its "
                 "loss (%s) takes",
                 out.name.c_str(), formatShape(out.dims).c_str(),
                 static_cast<long long>(labelCount), m.loss.c_str());
  if (m.loss.empty() && (out.dims.empty() || out.dims[0] != labelCount || out.numElements() == 0))
    return error("the model's first output '%s' %s does not have one row per label (%lld: the "
                 "batch size %lld x %lld) as its first dimension",
                 out.name.c_str(), formatShape(out.dims).c_str(),
                 static_cast<long long>(labelCount), static_cast<long long>(m.batchSize),
                 static_cast<long long>(labelsPerSample));
  sampleSize = in.numElements() / m.batchSize;
  if (int rc = setupSampleTransforms())
    return rc;
  if (m.accumulate > 1 && !mgs_accum_step)
    return error("the model's manifest says 'accumulate %lld', but it defines no "
                 "mgs_accum_step (linked from another build's object?); recompile it with mgsc",
                 static_cast<long long>(m.accumulate));

  if (int rc = createContext())
    return rc;
  if (int rc = setupWorkers())
    return rc;
  // A mapped data file that shrinks under the run: its SIGBUS is an error
  // naming it, said as report() says errors.
  setDataFaultPrefix(o.program + ": error: " +
                     (workers > 1 && rank != 0 ? "worker " + std::to_string(rank) + ": " : ""));
  if (o.calibrate.empty())
    startWatchdog(); // the set-up included
  if (o.calibrate.empty())
    if (int rc = chooseResume())
      return rc;
  // Each worker reads its params (weights or --resume checkpoint) and data
  // and allocates alone: a failure there (a missing file, the same on every
  // worker, or one worker's missing checkpoint) is agreed on and said once,
  // not by an abort of the job.
  if (int rc = setupAlone([&] {
        int rc = loadParams();
        if (!rc)
          rc = loadData();
        return rc ? rc : allocate(/*forTraining=*/true);
      }))
    return rc;
  if (int rc = agreeOnRun())
    return rc;
  if (int rc = broadcastParams())
    return rc;
  if (!o.calibrate.empty())
    return runCalibration();

  int64_t firstEpoch = 0;
  int64_t firstIter = 0; // of the first epoch: a checkpoint within it
  uint64_t iterationsDone = 0;
  if (haveResumed) {
    mgsrt_ctx_set_rng_state(ctx, resumed.rngState);
    firstEpoch = static_cast<int64_t>(resumed.epochsDone);
    firstIter = static_cast<int64_t>(resumed.itersIntoEpoch);
    iterationsDone = resumed.iterationsDone;
    skippedBefore = resumed.stepsSkipped;
    // Within an epoch, its order goes on where it stopped: only with as
    // many iterations an epoch (the same workers, batch and accumulation).
    if (firstIter > 0 && resumed.itersPerEpoch != static_cast<uint64_t>(itersPerEpoch))
      return errorOnEveryWorker(
          "checkpoint '" + o.resume + "' was written within epoch " +
          std::to_string(firstEpoch + 1) + ", after iteration " + std::to_string(firstIter) +
          " of " + std::to_string(resumed.itersPerEpoch) + ", but this run has " +
          std::to_string(itersPerEpoch) + " iterations an epoch (" + std::to_string(workers) +
          " worker(s) x batch size " + std::to_string(m.batchSize) +
          "): resume it on the workers that wrote it");
    if (firstIter > 0)
      std::printf("resumed from '%s' in epoch %lld after iteration %lld of %lld\n",
                  o.resume.c_str(), static_cast<long long>(firstEpoch + 1),
                  static_cast<long long>(firstIter), static_cast<long long>(itersPerEpoch));
    else
      std::printf("resumed from '%s' after epoch %lld\n", o.resume.c_str(),
                  static_cast<long long>(firstEpoch));
    if (firstEpoch >= o.epochs)
      std::printf("nothing left to train: --epochs %lld counts every epoch, the checkpoint's "
                  "%lld%s included (pass a larger --epochs to continue)\n",
                  static_cast<long long>(o.epochs), static_cast<long long>(firstEpoch),
                  firstIter > 0 ? (" and " + std::to_string(firstIter) + " iteration(s) of epoch " +
                                   std::to_string(firstEpoch + 1))
                                      .c_str()
                                : "");
  }
  const int64_t stepSamples = m.batchSize * workers * m.accumulate;
  std::printf("training on '%s': %zu samples, %zu held out, batch size %lld, %lld iterations "
              "per epoch\n",
              data.source.c_str(), trainSet.size(), heldOutSet.size(),
              static_cast<long long>(m.batchSize), static_cast<long long>(itersPerEpoch));
  if (haveTestSet())
    std::printf("evaluating on the test set '%s': %lld samples\n", testSet.source.c_str(),
                static_cast<long long>(testSet.size()));
  describeSampleTransforms();
  if (m.accumulate > 1)
    std::printf("gradient accumulation: each step sums the gradients of %lld batches (%lld "
                "samples a step%s)\n",
                static_cast<long long>(m.accumulate), static_cast<long long>(stepSamples),
                workers > 1 ? " over the workers" : "");
  if (workers > 1)
    std::printf("%d workers (MPI), global batch size %lld%s\n", workers,
                static_cast<long long>(m.batchSize * workers),
                threadsPerWorker ? (", " + std::to_string(threadsPerWorker) +
                                    " thread(s) each (set OMP_NUM_THREADS to change)")
                                       .c_str()
                                 : "");
  else
    std::printf("1 process, %d thread(s) (set OMP_NUM_THREADS to change: sums then round in "
                "another order, so the figures differ a little)\n",
                omp_get_max_threads());
  if (m.precision != MGSRT_PRECISION_F32) {
    const char *format = m.precision == MGSRT_PRECISION_F16 ? "half" : "bfloat16";
    std::printf("precision %s: GEMMs, matmuls and convolutions on %s operands, float32 "
                "accumulation; weights, gradients and optimizer state float32\n",
                m.precision == MGSRT_PRECISION_F16 ? "f16" : "bf16", format);
    if (!mgsrt_ctx_precision_native(ctx, m.precision))
      std::printf("  %s: float32 kernels on operands rounded to %s, the same products "
                  "without %s arithmetic's speed\n",
                  mgsrt_ctx_device(ctx) == MGSRT_DEVICE_CUDA ? "on this GPU, for now"
                  : m.precision == MGSRT_PRECISION_F16
                      ? "this CPU has no half kernels"
                      : "oneDNN has no bfloat16 kernels for this CPU (they need AVX-512)",
                  format, format);
  }
  if (int rc = setupLossScale())
    return rc;
  if (o.optimizer == Optimizer::AdamW)
    std::printf("optimizer adamw: betas %g, %g, eps %g, decoupled weight decay %g\n", o.beta1,
                o.beta2, o.eps, o.weightDecay);
  if (o.lrSchedule == LrSchedule::Cosine)
    std::printf("lr schedule cosine: from %g after %g warm-up epoch(s) to 0 at the end of epoch "
                "%lld, per iteration\n",
                o.lr, o.warmupEpochs, static_cast<long long>(scheduleEpochs()));
  std::fflush(stdout);

  const char *evalName = haveTestSet() ? "test" : "held-out";
  bool haveAccuracy = false;
  int64_t correct = 0, total = 0;
  bool checkpointCurrent = false;
  double trainSeconds = 0;      // time spent in training iterations this run
  int64_t itersThisRun = 0;
  const int64_t itersLeftAtStart =
      o.epochs > firstEpoch ? (o.epochs - firstEpoch) * itersPerEpoch - firstIter : 0;
  std::vector<int64_t> order;
  installStopHandlers();

  for (int64_t epoch = firstEpoch; epoch < o.epochs; ++epoch) {
    if (!m.densitySchedule.empty()) {
      size_t at = std::min<size_t>(static_cast<size_t>(epoch), m.densitySchedule.size() - 1);
      mgsrt_ctx_set_density(ctx, m.densitySchedule[at]);
      // Each warm-up epoch, then once when the final density starts.
      if (static_cast<size_t>(epoch) <= at || epoch == firstEpoch)
        std::printf("epoch %lld: top-k density %g%s\n", static_cast<long long>(epoch + 1),
                    m.densitySchedule[at],
                    at + 1 < m.densitySchedule.size() ? " (warm-up)" : "");
    }
    order = trainSet;
    shuffleForEpoch(order, o.seed, static_cast<uint64_t>(epoch));
    augmentEpoch = epoch;
    // A checkpoint within the epoch: on from its iteration, with its loss.
    const bool within = epoch == firstEpoch && firstIter > 0;
    const int64_t startIter = within ? firstIter : 0;
    if (m.cuda && itersPerEpoch > 0)
      stageBatch(order, startIter * m.accumulate);
    double lossSum = within ? resumed.epochLossSum : 0, windowLoss = 0;
    int64_t windowIters = 0,
            skippedThisEpoch = within ? static_cast<int64_t>(resumed.epochSkipped) : 0;
    Clock::time_point windowStart = Clock::now();
    for (int64_t it = startIter; it < itersPerEpoch; ++it) {
      Clock::time_point iterStart = Clock::now();
      markProgress("a training step", static_cast<int64_t>(iterationsDone),
                   itersThisRun == 0 ? kLongAllowance : 1);
      // --trace: iterations 3 .. 2 + N of this run.
      if (!o.trace.empty() && itersThisRun == kTraceWarmup)
        mgsrt_ctx_record_trace(ctx, 1);
      if (o.skipNonfinite || dynamicLossScale) // before the step's first batch
        if (int rc = snapshotParams())
          return rc;
      // With accumulation, the step's batches but its last.
      double accumulatedLoss = 0;
      if (m.accumulate > 1) {
        if (int rc = accumulateBatches(order, epoch, it, static_cast<int64_t>(iterationsDone),
                                       itersThisRun == 0 ? kLongAllowance : 1, accumulatedLoss))
          return rc;
        markProgress("a training step", static_cast<int64_t>(iterationsDone),
                     itersThisRun == 0 ? kLongAllowance : 1); // the first exchange's set-up
      }
      const int64_t lastBatch = (it + 1) * m.accumulate - 1;
      // On a GPU: staged while the step before ran (the first: before the loop).
      if (int rc = loadBatch(order, lastBatch))
        return rc;
      mgsrt_ctx_set_sgd(ctx, static_cast<float>(learningRate(epoch, it)),
                        static_cast<float>(o.momentum), static_cast<float>(o.weightDecay));
      if (o.optimizer == Optimizer::AdamW) // bias correction: this is update number t,
        mgsrt_ctx_set_adamw(ctx, static_cast<float>(o.beta1), static_cast<float>(o.beta2),
                            static_cast<float>(o.eps), // dropped steps not counted
                            static_cast<int64_t>(iterationsDone - skippedBefore) -
                                skippedSteps + 1);
      if (trainStep(itersThisRun == 0) != MGSRT_OK)
        return error("mgs_train_step failed (epoch %lld, iteration %lld): %s%s",
                     static_cast<long long>(epoch + 1), static_cast<long long>(it + 1),
                     mgsrt_ctx_message(ctx), peersNote().c_str());
      // The next batch, while this step runs on the GPU, into the slot this
      // step's copies did not read (its last copies, the step before's,
      // ended with that step's wait for its loss).
      if (m.cuda && it + 1 < itersPerEpoch)
        stageBatch(order, lastBatch + 1);
      if (int rc = toHost(loss))
        return rc;
      // The step's loss: the mean over its batches.
      float l = m.accumulate > 1 ? static_cast<float>((accumulatedLoss + *loss.f32()) /
                                                       static_cast<double>(m.accumulate))
                                 : *loss.f32();
      ++iterationsDone;
      ++itersThisRun;
      bool skipped = false;
      if (int rc = checkStep(epoch, it, iterationsDone, l, skipped))
        return rc;
      if (skipped) {
        ++skippedThisEpoch;
      } else {
        if (dynamicLossScale)
          if (int rc = growLossScale())
            return rc;
        lossSum += l;
        windowLoss += l;
        ++windowIters;
      }
      if (!o.trace.empty() && itersThisRun == kTraceWarmup + o.traceSteps)
        if (int rc = writeTrace(o.traceSteps))
          return rc;
      double stepSeconds = secondsSince(iterStart);
      trainSeconds += stepSeconds;
      // Every --progress-every iterations; on slow models also after a first
      // step of a second or more and after every 30 s, so a long first
      // epoch is not silent.
      if (o.progressEvery > 0 &&
          ((it + 1) % o.progressEvery == 0 || (itersThisRun == 1 && stepSeconds >= 1.0) ||
           secondsSince(windowStart) >= 30.0)) {
        double window = secondsSince(windowStart);
        double rate =
            window > 0 ? static_cast<double>(windowIters * stepSamples) / window : 0;
        double eta = trainSeconds / static_cast<double>(itersThisRun) *
                     static_cast<double>(itersLeftAtStart - itersThisRun);
        std::printf("epoch %lld/%lld iter %lld/%lld loss %.4f  %.1f samples/s  ETA %s\n",
                    static_cast<long long>(epoch + 1), static_cast<long long>(o.epochs),
                    static_cast<long long>(it + 1), static_cast<long long>(itersPerEpoch),
                    windowLoss / static_cast<double>(std::max<int64_t>(windowIters, 1)), rate,
                    formatDuration(eta).c_str());
        std::fflush(stdout);
        windowLoss = 0;
        windowIters = 0;
        windowStart = Clock::now();
      }
      // --checkpoint: one due within the epoch, or a stop asked by a signal
      // (the epoch's last step: after its evaluation and checkpoint).
      if (!o.checkpoint.empty() && it + 1 < itersPerEpoch) {
        bool due = false;
        int signal = 0;
        if (int rc = pollStop(iterationsDone, due, signal))
          return rc;
        if (due || signal) {
          markProgress("a checkpoint", static_cast<int64_t>(iterationsDone), kLongAllowance);
          if (int rc = saveCheckpoint(static_cast<uint64_t>(epoch), iterationsDone,
                                      static_cast<uint64_t>(it + 1), lossSum,
                                      static_cast<uint64_t>(skippedThisEpoch)))
            return rc;
        }
        if (signal)
          return stoppedBySignal(signal, epoch, it + 1);
      }
    }
    // NaN when every step of the epoch was dropped.
    double meanLoss = itersPerEpoch > skippedThisEpoch
                          ? lossSum / static_cast<double>(itersPerEpoch - skippedThisEpoch)
                          : std::nan("");
    int status = 0;
    if (!evalSet().empty()) {
      if (!evaluate(correct, total, status))
        return status;
      haveAccuracy = true;
      std::printf("epoch %lld: train loss %.4f (mean), %s\n", static_cast<long long>(epoch + 1),
                  meanLoss, describeEvaluation(evalName, correct, total, true).c_str());
    } else {
      std::printf("epoch %lld: train loss %.4f (mean), no held-out set (--holdout 0)\n",
                  static_cast<long long>(epoch + 1), meanLoss);
    }
    std::fflush(stdout);
    if (!o.checkpoint.empty()) {
      markProgress("a checkpoint", static_cast<int64_t>(iterationsDone), kLongAllowance);
      if (int rc = saveCheckpoint(static_cast<uint64_t>(epoch + 1), iterationsDone))
        return rc;
      checkpointCurrent = true;
      bool due = false;
      int signal = 0;
      if (epoch + 1 < o.epochs)
        if (int rc = pollStop(iterationsDone, due, signal))
          return rc;
      if (signal)
        return stoppedBySignal(signal, epoch + 1, 0);
    }
  }

  // A run shorter than the trace's iterations: what was recorded.
  if (!o.trace.empty() && !traceWritten) {
    if (itersThisRun <= kTraceWarmup)
      std::printf("no timeline written: the run had %lld iteration(s); --trace skips the first "
                  "%lld\n",
                  static_cast<long long>(itersThisRun), static_cast<long long>(kTraceWarmup));
    else if (int rc = writeTrace(itersThisRun - kTraceWarmup))
      return rc;
  }
  noteFinishing();
  markProgress("the final checkpoint and saves", static_cast<int64_t>(iterationsDone),
               kLongAllowance);
  // Nothing trained (resumed at or past --epochs): the checkpoint as it was,
  // within its epoch when it was.
  if (!o.checkpoint.empty() && !checkpointCurrent)
    if (int rc = saveCheckpoint(static_cast<uint64_t>(std::max<int64_t>(firstEpoch, o.epochs)),
                                iterationsDone, static_cast<uint64_t>(firstIter),
                                haveResumed ? resumed.epochLossSum : 0.0,
                                haveResumed ? resumed.epochSkipped : 0))
      return rc;
  if (skippedSteps > overflowSteps)
    std::printf("dropped %lld step(s) whose loss or gradient was not finite "
                "(--on-nonfinite skip)\n",
                static_cast<long long>(skippedSteps - overflowSteps));
  printLossScaleSummary();
  if (o.cudaGraph && graphReplays > 0 && rank == 0)
    std::printf("cuda graph: %lld of %lld step(s) replayed (captured %lld time(s))\n",
                static_cast<long long>(graphReplays), static_cast<long long>(itersThisRun),
                static_cast<long long>(graphCaptures));
  if (!evalSet().empty()) {
    int status = 0;
    if (!haveAccuracy && !evaluate(correct, total, status))
      return status;
    std::printf("final %s\n", describeEvaluation(evalName, correct, total, false).c_str());
    if (!classSupport.empty())
      printPerClass(evalName);
  } else {
    std::printf("final held-out accuracy: n/a (no held-out set)\n");
    if (o.perClass)
      std::printf("per class: n/a (no evaluation set: --holdout 0 and no --test-data)\n");
  }
  std::fflush(stdout);
  if (rank != 0) // the parameters are the same on every worker
    return 0;
  // Each output is written even when another could not be: one failed save
  // must not lose the other.
  int rc = 0;
  if (!o.saveWeights.empty())
    rc = saveWeights();
  if (!o.saveOnnx.empty())
    if (int onnxRc = saveOnnx(); onnxRc && !rc)
      rc = onnxRc;
  return rc;
}

} // namespace mgs::rt::driver
