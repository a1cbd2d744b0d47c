//===- Dropout.cu - Dropout and random draws on a GPU, as the CPU's -------===//
//
// Element i's draw depends only on the stream state at entry and i
// (DropoutDesc.h: splitmix64 is a counter plus a mix), so each thread draws
// its elements independently and the mask and output are those of the CPU
// for the same state. The state advances on the host by n, as on the CPU (in
// a graph, each launch gives each call its state: StepGraph::rngStarts).
// random_normal's values are the CPU's but for the last bit of the device's
// double log and cos (rounded to float: almost always the same float).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/DropoutDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

/// Where a call of `count` draws starts on the stream: on the host's state
/// (which moves on by count here), or in a graph's capture at its slot of the
/// graph's states, which each launch fills (the host's state moves then).
/// Dropout and the random kernels share the graph's 256 slots.
struct Draws {
  uint64_t start = 0;
  const uint64_t *slot = nullptr;
  bool refused = false;
};

Draws takeDraws(mgsrt_ctx_t *ctx, const char *kernel, int64_t count) {
  Draws d;
  StepGraph &g = state(ctx).graph;
  if (!g.capturing) {
    d.start = ctx->rngState;
    ctx->rngState = dropoutAdvance(d.start, count);
    return d;
  }
  if (g.capturedMasks.size() == StepGraph::kDropouts) {
    refuseInCapture(ctx, kernel, "is one random draw more than a graph's 256 (dropout and others)");
    d.refused = true;
    return d;
  }
  d.slot = g.rngStarts + g.capturedMasks.size();
  g.capturedMasks.push_back(count);
  return d;
}

// x and y (dy and dx) may be one buffer: no __restrict__ on them.
// Element i belongs to mask entry i / inner; the thread of its block's first
// element writes the mask entry.
// The stream state is `state`, or in a graph *stateAt (its slot, filled by
// each launch).
__global__ void dropoutFwdKernel(const float *x, float *y,
                                 uint8_t *__restrict__ mask, int64_t n, int64_t inner,
                                 uint64_t state, const uint64_t *__restrict__ stateAt,
                                 uint64_t threshold, float scale) {
  if (stateAt)
    state = *stateAt;
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    const int64_t m = i / inner;
    const bool keep = dropoutKeep(state, m, threshold);
    y[i] = keep ? x[i] * scale : 0.0f;
    if (mask && i == m * inner)
      mask[m] = keep ? 1 : 0;
  }
}

__global__ void dropoutBwdKernel(const float *dy, const uint8_t *__restrict__ mask, float *dx,
                                 int64_t n, int64_t inner, float scale) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    dx[i] = mask[i / inner] ? dy[i] * scale : 0.0f;
}

mgsrt_status_t dropoutFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::dropout_fwd);
  DropoutParams p;
  if (parseDropout(ctx, kernel, desc, bufs, false, p))
    return ctx->status;
  const int64_t n = p.n;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  uint8_t *mask = static_cast<uint8_t *>(bufs[2]);
  cudaStream_t st = state(ctx).stream;
  if (!p.training) {
    if (n > 0 && y != x)
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(y, x, sizeof(float) * n,
                                                    cudaMemcpyDeviceToDevice, st));
    if (n > 0 && mask)
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(mask, 1, p.masks, st));
    return MGSRT_OK;
  }
  const Draws d = takeDraws(ctx, kernel, p.masks);
  if (d.refused)
    return ctx->status;
  if (n > 0)
    dropoutFwdKernel<<<gridFor(n, kThreads), kThreads, 0, st>>>(x, y, mask, n, p.inner, d.start,
                                                                d.slot, p.threshold, p.scale);
  return MGSRT_OK;
}

// Normal (uniform = false: a mean, b scale) or uniform (a low, b high) draws.
__global__ void randomKernel(float *__restrict__ y, int64_t n, uint64_t state,
                             const uint64_t *__restrict__ stateAt, bool uniform, double a,
                             double b) {
  if (stateAt)
    state = *stateAt;
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    y[i] = uniform ? uniformDraw(state, i, a, b) : normalDraw(state, i, a, b);
}

mgsrt_status_t randomFill(mgsrt_ctx_t *ctx, Kernel which, const int64_t *desc,
                          void *const *bufs) {
  const char *kernel = kernelName(which);
  const bool uniform = which == Kernel::random_uniform;
  RandomParams p{};
  if (parseRandom(ctx, kernel, desc, bufs, uniform, p))
    return ctx->status;
  const int64_t n = p.n;
  float *y = static_cast<float *>(bufs[0]);
  cudaStream_t st = state(ctx).stream;
  const Draws d = takeDraws(ctx, kernel, n);
  if (d.refused)
    return ctx->status;
  if (n > 0)
    randomKernel<<<gridFor(n, kThreads), kThreads, 0, st>>>(y, n, d.start, d.slot, uniform, p.a,
                                                            p.b);
  return MGSRT_OK;
}

mgsrt_status_t dropoutBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::dropout_bwd);
  DropoutParams p;
  if (parseDropout(ctx, kernel, desc, bufs, true, p))
    return ctx->status;
  const int64_t n = p.n;
  const float *dy = static_cast<const float *>(bufs[0]);
  const uint8_t *mask = static_cast<const uint8_t *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  if (n == 0)
    return MGSRT_OK;
  cudaStream_t st = state(ctx).stream;
  if (!p.training) {
    if (dx != dy)
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(dx, dy, sizeof(float) * n,
                                                    cudaMemcpyDeviceToDevice, st));
    return MGSRT_OK;
  }
  dropoutBwdKernel<<<gridFor(n, kThreads), kThreads, 0, st>>>(dy, mask, dx, n, p.inner, p.scale);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t dropout_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::dropout_fwd), desc, bufs,
                       [&] { return dropoutFwd(ctx, desc, bufs); });
}
mgsrt_status_t dropout_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::dropout_bwd), desc, bufs,
                       [&] { return dropoutBwd(ctx, desc, bufs); });
}

mgsrt_status_t random_normal(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::random_normal), desc, bufs,
                       [&] { return randomFill(ctx, Kernel::random_normal, desc, bufs); });
}
mgsrt_status_t random_uniform(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::random_uniform), desc, bufs,
                       [&] { return randomFill(ctx, Kernel::random_uniform, desc, bufs); });
}

} // namespace mgs::rt::cuda
