//===- Broadcast.h - Broadcast shape checks and dim collapsing --*- C++ -*-===//
//
// Shared by the binary elementwise kernels and matmul's batch dims.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_SUPPORT_BROADCAST_H
#define MGSRT_SUPPORT_BROADCAST_H

#include "Support/Common.h"

namespace mgs::rt {

/// Checks that `a` (an operand's shape, left-padded to rank r) broadcasts to
/// `out`: every extent is 1 or equal to out's, and out's extent is the
/// broadcast of a and b. Returns the first bad dim or -1.
inline int64_t badBroadcastDim(int64_t r, const int64_t *out, const int64_t *a,
                               const int64_t *b) {
  for (int64_t i = 0; i < r; ++i) {
    if (a[i] != 1 && a[i] != out[i])
      return i;
    if (b[i] != 1 && b[i] != out[i])
      return i;
    int64_t expect = a[i] != 1 ? a[i] : b[i];
    if (out[i] != expect)
      return i;
  }
  return -1;
}

/// Row-major element strides of an operand of shape `a` read at the positions
/// of `out` (0 along broadcast dims).
inline void broadcastStrides(int64_t r, const int64_t *out, const int64_t *a,
                             int64_t *strides) {
  int64_t s = 1;
  for (int64_t i = r - 1; i >= 0; --i) {
    strides[i] = (a[i] == 1 && out[i] != 1) ? 0 : s;
    s *= a[i];
  }
}

/// A broadcast iteration space: up to kMaxRank dims, each with its extent and
/// the element stride of every operand. Operand 0 is the (dense) output.
template <int NumOps> struct BroadcastSpace {
  int64_t rank = 0;
  int64_t ext[kMaxRank];
  int64_t stride[NumOps][kMaxRank];

  /// Builds from the output shape and each operand's strides (as from
  /// broadcastStrides), dropping unit dims and merging adjacent dims that are
  /// contiguous in every operand. Yields rank 0 for a single element.
  void build(int64_t r, const int64_t *out, const int64_t *const *opStrides) {
    rank = 0;
    for (int64_t i = 0; i < r; ++i) {
      if (out[i] == 1)
        continue;
      bool merge = rank > 0;
      for (int k = 0; k < NumOps && merge; ++k)
        merge = stride[k][rank - 1] == opStrides[k][i] * out[i];
      if (merge) {
        ext[rank - 1] *= out[i];
        for (int k = 0; k < NumOps; ++k)
          stride[k][rank - 1] = opStrides[k][i];
        continue;
      }
      ext[rank] = out[i];
      for (int k = 0; k < NumOps; ++k)
        stride[k][rank] = opStrides[k][i];
      ++rank;
    }
  }
};

} // namespace mgs::rt

#endif // MGSRT_SUPPORT_BROADCAST_H
