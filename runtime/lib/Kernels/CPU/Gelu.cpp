//===- Gelu.cpp - GELU and its gradient, exact or tanh form ---------------===//
//
// GeluMath.h's arithmetic over chunks of the tensor: the chunks are spread
// over the OpenMP threads, each one a loop that vectorizes (MGSRT_SIMD_CLONES:
// AVX-512, AVX2 or baseline, chosen by the CPU). The file is built with
// -fno-trapping-math -fno-thread-jumps -ffp-contract=off
// (runtime/lib/Kernels/CMakeLists.txt), as VectorMath.h asks, so the results
// do not depend on the CPU and equal CUDA/Gelu.cu's.
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/GeluDesc.h"
#include "Kernels/GeluMath.h"

#include <algorithm>

using namespace mgs::rt;

namespace {

/// Elements a thread takes at a time.
constexpr int64_t kChunk = 1 << 13;

MGSRT_SIMD_CLONES void forwardChunk(const float *__restrict x, float *__restrict y, int64_t n,
                                    bool tanh) {
  if (tanh) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] = gelu::geluTanh(x[i]);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] = gelu::geluExact(x[i]);
  }
}

MGSRT_SIMD_CLONES void backwardChunk(const float *__restrict x, const float *__restrict dy,
                                     float *__restrict dx, int64_t n, bool tanh) {
  if (tanh) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dx[i] = gelu::geluTanhGrad(x[i], dy[i]);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dx[i] = gelu::geluExactGrad(x[i], dy[i]);
  }
}

/// body(begin, count) over [0, n) in chunks, on the OpenMP threads when n is large.
template <typename Body> void forChunks(int64_t n, Body &&body) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n >= kParallelGrain) schedule(static)
  for (int64_t c = 0; c < chunks; ++c)
    body(c * kChunk, std::min(kChunk, n - c * kChunk));
}

mgsrt_status_t geluFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  GeluParams p;
  if (parseGelu(ctx, kernelName(Kernel::gelu_fwd), desc, bufs, false, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  forChunks(p.n, [&](int64_t i, int64_t count) { forwardChunk(x + i, y + i, count, p.tanh); });
  return MGSRT_OK;
}

mgsrt_status_t geluBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  GeluParams p;
  if (parseGelu(ctx, kernelName(Kernel::gelu_bwd), desc, bufs, true, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  forChunks(p.n, [&](int64_t i, int64_t count) {
    backwardChunk(x + i, dy + i, dx + i, count, p.tanh);
  });
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t gelu_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gelu_fwd), desc, bufs,
                   [&] { return geluFwd(ctx, desc, bufs); });
}
mgsrt_status_t gelu_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gelu_bwd), desc, bufs,
                   [&] { return geluBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
