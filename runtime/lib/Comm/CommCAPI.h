//===- CommCAPI.h - The C handle of a communicator (internal) ---*- C++ -*-===//

#ifndef MGSRT_COMM_COMMCAPI_H
#define MGSRT_COMM_COMMCAPI_H

#include "Comm/CommBackend.h"

#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace mgs::rt {

/// Communicators made over a host communicator (a GPU context's NCCL group,
/// lib/Comm/NCCL), each with its abort: mgsrt_comm_abort runs them before it
/// ends the group, so that no collective stays stuck on the device. Shared
/// by the communicator and those that registered, as either may go first.
class AbortHooks {
public:
  void add(const void *key, std::function<void()> abort) {
    std::lock_guard<std::mutex> lock(mu);
    hooks.emplace_back(key, std::move(abort));
  }
  /// Once this returns, `key`'s abort is not running and will not run.
  void remove(const void *key) {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < hooks.size(); ++i)
      if (hooks[i].first == key) {
        hooks.erase(hooks.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  }
  void runAll() {
    std::lock_guard<std::mutex> lock(mu);
    for (auto &h : hooks)
      h.second();
  }

private:
  std::mutex mu;
  std::vector<std::pair<const void *, std::function<void()>>> hooks;
};

} // namespace mgs::rt

struct mgsrt_comm {
  std::unique_ptr<mgs::rt::CommBackend> backend;
  std::shared_ptr<mgs::rt::AbortHooks> dependents = std::make_shared<mgs::rt::AbortHooks>();
};

namespace mgs::rt {

/// Wraps a backend in a C handle (freed by mgsrt_comm_destroy); tests use it
/// for loopback groups of several ranks, which mgsrt_comm_create cannot make.
inline mgsrt_comm_t *wrapCommBackend(std::unique_ptr<CommBackend> backend) {
  auto *comm = new mgsrt_comm;
  comm->backend = std::move(backend);
  return comm;
}

} // namespace mgs::rt

#endif // MGSRT_COMM_COMMCAPI_H
