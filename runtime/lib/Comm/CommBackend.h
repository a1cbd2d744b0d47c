//===- CommBackend.h - Collectives behind one interface ---------*- C++ -*-===//
//
// One CommBackend object is one rank of one group (like an MPI_Comm). Every
// collective comes in a nonblocking form, which returns a request at once,
// and a blocking form (start + wait). Backends:
//   loopback  N ranks as threads of one process sharing a rendezvous (tests;
//             a group of one rank otherwise), Loopback/
//   mpi       OpenMPI, MPI_COMM_WORLD duplicated, MPI/
//   nccl      NCCL on one GPU, its group made over a host communicator, NCCL/
//             (built with the CUDA kernels, libmgsrt_cuda.so; GPU contexts'
//             collectives run on it)
// registered by name in BackendRegistry.cpp. No vendor header is included
// here.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_COMMBACKEND_H
#define MGSRT_COMM_COMMBACKEND_H

#include "mgsrt/mgsrt.h"
#include "mgsrt/status.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mgs::rt {

enum class ReduceOp { Sum, Average };

/// A started collective. Until it completes, the buffers it names must stay
/// valid and must not be written (nor read, where it writes them).
/// Destroying a request that has not completed waits for it.
class CommRequest {
public:
  virtual ~CommRequest() = default;
  /// Blocks until the collective completes; returns its status (the same
  /// status again on later calls).
  virtual Status wait() = 0;
  /// Whether the collective has completed (wait then returns at once).
  virtual bool test() = 0;
  /// When the backend saw the collective complete, in steady_clock seconds
  /// since its epoch (the timeline's clock); negative when it does not know.
  /// Meaningful once wait() has returned.
  virtual double completedAt() const { return -1.0; }
};

using CommRequestPtr = std::unique_ptr<CommRequest>;

class CommBackend {
public:
  virtual ~CommBackend() = default;

  virtual std::string_view name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Nonblocking collectives. They never return null; a collective that
  // cannot start returns a request that has completed with the error. All
  // ranks must start the same collectives in the same order.

  /// In place: data becomes the elementwise sum (or average) over the ranks.
  virtual CommRequestPtr iallReduce(float *data, size_t n, ReduceOp op) = 0;
  /// recv (size() * bytesPerRank bytes) gets rank r's send at r * bytesPerRank.
  virtual CommRequestPtr iallGather(const void *send, size_t bytesPerRank, void *recv) = 0;
  /// Every rank's data becomes root's.
  virtual CommRequestPtr ibroadcast(void *data, size_t bytes, int root) = 0;
  virtual CommRequestPtr ibarrier() = 0;
  /// Ends every process of the group with `code` (a failure the other ranks
  /// cannot see would leave them waiting in a collective). A group living in
  /// one process has nothing to end: it returns.
  virtual void abortGroup(int code) {}
  /// Liveness: the progress (a count the caller advances, e.g. iterations)
  /// this rank's heartbeat sends the others. "mpi" starts a heartbeat on its
  /// communication thread at the first call; other backends ignore it.
  virtual void setProgress(int64_t progress) {}
  /// What this rank last heard from `peer`: its progress and how long ago;
  /// false when nothing was heard (or the backend keeps no heartbeat).
  virtual bool peerStatus(int peer, int64_t &progress, double &secondsAgo) const {
    return false;
  }

  // Point-to-point messages, for the collectives built from them
  // (SparseCollectives.h). A task runs on the backend's communication thread
  // after every task and collective started before it; sendRecv may be
  // called only from a task, where the messages between two ranks arrive in
  // the order they were sent. Backends without them (nccl) return requests
  // and statuses that are MGSRT_ERROR_UNAVAILABLE errors saying so.

  /// Starts `task` (named `what` in errors); the request completes with the
  /// status it returns.
  virtual CommRequestPtr startTask(const char *what, std::function<Status()> task);
  /// Sends `send` to rank `dest` and receives the next message from rank
  /// `source` into `recv` (resized to its length); -1: no send, no receive.
  virtual Status sendRecv(int dest, const std::vector<char> &send, int source,
                          std::vector<char> &recv);

  // Blocking forms.
  Status allReduceSum(float *data, size_t n) { return iallReduce(data, n, ReduceOp::Sum)->wait(); }
  Status allReduce(float *data, size_t n, ReduceOp op) { return iallReduce(data, n, op)->wait(); }
  Status allGather(const void *send, size_t bytesPerRank, void *recv) {
    return iallGather(send, bytesPerRank, recv)->wait();
  }
  Status broadcast(void *data, size_t bytes, int root) {
    return ibroadcast(data, bytes, root)->wait();
  }
  Status barrier() { return ibarrier()->wait(); }
  static Status wait(CommRequest &request) { return request.wait(); }
};

/// A request that completed when it was made (errors found before starting).
class CompletedRequest final : public CommRequest {
public:
  explicit CompletedRequest(Status s) : status(std::move(s)) {}
  Status wait() override { return status; }
  bool test() override { return true; }

private:
  Status status;
};

inline CommRequestPtr completedRequest(Status s) {
  return std::make_unique<CompletedRequest>(std::move(s));
}

/// Why a backend without point-to-point messages refuses a task.
inline Status noMessages(const CommBackend &backend, const char *what) {
  return Status::error(MGSRT_ERROR_UNAVAILABLE,
                       std::string(what) + ": the " + std::string(backend.name()) +
                           " backend has no point-to-point messages (the sparse collectives "
                           "gtopk and sparse-allreduce run on loopback and mpi)");
}

inline CommRequestPtr CommBackend::startTask(const char *what, std::function<Status()>) {
  return completedRequest(noMessages(*this, what));
}

inline Status CommBackend::sendRecv(int, const std::vector<char> &, int, std::vector<char> &) {
  return noMessages(*this, "sendRecv");
}

class LoopbackGroup;

/// What a backend needs beyond its name.
struct CommConfig {
  /// loopback: the group to join (createLoopbackGroup) and the rank in it;
  /// null: a group of one rank.
  std::shared_ptr<LoopbackGroup> loopbackGroup;
  int loopbackRank = 0;
  /// loopback: how long a wait gives the other ranks to start the
  /// collective before failing (a test that would hang fails instead).
  std::chrono::milliseconds loopbackTimeout{std::chrono::seconds(120)};
  /// nccl: a host communicator of the same group, over which the ranks agree
  /// on the NCCL id (used during creation only), and the GPU to run on.
  CommBackend *ncclBootstrap = nullptr;
  int ncclDevice = 0;
};

/// Why createCommBackend("nccl") refused a config without ncclBootstrap.
inline constexpr const char *kNcclNeedsBootstrap =
    "nccl: needs a host communicator of the same group to agree on the NCCL id "
    "(CommConfig::ncclBootstrap); a GPU context's collectives make theirs over "
    "mgsrt_ctx_set_comm's communicator";

/// Creates the named backend ("loopback", "mpi", and "nccl" where the CUDA
/// kernels are built).
Status createCommBackend(std::string_view name, const CommConfig &config,
                         std::unique_ptr<CommBackend> &out);
/// The names createCommBackend accepts.
std::vector<std::string> commBackendNames();

} // namespace mgs::rt

#endif // MGSRT_COMM_COMMBACKEND_H
