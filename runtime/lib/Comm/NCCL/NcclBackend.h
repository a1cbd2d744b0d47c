//===- NcclBackend.h - Collectives over NCCL --------------------*- C++ -*-===//
//
// The "nccl" backend: one NCCL communicator on one GPU, made collectively
// over a host communicator (rank 0 makes the NCCL unique id and broadcasts it
// over that communicator), its collectives queued on a stream of its own.
// Built into libmgsrt_cuda.so only (with the CUDA kernels); BackendRegistry.cpp
// reaches it through the device library's table (KernelList.h).
//
// Two users:
//   - a GPU context's collective kernels (NcclCollectives.cpp: the device
//     table's allreduce_start, allgather_start, gtopk_start,
//     sparse_allreduce_start, comm_wait, broadcast), which
//     queue NCCL calls on `stream` after the context's compute stream and
//     make the compute stream wait for them (the host does not block);
//   - the CommBackend interface (createCommBackend("nccl", ...), the comm
//     conformance suite): host-blocking waits, after everything queued on the
//     GPU's default stream; buffers may be device or host memory (host
//     buffers are staged through device memory).
//
// A failed or stuck peer: every host wait here polls NCCL's asynchronous
// error (waitFor) and, when NCCL reports one (a peer died, the network
// failed), aborts the communicator (ncclCommAbort, which ends its kernels on
// this GPU) and returns the error instead of waiting forever. abort() does the
// same from any thread: mgsrt_comm_abort on the host communicator a GPU
// context's NCCL group was made over calls it (the driver's watchdog, when a
// peer stopped: NCCL itself has no timeout).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_NCCL_NCCLBACKEND_H
#define MGSRT_COMM_NCCL_NCCLBACKEND_H

#include "Comm/CommBackend.h"

#include <cuda_bf16.h> // before nccl.h: older NCCLs declare ncclBfloat16 only after it
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <mutex>

namespace mgs::rt {

class NcclBackend final : public CommBackend {
public:
  /// Makes the NCCL communicator of this rank of `host`'s group on CUDA
  /// device `ordinal`, which must be the current device (every rank calls it:
  /// ncclCommInitRank is collective), with its stream and event. On failure
  /// `out` is null and the status says what failed ("<call> failed: <why>").
  static Status create(CommBackend &host, int ordinal, std::unique_ptr<NcclBackend> &out);
  ~NcclBackend() override;

  std::string_view name() const override { return "nccl"; }
  int rank() const override { return myRank; }
  int size() const override { return ranks; }

  CommRequestPtr iallReduce(float *data, size_t n, ReduceOp op) override;
  CommRequestPtr iallGather(const void *send, size_t bytesPerRank, void *recv) override;
  CommRequestPtr ibroadcast(void *data, size_t bytes, int root) override;
  CommRequestPtr ibarrier() override;
  /// Aborts the communicator (the other ranks' collectives with this one then
  /// fail rather than hang); a group of processes cannot be ended from here.
  void abortGroup(int) override { abort(); }

  /// ncclCommAbort, once (any thread; later calls and the destructor do
  /// nothing more). Every later wait fails saying so.
  void abort();
  bool isAborted() const { return aborted.load(); }
  /// NCCL's asynchronous error as a Status (an error once aborted).
  Status asyncError();
  /// Waits for `event` (or, if null, `stream`) as cudaEventSynchronize or
  /// cudaStreamSynchronize would, polling asyncError() meanwhile: on an error
  /// the communicator is aborted and the error returned.
  Status waitFor(cudaStream_t stream, cudaEvent_t event = nullptr);

  // What the collective kernels queue their NCCL calls with.
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr; ///< the collectives' stream
  cudaEvent_t ready = nullptr;   ///< recorded on the compute stream at each start
  int ranks = 0;
  int myRank = 0;
  int ordinal = 0; ///< the CUDA device

private:
  NcclBackend() = default;
  /// Starts a collective of the CommBackend interface after everything
  /// queued on the device's default stream: `enqueue(in, out)` queues the
  /// NCCL call on `stream` with device pointers. Host buffers are staged
  /// through device memory: `in` copied there first, `out` back at the wait
  /// (in place when they are the same buffer).
  template <typename Enqueue>
  CommRequestPtr start(const char *what, const void *in, size_t inBytes, void *out,
                       size_t outBytes, Enqueue &&enqueue);
  float *barrierScratch = nullptr; ///< one device float, summed by ibarrier
  /// Guards `comm` between abort() and asyncError() (the abort frees it).
  std::mutex abortMutex;
  std::atomic<bool> aborted{false};
};

/// Why a wait or collective fails on an aborted communicator.
inline constexpr const char *kNcclAborted =
    "the NCCL communicator was aborted (ncclCommAbort): a peer failed or stopped, or the job is "
    "ending";

/// The "nccl" entry of BackendRegistry.cpp (through the device library):
/// needs config.ncclBootstrap, a host communicator of the same group, and
/// uses GPU config.ncclDevice.
Status createNcclBackend(const CommConfig &config, std::unique_ptr<CommBackend> &out);

} // namespace mgs::rt

#endif // MGSRT_COMM_NCCL_NCCLBACKEND_H
