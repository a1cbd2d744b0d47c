//===- Driver.cpp - The training / inference executable's main ------------===//
//
// mgsrt_driver_main: parses the command line and the compiled model's
// manifest, loads the params (weights file or checkpoint) and the data, and
// runs mgs_train_step / mgs_eval_step (mgsrt.h). The model's symbols are
// only referenced here; the object file mgsc emits defines them.
//
// Exit status: 0 success, 1 a runtime problem (files, data, a kernel
// failure), 2 a bad command line (with a short usage on stderr).
//
// Determinism: the held-out split is a function of (seed, data size,
// fraction); the order of the training samples in epoch e is a function of
// (seed, e) alone; the dropout stream is the context's, seeded with the seed
// and saved in checkpoints. So a run resumed from a checkpoint continues
// exactly as the uninterrupted run would have.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "FileIO.h"
#include "mgsrt/driver.h"
#include "mgsrt/mgsrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <thread>
#include <sched.h>
#include <omp.h>
#include <unistd.h>

using namespace mgs::rt::driver;

namespace {

//===--- Command line -----------------------------------------------------===//

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

/// The usage for this executable's model (mgs_model_manifest()).
void printUsage(std::FILE *f, const std::string &program) {
  const char *manifest = mgs_model_manifest();
  const bool inferenceOnly = manifest && std::strstr(manifest, "\nmode inference\n");
  std::fprintf(f, "usage: %s [options]\n%s%s", program.c_str(), inferenceOnly ? "" : kUsageTraining,
               kUsageInference);
}

struct Options {
  std::string program = "mgs-model";
  std::string executable;
  std::string data, labels, weights, checkpoint, resume, saveWeights, saveOnnx, calibrate;
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
  uint64_t seed = 1;
  double holdout = 0.2;
  int64_t progressEvery = 10;
  bool inference = false, help = false;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  std::set<std::string> given; // the options on the command line
};

// Options that only make sense when training / only when running inference.
const std::set<std::string> kTrainOnly = {
    "--data",  "--data-format", "--labels", "--epochs",    "--lr",         "--momentum",
    "--weight-decay", "--warmup-epochs", "--lr-steps", "--lr-gamma", "--seed",
    "--holdout", "--progress-every", "--checkpoint", "--resume", "--save-weights", "--save",
    "--calibrate", "--calibrate-density", "--trace", "--trace-steps"};
const std::set<std::string> kInferenceOnly = {"--input", "--output"};

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

// Returns "" or the problem.
std::string parseOptions(int argc, char **argv, Options &o) {
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
        "--calibrate", "--calibrate-density", "--trace", "--trace-steps"};
    if (!known.count(arg))
      return "unknown option '" + std::string(argv[i]) + "'";
    if (!haveValue) {
      if (i + 1 >= argc)
        return "option '" + arg + "' needs a value";
      value = argv[++i];
    }
    o.given.insert(arg);
    auto bad = [&](const char *expected) {
      return "bad value '" + value + "' for " + arg + " (expected " + expected + ")";
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
  return "";
}

//===--- Small helpers ----------------------------------------------------===//

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

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    seconds = 0;
  long s = std::lround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
  return buf;
}

/// A manifest's lines that identify the compiled model: all but `source`
/// (where the .onnx was, which moving or copying it changes).
std::vector<std::string> identityLines(const std::string &manifest) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < manifest.size()) {
    size_t end = manifest.find('\n', pos);
    if (end == std::string::npos)
      end = manifest.size();
    std::string line = manifest.substr(pos, end - pos);
    if (!line.empty() && line.rfind("source ", 0) != 0)
      lines.push_back(std::move(line));
    pos = end + 1;
  }
  return lines;
}

/// "" when a checkpoint's model is this executable's; else what differs:
/// up to 3 lines of each manifest that the other lacks (the lines name the
/// batch size, the params and their shapes, the workers, the collectives).
std::string manifestDifference(const Checkpoint &c, const std::string &ours) {
  if (c.version == 1) // MGSCKPT1: only the hash of the whole text
    return c.manifestHash == fnv1a64(ours) ? "" : "its manifest differs";
  std::vector<std::string> theirs = identityLines(c.manifest), mine = identityLines(ours);
  if (theirs == mine)
    return "";
  auto onlyIn = [](std::vector<std::string> a, std::vector<std::string> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<std::string> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
  };
  auto quote = [](const std::vector<std::string> &lines) {
    std::string s;
    size_t shown = 0;
    for (const std::string &l : lines) {
      if (l.empty())
        continue;
      if (shown == 3) {
        s += ", ...";
        break;
      }
      s += (shown++ ? ", '" : "'") + l + "'";
    }
    return shown ? s : std::string("nothing else");
  };
  std::vector<std::string> gone = onlyIn(theirs, mine), added = onlyIn(mine, theirs);
  if (gone.empty() && added.empty())
    return "the same lines in another order";
  return "it has " + quote(gone) + "; this executable has " + quote(added);
}

using Clock = std::chrono::steady_clock;

/// --trace skips this many iterations (oneDNN primitive creation, cuDNN's
/// algorithm choice) before recording.
constexpr int64_t kTraceWarmup = 2;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

//===--- The run ----------------------------------------------------------===//

class Driver {
public:
  explicit Driver(Options &options) : o(options) {}
  ~Driver() {
    for (void *p : deviceMemory)
      mgsrt_free(ctx, p);
    if (ctx)
      mgsrt_ctx_destroy(ctx); // waits for pending collectives
    mgsrt_comm_destroy(comm);
  }

  int run();

private:
  int error(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  int error(const std::string &msg) { return error("%s", msg.c_str()); }
  int usage(const std::string &msg);

  int loadParams();
  int allocate(bool training);
  int runInference();
  int runTraining();
  int loadData();
  bool evaluate(int64_t &correct, int64_t &total, int &status);
  int saveCheckpoint(uint64_t epochsDone, uint64_t iterationsDone);
  int saveWeights();
  int saveOnnx();
  double learningRate(int64_t epoch, int64_t iteration) const;
  bool fillBatch(const int64_t *indices, int64_t count);

  int setupWorkers();
  int broadcastParams();
  int runCalibration();
  int writeTrace(int64_t iterations);
  /// A per-worker file: `path` on rank 0, `path`.rank<r> on rank r.
  std::string rankPath(const std::string &path) const {
    return rank == 0 ? path : path + ".rank" + std::to_string(rank);
  }
  bool traceWritten = false;

  // A model compiled with mgsc --target=cuda: every io buffer has a device
  // copy the steps use; the host copies are what files are read into and
  // written from, copied across where the two meet.
  int createContext();
  int mirror(Buffer &b, const std::string &what);
  int toDevice(Buffer &b);
  int toHost(Buffer &b);
  int paramsToHost();
  std::vector<void *> deviceMemory;

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
  int64_t labelsPerSample = 1; // labels (and first-output rows) a sample: > 1 per token
  std::vector<int64_t> trainSet, heldOutSet;
  int64_t itersPerEpoch = 0;
};

int Driver::error(const char *fmt, ...) {
  std::fflush(stdout);
  // One write per message: under mpirun several workers may fail at once, and
  // pieces of their messages would interleave. A worker other than rank 0
  // says which it is.
  char text[2048] = "";
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  std::string line = o.program + ": error: ";
  if (workers > 1 && rank != 0)
    line += "worker " + std::to_string(rank) + ": ";
  line += text;
  line += '\n';
  std::fflush(stderr);
  if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
    // Nowhere left to report it.
  }
  // The other workers would wait for this one in their next collective.
  if (comm && workers > 1)
    mgsrt_comm_abort(comm, 1);
  return 1;
}

int Driver::usage(const std::string &msg) {
  error(msg);
  printUsage(stderr, o.program);
  return 2;
}

int Driver::run() {
  manifestText = mgs_model_manifest() ? mgs_model_manifest() : "";
  std::string err;
  if (!parseManifest(manifestText, m, err))
    return error("the compiled model's %s", err.c_str());
  training = m.mode == Manifest::Mode::Train && !o.inference;

  if (o.batchSize && o.batchSize != m.batchSize)
    return usage("--batch-size " + std::to_string(o.batchSize) +
                 " does not match the model, which was compiled with batch size " +
                 std::to_string(m.batchSize) + " (recompile with mgsc to change it)");
  for (const std::string &opt : o.given) {
    if (training && kInferenceOnly.count(opt))
      return usage(opt + " is for inference; this model trains (add --inference to run "
                         "its forward pass)");
    if (!training && kTrainOnly.count(opt))
      return usage(opt + " is a training option; this run is inference" +
                   std::string(m.mode == Manifest::Mode::Inference
                                   ? " (the model was compiled for inference)"
                                   : " (--inference)"));
  }
  if (training && o.data.empty())
    return usage("--data is required to train");

  return training ? runTraining() : runInference();
}

// Params from --resume, else from the weights file.
int Driver::loadParams() {
  std::string err;
  if (training && !o.resume.empty()) {
    if (!readCheckpoint(rankPath(o.resume), resumed, err))
      return error(rank == 0 ? err
                             : err + " (each worker resumes from its own file, <file>.rank<r>: "
                                     "was the checkpoint written by fewer workers?)");
    if (std::string diff = manifestDifference(resumed, manifestText); !diff.empty())
      return error("checkpoint '%s' was written by a differently compiled model (%s); resume "
                   "with an executable compiled as that one was",
                   o.resume.c_str(), diff.c_str());
    std::string source = "checkpoint '" + o.resume + "'";
    if (!matchParams(m, source, resumed.params, err))
      return error(err);
    size_t v = 0;
    for (const TensorSpec &p : m.params) {
      if (!p.trainable)
        continue;
      if (v >= resumed.velocities.size() || resumed.velocities[v].name != p.name ||
          resumed.velocities[v].dims != p.dims)
        return error("checkpoint '%s': no velocity for param '%s' of shape %s (corrupt file?)",
                     o.resume.c_str(), p.name.c_str(), formatShape(p.dims).c_str());
      ++v;
    }
    if (v != resumed.velocities.size())
      return error("checkpoint '%s' has %zu velocities, the model %zu trainable params",
                   o.resume.c_str(), resumed.velocities.size(), v);
    loaded = std::move(resumed.params);
    haveResumed = true;
    return 0;
  }
  std::string path = o.weights;
  if (path.empty()) {
    path = o.executable + ".weights";
    if (!isRegularFile(path))
      return error("no weights file '%s' next to the executable (pass --weights FILE)",
                   path.c_str());
  }
  if (!readWeights(path, loaded, err) || !matchWeights(m, path, loaded, err))
    return error(err);
  return 0;
}

int Driver::allocate(bool forTraining) {
  auto oom = [&](const std::string &what, uint64_t bytes) {
    return error("out of memory allocating %s (%llu bytes)", what.c_str(),
                 static_cast<unsigned long long>(bytes));
  };
  if (!arena.allocate(m.arenaBytes))
    return oom("the arena", m.arenaBytes);
  params.resize(m.params.size());
  for (size_t i = 0; i < m.params.size(); ++i) {
    uint64_t bytes = m.params[i].numElements() * sizeof(float);
    if (!params[i].allocate(bytes))
      return oom("param '" + m.params[i].name + "'", bytes);
    std::memcpy(params[i].get(), loaded[i].data.data(), bytes);
    loaded[i].data = std::vector<float>(); // release as we go
  }
  size_t vi = 0;
  for (size_t i = 0; forTraining && i < m.params.size(); ++i) {
    if (!m.params[i].trainable)
      continue;
    uint64_t bytes = m.params[i].numElements() * sizeof(float);
    velocities.emplace_back();
    if (!velocities.back().allocate(bytes))
      return oom("the velocity of '" + m.params[i].name + "'", bytes);
    if (haveResumed) {
      std::memcpy(velocities.back().get(), resumed.velocities[vi].data.data(), bytes);
      resumed.velocities[vi].data = std::vector<float>();
    }
    ++vi;
  }
  for (auto [specs, bufs] : {std::pair{&m.inputs, &inputs}, std::pair{&m.outputs, &outputs}}) {
    bufs->resize(specs->size());
    for (size_t i = 0; i < specs->size(); ++i) {
      const TensorSpec &spec = (*specs)[i];
      uint64_t bytes = spec.numElements() * (spec.int64 ? sizeof(int64_t) : sizeof(float));
      if (!(*bufs)[i].allocate(bytes))
        return oom("'" + spec.name + "'", bytes);
    }
  }
  if (forTraining && (!labels.allocate(m.batchSize * labelsPerSample * sizeof(int64_t)) ||
                      !loss.allocate(sizeof(float))))
    return oom("the labels", m.batchSize * labelsPerSample * sizeof(int64_t));

  if (m.cuda) {
    if (int rc = mirror(arena, "the arena"))
      return rc;
    for (size_t i = 0; i < params.size(); ++i)
      if (int rc = mirror(params[i], "param '" + m.params[i].name + "'"))
        return rc;
    for (Buffer &b : velocities)
      if (int rc = mirror(b, "a velocity"))
        return rc;
    for (std::vector<Buffer> *bufs : {&inputs, &outputs})
      for (Buffer &b : *bufs)
        if (int rc = mirror(b, "an input or output"))
          return rc;
    if (forTraining)
      for (Buffer *b : {&labels, &loss})
        if (int rc = mirror(*b, "the labels and loss"))
          return rc;
  }

  // mgs_eval_step io: arena, params, inputs, outputs.
  evalIo.push_back(arena.io());
  for (Buffer &b : params)
    evalIo.push_back(b.io());
  for (Buffer &b : inputs)
    evalIo.push_back(b.io());
  for (Buffer &b : outputs)
    evalIo.push_back(b.io());
  // mgs_train_step io: arena, params, velocities, inputs, labels, loss, outputs.
  if (forTraining) {
    trainIo.push_back(arena.io());
    for (Buffer &b : params)
      trainIo.push_back(b.io());
    for (Buffer &b : velocities)
      trainIo.push_back(b.io());
    for (Buffer &b : inputs)
      trainIo.push_back(b.io());
    trainIo.push_back(labels.io());
    trainIo.push_back(loss.io());
    for (Buffer &b : outputs)
      trainIo.push_back(b.io());
  }
  return 0;
}

// The runtime context, attached to a GPU when the model was compiled for one
// (under mpirun each process takes the GPU of its local rank).
int Driver::createContext() {
  ctx = mgsrt_ctx_create(o.seed);
  if (!ctx)
    return error("out of memory creating the runtime context");
  if (m.cuda && mgsrt_ctx_set_device(ctx, MGSRT_DEVICE_CUDA, -1) != MGSRT_OK)
    return error("this model was compiled for a GPU (mgsc --target=cuda): %s",
                 mgsrt_ctx_message(ctx));
  return 0;
}

// Gives `b` a device copy holding its current contents.
int Driver::mirror(Buffer &b, const std::string &what) {
  if (mgsrt_alloc(ctx, b.bytes(), &b.device) != MGSRT_OK)
    return error("allocating %s on the GPU: %s", what.c_str(), mgsrt_ctx_message(ctx));
  if (b.device)
    deviceMemory.push_back(b.device);
  return toDevice(b);
}

int Driver::toDevice(Buffer &b) {
  if (b.device && mgsrt_copy_to_device(ctx, b.device, b.get(), b.bytes()) != MGSRT_OK)
    return error("copying to the GPU: %s", mgsrt_ctx_message(ctx));
  return 0;
}

int Driver::toHost(Buffer &b) {
  if (b.device && mgsrt_copy_to_host(ctx, b.get(), b.device, b.bytes()) != MGSRT_OK)
    return error("copying from the GPU: %s", mgsrt_ctx_message(ctx));
  return 0;
}

// The parameters and velocities the steps updated on the GPU, back on the host.
int Driver::paramsToHost() {
  for (std::vector<Buffer> *bufs : {&params, &velocities})
    for (Buffer &b : *bufs)
      if (int rc = toHost(b))
        return rc;
  return 0;
}

//===--- Inference --------------------------------------------------------===//

int Driver::runInference() {
  std::string err;
  std::map<std::string, std::string> inputFiles, outputFiles;
  // --input / --output NAME=FILE: each names one of the model's tensors, once.
  auto bind = [&](const std::string &flag, const std::string &kind,
                  const std::vector<std::pair<std::string, std::string>> &given,
                  const std::vector<TensorSpec> &specs,
                  std::map<std::string, std::string> &files) -> int {
    for (const auto &[name, file] : given) {
      if (std::none_of(specs.begin(), specs.end(),
                       [&](const TensorSpec &s) { return s.name == name; }))
        return usage(flag + " " + name + ": the model has no " + kind + " '" + name + "'");
      if (!files.emplace(name, file).second)
        return usage(flag + " " + name + " given twice");
    }
    return 0;
  };
  if (int rc = bind("--input", "input", o.inputs, m.inputs, inputFiles))
    return rc;
  for (const TensorSpec &s : m.inputs)
    if (!inputFiles.count(s.name))
      return usage("missing --input " + s.name + "=FILE (" + formatShape(s.dims) +
                   (s.int64 ? " int64: token ids)" : " float32)"));
  if (int rc = bind("--output", "output", o.outputs, m.outputs, outputFiles))
    return rc;

  if (int rc = loadParams())
    return rc;
  if (int rc = createContext())
    return rc;
  if (int rc = allocate(/*forTraining=*/false))
    return rc;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const std::string &file = inputFiles[m.inputs[i].name];
    Reader r;
    if (!r.open(file, "input file", err))
      return error(err);
    if (r.remaining() != inputs[i].bytes())
      return error("input file '%s' has %llu bytes; input '%s' %s takes %llu (%s)",
                   file.c_str(), static_cast<unsigned long long>(r.remaining()),
                   m.inputs[i].name.c_str(), formatShape(m.inputs[i].dims).c_str(),
                   static_cast<unsigned long long>(inputs[i].bytes()),
                   m.inputs[i].int64 ? "int64: token ids" : "float32");
    if (!r.read(inputs[i].get(), inputs[i].bytes(), "the input", err))
      return error(err);
    if (int rc = toDevice(inputs[i]))
      return rc;
  }

  if (mgs_eval_step(ctx, evalIo.data()) != MGSRT_OK)
    return error("mgs_eval_step failed: %s", mgsrt_ctx_message(ctx));
  for (Buffer &b : outputs)
    if (int rc = toHost(b))
      return rc;

  for (size_t i = 0; i < m.outputs.size(); ++i) {
    auto it = outputFiles.find(m.outputs[i].name);
    if (it == outputFiles.end()) {
      std::printf("output %s %s (not written; pass --output %s=FILE)\n", m.outputs[i].name.c_str(),
                  formatShape(m.outputs[i].dims).c_str(), m.outputs[i].name.c_str());
      continue;
    }
    AtomicWriter w;
    if (!w.open(it->second, err) || !w.write(outputs[i].get(), outputs[i].bytes(), err) ||
        !w.commit(err))
      return error(err);
    std::printf("output %s %s -> %s\n", m.outputs[i].name.c_str(),
                formatShape(m.outputs[i].dims).c_str(), it->second.c_str());
  }
  std::fflush(stdout);
  return 0;
}

//===--- Training ---------------------------------------------------------===//

int Driver::loadData() {
  std::string err;
  DataFormat format = o.format;
  if (!o.haveFormat && !guessDataFormat(o.data, format, err))
    return error(err);
  if (format == DataFormat::Npy && o.labels.empty())
    return usage("NumPy data '" + o.data + "' needs --labels FILE.npy (its integer labels)");
  if (format != DataFormat::Npy && !o.labels.empty())
    return usage("--labels is for NumPy (.npy) data; '" + o.data + "' is read as " +
                 dataFormatName(format) + " data, whose labels come with it");
  if (!(format == DataFormat::Npy ? loadNpy(o.data, o.labels, data, err)
                                  : loadDataset(o.data, format, data, err)))
    return error(err);
  if (!checkDataset(data, sampleSize, labelsPerSample, m.classes, err))
    return error(err);
  if (m.inputs[0].int64) {
    // Token ids: the samples must be integers (within +-2^24, exact in the
    // float32 the data sets hold).
    for (size_t i = 0; i < data.samples.size(); ++i) {
      const float v = data.samples[i];
      if (v != std::trunc(v) || std::fabs(v) > 16777216.0f)
        return error("data '%s': sample %lld holds %g, but the model's input '%s' takes token "
                     "ids (integers)",
                     o.data.c_str(), static_cast<long long>(i / sampleSize), v,
                     m.inputs[0].name.c_str());
    }
  }

  uint64_t seed = o.seed;
  double holdout = o.holdout;
  if (haveResumed) {
    // The split and the shuffling depend on these: take them from the
    // checkpoint unless given, and refuse a contradiction.
    if (o.given.count("--seed") && o.seed != resumed.seed)
      return error("checkpoint '%s' was written with --seed %llu, not %llu", o.resume.c_str(),
                   static_cast<unsigned long long>(resumed.seed),
                   static_cast<unsigned long long>(o.seed));
    if (o.given.count("--holdout") && o.holdout != resumed.holdout)
      return error("checkpoint '%s' was written with --holdout %g, not %g", o.resume.c_str(),
                   resumed.holdout, o.holdout);
    if (resumed.numSamples != static_cast<uint64_t>(data.size()))
      return error("checkpoint '%s' was written for a data set of %llu samples; '%s' has %lld",
                   o.resume.c_str(), static_cast<unsigned long long>(resumed.numSamples),
                   o.data.c_str(), static_cast<long long>(data.size()));
    seed = o.seed = resumed.seed;
    holdout = o.holdout = resumed.holdout;
  }
  splitHoldout(data.size(), holdout, seed, trainSet, heldOutSet);
  // Every worker shuffles the same way; iteration i takes `workers`
  // consecutive batches of the order, one per worker (a global batch).
  itersPerEpoch = static_cast<int64_t>(trainSet.size()) / (m.batchSize * workers);
  if (itersPerEpoch == 0)
    return error("'%s': %zu training samples (after holding out %zu) are fewer than the global "
                 "batch size %lld (%d workers x %lld)",
                 o.data.c_str(), trainSet.size(), heldOutSet.size(),
                 static_cast<long long>(m.batchSize * workers), workers,
                 static_cast<long long>(m.batchSize));
  return 0;
}

// Copies `count` samples (and labels) into the batch; the rest is zero. An
// int64 input (token ids) gets the samples' values as integers.
bool Driver::fillBatch(const int64_t *indices, int64_t count) {
  int64_t *lab = labels.get() ? static_cast<int64_t *>(labels.get()) : nullptr;
  const int64_t L = labelsPerSample;
  const bool ints = m.inputs[0].int64;
  float *in = inputs[0].f32();
  int64_t *inInts = static_cast<int64_t *>(inputs[0].get());
  for (int64_t j = 0; j < count; ++j) {
    const float *sample = data.samples.data() + indices[j] * sampleSize;
    if (ints)
      for (int64_t k = 0; k < sampleSize; ++k)
        inInts[j * sampleSize + k] = static_cast<int64_t>(sample[k]);
    else
      std::memcpy(in + j * sampleSize, sample, static_cast<size_t>(sampleSize) * sizeof(float));
    if (lab)
      std::copy_n(data.labels.data() + indices[j] * L, L, lab + j * L);
  }
  if (count < m.batchSize) {
    const size_t rest = static_cast<size_t>((m.batchSize - count) * sampleSize);
    if (ints)
      std::fill(inInts + count * sampleSize, inInts + count * sampleSize + rest, 0);
    else
      std::fill(in + count * sampleSize, in + count * sampleSize + rest, 0.0f);
    if (lab)
      std::fill(lab + count * L, lab + m.batchSize * L, 0);
  }
  return true;
}

double Driver::learningRate(int64_t epoch, int64_t iteration) const {
  double lr = o.lr;
  for (int64_t step : o.lrSteps)
    if (epoch >= step)
      lr *= o.lrGamma;
  if (o.warmupEpochs > 0) {
    double progress = (static_cast<double>(epoch * itersPerEpoch + iteration) + 1) /
                      (o.warmupEpochs * static_cast<double>(itersPerEpoch));
    if (progress < 1)
      lr *= progress;
  }
  return lr;
}

// Accuracy on the held-out set: argmax of each row of the first output
// (labelsPerSample rows a sample: one per token) against its label.
bool Driver::evaluate(int64_t &correct, int64_t &total, int &status) {
  correct = total = 0;
  const TensorSpec &out = m.outputs[0];
  const int64_t L = labelsPerSample, perRow = out.numElements() / (m.batchSize * L);
  for (size_t start = 0; start < heldOutSet.size(); start += m.batchSize) {
    int64_t count = std::min<int64_t>(m.batchSize, heldOutSet.size() - start);
    fillBatch(heldOutSet.data() + start, count);
    if ((status = toDevice(inputs[0])))
      return false;
    if (mgs_eval_step(ctx, evalIo.data()) != MGSRT_OK) {
      status = error("mgs_eval_step failed: %s", mgsrt_ctx_message(ctx));
      return false;
    }
    if ((status = toHost(outputs[0])))
      return false;
    const float *y = outputs[0].f32();
    for (int64_t j = 0; j < count; ++j)
      for (int64_t k = 0; k < L; ++k) {
        const float *row = y + (j * L + k) * perRow;
        int64_t best = std::max_element(row, row + perRow) - row;
        correct += best == data.labels[heldOutSet[start + j] * L + k];
      }
    total += count * L;
  }
  return true;
}

int Driver::saveCheckpoint(uint64_t epochsDone, uint64_t iterationsDone) {
  if (int rc = paramsToHost())
    return rc;
  Checkpoint c;
  c.manifest = manifestText;
  c.seed = o.seed;
  c.holdout = o.holdout;
  c.numSamples = static_cast<uint64_t>(data.size());
  c.epochsDone = epochsDone;
  c.iterationsDone = iterationsDone;
  c.rngState = mgsrt_ctx_rng_state(ctx);
  size_t v = 0;
  for (size_t i = 0; i < m.params.size(); ++i) {
    const float *p = params[i].f32();
    int64_t n = m.params[i].numElements();
    c.params.push_back({m.params[i].name, m.params[i].dims, std::vector<float>(p, p + n)});
    if (m.params[i].trainable) {
      const float *vel = velocities[v++].f32();
      c.velocities.push_back({m.params[i].name, m.params[i].dims, std::vector<float>(vel, vel + n)});
    }
  }
  std::string err;
  // Every worker writes its own (its error-feedback residuals and dropout
  // stream are its own): rank r > 0 writes <file>.rank<r>.
  if (!writeCheckpoint(rankPath(o.checkpoint), c, err))
    return error(err);
  return 0;
}

int Driver::saveWeights() {
  if (int rc = paramsToHost())
    return rc;
  std::vector<Tensor> ts;
  for (size_t i = 0; i < m.params.size(); ++i) {
    const float *p = params[i].f32();
    ts.push_back({m.params[i].name, m.params[i].dims,
                  std::vector<float>(p, p + m.params[i].numElements())});
  }
  std::string err;
  if (!writeWeights(o.saveWeights, ts, err))
    return error(err);
  return 0;
}

int Driver::saveOnnx() {
  if (!mgs_onnx_save_model)
    return error("--save: this executable was linked without the ONNX writer (link "
                 "onnx_import's MGSOnnxModelIO, as mgsc does)");
  if (m.source.empty())
    return error("--save: the model does not say which ONNX file it was compiled from "
                 "(compiled with inline weights?); use --save-weights");
  if (int rc = paramsToHost())
    return rc;
  std::vector<const char *> names;
  std::vector<const float *> values;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < m.params.size(); ++i) {
    if (m.params[i].name.rfind("mgs.residual/", 0) == 0)
      continue; // the compiler's error-feedback state, not the model's
    names.push_back(m.params[i].name.c_str());
    values.push_back(params[i].f32());
    sizes.push_back(m.params[i].numElements());
  }
  char message[1024] = "";
  if (mgs_onnx_save_model(m.source.c_str(), o.saveOnnx.c_str(),
                          static_cast<int64_t>(names.size()), names.data(), values.data(),
                          sizes.data(), message, sizeof message) != 0)
    return error("--save: %s", message);
  std::printf("saved the trained model to %s\n", o.saveOnnx.c_str());
  return 0;
}

int Driver::runTraining() {
  // What the driver needs of the model: one batched input, labels, and a
  // batched first output to take the argmax of.
  if (m.inputs.size() != 1)
    return error("the model has %zu inputs; the training driver feeds exactly one (the samples)",
                 m.inputs.size());
  const TensorSpec &in = m.inputs[0];
  if (in.dims.empty() || in.dims[0] != m.batchSize)
    return error("the model's input '%s' %s does not have the batch size %lld as its first "
                 "dimension",
                 in.name.c_str(), formatShape(in.dims).c_str(),
                 static_cast<long long>(m.batchSize));
  // The loss's labels: one per sample, or several (one per token).
  int64_t labelCount = 1;
  for (int64_t d : m.labelDims)
    labelCount *= d;
  if (labelCount < m.batchSize || labelCount % m.batchSize != 0)
    return error("the model's loss takes %lld labels, not a multiple of the batch size %lld",
                 static_cast<long long>(labelCount), static_cast<long long>(m.batchSize));
  labelsPerSample = labelCount / m.batchSize;
  const TensorSpec &out = m.outputs[0];
  if (out.dims.empty() || out.dims[0] != labelCount || out.numElements() == 0)
    return error("the model's first output '%s' %s does not have one row per label (%lld: the "
                 "batch size %lld x %lld) as its first dimension",
                 out.name.c_str(), formatShape(out.dims).c_str(),
                 static_cast<long long>(labelCount), static_cast<long long>(m.batchSize),
                 static_cast<long long>(labelsPerSample));
  sampleSize = in.numElements() / m.batchSize;

  if (int rc = createContext())
    return rc;
  if (int rc = setupWorkers())
    return rc;
  if (int rc = loadParams())
    return rc;
  if (int rc = loadData())
    return rc;
  if (int rc = allocate(/*forTraining=*/true))
    return rc;
  if (int rc = broadcastParams())
    return rc;
  if (!o.calibrate.empty())
    return runCalibration();

  int64_t firstEpoch = 0;
  uint64_t iterationsDone = 0;
  if (haveResumed) {
    mgsrt_ctx_set_rng_state(ctx, resumed.rngState);
    firstEpoch = static_cast<int64_t>(resumed.epochsDone);
    iterationsDone = resumed.iterationsDone;
    std::printf("resumed from '%s' after epoch %lld\n", o.resume.c_str(),
                static_cast<long long>(firstEpoch));
    if (firstEpoch >= o.epochs)
      std::printf("nothing left to train: --epochs %lld counts every epoch, the checkpoint's "
                  "%lld included (pass a larger --epochs to continue)\n",
                  static_cast<long long>(o.epochs), static_cast<long long>(firstEpoch));
  }
  std::printf("training on '%s': %zu samples, %zu held out, batch size %lld, %lld iterations "
              "per epoch\n",
              data.source.c_str(), trainSet.size(), heldOutSet.size(),
              static_cast<long long>(m.batchSize), static_cast<long long>(itersPerEpoch));
  if (workers > 1)
    std::printf("%d workers (MPI), global batch size %lld%s\n", workers,
                static_cast<long long>(m.batchSize * workers),
                threadsPerWorker ? (", " + std::to_string(threadsPerWorker) +
                                    " thread(s) each (set OMP_NUM_THREADS to change)")
                                       .c_str()
                                 : "");
  std::fflush(stdout);

  bool haveAccuracy = false;
  int64_t correct = 0, total = 0;
  bool checkpointCurrent = false;
  double trainSeconds = 0;      // time spent in training iterations this run
  int64_t itersThisRun = 0;
  const int64_t itersLeftAtStart = std::max<int64_t>(o.epochs - firstEpoch, 0) * itersPerEpoch;
  std::vector<int64_t> order;

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
    double lossSum = 0, windowLoss = 0;
    int64_t windowIters = 0;
    Clock::time_point windowStart = Clock::now();
    for (int64_t it = 0; it < itersPerEpoch; ++it) {
      Clock::time_point iterStart = Clock::now();
      // --trace: iterations 3 .. 2 + N of this run.
      if (!o.trace.empty() && itersThisRun == kTraceWarmup)
        mgsrt_ctx_record_trace(ctx, 1);
      fillBatch(order.data() + (it * workers + rank) * m.batchSize, m.batchSize);
      if (int rc = toDevice(inputs[0]))
        return rc;
      if (int rc = toDevice(labels))
        return rc;
      mgsrt_ctx_set_sgd(ctx, static_cast<float>(learningRate(epoch, it)),
                        static_cast<float>(o.momentum), static_cast<float>(o.weightDecay));
      if (mgs_train_step(ctx, trainIo.data()) != MGSRT_OK)
        return error("mgs_train_step failed (epoch %lld, iteration %lld): %s",
                     static_cast<long long>(epoch + 1), static_cast<long long>(it + 1),
                     mgsrt_ctx_message(ctx));
      if (int rc = toHost(loss))
        return rc;
      float l = *loss.f32();
      lossSum += l;
      windowLoss += l;
      ++windowIters;
      ++iterationsDone;
      ++itersThisRun;
      if (!o.trace.empty() && itersThisRun == kTraceWarmup + o.traceSteps)
        if (int rc = writeTrace(o.traceSteps))
          return rc;
      trainSeconds += secondsSince(iterStart);
      if (o.progressEvery > 0 && (it + 1) % o.progressEvery == 0) {
        double window = secondsSince(windowStart);
        double rate =
            window > 0 ? static_cast<double>(windowIters * m.batchSize * workers) / window : 0;
        double eta = trainSeconds / static_cast<double>(itersThisRun) *
                     static_cast<double>(itersLeftAtStart - itersThisRun);
        std::printf("epoch %lld/%lld iter %lld/%lld loss %.4f  %.1f samples/s  ETA %s\n",
                    static_cast<long long>(epoch + 1), static_cast<long long>(o.epochs),
                    static_cast<long long>(it + 1), static_cast<long long>(itersPerEpoch),
                    windowLoss / static_cast<double>(windowIters), rate,
                    formatDuration(eta).c_str());
        std::fflush(stdout);
        windowLoss = 0;
        windowIters = 0;
        windowStart = Clock::now();
      }
    }
    double meanLoss = lossSum / static_cast<double>(itersPerEpoch);
    int status = 0;
    if (!heldOutSet.empty()) {
      if (!evaluate(correct, total, status))
        return status;
      haveAccuracy = true;
      std::printf("epoch %lld: train loss %.4f (mean), held-out accuracy %.2f%% (%lld/%lld)\n",
                  static_cast<long long>(epoch + 1), meanLoss,
                  100.0 * static_cast<double>(correct) / static_cast<double>(total),
                  static_cast<long long>(correct), static_cast<long long>(total));
    } else {
      std::printf("epoch %lld: train loss %.4f (mean), no held-out set (--holdout 0)\n",
                  static_cast<long long>(epoch + 1), meanLoss);
    }
    std::fflush(stdout);
    if (!o.checkpoint.empty()) {
      if (int rc = saveCheckpoint(static_cast<uint64_t>(epoch + 1), iterationsDone))
        return rc;
      checkpointCurrent = true;
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
  if (!o.checkpoint.empty() && !checkpointCurrent)
    if (int rc = saveCheckpoint(static_cast<uint64_t>(std::max<int64_t>(firstEpoch, o.epochs)),
                                iterationsDone))
      return rc;
  if (!heldOutSet.empty()) {
    int status = 0;
    if (!haveAccuracy && !evaluate(correct, total, status))
      return status;
    std::printf("final held-out accuracy: %.2f%%\n",
                100.0 * static_cast<double>(correct) / static_cast<double>(total));
  } else {
    std::printf("final held-out accuracy: n/a (no held-out set)\n");
  }
  std::fflush(stdout);
  if (rank != 0) // the parameters are the same on every worker
    return 0;
  if (!o.saveWeights.empty())
    if (int rc = saveWeights())
      return rc;
  if (!o.saveOnnx.empty())
    if (int rc = saveOnnx())
      return rc;
  return 0;
}

// Launched by mpirun (OpenMPI's or a PMI launcher's environment), the
// workers are MPI's ranks; otherwise there is one worker. Only rank 0 prints
// progress and writes files.
int Driver::setupWorkers() {
  bool underMpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE");
  const bool calibrating = !o.calibrate.empty();
  if (!underMpi && m.collectives == 0 && !calibrating)
    return 0;
  char message[512] = "";
  if (mgsrt_comm_create(underMpi ? "mpi" : "loopback", &comm, message, sizeof message) !=
      MGSRT_OK)
    return error("cannot start the workers' communication: %s", message);
  if (mgsrt_ctx_set_comm(ctx, comm) != MGSRT_OK)
    return error("%s", mgsrt_ctx_message(ctx));
  rank = mgsrt_comm_rank(comm);
  workers = mgsrt_comm_size(comm);
  // Each worker draws its own dropout masks (its checkpoint keeps its stream).
  if (rank != 0)
    mgsrt_ctx_set_rng_state(ctx, mgsrt_ctx_rng_state(ctx) + 0x9E3779B97F4A7C15ull *
                                                               static_cast<uint64_t>(rank));
  if (workers > 1 && m.collectives == 0 && !calibrating)
    return error("launched as %d workers, but the model was compiled without gradient "
                 "communication; compile it with mgsc --strategy dense",
                 workers);
  if (m.workers > 0 && workers != m.workers)
    return error("launched as %d workers, but the model's sparse exchange was compiled for %lld "
                 "(mgsc --workers)",
                 workers, static_cast<long long>(m.workers));
  // Several workers on one host share its cores: unless told otherwise
  // (OMP_NUM_THREADS), each takes its share. OpenMP's default of one thread
  // per core in every process makes their spinning threads fight for the
  // cores (4 ranks on 2 cores trained 100x slower).
  if (workers > 1 && !std::getenv("OMP_NUM_THREADS")) {
    int local = workers;
    if (const char *v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); v && std::atoi(v) > 0)
      local = std::atoi(v);
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    threadsPerWorker = std::max(1, static_cast<int>(cores) / local);
    // mpirun may have bound this rank to fewer cores (Open MPI binds each of
    // two ranks to one core): no more threads than those.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      threadsPerWorker = std::max(1, std::min(threadsPerWorker, CPU_COUNT(&allowed)));
    omp_set_num_threads(threadsPerWorker);
  }
  if (rank != 0 && !std::freopen("/dev/null", "w", stdout))
    return error("cannot silence the output of worker %d", rank);
  return 0;
}

// --trace: the recorded timeline as chrome://tracing JSON (one process per
// rank, kernels on thread 0, collectives on thread 1, marks as instants).
int Driver::writeTrace(int64_t iterations) {
  const mgsrt_trace_event_t *ev = nullptr;
  const int64_t n = mgsrt_ctx_trace(ctx, &ev);
  std::map<int64_t, std::string> markName(m.marks.begin(), m.marks.end());
  markName[-1] = "backprop starts";
  const double t0 = n ? ev[0].start : 0;
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": "
                "{\"name\": \"rank %d\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": "
                "{\"name\": \"kernels\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": "
                "{\"name\": \"collectives (start to completion)\"}}",
                rank, rank, rank, rank);
  json += line;
  for (int64_t i = 0; i < n; ++i) {
    const mgsrt_trace_event_t &e = ev[i];
    const double ts = (e.start - t0) * 1e6, dur = (e.end - e.start) * 1e6;
    if (e.kind == MGSRT_TRACE_MARK) {
      auto it = markName.find(e.arg);
      std::string name = it == markName.end() ? "mark " + std::to_string(e.arg)
                                              : (e.arg < 0 ? it->second : "gradient " + it->second);
      json += ",\n{\"name\": \"" + jsonEscape(name) + "\"";
      std::snprintf(line, sizeof line,
                    ", \"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": %d, \"tid\": 0}", ts,
                    rank);
    } else {
      const bool coll = e.kind == MGSRT_TRACE_COLLECTIVE;
      std::snprintf(line, sizeof line,
                    ",\n{\"name\": \"%s%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                    "\"pid\": %d, \"tid\": %d%s}",
                    e.name, coll ? (" slot " + std::to_string(e.arg)).c_str() : "", ts, dur,
                    rank, coll ? 1 : 0, coll ? ", \"cat\": \"comm\"" : "");
    }
    json += line;
  }
  json += "\n]}\n";
  mgsrt_ctx_record_trace(ctx, 0);
  std::string path = rankPath(o.trace);
  std::string err;
  AtomicWriter w;
  if (!w.open(path, err) || !w.write(json.data(), json.size(), err) || !w.commit(err))
    return error(err);
  traceWritten = true;
  std::printf("wrote the timeline of %lld iterations (%lld events) to %s%s\n",
              static_cast<long long>(iterations), static_cast<long long>(n), path.c_str(),
              workers > 1 ? " (rank r > 0: <file>.rank<r>)" : "");
  std::fflush(stdout);
  return 0;
}

// --calibrate: measures this machine for the planner and writes the profile.
int Driver::runCalibration() {
  if (!m.instrumented)
    return error("--calibrate needs a calibration build of the model: compile it with mgsc "
                 "--profile-generate");
  const int warmup = 3, steps = 10;
  std::printf("calibrating on %d worker(s): %d steps of backprop (after %d warm-up steps), "
              "top-k, collectives\n",
              workers, steps, warmup);
  std::fflush(stdout);
  std::vector<int64_t> order = trainSet;
  shuffleForEpoch(order, o.seed, 0);
  auto runStep = [&](int s) {
    int64_t it = s % itersPerEpoch;
    fillBatch(order.data() + (it * workers + rank) * m.batchSize, m.batchSize);
    if (toDevice(inputs[0]) || toDevice(labels))
      return false;
    // The parameters change as in training (lr from --lr): the times do not
    // depend on the values.
    mgsrt_ctx_set_sgd(ctx, static_cast<float>(o.lr), static_cast<float>(o.momentum),
                      static_cast<float>(o.weightDecay));
    if (mgs_train_step(ctx, trainIo.data()) != MGSRT_OK || mgsrt_synchronize(ctx) != MGSRT_OK) {
      error("mgs_train_step failed while calibrating: %s", mgsrt_ctx_message(ctx));
      return false;
    }
    return true;
  };
  for (int s = 0; s < warmup; ++s)
    if (!runStep(s))
      return 1;
  Calibration c;
  std::string err;
  bool ok = measureLayers(ctx, m, steps, [&](int s) { return runStep(warmup + s); }, c.layers,
                          err);
  if (!ok)
    return err.empty() ? 1 : error("--calibrate: %s", err.c_str());
  int64_t total = 0;
  for (const Calibration::Layer &l : c.layers)
    total += l.numel;
  c.workers = workers;
  c.batchSize = m.batchSize;
  c.density = o.calibrateDensity;
  if (!measureTopK(ctx, o.calibrateDensity, total, c.topk, err) ||
      !measureCollectives(ctx, workers, c.allgather, c.allreduce, err))
    return error("--calibrate: %s", err.c_str());
  // What the collectives take from backprop on the same cores (on a GPU the
  // step does not run on them: left at 0).
  if (workers > 1 && !m.cuda) {
    auto timedStep = [&](int s) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!runStep(warmup + steps + s))
        return -1.0;
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    if (!measureCollectiveCpu(ctx, workers, timedStep, c.allgather, c.allreduce, err))
      return err.empty() ? 1 : error("--calibrate: %s", err.c_str());
  }
  c.source = "mgs --calibrate: " + o.program + " on " + std::to_string(workers) + " worker(s)" +
             (m.cuda ? " (GPU)" : " (CPU)") + ", batch " + std::to_string(m.batchSize) +
             ", median of " + std::to_string(steps) + " steps";
  double backward = 0;
  for (const Calibration::Layer &l : c.layers)
    backward += l.backward;
  std::printf("backward: %.3f ms over %zu layers; top-k at n = %lld: %.3f ms; allgather "
              "alpha %.3g s beta %.3g s/B cpu %.3g s/B; allreduce alpha %.3g s beta %.3g s/B "
              "cpu %.3g s/B\n",
              backward * 1e3, c.layers.size(), static_cast<long long>(c.topk.back().first),
              c.topk.back().second * 1e3, c.allgather.alpha, c.allgather.beta,
              c.allgather.cpuPerByte, c.allreduce.alpha, c.allreduce.beta,
              c.allreduce.cpuPerByte);
  if (rank != 0)
    return 0;
  AtomicWriter w;
  std::string json = profileJson(c);
  if (!w.open(o.calibrate, err) || !w.write(json.data(), json.size(), err) || !w.commit(err))
    return error(err);
  std::printf("wrote the profile %s (use it with mgsc --profile-use)\n", o.calibrate.c_str());
  std::fflush(stdout);
  return 0;
}

// Every worker starts from rank 0's parameters and velocities.
int Driver::broadcastParams() {
  if (workers == 1)
    return 0;
  auto broadcast = [&](Buffer &b, int64_t elements) {
    int64_t desc[2] = {elements * static_cast<int64_t>(sizeof(float)), 0};
    void *bufs[1] = {b.io()};
    return mgsrt_broadcast(ctx, desc, bufs) == MGSRT_OK;
  };
  size_t v = 0;
  for (size_t i = 0; i < m.params.size(); ++i) {
    // Error-feedback residuals are each worker's own (zero at the start,
    // the worker's checkpoint on resume).
    const bool own = m.params[i].name.rfind("mgs.residual/", 0) == 0;
    if ((!own && !broadcast(params[i], m.params[i].numElements())) ||
        (m.params[i].trainable && !broadcast(velocities[v++], m.params[i].numElements())))
      return error("broadcasting the parameters: %s", mgsrt_ctx_message(ctx));
  }
  return 0;
}

} // namespace

extern "C" int mgsrt_driver_main(int argc, char **argv) {
  Options o;
  if (argc > 0 && argv[0]) {
    o.executable = argv[0];
    // argv[0] without a slash was found on PATH: ask the kernel where we are.
    if (o.executable.find('/') == std::string::npos) {
      char buf[4096];
      ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
      if (n > 0)
        o.executable.assign(buf, static_cast<size_t>(n));
    }
    const char *slash = std::strrchr(argv[0], '/');
    o.program = slash ? slash + 1 : argv[0];
  }
  try {
    Driver driver(o);
    std::string problem = parseOptions(argc, argv, o);
    if (o.help) {
      printUsage(stdout, o.program);
      return 0;
    }
    if (!problem.empty()) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: %s\n", o.program.c_str(), problem.c_str());
      printUsage(stderr, o.program);
      return 2;
    }
    return driver.run();
  } catch (const std::bad_alloc &) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: out of memory\n", o.program.c_str());
    return 1;
  }
}
