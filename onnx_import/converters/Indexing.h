//===- Indexing.h - Gather and strided Slice of computed data --*- C++ -*-===//
//
// The parts of ONNX Gather and Slice on computed (or trained) data that are
// not a plain split: a gather along any axis, at constant indices of any
// rank too (Swin's relative position bias), a slice with steps (Swin's patch
// merging).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_INDEXING_H
#define MGS_ONNX_IMPORT_CONVERTERS_INDEXING_H

#include "OpConverters.h"

#include <utility>

namespace mgs::onnx_import {

/// `v` with its dimensions permuted (result dimension i is v's perm[i]): one
/// train.transpose.
mlir::Value permuteDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        llvm::ArrayRef<int64_t> perm);

/// `x` gathered along `axis` at `indices` (INT64: a graph input, or a
/// constant such as Swin's relative position index): one train.gather (rows
/// of a table; its gradient adds each row back, duplicates accumulating), the
/// axis moved to the front and back by transposes when it is not the first.
/// The result has ONNX's shape: x's dimensions before the axis, the
/// indices', then x's after it.
mlir::Value gatherAlongAxis(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t axis,
                            mlir::Value indices);

/// GatherElements of `data` along `axis` at `positions`: integers in [0,
/// the axis' extent) computed at run time, held as FLOAT (RuntimeInts.cpp,
/// TopK's indices), of the indices' shape. Each element's flat position in
/// the data (position * stride plus its own offset, computed in float: the
/// caller keeps the data within 2^24 elements) made int64 by train.to_index,
/// the data flattened to a column and read there by a train.gather, whose
/// gradient adds each element back where it was read.
mlir::Value gatherElementsAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value data,
                             int64_t axis, mlir::Value positions);

/// 1.0 where `positions` (integers held as FLOAT, computed at run time: a
/// RuntimeInt's value) equal the position along a new dimension of extent
/// `depth` inserted at `axis`, else 0.0 (no gradient): one train.equal of the
/// positions against a constant 0 .. depth - 1 along that dimension. A
/// position outside [0, depth) matches none (ONNX OneHot's all-off row).
mlir::Value oneHotAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value positions, int64_t depth,
                     int64_t axis);

/// ScatterElements of `updates` into `data` along `axis` at `positions`
/// (integers in [0, the axis' extent) computed at run time, held as FLOAT,
/// of the updates' shape, which is the data's but along the axis): with a
/// one-hot of the positions along a new dimension after the axis, the
/// updates summed into their places, added to the data (`add`) or replacing
/// it there (else: keep_where of the data where no position points; two
/// updates at one place add up, where ONNX leaves the order undefined).
/// Gradients: the data's where it is kept, each update's from its place.
mlir::Value scatterElementsAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value data,
                              int64_t axis, mlir::Value positions, mlir::Value updates, bool add);

/// GatherElements' shape rules for indices of `indexShape` into data of
/// `shape` along `axis`: equal ranks, and no dimension but the axis' larger
/// than the data's; an error naming the node otherwise.
mlir::LogicalResult checkGatherElementsShapes(NodeImporter &n, llvm::ArrayRef<int64_t> shape,
                                              llvm::ArrayRef<int64_t> indexShape, int64_t axis);

/// The elements of `x` at positions `at` (constants in range, repeats
/// allowed) along `axis`, in that order: gatherAlongAxis at a constant.
mlir::Value pickAlongAxis(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t axis,
                          llvm::ArrayRef<int64_t> at);

/// The greatest (`largest`) or least element of `x` over `axes` (sorted, in
/// range, not empty) and its position among them (row-major), each of
/// shape x's other dimensions then 1: the axes moved last and flattened (at
/// most 2^24 elements in all: the caller checks), train.topk_positions with
/// k = 1 (ties: the first), the value gathered there (its gradient goes to
/// that one element).
std::pair<mlir::Value, mlir::Value> selectExtremum(mlir::OpBuilder &b, mlir::Location loc,
                                                   mlir::Value x, llvm::ArrayRef<int64_t> axes,
                                                   bool largest);

/// The part [lo, hi) of `v` along `axis` (a non-empty range): a split into
/// the part before, the part and the part after, keeping the part; `v`
/// itself when the range is the whole axis.
mlir::Value sliceAxis(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, int64_t axis,
                      int64_t lo, int64_t hi);

/// The `count` elements lo, lo + step, ... of `v` along `axis` (step > 1,
/// all in range): a window of count * step elements that holds them at the
/// same offset of each group of `step`, reshaped to count x step, split to
/// that offset and reshaped back; when no window fits the axis, the first
/// count - 1 so and the last one sliced, concatenated.
mlir::Value strideAxis(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, int64_t axis,
                       int64_t lo, int64_t count, int64_t step);

/// Gather at token ids (an embedding; ids reshaped or transposed on their
/// way too), and of computed data at constant indices (converters/Indexing.cpp).
mlir::LogicalResult convertGather(NodeImporter &n);

/// Slice with constant starts, ends, axes and steps: splits, and strideAxis
/// for steps.
mlir::LogicalResult convertSlice(NodeImporter &n);
/// OneHot of token ids (an INT64 graph input, `F.one_hot(ids, V)`): the rows
/// of a constant depth x depth table of off and on values gathered at the ids
/// (an embedding of fixed rows; the ids must be below the depth, checked at
/// run time as an embedding's), the new dimension moved to `axis`. FLOAT
/// values give data, integer ones integers computed at run time.
mlir::LogicalResult convertOneHot(NodeImporter &n);
/// Slice (node `n`: its constant starts, ends, axes and steps) of `x`; a null
/// value when the slice is empty.
mlir::FailureOr<mlir::Value> sliceByNode(NodeImporter &n, mlir::Value x);

/// GatherND (batch_dims 0) at constant indices (Swin's relative position bias
/// as PyTorch's torch.export-based exporter writes it): each index tuple one
/// row of the data's leading dimensions flattened, gathered along axis 0.
/// Computed indices are an error naming the node.
mlir::LogicalResult convertGatherND(NodeImporter &n);

/// Tile of computed data by constant repeats (DeBERTa's `.repeat`): x
/// reshaped with an axis of 1 before each of its own, broadcast (a
/// train.add of zeros) to the repeats there, and reshaped back; its
/// gradient sums over the repeats.
mlir::LogicalResult convertTile(NodeImporter &n);

/// GatherElements of computed data at constant indices (DeBERTa's
/// torch.gather of its relative-position scores): the data flattened to one
/// column, a train.gather of its rows at the elements' flat positions, and
/// reshaped to the indices' shape; its gradient adds each element back.
mlir::LogicalResult convertGatherElements(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_INDEXING_H
