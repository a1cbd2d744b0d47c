//===- DropoutDesc.h - The random stream's kernels' descriptors -*- C++ -*-===//
//
// Shared by the CPU (Dropout.cpp) and CUDA (CUDA/Dropout.cu) kernels of
// dropout, random_normal and random_uniform: the descriptor and buffer
// checks, and the per-element draw, so both devices keep exactly the same
// elements for the same stream state (and draw the same values, the normal
// ones but for the last bit of the libraries' log and cos).
//
// Mask entry m of a call (the block of `inner` consecutive elements from
// m * inner) draws the (m+1)-th value of the stream from the state at entry:
// splitmix64 is a counter plus a mix, so entry m's value is
// mix(state + (m+1) * gamma) and the entries are drawn in parallel; the state
// then advances by n / inner steps, exactly as that many sequential
// nextRandom calls. An entry is kept when u >= ratio, u in [0, 1) from the
// top 24 bits. (inner = 1 is ordinary dropout; stochastic depth keeps or
// drops a whole sample: inner = the elements of one sample.)
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_DROPOUTDESC_H
#define MGSRT_DESCRIPTORS_DROPOUTDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <cmath>

namespace mgs::rt {

constexpr uint64_t kDropoutGamma = 0x9E3779B97F4A7C15ull;

/// splitmix64's output mix (nextRandom in Context.h without the increment).
MGSRT_HOST_DEVICE inline uint64_t dropoutMix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Draw i (64 bits) of a call that starts at stream state `state`: the one rule
/// dropout's masks and the random_normal / random_uniform values share.
MGSRT_HOST_DEVICE inline uint64_t streamValue(uint64_t state, int64_t i) {
  return dropoutMix64(state + static_cast<uint64_t>(i + 1) * kDropoutGamma);
}

/// Whether mask entry m of a call that starts at stream state `state` is kept.
MGSRT_HOST_DEVICE inline bool dropoutKeep(uint64_t state, int64_t m, uint64_t threshold) {
  const uint64_t r = streamValue(state, m);
  return (r >> 40) >= threshold;
}

/// The stream state after a call of n elements that started at `state`.
inline uint64_t dropoutAdvance(uint64_t state, int64_t n) {
  return state + static_cast<uint64_t>(n) * kDropoutGamma;
}

/// Value i of a random_normal call that starts at stream state `state`
/// (mgsrt.h: Box-Muller on the draw's two 32-bit halves, in double).
MGSRT_HOST_DEVICE inline float normalDraw(uint64_t state, int64_t i, double mean, double scale) {
  const uint64_t r = streamValue(state, i);
  const double u1 = (static_cast<double>(r >> 32) + 1.0) * 0x1p-32; // (0, 1]
  const double u2 = static_cast<double>(r & 0xFFFFFFFFull) * 0x1p-32;
  const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  return static_cast<float>(mean + scale * z);
}

/// Value i of a random_uniform call that starts at stream state `state`
/// (mgsrt.h: the top 24 bits of the draw, as dropout's, scaled in double; the
/// float below `high` should the rounding reach it).
MGSRT_HOST_DEVICE inline float uniformDraw(uint64_t state, int64_t i, double low, double high) {
  const uint64_t r = streamValue(state, i);
  const float v = static_cast<float>(low + (high - low) * (static_cast<double>(r >> 40) * 0x1p-24));
  const float top = static_cast<float>(high);
  return v < top ? v : nextafterf(top, -INFINITY);
}

/// random_normal's (a: mean, b: scale) or random_uniform's (a: low, b: high)
/// descriptor.
struct RandomParams {
  int64_t n;
  double a, b;
};
static_assert(int64_t{mgs::contract::RandomNormalDesc::MeanBits} ==
                      int64_t{mgs::contract::RandomUniformDesc::LowBits} &&
                  int64_t{mgs::contract::RandomNormalDesc::ScaleBits} ==
                      int64_t{mgs::contract::RandomUniformDesc::HighBits},
              "the random kernels' descriptors share their layout");

/// random_normal's or (`uniform`) random_uniform's descriptor and buffer (bufs: y).
inline mgsrt_status_t parseRandom(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                  void *const *bufs, bool uniform, RandomParams &p) {
  using F = mgs::contract::RandomNormalDesc;
  p.n = desc[F::Count];
  if (p.n < 0)
    return invalidArg(ctx, kernel, "element count ", p.n, " is negative");
  p.a = descF64(desc, F::MeanBits);
  p.b = descF64(desc, F::ScaleBits);
  const char *a = uniform ? "low " : "mean ", *b = uniform ? " or high " : " or scale ";
  if (!std::isfinite(p.a) || !std::isfinite(p.b))
    return invalidArg(ctx, kernel, a, p.a, b, p.b, " is not finite");
  if (uniform && !(p.a < p.b))
    return invalidArg(ctx, kernel, "low ", p.a, " is not below high ", p.b);
  BufferCheck check(ctx, kernel, bufs);
  check.require(0, "y", p.n);
  return check.ok ? MGSRT_OK : ctx->status;
}

struct DropoutParams {
  int64_t n;
  int64_t inner;      // elements a mask entry covers
  int64_t masks;      // n / inner mask entries (and draws)
  double ratio;
  bool training;
  float scale;        // 1 / (1 - ratio) (0 when ratio = 1: nothing is kept)
  uint64_t threshold; // keep when top24 >= threshold
};

/// dropout_fwd (bufs: x, y, mask?) or dropout_bwd (bufs: dy, mask, dx; the
/// mask is read only in training).
inline mgsrt_status_t parseDropout(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                   void *const *bufs, bool bwd, DropoutParams &p) {
  using F = mgs::contract::DropoutDesc;
  p.n = desc[F::Count];
  if (p.n < 0)
    return invalidArg(ctx, kernel, "element count ", p.n, " is negative");
  p.ratio = descF64(desc, F::RatioBits);
  if (!(p.ratio >= 0.0 && p.ratio <= 1.0))
    return invalidArg(ctx, kernel, "ratio ", p.ratio, " is outside [0, 1]");
  p.training = desc[F::Training] != 0;
  p.inner = desc[F::Inner];
  if (p.inner < 1 || p.n % p.inner != 0)
    return invalidArg(ctx, kernel, "a mask entry's element count ", p.inner,
                      " is not a positive divisor of the element count ", p.n);
  p.masks = p.n / p.inner;
  const int64_t n = p.n;
  BufferCheck check(ctx, kernel, bufs);
  if (!bwd) {
    check.require(0, "x", n).require(1, "y", n);
  } else {
    check.require(0, "dy", n);
    if (p.training)
      check.require(1, "mask", p.masks);
    check.require(2, "dx", n);
  }
  if (!check.ok)
    return ctx->status;
  p.scale = p.ratio < 1.0 ? static_cast<float>(1.0 / (1.0 - p.ratio)) : 0.0f;
  // u >= ratio  <=>  top24 >= ceil(ratio * 2^24) (u = top24 * 2^-24 exactly).
  const double scaled = p.ratio * 16777216.0;
  p.threshold = static_cast<uint64_t>(scaled);
  if (static_cast<double>(p.threshold) < scaled)
    ++p.threshold;
  return MGSRT_OK;
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_DROPOUTDESC_H
