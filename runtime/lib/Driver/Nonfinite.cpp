//===- Nonfinite.cpp - Training that stops (or skips) on NaN and infinity -===//
//
// After every step the driver looks at what it already has: the loss (one
// float), whether an SGD update met a gradient that was not finite (the
// kernel notes it as it reads the gradient, on a GPU in a device flag that
// comes back with the loss's copy: mgsrt_ctx_take_nonfinite) and,
// on the CPU, the running statistics (BatchNorm's: a few floats a channel). A step that fails
// either ends the run with an error naming the iteration and the param
// (--on-nonfinite stop, the default) or is undone on every worker alike
// (--on-nonfinite skip: the workers agree with one small allgather, then go
// back to the params and velocities from before the step) and counted.
// With dynamic loss scaling (LossScale.cpp) a step whose gradients (or
// residuals) are not finite while its loss is overflowed the scale: it is
// dropped the same way, whatever --on-nonfinite says, and the scale halves.
//
// Saves check the params too (finiteParams): nothing that holds a NaN is
// written over the last good checkpoint or weights file.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "mgsrt/contract.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mgs::rt::driver {

namespace {

/// The first element of `p[0..n)` that is NaN or infinite, or -1.
int64_t firstNonfinite(const float *p, int64_t n) {
  float probe = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    probe += 0.0f * p[i]; // NaN iff some element is NaN or infinite
  if (probe == 0.0f)
    return -1;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i]))
      return i;
  return -1;
}

/// Tests: MGSRT_FAULT_NONFINITE="I,J,..." makes iterations I, J, ... of the
/// run (1-based, all epochs) count as non-finite, as if their loss were NaN;
/// MGSRT_FAULT_OVERFLOW (faultAt(iteration, true)) as if a gradient were
/// infinite while the loss is finite (an overflow of a dynamic loss scale).
bool faultAt(uint64_t iteration, bool overflow = false) {
  const char *list = std::getenv(overflow ? "MGSRT_FAULT_OVERFLOW" : "MGSRT_FAULT_NONFINITE");
  if (!list)
    return false;
  for (const char *p = list;;) {
    char *end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p)
      return false;
    if (v == iteration)
      return true;
    if (*end != ',')
      return false;
    p = end + 1;
  }
}

} // namespace

void Driver::noteInfiniteBuffers() {
  loadedInfinite.assign(m.params.size(), 0);
  for (size_t i = 0; i < m.params.size() && i < loaded.size(); ++i)
    if (!m.params[i].trainable)
      loadedInfinite[i] = firstNonfinite(loaded[i].data.data(),
                                         static_cast<int64_t>(loaded[i].data.size())) >= 0;
}

int Driver::findNonfiniteParam(ParamScan scan, std::string &found) {
  found.clear();
  for (size_t i = 0; i < m.params.size(); ++i) {
    const TensorSpec &p = m.params[i];
    const bool residual = contract::manifest::isWorkerStateName(p.name);
    if ((scan == ParamScan::State && (p.trainable || residual)) ||
        (scan == ParamScan::Residuals && !residual))
      continue;
    if (i < loadedInfinite.size() && loadedInfinite[i])
      continue; // a frozen buffer that holds infinities by design (a mask)
    if (scan != ParamScan::All) // (All follows paramsToHost)
      if (int rc = toHost(params[i]))
        return rc;
    int64_t at = firstNonfinite(params[i].f32(), p.numElements());
    if (at >= 0) {
      found = p.name + "' (element " + std::to_string(at) + ": " +
              std::to_string(params[i].f32()[at]) + ")";
      return 0;
    }
  }
  return 0;
}

/// Copies `bytes` of device memory on the context's stream (mgsrt_copy).
int Driver::copyOnDevice(void *to, void *from, size_t bytes) {
  const int64_t desc[] = {static_cast<int64_t>(bytes / sizeof(float))};
  void *bufs[] = {from, to};
  if (desc[0] > 0 && mgsrt_copy(ctx, desc, bufs) != MGSRT_OK)
    return error("copying on the GPU: %s%s", mgsrt_ctx_message(ctx), peersNote().c_str());
  return 0;
}

int Driver::snapshotParams() {
  // On a GPU the copies stay there (queued on the stream, no host round trip).
  if (m.cuda) {
    size_t s = 0;
    for (std::vector<Buffer> *bufs : {&params, &velocities})
      for (Buffer &b : *bufs) {
        if (s == deviceSnapshot.size()) {
          void *copy = nullptr;
          if (mgsrt_alloc(ctx, b.bytes(), &copy) != MGSRT_OK)
            return error("allocating the step's snapshot on the GPU (--on-nonfinite skip, or a "
                         "dynamic loss scale): %s",
                         mgsrt_ctx_message(ctx));
          deviceSnapshot.push_back(copy);
          if (copy)
            deviceMemory.push_back(copy);
        }
        if (int rc = copyOnDevice(deviceSnapshot[s++], b.device, b.bytes()))
          return rc;
      }
    return 0;
  }
  snapshot.resize(params.size() + velocities.size());
  size_t s = 0;
  for (std::vector<Buffer> *bufs : {&params, &velocities})
    for (Buffer &b : *bufs) {
      const float *p = b.f32();
      snapshot[s++].assign(p, p + b.bytes() / sizeof(float));
    }
  return 0;
}

int Driver::checkStep(int64_t epoch, int64_t it, uint64_t iteration, float lossValue,
                      bool &skipped) {
  skipped = false;
  const void *first = nullptr;
  const int64_t badUpdates = mgsrt_ctx_take_nonfinite(ctx, &first);
  std::string what;
  if (badUpdates > 0) {
    std::string name = "?";
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].io() == first)
        name = m.params[i].name;
    what = "the gradient of param '" + name + "' holds NaN or infinity";
    if (badUpdates > 1)
      what += " (and " + std::to_string(badUpdates - 1) + " more param(s) after it)";
  } else if (!std::isfinite(lossValue)) {
    what = "the loss is " + std::to_string(lossValue);
  } else if (faultAt(iteration)) {
    what = "the loss is nan (MGSRT_FAULT_NONFINITE)";
  } else if (!m.cuda) {
    // (On a GPU that would be a copy a statistic each step: there, a
    // non-finite statistic is caught before a checkpoint or save.)
    std::string stat;
    if (int rc = findNonfiniteParam(ParamScan::State, stat))
      return rc;
    if (!stat.empty())
      what = "the running statistic '" + stat + " is not finite";
  }
  // Dynamic loss scaling: gradients that are not finite while the loss is
  // are an overflow of the scale. Top-k ranks NaN and infinity above every
  // finite value (TopK.cpp, gTop-k's merge alike), so any non-finite
  // gradient entry is sent and reaches every worker's update, whose probe
  // notes it. On the CPU the residuals (what was not sent) are also looked
  // at, a cheap second check; on a GPU that would be a copy each step.
  bool overflow = false;
  if (dynamicLossScale && std::isfinite(lossValue) && !faultAt(iteration)) {
    overflow = badUpdates > 0;
    if (what.empty() && faultAt(iteration, /*overflow=*/true)) {
      what = "a gradient holds infinity (MGSRT_FAULT_OVERFLOW)";
      overflow = true;
    }
    if (what.empty() && !m.cuda) {
      std::string residual;
      if (int rc = findNonfiniteParam(ParamScan::Residuals, residual))
        return rc;
      if (!residual.empty()) {
        what = "the residual '" + residual + " is not finite";
        overflow = true;
      }
    }
  }
  // 0: a good step; 1: an overflow of the loss scale; 2: anything else.
  const int mine = what.empty() ? 0 : overflow ? 1 : 2;
  int verdict = mine;
  std::string where;
  std::vector<int32_t> all; // every worker's verdict, when they were gathered
  if ((o.skipNonfinite || dynamicLossScale) && workers > 1) {
    // Every worker drops the step or none does, and for the same reason.
    if (int rc = gatherFromWorkers({verdict}, all))
      return rc;
    verdict = 0;
    for (int r = 0; r < workers; ++r)
      if (all[r]) {
        where += (where.empty() ? " on worker(s) " : ", ") + std::to_string(r);
        verdict = std::max(verdict, static_cast<int>(all[r]));
      }
  }
  if (verdict == 0)
    return 0;
  // What this worker saw is the reason only if it is the reason for all.
  if (mine != verdict)
    what = "another worker's loss or gradient is not finite";
  if (verdict == 2 && !o.skipNonfinite) {
    const std::string text = formatted(
        "training went non-finite at epoch %lld, iteration %lld (iteration %llu of the run)%s: "
        "%s; stopped without writing over any earlier save or checkpoint (lower --lr, or pass "
        "--on-nonfinite skip to drop such steps)",
        static_cast<long long>(epoch + 1), static_cast<long long>(it + 1),
        static_cast<unsigned long long>(iteration), where.c_str(), what.c_str());
    if (all.empty())
      return error(text);
    // Every worker knows: the first that saw it says it, with its reason.
    int first = 0;
    while (all[first] != verdict)
      ++first;
    return agreedError(rank == first, text);
  }
  // Back to the params and velocities from before the step.
  size_t s = 0;
  for (std::vector<Buffer> *bufs : {&params, &velocities})
    for (Buffer &b : *bufs) {
      if (m.cuda) {
        if (int rc = copyOnDevice(b.device, deviceSnapshot[s++], b.bytes()))
          return rc;
        continue;
      }
      std::memcpy(b.get(), snapshot[s++].data(), b.bytes());
    }
  ++skippedSteps;
  skipped = true;
  if (verdict == 1)
    return backOffLossScale(epoch, it);
  std::printf("epoch %lld, iteration %lld: step dropped (--on-nonfinite skip)%s: %s\n",
              static_cast<long long>(epoch + 1), static_cast<long long>(it + 1), where.c_str(),
              what.c_str());
  return 0;
}

int Driver::checkFiniteBeforeSave(const char *what) {
  if (int rc = paramsToHost())
    return rc;
  std::string bad;
  if (int rc = findNonfiniteParam(ParamScan::All, bad))
    return rc;
  if (!bad.empty())
    return error("not writing %s: param '%s is not finite (the earlier file, if any, is kept)",
                 what, bad.c_str());
  return 0;
}

} // namespace mgs::rt::driver
