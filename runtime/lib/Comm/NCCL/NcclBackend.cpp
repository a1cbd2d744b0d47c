//===- NcclBackend.cpp - Collectives over NCCL ----------------------------===//
//
// The communicator's creation (shared by the GPU contexts' collective kernels
// and the "nccl" backend by name) and the CommBackend interface on it.
//
//===----------------------------------------------------------------------===//

#include "Comm/NCCL/NcclBackend.h"

#include "Kernels/CUDA/Device.h"
#include "Support/Common.h"

#include <chrono>
#include <thread>

namespace mgs::rt {

namespace {

Status ncclError(const char *call, ncclResult_t r) {
  return Status::error(MGSRT_ERROR_BACKEND, strCat(call, " failed: ", ncclGetErrorString(r)));
}

#define MGSRT_NCCL_TRY(call)                                                                       \
  do {                                                                                             \
    if (ncclResult_t mgsrt_r_ = (call); mgsrt_r_ != ncclSuccess)                                   \
      return ncclError(#call, mgsrt_r_);                                                           \
  } while (0)

/// Whether the GPU can use `p` as it is (device or managed memory); other
/// (host) memory is staged.
bool onDevice(const void *p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/// A collective queued on the backend's stream; the wait blocks the host on
/// its completion event, then copies a staged result back.
class NcclRequest final : public CommRequest {
public:
  NcclRequest(NcclBackend &backend, const char *what) : backend(backend), what(what) {}
  ~NcclRequest() override { wait(); }

  Status wait() override {
    if (finished)
      return status;
    finished = true;
    status = complete();
    if (!status.ok())
      status.message = strCat("nccl ", what, ": ", status.message);
    release();
    return status;
  }
  bool test() override { return finished || !done || cudaEventQuery(done) != cudaErrorNotReady; }
  /// Drops a request that failed to start (nothing to wait for or copy back).
  void discard() {
    finished = true;
    release();
  }

  // Device scratch standing in for host buffers (owned), and where the
  // result goes back to.
  void *stagedIn = nullptr, *stagedOut = nullptr;
  void *hostOut = nullptr;
  size_t outBytes = 0;
  cudaEvent_t done = nullptr;

private:
  Status complete() {
    MGSRT_CUDA_TRY(cudaSetDevice(backend.ordinal));
    if (Status s = backend.waitFor(backend.stream, done); !s.ok())
      return s;
    if (hostOut && outBytes)
      MGSRT_CUDA_TRY(cudaMemcpy(hostOut, stagedOut, outBytes, cudaMemcpyDeviceToHost));
    return backend.asyncError();
  }
  void release() {
    if (stagedIn || stagedOut)
      cudaStreamSynchronize(backend.stream); // an error path may leave them in use
    if (stagedOut && stagedOut != stagedIn)
      cudaFree(stagedOut);
    if (stagedIn)
      cudaFree(stagedIn);
    if (done)
      cudaEventDestroy(done);
    stagedIn = stagedOut = nullptr;
    done = nullptr;
  }

  NcclBackend &backend;
  const char *what;
  bool finished = false;
  Status status;
};

} // namespace

Status NcclBackend::create(CommBackend &host, int ordinal, std::unique_ptr<NcclBackend> &out) {
  out.reset();
  std::unique_ptr<NcclBackend> n(new NcclBackend());
  n->ordinal = ordinal;
  n->ranks = host.size();
  n->myRank = host.rank();
  ncclUniqueId id{};
  if (n->myRank == 0)
    MGSRT_NCCL_TRY(ncclGetUniqueId(&id));
  if (Status s = host.broadcast(&id, sizeof id, 0); !s.ok())
    return Status::error(s.code, "broadcasting the NCCL id: " + s.message);
  if (ncclResult_t r = ncclCommInitRank(&n->comm, n->ranks, id, n->myRank); r != ncclSuccess)
    return ncclError("ncclCommInitRank(&n->comm, n->ranks, id, n->rank)", r);
  MGSRT_CUDA_TRY(cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking));
  MGSRT_CUDA_TRY(cudaEventCreateWithFlags(&n->ready, cudaEventDisableTiming));
  out = std::move(n);
  return Status::success();
}

NcclBackend::~NcclBackend() {
  if (stream)
    cudaStreamSynchronize(stream);
  if (comm && !aborted.load())
    ncclCommDestroy(comm); // (ncclCommAbort freed an aborted one)
  if (barrierScratch)
    cudaFree(barrierScratch);
  if (ready)
    cudaEventDestroy(ready);
  if (stream)
    cudaStreamDestroy(stream);
}

void NcclBackend::abort() {
  std::lock_guard<std::mutex> lock(abortMutex);
  if (!comm || aborted.exchange(true))
    return;
  ncclCommAbort(comm);
}

Status NcclBackend::asyncError() {
  std::lock_guard<std::mutex> lock(abortMutex);
  if (aborted.load())
    return Status::error(MGSRT_ERROR_BACKEND, kNcclAborted);
  ncclResult_t async = ncclSuccess;
  MGSRT_NCCL_TRY(ncclCommGetAsyncError(comm, &async));
  if (async != ncclSuccess && async != ncclInProgress)
    return ncclError("a collective (ncclCommGetAsyncError)", async);
  return Status::success();
}

Status NcclBackend::waitFor(cudaStream_t waitStream, cudaEvent_t event) {
  // Spin first (a short wait, the common case, returns at once), then sleep
  // between polls so that a long one leaves the core to others.
  for (int polls = 0;; ++polls) {
    const cudaError_t q = event ? cudaEventQuery(event) : cudaStreamQuery(waitStream);
    if (q == cudaSuccess)
      return Status::success();
    if (q != cudaErrorNotReady)
      return cuda::cudaStatus(event ? "cudaEventQuery" : "cudaStreamQuery", q);
    // Every 64th poll: NCCL's error check takes a lock of its own.
    if (polls % 64 == 0)
      if (Status s = asyncError(); !s.ok()) {
        if (isAborted())
          return s;
        abort(); // its kernels end, so nothing waits on them any more
        return Status::error(s.code, s.message + "; the NCCL communicator was aborted "
                                                 "(ncclCommAbort)");
      }
    if (polls < 4096)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

template <typename Enqueue>
CommRequestPtr NcclBackend::start(const char *what, const void *in, size_t inBytes, void *out,
                                  size_t outBytes, Enqueue &&enqueue) {
  auto request = std::make_unique<NcclRequest>(*this, what);
  Status s = [&]() -> Status {
    MGSRT_CUDA_TRY(cudaSetDevice(ordinal));
    const void *deviceIn = in;
    void *deviceOut = out;
    if (inBytes && !onDevice(in)) {
      MGSRT_CUDA_TRY(cudaMalloc(&request->stagedIn, inBytes));
      deviceIn = request->stagedIn;
    }
    if (outBytes && !onDevice(out)) {
      if (out == in && request->stagedIn) {
        request->stagedOut = request->stagedIn;
      } else {
        MGSRT_CUDA_TRY(cudaMalloc(&request->stagedOut, outBytes));
      }
      deviceOut = request->stagedOut;
      request->hostOut = out;
      request->outBytes = outBytes;
    }
    // After everything queued on the device's default stream.
    MGSRT_CUDA_TRY(cudaEventRecord(ready, 0));
    MGSRT_CUDA_TRY(cudaStreamWaitEvent(stream, ready, 0));
    if (request->stagedIn)
      MGSRT_CUDA_TRY(
          cudaMemcpyAsync(request->stagedIn, in, inBytes, cudaMemcpyHostToDevice, stream));
    if (Status e = enqueue(deviceIn, deviceOut); !e.ok())
      return e;
    MGSRT_CUDA_TRY(cudaEventCreateWithFlags(&request->done, cudaEventDisableTiming));
    MGSRT_CUDA_TRY(cudaEventRecord(request->done, stream));
    return Status::success();
  }();
  if (!s.ok()) {
    request->discard();
    return completedRequest(Status::error(s.code, strCat("nccl ", what, ": ", s.message)));
  }
  return request;
}

CommRequestPtr NcclBackend::iallReduce(float *data, size_t n, ReduceOp op) {
  if (n == 0)
    return completedRequest(Status::success());
  return start("allreduce", data, n * sizeof(float), data, n * sizeof(float),
               [&](const void *, void *d) -> Status {
                 // The sum, then a division: not ncclAvg (see NcclKernels.cu).
                 MGSRT_NCCL_TRY(ncclAllReduce(d, d, n, ncclFloat, ncclSum, comm, stream));
                 if (op == ReduceOp::Average && ranks > 1)
                   MGSRT_CUDA_TRY(cuda::divideBy(static_cast<float *>(d),
                                                 static_cast<int64_t>(n),
                                                 static_cast<float>(ranks), stream));
                 return Status::success();
               });
}

CommRequestPtr NcclBackend::iallGather(const void *send, size_t bytesPerRank, void *recv) {
  if (bytesPerRank == 0)
    return completedRequest(Status::success());
  return start("allgather", send, bytesPerRank, recv, bytesPerRank * ranks,
               [&](const void *s, void *r) -> Status {
                 MGSRT_NCCL_TRY(ncclAllGather(s, r, bytesPerRank, ncclChar, comm, stream));
                 return Status::success();
               });
}

CommRequestPtr NcclBackend::ibroadcast(void *data, size_t bytes, int root) {
  if (root < 0 || root >= ranks)
    return completedRequest(Status::error(
        MGSRT_ERROR_INVALID_ARGUMENT,
        strCat("nccl broadcast: root ", root, " is outside [0, ", ranks, ")")));
  if (bytes == 0)
    return completedRequest(Status::success());
  return start("broadcast", data, bytes, data, bytes, [&](const void *, void *d) -> Status {
    MGSRT_NCCL_TRY(ncclBroadcast(d, d, bytes, ncclChar, root, comm, stream));
    return Status::success();
  });
}

CommRequestPtr NcclBackend::ibarrier() {
  // NCCL has no barrier: a sum of one float every rank must join.
  if (!barrierScratch) {
    cudaError_t e = cudaSetDevice(ordinal);
    if (e == cudaSuccess)
      e = cudaMalloc(&barrierScratch, sizeof(float));
    if (e != cudaSuccess)
      return completedRequest(cuda::cudaStatus("nccl barrier: cudaMalloc", e));
  }
  return start("barrier", nullptr, 0, nullptr, 0, [&](const void *, void *) -> Status {
    MGSRT_NCCL_TRY(
        ncclAllReduce(barrierScratch, barrierScratch, 1, ncclFloat, ncclSum, comm, stream));
    return Status::success();
  });
}

Status createNcclBackend(const CommConfig &config, std::unique_ptr<CommBackend> &out) {
  out.reset();
  if (!config.ncclBootstrap)
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, kNcclNeedsBootstrap);
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return Status::error(MGSRT_ERROR_UNAVAILABLE,
                         strCat("no CUDA device is available: ",
                                cuda::cudaStatus("cudaGetDeviceCount", e).message));
  if (count == 0)
    return Status::error(MGSRT_ERROR_UNAVAILABLE, "no CUDA device is available (0 devices)");
  const int ordinal = config.ncclDevice;
  if (ordinal < 0 || ordinal >= count)
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                         strCat("nccl: GPU ", ordinal, " does not exist (", count,
                                " device(s))"));
  std::unique_ptr<NcclBackend> backend;
  Status s = [&]() -> Status {
    MGSRT_CUDA_TRY(cudaSetDevice(ordinal));
    return NcclBackend::create(*config.ncclBootstrap, ordinal, backend);
  }();
  if (!s.ok())
    return Status::error(s.code, "nccl: " + s.message);
  out = std::move(backend);
  return Status::success();
}

} // namespace mgs::rt
