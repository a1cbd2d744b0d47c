//===- CommCAPI.cpp - The communication C ABI (mgsrt.h) -------------------===//
//
// Communicators, and the collective kernels compiled code calls: starts put
// their request in a slot of the context's table, mgsrt_comm_wait completes
// it. Allreduce averages in the backend (on MPI's communication thread, so
// the division overlaps too); allgather sends values and indices as one
// message of 8k bytes per rank (one start-up cost) and unpacks at the wait.
// The sparse collectives (gtopk, sparse allreduce) copy their entries and run
// as a task on the backend's communication thread (SparseCollectives.h); the
// global top-k's results and error feedback are written at the wait.
//
//===----------------------------------------------------------------------===//

#include "Comm/CommCAPI.h"
#include "Comm/CommChecks.h"
#include "Comm/SparseCollectives.h"
#include "Support/Common.h"
#include "Support/KernelList.h"

#include <array>
#include <cstring>
#include <limits>

using namespace mgs::rt;
using mgs::contract::AllGatherDesc;
using mgs::contract::AllReduceDesc;
using mgs::contract::BroadcastDesc;
using mgs::contract::GTopKDesc;
using mgs::contract::SparseAllReduceDesc;
using mgs::contract::WaitDesc;

// The timeline keys a collective by its slot, at one place in every start.
static_assert(int64_t(AllReduceDesc::Slot) == int64_t(AllGatherDesc::Slot));
static_assert(int64_t(AllReduceDesc::Slot) == int64_t(GTopKDesc::Slot));
static_assert(int64_t(AllReduceDesc::Slot) == int64_t(SparseAllReduceDesc::Slot));

namespace {

/// A sparse collective's copies of its entries, where its results go, and
/// (global top-k) what its task leaves for the wait.
struct SparseJob {
  std::vector<float> values;
  std::vector<int32_t> indices;
  GlobalTopKResult gtopk;
  // sparse allreduce while tracing: its phases, for the timeline.
  std::vector<CollectivePhase> phases;
  bool tracePhases = false;
  float *outValues = nullptr;
  int32_t *outIndices = nullptr;
  float *residual = nullptr;
};

struct Slot {
  enum class Kind { AllReduce, AllGather, GTopK, SparseAllReduce };
  // Declared first so it is destroyed last; ~CommSlots waits before anyway.
  CommRequestPtr request; // null: free
  Kind kind = Kind::AllReduce;
  // allgather: the packed messages (kept for reuse) and where to unpack.
  std::vector<char> send, recv;
  float *recvValues = nullptr;
  int32_t *recvIndices = nullptr;
  int64_t k = 0;
  int ranks = 0;
  WireValues values = WireValues::F32; // how the values travel
  // gtopk, sparse allreduce: shared with the task until it completes.
  std::shared_ptr<SparseJob> job;
  // When the last wait's collective completed (CommRequest::completedAt).
  double completedAt = -1.0;
};

struct CommSlots final : CommState {
  std::array<Slot, MGSRT_COMM_MAX_SLOTS> slots;
  ~CommSlots() override {
    for (Slot &s : slots)
      if (s.request)
        s.request->wait();
  }
  int pending() const {
    int count = 0;
    for (const Slot &s : slots)
      count += s.request != nullptr;
    return count;
  }
};

CommSlots &slotsOf(mgsrt_ctx_t *ctx) {
  if (!ctx->commState)
    ctx->commState = std::make_unique<CommSlots>();
  return static_cast<CommSlots &>(*ctx->commState);
}

/// The free slot `slot` of a context with a communicator, or null (error recorded).
Slot *startSlot(mgsrt_ctx_t *ctx, const char *kernel, int64_t slot) {
  if (!ctx->comm) {
    noComm(ctx, kernel);
    return nullptr;
  }
  if (!validSlot(slot)) {
    badSlot(ctx, kernel, slot);
    return nullptr;
  }
  Slot &s = slotsOf(ctx).slots[slot];
  if (s.request) {
    slotBusy(ctx, kernel, slot);
    return nullptr;
  }
  return &s;
}

mgsrt_status_t backendFailure(mgsrt_ctx_t *ctx, const char *kernel, const Status &s) {
  return ctx->fail(s.code, strCat(kernel, ": ", s.message));
}

mgsrt_status_t allreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::allreduce_start);
  const int64_t n = desc[AllReduceDesc::Count], slot = desc[AllReduceDesc::Slot];
  if (!checkAllreduce(ctx, kernel, n, bufs))
    return ctx->status;
  Slot *s = startSlot(ctx, kernel, slot);
  if (!s)
    return ctx->status;
  s->kind = Slot::Kind::AllReduce;
  s->request = ctx->comm->backend->iallReduce(static_cast<float *>(bufs[0]),
                                              static_cast<size_t>(n), ReduceOp::Average);
  return MGSRT_OK;
}

mgsrt_status_t allgatherStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::allgather_start);
  const int64_t k = desc[AllGatherDesc::K], slot = desc[AllGatherDesc::Slot];
  if (k < 0)
    return invalidArg(ctx, kernel, "k = ", k, " is negative");
  Slot *s = startSlot(ctx, kernel, slot);
  if (!s)
    return ctx->status;
  const int P = ctx->comm->backend->size();
  WireValues wire;
  if (!checkAllgather(ctx, kernel, desc, k, P, bufs, wire))
    return ctx->status;
  // One message per rank: the values (in their wire form), then the indices.
  const size_t valuesBytes = static_cast<size_t>(k) * wireBytes(wire),
               bytes = valuesBytes + static_cast<size_t>(k) * 4;
  s->send.resize(bytes);
  s->recv.resize(bytes * P);
  if (k) {
    packValues(wire, static_cast<const float *>(bufs[0]), s->send.data(),
               static_cast<size_t>(k));
    std::memcpy(s->send.data() + valuesBytes, bufs[1], static_cast<size_t>(k) * 4);
  }
  s->values = wire;
  s->kind = Slot::Kind::AllGather;
  s->recvValues = static_cast<float *>(bufs[2]);
  s->recvIndices = static_cast<int32_t *>(bufs[3]);
  s->k = k;
  s->ranks = P;
  s->request = ctx->comm->backend->iallGather(s->send.data(), bytes, s->recv.data());
  return MGSRT_OK;
}

/// The checks and copies both sparse collectives start with: k entries with
/// indices in [0, n), a free slot; null (error recorded) otherwise.
Slot *startSparse(mgsrt_ctx_t *ctx, const char *kernel, int64_t k, int64_t n, int64_t slot,
                  void *const *bufs) {
  if (!checkSparseCounts(ctx, kernel, k, n))
    return nullptr;
  Slot *s = startSlot(ctx, kernel, slot);
  if (!s || !checkSparseEntries(ctx, kernel, k, bufs))
    return nullptr;
  const int32_t *indices = static_cast<const int32_t *>(bufs[1]);
  if (Status bad = checkSparseIndices(indices, k, n); !bad.ok())
    return backendFailure(ctx, kernel, bad), nullptr;
  auto job = std::make_shared<SparseJob>();
  const float *values = static_cast<const float *>(bufs[0]);
  job->values.assign(values, values + k);
  job->indices.assign(indices, indices + k);
  s->job = std::move(job);
  s->k = k;
  s->ranks = ctx->comm->backend->size();
  return s;
}

mgsrt_status_t gtopkStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gtopk_start);
  const int64_t k = desc[GTopKDesc::K], n = desc[GTopKDesc::Count];
  if (!checkGTopKOutputs(ctx, kernel, k, n, bufs))
    return ctx->status;
  Slot *s = startSparse(ctx, kernel, k, n, desc[GTopKDesc::Slot], bufs);
  if (!s)
    return ctx->status;
  SparseJob &job = *s->job;
  job.residual = static_cast<float *>(bufs[2]);
  job.outValues = static_cast<float *>(bufs[3]);
  job.outIndices = static_cast<int32_t *>(bufs[4]);
  s->kind = Slot::Kind::GTopK;
  CommBackend &backend = *ctx->comm->backend;
  s->request = backend.startTask("gtopk", [&backend, job = s->job, k] {
    return globalTopK(backend, k, job->values.data(), job->indices.data(), k, job->gtopk);
  });
  return MGSRT_OK;
}

mgsrt_status_t sparseAllreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::sparse_allreduce_start);
  const int64_t k = desc[SparseAllReduceDesc::K], n = desc[SparseAllReduceDesc::Count];
  if (!BufferCheck(ctx, kernel, bufs).require(2, "out", n).ok)
    return ctx->status;
  Slot *s = startSparse(ctx, kernel, k, n, desc[SparseAllReduceDesc::Slot], bufs);
  if (!s)
    return ctx->status;
  s->kind = Slot::Kind::SparseAllReduce;
  CommBackend &backend = *ctx->comm->backend;
  float *out = static_cast<float *>(bufs[2]);
  const bool balanced = desc[SparseAllReduceDesc::Balanced] != 0;
  s->job->tracePhases = ctx->tracing;
  s->request = backend.startTask("sparse_allreduce", [&backend, job = s->job, k, n, balanced,
                                                      out] {
    return sparseAllReduce(backend, n, job->values.data(), job->indices.data(), k, balanced,
                           /*average=*/true, out, job->tracePhases ? &job->phases : nullptr);
  });
  return MGSRT_OK;
}

/// The global top-k's results (writeGlobalTopK), and this rank's dropped
/// entries back into its residual.
void finishGTopK(const Slot &s) {
  SparseJob &job = *s.job;
  writeGlobalTopK(job.gtopk, s.ranks, s.k, job.outValues, job.outIndices);
  std::vector<int32_t> indices(s.k);
  std::vector<float> values(s.k);
  const int64_t dropped = droppedEntries(job.gtopk, job.values.data(), job.indices.data(), s.k,
                                         indices.data(), values.data());
  for (int64_t j = 0; j < dropped; ++j)
    job.residual[indices[j]] += values[j];
}

mgsrt_status_t commWait(mgsrt_ctx_t *ctx, const int64_t *desc) {
  const char *kernel = kernelName(Kernel::comm_wait);
  const int64_t slot = desc[WaitDesc::Slot];
  if (!validSlot(slot))
    return badSlot(ctx, kernel, slot);
  Slot *s = ctx->commState ? &slotsOf(ctx).slots[slot] : nullptr;
  if (!s || !s->request)
    return slotIdle(ctx, kernel, slot);
  Status status = s->request->wait();
  s->completedAt = s->request->completedAt();
  s->request.reset();
  if (status.ok() && s->kind == Slot::Kind::GTopK)
    finishGTopK(*s);
  if (s->job && ctx->tracing)
    for (const CollectivePhase &p : s->job->phases)
      ctx->traceEvent(p.name, p.bytesReceived, p.start, p.end, MGSRT_TRACE_PHASE);
  s->job.reset();
  if (!status.ok())
    return backendFailure(ctx, kernel, status);
  if (s->kind == Slot::Kind::AllGather && s->k) {
    const size_t k = static_cast<size_t>(s->k), valuesBytes = k * wireBytes(s->values),
                 bytes = valuesBytes + k * 4;
    for (int r = 0; r < s->ranks; ++r) {
      const char *msg = s->recv.data() + bytes * r;
      unpackValues(s->values, msg, s->recvValues + k * r, k);
      std::memcpy(s->recvIndices + k * r, msg + valuesBytes, k * 4);
    }
  }
  return MGSRT_OK;
}

mgsrt_status_t broadcast(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::broadcast);
  const int64_t bytes = desc[BroadcastDesc::Bytes], root = desc[BroadcastDesc::Root];
  if (!checkBroadcast(ctx, kernel, bytes, root, bufs))
    return ctx->status;
  Status s = ctx->comm->backend->broadcast(bufs[0], static_cast<size_t>(bytes),
                                           static_cast<int>(root));
  return s.ok() ? MGSRT_OK : backendFailure(ctx, kernel, s);
}

void writeError(char *error, size_t size, const std::string &message) {
  if (!error || size == 0)
    return;
  const size_t n = std::min(size - 1, message.size());
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

/// The timeline's clock, read before a collective starts (the backend may
/// complete a small one before its start call returns).
double startTime(const mgsrt_ctx_t *ctx) {
  return ctx && ctx->tracing ? secondsOf(std::chrono::steady_clock::now()) : 0.0;
}

/// What a started collective leaves behind: the timeline notes its name and
/// when it started (`started`, from startTime()). (A GPU context's
/// communicator is bound where NCCL is built on it: NCCL/NcclCollectives.cpp.)
mgsrt_status_t noteStart(mgsrt_ctx_t *ctx, const char *name, const int64_t *desc,
                         double started, mgsrt_status_t s) {
  if (s != MGSRT_OK)
    return s;
  if (ctx->tracing)
    ctx->traceStarts[desc[AllReduceDesc::Slot]] = {name, started};
  return s;
}

/// The timeline: a collective from its start to its completion, where the
/// backend knows when that was (MPI: when its communication thread saw it),
/// else to the end of its wait.
mgsrt_status_t traceWait(mgsrt_ctx_t *ctx, const int64_t *desc, mgsrt_status_t s) {
  if (s != MGSRT_OK || !ctx->tracing)
    return s;
  auto it = ctx->traceStarts.find(desc[WaitDesc::Slot]);
  if (it != ctx->traceStarts.end()) {
    double end = secondsOf(std::chrono::steady_clock::now());
    if (!ctx->deviceKernels && ctx->commState) {
      const double done = slotsOf(ctx).slots[desc[WaitDesc::Slot]].completedAt;
      if (done >= it->second.second && done < end)
        end = done;

    }
    ctx->traceEvent(it->second.first, desc[WaitDesc::Slot], it->second.second, end,
                    MGSRT_TRACE_COLLECTIVE);
    ctx->traceStarts.erase(it);
  }
  return s;
}

mgsrt_status_t waitSlot(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

} // namespace

extern "C" {

mgsrt_status_t mgsrt_comm_create(const char *backend, mgsrt_comm_t **out, char *error,
                                 size_t error_size) {
  writeError(error, error_size, "");
  if (!out) {
    writeError(error, error_size, "mgsrt_comm_create: out is null");
    return MGSRT_ERROR_INVALID_ARGUMENT;
  }
  *out = nullptr;
  if (!backend) {
    writeError(error, error_size, "mgsrt_comm_create: backend name is null");
    return MGSRT_ERROR_INVALID_ARGUMENT;
  }
  try {
    std::unique_ptr<CommBackend> b;
    Status s = createCommBackend(backend, CommConfig{}, b);
    if (!s.ok()) {
      writeError(error, error_size, s.message);
      return s.code;
    }
    *out = wrapCommBackend(std::move(b));
    return MGSRT_OK;
  } catch (const std::bad_alloc &) {
    writeError(error, error_size, "mgsrt_comm_create: out of memory");
    return MGSRT_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    writeError(error, error_size, std::string("mgsrt_comm_create: ") + e.what());
    return MGSRT_ERROR_BACKEND;
  }
}

void mgsrt_comm_destroy(mgsrt_comm_t *comm) { delete comm; }

void mgsrt_comm_abort(mgsrt_comm_t *comm, int code) {
  if (!comm)
    return;
  comm->dependents->runAll(); // (a GPU context's NCCL group: ncclCommAbort)
  comm->backend->abortGroup(code);
}

void mgsrt_comm_set_progress(mgsrt_comm_t *comm, int64_t progress) {
  if (comm)
    comm->backend->setProgress(progress);
}

int mgsrt_comm_peer_status(const mgsrt_comm_t *comm, int peer, int64_t *progress,
                           double *seconds_ago) {
  int64_t p = 0;
  double ago = 0;
  if (!comm || !comm->backend->peerStatus(peer, p, ago))
    return 0;
  if (progress)
    *progress = p;
  if (seconds_ago)
    *seconds_ago = ago;
  return 1;
}

int mgsrt_comm_rank(const mgsrt_comm_t *comm) { return comm ? comm->backend->rank() : -1; }

int mgsrt_comm_size(const mgsrt_comm_t *comm) { return comm ? comm->backend->size() : -1; }

mgsrt_status_t mgsrt_ctx_set_comm(mgsrt_ctx_t *ctx, mgsrt_comm_t *comm) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->commState) {
    if (int pending = slotsOf(ctx).pending())
      return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                       strCat("ctx_set_comm: ", pending,
                              " collective(s) pending; wait for them before changing the "
                              "communicator"));
  }
  if (ctx->deviceCommBound && comm != ctx->comm)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     "ctx_set_comm: a GPU context keeps the communicator its first collective "
                     "built NCCL (or its staged collectives) on");
  ctx->comm = comm;
  return MGSRT_OK;
}

mgsrt_status_t mgsrt_ctx_set_staged_comm(mgsrt_ctx_t *ctx, int staged) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (!ctx->deviceKernels)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     "ctx_set_staged_comm: a CPU context's collectives run on its "
                     "communicator's backend already; staging is for GPU contexts");
  if (ctx->deviceCommBound && (staged != 0) != ctx->stagedComm)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     "ctx_set_staged_comm: the context's collectives have started; choose "
                     "before the first one");
  ctx->stagedComm = staged != 0;
  return MGSRT_OK;
}

mgsrt_status_t mgsrt_allreduce_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const double started = startTime(ctx);
  mgsrt_status_t s =
      ctx && ctx->deviceKernels
          ? ctx->deviceKernels->allreduce_start(ctx, desc, bufs)
          : runKernel(ctx, kernelName(Kernel::allreduce_start), desc, bufs,
                      [&] { return allreduceStart(ctx, desc, bufs); });
  return noteStart(ctx, "allreduce", desc, started, s);
}

mgsrt_status_t mgsrt_allgather_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  if (ctx && !ctx->failed())
    desc = ctx->effectiveDesc(desc, AllGatherDesc::K, AllGatherDesc::SourceCount,
                              AllGatherDesc::Size); // the warm-up's k
  const double started = startTime(ctx);
  mgsrt_status_t s =
      ctx && ctx->deviceKernels
          ? ctx->deviceKernels->allgather_start(ctx, desc, bufs)
          : runKernel(ctx, kernelName(Kernel::allgather_start), desc, bufs,
                      [&] { return allgatherStart(ctx, desc, bufs); });
  return noteStart(ctx, "allgather", desc, started, s);
}

mgsrt_status_t mgsrt_gtopk_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  if (ctx && !ctx->failed())
    desc = ctx->effectiveDesc(desc, GTopKDesc::K, GTopKDesc::Count, GTopKDesc::Size);
  const double started = startTime(ctx);
  mgsrt_status_t s = ctx && ctx->deviceKernels
                         ? ctx->deviceKernels->gtopk_start(ctx, desc, bufs)
                         : runKernel(ctx, kernelName(Kernel::gtopk_start), desc, bufs,
                                     [&] { return gtopkStart(ctx, desc, bufs); });
  return noteStart(ctx, "gtopk", desc, started, s);
}

mgsrt_status_t mgsrt_sparse_allreduce_start(mgsrt_ctx_t *ctx, const int64_t *desc,
                                            void *const *bufs) {
  if (ctx && !ctx->failed())
    desc = ctx->effectiveDesc(desc, SparseAllReduceDesc::K, SparseAllReduceDesc::Count,
                              SparseAllReduceDesc::Size);
  const double started = startTime(ctx);
  mgsrt_status_t s = ctx && ctx->deviceKernels
                         ? ctx->deviceKernels->sparse_allreduce_start(ctx, desc, bufs)
                         : runKernel(ctx, kernelName(Kernel::sparse_allreduce_start), desc, bufs,
                                     [&] { return sparseAllreduceStart(ctx, desc, bufs); });
  return noteStart(ctx, "sparse_allreduce", desc, started, s);
}

mgsrt_status_t mgsrt_comm_wait(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return traceWait(ctx, desc, waitSlot(ctx, desc, bufs));
}

} // extern "C"

namespace {

mgsrt_status_t waitSlot(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  if (ctx && ctx->deviceKernels)
    return ctx->deviceKernels->comm_wait(ctx, desc, bufs);
  static void *const kNoBuffers[1] = {nullptr};
  if (ctx && ctx->failed()) {
    // Sticky error: still complete a pending request, so its buffers are
    // released and the slot is free.
    if (desc && validSlot(desc[WaitDesc::Slot]) && ctx->commState) {
      Slot &s = slotsOf(ctx).slots[desc[WaitDesc::Slot]];
      if (s.request) {
        s.request->wait();
        s.request.reset();
        s.job.reset();
      }
    }
    return ctx->status;
  }
  return runKernel(ctx, kernelName(Kernel::comm_wait), desc, bufs ? bufs : kNoBuffers,
                   [&] { return commWait(ctx, desc); });
}

} // namespace

extern "C" {

mgsrt_status_t mgsrt_broadcast(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  if (ctx && ctx->deviceKernels)
    return ctx->deviceKernels->broadcast(ctx, desc, bufs);
  return runKernel(ctx, kernelName(Kernel::broadcast), desc, bufs, [&] { return broadcast(ctx, desc, bufs); });
}

} // extern "C"
