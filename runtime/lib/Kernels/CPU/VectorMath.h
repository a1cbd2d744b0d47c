//===- VectorMath.h - exp, sigmoid, tanh that vectorize -------*- C++ -*-===//
//
// Float exp, sigmoid and tanh without libm calls, for loops over whole rows
// (the LSTM and GRU gates, softmax and its cross-entropy): exp is Cephes'
// expf (range reduction by ln 2, a degree-6 polynomial, within 2 ulp of
// std::exp; 0 below about -87.7, -inf included), tanh a [13/6] rational
// approximation (within a few ulp of std::tanh), so results differ from
// libm's only in float rounding. They have no branches, so a loop
// over them vectorizes when its file is compiled with -fno-trapping-math
// -fno-thread-jumps (runtime/lib/Kernels/CMakeLists.txt; otherwise GCC keeps
// the selects as branches); a function holding such a loop carries
// MGSRT_SIMD_CLONES: one copy for AVX-512, one for AVX2 + FMA and one for
// baseline x86-64 (what the runtime is built for), the best one picked once
// by the CPU the executable runs on.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_VECTORMATH_H
#define MGSRT_KERNELS_CPU_VECTORMATH_H

#include <cstdint>
#include <cstring>

/// On x86-64 with GCC: a copy of the function for AVX-512 (x86-64-v4), one
/// for AVX2 + FMA (x86-64-v3) and the baseline, the best one picked at load
/// time (an ifunc); elsewhere nothing.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define MGSRT_SIMD_CLONES                                                                          \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MGSRT_SIMD_CLONES
#endif

namespace mgs::rt::cpu {

/// x clamped to [-bound, bound] (NaN stays NaN).
inline float clamp(float x, float bound) {
  x = x > bound ? bound : x;
  return x < -bound ? -bound : x;
}

/// exp(x) for x in float range (Cephes' expf).
inline float fastExp(float x) {
  x = clamp(x, 88.3762626647949f);
  float fx = x * 1.44269504088896341f + 0.5f;
  // A NaN (the clamp lets it through) converts to no int32: take 0 instead,
  // the result is NaN all the same (y is), without undefined behaviour in
  // the conversion and the shift below. Other inputs keep their bits.
  fx = fx == fx ? fx : 0.0f;
  float n = static_cast<float>(static_cast<int32_t>(fx));
  n -= n > fx ? 1.0f : 0.0f; // floor
  x = x - n * 0.693359375f + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * x + 1.3981999507e-3f;
  y = y * x + 8.3334519073e-3f;
  y = y * x + 4.1665795894e-2f;
  y = y * x + 1.6666665459e-1f;
  y = y * x + 5.0000001201e-1f;
  y = y * x * x + x + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}

/// The logistic function on a float.
inline float sigmoid(float x) { return 1.0f / (1.0f + fastExp(-x)); }

/// tanh(x): a [13/6] rational approximation, exact to float rounding on the
/// clamped range |x| <= 7.9 (tanh is 1 to float precision beyond).
inline float fastTanh(float x) {
  const float c = clamp(x, 7.90531110763549805f);
  const float x2 = c * c;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float r = c * p / q;
  return x * x < 1.6e-7f ? x : r;
}

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_VECTORMATH_H
