//===- Optimizer.cu - SGD and AdamW updates, norm clipping on a GPU -------===//
//
// The CPU kernels' math in their order, each operation rounded on its own
// (__fmul_rn / __fadd_rn are never contracted into FMAs), so the results
// equal the CPU's bit for bit (the CPU build has no FMA contraction). The
// gradient norm is summed in double over the CPU's chunks, in its order.
// Each update flags a gradient that holds NaN or infinity (Device.h's
// NonfiniteFlags): read back with the next synchronizing copy, as the CPU's
// note of it (mgsrt_ctx_take_nonfinite).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/OptimizerDesc.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

/// Sets bit `ordinal` of `flags` when this thread met a non-finite gradient.
__device__ inline void flagIf(bool bad, unsigned *flags, int ordinal) {
  if (bad)
    atomicOr(flags + (ordinal >> 5), 1u << (ordinal & 31));
}

__global__ void sgdKernel(float *__restrict__ param, const float *__restrict__ grad,
                          float *__restrict__ vel, int64_t n,
                          const UpdateScalars *__restrict__ scalars, unsigned *flags,
                          int ordinal) {
  const float lr = scalars->lr, momentum = scalars->momentum, wd = scalars->weightDecay,
              scale = scalars->scale;
  bool bad = false;
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    const float p = param[i];
    bad |= !isfinite(grad[i]);
    // d = grad * scale + wd * p; v = momentum * v + d; p -= lr * v
    const float d = __fadd_rn(__fmul_rn(grad[i], scale), __fmul_rn(wd, p));
    const float v = __fadd_rn(__fmul_rn(momentum, vel[i]), d);
    vel[i] = v;
    param[i] = __fsub_rn(p, __fmul_rn(lr, v));
  }
  flagIf(bad, flags, ordinal);
}

__global__ void adamwKernel(float *__restrict__ param, const float *__restrict__ grad,
                            float *__restrict__ m, float *__restrict__ v, int64_t n,
                            const UpdateScalars *__restrict__ scalars, unsigned *flags,
                            int ordinal) {
  const AdamWStep s = scalars->adam;
  const float scale = scalars->scale;
  bool bad = false;
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    bad |= !isfinite(grad[i]);
    const float g = __fmul_rn(grad[i], scale);
    const float mi = __fadd_rn(__fmul_rn(s.beta1, m[i]), __fmul_rn(s.oneMinusBeta1, g));
    const float vi = __fadd_rn(__fmul_rn(s.beta2, v[i]), __fmul_rn(s.oneMinusBeta2, __fmul_rn(g, g)));
    m[i] = mi;
    v[i] = vi;
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), s.bc2Sqrt), s.eps);
    param[i] = __fsub_rn(__fmul_rn(param[i], s.decay), __fmul_rn(s.stepSize, __fdiv_rn(mi, denom)));
  }
  flagIf(bad, flags, ordinal);
}

/// The bit of the next update: its ordinal among the updates since the last
/// read-back (allocating the flags on first use; reading them back, with a
/// synchronization, when they are full).
mgsrt_status_t nextFlag(mgsrt_ctx_t *ctx, const char *kernel, const void *param, int &ordinal) {
  NonfiniteFlags &f = cuda::state(ctx).nonfinite;
  constexpr size_t kBytes = NonfiniteFlags::kCapacity / 32 * sizeof(unsigned);
  if (!f.device) {
    if (mgsrt_status_t s = refuseInCapture(ctx, kernel, "allocates its first call's memory"))
      return s;
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&f.device, kBytes));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMallocHost(&f.host, kBytes));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(f.device, 0, kBytes, cuda::state(ctx).stream));
  }
  if (f.params.size() == NonfiniteFlags::kCapacity)
    if (mgsrt_status_t s = synchronizeStream(ctx, kernel))
      return s;
  ordinal = static_cast<int>(f.params.size());
  f.params.push_back(param);
  return MGSRT_OK;
}

mgsrt_status_t optimizerUpdate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const int64_t n = checkUpdateDesc(ctx, desc, bufs);
  if (n < 0)
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  float *param = static_cast<float *>(bufs[0]), *state = static_cast<float *>(bufs[2]);
  const float *grad = static_cast<const float *>(bufs[1]);
  int ordinal = 0;
  if (mgsrt_status_t s = nextFlag(ctx, kernelName(Kernel::sgd_update), param, ordinal))
    return s;
  if (mgsrt_status_t s = uploadUpdateScalars(ctx, kernelName(Kernel::sgd_update)))
    return s;
  CudaState &st = cuda::state(ctx);
  unsigned *flags = st.nonfinite.device;
  if (ctx->adamw)
    adamwKernel<<<gridFor(n), 256, 0, st.stream>>>(param, grad, state, state + n, n, st.scalars,
                                                   flags, ordinal);
  else
    sgdKernel<<<gridFor(n), 256, 0, st.stream>>>(param, grad, state, n, st.scalars, flags,
                                                 ordinal);
  return MGSRT_OK;
}

__global__ void setScalarsKernel(UpdateScalars *__restrict__ out, UpdateScalars v) { *out = v; }

/// The CPU kernel's chunks (OptimizerDesc.h): each thread sums one, in
/// order, in double.
__global__ void chunkSquares(const float *__restrict__ x, int64_t n, double *__restrict__ out) {
  const int64_t chunks = (n + kNormChunk - 1) / kNormChunk;
  for (int64_t c = firstIndex(); c < chunks; c += gridStride()) {
    double s = 0;
    const int64_t end = min(n, (c + 1) * kNormChunk);
    for (int64_t i = c * kNormChunk; i < end; ++i)
      s = __dadd_rn(s, __dmul_rn(static_cast<double>(x[i]), static_cast<double>(x[i])));
    out[c] = s;
  }
}

/// A graph's clipping (its replays cannot read the norm back): the chunks'
/// sums added in order, then setClipScale's arithmetic, the factor put
/// where the updates read it (scalars->scale, as updateScale() makes it).
__global__ void clipScaleKernel(const double *__restrict__ partial, int64_t chunks,
                                double maxNorm, float invLossScale,
                                UpdateScalars *__restrict__ scalars) {
  double total = 0;
  for (int64_t c = 0; c < chunks; ++c)
    total = __dadd_rn(total, partial[c]);
  const double norm = __dmul_rn(__dsqrt_rn(total), static_cast<double>(invLossScale));
  const double coef = __ddiv_rn(maxNorm, __dadd_rn(norm, 1e-6));
  const float gradScale = static_cast<float>(coef < 1 ? coef : 1.0);
  scalars->scale = __fmul_rn(gradScale, invLossScale);
}

mgsrt_status_t clipGradNorm(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  using D = mgs::contract::ClipGradNormDesc;
  const char *kernel = kernelName(Kernel::clip_grad_norm);
  const int64_t chunks = checkClipGradNormDesc(ctx, desc, bufs);
  if (chunks < 0)
    return ctx->status;
  // Kernel by kernel the factor is worked out on the host from the norm read
  // back; in a graph's capture, on the device (clipScaleKernel: the same
  // operations).
  const bool onDevice = cuda::state(ctx).graph.capturing;
  double total = 0;
  if (chunks > 0 || onDevice) {
    void *scratch = nullptr; // (no chunks: the factor's kernel reads none)
    if (chunks > 0)
      if (mgsrt_status_t s = workspace(ctx, kernel, chunks * sizeof(double), &scratch))
        return s;
    double *partial = static_cast<double *>(scratch);
    cudaStream_t stream = cuda::state(ctx).stream;
    int64_t at = 0;
    for (int64_t g = 0; g < desc[D::Count]; ++g) {
      const int64_t n = desc[D::sizeAt(g)], c = normChunks(n);
      if (c > 0)
        chunkSquares<<<gridFor(c), 256, 0, stream>>>(static_cast<const float *>(bufs[g]), n,
                                                     partial + at);
      at += c;
    }
    if (onDevice) {
      CudaState &st = cuda::state(ctx);
      clipScaleKernel<<<1, 1, 0, stream>>>(partial, chunks, descF64(desc, D::MaxNormBits),
                                           ctx->invLossScale, st.scalars);
      MGSRT_CUDA_CHECK(ctx, kernel, cudaGetLastError());
      return MGSRT_OK;
    }
    std::vector<double> host(static_cast<size_t>(chunks));
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaMemcpyAsync(host.data(), partial, chunks * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    if (mgsrt_status_t s = synchronizeStream(ctx, kernel))
      return s;
    for (double s : host)
      total += s;
  }
  // Read by the updates that follow, on the host, when they launch.
  setClipScale(ctx, desc, total);
  return MGSRT_OK;
}

} // namespace

mgs::rt::cuda::NonfiniteFlags::~NonfiniteFlags() {
  if (device)
    cudaFree(device);
  if (host)
    cudaFreeHost(host);
}

mgsrt_status_t mgs::rt::cuda::uploadUpdateScalars(mgsrt_ctx_t *ctx, const char *kernel,
                                                  bool force) {
  CudaState &st = cuda::state(ctx);
  // A replay's updates read what its launch queued (graphLaunch).
  if (st.graph.capturing)
    return MGSRT_OK;
  const UpdateScalars now{ctx->lr, ctx->momentum, ctx->weightDecay, ctx->updateScale(),
                          adamwStep(*ctx)};
  if (!force && st.scalarsUploaded && std::memcmp(&now, &st.uploaded, sizeof now) == 0)
    return MGSRT_OK;
  // By value: the launch copies them, so nothing on the host must outlive it.
  setScalarsKernel<<<1, 1, 0, st.stream>>>(st.scalars, now);
  MGSRT_CUDA_CHECK(ctx, kernel, cudaGetLastError());
  st.uploaded = now;
  st.scalarsUploaded = true;
  return MGSRT_OK;
}

mgsrt_status_t mgs::rt::cuda::queueNonfiniteReadback(mgsrt_ctx_t *ctx, const char *kernel) {
  NonfiniteFlags &f = cuda::state(ctx).nonfinite;
  if (f.params.empty() || f.copyQueued)
    return MGSRT_OK;
  const size_t bytes = (f.params.size() + 31) / 32 * sizeof(unsigned);
  cudaStream_t stream = cuda::state(ctx).stream;
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemcpyAsync(f.host, f.device, bytes, cudaMemcpyDeviceToHost, stream));
  MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(f.device, 0, bytes, stream));
  f.copyQueued = true;
  return MGSRT_OK;
}

void mgs::rt::cuda::noteNonfiniteReadback(mgsrt_ctx_t *ctx) {
  NonfiniteFlags &f = cuda::state(ctx).nonfinite;
  if (!f.copyQueued)
    return;
  for (size_t i = 0; i < f.params.size(); ++i)
    if ((f.host[i / 32] >> (i % 32)) & 1u)
      if (ctx->nonfiniteUpdates++ == 0)
        ctx->firstNonfiniteParam = f.params[i];
  f.params.clear();
  f.copyQueued = false;
}

mgsrt_status_t mgs::rt::cuda::sgd_update(mgsrt_ctx_t *ctx, const int64_t *desc,
                                         void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::sgd_update), desc, bufs,
                       [&] { return optimizerUpdate(ctx, desc, bufs); });
}

mgsrt_status_t mgs::rt::cuda::clip_grad_norm(mgsrt_ctx_t *ctx, const int64_t *desc,
                                             void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::clip_grad_norm), desc, bufs,
                       [&] { return clipGradNorm(ctx, desc, bufs); });
}
