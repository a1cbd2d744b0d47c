//===- NcclCollectives.cpp - The collectives of a GPU context on NCCL -----===//
//
// The device table's allreduce_start, allgather_start, gtopk_start,
// sparse_allreduce_start, comm_wait and broadcast (KernelList.h's
// MGSRT_COMM_KERNELS; a context with mgsrt_ctx_set_staged_comm hands them to
// StagedComm.cpp instead). One NCCL backend
// (NcclBackend.h) per context, made on the first collective over the
// context's host communicator (mgsrt_ctx_set_comm: MPI under mpirun). The
// collectives run on their own stream: a start records an event on the
// compute stream, the communication stream waits for it and runs the NCCL
// call, and records the slot's completion event; mgsrt_comm_wait makes the
// compute stream wait for that event (the host does not block), so the
// collectives overlap the kernels queued between start and wait.
//
// The sparse collectives (global top-k, balanced sparse all-reduce) are
// DeviceSparseCollectives.h's, their messages ncclSend/ncclRecv groups on the
// communication stream (NcclPeers), their entries copied at the start into
// the slot's own buffers. Where the host waits: the sparse all-reduce's
// start, once, for the exchange's sizes (and so for the compute stream's
// work before it); the global top-k's wait, for its bad-index check, before
// it queues the error feedback on the compute stream.
//
// The NCCL group is registered with the host communicator it was made over,
// so that mgsrt_comm_abort on it (the driver's watchdog, an error on this
// rank) aborts the NCCL communicator first (ncclCommAbort: a collective stuck
// on a stopped peer ends) and the context's host waits (CudaState::comm's
// waitFor) give up on a failed peer instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "Comm/CommCAPI.h"
#include "Comm/CommChecks.h"
#include "Comm/NCCL/DeviceSparseCollectives.h"
#include "Comm/NCCL/NcclBackend.h"
#include "Kernels/CUDA/Device.h"
#include "Kernels/CUDA/StagedComm.h"

#include "mgsrt/contract.h"

#include <array>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string_view>
#include <utility>

using namespace mgs::rt;
using mgs::contract::AllGatherDesc;
using mgs::contract::AllReduceDesc;
using mgs::contract::BroadcastDesc;
using mgs::contract::GTopKDesc;
using mgs::contract::SparseAllReduceDesc;
using mgs::contract::WaitDesc;

namespace {

struct Slot {
  bool pending = false;
  cudaEvent_t done = nullptr;
  // allgather: the values and indices sent, copied at the start (the caller
  // may reuse its buffers at once, as mgsrt.h promises).
  void *staging = nullptr;
  size_t stagingBytes = 0;
  // allgather with 16-bit values: they arrive here, widened into `recvValues`
  // after the wait.
  void *recvHalf = nullptr;
  size_t recvHalfBytes = 0;
  WireValues recvWire = WireValues::F32;
  float *recvValues = nullptr;
  int64_t recvCount = 0;
  // The sparse collectives: which one is pending ("gtopk",
  // "sparse_allreduce"; null: another), their buffers, and the global top-k's
  // residual (its error feedback is queued at the wait).
  const char *sparse = nullptr;
  std::unique_ptr<cuda::SparseWork> work;
  float *residual = nullptr;
};

/// Device scratch of at least `bytes`, kept for reuse (freed when it grows,
/// after both streams have let go of it: the collectives' stream reads the
/// staging and writes the half values, the compute stream widens them).
mgsrt_status_t ensure(mgsrt_ctx_t *ctx, const char *kernel, cudaStream_t collectives, void *&buf,
                      size_t &have, size_t bytes) {
  if (have >= bytes)
    return MGSRT_OK;
  if (mgsrt_status_t s = cuda::refuseInCapture(ctx, kernel, "its staging memory grows"))
    return s;
  if (buf) {
    cuda::noteReallocation(ctx); // a graph that used the old buffer is stale
    MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamSynchronize(collectives));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamSynchronize(cuda::state(ctx).stream));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaFree(buf));
    buf = nullptr;
    have = 0;
  }
  MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&buf, bytes));
  have = bytes;
  return MGSRT_OK;
}

/// A GPU context's collectives: the NCCL backend and the request slots.
struct NcclState final : cuda::CommDeviceState {
  std::unique_ptr<NcclBackend> backend;
  cudaStream_t compute = nullptr; ///< the context's (the sparse feedback runs there)
  std::array<Slot, MGSRT_COMM_MAX_SLOTS> slots;
  /// The host communicator's abort hooks, which hold this group's abort.
  std::shared_ptr<AbortHooks> hooks;

  Status waitFor(cudaStream_t stream) override { return backend->waitFor(stream); }

  ~NcclState() override {
    if (hooks)
      hooks->remove(this); // (waits for an abort under way)
    if (backend)
      cudaStreamSynchronize(backend->stream);
    if (compute)
      cudaStreamSynchronize(compute); // (a global top-k's feedback reads its slot's buffers)
    for (Slot &s : slots) {
      if (s.done)
        cudaEventDestroy(s.done);
      if (s.staging)
        cudaFree(s.staging);
      if (s.recvHalf)
        cudaFree(s.recvHalf);
    }
    // ~NcclBackend: the communicator, its event and stream.
  }
};

mgsrt_status_t ncclFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                           ncclResult_t r) {
  return ctx->fail(MGSRT_ERROR_BACKEND,
                   strCat(kernel, ": ", call, " failed: ", ncclGetErrorString(r)));
}

#define MGSRT_NCCL_CHECK(ctx, kernel, call)                                                        \
  do {                                                                                             \
    ncclResult_t mgsrt_r_ = (call);                                                                \
    if (mgsrt_r_ != ncclSuccess)                                                                   \
      return ncclFailure(ctx, kernel, #call, mgsrt_r_);                                            \
  } while (0)

/// The sparse collectives' messages on NCCL: one ncclSend/ncclRecv group a
/// call, bytes as ncclUint8; host waits through the backend (a failed peer
/// aborts the communicator instead of hanging).
class NcclPeers final : public cuda::DevicePeers {
public:
  explicit NcclPeers(NcclBackend &b) : b(b) {}
  int rank() const override { return b.rank(); }
  int size() const override { return b.size(); }
  Status exchange(const std::vector<cuda::PeerOp> &ops, cudaStream_t stream) override {
    if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess)
      return failed("ncclGroupStart", r);
    const char *call = nullptr;
    ncclResult_t first = ncclSuccess;
    for (const cuda::PeerOp &op : ops) {
      const bool send = op.kind == cuda::PeerOp::Kind::Send;
      ncclResult_t r = send ? ncclSend(op.data, op.bytes, ncclUint8, op.peer, b.comm, stream)
                            : ncclRecv(op.data, op.bytes, ncclUint8, op.peer, b.comm, stream);
      if (r != ncclSuccess && first == ncclSuccess) {
        first = r;
        call = send ? "ncclSend" : "ncclRecv";
      }
    }
    ncclResult_t end = ncclGroupEnd(); // (always: it closes the group)
    if (first != ncclSuccess)
      return failed(call, first);
    return end == ncclSuccess ? Status::success() : failed("ncclGroupEnd", end);
  }
  Status synchronize(cudaStream_t stream) override { return b.waitFor(stream); }

private:
  static Status failed(const char *call, ncclResult_t r) {
    return Status::error(MGSRT_ERROR_BACKEND,
                         strCat(call, " failed: ", ncclGetErrorString(r)));
  }
  NcclBackend &b;
};

/// NCCL refuses two ranks on one GPU, with a message that does not say what
/// to do: more ranks on this node (the launcher's local size) than visible
/// GPUs is refused here, naming both counts and the way out.
mgsrt_status_t checkGpuPerRank(mgsrt_ctx_t *ctx, const char *kernel) {
  int local = 0, devices = 0;
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char *v = std::getenv(var); v && *v) {
      local = std::atoi(v);
      break;
    }
  if (local <= 1 || cudaGetDeviceCount(&devices) != cudaSuccess || local <= devices)
    return MGSRT_OK;
  return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                   strCat(kernel, ": ", local, " ranks on this node share ", devices,
                          " visible GPU(s), and NCCL needs a GPU per rank; run the collectives "
                          "over MPI through host memory (the executable's --comm mpi; "
                          "mgsrt_ctx_set_staged_comm) or start one rank per GPU"));
}

/// The context's NCCL state, made on first use (every rank's first
/// collective: ncclCommInitRank is itself collective).
mgsrt_status_t ncclOf(mgsrt_ctx_t *ctx, const char *kernel, NcclState *&out) {
  cuda::CudaState &st = cuda::state(ctx);
  if (st.comm) {
    out = static_cast<NcclState *>(st.comm.get());
    return MGSRT_OK;
  }
  if (!ctx->comm)
    return noComm(ctx, kernel);
  if (mgsrt_status_t r = checkGpuPerRank(ctx, kernel); r != MGSRT_OK)
    return r;
  auto n = std::make_unique<NcclState>();
  if (Status s = NcclBackend::create(*ctx->comm->backend, st.ordinal, n->backend); !s.ok())
    return ctx->fail(s.code, strCat(kernel, ": ", s.message));
  n->compute = st.stream;
  n->hooks = ctx->comm->dependents;
  n->hooks->add(n.get(), [b = n->backend.get()] { b->abort(); });
  out = n.get();
  st.comm = std::move(n);
  // Every later collective uses this NCCL group (mgsrt_ctx_set_comm refuses
  // another communicator): a broadcast builds it too, not only a start.
  ctx->deviceCommBound = true;
  return MGSRT_OK;
}

/// A collective after the communicator was aborted (mgsrt_comm_abort, a
/// failed peer): refused, as NCCL may not be called on it any more.
mgsrt_status_t aborted(mgsrt_ctx_t *ctx, const char *kernel) {
  return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": ", kNcclAborted));
}

/// The free slot `slot` and the NCCL backend, or an error recorded.
mgsrt_status_t startSlot(mgsrt_ctx_t *ctx, const char *kernel, int64_t slot, NcclBackend *&n,
                         Slot *&s) {
  if (!ctx->comm)
    return noComm(ctx, kernel);
  if (!validSlot(slot))
    return badSlot(ctx, kernel, slot);
  NcclState *st = nullptr;
  if (mgsrt_status_t r = ncclOf(ctx, kernel, st); r != MGSRT_OK)
    return r;
  n = st->backend.get();
  if (n->isAborted())
    return aborted(ctx, kernel);
  s = &st->slots[slot];
  if (s->pending)
    return slotBusy(ctx, kernel, slot);
  if (!s->done)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
  return MGSRT_OK;
}

/// Orders the communication stream after everything queued on the compute stream.
mgsrt_status_t afterCompute(mgsrt_ctx_t *ctx, const char *kernel, NcclBackend &n) {
  MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(n.ready, cuda::state(ctx).stream));
  MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamWaitEvent(n.stream, n.ready, 0));
  return MGSRT_OK;
}

mgsrt_status_t allreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::allreduce_start);
  const int64_t n = desc[AllReduceDesc::Count], slot = desc[AllReduceDesc::Slot];
  if (!checkAllreduce(ctx, kernel, n, bufs))
    return ctx->status;
  NcclBackend *nc = nullptr;
  Slot *s = nullptr;
  if (mgsrt_status_t r = startSlot(ctx, kernel, slot, nc, s); r != MGSRT_OK)
    return r;
  if (mgsrt_status_t r = afterCompute(ctx, kernel, *nc); r != MGSRT_OK)
    return r;
  if (n) {
    // The sum, then a division: not ncclAvg (see NcclKernels.cu).
    MGSRT_NCCL_CHECK(ctx, kernel,
                     ncclAllReduce(bufs[0], bufs[0], static_cast<size_t>(n), ncclFloat, ncclSum,
                                   nc->comm, nc->stream));
    if (nc->ranks > 1)
      MGSRT_CUDA_CHECK(ctx, kernel,
                       cuda::divideBy(static_cast<float *>(bufs[0]), n,
                                      static_cast<float>(nc->ranks), nc->stream));
  }
  MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(s->done, nc->stream));
  s->pending = true;
  return MGSRT_OK;
}

mgsrt_status_t allgatherStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::allgather_start);
  const int64_t k = desc[AllGatherDesc::K], slot = desc[AllGatherDesc::Slot];
  if (k < 0)
    return invalidArg(ctx, kernel, "k = ", k, " is negative");
  NcclBackend *nc = nullptr;
  Slot *s = nullptr;
  if (mgsrt_status_t r = startSlot(ctx, kernel, slot, nc, s); r != MGSRT_OK)
    return r;
  const int P = nc->ranks;
  WireValues wire;
  if (!checkAllgather(ctx, kernel, desc, k, P, bufs, wire))
    return ctx->status;
  // The sent values (float, IEEE half or bfloat16) and indices, copied on the
  // compute stream: the caller may reuse its buffers at once.
  const bool halfValues = wire != WireValues::F32;
  const size_t valuesBytes = static_cast<size_t>(k) * wireBytes(wire),
               indexBytes = static_cast<size_t>(k) * 4;
  cudaStream_t compute = cuda::state(ctx).stream;
  if (mgsrt_status_t r = ensure(ctx, kernel, nc->stream, s->staging, s->stagingBytes,
                                valuesBytes + indexBytes);
      r != MGSRT_OK)
    return r;
  if (halfValues)
    if (mgsrt_status_t r = ensure(ctx, kernel, nc->stream, s->recvHalf, s->recvHalfBytes,
                                  valuesBytes * P);
        r != MGSRT_OK)
      return r;
  char *stage = static_cast<char *>(s->staging);
  if (k) {
    if (halfValues)
      MGSRT_CUDA_CHECK(ctx, kernel,
                       cuda::narrowFloats(static_cast<const float *>(bufs[0]), stage, k,
                                          wire == WireValues::BF16, compute));
    else
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(stage, bufs[0], valuesBytes,
                                                    cudaMemcpyDeviceToDevice, compute));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(stage + valuesBytes, bufs[1], indexBytes,
                                                  cudaMemcpyDeviceToDevice, compute));
  }
  s->recvValues = halfValues ? static_cast<float *>(bufs[2]) : nullptr;
  s->recvCount = halfValues ? k * P : 0;
  s->recvWire = wire;
  if (mgsrt_status_t r = afterCompute(ctx, kernel, *nc); r != MGSRT_OK)
    return r;
  if (k) {
    // Values and indices as two gathers in one NCCL group (one launch).
    MGSRT_NCCL_CHECK(ctx, kernel, ncclGroupStart());
    ncclResult_t a = ncclAllGather(stage, halfValues ? s->recvHalf : bufs[2],
                                   static_cast<size_t>(k),
                                   wire == WireValues::F16    ? ncclHalf
                                   : wire == WireValues::BF16 ? ncclBfloat16
                                                              : ncclFloat,
                                   nc->comm, nc->stream);
    ncclResult_t b = ncclAllGather(stage + valuesBytes, bufs[3], static_cast<size_t>(k),
                                   ncclInt32, nc->comm, nc->stream);
    ncclResult_t e = ncclGroupEnd();
    if (a != ncclSuccess)
      return ncclFailure(ctx, kernel, "ncclAllGather(values)", a);
    if (b != ncclSuccess)
      return ncclFailure(ctx, kernel, "ncclAllGather(indices)", b);
    if (e != ncclSuccess)
      return ncclFailure(ctx, kernel, "ncclGroupEnd", e);
  }
  MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(s->done, nc->stream));
  s->pending = true;
  return MGSRT_OK;
}

/// A sparse collective's start: the checks (as the CPU's, CommCAPI.cpp), the
/// free slot, its buffers and the entries copied into them on the compute
/// stream (the caller may reuse its own at once); the communication stream
/// then follows the compute stream.
mgsrt_status_t startSparse(mgsrt_ctx_t *ctx, const char *kernel, const char *what, int64_t k,
                           int64_t n, int64_t slot, void *const *bufs, NcclBackend *&nc,
                           Slot *&s) {
  if (!checkSparseCounts(ctx, kernel, k, n))
    return ctx->status;
  if (mgsrt_status_t r = startSlot(ctx, kernel, slot, nc, s); r != MGSRT_OK)
    return r;
  if (!checkSparseEntries(ctx, kernel, k, bufs))
    return ctx->status;
  cudaStream_t compute = cuda::state(ctx).stream;
  if (!s->work) {
    s->work = std::make_unique<cuda::SparseWork>();
    s->work->idle = [compute, nc]() -> Status {
      if (cudaError_t e = cudaStreamSynchronize(compute); e != cudaSuccess)
        return cuda::cudaStatus("cudaStreamSynchronize", e);
      return nc->waitFor(nc->stream);
    };
  }
  if (Status st = s->work->stageEntries(static_cast<const float *>(bufs[0]),
                                        static_cast<const int32_t *>(bufs[1]), k, compute);
      !st.ok())
    return ctx->fail(st.code, strCat(kernel, ": ", st.message));
  s->sparse = what;
  return afterCompute(ctx, kernel, *nc);
}

/// Ends a sparse collective's start: its queueing status, the slot's event.
mgsrt_status_t endSparse(mgsrt_ctx_t *ctx, const char *kernel, NcclBackend &nc, Slot &s,
                         const Status &queued) {
  if (!queued.ok()) {
    s.sparse = nullptr;
    return ctx->fail(queued.code, strCat(kernel, ": ", queued.message));
  }
  MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(s.done, nc.stream));
  s.pending = true;
  return MGSRT_OK;
}

mgsrt_status_t gtopkStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gtopk_start);
  const int64_t k = desc[GTopKDesc::K], n = desc[GTopKDesc::Count];
  if (!checkGTopKOutputs(ctx, kernel, k, n, bufs))
    return ctx->status;
  NcclBackend *nc = nullptr;
  Slot *s = nullptr;
  if (mgsrt_status_t r =
          startSparse(ctx, kernel, "gtopk", k, n, desc[GTopKDesc::Slot], bufs, nc, s);
      r != MGSRT_OK)
    return r;
  s->residual = static_cast<float *>(bufs[2]);
  NcclPeers peers(*nc);
  return endSparse(ctx, kernel, *nc, *s,
                   cuda::queueGlobalTopK(peers, *s->work, n, static_cast<float *>(bufs[3]),
                                         static_cast<int32_t *>(bufs[4]), nc->stream));
}

mgsrt_status_t sparseAllreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::sparse_allreduce_start);
  const int64_t k = desc[SparseAllReduceDesc::K], n = desc[SparseAllReduceDesc::Count];
  if (!BufferCheck(ctx, kernel, bufs).require(2, "out", n).ok)
    return ctx->status;
  NcclBackend *nc = nullptr;
  Slot *s = nullptr;
  if (mgsrt_status_t r = startSparse(ctx, kernel, "sparse_allreduce", k, n,
                                     desc[SparseAllReduceDesc::Slot], bufs, nc, s);
      r != MGSRT_OK)
    return r;
  NcclPeers peers(*nc);
  return endSparse(ctx, kernel, *nc, *s,
                   cuda::queueSparseAllReduce(peers, *s->work, n,
                                              desc[SparseAllReduceDesc::Balanced] != 0,
                                              static_cast<float *>(bufs[2]), nc->stream));
}

/// Makes the compute stream wait for the slot's collective; checks NCCL's
/// asynchronous errors (a failed peer).
mgsrt_status_t finishSlot(mgsrt_ctx_t *ctx, const char *kernel, NcclBackend &n, Slot &s) {
  s.pending = false;
  cudaStream_t compute = cuda::state(ctx).stream;
  MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamWaitEvent(compute, s.done, 0));
  if (s.recvValues) // 16-bit values: widened on the compute stream
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cuda::widenFloats(s.recvHalf, s.recvValues, s.recvCount,
                                       s.recvWire == WireValues::BF16, compute));
  s.recvValues = nullptr;
  if (Status e = n.asyncError(); !e.ok())
    return ctx->fail(e.code, strCat(kernel, ": ", e.message));
  const char *sparse = std::exchange(s.sparse, nullptr);
  if (!sparse)
    return MGSRT_OK;
  // The global top-k's bad-index check is read once it completed (the sparse
  // all-reduce's was read by its start's host wait), then its feedback.
  const bool gtopk = sparse == std::string_view("gtopk");
  if (gtopk)
    if (Status w = n.waitFor(nullptr, s.done); !w.ok())
      return ctx->fail(w.code, strCat(kernel, ": ", sparse, ": ", w.message));
  if (Status in = s.work->inputStatus(); !in.ok())
    return ctx->fail(in.code, strCat(kernel, ": ", sparse, ": ", in.message));
  if (gtopk)
    if (Status f = cuda::queueGlobalTopKFeedback(*s.work, s.residual, compute); !f.ok())
      return ctx->fail(f.code, strCat(kernel, ": ", sparse, ": ", f.message));
  return MGSRT_OK;
}

NcclState *existingNccl(mgsrt_ctx_t *ctx) {
  cuda::CudaState &st = cuda::state(ctx);
  return st.comm ? static_cast<NcclState *>(st.comm.get()) : nullptr;
}

mgsrt_status_t commWait(mgsrt_ctx_t *ctx, const int64_t *desc) {
  const char *kernel = kernelName(Kernel::comm_wait);
  const int64_t slot = desc[WaitDesc::Slot];
  if (!validSlot(slot))
    return badSlot(ctx, kernel, slot);
  NcclState *n = existingNccl(ctx);
  if (!n || !n->slots[slot].pending)
    return slotIdle(ctx, kernel, slot);
  return finishSlot(ctx, kernel, *n->backend, n->slots[slot]);
}

mgsrt_status_t broadcastBytes(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::broadcast);
  const int64_t bytes = desc[BroadcastDesc::Bytes], root = desc[BroadcastDesc::Root];
  if (!checkBroadcast(ctx, kernel, bytes, root, bufs))
    return ctx->status;
  NcclState *st = nullptr;
  if (mgsrt_status_t r = ncclOf(ctx, kernel, st); r != MGSRT_OK)
    return r;
  NcclBackend *n = st->backend.get();
  if (n->isAborted())
    return aborted(ctx, kernel);
  if (bytes == 0)
    return MGSRT_OK;
  // Blocking, as on the CPU: on the compute stream, then waited for.
  cudaStream_t compute = cuda::state(ctx).stream;
  MGSRT_NCCL_CHECK(ctx, kernel,
                   ncclBroadcast(bufs[0], bufs[0], static_cast<size_t>(bytes), ncclChar,
                                 static_cast<int>(root), n->comm, compute));
  if (Status w = n->waitFor(compute); !w.ok())
    return ctx->fail(w.code, strCat(kernel, ": ", w.message));
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t allreduce_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::allreduce_start), desc, bufs, [&] {
    return ctx->stagedComm ? stagedAllreduceStart(ctx, desc, bufs)
                           : allreduceStart(ctx, desc, bufs);
  });
}

mgsrt_status_t allgather_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::allgather_start), desc, bufs, [&] {
    return ctx->stagedComm ? stagedAllgatherStart(ctx, desc, bufs)
                           : allgatherStart(ctx, desc, bufs);
  });
}

mgsrt_status_t gtopk_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gtopk_start), desc, bufs, [&] {
    // Its wait reads the exchange's report back on the host.
    if (refuseInCapture(ctx, kernelName(Kernel::gtopk_start), "reads its exchange back"))
      return ctx->status;
    return ctx->stagedComm ? stagedGtopkStart(ctx, desc, bufs) : gtopkStart(ctx, desc, bufs);
  });
}

mgsrt_status_t sparse_allreduce_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::sparse_allreduce_start), desc, bufs, [&] {
    // Its messages' sizes depend on the data: read back on the host.
    if (refuseInCapture(ctx, kernelName(Kernel::sparse_allreduce_start),
                        "sizes its messages on the host"))
      return ctx->status;
    return ctx->stagedComm ? stagedSparseAllreduceStart(ctx, desc, bufs)
                           : sparseAllreduceStart(ctx, desc, bufs);
  });
}

mgsrt_status_t comm_wait(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  static void *const kNoBuffers[1] = {nullptr};
  if (ctx && ctx->failed() && ctx->stagedComm) {
    if (desc)
      stagedRelease(ctx, desc[WaitDesc::Slot]);
    return ctx->status;
  }
  if (ctx && ctx->failed()) {
    // Sticky error: still release a pending slot (its buffers become free).
    if (desc && validSlot(desc[WaitDesc::Slot]))
      if (NcclState *n = existingNccl(ctx); n && n->slots[desc[WaitDesc::Slot]].pending) {
        n->backend->waitFor(n->backend->stream); // (a failed peer: aborted, not hung)
        n->slots[desc[WaitDesc::Slot]].pending = false;
        n->slots[desc[WaitDesc::Slot]].sparse = nullptr;
      }
    return ctx->status;
  }
  return runCudaKernel(ctx, kernelName(Kernel::comm_wait), desc, bufs ? bufs : kNoBuffers, [&] {
    return ctx->stagedComm ? stagedWait(ctx, desc) : commWait(ctx, desc);
  });
}

mgsrt_status_t broadcast(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::broadcast), desc, bufs, [&] {
    return ctx->stagedComm ? stagedBroadcast(ctx, desc, bufs) : broadcastBytes(ctx, desc, bufs);
  });
}

} // namespace mgs::rt::cuda
