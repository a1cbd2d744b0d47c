//===- Context.h - The runtime context (internal) ---------------*- C++ -*-===//

#ifndef MGSRT_SUPPORT_CONTEXT_H
#define MGSRT_SUPPORT_CONTEXT_H

#include "mgsrt/mgsrt.h"

#include <cstdint>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

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

/// Time spent per kernel, kept when profiling is on (MGSRT_PROFILE=1).
struct KernelProfile {
  struct Entry {
    int64_t calls = 0;
    double seconds = 0;
  };
  std::map<std::string, Entry> byKernel;
  void record(const char *kernel, std::chrono::steady_clock::duration d) {
    Entry &e = byKernel[kernel];
    ++e.calls;
    e.seconds += std::chrono::duration<double>(d).count();
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
  uint64_t rngState = 0;
  std::unordered_map<const int64_t *, std::unique_ptr<mgs::rt::KernelCache>> caches;
  std::unique_ptr<mgs::rt::KernelProfile> profile; // null unless MGSRT_PROFILE is set
  mgsrt_comm_t *comm = nullptr;                    // mgsrt_ctx_set_comm; not owned
  std::unique_ptr<mgs::rt::CommState> commState;   // pending collectives (lib/Comm)
  /// MGSRT_DEVICE_CPU, or the device whose library `deviceKernels` runs every
  /// kernel (mgsrt_ctx_set_device).
  int device = MGSRT_DEVICE_CPU;
  const mgs::rt::DeviceKernels *deviceKernels = nullptr;
  // Declared last: destroyed first, while the communicator state it may
  // refer to still exists.
  std::unique_ptr<mgs::rt::DeviceState> deviceState;

  bool failed() const { return status != MGSRT_OK; }
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
