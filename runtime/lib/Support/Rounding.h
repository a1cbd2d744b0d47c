//===- Rounding.h - float32 to half and bfloat16, to nearest even -*- C++ -*-===//
//
// The two 16-bit float formats the runtime rounds to: a GEMM, matmul or
// convolution's operands in reduced precision on a CPU without its
// arithmetic (Kernels/CPU/RoundedOperands.h), and a sparse exchange's values
// on the wire (Comm/WireValues.h). Each is rounded to nearest, ties to even,
// as the hardware conversions do. Branch-free, so loops over them vectorize.
// (GCC 12 has no bfloat16 arithmetic type: bfloat16 is converted by its bits.)
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_SUPPORT_ROUNDING_H
#define MGSRT_SUPPORT_ROUNDING_H

#include <cstdint>
#include <cstring>

namespace mgs::rt {

/// `x` rounded to the nearest IEEE half, ties to even, as a float: above
/// half's largest finite value (65504) to infinity, below its least normal
/// (2^-14) to a multiple of 2^-24 (its subnormals, or zero); NaN stays NaN.
/// Equal bit for bit to the F16C conversion (vcvtps2ph, round to nearest)
/// and back on every non-NaN float.
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

/// x as bfloat16 bits, rounded to nearest even (past bfloat16's largest
/// finite value to infinity; float's subnormals to bfloat16's); a NaN stays
/// a (quiet) NaN.
inline uint16_t floatToBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

inline float bf16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// `x` rounded to the nearest bfloat16, as a float.
inline float roundToBf16(float x) { return bf16ToFloat(floatToBf16(x)); }

} // namespace mgs::rt

#endif // MGSRT_SUPPORT_ROUNDING_H
