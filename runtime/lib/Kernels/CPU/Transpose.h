//===- Transpose.h - The CPU transpose, for other kernels ------*- C++ -*-===//
//
// The transpose kernel's copy (Shape.cpp: contiguous runs where the innermost
// dim stays innermost, 32 x 32 tiles otherwise, on the OpenMP threads), for
// kernels that reorder their own operands (GroupedConvWeights.cpp's
// channels-last copies).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_TRANSPOSE_H
#define MGSRT_KERNELS_CPU_TRANSPOSE_H

#include "Descriptors/ShapeDesc.h"

namespace mgs::rt::cpu {

/// y = x transposed as `tp` says (transposeParams, or a parsed descriptor).
void transpose(const float *x, float *y, const TransposeParams &tp);

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_TRANSPOSE_H
