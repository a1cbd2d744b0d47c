//===- BufferPlan.h - Liveness-based arena placement ------------*- C++ -*-===//

#ifndef MGS_CONVERSION_TRAINTORUNTIME_BUFFERPLAN_H
#define MGS_CONVERSION_TRAINTORUNTIME_BUFFERPLAN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mgs {

/// One buffer to place: `bytes` live from step `first` to step `last`
/// (inclusive) of a straight-line program.
struct BufferInterval {
  int64_t bytes;
  int64_t first, last;
};

/// Offsets into one arena such that buffers whose intervals overlap never
/// overlap in memory; each offset is a multiple of `alignment`. Greedy: the
/// largest buffers first, each at the lowest offset that fits.
struct BufferPlan {
  llvm::SmallVector<int64_t> offsets;
  int64_t arenaBytes = 0;
};
BufferPlan planBuffers(llvm::ArrayRef<BufferInterval> buffers, int64_t alignment = 64);

} // namespace mgs

#endif // MGS_CONVERSION_TRAINTORUNTIME_BUFFERPLAN_H
