//===- Driver.h - One run of the executable (internal) ----------*- C++ -*-===//
//
// The Driver holds what one run of an executable mgsc produced needs: the
// manifest, the runtime context and the workers' communicator, the params
// and io buffers, the data set and its split. Its members are defined by job:
//
//   Driver.cpp     the run (checks the options against the model), errors,
//                  the context and the buffers (host, and device copies on
//                  a GPU), mgsrt_driver_main
//   Params.cpp     loading the params (weights file, checkpoint to resume),
//                  saving them (checkpoint, --save-weights, --save)
//   LoadData.cpp   the data sets (--data, --test-data, --input-data), checked
//   Train.cpp      the batches and the training loop
//   Evaluate.cpp   the evaluation set's accuracy or loss, --per-class
//   Inference.cpp  one forward pass on raw input files
//   Workers.cpp    the data-parallel workers (MPI) and the params' broadcast
//   Stop.cpp       checkpoints within an epoch, a stop on a signal
//   Trace.cpp      the --trace timeline
//   Calibrate.cpp  --calibrate
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_DRIVER_H
#define MGSRT_DRIVER_DRIVER_H

#include "Options.h"
#include "mgsrt/driver.h"
#include "mgsrt/mgsrt.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mgs::rt::driver {

/// AdamW's moments in a checkpoint's velocity list: exp_avg/NAME, then
/// exp_avg_sq/NAME (torch.optim.AdamW's state names) for each trainable param.
inline const std::string kExpAvgPrefix = "exp_avg/", kExpAvgSqPrefix = "exp_avg_sq/";

/// 64-byte aligned, zero-filled memory.
class Buffer {
public:
  bool allocate(uint64_t bytes) {
    uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64;
    if (rounded > std::numeric_limits<size_t>::max())
      return false;
    ptr_.reset(std::aligned_alloc(64, rounded));
    if (!ptr_)
      return false;
    std::memset(ptr_.get(), 0, rounded);
    bytes_ = bytes;
    return true;
  }
  void *get() const { return ptr_.get(); }
  float *f32() const { return static_cast<float *>(ptr_.get()); }
  uint64_t bytes() const { return bytes_; }
  /// What the compiled steps are given: the device copy on a GPU, else the
  /// host memory itself.
  void *io() const { return device ? device : ptr_.get(); }
  /// The device copy (Driver::mirror allocates it, the Driver frees it).
  void *device = nullptr;

private:
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> ptr_;
  uint64_t bytes_ = 0;
};

/// One run: training (or --calibrate) or inference, as the options and the
/// model's manifest say.
class Driver {
public:
  explicit Driver(Options &options) : o(options) {}
  ~Driver() {
    stopWatchdog();
    for (auto [entry, host] : hostConstants)
      *entry = host;
    for (void *p : deviceMemory)
      mgsrt_free(ctx, p);
    for (BatchStaging &st : staging) {
      for (void *p : st.inputs)
        mgsrt_host_free(ctx, p);
      mgsrt_host_free(ctx, st.labels);
    }
    if (ctx)
      mgsrt_ctx_destroy(ctx); // waits for pending collectives
    mgsrt_comm_destroy(comm);
  }

  /// Checks the options against the model, then trains, calibrates or runs
  /// inference; returns the exit status.
  int run();

private:
  // Driver.cpp
  /// printf's format filled in, up to 2047 characters (as error() takes it).
  static std::string formatted(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
  int error(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  int error(const std::string &msg) { return error("%s", msg.c_str()); }
  /// Reports `text` (with the --help hint after it when `hint`) and aborts
  /// the other workers, or keeps it while deferring(); returns 1.
  int fail(const std::string &text, bool hint);
  /// Writes "PROGRAM: error: [worker R: ]TEXT" and, when `hint`, the --help
  /// hint on the next line, in one write.
  void report(const std::string &text, bool hint = false);
  /// While set, error() on the main thread keeps its first message in
  /// `deferred` (and usage() that it was a usage error) instead of reporting
  /// it and aborting the workers (setupAlone()); the watchdog's errors are
  /// never deferred (deferring()).
  std::atomic<bool> deferErrors{false};
  bool deferring() const;
  std::string deferred;
  bool deferredUsage = false;
  /// Runs the set-up each worker does alone (its data, its buffers) with
  /// errors deferred, then agrees on it: every worker learns whether any
  /// failed; each distinct message is reported once (by the lowest worker
  /// that has it; a worker still waiting for the others after a few seconds
  /// reports its own at once) and all stop with 1 (2 for a usage error), with
  /// no abort of the job. 0 when none failed.
  int setupAlone(const std::function<int()> &setup);
  /// Reports a failed Status (its message) and returns 1.
  int error(const Status &s) { return error("%s", s.message.c_str()); }
  /// A bad command line: the message and a pointer to --help; exit status 2.
  int usage(const std::string &msg);
  /// usage() for what the command line and the model alone decide, checked
  /// before the workers are set up: the same on every worker under mpirun,
  /// so only the first says it (a check that reads a host's files is not).
  int usageOnEveryWorker(const std::string &msg);
  /// An error every worker knows of (the same model and job size, or what a
  /// gather told them all): said by the workers given `say` alone, and each
  /// stops with 1, with no abort of the job. An abort would race a worker's
  /// report with its end: Open MPI kills the workers as soon as one aborts.
  int agreedError(bool say, const std::string &msg);
  /// An error every worker finds alike: agreedError() said by worker 0.
  int errorOnEveryWorker(const std::string &msg) { return agreedError(rank == 0, msg); }
  int allocate(bool training);

  // Params.cpp
  int loadParams();
  int takeRecordedOptions();
  /// The run id (a fresh one, or the resumed checkpoints' once every
  /// worker's file is found to be of the same run and epoch).
  int agreeOnRun();
  uint64_t runId = 0;
  /// After `epochsDone` epochs and `itersIntoEpoch` iterations of the next
  /// (a checkpoint within an epoch: that epoch's loss sum and dropped steps
  /// so far, for its mean).
  int saveCheckpoint(uint64_t epochsDone, uint64_t iterationsDone, uint64_t itersIntoEpoch = 0,
                     double epochLossSum = 0.0, uint64_t epochSkipped = 0);
  int saveWeights();
  int saveOnnx();
  /// --weights, or the file beside the executable (as it was started, else
  /// where a link to it leads).
  std::string weightsPath() const;
  /// What --save needs, checked before training too: the ONNX writer and the
  /// model the executable was compiled from.
  int checkSaveOnnx();

  // Inference.cpp
  int runInference();

  // LoadData.cpp
  /// --data (and the held-out split), --test-data and the other inputs'
  /// samples, checked against the model.
  int loadData();
  /// An image folder's demands on the model (a batch of gray or RGB images,
  /// one class a sample), and what one holds (its classes against the
  /// model's).
  int checkImageFolderModel();
  int describeImageFolder(const Dataset &d, const char *what);
  /// --data (or with `test` --test-data) into `d`, in `format`, with its
  /// labels (NumPy: from `labelsPath`) unless the graph computes the loss,
  /// checked against the model.
  int readSet(const std::string &path, const std::string &labelsPath, DataFormat format, bool test,
              Dataset &d);
  /// The samples' checks against the model (checkDataset, integer token ids).
  int checkSamples(const Dataset &d, const std::string &path, const char *what);
  /// `d`'s values as model input `input`'s token ids: integers, within the
  /// rows of the tables it indexes (when the model says which); 0 for a
  /// float32 input.
  int checkIds(const Dataset &d, const std::string &path, const char *what,
               const TensorSpec &input);
  /// The samples of the model's inputs beside the first (--input-data, and
  /// --test-input-data with --test-data): as many as `data`'s (`testSet`'s),
  /// each of its input's size.
  int loadInputData();
  int loadOtherInputs(const std::vector<std::pair<std::string, std::string>> &files,
                      const Dataset &first, const char *option, std::vector<Dataset> &sets);
  /// The samples of model input i > 0 beside `from` (data or testSet).
  const Dataset &otherInput(const Dataset &from, size_t i) const {
    return &from == &testSet ? testInputSets[i] : inputSets[i];
  }

  // Train.cpp
  int runTraining();
  /// One training step: mgs_train_step, or with --cuda-graph (after the
  /// run's `first` step, which allocates what the step needs) its CUDA graph,
  /// captured once and replayed (captured again when stale). A step a graph
  /// cannot hold runs as usual from then on, and says why once (a stale
  /// graph's new capture gets a second try, after one step run as usual).
  mgsrt_status_t trainStep(bool first);
  bool graphRefused = false, graphRetried = false;
  int64_t graphCaptures = 0, graphReplays = 0;
  /// Accuracy on the evaluation set: --test-data's samples, else the
  /// held-out part of --data.
  bool evaluate(int64_t &correct, int64_t &total, int &status);
  /// "SET accuracy 97.2% (350/360)" (`counts`) or "SET accuracy: 97.2%", or
  /// for float targets "SET loss 0.0123 (mse, mean of N values)" / "SET
  /// loss: 0.0123", from evaluate()'s results.
  std::string describeEvaluation(const char *set, int64_t correct, int64_t total,
                                 bool counts) const;
  double evalLossSum = 0.0; ///< evaluate(): float targets' summed loss
  /// evaluate() with --per-class: per class, its labels in the evaluation
  /// set, those predicted right, and its predictions.
  std::vector<int64_t> classSupport, classHits, classPredicted;
  /// --per-class's table, from evaluate()'s counts.
  void printPerClass(const char *set) const;
  bool haveTestSet() const { return !o.testData.empty(); }
  /// The model's graph computes its loss (manifest "loss value"): its first
  /// output, a scalar; no labels (its targets, if any, are inputs).
  bool lossInGraph() const { return m.lossKind == MGSRT_LOSS_VALUE; }
  const std::vector<int64_t> &evalSet() const { return haveTestSet() ? testIndices : heldOutSet; }
  double learningRate(int64_t epoch, int64_t iteration) const;
  /// The epochs a cosine schedule spans: --cosine-epochs, else --epochs.
  int64_t scheduleEpochs() const { return o.cosineEpochs > 0 ? o.cosineEpochs : o.epochs; }
  /// Copies `count` samples (of every model input) and their labels into
  /// the batch: into `inputsOut` (one per model input) and `labelsOut` when
  /// given, else into the inputs' and the labels' buffers. `augment`:
  /// training batches, each sample transformed by --augment (drawn for
  /// augmentEpoch; the first input alone).
  bool fillBatch(const Dataset &from, const int64_t *indices, int64_t count,
                 void *const *inputsOut = nullptr, void *labelsOut = nullptr, bool augment = false);

  // Transforms.cpp
  /// --augment, --input-mean and --input-std against the model (an image
  /// input; labels or targets per pixel move with it; a value per channel),
  /// checked before the workers start.
  int setupSampleTransforms();
  /// The lines that say what they do (none when there are none).
  void describeSampleTransforms() const;
  /// Sample `sample` (its float input `values` and, when given, its labels
  /// or targets) in the batch: --augment's transform when `augment`, then
  /// the normalization.
  void transformSample(int64_t sample, bool augment, float *values, int64_t *labels,
                       float *targets);
  int64_t augmentHeight = 0, augmentWidth = 0;
  bool augmentLabels = false, augmentTargets = false; // per pixel: moved with the image
  int64_t augmentEpoch = 0; // the epoch the training batches are drawn for
  std::vector<float> normalizeMean, normalizeStd; // per channel; empty: none
  /// A GPU model's batches, staged in page-locked host memory: iteration
  /// `it`'s batch fills staging[it % 2] while the step before runs on the
  /// GPU, and is copied across without waiting before its own step (its
  /// slot is next written two iterations later, after the wait for the loss
  /// between them). Allocated with the other buffers (allocate()) by
  /// setupStaging() (Train.cpp).
  struct BatchStaging {
    std::vector<void *> inputs; // one per model input
    void *labels = nullptr;
  };
  BatchStaging staging[2];
  int setupStaging();
  /// This worker's samples of iteration `it` in the epoch's `order`.
  const int64_t *batchIndices(const std::vector<int64_t> &order, int64_t it) const {
    return order.data() + (it * workers + rank) * m.batchSize;
  }
  /// Fills staging[it % 2] with iteration `it`'s batch of `order`.
  void stageBatch(const std::vector<int64_t> &order, int64_t it);
  /// With accumulation (mgsc --accumulate A): iteration `it`'s first A - 1
  /// batches through mgs_accum_step, their losses added to `lossSum`.
  /// `step` and `allowance`: the watchdog's (markProgress), before each batch.
  int accumulateBatches(const std::vector<int64_t> &order, int64_t epoch, int64_t it,
                        int64_t step, double allowance, double &lossSum);
  /// Copies staging[it % 2] to the input's and the labels' device copies.
  int stagedToDevice(int64_t it);
  /// Puts batch `u` of `order` into the step's input and labels: its staged
  /// copy on a GPU model (stagedToDevice), filled in place on the CPU.
  int loadBatch(const std::vector<int64_t> &order, int64_t u);

  // Workers.cpp
  int setupWorkers();
  int broadcastParams();
  /// `all` gets every worker's `mine` (the same size on each, at most
  /// kMaxGather), rank 0's first: one collective. One worker: `mine` itself.
  int gatherFromWorkers(const std::vector<int32_t> &mine, std::vector<int32_t> &all);
  static constexpr size_t kMaxGather = 8;
  Buffer gatherBufs[4]; // values, indices, received values, received indices

  // Stop.cpp: checkpoints within an epoch (--checkpoint-every) and a stop on
  // a signal (with --checkpoint).
  /// With --checkpoint: SIGTERM, SIGINT and SIGUSR1 ask the run to stop
  /// after the step under way (a second one ends it at once).
  void installStopHandlers();
  /// After training iteration `iteration` (1-based, over the run and the
  /// runs it resumed): whether a checkpoint is due (--checkpoint-every's
  /// iterations or seconds) and the signal that asked to stop (0: none), the
  /// same on every worker (one allgather a step with several workers).
  int pollStop(uint64_t iteration, bool &checkpointDue, int &stopSignal);
  int signalledWorkers = 1; ///< pollStop(): the workers a stop signal reached
  /// After the last step: a stop signal then only says the run is ending.
  void noteFinishing();
  /// --auto-resume: resume from --checkpoint's file when every worker's
  /// exists, start anew when none does (agreed; some but not all: an error).
  int chooseResume();
  /// The line and status of a run stopped by `signal` after its checkpoint,
  /// `epochsDone` epochs and `itersIntoEpoch` iterations of the next in.
  int stoppedBySignal(int signal, int64_t epochsDone, int64_t itersIntoEpoch);
  /// When the last checkpoint was written (--checkpoint-every's seconds).
  std::chrono::steady_clock::time_point lastCheckpoint = std::chrono::steady_clock::now();

  // Nonfinite.cpp
  /// --on-nonfinite skip: the params and velocities before the step, to go
  /// back to when it is dropped.
  int snapshotParams();
  /// After a step: its loss, its gradients (mgsrt_ctx_take_nonfinite) and
  /// the running statistics must be finite. Else an error naming the
  /// iteration and the param (--on-nonfinite stop) or, on every worker alike,
  /// the step undone (`skipped` set, counted in skippedSteps).
  int checkStep(int64_t epoch, int64_t it, uint64_t iteration, float lossValue, bool &skipped);
  /// Before a checkpoint or save: every param finite, else an error.
  int checkFiniteBeforeSave(const char *what);
  /// Fills loadedInfinite from `loaded` (the params as read).
  void noteInfiniteBuffers();
  /// Which params findNonfiniteParam looks at: every one (on the host
  /// already), the state params but the residuals, or the residuals alone
  /// (those two copied from the GPU first).
  enum class ParamScan { All, State, Residuals };
  /// `found`: "NAME' (element i: v)" for the first param of `scan` holding
  /// NaN or infinity, or "".
  int findNonfiniteParam(ParamScan scan, std::string &found);
  std::vector<std::vector<float>> snapshot; // params, then velocities
  std::vector<void *> deviceSnapshot;       // the same on a GPU (in deviceMemory)
  int copyOnDevice(void *to, void *from, size_t bytes);
  /// Per param: a buffer loaded holding infinities (an attention mask's
  /// -inf), which the finiteness checks leave alone (it is never updated).
  std::vector<char> loadedInfinite;
  int64_t skippedSteps = 0;
  /// Steps dropped before this run (the resumed checkpoint's count).
  uint64_t skippedBefore = 0;

  // LossScale.cpp: loss scaling (--loss-scale; dynamic by default for a
  // model compiled with --precision f16).
  /// Settles the scale (the options, the manifest, a resumed checkpoint),
  /// says it in the header and scales the residuals as loaded (files hold
  /// them unscaled).
  int setupLossScale();
  /// A dynamic scale: the step just run overflowed (its gradients are not
  /// finite, its loss is): the scale halves (an error below kMinLossScale)
  /// and the residuals, already back to before the step, follow it.
  int backOffLossScale(int64_t epoch, int64_t it);
  /// A dynamic scale after a step that was kept: it doubles after
  /// --loss-scale-window of them in a row.
  int growLossScale();
  /// Multiplies every residual by `factor` (they hold scaled gradients).
  int scaleResiduals(float factor);
  /// Param i as files hold it: a residual divided by the loss scale.
  std::vector<float> paramForFile(size_t i);
  /// The end of the run's line on the scale ("" without dynamic scaling).
  void printLossScaleSummary();
  bool dynamicLossScale = false;
  float lossScale = 1.0f;
  uint64_t lossScaleSteps = 0;  ///< kept steps since the dynamic scale last changed
  int64_t overflowSteps = 0;    ///< steps dropped for overflow this run (in skippedSteps too)
  int64_t lossScaleGrowths = 0; ///< doublings this run

  // Calibrate.cpp
  int runCalibration();

  /// A per-worker file: `path` on rank 0, `path`.rank<r> on rank r.
  std::string rankPath(const std::string &path) const {
    return rank == 0 ? path : path + ".rank" + std::to_string(rank);
  }

  // Watchdog.cpp: with several workers, ends the job when no progress was
  // marked for --timeout seconds (kLongAllowance times that for the set-up,
  // the first iteration, checkpoints and the final saves).
  static constexpr double kLongAllowance = 3;
  void startWatchdog();
  void stopWatchdog();
  /// Progress: `what` is under way (names it in the error); the next mark
  /// must come within `allowance` x --timeout. `step` goes to the heartbeat.
  void markProgress(const char *what, int64_t step, double allowance = 1);
  [[noreturn]] void reportHang();
  /// What the heartbeat says of the other workers, for an error: those
  /// silent (stopped or hung) and those behind `mine`; "" if none is either.
  std::string describePeers(int64_t mine);
  /// "; " + describePeers(current step) with several workers, if not "".
  std::string peersNote();
  /// Set by the watchdog as it ends the job: another thread's error is then
  /// a consequence (its collectives were aborted), not reported.
  std::atomic<bool> watchdogEnding{false};
  std::thread watchdog;
  std::mutex watchdogMutex;
  std::condition_variable watchdogCv;
  bool watchdogStop = false; // guarded by watchdogMutex
  std::atomic<int64_t> watchdogDeadlineNs{0}, watchdogProgress{0};
  std::atomic<const char *> watchdogWhat{"the set-up"};

  // Trace.cpp
  int writeTrace(int64_t iterations);
  bool traceWritten = false;

  // Driver.cpp: a model compiled with mgsc --target=cuda: every io buffer
  // has a device copy the steps use; the host copies are what files are read
  // into and written from, copied across where the two meet.
  int createContext();
  int mirror(Buffer &b, const std::string &what);
  int constantsToDevice();
  int toDevice(Buffer &b);
  int toHost(Buffer &b);
  int paramsToHost();
  std::vector<void *> deviceMemory;
  /// mgs_model_constants's entries pointed at device copies, and their host addresses.
  std::vector<std::pair<void **, void *>> hostConstants;

  Options &o;
  std::string manifestText;
  Manifest m;
  bool training = true;
  mgsrt_ctx_t *ctx = nullptr;
  // Data-parallel workers: this process's rank among `workers`.
  mgsrt_comm_t *comm = nullptr;
  int rank = 0, workers = 1;
  int threadsPerWorker = 0; // set when the driver chose it (OMP_NUM_THREADS unset)

  // Params (manifest order) and the loaded values before they are copied in.
  std::vector<Tensor> loaded;
  Checkpoint resumed;
  bool haveResumed = false;
  Buffer arena;
  std::vector<Buffer> params, velocities, inputs, outputs;
  Buffer labels, loss;
  std::vector<void *> trainIo, evalIo;

  Dataset data;
  int64_t sampleSize = 0;
  /// Per model input: the values of one sample; and for the inputs beside
  /// the first, their samples (--input-data; --test-input-data), index 0
  /// unused.
  std::vector<int64_t> inputSampleSizes;
  std::vector<Dataset> inputSets, testInputSets;
  int64_t labelsPerSample = 1; // labels (and first-output rows) a sample: > 1 per token
  std::vector<int64_t> trainSet, heldOutSet;
  Dataset testSet;                  // --test-data's samples
  std::vector<int64_t> testIndices; // all of them, in order
  int64_t itersPerEpoch = 0;
};

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_DRIVER_H
