//===- Options.cpp - The executable's command line ------------------------===//
//
// The usage text and the parser of the options (Options.h).
//
//===----------------------------------------------------------------------===//

#include "Options.h"
#include "mgsrt/mgsrt.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

namespace mgs::rt::driver {

namespace {

/// The training and calibration options: listed unless the model was
/// compiled for inference alone.
constexpr const char *kUsageTraining =
    "training (manifest mode train):\n"
    "  --data PATH              data set: digits CSV(.gz), MNIST dir/idx file, CIFAR-10 dir/.bin,\n"
    "                           NumPy .npy inputs (N, ...) in float32/float64, as stored, or\n"
    "                           integers (token ids), or an image folder (DIR/CLASS/IMAGE,\n"
    "                           PNG or JPEG)\n"
    "  --labels FILE.npy        with .npy inputs: their labels, integers of shape (N,), or\n"
    "                           (N, L) for a model with a label per token (its first output\n"
    "                           then has a row per label, sample by sample: row j*L + k), or\n"
    "                           (N, d1, ...) one per position (mgsc --class-axis: a\n"
    "                           segmentation's (N, H, W)), -100 for padding (mgsc\n"
    "                           --ignore-index); for a model compiled\n"
    "                           with mgsc --loss mse|l1|smooth-l1|bce-with-logits, float\n"
    "                           targets of its first output's shape, (N, ...)\n"
    "  --data-format F          digits|mnist|cifar10|npy|imagefolder (default: guessed\n"
    "                           from PATH; a directory of class folders of PNG or JPEG\n"
    "                           images is an image folder: each image decoded once,\n"
    "                           resized and center-cropped to the model's input)\n"
    "  --test-data PATH         evaluate on this test set (read in --data's format; an\n"
    "                           MNIST directory gives its t10k-* files, a CIFAR-10 one its\n"
    "                           test_batch.bin) instead of a held-out part of --data:\n"
    "                           --holdout is then 0 and may not be given otherwise\n"
    "  --test-labels FILE.npy   with .npy test inputs: their labels\n"
    "  --input-data NAME=FILE.npy\n"
    "                           a model of several inputs: --data feeds the first, this\n"
    "                           (once per other input) input NAME, a NumPy file of as\n"
    "                           many samples (float32/float64, or integers for token\n"
    "                           ids), sample i beside --data's sample i; --augment and\n"
    "                           --input-mean/--input-std transform the first input only\n"
    "  --test-input-data NAME=FILE.npy\n"
    "                           the same for --test-data's samples\n"
    "  --epochs N               epochs to train, in all (default 10)\n"
    "  --batch-size N           must equal the batch size the model was compiled with\n"
    "  --optimizer O            sgd (torch.optim.SGD) or adamw (torch.optim.AdamW)\n"
    "                           (default sgd); a checkpoint's is kept on --resume\n"
    "  --lr F                   learning rate (default 0.1; AdamW usually wants ~1e-3)\n"
    "  --momentum F             SGD momentum (default 0.9)\n"
    "  --beta1 F, --beta2 F     AdamW's betas, in [0, 1) (default 0.9, 0.999)\n"
    "  --eps F                  AdamW's eps, >= 0 (default 1e-8)\n"
    "  --weight-decay F         SGD: L2 weight decay added to the gradient; AdamW:\n"
    "                           decoupled decay, p -= lr * F * p (default 0)\n"
    "  --warmup-epochs E        linear lr warm-up over the first E epochs (default 0)\n"
    "  --lr-schedule S          step (--lr-steps) or cosine: per iteration, from the\n"
    "                           lr after the warm-up to 0 at the end of --epochs\n"
    "                           (default step)\n"
    "  --cosine-epochs E        the epochs the cosine spans (default --epochs: give it to\n"
    "                           stop a run early and resume it on the same curve)\n"
    "  --lr-steps E1,E2,...     multiply the lr by --lr-gamma from these epochs on\n"
    "  --lr-gamma G             (default 0.1)\n"
    "  (--clip-grad-norm is mgsc's: the step waits for every gradient; so is\n"
    "  --accumulate N: a step of N batches a worker, one exchange)\n"
    "  --seed S                 shuffling, held-out split, dropout, normal draws (default 1)\n"
    "  --holdout F              held-out fraction for evaluation, in [0, 1) (default 0.2;\n"
    "                           0 with --test-data)\n"
    "  --augment A,...          random transforms of each training sample, anew each\n"
    "                           epoch, on its last two axes (an image's height and width):\n"
    "                           crop=P (a window of the image padded by P with zeros),\n"
    "                           flip (horizontal), vflip; labels per pixel move with it\n"
    "  --input-mean M1,...      every sample (trained and evaluated) as (x - M) / S per\n"
    "  --input-std S1,...       channel (its axis 1), after --augment: torchvision's\n"
    "                           Normalize; one value for every channel (defaults 0, 1)\n"
    "  --progress-every N       progress line every N iterations (default 10), also after\n"
    "                           a first step of 1 s or more and every 30 s; 0 = never\n"
    "  --per-class              after training, each class's recall, precision and IoU on\n"
    "                           the evaluation set, their mean recall (balanced accuracy:\n"
    "                           what class weights, mgsc --class-weights, are for) and mean\n"
    "                           IoU (a segmentation's figure)\n"
    "  --checkpoint FILE        write a checkpoint after every epoch (MPI rank r > 0:\n"
    "                           FILE.rank<r>, with its own residuals and dropout stream);\n"
    "                           with it, once training has started, SIGTERM, SIGINT or\n"
    "                           SIGUSR1 (under mpirun: SIGUSR1) stops the run after the\n"
    "                           step under way, writes the checkpoint and exits with\n"
    "                           128 + the signal (a second one stops at once)\n"
    "  --checkpoint-every N     also every N iterations, or every N seconds with a unit:\n"
    "                           90s, 10m, 2h (a resume goes on from that iteration, as\n"
    "                           if the run had not stopped)\n"
    "  --resume FILE            continue from a checkpoint (its params replace --weights);\n"
    "                           the training options its run was given (--epochs, --lr,\n"
    "                           the schedule, --augment, ...) apply unless given again\n"
    "  --auto-resume            continue from --checkpoint's file when it exists, else\n"
    "                           start (a job requeued after a stop runs the same command)\n"
    "  --save-weights FILE      write the trained params (weights-file format)\n"
    "  --save FILE.onnx         write the trained model as ONNX: the compiled model's\n"
    "                           graph with the trained initializers (BatchNorm\n"
    "                           running statistics included)\n"
    "  --trace FILE             write a chrome://tracing timeline of --trace-steps\n"
    "                           iterations (after 2 warm-up ones) of every kernel,\n"
    "                           collective (start to completion) and mark; rank r > 0\n"
    "                           writes FILE.rank<r>\n"
    "  --trace-steps N          (default 3)\n"
    "  --on-nonfinite stop|skip a NaN or infinite loss or gradient: stop with an error\n"
    "                           naming the iteration and the param (default), or drop\n"
    "                           that step on every worker, count it and go on\n"
    "  --loss-scale MODE        dynamic, none or a number: multiply the loss's gradient\n"
    "                           by a scale the update divides out, so that small\n"
    "                           gradients survive half precision. dynamic (the default\n"
    "                           for mgsc --precision f16) halves it and drops the step\n"
    "                           when a gradient overflows, and doubles it after\n"
    "                           --loss-scale-window steps without; a number is fixed\n"
    "  --loss-scale-init S      the dynamic scale's start (default 65536)\n"
    "  --loss-scale-window N    (default 2000, as torch.amp.GradScaler)\n"
    "  --timeout SECONDS        end the job, naming the workers that did not arrive, when\n"
    "                           a step or collective makes no progress for this long\n"
    "                           (MPI workers; default 300; the set-up, the first\n"
    "                           iteration and checkpoints get 3x; 0: never)\n"
    "  --comm nccl|mpi          a GPU model's collectives: NCCL, one GPU per rank\n"
    "                           (default), or MPI with the device buffers staged\n"
    "                           through pinned host memory (several ranks may share a\n"
    "                           GPU); not for a CPU model, whose collectives run on MPI\n"
    "  --cuda-graph             a GPU model's training step captured once as a CUDA\n"
    "                           graph and replayed (fewer launches: faster at small\n"
    "                           batches); a step a graph cannot hold (gtopk or\n"
    "                           sparse-allreduce) says why and runs kernel by kernel\n"
    "calibration (a model built with mgsc --profile-generate; run it under mpirun\n"
    "with the workers the model will train on):\n"
    "  --calibrate FILE         instead of training, measure each layer's backward on\n"
    "                           --data, top-k over sizes and the collectives, and write\n"
    "                           the profile for mgsc --profile-use\n"
    "  --calibrate-density R    the density top-k is timed at (default 0.001)\n";
constexpr const char *kUsageInference =
    "inference (manifest mode inference, or --inference):\n"
    "  --input NAME=FILE        raw float32 input (int64 for token ids), one per model input\n"
    "  --output NAME=FILE       write a model output as raw float32\n"
    "both:\n"
    "  --weights FILE           params (default: <this executable>.weights)\n"
    "  --help\n";


} // namespace

int launchedRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char *v = std::getenv(name))
      return std::atoi(v);
  return 0;
}

bool launchedAsLaterRank() {
  const int rank = launchedRank();
  if (rank <= 0)
    return false;
  // An MPMD launch (mpirun -np 2 A : -np 2 B) runs several command lines:
  // Open MPI lists its app contexts' sizes ("2 2"), and the first rank of
  // each speaks for its own.
  if (const char *sizes = std::getenv("OMPI_APP_CTX_NUM_PROCS")) {
    std::istringstream in(sizes);
    long first = 0, size = 0;
    while (first < rank && in >> size && size > 0)
      first += size;
    return first != rank;
  }
  return true;
}

std::string helpHint(const std::string &program) {
  return "(" + program + " --help lists the options)\n";
}

void printUsage(std::FILE *f, const std::string &program) {
  const char *manifest = mgs_model_manifest();
  const bool inferenceOnly = manifest && std::strstr(manifest, "\nmode inference\n");
  std::fprintf(f, "usage: %s [options]\n%s%s", program.c_str(), inferenceOnly ? "" : kUsageTraining,
               kUsageInference);
}

// clang-format off
const std::set<std::string> kTrainOnly = {
    "--data", "--data-format", "--labels", "--test-data", "--test-labels", "--epochs", "--lr",
    "--momentum", "--weight-decay", "--warmup-epochs", "--lr-steps", "--lr-gamma", "--seed",
    "--holdout", "--progress-every", "--checkpoint", "--checkpoint-every", "--resume",
    "--auto-resume", "--save-weights", "--save", "--calibrate", "--calibrate-density", "--trace",
    "--trace-steps", "--cuda-graph", "--optimizer", "--beta1", "--beta2", "--eps", "--lr-schedule",
    "--cosine-epochs", "--on-nonfinite", "--timeout", "--comm", "--per-class", "--loss-scale",
    "--loss-scale-init", "--loss-scale-window", "--augment", "--input-mean", "--input-std",
    "--input-data", "--test-input-data"};
// clang-format on
const std::set<std::string> kInferenceOnly = {"--input", "--output"};

namespace {

/// A bad command line: `message` says what is wrong.
Status problem(std::string message) {
  return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, std::move(message));
}

/// The options that take no value, and what each sets.
const std::pair<const char *, bool Options::*> kFlags[] = {
    {"--inference", &Options::inference},
    {"--per-class", &Options::perClass},
    {"--cuda-graph", &Options::cudaGraph},
    {"--auto-resume", &Options::autoResume}};

bool parseI64(const std::string &s, int64_t min, int64_t &v) {
  if (s.empty())
    return false;
  char *end;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (*end || errno || x < min)
    return false;
  v = x;
  return true;
}

/// --checkpoint-every: N iterations, or N seconds with a unit (s, m, h).
bool parseCheckpointEvery(std::string value, Options &o) {
  double scale = 0;
  if (!value.empty()) {
    const char unit = value.back();
    scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
  }
  if (scale == 0)
    return parseI64(value, 1, o.checkpointEveryIters);
  value.pop_back();
  char *end;
  errno = 0;
  const double n = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || errno || !(n > 0) || !std::isfinite(n * scale))
    return false;
  o.checkpointEverySeconds = n * scale;
  return true;
}

bool parseU64(const std::string &s, uint64_t &v) {
  if (s.empty() || s[0] == '-')
    return false;
  char *end;
  errno = 0;
  unsigned long long x = std::strtoull(s.c_str(), &end, 10);
  if (*end || errno)
    return false;
  v = x;
  return true;
}

bool parseF64(const std::string &s, double min, double &v) {
  if (s.empty())
    return false;
  char *end;
  double x = std::strtod(s.c_str(), &end);
  if (*end || !std::isfinite(x) || x < min)
    return false;
  v = x;
  return true;
}

/// `s`'s items separated by commas, each parsed by `item`; false when one fails.
template <typename T, typename ParseItem>
bool parseList(const std::string &s, std::vector<T> &v, ParseItem item) {
  std::vector<T> values;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos)
      comma = s.size();
    T x;
    if (!item(s.substr(pos, comma - pos), x))
      return false;
    values.push_back(x);
    pos = comma + 1;
  }
  v = std::move(values);
  return true;
}

/// Whether a value lies outside float32's finite range or, in magnitude,
/// below `least`.
bool anyBeyondFloat(const std::vector<double> &values, double least) {
  return std::any_of(values.begin(), values.end(), [&](double v) {
    return std::fabs(v) > std::numeric_limits<float>::max() || std::fabs(v) < least;
  });
}

/// Numbers >= min separated by commas (> 0 when `positive`).
bool parseF64List(const std::string &s, double min, bool positive, std::vector<double> &v) {
  return parseList<double>(s, v, [&](const std::string &item, double &x) {
    return parseF64(item, min, x) && (!positive || x > 0);
  });
}

} // namespace

Status parseAugmentation(std::string_view spec, Augmentation &augmentation) {
  std::vector<std::string> items;
  parseList<std::string>(std::string(spec), items, [](const std::string &item, std::string &out) {
    out = item;
    return true;
  });
  auto bad = [&](const std::string &problem) {
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                         problem + " (the items: flip, vflip, crop=P, separated by commas)");
  };
  Augmentation a;
  bool seenCrop = false;
  for (const std::string &item : items) {
    bool *flag = item == "flip" ? &a.hflip : item == "vflip" ? &a.vflip : nullptr;
    if (flag) {
      if (*flag)
        return bad("'" + item + "' is given twice");
      *flag = true;
    } else if (item.rfind("crop=", 0) == 0) {
      if (seenCrop)
        return bad("'crop' is given twice");
      seenCrop = true;
      if (!parseI64(item.substr(5), 1, a.cropPadding) || a.cropPadding > (1 << 20))
        return bad("'" + item + "': the padding P of crop=P is an integer >= 1");
    } else {
      return bad(item.empty() ? std::string("an empty item") : "unknown item '" + item + "'");
    }
  }
  augmentation = a;
  return Status::success();
}

namespace {

/// `s` as one of the named choices.
template <typename E>
bool parseChoice(const std::string &s, std::initializer_list<std::pair<const char *, E>> choices,
                 E &v) {
  for (const auto &[name, value] : choices)
    if (s == name) {
      v = value;
      return true;
    }
  return false;
}

/// The edit distance of two short strings (insertions, deletions and
/// substitutions; one row of the dynamic program).
size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// " (did you mean 'X'?)" for the known option nearest to `arg`, when one
/// is near enough to be a typo of it; empty otherwise.
std::string suggestion(const std::string &arg, const std::set<std::string> &known) {
  std::string best;
  size_t bestDistance = std::max<size_t>(2, arg.size() / 4) + 1;
  for (const std::string &option : known)
    if (size_t d = editDistance(arg, option); d < bestDistance) {
      bestDistance = d;
      best = option;
    }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

bool parseBinding(const std::string &s, std::pair<std::string, std::string> &b) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    return false;
  b = {s.substr(0, eq), s.substr(eq + 1)};
  return true;
}

Status parseValue(const std::string &arg, const std::string &value, Options &o);
Status checkCombination(Options &o);

} // namespace

Status parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (auto flag = std::find_if(std::begin(kFlags), std::end(kFlags),
                                 [&](const auto &f) { return arg == f.first; });
        flag != std::end(kFlags)) {
      o.*(flag->second) = true;
      o.given.insert(arg);
      continue;
    }
    std::string value;
    bool haveValue = false;
    size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      haveValue = true;
    }
    // The options that take a value: the training ones but its flags, and these.
    static const std::set<std::string> known = [] {
      std::set<std::string> options = kTrainOnly;
      for (const auto &flag : kFlags)
        options.erase(flag.first);
      options.insert({"--batch-size", "--weights", "--input", "--output"});
      return options;
    }();
    if (!known.count(arg)) {
      // The flags above (no value) are suggestions too: --inference=1 is
      // met by "did you mean '--inference'?".
      std::set<std::string> options = known;
      options.insert("--help");
      for (const auto &flag : kFlags)
        options.insert(flag.first);
      return problem("unknown option '" + std::string(argv[i]) + "'" + suggestion(arg, options));
    }
    if (!haveValue) {
      if (i + 1 >= argc)
        return problem("option '" + arg + "' needs a value");
      value = argv[++i];
    }
    // A value given twice would silently lose the first (--input, --output
    // and the --input-data ones name one tensor each time).
    static const std::set<std::string> repeatable = {"--input", "--output", "--input-data",
                                                     "--test-input-data"};
    if (!o.given.insert(arg).second && !repeatable.count(arg))
      return problem(arg + " given twice");
    if (Status s = parseValue(arg, value, o); !s.ok())
      return s;
    o.givenValues.emplace_back(arg, value);
  }
  return checkCombination(o);
}

namespace {

/// `value` of option `arg` (one that takes a value) into `o`.
Status parseValue(const std::string &arg, const std::string &value, Options &o) {
  auto bad = [&](const char *expected) {
    return problem("bad value '" + value + "' for " + arg + " (expected " + expected + ")");
  };
  // A path left empty (an unset shell variable) would read as the option
  // not given: a run that saves nothing, say.
  if (value.empty() && isPathOption(arg))
    return bad("a file name");
  if (arg == "--data") {
    o.data = value;
  } else if (arg == "--labels") {
    o.labels = value;
  } else if (arg == "--test-data") {
    o.testData = value;
  } else if (arg == "--test-labels") {
    o.testLabels = value;
  } else if (arg == "--data-format") {
    if (!parseDataFormat(value, o.format))
      return bad("digits, mnist, cifar10, npy or imagefolder");
    o.haveFormat = true;
  } else if (arg == "--epochs") {
    if (!parseI64(value, 0, o.epochs))
      return bad("an integer >= 0");
  } else if (arg == "--batch-size") {
    if (!parseI64(value, 1, o.batchSize))
      return bad("an integer >= 1");
  } else if (arg == "--lr") {
    if (!parseF64(value, 0, o.lr))
      return bad("a number >= 0");
  } else if (arg == "--momentum") {
    if (!parseF64(value, 0, o.momentum) || o.momentum >= 1)
      return bad("a number in [0, 1)");
  } else if (arg == "--weight-decay") {
    if (!parseF64(value, 0, o.weightDecay))
      return bad("a number >= 0");
  } else if (arg == "--warmup-epochs") {
    if (!parseF64(value, 0, o.warmupEpochs))
      return bad("a number of epochs >= 0");
  } else if (arg == "--lr-steps") {
    if (!parseList<int64_t>(value, o.lrSteps, [](const std::string &item, int64_t &e) {
          return parseI64(item, 0, e);
        }))
      return bad("epochs >= 0 separated by commas, like 30,60");
  } else if (arg == "--lr-gamma") {
    if (!parseF64(value, 0, o.lrGamma))
      return bad("a number >= 0");
  } else if (arg == "--seed") {
    if (!parseU64(value, o.seed))
      return bad("an unsigned 64-bit integer");
  } else if (arg == "--holdout") {
    if (!parseF64(value, 0, o.holdout) || o.holdout >= 1)
      return bad("a fraction in [0, 1)");
  } else if (arg == "--progress-every") {
    if (!parseI64(value, 0, o.progressEvery))
      return bad("an integer >= 0");
  } else if (arg == "--checkpoint") {
    o.checkpoint = value;
  } else if (arg == "--input-mean") {
    // (In float32, as the samples: a mean beyond its range is infinite, a
    // standard deviation below 1e-30 makes a sample's quotient overflow.)
    if (!parseF64List(value, -HUGE_VAL, false, o.inputMean) || anyBeyondFloat(o.inputMean, 0.0))
      return bad("a number within float32's range, or one per channel separated by commas");
  } else if (arg == "--input-std") {
    if (!parseF64List(value, 0, true, o.inputStd) || anyBeyondFloat(o.inputStd, 1e-30))
      return bad("a number from 1e-30 to float32's largest, or one per channel separated by "
                 "commas");
  } else if (arg == "--augment") {
    if (Status s = parseAugmentation(value, o.augmentation); !s.ok())
      return problem("bad value '" + value + "' for --augment: " + s.message);
  } else if (arg == "--checkpoint-every") {
    if (!parseCheckpointEvery(value, o))
      return bad("a number of iterations >= 1, or of seconds with a unit: 90s, 10m, 2h");
  } else if (arg == "--resume") {
    o.resume = value;
  } else if (arg == "--save-weights") {
    o.saveWeights = value;
  } else if (arg == "--save") {
    o.saveOnnx = value;
  } else if (arg == "--weights") {
    o.weights = value;
  } else if (arg == "--calibrate") {
    o.calibrate = value;
  } else if (arg == "--trace") {
    o.trace = value;
  } else if (arg == "--trace-steps") {
    if (!parseI64(value, 1, o.traceSteps))
      return bad("an integer >= 1");
  } else if (arg == "--on-nonfinite") {
    if (value != "stop" && value != "skip")
      return bad("stop or skip");
    o.skipNonfinite = value == "skip";
  } else if (arg == "--loss-scale") {
    if (value == "dynamic" || value == "none") {
      o.lossScaling = value == "dynamic" ? LossScaling::Dynamic : LossScaling::None;
    } else {
      if (!parseF64(value, kMinLossScale, o.lossScale) || o.lossScale > kMaxLossScale)
        return bad("dynamic, none or a number from 2^-24 to 2^64");
      o.lossScaling = LossScaling::Static;
    }
  } else if (arg == "--loss-scale-init") {
    if (!parseF64(value, kMinLossScale, o.lossScaleInit) || o.lossScaleInit > kMaxLossScale)
      return bad("a number from 2^-24 to 2^64");
  } else if (arg == "--loss-scale-window") {
    if (!parseI64(value, 1, o.lossScaleWindow))
      return bad("an integer >= 1");
  } else if (arg == "--timeout") {
    if (!parseF64(value, 0, o.timeout))
      return bad("a number of seconds >= 0");
  } else if (arg == "--comm") {
    if (!parseChoice(value, {{"nccl", DeviceComm::Nccl}, {"mpi", DeviceComm::Mpi}}, o.comm))
      return bad("nccl or mpi");
  } else if (arg == "--calibrate-density") {
    if (!parseF64(value, 0, o.calibrateDensity) || o.calibrateDensity <= 0 ||
        o.calibrateDensity > 1)
      return bad("a density in (0, 1]");
  } else if (arg == "--optimizer") {
    if (!parseChoice(value, {{"sgd", Optimizer::Sgd}, {"adamw", Optimizer::AdamW}}, o.optimizer))
      return bad("sgd or adamw");
  } else if (arg == "--beta1" || arg == "--beta2") {
    double &beta = arg == "--beta1" ? o.beta1 : o.beta2;
    if (!parseF64(value, 0, beta) || beta >= 1)
      return bad("a number in [0, 1)");
  } else if (arg == "--eps") {
    if (!parseF64(value, 0, o.eps))
      return bad("a number >= 0");
  } else if (arg == "--lr-schedule") {
    if (!parseChoice(value, {{"step", LrSchedule::Step}, {"cosine", LrSchedule::Cosine}},
                     o.lrSchedule))
      return bad("step or cosine");
  } else if (arg == "--cosine-epochs") {
    if (!parseI64(value, 1, o.cosineEpochs))
      return bad("an integer >= 1");
  } else if (arg == "--input" || arg == "--output" || arg == "--input-data" ||
             arg == "--test-input-data") {
    std::pair<std::string, std::string> b;
    if (!parseBinding(value, b))
      return bad("NAME=FILE");
    auto &list = arg == "--input"        ? o.inputs
                 : arg == "--output"     ? o.outputs
                 : arg == "--input-data" ? o.inputData
                                         : o.testInputData;
    for (const auto &[name, file] : list)
      if (name == b.first)
        return problem(arg + " names '" + name + "' twice");
    list.push_back(b);
  }
  return Status::success();
}

/// The checks of the options together, once each is parsed.
Status checkCombination(Options &o) {
  // Known only after reading the checkpoint when resuming without --optimizer.
  if (o.given.count("--optimizer") || !o.given.count("--resume"))
    if (Status s = checkOptimizerOptions(o); !s.ok())
      return s;
  if (o.lrSchedule == LrSchedule::Cosine)
    for (const char *stepOnly : {"--lr-steps", "--lr-gamma"})
      if (o.given.count(stepOnly))
        return problem(std::string(stepOnly) + " is for --lr-schedule step, not cosine");
  if (o.lrSchedule != LrSchedule::Cosine && o.given.count("--cosine-epochs"))
    return problem("--cosine-epochs is for --lr-schedule cosine");
  // An option that tunes another one not given would be silently ignored.
  for (auto [option, needs, what] :
       {std::tuple{"--trace-steps", "--trace", "the steps --trace FILE records"},
        std::tuple{"--calibrate-density", "--calibrate", "the density --calibrate FILE times"},
        std::tuple{"--lr-gamma", "--lr-steps", "the factor applied at --lr-steps"}})
    if (o.given.count(option) && !o.given.count(needs))
      return problem(std::string(option) + " sets " + what + "; " + needs + " is not given");
  for (const char *needsCheckpoint : {"--checkpoint-every", "--auto-resume"})
    if (o.given.count(needsCheckpoint) && o.checkpoint.empty())
      return problem(std::string(needsCheckpoint) + " needs --checkpoint FILE (where to write)");
  // (--auto-resume sets o.resume itself when it resumes.)
  if (o.autoResume && o.given.count("--resume"))
    return problem("--auto-resume resumes from --checkpoint's file when it exists; --resume names "
                   "one: give either");
  // --test-data replaces the held-out part: none unless asked, and asking is
  // a contradiction.
  if (!o.testData.empty()) {
    if (o.given.count("--holdout") && o.holdout != 0)
      return problem("--holdout and --test-data both choose the evaluation set; with --test-data "
                     "nothing is held out (leave --holdout out, or give 0)");
    o.holdout = 0;
  } else if (!o.testLabels.empty()) {
    return problem("--test-labels goes with --test-data (the test set's .npy inputs)");
  } else if (!o.testInputData.empty()) {
    return problem("--test-input-data goes with --test-data (the test set's other inputs)");
  }
  return Status::success();
}

} // namespace

bool isPathOption(const std::string &option) {
  static const std::set<std::string> paths = {
      "--data", "--labels",       "--test-data", "--test-labels", "--checkpoint", "--resume",
      "--save", "--save-weights", "--weights",   "--calibrate",   "--trace"};
  return paths.count(option) != 0;
}

bool isRecordedOption(const std::string &option) {
  static const std::set<std::string> recorded = {"--epochs",        "--lr",
                                                 "--momentum",      "--weight-decay",
                                                 "--warmup-epochs", "--lr-schedule",
                                                 "--cosine-epochs", "--lr-steps",
                                                 "--lr-gamma",      "--beta1",
                                                 "--beta2",         "--eps",
                                                 "--augment",       "--input-mean",
                                                 "--input-std",     "--on-nonfinite",
                                                 "--loss-scale",    "--loss-scale-window"};
  return recorded.count(option) != 0;
}

Status applyRecordedOptions(const RecordedOptions &recorded, Options &o,
                            std::vector<std::string> &taken, std::vector<std::string> &changed,
                            std::vector<std::string> &dropped) {
  std::map<std::string, std::string> theirs;
  for (const auto &[option, value] : recorded) {
    if (!isRecordedOption(option))
      return problem("it records the option '" + option +
                     "', which this executable does not take from a checkpoint (corrupt, or "
                     "written by another version of mgs?)");
    if (!theirs.emplace(option, value).second)
      return problem("it records " + option + " twice (corrupt?)");
  }
  for (const auto &[option, value] : o.givenValues) {
    if (!isRecordedOption(option))
      continue;
    auto it = theirs.find(option);
    if (it == theirs.end())
      changed.push_back(option + " " + value + " (the checkpoint's run: not given)");
    else if (it->second != value)
      changed.push_back(option + " " + value + " (the checkpoint's run: " + it->second + ")");
  }
  // The schedule the run goes on with: this command line's, else the
  // checkpoint's. The other schedule's recorded options are left out.
  std::string schedule = "step";
  for (const auto &[option, value] : o.given.count("--lr-schedule") ? o.givenValues : recorded)
    if (option == "--lr-schedule")
      schedule = value;
  for (const auto &[option, value] : recorded) {
    if (o.given.count(option))
      continue;
    const bool stepOnly = option == "--lr-steps" || option == "--lr-gamma";
    if ((stepOnly && schedule != "step") || (option == "--cosine-epochs" && schedule != "cosine")) {
      dropped.push_back(option + " " + value + " (for --lr-schedule " +
                        (stepOnly ? "step" : "cosine") + ")");
      continue;
    }
    if (Status s = parseValue(option, value, o); !s.ok())
      return s;
    o.given.insert(option);
    o.givenValues.emplace_back(option, value);
    taken.push_back(option + " " + value);
  }
  return checkCombination(o);
}

Status checkOptimizerOptions(const Options &o) {
  // Options of the other optimizer would be silently ignored.
  const bool adamw = o.optimizer == Optimizer::AdamW;
  if (adamw && o.given.count("--momentum"))
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                         "--momentum is SGD's; AdamW takes --beta1 and --beta2");
  for (const char *adamOnly : {"--beta1", "--beta2", "--eps"})
    if (!adamw && o.given.count(adamOnly))
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           std::string(adamOnly) +
                               " is AdamW's (--optimizer adamw); the optimizer is sgd");
  return Status::success();
}

const char *optimizerName(Optimizer optimizer) {
  return optimizer == Optimizer::AdamW ? "adamw" : "sgd";
}

double scheduledLearningRate(const Options &o, int64_t iteration, int64_t itersPerEpoch,
                             int64_t totalIterations) {
  double lr = o.lr;
  const double warmup = o.warmupEpochs * static_cast<double>(itersPerEpoch);
  if (o.lrSchedule == LrSchedule::Step) {
    const int64_t epoch = itersPerEpoch > 0 ? iteration / itersPerEpoch : 0;
    for (int64_t step : o.lrSteps)
      if (epoch >= step)
        lr *= o.lrGamma;
  } else if (static_cast<double>(totalIterations) > warmup) {
    const double t = std::max(0.0, static_cast<double>(iteration) - warmup) /
                     (static_cast<double>(totalIterations) - warmup);
    lr *= 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, t)));
  }
  if (warmup > 0) {
    const double progress = (static_cast<double>(iteration) + 1) / warmup;
    if (progress < 1)
      lr *= progress;
  }
  return lr;
}

} // namespace mgs::rt::driver
