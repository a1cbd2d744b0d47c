//===- Device.cpp - Attaching a context to a GPU; memory; the table -------===//

#include "Device.h"
#include "Comm/NCCL/NcclBackend.h"

#include <cstdlib>

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace mgs::rt::cuda {

CudaState::~CudaState() {
  comm.reset(); // NCCL first: it may still use the stream
  if (stream)
    cudaStreamSynchronize(stream);
  if (scalars)
    cudaFree(scalars);
  if (workspace)
    cudaFree(workspace);
  if (cudnn)
    cudnnDestroy(cudnn);
  if (cublas)
    cublasDestroy(cublas);
  if (stream)
    cudaStreamDestroy(stream);
}

Status cudaStatus(const char *call, cudaError_t err) {
  if (err == cudaSuccess)
    return Status::success();
  return Status::error(
      err == cudaErrorMemoryAllocation ? MGSRT_ERROR_OUT_OF_MEMORY : MGSRT_ERROR_BACKEND,
      strCat(call, " failed: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

mgsrt_status_t cudaFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                           cudaError_t err) {
  Status s = cudaStatus(call, err);
  return ctx->fail(s.code, strCat(kernel, ": ", s.message));
}

mgsrt_status_t cublasFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                             cublasStatus_t err) {
  return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": ", call, " failed: ",
                                               cublasGetStatusName(err), " (",
                                               cublasGetStatusString(err), ")"));
}

mgsrt_status_t cudnnFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                            cudnnStatus_t err) {
  return ctx->fail(MGSRT_ERROR_BACKEND,
                   strCat(kernel, ": ", call, " failed: ", cudnnGetErrorString(err)));
}

mgsrt_status_t unimplemented(mgsrt_ctx_t *ctx, const char *kernel) {
  return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                   strCat(kernel, ": no CUDA implementation of this kernel yet"));
}

mgsrt_status_t refuseInCapture(mgsrt_ctx_t *ctx, const char *kernel, const char *what) {
  if (!state(ctx).graph.capturing)
    return MGSRT_OK;
  return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                   strCat(kernel, ": ", what, ", which a CUDA graph of the step cannot hold"));
}

mgsrt_status_t synchronizeStream(mgsrt_ctx_t *ctx, const char *kernel) {
  CudaState &st = state(ctx);
  if (mgsrt_status_t s = refuseInCapture(ctx, kernel, "waits for the GPU (a result read back)"))
    return s;
  if (mgsrt_status_t s = queueNonfiniteReadback(ctx, kernel))
    return s;
  if (st.comm) {
    if (Status s = st.comm->waitFor(st.stream); !s.ok())
      return ctx->fail(s.code, strCat(kernel, ": ", s.message));
  } else {
    MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamSynchronize(st.stream));
  }
  noteNonfiniteReadback(ctx);
  return checkGraphVerdicts(ctx, kernel);
}

DeviceArray::~DeviceArray() {
  if (ptr)
    cudaFree(ptr);
}

mgsrt_status_t deviceArray(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *key, int64_t n,
                           float *&out, bool &grown) {
  DeviceArray &a = getCache<DeviceArray>(ctx, key);
  grown = a.count < n;
  if (grown) {
    if (mgsrt_status_t s = refuseInCapture(ctx, kernel, "its scratch memory grows"))
      return s;
    if (a.ptr) {
      noteReallocation(ctx); // a graph that used the old array is stale
      // Kernels queued earlier may still read the old array.
      MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamSynchronize(state(ctx).stream));
      MGSRT_CUDA_CHECK(ctx, kernel, cudaFree(a.ptr));
      a.ptr = nullptr;
      a.count = 0;
    }
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&a.ptr, sizeof(float) * n));
    a.count = n;
  }
  out = a.ptr;
  return MGSRT_OK;
}

mgsrt_status_t workspace(mgsrt_ctx_t *ctx, const char *kernel, size_t bytes, void **out) {
  CudaState &st = state(ctx);
  if (bytes > st.workspaceBytes) {
    if (mgsrt_status_t s = refuseInCapture(ctx, kernel, "its scratch memory grows"))
      return s;
    if (st.workspace) {
      noteReallocation(ctx); // a graph that used the old workspace is stale
      MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamSynchronize(st.stream));
      MGSRT_CUDA_CHECK(ctx, kernel, cudaFree(st.workspace));
      st.workspace = nullptr;
      st.workspaceBytes = 0;
    }
    // Grow by half again, so slowly rising requests do not reallocate each time.
    size_t want = bytes + bytes / 2;
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&st.workspace, want));
    st.workspaceBytes = want;
  }
  *out = st.workspace;
  return MGSRT_OK;
}

} // namespace mgs::rt::cuda

namespace {

mgsrt_status_t attach(mgsrt_ctx_t *ctx, int ordinal) {
  const char *kernel = "ctx_set_device";
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                     strCat("no CUDA device is available: ",
                            cudaStatus("cudaGetDeviceCount", err).message));
  if (count == 0)
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE, "no CUDA device is available (0 devices)");
  if (ordinal < 0) {
    // One process per GPU: the launcher's local rank picks it.
    int local = 0;
    for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
      if (const char *v = std::getenv(var); v && *v) {
        local = std::atoi(v);
        break;
      }
    ordinal = local % count;
  }
  if (ordinal < 0 || ordinal >= count)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     strCat(kernel, ": GPU ", ordinal, " does not exist (", count,
                            " device(s))"));
  auto st = std::make_unique<CudaState>();
  st->ordinal = ordinal;
  MGSRT_CUDA_CHECK(ctx, kernel, cudaSetDevice(ordinal));
  MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
  MGSRT_CUBLAS_CHECK(ctx, kernel, cublasCreate(&st->cublas));
  MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSetStream(st->cublas, st->stream));
  // Plain fp32 math: results comparable with the CPU kernels (no TF32).
  MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSetMathMode(st->cublas, CUBLAS_PEDANTIC_MATH));
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnCreate(&st->cudnn));
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnSetStream(st->cudnn, st->stream));
  MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&st->scalars, sizeof(UpdateScalars)));
  ctx->deviceState = std::move(st);
  return MGSRT_OK;
}

/// alloc (device memory) and hostAlloc (page-locked host memory).
mgsrt_status_t allocate(mgsrt_ctx_t *ctx, size_t bytes, void **out, bool host) {
  cudaError_t err = cudaSetDevice(state(ctx).ordinal);
  if (err == cudaSuccess)
    err = host ? cudaHostAlloc(out, bytes, cudaHostAllocDefault) : cudaMalloc(out, bytes);
  if (err != cudaSuccess) {
    *out = nullptr;
    cudaGetLastError();
    return ctx->fail(err == cudaErrorMemoryAllocation ? MGSRT_ERROR_OUT_OF_MEMORY
                                                      : MGSRT_ERROR_BACKEND,
                     strCat(host ? "host_alloc: cudaHostAlloc of " : "alloc: cudaMalloc of ",
                            bytes, " bytes failed: ", cudaGetErrorString(err)));
  }
  return MGSRT_OK;
}

mgsrt_status_t alloc(mgsrt_ctx_t *ctx, size_t bytes, void **out) {
  return allocate(ctx, bytes, out, /*host=*/false);
}

void release(mgsrt_ctx_t *, void *ptr) { cudaFree(ptr); }

mgsrt_status_t hostAlloc(mgsrt_ctx_t *ctx, size_t bytes, void **out) {
  return allocate(ctx, bytes, out, /*host=*/true);
}

void hostRelease(mgsrt_ctx_t *ctx, void *ptr) {
  // A copy from it may still be queued (mgsrt_copy_to_device_async).
  cudaSetDevice(state(ctx).ordinal);
  cudaStreamSynchronize(state(ctx).stream);
  cudaGetLastError();
  cudaFreeHost(ptr);
}

mgsrt_status_t copy(mgsrt_ctx_t *ctx, void *dst, const void *src, size_t bytes, int kind) {
  const char *kernel = kind == 1   ? "copy_to_host"
                       : kind == 3 ? "copy_to_device_async"
                                   : "copy_to_device";
  cudaStream_t s = state(ctx).stream;
  if (kind != 2)
    if (mgsrt_status_t r = refuseInCapture(ctx, kernel,
                                           kind == 3 ? "reads host memory (a copy to the GPU)"
                                                     : "waits for the GPU (a host copy)"))
      return r;
  MGSRT_CUDA_CHECK(ctx, kernel, cudaSetDevice(state(ctx).ordinal));
  cudaMemcpyKind k = kind == 1   ? cudaMemcpyDeviceToHost
                     : kind == 2 ? cudaMemcpyDeviceToDevice
                                 : cudaMemcpyHostToDevice;
  MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(dst, src, bytes, k, s));
  // The host side may be pageable memory that the caller reuses at once. The
  // updates' finiteness flags come back with this wait (the loss's copy).
  // Kind 3's caller keeps the host side until its next wait instead.
  if (kind == 0 || kind == 1)
    return synchronizeStream(ctx, kernel);
  return MGSRT_OK;
}

mgsrt_status_t synchronize(mgsrt_ctx_t *ctx) { return synchronizeStream(ctx, "synchronize"); }

const DeviceKernels kTable = {
    kDeviceKernelsVersion,
    attach,
    alloc,
    release,
    hostAlloc,
    hostRelease,
    copy,
    synchronize,
    graphBegin,
    graphEnd,
    graphLaunch,
#define MGSRT_TABLE_ENTRY(name) cuda::name,
    MGSRT_COMPUTE_KERNELS(MGSRT_TABLE_ENTRY) MGSRT_COMM_KERNELS(MGSRT_TABLE_ENTRY)
#undef MGSRT_TABLE_ENTRY
    createNcclBackend,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const DeviceKernels *mgsrt_device_kernels(void) {
  return &kTable;
}
