//===- Dropout.cpp - Dropout with the context's splitmix64 stream --------===//
//
// Element i of a call draws the (i+1)-th value of the stream from the state
// at entry: splitmix64 is a counter plus a mix, so element i's value is
// mix(state + (i+1) * gamma) and the elements are drawn in parallel; the
// state then advances by n steps, exactly as n sequential nextRandom calls.
// An element is kept when u >= ratio, u in [0, 1) from the top 24 bits.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cstring>

using namespace mgs::rt;

namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

mgsrt_status_t checkDropoutDesc(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc) {
  if (desc[0] < 0)
    return invalidArg(ctx, kernel, "element count ", desc[0], " is negative");
  double ratio = descF64(desc, 1);
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return invalidArg(ctx, kernel, "ratio ", ratio, " is outside [0, 1]");
  return MGSRT_OK;
}

mgsrt_status_t dropoutFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "dropout_fwd";
  if (checkDropoutDesc(ctx, kernel, desc))
    return ctx->status;
  const int64_t n = desc[0];
  if (!BufferCheck(ctx, kernel, bufs).require(0, "x", n).require(1, "y", n).ok)
    return ctx->status;
  const double ratio = descF64(desc, 1);
  const bool training = desc[2] != 0;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  uint8_t *mask = static_cast<uint8_t *>(bufs[2]);
  if (!training) {
    if (y != x)
      std::memcpy(y, x, sizeof(float) * n);
    if (mask)
      std::memset(mask, 1, n);
    return MGSRT_OK;
  }
  const uint64_t state = ctx->rngState;
  const float scale = ratio < 1.0 ? static_cast<float>(1.0 / (1.0 - ratio)) : 0.0f;
  // u >= ratio  <=>  top24 >= ceil(ratio * 2^24) (u = top24 * 2^-24 exactly).
  const double scaled = ratio * 16777216.0;
  uint64_t threshold = static_cast<uint64_t>(scaled);
  if (static_cast<double>(threshold) < scaled)
    ++threshold;
#pragma omp parallel for simd if (n >= kParallelGrain / 4) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = mix64(state + static_cast<uint64_t>(i + 1) * kGamma);
    bool keep = (r >> 40) >= threshold;
    y[i] = keep ? x[i] * scale : 0.0f;
    if (mask)
      mask[i] = keep ? 1 : 0;
  }
  ctx->rngState = state + static_cast<uint64_t>(n) * kGamma;
  return MGSRT_OK;
}

mgsrt_status_t dropoutBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = "dropout_bwd";
  if (checkDropoutDesc(ctx, kernel, desc))
    return ctx->status;
  const bool training = desc[2] != 0;
  const int64_t n = desc[0];
  BufferCheck check(ctx, kernel, bufs);
  check.require(0, "dy", n);
  if (training)
    check.require(1, "mask", n);
  if (!check.require(2, "dx", n).ok)
    return ctx->status;
  const double ratio = descF64(desc, 1);
  const float *dy = static_cast<const float *>(bufs[0]);
  const uint8_t *mask = static_cast<const uint8_t *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  if (!training) {
    if (dx != dy)
      std::memcpy(dx, dy, sizeof(float) * n);
    return MGSRT_OK;
  }
  const float scale = ratio < 1.0 ? static_cast<float>(1.0 / (1.0 - ratio)) : 0.0f;
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = mask[i] ? dy[i] * scale : 0.0f;
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t dropout_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "dropout_fwd", desc, bufs, [&] { return dropoutFwd(ctx, desc, bufs); });
}
mgsrt_status_t dropout_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, "dropout_bwd", desc, bufs, [&] { return dropoutBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
