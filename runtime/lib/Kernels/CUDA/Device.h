//===- Device.h - The CUDA kernels' shared state (internal) ------*- C++ -*-===//
//
// What every file of libmgsrt_cuda.so uses: the context's CUDA state (the
// compute stream, cuBLAS and cuDNN handles, a scratch workspace), the kernel
// entry guard and the declarations of every CUDA kernel (one per entry of
// KernelList.h, defined in the file of its kind). Descriptor checks and
// messages are the CPU kernels' (Support/Common.h), so both devices reject the
// same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CUDA_DEVICE_H
#define MGSRT_KERNELS_CUDA_DEVICE_H

#include "Descriptors/OptimizerDesc.h"
#include "Descriptors/SoftmaxDesc.h"
#include "Support/Common.h"
#include "Support/KernelList.h"

#include <initializer_list>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

namespace mgs::rt::cuda {

#define MGSRT_DECLARE_KERNEL(name) mgsrt_status_t name(mgsrt_ctx_t *, const int64_t *, void *const *);
MGSRT_COMPUTE_KERNELS(MGSRT_DECLARE_KERNEL)
MGSRT_COMM_KERNELS(MGSRT_DECLARE_KERNEL)
#undef MGSRT_DECLARE_KERNEL

/// The collectives' state on a GPU (lib/Comm/NCCL/NcclCollectives.cpp: the
/// NCCL backend, the request slots).
struct CommDeviceState {
  virtual ~CommDeviceState() = default;
  /// Waits for `stream` as cudaStreamSynchronize does, but ends the wait with
  /// an error, the NCCL communicator aborted (ncclCommAbort), when NCCL reports
  /// a failed peer instead of waiting for a collective that cannot complete.
  virtual Status waitFor(cudaStream_t stream) = 0;
};

/// The updates' finiteness flags (Optimizer.cu): the CPU notes a non-finite
/// gradient as its update reads it (mgsrt_ctx_take_nonfinite); on the GPU each
/// update sets its bit in device memory (one bit an update, in launch order,
/// since the last read-back), and the bits come back to the host with the
/// next wait for the stream (synchronizeStream: a copy to or from the host,
/// mgsrt_synchronize; the loss's copy each step), so the check costs no
/// synchronization of its own.
struct NonfiniteFlags {
  /// Updates flagged between two read-backs (a step with more reads its bits
  /// back, synchronizing, every this many updates).
  static constexpr int kCapacity = 4096;
  unsigned *device = nullptr; // kCapacity bits
  unsigned *host = nullptr;   // pinned: the copy queued by queueNonfiniteReadback
  /// The param of each update since the last read-back, in launch order.
  std::vector<const void *> params;
  bool copyQueued = false; // `host` receives the bits of `params` at the next synchronization
  ~NonfiniteFlags();
};

/// What the updates read from device memory rather than their arguments, so
/// that a step captured as a CUDA graph (StepGraph) updates with each step's
/// learning rate and AdamW bias correction (Optimizer.cu).
struct UpdateScalars {
  float lr, momentum, weightDecay, scale;
  AdamWStep adam;
};

/// The training step captured once as a CUDA graph and replayed
/// (mgsrt_graph_begin / _end / _launch, Graph.cu). While `capturing`, what
/// a graph cannot hold (a wait for the stream, scratch memory that grows, a
/// host-side random stream) refuses (refuseInCapture) instead of running.
struct StepGraph {
  bool capturing = false;
  cudaGraphExec_t exec = nullptr;
  /// The buffers a graph uses stay where they are while `generation` does
  /// not change (scratch that grows bumps it): a graph of an older one is
  /// stale, and so is one captured at another loss scale or top-k density.
  uint64_t generation = 0, capturedGeneration = 0;
  float capturedLossScale = 1.0f;
  double capturedDensity = 0;
  /// The updates' params in the graph's order (their finiteness bits).
  std::vector<const void *> updates;
  /// The checks of the graph's data (cross-entropy's labels, scatter-add's
  /// and a gather's indices; `captured`: of the one being captured) that a
  /// step run kernel by kernel reads back before going on (firstRefused):
  /// check i's two verdict words, words[2 i] and words[2 i + 1] (verdictWord
  /// hands them out in order: the first bad position, ~0 when none, and the
  /// bits of the value there, copied as the check ran: the buffer may be
  /// reused later in the step), are read back after a replay into
  /// `verdictsHost` (pinned), and its report `pending` until the next wait
  /// for the stream calls it with a bad position and its value's bits (the
  /// kernel's error).
  using Report =
      std::function<mgsrt_status_t(mgsrt_ctx_t *, unsigned long long, unsigned long long)>;
  std::vector<Report> verdicts, captured, pending;
  /// The verdict words of the graph's checks, two a check (device memory of
  /// its own, allocated before the first capture: a step's scratch is reused),
  /// and their pinned copy on the host.
  static constexpr size_t kWords = 2048;
  unsigned long long *words = nullptr, *verdictsHost = nullptr;
  size_t wordsUsed = 0;
  /// Dropout: each call of the graph draws from the stream state in its slot
  /// of `rngStarts` (device memory), which a launch fills from the context's
  /// state, advancing that as the calls would (`dropoutMasks`: each call's
  /// draws, in order; `capturedMasks`: of the one being captured).
  static constexpr size_t kDropouts = 256;
  uint64_t *rngStarts = nullptr;
  std::vector<int64_t> dropoutMasks, capturedMasks;
  /// Drops the graph (not the pending checks of a replay).
  void reset();
  ~StepGraph();
};

struct CudaState final : DeviceState {
  int ordinal = 0;
  cudaStream_t stream = nullptr; // every compute kernel is queued here
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void *workspace = nullptr; // scratch shared by the kernels of one stream
  size_t workspaceBytes = 0;
  std::unique_ptr<CommDeviceState> comm; // created by the first collective
  NonfiniteFlags nonfinite;
  /// The updates' scalars on the device, and the values last queued there.
  UpdateScalars *scalars = nullptr;
  UpdateScalars uploaded{};
  bool scalarsUploaded = false;
  StepGraph graph;
  ~CudaState() override;
};

/// While a step is being captured: fails `kernel` with MGSRT_ERROR_UNAVAILABLE
/// saying `what` cannot be captured (the capture is then dropped and the step
/// runs without a graph); MGSRT_OK otherwise.
mgsrt_status_t refuseInCapture(mgsrt_ctx_t *ctx, const char *kernel, const char *what);
/// Where a check's verdict word goes: `scratch` (the call's own scratch,
/// read back at once) kernel by kernel; while capturing, a word of the
/// graph's (read back after each replay).
mgsrt_status_t verdictWord(mgsrt_ctx_t *ctx, const char *kernel, unsigned long long *scratch,
                           unsigned long long *&word);
/// A kernel's check of its data (see StepGraph::verdicts) in device memory:
/// run kernel by kernel, `bad` (~0 when fine) is read back now (a wait) and
/// `report` called with a bad position and the bits of `values`'s element
/// there (`valueBytes` <= 8 bytes each); while capturing, after each replay.
mgsrt_status_t checkVerdict(mgsrt_ctx_t *ctx, const char *kernel, unsigned long long *bad,
                            const void *values, size_t valueBytes, StepGraph::Report report);
/// The value bits report() is given, as a T.
template <typename T> T valueOf(unsigned long long bits) {
  static_assert(sizeof(T) <= sizeof bits);
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
/// Scratch memory was reallocated: graphs captured before are stale.
inline void noteReallocation(mgsrt_ctx_t *ctx);
/// Queues the context's current update scalars to the device when they differ
/// from the last queued (never while capturing: a replay queues its own).
mgsrt_status_t uploadUpdateScalars(mgsrt_ctx_t *ctx, const char *kernel, bool force = false);
/// After a wait for the stream: the label checks of the graphs replayed since
/// the last one (a bad label fails the context with the eager step's error).
mgsrt_status_t checkGraphVerdicts(mgsrt_ctx_t *ctx, const char *kernel);
/// mgsrt_graph_begin, mgsrt_graph_end and mgsrt_graph_launch (Graph.cu).
mgsrt_status_t graphBegin(mgsrt_ctx_t *ctx);
mgsrt_status_t graphEnd(mgsrt_ctx_t *ctx, int keep);
mgsrt_status_t graphLaunch(mgsrt_ctx_t *ctx, int *ran);

inline CudaState &state(mgsrt_ctx_t *ctx) { return static_cast<CudaState &>(*ctx->deviceState); }

inline void noteReallocation(mgsrt_ctx_t *ctx) { ++state(ctx).graph.generation; }

/// Scratch memory of at least `bytes` on the context's stream (valid until the
/// next call; kernels on the one stream use it one after another).
mgsrt_status_t workspace(mgsrt_ctx_t *ctx, const char *kernel, size_t bytes, void **out);

/// A device array of floats kept in the context's cache under `key` (an
/// address no descriptor has), grown on demand to at least `n` (the old one
/// freed once the stream has let go of it); `grown` says it was reallocated
/// (its contents are then undefined).
struct DeviceArray : KernelCache {
  float *ptr = nullptr;
  int64_t count = 0;
  ~DeviceArray() override;
};
mgsrt_status_t deviceArray(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *key, int64_t n,
                           float *&out, bool &grown);

/// A bfloat16 or half GEMM, matmul or convolution (MGSRT_PRECISION_BF16,
/// MGSRT_PRECISION_F16) on the GPU: each operand is pointed at a copy rounded
/// to `precision` (to nearest even, stored as float) in scratch of its own,
/// apart from the workspace, and the float32
/// kernels run on the copies. Products of bfloat16 or half values are exact
/// in float32 (but for products below float's normal range, ~2^-126, which
/// round as subnormals), so this is the CPU's arithmetic (reduced-precision
/// operands, float32 accumulation; a CPU whose bf16 instructions flush
/// subnormals differs there); not yet tensor cores' speed. Nothing for F32. The
/// copies stay valid until the next call (Elementwise.cu).
mgsrt_status_t roundedOperands(mgsrt_ctx_t *ctx, const char *kernel, Precision precision,
                               std::initializer_list<RoundedOperand> operands);

/// Records a CUDA / cuBLAS / cuDNN failure as MGSRT_ERROR_BACKEND naming the
/// kernel, the call and the library's message. Returns the status.
mgsrt_status_t cudaFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                           cudaError_t err);
mgsrt_status_t cublasFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                             cublasStatus_t err);
mgsrt_status_t cudnnFailure(mgsrt_ctx_t *ctx, const char *kernel, const char *call,
                            cudnnStatus_t err);
/// A CUDA call's result as a Status, for code outside a kernel (the
/// communication backends): success, or "<call> failed: <name> (<message>)"
/// with cudaFailure's code (MGSRT_ERROR_OUT_OF_MEMORY for an allocation).
Status cudaStatus(const char *call, cudaError_t err);

/// Returns cudaStatus's error from a function returning Status.
#define MGSRT_CUDA_TRY(call)                                                                       \
  do {                                                                                             \
    if (cudaError_t mgsrt_e_ = (call); mgsrt_e_ != cudaSuccess)                                    \
      return ::mgs::rt::cuda::cudaStatus(#call, mgsrt_e_);                                         \
  } while (0)

#define MGSRT_CUDA_CHECK(ctx, kernel, call)                                                        \
  do {                                                                                             \
    cudaError_t mgsrt_err_ = (call);                                                               \
    if (mgsrt_err_ != cudaSuccess)                                                                 \
      return ::mgs::rt::cuda::cudaFailure(ctx, kernel, #call, mgsrt_err_);                        \
  } while (0)
#define MGSRT_CUBLAS_CHECK(ctx, kernel, call)                                                      \
  do {                                                                                             \
    cublasStatus_t mgsrt_err_ = (call);                                                            \
    if (mgsrt_err_ != CUBLAS_STATUS_SUCCESS)                                                       \
      return ::mgs::rt::cuda::cublasFailure(ctx, kernel, #call, mgsrt_err_);                      \
  } while (0)
#define MGSRT_CUDNN_CHECK(ctx, kernel, call)                                                       \
  do {                                                                                             \
    cudnnStatus_t mgsrt_err_ = (call);                                                             \
    if (mgsrt_err_ != CUDNN_STATUS_SUCCESS)                                                        \
      return ::mgs::rt::cuda::cudnnFailure(ctx, kernel, #call, mgsrt_err_);                       \
  } while (0)

/// Waits for the context's compute stream (CommDeviceState::waitFor once the
/// context has collectives), reading the updates' finiteness flags back with
/// it: the bits are copied before the wait and noted in the context after it
/// (nonfiniteUpdates, firstNonfiniteParam, as the CPU update notes them).
mgsrt_status_t synchronizeStream(mgsrt_ctx_t *ctx, const char *kernel);
/// Queues the copy of the flags to the host (and their reset) on the compute
/// stream, if updates ran since the last one (Optimizer.cu).
mgsrt_status_t queueNonfiniteReadback(mgsrt_ctx_t *ctx, const char *kernel);
/// After the stream was synchronized: notes the flags read back in the context.
void noteNonfiniteReadback(mgsrt_ctx_t *ctx);

/// runKernel (Support/Common.h) for a CUDA kernel: the same guard, plus a check
/// that the launches `body` queued were accepted. With MGSRT_PROFILE the
/// stream is synchronized after the kernel so its time is the GPU's.
template <typename Body>
mgsrt_status_t runCudaKernel(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                             void *const *bufs, Body &&body) {
  return runKernel(ctx, kernel, desc, bufs, [&]() -> mgsrt_status_t {
    // The current GPU is per thread: this context's, whichever thread calls.
    MGSRT_CUDA_CHECK(ctx, kernel, cudaSetDevice(state(ctx).ordinal));
    mgsrt_status_t s = body();
    if (s != MGSRT_OK)
      return s;
    if (cudaError_t err = cudaPeekAtLastError(); err != cudaSuccess)
      return cudaFailure(ctx, kernel, "kernel launch", cudaGetLastError());
    if (ctx->profile || ctx->tracing)
      return synchronizeStream(ctx, kernel);
    return MGSRT_OK;
  });
}

/// Copies the `count` floats `values` points to -- a constant of the step
/// (a compiled GPU model's are device copies, mgs_model_constants; a host
/// pointer is read too: cudaMemcpyDefault) -- into `scratch` (device memory)
/// on the compute stream, and points `values` at the copy.
inline mgsrt_status_t stageOnDevice(mgsrt_ctx_t *ctx, const char *kernel, const float *&values,
                                    float *scratch, int64_t count) {
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemcpyAsync(scratch, values, sizeof(float) * count, cudaMemcpyDefault,
                                   state(ctx).stream));
  values = scratch;
  return MGSRT_OK;
}

/// The first of n elements a check refuses (a bad index): `launch(first,
/// stream)` queues a kernel that atomicMin-s the position of each refused
/// element into *first (~0 when none; verdictWord's); then, kernel by
/// kernel, the position is read back (one synchronization a call), or in a
/// graph after each replay (checkVerdict), and a refused one is reported as
/// report(position, that element of `values`): the CPU's error. `first` is
/// left for the kernels after the check, which skip their work on a refused
/// element (a replay runs them regardless).
template <typename T, typename Launch, typename Report>
mgsrt_status_t firstRefused(mgsrt_ctx_t *ctx, const char *kernel, const T *values,
                            Launch &&launch, Report report, const unsigned long long *&first) {
  // Kernel by kernel the word is the workspace's first (a caller keeps
  // nothing there across this call).
  void *scratch = nullptr;
  if (!state(ctx).graph.capturing && workspace(ctx, kernel, sizeof(unsigned long long), &scratch))
    return ctx->status;
  unsigned long long *word = nullptr;
  if (verdictWord(ctx, kernel, static_cast<unsigned long long *>(scratch), word))
    return ctx->status;
  cudaStream_t st = state(ctx).stream;
  MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(word, 0xff, sizeof *word, st));
  launch(word, st);
  MGSRT_CUDA_CHECK(ctx, kernel, cudaGetLastError());
  first = word;
  return checkVerdict(ctx, kernel, word, values, sizeof(T),
                      [report](mgsrt_ctx_t *c, unsigned long long at, unsigned long long bits) {
                        return report(c, static_cast<int64_t>(at), valueOf<T>(bits));
                      });
}

/// Blocks of `threads` covering n elements, capped (kernels use grid-stride loops).
inline unsigned gridFor(int64_t n, unsigned threads = 256) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks < 1)
    blocks = 1;
  return static_cast<unsigned>(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

mgsrt_status_t unimplemented(mgsrt_ctx_t *ctx, const char *kernel);

/// Row-major C = alpha op(A) op(B) + beta C on the context's cuBLAS handle, C
/// m x n, A m x k, B k x n before op (Gemm.cpp; as CPU/Gemm.cpp's sgemm: k = 0
/// scales C by beta, zeroing it when beta is 0).
mgsrt_status_t sgemm(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t m,
                     int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// n floats to 16-bit values, IEEE half or (`bf16`) bfloat16, rounded to
/// nearest even, and back, on `stream` (lib/Comm/NCCL/NcclKernels.cu).
cudaError_t narrowFloats(const float *in, void *out, int64_t n, bool bf16, cudaStream_t stream);
cudaError_t widenFloats(const void *in, float *out, int64_t n, bool bf16, cudaStream_t stream);
/// data[i] = data[i] / divisor (IEEE division, as the CPU) on `stream`.
cudaError_t divideBy(float *data, int64_t n, float divisor, cudaStream_t stream);
/// residual[indices[j]] += values[j] for j = 0 .. count - 1, indices sorted
/// (a repeated index's entries added in order, one float addition each, as
/// the CPU), on `stream` (SparseComm.cu: the global top-k's error feedback).
cudaError_t addSortedEntries(float *residual, const int32_t *indices, const float *values,
                             int64_t count, cudaStream_t stream);

#ifdef __CUDACC__
/// Grid-stride loops: the first element of this thread and the stride.
__device__ inline int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridStride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }
#endif

} // namespace mgs::rt::cuda

/// A kernel without a CUDA implementation yet: a clear error, never a crash.
#define MGSRT_CUDA_UNIMPLEMENTED(name)                                                             \
  mgsrt_status_t mgs::rt::cuda::name(mgsrt_ctx_t *ctx, const int64_t *, void *const *) {          \
    return ::mgs::rt::cuda::unimplemented(ctx, #name);                                             \
  }

#endif // MGSRT_KERNELS_CUDA_DEVICE_H
