//===- UnaryMath.h - The later unary ops, for the CPU and a GPU -*- C++ -*-===//
//
// One definition of abs, log, softsign, mish, elu, celu, selu, round, floor and ceil and their
// derivatives, compiled by CPU/Elementwise.cpp and by CUDA/Elementwise.cu.
// PyTorch's forms: elu, celu and selu through expm1 (exact near 0), mish
// with softplus(x) = x above 20 (torch's threshold), abs's derivative 0 at
// 0. alpha and beta are the descriptor's (selu: alpha, gamma as beta).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_UNARYMATH_H
#define MGSRT_KERNELS_UNARYMATH_H

#include "mgsrt/mgsrt.h"

#include <cmath>

#ifdef __CUDACC__
#define MGSRT_UNARY_FN __device__ __forceinline__
#else
#define MGSRT_UNARY_FN inline
#endif

namespace mgs::rt::unary {

/// Whether unary op `op` is one of this file's.
constexpr bool isLaterOp(int op) { return op >= MGSRT_UNARY_ABS && op <= MGSRT_UNARY_CEIL; }

MGSRT_UNARY_FN float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

template <int Op> MGSRT_UNARY_FN float value(float x, float alpha, float beta) {
  if constexpr (Op == MGSRT_UNARY_ABS)
    return fabsf(x);
  else if constexpr (Op == MGSRT_UNARY_LOG)
    return logf(x);
  else if constexpr (Op == MGSRT_UNARY_SOFTSIGN)
    return x / (1.0f + fabsf(x));
  else if constexpr (Op == MGSRT_UNARY_MISH)
    return x * tanhf(softplus(x));
  else if constexpr (Op == MGSRT_UNARY_ELU)
    return x > 0.0f ? x : alpha * expm1f(x);
  else if constexpr (Op == MGSRT_UNARY_CELU)
    return x > 0.0f ? x : alpha * expm1f(x / alpha);
  else if constexpr (Op == MGSRT_UNARY_ROUND)
    return nearbyintf(x); // half to even (the default rounding mode)
  else if constexpr (Op == MGSRT_UNARY_FLOOR)
    return floorf(x);
  else if constexpr (Op == MGSRT_UNARY_CEIL)
    return ceilf(x);
  else // selu: gamma (beta) times elu
    return beta * (x > 0.0f ? x : alpha * expm1f(x));
}

/// dy/dx times g, from x (every op here reads its input).
template <int Op> MGSRT_UNARY_FN float grad(float x, float g, float alpha, float beta) {
  if constexpr (Op == MGSRT_UNARY_ABS)
    return x > 0.0f ? g : x < 0.0f ? -g : 0.0f;
  else if constexpr (Op == MGSRT_UNARY_LOG)
    return g / x;
  else if constexpr (Op == MGSRT_UNARY_SOFTSIGN) {
    const float d = 1.0f + fabsf(x);
    return g / (d * d);
  } else if constexpr (Op == MGSRT_UNARY_MISH) {
    const float t = tanhf(softplus(x)), s = 1.0f / (1.0f + expf(-x));
    return g * (t + x * s * (1.0f - t * t));
  } else if constexpr (Op == MGSRT_UNARY_ELU)
    return x > 0.0f ? g : g * alpha * expf(x);
  else if constexpr (Op == MGSRT_UNARY_CELU)
    return x > 0.0f ? g : g * expf(x / alpha);
  else if constexpr (Op == MGSRT_UNARY_ROUND || Op == MGSRT_UNARY_FLOOR || Op == MGSRT_UNARY_CEIL)
    return 0.0f; // piecewise constant
  else
    return x > 0.0f ? g * beta : g * beta * alpha * expf(x);
}

} // namespace mgs::rt::unary

#endif // MGSRT_KERNELS_UNARYMATH_H
