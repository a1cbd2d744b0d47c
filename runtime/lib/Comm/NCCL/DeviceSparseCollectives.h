//===- DeviceSparseCollectives.h - gtopk, sparse all-reduce on a GPU -*- C++ -*-===//
//
// The NCCL forms of the sparse collectives (Comm/SparseCollectives.h): the
// same algorithms, merges and tie rules, with the entries on the device, the
// messages queued as groups of sends and receives on one stream (DevicePeers:
// ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd on NCCL,
// NcclCollectives.cpp; a one-process loopback in the GPU tests) and the merges
// as CUDA kernels and CUB sorts on that stream. Results are those of the host
// algorithms bit for bit:
//
//  - global top-k: every message has a fixed size (k entries and a count,
//    8k + 8 bytes; the result sent back to a folded rank carries k bytes
//    more: which of its entries survived), so the whole collective is queued
//    at once, with no host round trip. A merge keys each entry of the union
//    by (magnitude, then the smaller index) in 64 bits, sorts the 2k
//    candidates by that key (CUB radix sort, descending), keeps the first k
//    and sorts them by index. The sum at a shared index is one float
//    addition, as on the host.
//  - balanced sparse all-reduce: ncclSend/ncclRecv take their counts from
//    the host, and the entries a rank sends each owner depend on the data,
//    so the start waits once (on the host) for the P x P matrix of those
//    counts (an all-gather of P integers a rank) and the region boundaries.
//    From them every rank also knows a bound on each reduced region's
//    message (dense: 4 L bytes; sparse: 8 bytes an entry, at most the
//    entries its owner received), so the gather of the reduced regions needs
//    no second round trip: each message is [entries (int64; -1: dense)]
//    [payload] padded to that bound. The owner's sum is a stable sort of the
//    received entries by index (rank order, then entry order kept) and one
//    thread per index adding its run from +0 in that order: the host's bits.
//    The region boundaries (balanced) are all-gathered quantiles summed on
//    the device (integers: any order gives the same sums).
//
// An index outside [0, n) makes the rank take part with no entries (so the
// others finish), as the staged form does; the error is read at the end.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_NCCL_DEVICESPARSECOLLECTIVES_H
#define MGSRT_COMM_NCCL_DEVICESPARSECOLLECTIVES_H

#include "mgsrt/status.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace mgs::rt::cuda {

/// One message of a group: `bytes` at `data` (device memory) sent to or
/// received from rank `peer`.
struct PeerOp {
  enum class Kind { Send, Recv };
  Kind kind;
  int peer;
  void *data;
  size_t bytes;
};

/// Point-to-point messages between the ranks of a group, queued on a stream.
class DevicePeers {
public:
  virtual ~DevicePeers() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Queues `ops` as one group on `stream`: the stream's later work runs
  /// once every send has been received and every receive has arrived. The
  /// messages between two ranks match in the order they were queued; a
  /// message's size is the same on both sides. Never an op to this rank.
  virtual Status exchange(const std::vector<PeerOp> &ops, cudaStream_t stream) = 0;
  /// Blocks the host until `stream` has completed its work so far (ending
  /// with an error, not a hang, where the transport sees a failed peer).
  virtual Status synchronize(cudaStream_t stream) = 0;
};

/// A device buffer grown on demand (never shrunk) and freed with its owner.
class DeviceScratch {
public:
  DeviceScratch() = default;
  DeviceScratch(const DeviceScratch &) = delete;
  DeviceScratch &operator=(const DeviceScratch &) = delete;
  ~DeviceScratch();
  /// At least `bytes`; `idle` runs first when an existing allocation must be
  /// freed (it must wait for the streams that may still use it).
  Status reserve(size_t bytes, const std::function<Status()> &idle);
  template <typename T> T *as(size_t byteOffset = 0) const {
    return reinterpret_cast<T *>(static_cast<char *>(data) + byteOffset);
  }

private:
  void *data = nullptr;
  size_t have = 0;
};

/// The buffers of one sparse collective (a request slot's), kept between
/// uses. Its entries are staged by stageEntries; everything else belongs to
/// the collective until its end (and, for the global top-k, its error
/// feedback) has run.
class SparseWork {
public:
  SparseWork() = default;
  SparseWork(const SparseWork &) = delete;
  SparseWork &operator=(const SparseWork &) = delete;
  ~SparseWork();

  /// Waits for every stream that may still use the buffers (called before a
  /// buffer that grows is freed).
  std::function<Status()> idle;

  /// Copies the k entries to send into the work's own buffers on `stream`
  /// (the caller may overwrite its buffers once that stream has passed it).
  Status stageEntries(const float *values, const int32_t *indices, int64_t k,
                      cudaStream_t stream);

  /// After the collective's stream has completed (host): success, or the
  /// first index outside [0, n) as the host's checkSparseIndices words it.
  Status inputStatus() const;

  // Internal to DeviceSparseCollectives.cu.
  int64_t k = 0, n = 0;
  DeviceScratch entries;  ///< staged values (k floats), then indices (k int32)
  DeviceScratch work;     ///< the collective's device arrays
  DeviceScratch cubTemp;  ///< CUB's temporary storage
  DeviceScratch exchange; ///< sparse all-reduce: received entries and regions
  /// Pinned host memory: the bad-index report, then (sparse all-reduce) the
  /// count matrix and boundaries read after the one host wait, then the
  /// region offsets uploaded from the host.
  void *host = nullptr;
  size_t hostBytes = 0;
  Status reserveHost(size_t bytes);
  bool badChecked = false; ///< inputStatus() reads `host` (else success)
};

/// Queues the global top-k (SparseCollectives.h's globalTopK, then
/// writeGlobalTopK) of the k entries staged in `w` on `stream`: outValues /
/// outIndices (k each, device) get the k entries averaged over the ranks,
/// sorted by index (zeros at index 0 past the entries there are). Every rank
/// calls it with the same k. After the stream has passed it,
/// w.inputStatus() says whether the indices were in [0, n), and
/// queueGlobalTopKFeedback adds the dropped entries back.
Status queueGlobalTopK(DevicePeers &peers, SparseWork &w, int64_t n, float *outValues,
                       int32_t *outIndices, cudaStream_t stream);

/// Queues the global top-k's error feedback on `stream`: every staged entry
/// the merges dropped is added into residual[index], sorted by index, a
/// repeated index's entries in entry order, one float addition each (the
/// CPU's droppedEntries + additions, bit for bit). Only after a successful
/// queueGlobalTopK whose work `stream` follows; nothing when the input was bad.
Status queueGlobalTopKFeedback(SparseWork &w, float *residual, cudaStream_t stream);

/// The balanced sparse all-reduce (SparseCollectives.h's sparseAllReduce,
/// averaged) of the k entries staged in `w`: out (n floats, device) = the
/// sum over the ranks divided by P. Waits on the host once (the count
/// exchange, through peers.synchronize); the rest is queued on `stream`.
/// The bad-index status is known when it returns (w.inputStatus()).
Status queueSparseAllReduce(DevicePeers &peers, SparseWork &w, int64_t n, bool balanced,
                            float *out, cudaStream_t stream);

} // namespace mgs::rt::cuda

#endif // MGSRT_COMM_NCCL_DEVICESPARSECOLLECTIVES_H
