//===- BinaryMath.h - The binary ops, for the CPU and a GPU ----*- C++ -*-===//
//
// One definition of the broadcasting binary ops and their operands'
// gradients, compiled by CPU/Elementwise.cpp and by CUDA/Elementwise.cu, and
// one dispatch from the runtime op code to the template instance. The
// comparisons give 1 or 0 (0 where an operand is NaN) and carry no
// gradient; keep_where gives lhs where rhs is not 0 and 0 elsewhere (NaN
// and infinities of lhs where rhs is 0 included), its gradient lhs's alone.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_BINARYMATH_H
#define MGSRT_KERNELS_BINARYMATH_H

#include "mgsrt/mgsrt.h"

#include <type_traits>

#ifdef __CUDACC__
#define MGSRT_BINARY_FN __host__ __device__ __forceinline__
#else
#define MGSRT_BINARY_FN inline
#endif

namespace mgs::rt::binary {

template <int Op> MGSRT_BINARY_FN float value(float a, float b) {
  if constexpr (Op == MGSRT_BINARY_ADD)
    return a + b;
  else if constexpr (Op == MGSRT_BINARY_SUB)
    return a - b;
  else if constexpr (Op == MGSRT_BINARY_MUL)
    return a * b;
  else if constexpr (Op == MGSRT_BINARY_DIV)
    return a / b;
  else if constexpr (Op == MGSRT_BINARY_GREATER)
    return a > b ? 1.0f : 0.0f;
  else if constexpr (Op == MGSRT_BINARY_GREATER_EQUAL)
    return a >= b ? 1.0f : 0.0f;
  else if constexpr (Op == MGSRT_BINARY_EQUAL)
    return a == b ? 1.0f : 0.0f;
  else // keep_where
    return b != 0.0f ? a : 0.0f;
}

/// The gradient of one operand (Target 0: lhs, 1: rhs) at one out element.
template <int Op, int Target> MGSRT_BINARY_FN float grad(float g, float a, float b) {
  if constexpr (Op == MGSRT_BINARY_ADD)
    return g;
  else if constexpr (Op == MGSRT_BINARY_SUB)
    return Target == 0 ? g : -g;
  else if constexpr (Op == MGSRT_BINARY_MUL)
    return Target == 0 ? g * b : g * a;
  else if constexpr (Op == MGSRT_BINARY_DIV)
    return Target == 0 ? g / b : -g * a / (b * b);
  else if constexpr (Op == MGSRT_BINARY_KEEP_WHERE)
    return Target == 0 && b != 0.0f ? g : 0.0f;
  else // the comparisons: piecewise constant
    return 0.0f;
}

/// f(std::integral_constant<int, Op>()) for the runtime op code `op` (in
/// range: parseBinary checked it).
template <typename F> auto dispatch(int64_t op, F &&f) {
  switch (op) {
  case MGSRT_BINARY_ADD:
    return f(std::integral_constant<int, MGSRT_BINARY_ADD>());
  case MGSRT_BINARY_SUB:
    return f(std::integral_constant<int, MGSRT_BINARY_SUB>());
  case MGSRT_BINARY_MUL:
    return f(std::integral_constant<int, MGSRT_BINARY_MUL>());
  case MGSRT_BINARY_DIV:
    return f(std::integral_constant<int, MGSRT_BINARY_DIV>());
  case MGSRT_BINARY_GREATER:
    return f(std::integral_constant<int, MGSRT_BINARY_GREATER>());
  case MGSRT_BINARY_GREATER_EQUAL:
    return f(std::integral_constant<int, MGSRT_BINARY_GREATER_EQUAL>());
  case MGSRT_BINARY_EQUAL:
    return f(std::integral_constant<int, MGSRT_BINARY_EQUAL>());
  default:
    return f(std::integral_constant<int, MGSRT_BINARY_KEEP_WHERE>());
  }
}

} // namespace mgs::rt::binary

#endif // MGSRT_KERNELS_BINARYMATH_H
