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
//     table's allreduce_start, allgather_start, comm_wait, broadcast), which
//     queue NCCL calls on `stream` after the context's compute stream and
//     make the compute stream wait for them (the host does not block);
//   - the CommBackend interface (createCommBackend("nccl", ...), the comm
//     conformance suite): host-blocking waits, after everything queued on the
//     GPU's default stream; buffers may be device or host memory (host
//     buffers are staged through device memory).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_NCCL_NCCLBACKEND_H
#define MGSRT_COMM_NCCL_NCCLBACKEND_H

#include "Comm/CommBackend.h"

#include <cuda_runtime.h>
#include <nccl.h>

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
};

/// The "nccl" entry of BackendRegistry.cpp (through the device library):
/// needs config.ncclBootstrap, a host communicator of the same group, and
/// uses GPU config.ncclDevice.
Status createNcclBackend(const CommConfig &config, std::unique_ptr<CommBackend> &out);

} // namespace mgs::rt

#endif // MGSRT_COMM_NCCL_NCCLBACKEND_H
