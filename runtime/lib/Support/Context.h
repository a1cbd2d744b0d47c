//===- Context.h - The runtime context (internal) ---------------*- C++ -*-===//

#ifndef MGSRT_SUPPORT_CONTEXT_H
#define MGSRT_SUPPORT_CONTEXT_H

#include "mgsrt/contract.h"
#include "mgsrt/mgsrt.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <chrono>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mgs::rt {

/// Per-call-site state a kernel caches across steps (oneDNN primitives and
/// the like), keyed by the call site's descriptor address.
struct KernelCache {
  virtual ~KernelCache() = default;
};

/// splitmix64: the dropout random stream. One 64-bit state, so a checkpoint
/// can save and restore it exactly.
inline uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Time spent per kernel, kept when profiling is on (MGSRT_PROFILE=1). A
/// call site's first call (its descriptor seen for the first time) is kept
/// apart: it builds the site's oneDNN primitive, cuDNN plan or workspace,
/// which later calls reuse.
struct KernelProfile {
  struct Entry {
    int64_t calls = 0;
    double seconds = 0;
    int64_t firstCalls = 0;
    double firstSeconds = 0;
  };
  std::map<std::string, Entry> byKernel;
  std::set<std::pair<std::string, const int64_t *>> sites;
  void record(const char *kernel, const int64_t *desc, std::chrono::steady_clock::duration d) {
    Entry &e = byKernel[kernel];
    const double s = std::chrono::duration<double>(d).count();
    ++e.calls;
    e.seconds += s;
    if (sites.emplace(kernel, desc).second) {
      ++e.firstCalls;
      e.firstSeconds += s;
    }
  }
};

/// A context's communication state (lib/Comm: the table of pending
/// collectives), created on the first collective; the context only owns it.
struct CommState {
  virtual ~CommState() = default;
};

struct DeviceKernels;

/// A context's device state (streams, library handles, caches), owned by the
/// context and made by the device library's attach.
struct DeviceState {
  virtual ~DeviceState() = default;
};

} // namespace mgs::rt

struct mgsrt_ctx {
  mgsrt_status_t status = MGSRT_OK;
  std::string message;
  float lr = 0.01f, momentum = 0.0f, weightDecay = 0.0f;
  /// mgsrt_ctx_set_adamw: the update is AdamW's, with these betas, eps and
  /// the 1-based number of the update (bias correction).
  bool adamw = false;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  int64_t adamStep = 1;
  /// What mgsrt_clip_grad_norm last set: the factor every update applies to
  /// its gradient (1: no clipping).
  float gradScale = 1.0f;
  /// mgsrt_ctx_set_loss_scale: the loss kernels' gradients are multiplied by
  /// lossScale, and the updates and the norm clipping undo it.
  float lossScale = 1.0f, invLossScale = 1.0f;
  /// The factor an update applies to the gradient it reads.
  float updateScale() const { return gradScale * invLossScale; }
  /// sgd_update calls whose gradient held a NaN or an infinity since the
  /// last mgsrt_ctx_take_nonfinite, and the first one's param buffer.
  int64_t nonfiniteUpdates = 0;
  const void *firstNonfiniteParam = nullptr;
  uint64_t rngState = 0;
  std::unordered_map<const int64_t *, std::unique_ptr<mgs::rt::KernelCache>> caches;
  std::unique_ptr<mgs::rt::KernelProfile> profile; // null unless MGSRT_PROFILE is set
  mgsrt_comm_t *comm = nullptr;                    // mgsrt_ctx_set_comm; not owned
  bool deviceCommBound = false; // a GPU context's collectives built NCCL on `comm`
  bool stagedComm = false; // mgsrt_ctx_set_staged_comm: over `comm`'s backend, not NCCL
  std::unique_ptr<mgs::rt::CommState> commState;   // pending collectives (lib/Comm)
  /// MGSRT_DEVICE_CPU, or the device whose library `deviceKernels` runs every
  /// kernel (mgsrt_ctx_set_device).
  // Density warm-up (mgsrt_ctx_set_density): 0, or the density every top-k
  // exchange uses (k_eff), with each call site's rewritten descriptor.
  double density = 0;
  std::unordered_map<const int64_t *, std::array<int64_t, 4>> effectiveDescs;
  // The timeline (mgsrt_ctx_record_trace): events, and each slot's
  // collective start (name, time) until its wait.
  bool tracing = false;
  std::vector<mgsrt_trace_event_t> trace;
  std::unordered_map<int64_t, std::pair<const char *, double>> traceStarts;
  void traceEvent(const char *name, int64_t arg, double start, double end, int32_t kind) {
    try {
      trace.push_back({name, arg, start, end, kind});
    } catch (const std::bad_alloc &) {
      tracing = false; // out of memory: stop tracing rather than fail the step
    }
  }
  // Calibration marks (mgsrt_mark): (id, seconds), kept while recordMarks.
  bool recordMarks = false;
  std::vector<std::pair<int64_t, double>> marks;
  int device = MGSRT_DEVICE_CPU;
  const mgs::rt::DeviceKernels *deviceKernels = nullptr;
  // Declared last: destroyed first, while the communicator state it may
  // refer to still exists.
  std::unique_ptr<mgs::rt::DeviceState> deviceState;

  bool failed() const { return status != MGSRT_OK; }
  /// The descriptor a top-k exchange kernel runs with: `desc` itself, or,
  /// under a density warm-up, a copy (one per call site, so per-call-site
  /// caches keep working) whose k (desc[kAt]) is
  /// min(k, mgs::contract::topkCount(n, density)), n = desc[nAt] (n <= 0: k). `size` <= 4.
  const int64_t *effectiveDesc(const int64_t *desc, int kAt, int nAt, int size) {
    if (density <= 0 || !desc || desc[nAt] <= 0)
      return desc;
    std::array<int64_t, 4> &d = effectiveDescs[desc];
    for (int i = 0; i < size; ++i)
      d[i] = desc[i];
    const int64_t k = desc[kAt], n = desc[nAt];
    d[kAt] = std::min(k, mgs::contract::topkCount(n, density));
    return d.data();
  }
  /// Records the first error; returns `s`.
  mgsrt_status_t fail(mgsrt_status_t s, std::string msg) {
    if (status == MGSRT_OK) {
      status = s;
      message = std::move(msg);
    }
    return status;
  }
};

#endif // MGSRT_SUPPORT_CONTEXT_H
