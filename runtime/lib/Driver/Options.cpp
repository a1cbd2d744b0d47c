//===- Options.cpp - The executable's command line ------------------------===//
//
// The usage text and the parser of the options (Options.h).
//
//===----------------------------------------------------------------------===//

#include "Options.h"
#include "mgsrt/mgsrt.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace mgs::rt::driver {

namespace {

/// The training and calibration options: listed unless the model was
/// compiled for inference alone.
constexpr const char *kUsageTraining =
    "training (manifest mode train):\n"
    "  --data PATH              data set: digits CSV(.gz), MNIST dir/idx file, CIFAR-10 dir/.bin,\n"
    "                           NumPy .npy inputs (N, ...) in float32/float64, as stored, or\n"
    "                           integers (token ids)\n"
    "  --labels FILE.npy        with .npy inputs: their labels, integers of shape (N,), or\n"
    "                           (N, L) for a model with a label per token (its first output\n"
    "                           then has a row per label, sample by sample: row j*L + k)\n"
    "  --data-format F          digits|mnist|cifar10|npy (default: guessed from PATH)\n"
    "  --epochs N               epochs to train, in all (default 10)\n"
    "  --batch-size N           must equal the batch size the model was compiled with\n"
    "  --lr F                   learning rate (default 0.1)\n"
    "  --momentum F             SGD momentum (default 0.9)\n"
    "  --weight-decay F         L2 weight decay (default 0)\n"
    "  --warmup-epochs E        linear lr warm-up over the first E epochs (default 0)\n"
    "  --lr-steps E1,E2,...     multiply the lr by --lr-gamma from these epochs on\n"
    "  --lr-gamma G             (default 0.1)\n"
    "  --seed S                 shuffling, held-out split and dropout (default 1)\n"
    "  --holdout F              held-out fraction for evaluation, in [0, 1) (default 0.2)\n"
    "  --progress-every N       progress line every N iterations, 0 = never (default 10)\n"
    "  --checkpoint FILE        write a checkpoint after every epoch (MPI rank r > 0:\n"
    "                           FILE.rank<r>, with its own residuals and dropout stream)\n"
    "  --resume FILE            continue from a checkpoint (its params replace --weights)\n"
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
    "  --timeout SECONDS        end the job, naming the workers that did not arrive, when\n"
    "                           a step or collective makes no progress for this long\n"
    "                           (MPI workers; default 300; the set-up, the first\n"
    "                           iteration and checkpoints get 3x; 0: never)\n"
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

void printUsage(std::FILE *f, const std::string &program) {
  const char *manifest = mgs_model_manifest();
  const bool inferenceOnly = manifest && std::strstr(manifest, "\nmode inference\n");
  std::fprintf(f, "usage: %s [options]\n%s%s", program.c_str(), inferenceOnly ? "" : kUsageTraining,
               kUsageInference);
}

const std::set<std::string> kTrainOnly = {
    "--data",  "--data-format", "--labels", "--epochs",    "--lr",         "--momentum",
    "--weight-decay", "--warmup-epochs", "--lr-steps", "--lr-gamma", "--seed",
    "--holdout", "--progress-every", "--checkpoint", "--resume", "--save-weights", "--save",
    "--calibrate", "--calibrate-density", "--trace", "--trace-steps", "--on-nonfinite",
    "--timeout"};
const std::set<std::string> kInferenceOnly = {"--input", "--output"};

namespace {

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

bool parseBinding(const std::string &s, std::pair<std::string, std::string> &b) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    return false;
  b = {s.substr(0, eq), s.substr(eq + 1)};
  return true;
}

} // namespace

Status parseOptions(int argc, char **argv, Options &o) {
  auto problem = [](std::string message) {
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, std::move(message));
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg == "--inference") {
      o.inference = true;
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
    static const std::set<std::string> known = {
        "--data",      "--data-format",    "--labels",     "--epochs",     "--batch-size",   "--lr",
        "--momentum",  "--weight-decay",   "--warmup-epochs", "--lr-steps",  "--lr-gamma",
        "--seed",      "--holdout",        "--progress-every", "--checkpoint", "--resume",
        "--save-weights", "--save",        "--weights",    "--input",      "--output",
        "--calibrate", "--calibrate-density", "--trace", "--trace-steps", "--on-nonfinite",
        "--timeout"};
    if (!known.count(arg))
      return problem("unknown option '" + std::string(argv[i]) + "'");
    if (!haveValue) {
      if (i + 1 >= argc)
        return problem("option '" + arg + "' needs a value");
      value = argv[++i];
    }
    o.given.insert(arg);
    auto bad = [&](const char *expected) {
      return problem("bad value '" + value + "' for " + arg + " (expected " + expected + ")");
    };
    if (arg == "--data") {
      o.data = value;
    } else if (arg == "--labels") {
      o.labels = value;
    } else if (arg == "--data-format") {
      if (!parseDataFormat(value, o.format))
        return bad("digits, mnist, cifar10 or npy");
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
      o.lrSteps.clear();
      size_t pos = 0;
      while (pos <= value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string::npos)
          comma = value.size();
        int64_t e;
        if (!parseI64(value.substr(pos, comma - pos), 0, e))
          return bad("epochs >= 0 separated by commas, like 30,60");
        o.lrSteps.push_back(e);
        pos = comma + 1;
      }
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
    } else if (arg == "--timeout") {
      if (!parseF64(value, 0, o.timeout))
        return bad("a number of seconds >= 0");
    } else if (arg == "--calibrate-density") {
      if (!parseF64(value, 0, o.calibrateDensity) || o.calibrateDensity <= 0 ||
          o.calibrateDensity > 1)
        return bad("a density in (0, 1]");
    } else if (arg == "--input" || arg == "--output") {
      std::pair<std::string, std::string> b;
      if (!parseBinding(value, b))
        return bad("NAME=FILE");
      (arg == "--input" ? o.inputs : o.outputs).push_back(b);
    }
  }
  return Status::success();
}

} // namespace mgs::rt::driver
