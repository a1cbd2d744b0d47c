//===- RoundedOperands.h - Reduced precision by rounded operands -*- C++ -*-===//
//
// MGSRT_PRECISION_F16 on the CPU, and MGSRT_PRECISION_BF16 on a CPU for which
// oneDNN has no bfloat16 kernels (they need AVX-512). A GEMM, matmul or
// convolution of half or bfloat16 operands accumulating in float32 gives the
// same products as the float32 kernel given the operands rounded to that
// format (a product of two 11-bit or 8-bit significands is exact in
// float32's 24), so the kernels round copies of their operands and run their
// float32 path. Such a CPU gets the numerics of one that has the arithmetic,
// not its speed.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_ROUNDEDOPERANDS_H
#define MGSRT_KERNELS_CPU_ROUNDEDOPERANDS_H

#include "Support/Common.h"

#include <initializer_list>

namespace mgs::rt::cpu {

/// Whether oneDNN has bfloat16 GEMM and convolution kernels for this CPU
/// (asked once a process; DNNL_MAX_CPU_ISA below AVX-512 says no).
bool hasBf16Kernels();

/// Whether a kernel of precision `p` runs oneDNN's bfloat16 primitives; when
/// not, it runs its float32 path, on rounded operands unless `p` is F32.
inline bool nativeBf16(Precision p) { return p == Precision::BF16 && hasBf16Kernels(); }

/// Whether this CPU computes in precision `p`'s own arithmetic (float32, and
/// bfloat16 with oneDNN's kernels) rather than on rounded operands.
inline bool nativePrecision(Precision p) { return p == Precision::F32 || nativeBf16(p); }

/// For a precision this CPU does not compute in (nativePrecision false):
/// points each operand at a copy rounded to it, in the context's one scratch
/// array (valid until the next call; the kernels run one at a time). Nothing
/// otherwise. Records an error and returns it only when the scratch cannot
/// grow.
mgsrt_status_t roundedOperands(mgsrt_ctx_t *ctx, const char *kernel, Precision p,
                               std::initializer_list<RoundedOperand> operands);

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_ROUNDEDOPERANDS_H
