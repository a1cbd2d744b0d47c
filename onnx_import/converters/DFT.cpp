//===- DFT.cpp - ONNX DFT of computed data --------------------------------===//
//
// FNet mixes its tokens with torch.fft.fftn(x).real, which PyTorch's
// torch.export-based exporter writes as two ONNX DFTs (one a signal axis) of
// x made complex. A DFT along one axis of N entries is a product with the
// constant N x N matrices cos(2 pi k n / N) and sin(2 pi k n / N) (k, n the
// output and input positions), computed in double and rounded once: for
// complex input re + i im, forward
//   X_re = C re + S im,  X_im = C im - S re,
// inverse (with 1/N) the signs of S flipped. Two train.matmul a part
// (matrixAlongAxis), whose gradients mgs has: the transposed matrices.
// onesided keeps the first N/2 + 1 frequencies of a real signal.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

LogicalResult convertDFT(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2 || (shape.back() != 1 && shape.back() != 2))
    return n.emitError() << "its input has shape " << shapeToString(shape)
                         << "; DFT takes [..., 1] (real) or [..., 2] (complex) signals";
  const bool complex = shape.back() == 2;
  // The axis: an input from opset 20 (default -2), an attribute before (default 1).
  int64_t axis;
  if (n.opset() >= 20) {
    axis = -2;
    if (n.hasInput(2)) {
      auto given = n.constantInts(2);
      if (failed(given))
        return failure();
      if (given->size() != 1)
        return n.emitError() << "its axis input holds " << given->size() << " values; DFT takes one";
      axis = given->front();
    }
  } else {
    axis = n.intAttr("axis", 1);
  }
  auto normalized = n.normalizeAxis(axis, rank);
  if (failed(normalized))
    return failure();
  if (*normalized == rank - 1)
    return n.emitError() << "its axis " << axis
                         << " is the last dimension, which holds the real and imaginary parts";
  axis = *normalized;
  const int64_t len = shape[axis];
  if (n.hasInput(1)) {
    auto length = n.constantInts(1);
    if (failed(length))
      return failure();
    if (length->size() != 1 || length->front() != len)
      return n.emitError() << "its dft_length is not the axis' extent (" << len
                           << "); mgs transforms the whole axis, without padding or cropping";
  }
  const bool inverse = n.intAttr("inverse", 0) != 0;
  const bool onesided = n.intAttr("onesided", 0) != 0;
  if (onesided && (complex || inverse))
    return n.emitError() << "onesided is 1 for " << (inverse ? "an inverse transform" : "a complex signal")
                         << "; mgs computes a one-sided DFT of real signals only";
  constexpr int64_t kMaxLen = int64_t(1) << 13; // matrices of at most 2^26 entries
  if (len > kMaxLen)
    return n.emitError() << "axis " << axis << " has " << len
                         << " entries; mgs computes a DFT as a product with an N x N matrix, "
                            "up to N = 8192";
  const int64_t out = onesided ? len / 2 + 1 : len;
  // cos and sin of 2 pi k n / N, the inverse's scaled by 1/N; sin signed for
  // X_re = C re + sinRe im and X_im = C im + sinIm re.
  std::vector<float> cosW(out * len), sinRe(out * len), sinIm(out * len);
  const double scale = inverse ? 1.0 / static_cast<double>(len) : 1.0;
  for (int64_t k = 0; k < out; ++k)
    for (int64_t t = 0; t < len; ++t) {
      // (k t mod N keeps the angle in [0, 2 pi): exact arguments for large N;
      // multiples of pi / 2 exact: cos and sin of them are 0 and +-1)
      const int64_t turn = (k * t) % len;
      double c, s;
      if ((4 * turn) % len == 0) {
        const int64_t quarter = 4 * turn / len;
        c = quarter == 0 ? 1.0 : quarter == 2 ? -1.0 : 0.0;
        s = quarter == 1 ? 1.0 : quarter == 3 ? -1.0 : 0.0;
      } else {
        const double angle = 2.0 * M_PI * static_cast<double>(turn) / static_cast<double>(len);
        c = std::cos(angle);
        s = std::sin(angle);
      }
      c *= scale;
      s *= scale;
      cosW[k * len + t] = static_cast<float>(c);
      sinRe[k * len + t] = static_cast<float>(inverse ? -s : s);
      sinIm[k * len + t] = static_cast<float>(inverse ? s : -s);
    }
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Value re = *x, im;
  SmallVector<int64_t> partShape(shape);
  partShape.back() = 1;
  auto partType = RankedTensorType::get(partShape, b.getF32Type());
  if (complex) {
    auto parts = SplitOp::create(b, loc, TypeRange{partType, partType}, *x,
                                 b.getI64IntegerAttr(rank - 1));
    re = parts.getResult(0);
    im = parts.getResult(1);
  }
  SmallVector<int64_t> outPart(partShape);
  outPart[axis] = out;
  auto outPartType = RankedTensorType::get(outPart, b.getF32Type());
  Value xRe = matrixAlongAxis(n, re, axis, cosW, out);
  Value xIm = matrixAlongAxis(n, re, axis, sinIm, out);
  if (complex) {
    xRe = AddOp::create(b, loc, outPartType, xRe, matrixAlongAxis(n, im, axis, sinRe, out));
    xIm = AddOp::create(b, loc, outPartType, matrixAlongAxis(n, im, axis, cosW, out), xIm);
  }
  SmallVector<int64_t> outShape(outPart);
  outShape.back() = 2;
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (type->getShape() != ArrayRef<int64_t>(outShape))
    return n.emitError() << "its result has shape " << shapeToString(outShape)
                         << ", ONNX shape inference says " << shapeToString(type->getShape());
  n.setOutput(0, ConcatOp::create(b, loc, *type, ValueRange{xRe, xIm},
                                  b.getI64IntegerAttr(rank - 1)));
  return success();
}

} // namespace mgs::onnx_import
