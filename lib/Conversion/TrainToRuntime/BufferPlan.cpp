//===- BufferPlan.cpp - Liveness-based arena placement --------------------===//

#include "mgs/Conversion/TrainToRuntime/BufferPlan.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

namespace mgs {

BufferPlan planBuffers(llvm::ArrayRef<BufferInterval> buffers, int64_t alignment) {
  BufferPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  llvm::SmallVector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  auto align = [&](int64_t v) { return (v + alignment - 1) / alignment * alignment; };

  llvm::SmallVector<size_t> placed;
  for (size_t i : order) {
    const BufferInterval &buf = buffers[i];
    // Memory ranges of the placed buffers alive at the same time, by offset.
    llvm::SmallVector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const BufferInterval &other = buffers[j];
      if (other.first <= buf.last && buf.first <= other.last)
        busy.push_back({plan.offsets[j], plan.offsets[j] + other.bytes});
    }
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + buf.bytes <= begin)
        break;
      offset = std::max(offset, align(end));
    }
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, align(offset + buf.bytes));
    placed.push_back(i);
  }
  return plan;
}

} // namespace mgs
