//===- Driver.cpp - The training / inference executable's main ------------===//
//
// mgsrt_driver_main: parses the command line (Options.cpp) and the compiled
// model's manifest, loads the params (weights file or checkpoint) and the
// data, and runs mgs_train_step / mgs_eval_step (mgsrt.h). The model's
// symbols are only referenced here and in the Driver's other files
// (Driver.h); the object file mgsc emits defines them. This file holds the
// run's entry, its errors, the runtime context and the buffers.
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

#include "Driver.h"
#include "FileIO.h"
#include "Options.h"
#include "mgsrt/driver.h"
#include "mgsrt/mgsrt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <unistd.h>

// Weak: the driver's tests link a fake model without it (mgsrt.h, "The
// compiled model"); mgsc's models always define it.
#pragma weak mgs_model_constants

namespace mgs::rt::driver {

namespace {

/// Writes `line` to stderr in one write: under mpirun several workers may
/// fail at once, and mpirun's own lines come between two writes.
void writeError(const std::string &line) {
  std::fflush(stderr);
  if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
    // Nowhere left to report it.
  }
}

/// printf's format filled in, up to 2047 characters.
std::string vformat(const char *fmt, va_list ap) {
  char text[2048] = "";
  std::vsnprintf(text, sizeof(text), fmt, ap);
  return text;
}

} // namespace

std::string Driver::formatted(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = vformat(fmt, ap);
  va_end(ap);
  return text;
}

int Driver::error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = vformat(fmt, ap);
  va_end(ap);
  return fail(text, /*hint=*/false);
}

int Driver::fail(const std::string &text, bool hint) {
  // The watchdog is ending the job (its error names the workers, and it
  // aborted the NCCL collectives this thread may have waited in): an error
  // here is only the consequence. Wait for the end (the watchdog exits).
  if (watchdogEnding.load() && std::this_thread::get_id() != watchdog.get_id())
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  std::fflush(stdout);
  if (deferring()) {
    if (deferred.empty())
      deferred = text;
    deferredUsage = deferredUsage || hint;
    return 1;
  }
  report(text, hint);
  // The other workers would wait for this one in their next collective.
  if (comm && workers > 1)
    mgsrt_comm_abort(comm, 1);
  return 1;
}

int Driver::agreedError(bool say, const std::string &msg) {
  std::fflush(stdout);
  if (say)
    report(msg);
  return 1;
}

bool Driver::deferring() const {
  return deferErrors.load() && std::this_thread::get_id() != watchdog.get_id();
}

void Driver::report(const std::string &text, bool hint) {
  // The message and its --help hint in one write (writeError()). A worker
  // other than rank 0 says which it is.
  std::string line = o.program + ": error: ";
  if (workers > 1 && rank != 0)
    line += "worker " + std::to_string(rank) + ": ";
  line += text;
  line += '\n';
  if (hint)
    line += helpHint(o.program);
  writeError(line);
}

int Driver::setupAlone(const std::function<int()> &setup) {
  deferErrors = true;
  int rc;
  try {
    rc = setup();
  } catch (const std::bad_alloc &) {
    rc = error("out of memory loading the data");
  }
  deferErrors = false;
  std::string message = std::move(deferred);
  deferred.clear();
  const bool usageError = deferredUsage;
  deferredUsage = false;
  if (rc && message.empty())
    message = "the set-up failed";
  if (workers <= 1) {
    if (rc)
      report(message, usageError);
    return rc ? (usageError ? 2 : 1) : 0;
  }
  // A worker that failed says so at once if the others keep it waiting (a
  // slow or stuck data set elsewhere), so its reason is never lost.
  std::atomic<bool> agreed{false}, said{false};
  std::mutex m;
  std::condition_variable cv;
  std::thread sayer;
  if (rc)
    sayer = std::thread([&] {
      std::unique_lock<std::mutex> lock(m);
      if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return agreed.load(); })) {
        report(message + " (the other workers are still setting up)", usageError);
        said = true;
      }
    });
  const uint64_t hash = rc ? fnv1a64(message) : 0;
  std::vector<int32_t> all;
  int grc = gatherFromWorkers(
      {rc ? 1 : 0, static_cast<int32_t>(hash), static_cast<int32_t>(hash >> 32)}, all);
  {
    std::lock_guard<std::mutex> lock(m);
    agreed = true;
  }
  cv.notify_all();
  if (sayer.joinable())
    sayer.join();
  if (grc) {
    if (rc && !said)
      report(message);
    return grc;
  }
  bool anyFailed = false;
  for (int r = 0; r < workers; ++r)
    anyFailed = anyFailed || all[3 * r] != 0;
  if (!anyFailed)
    return 0;
  if (rc && !said) {
    // The same failure on several workers (a missing data file) is said once.
    bool saidBefore = false;
    for (int r = 0; r < rank; ++r)
      saidBefore = saidBefore || (all[3 * r] && all[3 * r + 1] == all[3 * rank + 1] &&
                                  all[3 * r + 2] == all[3 * rank + 2]);
    if (!saidBefore)
      report(message, usageError);
  }
  return usageError ? 2 : 1;
}

int Driver::usageOnEveryWorker(const std::string &msg) {
  if (!deferring() && workers <= 1 && launchedAsLaterRank())
    return 2; // worker 0 says it
  return usage(msg);
}

int Driver::usage(const std::string &msg) {
  fail(msg, /*hint=*/true);
  return 2;
}

int Driver::run() {
  manifestText = mgs_model_manifest() ? mgs_model_manifest() : "";
  if (Status s = parseManifest(manifestText, m); !s.ok())
    return error("the compiled model's %s", s.message.c_str());
  training = m.mode == Manifest::Mode::Train && !o.inference;

  if (o.batchSize && o.batchSize != m.batchSize)
    return usageOnEveryWorker("--batch-size " + std::to_string(o.batchSize) +
                              " does not match the model, which was compiled with batch size " +
                              std::to_string(m.batchSize) + " (recompile with mgsc to change it)");
  for (const std::string &opt : o.given) {
    if (training && kInferenceOnly.count(opt))
      return usageOnEveryWorker(opt + " is for inference; this model trains (add --inference to "
                                      "run its forward pass)");
    if (!training && kTrainOnly.count(opt))
      return usageOnEveryWorker(opt + " is a training option; this run is inference" +
                                std::string(m.mode == Manifest::Mode::Inference
                                                ? " (the model was compiled for inference)"
                                                : " (--inference)"));
  }
  if (o.given.count("--comm") && !m.cuda)
    return usageOnEveryWorker(
        "--comm chooses how a GPU model's collectives run; this model was compiled for the CPU, "
        "whose collectives always run on MPI (mgsc --target=cuda compiles it for a GPU)");
  if (o.cudaGraph && !m.cuda)
    return usageOnEveryWorker("--cuda-graph replays a GPU model's training step as a CUDA graph; "
                              "this model was compiled for the CPU (mgsc --target=cuda compiles "
                              "it for a GPU)");
  if (o.cudaGraph && o.comm == DeviceComm::Mpi)
    return usageOnEveryWorker("--cuda-graph cannot hold collectives staged through host memory "
                              "(--comm mpi): leave out one of them");
  if (o.cudaGraph && !o.trace.empty())
    return usageOnEveryWorker("--trace times every kernel of a step, which --cuda-graph's replays "
                              "do not run one by one: leave out one of them");
  if (o.cudaGraph && !o.calibrate.empty())
    return usageOnEveryWorker("--cuda-graph is for training; --calibrate times the step kernel "
                              "by kernel");
  if (training && o.data.empty())
    return usageOnEveryWorker("--data is required to train");
  // The files the run will write, checked before it starts (a typo or a
  // read-only folder would otherwise lose the run); --save writes through
  // the ONNX writer, so it gets the resolved path.
  std::vector<std::pair<const char *, std::string>> outputs;
  for (auto [option, path] : {std::pair{"--save", &o.saveOnnx},
                              std::pair{"--save-weights", &o.saveWeights},
                              std::pair{"--checkpoint", &o.checkpoint},
                              std::pair{"--trace", &o.trace},
                              std::pair{"--calibrate", &o.calibrate}}) {
    if (path->empty())
      continue;
    std::string resolved;
    if (Status s = resolveOutputFile(*path, resolved); !s.ok())
      return error("%s: %s", option, s.message.c_str());
    if (path == &o.saveOnnx)
      *path = resolved;
    // One file written twice keeps only the last; the files the run reads
    // are not written over.
    for (const auto &[other, otherPath] : outputs)
      if (sameFile(resolved, otherPath))
        return usage(std::string(option) + " and " + other + " name the same file '" + *path +
                     "'");
    for (auto [input, inPath] :
         {std::pair{"the ONNX model this executable was compiled from", m.source},
          std::pair{"this executable's weights file", weightsPath()},
          std::pair{"the --data file", o.data}, std::pair{"the --labels file", o.labels},
          std::pair{"the --test-data file", o.testData},
          std::pair{"the --test-labels file", o.testLabels},
          std::pair{"the --resume checkpoint", o.resume}})
      if (!inPath.empty() && sameFile(resolved, inPath) &&
          // Named on purpose: resumed and written on; --weights fine-tuned
          // in place (both written whole, then renamed over).
          !(path == &o.checkpoint && inPath == o.resume) &&
          !(path == &o.saveWeights && !o.weights.empty() && inPath == weightsPath()))
        return usage(std::string(option) + " '" + *path + "' would overwrite " + input +
                     "; name another file");
    outputs.emplace_back(option, resolved);
  }
  if (!o.saveOnnx.empty())
    if (int rc = checkSaveOnnx())
      return rc;

  return training ? runTraining() : runInference();
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
    // SGD's velocity, or AdamW's two moments one after the other.
    const uint64_t bytes = m.params[i].numElements() * sizeof(float);
    const int states = o.optimizer == Optimizer::AdamW ? 2 : 1;
    velocities.emplace_back();
    if (!velocities.back().allocate(states * bytes))
      return oom("the optimizer state of '" + m.params[i].name + "'", states * bytes);
    for (int k = 0; k < states && haveResumed; ++k, ++vi) {
      std::memcpy(static_cast<char *>(velocities.back().get()) + k * bytes,
                  resumed.velocities[vi].data.data(), bytes);
      resumed.velocities[vi].data = std::vector<float>();
    }
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
  // Class labels (int64), or float targets.
  const uint64_t labelBytes =
      lossInGraph()
          ? sizeof(float) // the loss's unread target
          : m.batchSize * labelsPerSample * (m.loss.empty() ? sizeof(int64_t) : sizeof(float));
  if (forTraining && (!labels.allocate(labelBytes) || !loss.allocate(sizeof(float))))
    return oom("the labels", labelBytes);

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
    if (forTraining) {
      for (Buffer *b : {&labels, &loss})
        if (int rc = mirror(*b, "the labels and loss"))
          return rc;
      if (int rc = setupStaging())
        return rc;
    }
    if (int rc = constantsToDevice())
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

// A GPU model's constants (mgs_model_constants), copied to the GPU once: the
// steps read each through its table entry, which then holds the device copy
// (the destructor puts the host addresses back before freeing the copies).
int Driver::constantsToDevice() {
  void **table = nullptr;
  const int64_t *bytes = nullptr;
  const int64_t n = mgs_model_constants ? mgs_model_constants(&table, &bytes) : 0;
  for (int64_t i = 0; i < n; ++i) {
    void *device = nullptr;
    if (mgsrt_alloc(ctx, static_cast<size_t>(bytes[i]), &device) != MGSRT_OK)
      return error("allocating the model's constants on the GPU: %s", mgsrt_ctx_message(ctx));
    if (!device)
      continue;
    deviceMemory.push_back(device);
    if (mgsrt_copy_to_device(ctx, device, table[i], static_cast<size_t>(bytes[i])) != MGSRT_OK)
      return error("copying the model's constants to the GPU: %s", mgsrt_ctx_message(ctx));
    hostConstants.emplace_back(&table[i], table[i]);
    table[i] = device;
  }
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
    return error("copying to the GPU: %s%s", mgsrt_ctx_message(ctx), peersNote().c_str());
  return 0;
}

int Driver::toHost(Buffer &b) {
  if (b.device && mgsrt_copy_to_host(ctx, b.get(), b.device, b.bytes()) != MGSRT_OK)
    return error("copying from the GPU: %s%s", mgsrt_ctx_message(ctx), peersNote().c_str());
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

} // namespace mgs::rt::driver

using namespace mgs::rt::driver;

extern "C" int mgsrt_driver_main(int argc, char **argv) {
  Options o;
  if (argc > 0 && argv[0]) {
    o.executable = argv[0];
    // argv[0] without a slash was found on PATH: ask the kernel where we are.
    if (o.executable.find('/') == std::string::npos)
      if (std::string self = runningExecutable(); !self.empty())
        o.executable = self;
    const char *slash = std::strrchr(argv[0], '/');
    o.program = slash ? slash + 1 : argv[0];
  }
  try {
    Driver driver(o);
    mgs::rt::Status parsed = parseOptions(argc, argv, o);
    if (o.help) {
      printUsage(stdout, o.program);
      return 0;
    }
    if (!parsed.ok()) {
      // Every worker of an mpirun job parses the same command line: the
      // first says what is wrong with it (the first of each, in an MPMD one).
      if (launchedAsLaterRank())
        return 2;
      std::fflush(stdout);
      const int rank = launchedRank();
      writeError(o.program +
                 ": error: " + (rank > 0 ? "worker " + std::to_string(rank) + ": " : "") +
                 parsed.message + "\n" + helpHint(o.program));
      return 2;
    }
    return driver.run();
  } catch (const std::bad_alloc &) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: out of memory\n", o.program.c_str());
    return 1;
  }
}
