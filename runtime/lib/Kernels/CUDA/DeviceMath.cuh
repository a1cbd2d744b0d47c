//===- DeviceMath.cuh - VectorMath.h's exp, sigmoid, tanh on a GPU -*- CUDA -*-===//
//
// CPU/VectorMath.h's functions operation for operation: every float step is
// an _rn intrinsic, which nvcc never contracts into an FMA (the CPU files
// that use them are built with -ffp-contract=off), so equal inputs give the
// CPU's results bit for bit. Used by Recurrent.cu and Gelu.cu.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CUDA_DEVICEMATH_CUH
#define MGSRT_KERNELS_CUDA_DEVICEMATH_CUH

#include <cstdint>

namespace mgs::rt::cuda {

/// x clamped to [-bound, bound] (NaN stays NaN).
__device__ inline float clampTo(float x, float bound) {
  x = x > bound ? bound : x;
  return x < -bound ? -bound : x;
}

/// exp(x) for x in float range: CPU/VectorMath.h's fastExp (Cephes' expf).
__device__ inline float fastExp(float x) {
  x = clampTo(x, 88.3762626647949f);
  const float fx = __fadd_rn(__fmul_rn(x, 1.44269504088896341f), 0.5f);
  float n = static_cast<float>(static_cast<int32_t>(fx));
  n = n > fx ? n - 1.0f : n; // floor
  x = __fadd_rn(__fsub_rn(x, __fmul_rn(n, 0.693359375f)), __fmul_rn(n, 2.12194440e-4f));
  float y = 1.9875691500e-4f;
  y = __fadd_rn(__fmul_rn(y, x), 1.3981999507e-3f);
  y = __fadd_rn(__fmul_rn(y, x), 8.3334519073e-3f);
  y = __fadd_rn(__fmul_rn(y, x), 4.1665795894e-2f);
  y = __fadd_rn(__fmul_rn(y, x), 1.6666665459e-1f);
  y = __fadd_rn(__fmul_rn(y, x), 5.0000001201e-1f);
  y = __fadd_rn(__fadd_rn(__fmul_rn(__fmul_rn(y, x), x), x), 1.0f);
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return __fmul_rn(y, __int_as_float(bits));
}

/// The logistic function: CPU/VectorMath.h's sigmoid.
__device__ inline float sigmoid(float x) { return __fdiv_rn(1.0f, __fadd_rn(1.0f, fastExp(-x))); }

/// tanh(x): CPU/VectorMath.h's fastTanh ([13/6] rational, clamped to 7.9).
__device__ inline float fastTanh(float x) {
  const float c = clampTo(x, 7.90531110763549805f);
  const float x2 = __fmul_rn(c, c);
  float p = -2.76076847742355e-16f;
  p = __fadd_rn(__fmul_rn(p, x2), 2.00018790482477e-13f);
  p = __fadd_rn(__fmul_rn(p, x2), -8.60467152213735e-11f);
  p = __fadd_rn(__fmul_rn(p, x2), 5.12229709037114e-08f);
  p = __fadd_rn(__fmul_rn(p, x2), 1.48572235717979e-05f);
  p = __fadd_rn(__fmul_rn(p, x2), 6.37261928875436e-04f);
  p = __fadd_rn(__fmul_rn(p, x2), 4.89352455891786e-03f);
  float q = 1.19825839466702e-06f;
  q = __fadd_rn(__fmul_rn(q, x2), 1.18534705686654e-04f);
  q = __fadd_rn(__fmul_rn(q, x2), 2.26843463243900e-03f);
  q = __fadd_rn(__fmul_rn(q, x2), 4.89352518554385e-03f);
  const float r = __fdiv_rn(__fmul_rn(c, p), q);
  return __fmul_rn(x, x) < 1.6e-7f ? x : r;
}

} // namespace mgs::rt::cuda

#endif // MGSRT_KERNELS_CUDA_DEVICEMATH_CUH
