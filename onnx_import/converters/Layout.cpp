//===- Layout.cpp - Converters that copy elements to new places -----------===//
//
// ONNX Pad (every mode), DepthToSpace / SpaceToDepth (PixelShuffle and
// PixelUnshuffle) and Trilu of computed data: a constant pad is train.pad;
// the other modes pick elements by a gather at constant positions, the block
// rearrangements are a reshape, a transpose and a reshape, and Trilu keeps
// its triangle by train.keep_where of a constant mask. Each gradient is its
// op's own (the gather's adds the copies back).
//
//===----------------------------------------------------------------------===//

#include "converters/Layout.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

/// Pad of mode reflect, edge or wrap: per padded axis, the element each
/// position reads (position p of [-before, dim + after) mirrored without
/// repeating the border, clamped, or taken modulo the extent), picked by a
/// gather, whose gradient adds the copies back.
static LogicalResult padByCopies(NodeImporter &n, Value x, ArrayRef<int64_t> pads, StringRef mode) {
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  Value v = x;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t before = pads[axis], after = pads[axis + rank], dim = shape[axis];
    if (before == 0 && after == 0)
      continue;
    if (dim + before + after < 1)
      return n.emitError() << "its pads " << before << " and " << after << " leave nothing of axis "
                           << axis << " (extent " << dim << ")";
    if (dim == 0)
      return n.emitError() << "axis " << axis << " is empty; mode '" << mode
                           << "' pads with copies of its elements";
    SmallVector<int64_t> at;
    for (int64_t p = -before; p < dim + after; ++p) {
      if (mode == "edge") {
        at.push_back(std::clamp<int64_t>(p, 0, dim - 1));
      } else if (mode == "wrap") {
        at.push_back(((p % dim) + dim) % dim);
      } else { // reflect: period 2 (dim - 1)
        const int64_t period = 2 * (dim - 1);
        const int64_t m = period == 0 ? 0 : ((p % period) + period) % period;
        at.push_back(m < dim ? m : period - m);
      }
    }
    v = pickAlongAxis(n.builder(), n.loc(), v, axis, at);
  }
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (type->getShape() != shapeOf(v))
    return n.emitError() << "the padded tensor has shape " << shapeToString(shapeOf(v))
                         << ", ONNX shape inference says " << shapeToString(type->getShape());
  n.setOutput(0, v);
  return success();
}

LogicalResult convertPad(NodeImporter &n) {
  std::string mode = n.stringAttr("mode", "constant");
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return n.emitError() << "unsupported value '" << mode
                         << "' of attribute 'mode'; supported: constant, reflect, edge, wrap";
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto pads = n.constantInts(1);
  if (failed(pads))
    return failure();
  // Opset 18's `axes` input: the pads given are those of these axes, in their order (begins,
  // then ends); every other axis is not padded.
  if (n.hasInput(3)) {
    auto axes = n.constantInts(3);
    if (failed(axes))
      return failure();
    int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
    if (pads->size() != 2 * axes->size())
      return n.emitError() << "input 'pads' has " << pads->size() << " values for " << axes->size()
                           << " axes; expected " << 2 * axes->size();
    SmallVector<int64_t> full(2 * rank, 0);
    SmallVector<bool> seen(rank, false);
    for (auto [i, axis] : llvm::enumerate(*axes)) {
      if (axis < -rank || axis >= rank)
        return n.emitError() << "axis " << axis << " of input 'axes' is out of range for rank "
                             << rank;
      int64_t a = axis < 0 ? axis + rank : axis;
      if (seen[a])
        return n.emitError() << "axis " << axis << " appears twice in input 'axes'";
      seen[a] = true;
      full[a] = (*pads)[i];
      full[a + rank] = (*pads)[i + axes->size()];
    }
    *pads = std::move(full);
  }
  if (mode != "constant") {
    const size_t rank = shapeOf(*x).size();
    if (pads->size() != 2 * rank)
      return n.emitError() << "input 'pads' has " << pads->size() << " values for rank " << rank
                           << "; expected " << 2 * rank;
    return padByCopies(n, *x, *pads, mode);
  }
  float value = 0.0f;
  if (n.hasInput(2)) {
    auto v = n.constantFloat(2);
    if (failed(v))
      return failure();
    value = *v;
  }
  OpBuilder &bld = n.builder();
  return buildSingle<PadOp>(n, *x, bld.getDenseI64ArrayAttr(*pads), bld.getF32FloatAttr(value));
}

/// DepthToSpace (mode DCR or CRD) and SpaceToDepth of an N x C x H x W
/// tensor with block size `bs`: the reshape to six dimensions, the
/// permutation of ONNX's definition, the reshape to the result.
static LogicalResult rearrangeBlocks(NodeImporter &n, bool toSpace) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> s = shapeOf(*x);
  if (s.size() != 4)
    return n.emitError() << "its input has rank " << s.size() << "; it takes N x C x H x W";
  const int64_t bs = n.intAttr("blocksize", 0);
  if (bs < 1)
    return n.emitError() << "attribute 'blocksize' must be at least 1, got " << bs;
  std::string mode = toSpace ? n.stringAttr("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD")
    return n.emitError() << "unsupported value '" << mode
                         << "' of attribute 'mode'; supported: DCR, CRD";
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  SmallVector<int64_t> split, perm;
  if (toSpace) {
    if (C % (bs * bs) != 0)
      return n.emitError() << "its " << C
                           << " channels are not a multiple of blocksize^2 = " << bs * bs;
    const int64_t c = C / (bs * bs);
    split = mode == "DCR" ? SmallVector<int64_t>{N, bs, bs, c, H, W}
                          : SmallVector<int64_t>{N, c, bs, bs, H, W};
    perm = mode == "DCR" ? SmallVector<int64_t>{0, 3, 4, 1, 5, 2}
                         : SmallVector<int64_t>{0, 1, 4, 2, 5, 3};
  } else {
    if (H % bs != 0 || W % bs != 0)
      return n.emitError() << "its height " << H << " and width " << W
                           << " are not multiples of blocksize " << bs;
    split = {N, C, H / bs, bs, W / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
  }
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (numElements(type->getShape()) != numElements(s))
    return n.emitError() << "ONNX shape inference gives the result shape "
                         << shapeToString(type->getShape()) << ", which does not hold the input's "
                         << numElements(s) << " elements";
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Value six = ReshapeOp::create(b, loc, RankedTensorType::get(split, b.getF32Type()), *x);
  Value moved = permuteDims(b, loc, six, perm);
  n.setOutput(0, ReshapeOp::create(b, loc, *type, moved).getResult());
  return success();
}

LogicalResult convertTrilu(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> s = shapeOf(*x);
  if (s.size() < 2)
    return n.emitError() << "its input has rank " << s.size() << "; Trilu takes at least 2";
  int64_t k = 0;
  if (n.hasInput(1)) {
    auto ks = n.constantInts(1);
    if (failed(ks))
      return failure();
    if (ks->size() != 1)
      return n.emitError() << "k must be an integer scalar, got " << ks->size() << " values";
    k = ks->front();
  }
  const bool upper = n.intAttr("upper", 1) != 0;
  const int64_t rows = s[s.size() - 2], cols = s.back();
  std::vector<float> keep(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep[i * cols + j] = (upper ? j - i >= k : j - i <= k) ? 1.0f : 0.0f;
  OpBuilder &b = n.builder();
  auto maskType = RankedTensorType::get({rows, cols}, b.getF32Type());
  Value mask = arith::ConstantOp::create(b, n.loc(), maskType,
                                         DenseElementsAttr::get(maskType, ArrayRef<float>(keep)));
  return buildSingle<KeepWhereOp>(n, *x, mask);
}

LogicalResult convertDepthToSpace(NodeImporter &n) { return rearrangeBlocks(n, true); }
LogicalResult convertSpaceToDepth(NodeImporter &n) { return rearrangeBlocks(n, false); }

} // namespace mgs::onnx_import
