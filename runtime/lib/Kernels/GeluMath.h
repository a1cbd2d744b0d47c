//===- GeluMath.h - GELU and its derivative, for the CPU and a GPU -*- C++ -*-===//
//
// One definition of the GELU kernels' arithmetic, compiled by CPU/Gelu.cpp
// (plain float operations in a file built with -ffp-contract=off; the loops
// vectorize: no branches, no libm calls) and by CUDA/Gelu.cu (the same
// operations as _rn intrinsics, never contracted into an FMA), so both
// devices give the same bits. exp is VectorMath.h's fastExp (Cephes' expf)
// on either.
//
// Exact form: y = x Phi(x), Phi(x) = erfc(-x / sqrt(2)) / 2, with
// erfc(z) = exp(-z^2) t P(t), t = 1 / (1 + z / 2) for z = |x| / sqrt(2) >= 0,
// P a degree-10 polynomial fitted here (least squares on relative error over
// z in [0, 10], 2e-8 in double); Phi(x) = 1 - erfc(z) / 2 for x >= 0.
// dy/dx = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi), from the
// same exp. Over x in [-20, 20] (steps of 1e-4, against double): Phi within
// 1.7e-7, and 1.3e-6 relative for x > -4 (the rounding of z^2 in exp), where
// PyTorch's 0.5 (1 + erf(x / sqrt(2))) in float cancels to 2e-3 at -4;
// dy/dx within 1.6e-7. The tanh form's y: 1.3e-6 relative for x > -4, dy/dx
// within 1.9e-7 (runtime/test/Kernels/GeluTest.cpp checks these bounds).
//
// Tanh form: 0.5 (1 + tanh(u)) = sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715
// x^3), so y = x s with s = 1 / (1 + exp(-v)), v = 2u, and dy/dx = s + x s
// (1 - s) dv/dx, s (1 - s) as exp(-v) s^2 (no cancellation as s nears 1).
// s and the derivative are taken at x clamped to [-10, 10], so that exp(-v)
// and dv/dx stay finite: above 10, s is 1 and dy/dx 1 in float; below -10, y
// and dy/dx are 0 (less than 1e-36 in truth).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_GELUMATH_H
#define MGSRT_KERNELS_GELUMATH_H

#ifdef __CUDACC__
#include "Kernels/CUDA/DeviceMath.cuh"
#define MGSRT_GELU_FN __device__ __forceinline__
#else
#include "Kernels/CPU/VectorMath.h"
#define MGSRT_GELU_FN inline
#endif

namespace mgs::rt::gelu {

#ifdef __CUDACC__
using cuda::fastExp;
/// x clamped to [-bound, bound] (NaN stays NaN).
MGSRT_GELU_FN float clampAbs(float x, float bound) { return cuda::clampTo(x, bound); }
MGSRT_GELU_FN float mul(float a, float b) { return __fmul_rn(a, b); }
MGSRT_GELU_FN float add(float a, float b) { return __fadd_rn(a, b); }
MGSRT_GELU_FN float sub(float a, float b) { return __fsub_rn(a, b); }
MGSRT_GELU_FN float div(float a, float b) { return __fdiv_rn(a, b); }
#else
using cpu::fastExp;
MGSRT_GELU_FN float clampAbs(float x, float bound) { return cpu::clamp(x, bound); }
MGSRT_GELU_FN float mul(float a, float b) { return a * b; }
MGSRT_GELU_FN float add(float a, float b) { return a + b; }
MGSRT_GELU_FN float sub(float a, float b) { return a - b; }
MGSRT_GELU_FN float div(float a, float b) { return a / b; }
#endif

/// Phi(x), and exp(-x^2 / 2) in `gauss` (0 for |x| > 14).
MGSRT_GELU_FN float normalCdf(float x, float &gauss) {
  const float ax = x < 0.0f ? -x : x;
  float z = mul(ax, 0.707106781186547524f);
  z = z > 10.0f ? 10.0f : z;
  const float t = div(1.0f, add(1.0f, mul(0.5f, z)));
  float p = 4.106707372e-02f;
  p = add(mul(p, t), -2.204134980e-01f);
  p = add(mul(p, t), 4.524605088e-01f);
  p = add(mul(p, t), -3.880000143e-01f);
  p = add(mul(p, t), 6.428161682e-02f);
  p = add(mul(p, t), -1.441289694e-02f);
  p = add(mul(p, t), 7.403417708e-02f);
  p = add(mul(p, t), 1.807663799e-01f);
  p = add(mul(p, t), 2.459410001e-01f);
  p = add(mul(p, t), 2.821845647e-01f);
  p = add(mul(p, t), 2.820911073e-01f);
  gauss = fastExp(-mul(z, z));
  const float half = mul(0.5f, mul(gauss, mul(t, p))); // erfc(z) / 2
  return x < 0.0f ? half : sub(1.0f, half);
}

/// 2 sqrt(2 / pi) and 2 sqrt(2 / pi) 0.044715: v = x (kTanhA + kTanhB x^2).
constexpr float kTanhA = 1.5957691216057308f;
constexpr float kTanhB = 0.0713548162726008f;
/// 1 / sqrt(2 pi).
constexpr float kInvSqrt2Pi = 0.3989422804014327f;

MGSRT_GELU_FN float geluExact(float x) {
  float gauss;
  return mul(x, normalCdf(x, gauss));
}

MGSRT_GELU_FN float geluExactGrad(float x, float dy) {
  float gauss;
  const float cdf = normalCdf(x, gauss);
  return mul(dy, add(cdf, mul(x, mul(gauss, kInvSqrt2Pi))));
}

/// sigmoid(v) of the tanh form, and exp(-v) in `e`.
MGSRT_GELU_FN float tanhCdf(float x, float &e) {
  const float v = mul(x, add(kTanhA, mul(kTanhB, mul(x, x))));
  e = fastExp(-v);
  return div(1.0f, add(1.0f, e));
}

MGSRT_GELU_FN float geluTanh(float x) {
  float e;
  const float s = tanhCdf(clampAbs(x, 10.0f), e);
  return x < -10.0f ? 0.0f : mul(x, s);
}

MGSRT_GELU_FN float geluTanhGrad(float x, float dy) {
  float e;
  const float c = clampAbs(x, 10.0f);
  const float s = tanhCdf(c, e);
  const float q = mul(mul(e, s), s); // s (1 - s), without 1 - s's cancellation
  const float dv = add(kTanhA, mul(3.0f * kTanhB, mul(c, c)));
  return x < -10.0f ? 0.0f : mul(dy, add(s, mul(mul(c, q), dv)));
}

} // namespace mgs::rt::gelu

#undef MGSRT_GELU_FN

#endif // MGSRT_KERNELS_GELUMATH_H
