//===- StagedComm.cpp - A GPU context's collectives over MPI --------------===//
//
// StagedComm.h. The CUDA copy engine of StagedCollectives: its own copy
// stream, an event recorded on the compute stream that the copy stream waits
// for before copying to host, one event per tag marking the copies to host
// (the staging thread synchronizes on it) and one marking the copies back
// (the compute stream waits for it); pinned host buffers from cudaHostAlloc,
// sized at the first use of each slot and kept (grown only when a collective
// is larger). The global top-k's dropped entries go to a device scratch of the
// slot and are added into the residual on the compute stream (SparseComm.cu). The state is made on the first collective, over the context's
// communicator, which the context then keeps (deviceCommBound).
//
//===----------------------------------------------------------------------===//

#include "Kernels/CUDA/StagedComm.h"
#include "Comm/CommCAPI.h"
#include "Comm/CommChecks.h"
#include "Comm/StagedCollectives.h"
#include "Kernels/CUDA/Device.h"

#include "mgsrt/contract.h"

using namespace mgs::rt;
using mgs::contract::AllGatherDesc;
using mgs::contract::AllReduceDesc;
using mgs::contract::BroadcastDesc;
using mgs::contract::GTopKDesc;
using mgs::contract::SparseAllReduceDesc;
using mgs::contract::WaitDesc;

namespace {

constexpr int kTags = StagedCollectives::kSlots + 1;

class CudaCopyEngine final : public CopyEngine {
public:
  CudaCopyEngine(int ordinal, cudaStream_t compute) : ordinal(ordinal), compute(compute) {}
  ~CudaCopyEngine() override {
    if (copy)
      cudaStreamSynchronize(copy);
    for (cudaEvent_t e : toHostDone)
      if (e)
        cudaEventDestroy(e);
    for (cudaEvent_t e : toDeviceDone)
      if (e)
        cudaEventDestroy(e);
    if (ready)
      cudaEventDestroy(ready);
    if (compute)
      cudaStreamSynchronize(compute); // (the additions read the scratch)
    for (void *p : scratch)
      if (p)
        cudaFree(p);
    if (copy)
      cudaStreamDestroy(copy);
  }

  Status init() {
    MGSRT_CUDA_TRY(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    MGSRT_CUDA_TRY(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    for (int t = 0; t < kTags; ++t) {
      MGSRT_CUDA_TRY(cudaEventCreateWithFlags(&toHostDone[t], cudaEventDisableTiming));
      MGSRT_CUDA_TRY(cudaEventCreateWithFlags(&toDeviceDone[t], cudaEventDisableTiming));
    }
    return Status::success();
  }

  Status toHost(int tag, const std::vector<StagedCopy> &copies, bool computeWaits) override {
    MGSRT_CUDA_TRY(cudaEventRecord(ready, compute));
    MGSRT_CUDA_TRY(cudaStreamWaitEvent(copy, ready, 0));
    for (const StagedCopy &c : copies)
      MGSRT_CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToHost, copy));
    MGSRT_CUDA_TRY(cudaEventRecord(toHostDone[tag], copy));
    if (computeWaits)
      MGSRT_CUDA_TRY(cudaStreamWaitEvent(compute, toHostDone[tag], 0));
    return Status::success();
  }

  Status waitToHost(int tag) override {
    // The staging thread's current device is its own: this context's.
    MGSRT_CUDA_TRY(cudaSetDevice(ordinal));
    MGSRT_CUDA_TRY(cudaEventSynchronize(toHostDone[tag]));
    return Status::success();
  }

  Status toDevice(int tag, const std::vector<StagedCopy> &copies) override {
    for (const StagedCopy &c : copies)
      MGSRT_CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyHostToDevice, copy));
    MGSRT_CUDA_TRY(cudaEventRecord(toDeviceDone[tag], copy));
    MGSRT_CUDA_TRY(cudaStreamWaitEvent(compute, toDeviceDone[tag], 0));
    return Status::success();
  }

  Status addToDevice(int tag, float *residual, const int32_t *indices, const float *values,
                     size_t count) override {
    const size_t indexBytes = count * sizeof(int32_t), bytes = indexBytes + count * sizeof(float);
    if (scratchBytes[tag] < bytes) {
      // The last addition's kernel may still read the old scratch.
      MGSRT_CUDA_TRY(cudaStreamSynchronize(compute));
      if (scratch[tag])
        MGSRT_CUDA_TRY(cudaFree(scratch[tag]));
      scratch[tag] = nullptr;
      scratchBytes[tag] = 0;
      MGSRT_CUDA_TRY(cudaMalloc(&scratch[tag], bytes));
      scratchBytes[tag] = bytes;
    }
    // The entries to the device once the compute stream is done with the
    // scratch, then the additions on the compute stream.
    char *d = static_cast<char *>(scratch[tag]);
    MGSRT_CUDA_TRY(cudaEventRecord(ready, compute));
    MGSRT_CUDA_TRY(cudaStreamWaitEvent(copy, ready, 0));
    MGSRT_CUDA_TRY(cudaMemcpyAsync(d, indices, indexBytes, cudaMemcpyHostToDevice, copy));
    MGSRT_CUDA_TRY(
        cudaMemcpyAsync(d + indexBytes, values, bytes - indexBytes, cudaMemcpyHostToDevice, copy));
    MGSRT_CUDA_TRY(cudaEventRecord(toDeviceDone[tag], copy));
    MGSRT_CUDA_TRY(cudaStreamWaitEvent(compute, toDeviceDone[tag], 0));
    MGSRT_CUDA_TRY(cuda::addSortedEntries(residual, reinterpret_cast<const int32_t *>(d),
                                          reinterpret_cast<const float *>(d + indexBytes),
                                          static_cast<int64_t>(count), compute));
    return Status::success();
  }

  Status synchronize() override {
    MGSRT_CUDA_TRY(cudaStreamSynchronize(copy));
    return Status::success();
  }

  Status allocHost(size_t bytes, void **out) override {
    MGSRT_CUDA_TRY(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocDefault));
    return Status::success();
  }

  void freeHost(void *p) override { cudaFreeHost(p); }

private:
  int ordinal;
  cudaStream_t compute;
  cudaStream_t copy = nullptr;
  cudaEvent_t ready = nullptr;
  cudaEvent_t toHostDone[kTags] = {};
  cudaEvent_t toDeviceDone[kTags] = {};
  // addToDevice: the dropped entries on the device, per tag, grown on demand.
  void *scratch[kTags] = {};
  size_t scratchBytes[kTags] = {};
};

/// A staged context's collectives: the copy engine, then (destroyed first)
/// the collectives that use it.
struct StagedState final : cuda::CommDeviceState {
  std::unique_ptr<CudaCopyEngine> engine;
  std::unique_ptr<StagedCollectives> staged;
  /// No NCCL communicator to watch: a failed peer surfaces in the host
  /// backend's collective (its wait), so waiting for the stream is plain.
  Status waitFor(cudaStream_t stream) override {
    return cuda::cudaStatus("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  }
};

/// The context's staged collectives, made on first use.
mgsrt_status_t stagedOf(mgsrt_ctx_t *ctx, const char *kernel, StagedCollectives *&out) {
  cuda::CudaState &st = cuda::state(ctx);
  if (st.comm) {
    out = static_cast<StagedState *>(st.comm.get())->staged.get();
    return MGSRT_OK;
  }
  if (!ctx->comm)
    return noComm(ctx, kernel);
  auto n = std::make_unique<StagedState>();
  n->engine = std::make_unique<CudaCopyEngine>(st.ordinal, st.stream);
  if (Status s = n->engine->init(); !s.ok())
    return ctx->fail(s.code, strCat(kernel, ": ", s.message));
  n->staged = std::make_unique<StagedCollectives>(*ctx->comm->backend, *n->engine);
  out = n->staged.get();
  st.comm = std::move(n);
  ctx->deviceCommBound = true; // the staged collectives keep the communicator
  return MGSRT_OK;
}

StagedCollectives *existingStaged(mgsrt_ctx_t *ctx) {
  cuda::CudaState &st = cuda::state(ctx);
  return st.comm ? static_cast<StagedState *>(st.comm.get())->staged.get() : nullptr;
}

/// The staged collectives with `slot` free, or an error recorded.
mgsrt_status_t startSlot(mgsrt_ctx_t *ctx, const char *kernel, int64_t slot,
                         StagedCollectives *&out) {
  if (!ctx->comm)
    return noComm(ctx, kernel);
  if (!validSlot(slot))
    return badSlot(ctx, kernel, slot);
  if (mgsrt_status_t r = stagedOf(ctx, kernel, out); r != MGSRT_OK)
    return r;
  if (out->pending(static_cast<int>(slot)))
    return slotBusy(ctx, kernel, slot);
  return MGSRT_OK;
}

/// A sparse collective's checks (as the CPU's, CommCAPI.cpp) and its free
/// slot; the indices are on the device: checked on the host after their
/// copy, an error at the wait.
mgsrt_status_t startSparse(mgsrt_ctx_t *ctx, const char *kernel, int64_t k, int64_t n,
                           int64_t slot, void *const *bufs, StagedCollectives *&out) {
  if (!checkSparseCounts(ctx, kernel, k, n))
    return ctx->status;
  if (mgsrt_status_t r = startSlot(ctx, kernel, slot, out); r != MGSRT_OK)
    return r;
  return checkSparseEntries(ctx, kernel, k, bufs) ? MGSRT_OK : ctx->status;
}

mgsrt_status_t result(mgsrt_ctx_t *ctx, const char *kernel, const Status &s) {
  return s.ok() ? MGSRT_OK : ctx->fail(s.code, strCat(kernel, ": ", s.message));
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t stagedAllreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::allreduce_start);
  const int64_t n = desc[AllReduceDesc::Count], slot = desc[AllReduceDesc::Slot];
  if (!checkAllreduce(ctx, kernel, n, bufs))
    return ctx->status;
  StagedCollectives *staged = nullptr;
  if (mgsrt_status_t r = startSlot(ctx, kernel, slot, staged); r != MGSRT_OK)
    return r;
  return result(ctx, kernel,
                staged->allReduceStart(static_cast<int>(slot), static_cast<float *>(bufs[0]),
                                       static_cast<size_t>(n)));
}

mgsrt_status_t stagedAllgatherStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::allgather_start);
  const int64_t k = desc[AllGatherDesc::K], slot = desc[AllGatherDesc::Slot];
  if (k < 0)
    return invalidArg(ctx, kernel, "k = ", k, " is negative");
  StagedCollectives *staged = nullptr;
  if (mgsrt_status_t r = startSlot(ctx, kernel, slot, staged); r != MGSRT_OK)
    return r;
  WireValues wire;
  if (!checkAllgather(ctx, kernel, desc, k, staged->size(), bufs, wire))
    return ctx->status;
  return result(ctx, kernel,
                staged->allGatherStart(static_cast<int>(slot), static_cast<const float *>(bufs[0]),
                                       static_cast<const int32_t *>(bufs[1]),
                                       static_cast<size_t>(k), wire,
                                       static_cast<float *>(bufs[2]),
                                       static_cast<int32_t *>(bufs[3])));
}

mgsrt_status_t stagedGtopkStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gtopk_start);
  const int64_t k = desc[GTopKDesc::K], n = desc[GTopKDesc::Count];
  if (!checkGTopKOutputs(ctx, kernel, k, n, bufs))
    return ctx->status;
  StagedCollectives *staged = nullptr;
  if (mgsrt_status_t r = startSparse(ctx, kernel, k, n, desc[GTopKDesc::Slot], bufs, staged);
      r != MGSRT_OK)
    return r;
  return result(ctx, kernel,
                staged->gtopkStart(static_cast<int>(desc[GTopKDesc::Slot]),
                                   static_cast<const float *>(bufs[0]),
                                   static_cast<const int32_t *>(bufs[1]), static_cast<size_t>(k),
                                   static_cast<size_t>(n), static_cast<float *>(bufs[2]),
                                   static_cast<float *>(bufs[3]),
                                   static_cast<int32_t *>(bufs[4])));
}

mgsrt_status_t stagedSparseAllreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc,
                                          void *const *bufs) {
  const char *kernel = kernelName(Kernel::sparse_allreduce_start);
  const int64_t k = desc[SparseAllReduceDesc::K], n = desc[SparseAllReduceDesc::Count],
                slot = desc[SparseAllReduceDesc::Slot];
  if (!BufferCheck(ctx, kernel, bufs).require(2, "out", n).ok)
    return ctx->status;
  StagedCollectives *staged = nullptr;
  if (mgsrt_status_t r = startSparse(ctx, kernel, k, n, slot, bufs, staged); r != MGSRT_OK)
    return r;
  return result(ctx, kernel,
                staged->sparseAllReduceStart(
                    static_cast<int>(slot), static_cast<const float *>(bufs[0]),
                    static_cast<const int32_t *>(bufs[1]), static_cast<size_t>(k),
                    static_cast<size_t>(n), desc[SparseAllReduceDesc::Balanced] != 0,
                    static_cast<float *>(bufs[2])));
}

mgsrt_status_t stagedWait(mgsrt_ctx_t *ctx, const int64_t *desc) {
  const char *kernel = kernelName(Kernel::comm_wait);
  const int64_t slot = desc[WaitDesc::Slot];
  if (!validSlot(slot))
    return badSlot(ctx, kernel, slot);
  StagedCollectives *staged = existingStaged(ctx);
  if (!staged || !staged->pending(static_cast<int>(slot)))
    return slotIdle(ctx, kernel, slot);
  return result(ctx, kernel, staged->wait(static_cast<int>(slot)));
}

mgsrt_status_t stagedBroadcast(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::broadcast);
  const int64_t bytes = desc[BroadcastDesc::Bytes], root = desc[BroadcastDesc::Root];
  if (!checkBroadcast(ctx, kernel, bytes, root, bufs))
    return ctx->status;
  StagedCollectives *staged = nullptr;
  if (mgsrt_status_t r = stagedOf(ctx, kernel, staged); r != MGSRT_OK)
    return r;
  return result(ctx, kernel,
                staged->broadcast(bufs[0], static_cast<size_t>(bytes), static_cast<int>(root)));
}

void stagedRelease(mgsrt_ctx_t *ctx, int64_t slot) {
  if (StagedCollectives *staged = existingStaged(ctx);
      staged && validSlot(slot) && staged->pending(static_cast<int>(slot)))
    staged->wait(static_cast<int>(slot));
}

} // namespace mgs::rt::cuda
