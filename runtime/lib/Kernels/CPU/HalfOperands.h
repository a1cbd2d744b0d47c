//===- HalfOperands.h - Operands rounded to IEEE half ------------*- C++ -*-===//
//
// MGSRT_PRECISION_F16 on the CPU. A GEMM, matmul or convolution of half
// operands accumulating in float32 gives the same products as the float32
// kernel given the operands rounded to half (a product of two 11-bit
// significands is exact in float32's 24), so the kernels round copies of
// their operands and run their float32 path. CPUs without half arithmetic
// (most) get the numerics of one that has it, not its speed.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_HALFOPERANDS_H
#define MGSRT_KERNELS_CPU_HALFOPERANDS_H

#include "Support/Common.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace mgs::rt::cpu {

/// `x` rounded to the nearest IEEE half, ties to even, as a float: above
/// half's largest finite value (65504) to infinity, below its least normal
/// (2^-14) to a multiple of 2^-24 (its subnormals, or zero); NaN stays NaN.
/// Branch-free, so loops over it vectorize; equal bit for bit to the F16C
/// conversion (vcvtps2ph, round to nearest) and back on every non-NaN float.
inline float roundToHalf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t sign = u & 0x80000000u, a = u ^ sign;
  // A normal half keeps 10 of float's 23 fraction bits; a carry out of them
  // moves to the next binade, which is still exact.
  uint32_t r = (a + 0x00000fffu + ((a >> 13) & 1u)) & 0xffffe000u;
  r = r > 0x477fe000u ? 0x7f800000u : r; // past 65504: infinity
  // Below 2^-14 the spacing is 2^-24: adding 0.5 (whose ulp that is) rounds.
  float fa;
  std::memcpy(&fa, &a, sizeof fa);
  const float small = (fa + 0.5f) - 0.5f;
  uint32_t s;
  std::memcpy(&s, &small, sizeof s);
  r = a < 0x38800000u ? s : r;
  r = a > 0x7f800000u ? a : r; // NaN
  r |= sign;
  float out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

/// For MGSRT_PRECISION_F16: points each operand at a copy rounded to half,
/// in the context's one scratch array (valid until the next call; the
/// kernels run one at a time). Records an error and returns it only when the
/// scratch cannot grow.
mgsrt_status_t halfOperands(mgsrt_ctx_t *ctx, const char *kernel,
                            std::initializer_list<RoundedOperand> operands);

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_HALFOPERANDS_H
