//===- StagedCollectives.h - Device collectives over a host backend -*- C++ -*-===//
//
// A GPU context's collectives over a host backend (mpi; loopback in tests),
// its buffers staged through pinned host memory. A start queues the copy of
// the device buffer into the slot's host buffer on a copy stream, after
// everything queued on the compute stream (the host does not block), and
// hands the host collective to the staging thread, which waits for that copy
// and starts the collective (nonblocking: on MPI's communication thread).
// The wait waits for the collective, queues the copy back and makes the
// compute stream wait for it. So the collective overlaps the kernels queued
// between start and wait, as NCCL's stream does.
//
// The sparse collectives (global top-k, balanced sparse all-reduce) stage
// their k entries the same way and run SparseCollectives.h as a task of the
// host backend; their results come back at the wait, and the entries the
// global top-k dropped go back into the device residual there, added in the
// CPU path's order (CopyEngine::addToDevice), so error feedback is the CPU's
// bit for bit.
//
// The device side is a CopyEngine: CUDA's (Kernels/CUDA/StagedComm.cpp:
// cudaMemcpyAsync on a stream of its own, cudaHostAlloc'd buffers, events)
// or a host one (memcpy) that drives this class in the CPU tests. No vendor
// header is included here.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_STAGEDCOLLECTIVES_H
#define MGSRT_COMM_STAGEDCOLLECTIVES_H

#include "Comm/CommBackend.h"
#include "Comm/SparseCollectives.h"
#include "Comm/WireValues.h"

#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace mgs::rt {

/// One copy between device and host memory.
struct StagedCopy {
  void *dst;
  const void *src;
  size_t bytes;
};

/// Copies between device and host memory, queued in order on one copy
/// stream. `tag` names an event: one per request slot, and one for the
/// blocking broadcast (StagedCollectives::kBroadcastTag).
class CopyEngine {
public:
  virtual ~CopyEngine() = default;
  /// Queues `copies` (device to host) after everything queued on the compute
  /// stream so far, then marks `tag` done when they are. With `computeWaits`
  /// the compute stream's later kernels wait for them too (the sources may
  /// be overwritten once the start returns).
  virtual Status toHost(int tag, const std::vector<StagedCopy> &copies, bool computeWaits) = 0;
  /// Blocks the calling thread (the staging thread) until `tag`'s copies to
  /// host have completed.
  virtual Status waitToHost(int tag) = 0;
  /// Queues `copies` (host to device) and makes the compute stream wait for them.
  virtual Status toDevice(int tag, const std::vector<StagedCopy> &copies) = 0;
  /// Queues residual[indices[j]] += values[j] for j = 0 .. count - 1 (host
  /// arrays from allocHost, sorted by index, a repeated index's entries in
  /// the order they are added) on the compute stream, after its work so far
  /// and before its later kernels; each addition is one float addition, as
  /// on the CPU.
  virtual Status addToDevice(int tag, float *residual, const int32_t *indices,
                             const float *values, size_t count) = 0;
  /// Blocks until every queued copy has completed.
  virtual Status synchronize() = 0;
  /// Host memory the copies may use asynchronously (pinned).
  virtual Status allocHost(size_t bytes, void **out) = 0;
  virtual void freeHost(void *p) = 0;
};

/// The collectives of one GPU context over `host` (not owned; it must
/// outlive this object), through `engine` (likewise). Starts and waits come
/// from one thread; slots are those of mgsrt.h (MGSRT_COMM_MAX_SLOTS). Error
/// statuses name the collective ("allreduce: ...").
class StagedCollectives {
public:
  static constexpr int kSlots = MGSRT_COMM_MAX_SLOTS;
  static constexpr int kBroadcastTag = kSlots;

  StagedCollectives(CommBackend &host, CopyEngine &engine);
  /// Waits for the pending collectives and the copies; frees the host buffers.
  ~StagedCollectives();

  int size() const { return host.size(); }
  bool pending(int slot) const { return slots[slot].job != nullptr; }

  /// In place: `data` (n floats on the device) becomes the average over the ranks.
  Status allReduceStart(int slot, float *data, size_t n);
  /// Every rank's k values (sent in the `wire` form) and indices, in
  /// rank order, into recvValues / recvIndices (P * k each, on the device).
  /// The sent buffers may be reused once this returns, as mgsrt.h promises
  /// (the compute stream's later kernels wait for their copy).
  Status allGatherStart(int slot, const float *values, const int32_t *indices, size_t k,
                        WireValues wire, float *recvValues, int32_t *recvIndices);
  /// The global top-k (SparseCollectives.h) of every rank's k entries
  /// (values, indices on the device; indices in [0, n)): outValues /
  /// outIndices (k each, on the device) get mgsrt_gtopk_start's results
  /// (writeGlobalTopK) and the entries it dropped are added back into
  /// `residual` (n floats on the device) at the wait. The sent buffers may be
  /// reused once this returns.
  Status gtopkStart(int slot, const float *values, const int32_t *indices, size_t k, size_t n,
                    float *residual, float *outValues, int32_t *outIndices);
  /// out (n floats on the device) = the average over the ranks of their k
  /// entries (sparseAllReduce; balanced: regions at the index quantiles).
  Status sparseAllReduceStart(int slot, const float *values, const int32_t *indices, size_t k,
                              size_t n, bool balanced, float *out);
  /// Completes the slot's collective: its result copied back, the compute
  /// stream waiting for it. The slot is free again, whatever the status.
  Status wait(int slot);
  /// Every rank's `bytes` at `data` (device) become root's. Blocks until the
  /// host collective completes (the copy back is queued).
  Status broadcast(void *data, size_t bytes, int root);

private:
  /// A host collective the staging thread starts once `tag`'s copies to host
  /// have completed; `request` and `copyStatus` are set when it has.
  struct Job {
    const char *what = "";
    int tag = 0;
    std::function<CommRequestPtr()> start;
    CommRequestPtr request;
    Status copyStatus;
    bool started = false; // guarded by mu
  };
  /// A pinned host buffer, grown (never shrunk) on demand.
  struct HostBuffer {
    void *data = nullptr;
    size_t bytes = 0;
  };
  struct Slot {
    enum class Kind { AllReduce, AllGather, GTopK, SparseAllReduce };
    std::shared_ptr<Job> job; // null: free
    Kind kind = Kind::AllReduce;
    HostBuffer send, recv, out;
    // allreduce: the device buffer; sparse allreduce: its output.
    void *device = nullptr;
    size_t count = 0;
    // allgather: where the results go; gtopk: its outputs.
    float *recvValues = nullptr;
    int32_t *recvIndices = nullptr;
    size_t k = 0;
    WireValues wire = WireValues::F32;
    // gtopk: the device residual and what the task leaves for the wait.
    float *residual = nullptr;
    std::shared_ptr<GlobalTopKResult> gtopk;
  };

  Status ensure(const char *what, HostBuffer &b, size_t bytes);
  /// Copies a sparse collective's k entries into the slot's send buffer
  /// ([values][indices]); the compute stream's later kernels wait for it.
  Status stageEntries(const char *what, int slot, const float *values, const int32_t *indices,
                      size_t k);
  /// The global top-k's results and error feedback, queued at its wait.
  Status finishGTopK(int slot, const GlobalTopKResult &result);
  /// Hands the staging thread a job of `slot` that starts `task` as a task of
  /// the host backend (SparseCollectives.h) once the slot's copies to host
  /// have completed.
  void submitTask(int slot, const char *what, std::function<Status()> task);
  /// Hands `job` to the staging thread.
  void submit(std::shared_ptr<Job> job);
  /// The job's host collective, once started, waited for.
  Status finish(Job &job);
  void stagingLoop();

  CommBackend &host;
  CopyEngine &engine;
  std::array<Slot, kSlots> slots;
  HostBuffer broadcastBuffer;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Job>> queue; // guarded by mu
  bool stopping = false;                  // guarded by mu
  std::thread staging;
};

} // namespace mgs::rt

#endif // MGSRT_COMM_STAGEDCOLLECTIVES_H
