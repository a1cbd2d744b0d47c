//===- ShapeUtils.cpp - Result shapes of train ops ------------------------===//

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace llvm;

namespace mgs::train {

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool isUnidirectionallyBroadcastable(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i])
      return false;
  return true;
}

std::optional<SmallVector<int64_t>> matmulShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.empty() || b.empty())
    return std::nullopt;
  SmallVector<int64_t> sa(a), sb(b);
  bool promotedA = sa.size() == 1, promotedB = sb.size() == 1;
  if (promotedA)
    sa.insert(sa.begin(), 1);
  if (promotedB)
    sb.push_back(1);
  if (sa.back() != sb[sb.size() - 2])
    return std::nullopt;
  auto batch = broadcastShapes(ArrayRef<int64_t>(sa).drop_back(2), ArrayRef<int64_t>(sb).drop_back(2));
  if (!batch)
    return std::nullopt;
  SmallVector<int64_t> out = *batch;
  if (!promotedA)
    out.push_back(sa[sa.size() - 2]);
  if (!promotedB)
    out.push_back(sb.back());
  return out;
}

int64_t slidingWindowSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                          int64_t padEnd, int64_t dilation, bool ceilMode) {
  int64_t effectiveInput = input + padBegin + padEnd;
  int64_t effectiveKernel = (kernel - 1) * dilation + 1;
  int64_t span = effectiveInput - effectiveKernel;
  if (span < 0)
    return 0;
  int64_t positions = ceilMode ? (span + stride - 1) / stride : span / stride;
  // In ceil mode the last window must start inside the input or its begin padding, as in
  // PyTorch and in ONNX's shape inference from 1.16 on: one starting in the end padding would
  // see only padding.
  if (ceilMode && positions * stride >= input + padBegin)
    --positions;
  return positions + 1;
}

std::pair<int64_t, int64_t> samePadding(int64_t input, int64_t kernel, int64_t stride,
                                        int64_t dilation, bool upper) {
  int64_t outSize = (input + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, (outSize - 1) * stride + (kernel - 1) * dilation + 1 - input);
  int64_t small = total / 2;
  return upper ? std::make_pair(small, total - small) : std::make_pair(total - small, small);
}

PoolWindow globalPoolWindow(ArrayRef<int64_t> input) {
  PoolWindow w;
  w.kernel.assign(input.begin() + 2, input.end());
  w.strides.assign(w.kernel.size(), 1);
  w.dilations.assign(w.kernel.size(), 1);
  w.pads.assign(2 * w.kernel.size(), 0);
  return w;
}

bool isLeadingBlockMask(ArrayRef<int64_t> data, ArrayRef<int64_t> mask) {
  if (mask.size() != data.size())
    return false;
  size_t lead = 0;
  while (lead < mask.size() && mask[lead] == data[lead])
    ++lead;
  return llvm::all_of(mask.drop_front(lead), [](int64_t d) { return d == 1; });
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

} // namespace mgs::train
