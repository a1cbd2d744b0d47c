//===- Options.h - The executable's command line (internal) -----*- C++ -*-===//
//
// The options of the executables mgsc produces, their parser and the usage
// text (which lists the training options unless the model was compiled for
// inference alone).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_OPTIONS_H
#define MGSRT_DRIVER_OPTIONS_H

#include "mgsrt/driver.h"

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mgs::rt::driver {

/// --optimizer: the update every trainable parameter gets (a run-time choice:
/// the compiled update kernel dispatches on the context's setting).
enum class Optimizer { Sgd, AdamW };

/// --lr-schedule: the learning rate's decay after the warm-up.
enum class LrSchedule { Step, Cosine };

/// --comm: how a GPU model's collectives run (a CPU model's run on MPI).
enum class DeviceComm { Nccl, Mpi };

/// --loss-scale: what the loss's gradient is multiplied by. Default: dynamic
/// for a model compiled with --precision f16, none otherwise.
enum class LossScaling { Default, None, Static, Dynamic };
/// The range of a loss scale (--loss-scale, --loss-scale-init, and what the
/// dynamic one halves or doubles to): 1 / S stays a normal float.
inline constexpr double kMinLossScale = 0x1p-24, kMaxLossScale = 0x1p64;

/// The command line as parsed: the defaults where an option is not given.
struct Options {
  std::string program = "mgs-model";
  std::string executable;
  std::string data, labels, weights, checkpoint, resume, saveWeights, saveOnnx, calibrate;
  /// --checkpoint-every: a checkpoint within the epochs too, every this many
  /// iterations (0: none) or seconds of training (0: none).
  int64_t checkpointEveryIters = 0;
  double checkpointEverySeconds = 0;
  /// --test-data, --test-labels: the evaluation set (none: the held-out part).
  std::string testData, testLabels;
  /// --input-data, --test-input-data NAME=FILE.npy: the samples of a model
  /// input beside the first (which --data feeds), in training / in the test set.
  std::vector<std::pair<std::string, std::string>> inputData, testInputData;
  double calibrateDensity = 0.001;
  std::string trace;
  int64_t traceSteps = 3;
  bool haveFormat = false;
  DataFormat format = DataFormat::Digits;
  int64_t epochs = 10;
  int64_t batchSize = 0; // 0: not given
  double lr = 0.1, momentum = 0.9, weightDecay = 0.0;
  double warmupEpochs = 0.0;
  std::vector<int64_t> lrSteps;
  double lrGamma = 0.1;
  Optimizer optimizer = Optimizer::Sgd;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8; // AdamW's, as torch.optim.AdamW's defaults
  LrSchedule lrSchedule = LrSchedule::Step;
  int64_t cosineEpochs = 0; // the epochs the cosine spans; 0: --epochs
  uint64_t seed = 1;
  double holdout = 0.2;
  int64_t progressEvery = 10;
  /// --on-nonfinite skip: drop a step whose loss or gradient is not finite
  /// (else stop with an error).
  bool skipNonfinite = false;
  LossScaling lossScaling = LossScaling::Default;
  double lossScale = 1.0;         ///< --loss-scale S (Static)
  double lossScaleInit = 65536.0; ///< --loss-scale-init: the dynamic scale's start (2^16)
  int64_t lossScaleWindow = 2000; ///< --loss-scale-window: kept steps before it doubles
  /// --timeout: seconds without progress before the job is ended (0: never).
  double timeout = 300;
  /// --comm: NCCL (one GPU per rank), or MPI through pinned host memory.
  DeviceComm comm = DeviceComm::Nccl;
  /// --per-class: after training, each class's recall and precision on the
  /// evaluation set, and their balanced accuracy (class-labelled models).
  bool perClass = false;
  /// --cuda-graph: a GPU model's training step captured once as a CUDA graph
  /// and replayed (Train.cpp, trainStep()).
  bool cudaGraph = false;
  /// --auto-resume: --resume from --checkpoint's file when every worker's
  /// exists (Stop.cpp, chooseResume()).
  bool autoResume = false;
  /// --augment: random flips and crops of the training samples (Data.cpp).
  Augmentation augmentation;
  /// --input-mean, --input-std: every sample (training and evaluation) as
  /// (x - mean[c]) / std[c] per channel c (one value: every channel); empty:
  /// as stored.
  std::vector<double> inputMean, inputStd;
  bool inference = false, help = false;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  std::set<std::string> given; // the options on the command line
  /// The options that take a value, as given (option, value), in order.
  std::vector<std::pair<std::string, std::string>> givenValues;
};

/// Options that only make sense when training / only when running inference.
extern const std::set<std::string> kTrainOnly;
extern const std::set<std::string> kInferenceOnly;

/// The usage for this executable's model (mgs_model_manifest()).
void printUsage(std::FILE *f, const std::string &program);
/// "(PROGRAM --help lists the options)\n": the line after a usage error.
std::string helpHint(const std::string &program);
/// The rank mpirun (or a PMI launcher) started this process as, read from
/// its environment before MPI is initialized (0 without one).
int launchedRank();
/// Whether that rank is a later one of its command line: any rank but 0,
/// but in an MPMD launch (Open MPI's app contexts) the first rank of each
/// command line is not, so that each says what is wrong with its own.
bool launchedAsLaterRank();

/// Parses argv into `o`; a bad command line is MGSRT_ERROR_INVALID_ARGUMENT
/// with the problem as its message.
Status parseOptions(int argc, char **argv, Options &o);

/// The options whose value is a file's path (which each MPI worker may give
/// its own).
bool isPathOption(const std::string &option);

/// The options that make a training run what it is (its schedule, optimizer
/// settings, transforms): a checkpoint records those given, and --resume
/// takes the ones not given again (--seed and --holdout, which choose the
/// split, and the optimizer, which its state gives, are recorded apart).
bool isRecordedOption(const std::string &option);

/// A checkpoint's recorded options, as given to the run that wrote it.
using RecordedOptions = std::vector<std::pair<std::string, std::string>>;

/// What --resume does with a checkpoint's recorded options: each one not on
/// this command line is parsed into `o` as if given (listed in `taken`); a
/// recorded option given again with another value, or one given now that
/// the run did not have, keeps this command line's and is listed in
/// `changed` ("--lr 0.01 (the checkpoint's run: 0.05)"). A recorded option
/// of the other learning-rate schedule than the one the run goes on with
/// (--lr-schedule given another value) is left out, listed in `dropped`.
/// Then the combination is checked as the command line is.
Status applyRecordedOptions(const RecordedOptions &recorded, Options &o,
                            std::vector<std::string> &taken, std::vector<std::string> &changed,
                            std::vector<std::string> &dropped);

/// A bad pairing of the optimizer with another one's options (--momentum
/// with AdamW, --beta1/--beta2/--eps with SGD).
Status checkOptimizerOptions(const Options &o);

/// "sgd" / "adamw": --optimizer's spelling.
const char *optimizerName(Optimizer optimizer);

/// The learning rate of 0-based training iteration `iteration` (counted over
/// every epoch) of a run of `totalIterations`, `itersPerEpoch` an epoch:
/// o.lr, times the linear warm-up (iteration + 1) / W while below 1 (W =
/// --warmup-epochs x itersPerEpoch), times the schedule's factor: step:
/// --lr-gamma for each --lr-steps epoch reached; cosine: 0.5 (1 + cos(pi
/// min(1, max(0, iteration - W) / (totalIterations - W)))), per iteration,
/// as torch's CosineAnnealingLR (eta_min 0, T_max = the iterations after the
/// warm-up) stepped every iteration.
double scheduledLearningRate(const Options &o, int64_t iteration, int64_t itersPerEpoch,
                             int64_t totalIterations);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_OPTIONS_H
