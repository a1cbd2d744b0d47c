//===- GatherDesc.h - Gather descriptors, parsed and checked ----*- C++ -*-===//
//
// The descriptor and index checks of gather_fwd / gather_bwd (rows of a table
// at computed indices), shared by every device's kernels so that they reject
// the same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_GATHERDESC_H
#define MGSRT_DESCRIPTORS_GATHERDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt {

struct GatherShape {
  int64_t rows, rowSize, count;
};

/// The descriptor's shape: rows >= 1, row size and count >= 0.
inline mgsrt_status_t parseGatherShape(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                       GatherShape &g) {
  using F = mgs::contract::GatherDesc;
  g = {desc[F::Rows], desc[F::RowSize], desc[F::Count]};
  if (g.rows < 1 || g.rowSize < 0 || g.count < 0)
    return invalidArg(ctx, kernel, "rows=", g.rows, " row_size=", g.rowSize, " count=", g.count,
                      ": rows must be positive, the others non-negative");
  return MGSRT_OK;
}

/// Index `i` (value `index`) outside the table: the error.
inline mgsrt_status_t badGatherIndex(mgsrt_ctx_t *ctx, const char *kernel, int64_t i,
                                     int64_t index, int64_t rows) {
  return invalidArg(ctx, kernel, "index ", i, " is ", index, ", outside the table's rows [-", rows,
                    ", ", rows, ")");
}

} // namespace mgs::rt

#endif // MGSRT_DESCRIPTORS_GATHERDESC_H
