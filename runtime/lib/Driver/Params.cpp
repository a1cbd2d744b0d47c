//===- Params.cpp - Where the params come from and where they go ----------===//
//
// Loading the params (a weights file, or a checkpoint to resume from, which
// must come from an identically compiled model) and saving them: the
// per-epoch checkpoint, --save-weights and --save (ONNX).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "mgsrt/contract.h"
#include "FileIO.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <unistd.h>

namespace mgs::rt::driver {

namespace {

/// A manifest's lines that identify the compiled model: all but `source`
/// (where the .onnx was, which moving or copying it changes), the checksum
/// (of all lines, `source` included) and `index_rows` (a bound the driver
/// checks the data against, implied by the params' shapes, and absent from
/// the manifests of models compiled before it).
std::vector<std::string> identityLines(const std::string &manifest) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < manifest.size()) {
    size_t end = manifest.find('\n', pos);
    if (end == std::string::npos)
      end = manifest.size();
    std::string line = manifest.substr(pos, end - pos);
    if (!line.empty() && line.rfind("source ", 0) != 0 && line.rfind("checksum ", 0) != 0 &&
        line.rfind(std::string(contract::manifest::kIndexRows) + " ", 0) != 0)
      lines.push_back(std::move(line));
    pos = end + 1;
  }
  return lines;
}

/// What differs between two manifests' lines in the words of mgsc's options
/// (batch size, workers, gradient exchange, parameters), each followed by
/// "; " (empty when none of those differs).
std::string plainDifference(const std::vector<std::string> &theirs,
                            const std::vector<std::string> &mine) {
  namespace mf = contract::manifest;
  struct Summary {
    std::string batch, workers, collectives, target, accumulate = "1";
    bool residuals = false;
    std::vector<std::string> params; // "NAME SHAPE..." of the model's own
  };
  auto summarize = [](const std::vector<std::string> &lines) {
    Summary s;
    for (const std::string &l : lines) {
      size_t space = l.find(' ');
      std::string key = l.substr(0, space);
      std::string value = space == std::string::npos ? "" : l.substr(space + 1);
      if (key == mf::kBatchSize)
        s.batch = value;
      else if (key == mf::kWorkers)
        s.workers = value;
      else if (key == mf::kCollectives)
        s.collectives = value;
      else if (key == mf::kTarget)
        s.target = value;
      else if (key == mf::kAccumulate)
        s.accumulate = value;
      else if (key == "param" && mf::isResidualName(value))
        s.residuals = true;
      else if (key == "param" && mf::isAccumulatorName(value))
        continue;
      else if (key == "param")
        s.params.push_back(value);
    }
    return s;
  };
  Summary a = summarize(theirs), b = summarize(mine);
  std::string out;
  if (a.batch != b.batch)
    out += "it was compiled for batch size " + a.batch + ", this executable for " + b.batch + "; ";
  if (a.accumulate != b.accumulate)
    out += "it was compiled with --accumulate " + a.accumulate + ", this executable with " +
           b.accumulate + "; ";
  if (a.target != b.target && !a.target.empty() && !b.target.empty())
    out += "it was compiled for the " + a.target + ", this executable for the " + b.target + "; ";
  auto exchange = [](const Summary &s) {
    if (s.residuals)
      return std::string("exchanges sparse gradients with error feedback (mgsc --strategy "
                         "layerwise, omgs, ...") +
             (s.workers.empty() ? ")" : ", --workers " + s.workers + ")");
    if (!s.collectives.empty() && s.collectives != "0")
      return std::string("exchanges dense gradients (mgsc --strategy dense or mgwfbp)");
    return std::string("exchanges no gradients (mgsc --strategy none)");
  };
  if (exchange(a) != exchange(b))
    out += "it " + exchange(a) + ", this executable " + exchange(b) + "; ";
  if (a.params != b.params)
    out += a.params.size() == b.params.size()
               ? "their parameters' names or shapes differ (another model?); "
               : "it has " + std::to_string(a.params.size()) + " parameters, this executable " +
                     std::to_string(b.params.size()) + " (another model?); ";
  return out;
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
  return plainDifference(theirs, mine) + "it has " + quote(gone) + "; this executable has " +
         quote(added);
}

} // namespace

std::string Driver::weightsPath() const {
  if (!o.weights.empty())
    return o.weights;
  std::string beside = o.executable + ".weights";
  if (isRegularFile(beside))
    return beside;
  // Started through a link: mgsc wrote the weights beside the file it leads to.
  if (std::string self = runningExecutable(); !self.empty() && isRegularFile(self + ".weights"))
    return self + ".weights";
  return beside;
}

// Params from --resume, else from the weights file. Each worker alone (no
// collective here): training runs it inside setupAlone, so that a bad
// checkpoint or weights file is agreed on and said once, then agreeOnRun.
int Driver::loadParams() {
  if (training && !o.resume.empty()) {
    if (Status s = readCheckpoint(rankPath(o.resume), resumed); !s.ok())
      return error(rank == 0 ? s.message
                             : s.message + " (each worker resumes from its own file, "
                                           "<file>.rank<r>: was the checkpoint written by fewer "
                                           "workers?)");
    if (std::string diff = manifestDifference(resumed, manifestText); !diff.empty())
      return error("checkpoint '%s' was written by a differently compiled model (%s); resume "
                   "with an executable compiled as that one was",
                   o.resume.c_str(), diff.c_str());
    std::string source = "checkpoint '" + o.resume + "'";
    if (Status s = matchParams(m, source, resumed.params); !s.ok())
      return error(s);
    // The optimizer's state: SGD's velocity (named like its param) or AdamW's
    // two moments (exp_avg/NAME, exp_avg_sq/NAME); without --optimizer the
    // checkpoint's optimizer is kept.
    const bool adamState = !resumed.velocities.empty() &&
                           resumed.velocities[0].name.rfind(kExpAvgPrefix, 0) == 0;
    const Optimizer theirs = adamState ? Optimizer::AdamW : Optimizer::Sgd;
    if (!o.given.count("--optimizer"))
      o.optimizer = theirs;
    else if (o.optimizer != theirs && !resumed.velocities.empty())
      return error("checkpoint '%s' was written with --optimizer %s, not %s", o.resume.c_str(),
                   optimizerName(theirs), optimizerName(o.optimizer));
    if (int rc = takeRecordedOptions())
      return rc;
    if (Status s = checkOptimizerOptions(o); !s.ok())
      return usage(s.message);
    const std::vector<std::string> prefixes =
        adamState ? std::vector<std::string>{kExpAvgPrefix, kExpAvgSqPrefix}
                  : std::vector<std::string>{""};
    size_t v = 0;
    for (const TensorSpec &p : m.params) {
      if (!p.trainable)
        continue;
      for (const std::string &prefix : prefixes) {
        if (v >= resumed.velocities.size() || resumed.velocities[v].name != prefix + p.name ||
            resumed.velocities[v].dims != p.dims)
          return error("checkpoint '%s': no %s for param '%s' of shape %s (corrupt file?)",
                       o.resume.c_str(), adamState ? "AdamW moment" : "velocity",
                       p.name.c_str(), formatShape(p.dims).c_str());
        ++v;
      }
    }
    if (v != resumed.velocities.size())
      return error("checkpoint '%s' has %zu velocities, the model %zu trainable params",
                   o.resume.c_str(), resumed.velocities.size(), v / prefixes.size());
    loaded = std::move(resumed.params);
    haveResumed = true;
    noteInfiniteBuffers();
    return 0;
  }
  std::string path = weightsPath();
  if (o.weights.empty()) {
    if (!isRegularFile(path))
      return error("no weights file '%s' next to the executable (pass --weights FILE)",
                   path.c_str());
  }
  Status s = readWeights(path, loaded);
  if (s.ok())
    s = matchWeights(m, path, loaded);
  if (!s.ok())
    return error(s);
  noteInfiniteBuffers();
  return 0;
}

// The checkpoint's recorded options (its run's schedule, optimizer settings
// and transforms) that this command line does not give: taken, and said, as
// are the ones it gives another value.
int Driver::takeRecordedOptions() {
  if (!resumed.hasOptions)
    return 0; // an earlier format: the run's options are unknown
  std::vector<std::string> taken, changed, dropped;
  if (Status s = applyRecordedOptions(resumed.options, o, taken, changed, dropped); !s.ok())
    return usage("resuming from checkpoint '" + o.resume +
                 "' with its run's options: " + s.message);
  auto joined = [](const std::vector<std::string> &items, const char *separator) {
    std::string text;
    for (const std::string &item : items)
      text += (text.empty() ? "" : separator) + item;
    return text;
  };
  if (rank == 0 && !taken.empty())
    std::printf("resuming with the checkpoint's options: %s\n", joined(taken, " ").c_str());
  if (rank == 0 && !changed.empty())
    std::printf("this command line changes: %s\n", joined(changed, ", ").c_str());
  if (rank == 0 && !dropped.empty())
    std::printf("not taken from the checkpoint: %s\n", joined(dropped, ", ").c_str());
  // The transforms are set up before the checkpoint is read.
  for (const std::string &item : taken)
    if (item.rfind("--augment ", 0) == 0 || item.rfind("--input-", 0) == 0)
      return setupSampleTransforms();
  return 0;
}

// The run id every worker's checkpoints carry: rank 0's fresh one, or, on a
// resume, the checkpoints' own, once every worker's file has been found to
// be of the same run and epoch (one allgather, before training).
int Driver::agreeOnRun() {
  uint64_t mine = haveResumed ? resumed.runId : 0;
  if (!haveResumed || mine == 0) {
    std::random_device device;
    mine = (static_cast<uint64_t>(device()) << 32 | device()) | 1; // never 0 (unknown)
  }
  const uint64_t epoch = haveResumed ? resumed.epochsDone : 0;
  const uint64_t into = haveResumed ? resumed.itersIntoEpoch : 0;
  // Every worker runs the same steps: the same options (paths aside: each
  // may read its own copy) and data of the same size, or the job would stop
  // at the first step they disagree on (a hang until --timeout, or MPI's
  // own error).
  std::map<std::string, std::string> options;
  for (const std::string &option : o.given)
    options[option] = "";
  for (const auto &[option, value] : o.givenValues)
    options[option] = isPathOption(option) ? "(a path)" : value;
  std::string text;
  for (const auto &[option, value] : options)
    text += option + "=" + value + "\n";
  const uint64_t fingerprint = fnv1a64(text);
  auto clamped = [](uint64_t v) { return static_cast<int32_t>(std::min<uint64_t>(v, INT32_MAX)); };
  constexpr int kFields = 8;
  std::vector<int32_t> all;
  if (int rc = gatherFromWorkers({static_cast<int32_t>(mine), static_cast<int32_t>(mine >> 32),
                                  clamped(epoch), clamped(into), static_cast<int32_t>(fingerprint),
                                  static_cast<int32_t>(fingerprint >> 32),
                                  clamped(static_cast<uint64_t>(data.size())),
                                  clamped(static_cast<uint64_t>(testSet.size()))},
                                 all))
    return rc;
  std::string otherOptions, otherData;
  for (int r = 1; r < workers; ++r) {
    const int32_t *w = &all[kFields * r];
    if (w[4] != all[4] || w[5] != all[5])
      otherOptions += (otherOptions.empty() ? "" : ", ") + std::to_string(r);
    else if (w[6] != all[6] || w[7] != all[7])
      otherData += std::string(otherData.empty() ? "" : "; ") + "worker " + std::to_string(r) +
                   ": " + std::to_string(w[6]) + " samples" +
                   (haveTestSet() ? ", " + std::to_string(w[7]) + " test samples" : "");
  }
  auto runOf = [&](int r) {
    return static_cast<uint32_t>(all[kFields * r]) | static_cast<uint64_t>(all[kFields * r + 1])
                                                         << 32;
  };
  runId = runOf(0);
  // A resumed set of files of different runs first (their recorded options
  // differ too).
  std::string differ;
  for (int r = 1; haveResumed && r < workers; ++r)
    if (all[kFields * r + 2] != all[2] || all[kFields * r + 3] != all[3] ||
        (resumed.runId && runOf(r) != runOf(0)))
      differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (differ.empty()) {
    if (!otherOptions.empty())
      return errorOnEveryWorker("worker(s) " + otherOptions +
                                " were started with other options than worker 0 (every worker "
                                "runs the same steps: start them all with the same command line; "
                                "only the paths of files may differ)");
    if (!otherData.empty())
      return errorOnEveryWorker(
          "the workers read data sets of different sizes (worker 0: " + std::to_string(all[6]) +
          " samples" + (haveTestSet() ? ", " + std::to_string(all[7]) + " test samples" : "") +
          "; " + otherData + "): every worker must read the same data");
    return 0;
  }
  std::string files;
  for (int r = 0; r < workers; ++r) {
    char line[200];
    const int32_t at = all[kFields * r + 3];
    std::snprintf(line, sizeof line, "%sworker %d: epoch %d%s%s of run %016llx", r ? "; " : "", r,
                  at ? all[kFields * r + 2] + 1 : all[kFields * r + 2], at ? ", iteration " : "",
                  at ? std::to_string(at).c_str() : "", static_cast<unsigned long long>(runOf(r)));
    files += line;
  }
  return errorOnEveryWorker("checkpoint '" + o.resume +
                            "': the workers' files are not one consistent set (worker(s) " +
                            differ + " differ from worker 0's: " + files +
                            "); not resuming. Resume from a set written together");
}

int Driver::saveCheckpoint(uint64_t epochsDone, uint64_t iterationsDone, uint64_t itersIntoEpoch,
                           double epochLossSum, uint64_t epochSkipped) {
  lastCheckpoint = std::chrono::steady_clock::now();
  if (int rc = checkFiniteBeforeSave("the checkpoint"))
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
  c.lossScale = dynamicLossScale ? lossScale : 0.0;
  c.lossScaleSteps = dynamicLossScale ? lossScaleSteps : 0;
  for (size_t i = 0; i < m.params.size(); ++i) {
    if (contract::manifest::isAccumulatorName(m.params[i].name))
      continue; // zero between steps: stored nowhere
    int64_t n = m.params[i].numElements();
    c.params.push_back({m.params[i].name, m.params[i].dims, paramForFile(i)});
    if (!m.params[i].trainable)
      continue;
    const float *vel = velocities[v++].f32();
    if (o.optimizer == Optimizer::AdamW) {
      c.velocities.push_back({kExpAvgPrefix + m.params[i].name, m.params[i].dims,
                              std::vector<float>(vel, vel + n)});
      c.velocities.push_back({kExpAvgSqPrefix + m.params[i].name, m.params[i].dims,
                              std::vector<float>(vel + n, vel + 2 * n)});
    } else {
      c.velocities.push_back({m.params[i].name, m.params[i].dims, std::vector<float>(vel, vel + n)});
    }
  }
  c.runId = runId;
  c.stepsSkipped = skippedBefore + static_cast<uint64_t>(skippedSteps);
  c.itersIntoEpoch = itersIntoEpoch;
  c.itersPerEpoch = static_cast<uint64_t>(itersPerEpoch);
  c.epochLossSum = epochLossSum;
  c.epochSkipped = epochSkipped;
  for (const auto &[option, value] : o.givenValues)
    if (isRecordedOption(option))
      c.options.emplace_back(option, value);
  // Every worker writes its own (its error-feedback residuals and dropout
  // stream are its own): rank r > 0 writes <file>.rank<r>. Then the workers
  // agree: every file is renamed into place, or none is (a failed write
  // never leaves a set of files of different epochs behind).
  AtomicWriter w;
  Status s = writeCheckpointUnpublished(rankPath(o.checkpoint), c, w);
  if (const char *fault = std::getenv("MGSRT_FAULT_CHECKPOINT")) {
    // Tests: "R:E" makes worker R's checkpoint of epoch E fail as a full disk.
    int r = -1, e = -1;
    if (std::sscanf(fault, "%d:%d", &r, &e) == 2 && r == rank &&
        static_cast<uint64_t>(e) == epochsDone && itersIntoEpoch == 0)
      s = ioError("cannot write '" + rankPath(o.checkpoint) + "': " + std::strerror(ENOSPC));
  }
  std::vector<int32_t> all;
  if (int rc = gatherFromWorkers({s.ok() ? 1 : 0}, all))
    return rc;
  std::string failed;
  for (int r = 0; r < workers; ++r)
    if (!all[r])
      failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  if (!failed.empty()) {
    w.discard();
    // Each worker that failed says why (the reasons may differ).
    const std::string which = itersIntoEpoch ? std::to_string(epochsDone + 1) + " (iteration " +
                                                   std::to_string(itersIntoEpoch) + ")"
                                             : std::to_string(epochsDone);
    return agreedError(!s.ok(), s.message + "; the checkpoint of epoch " + which +
                                    " failed on worker(s) " + failed +
                                    "; no worker's file was replaced (any earlier set is kept)");
  }
  if (Status p = w.publish(); !p.ok())
    return error(p);
  return 0;
}

int Driver::saveWeights() {
  if (int rc = checkFiniteBeforeSave("--save-weights"))
    return rc;
  std::vector<Tensor> ts;
  for (size_t i = 0; i < m.params.size(); ++i)
    if (!contract::manifest::isAccumulatorName(m.params[i].name)) // zero between steps
      ts.push_back({m.params[i].name, m.params[i].dims, paramForFile(i)});
  if (Status s = writeWeights(o.saveWeights, ts); !s.ok())
    return error(s);
  return 0;
}

int Driver::checkSaveOnnx() {
  if (!mgs_onnx_save_model)
    return error("--save: this executable was linked without the ONNX writer (link "
                 "onnx_import's MGSOnnxModelIO, as mgsc does)");
  if (m.source.empty())
    return error("--save: the model does not say which ONNX file it was compiled from "
                 "(compiled with inline weights?); use --save-weights");
  if (::access(m.source.c_str(), R_OK) != 0)
    return error("--save: the model was compiled from '%s', which cannot be read (%s): --save "
                 "writes the trained values into that graph; restore it, or use --save-weights",
                 m.source.c_str(), std::strerror(errno));
  return 0;
}

int Driver::saveOnnx() {
  if (int rc = checkSaveOnnx())
    return rc;
  if (int rc = checkFiniteBeforeSave("--save"))
    return rc;
  std::vector<const char *> names;
  std::vector<const float *> values;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < m.params.size(); ++i) {
    if (contract::manifest::isWorkerStateName(m.params[i].name))
      continue; // the compiler's gradient state, not the model's
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

} // namespace mgs::rt::driver
