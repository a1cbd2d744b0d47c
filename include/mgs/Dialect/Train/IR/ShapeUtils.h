//===- ShapeUtils.h - Result shapes of train ops ----------------*- C++ -*-===//
//
// The shape rules of the ONNX operators the train dialect mirrors. Used by
// the op verifiers and by the importer; no IR here.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_DIALECT_TRAIN_IR_SHAPEUTILS_H
#define MGS_DIALECT_TRAIN_IR_SHAPEUTILS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mgs::train {

/// Multidirectional (numpy) broadcast of two shapes; nullopt if incompatible.
std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                          llvm::ArrayRef<int64_t> b);

/// True when `from` broadcasts to `to` without changing `to` (ONNX
/// unidirectional broadcasting, as for Gemm's C).
bool isUnidirectionallyBroadcastable(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// numpy.matmul result shape; nullopt if the operands do not match.
std::optional<llvm::SmallVector<int64_t>> matmulShape(llvm::ArrayRef<int64_t> a,
                                                      llvm::ArrayRef<int64_t> b);

/// Number of positions of a sliding window (Conv, MaxPool, AveragePool) as
/// ONNX shape inference computes it (in ceil mode, no window starts in the end
/// padding, as in PyTorch). May be <= 0 when the window does not fit.
int64_t slidingWindowSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                          int64_t padEnd, int64_t dilation, bool ceilMode);

/// Explicit (begin, end) pads for ONNX auto_pad SAME_UPPER / SAME_LOWER.
std::pair<int64_t, int64_t> samePadding(int64_t input, int64_t kernel, int64_t stride,
                                        int64_t dilation, bool upper);

/// `axis` in [0, rank): a negative axis counts from the end (ONNX). The
/// caller has checked it is in range. Takes the attribute's raw 64 bits, as
/// I64Attr getters return them unsigned.
inline int64_t normalizedAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// The window of a global average pool over an N x C x spatial... input:
/// the kernel is the whole spatial extent, strides and dilations 1, no pads.
struct PoolWindow {
  llvm::SmallVector<int64_t> kernel, strides, pads, dilations;
};
PoolWindow globalPoolWindow(llvm::ArrayRef<int64_t> input);

/// True when `mask` has `data`'s rank and is its leading dimensions followed
/// by ones (`data` itself included): a dropout mask that keeps or drops whole
/// blocks, e.g. one element a sample for stochastic depth.
bool isLeadingBlockMask(llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> mask);

/// Product of the extents.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// "2x3x4" (or "scalar" for rank 0).
std::string shapeToString(llvm::ArrayRef<int64_t> shape);

} // namespace mgs::train

#endif // MGS_DIALECT_TRAIN_IR_SHAPEUTILS_H
