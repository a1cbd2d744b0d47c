//===- Resize.cpp - ONNX Resize of computed data --------------------------===//
//
// ONNX Resize is separable: along each axis, every output element is a
// weighted sum of input elements along that axis (nearest: one weight 1;
// linear: two; cubic: four; with antialias, a footprint stretched by the
// downscale). With constant scales or sizes those weights are constants, so
// the resize is one matrix product per resized axis (train.matmul, which mgs
// differentiates: DINOv2's bicubic position embeddings, a decoder's
// bilinear or nearest upsampling). The weights follow ONNX's reference
// implementation (onnx.reference's _interpolate_1d_with_x): the source
// coordinate of each output position by coordinate_transformation_mode, the
// coefficients of its fractional part by mode, the n input positions nearest
// to it (ties to the lower one, positions outside the input replicating its
// edge), exclude_outside renormalizing over those inside.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

/// What the attributes say about every resized axis.
struct ResizeMode {
  std::string coordinates; // coordinate_transformation_mode
  std::string mode;        // nearest, linear, cubic
  std::string nearest;     // nearest_mode
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};

/// The coefficients of the n neighbours of a source coordinate whose
/// fractional part is `ratio` (1 for an integer one), for a scale `scale`.
std::vector<double> coefficients(const ResizeMode &m, double ratio, double scale) {
  if (m.mode == "nearest") {
    if (ratio == 1)
      return {0, 1};
    bool up = m.nearest == "round_prefer_floor"  ? ratio > 0.5
              : m.nearest == "round_prefer_ceil" ? ratio >= 0.5
              : m.nearest == "ceil";
    return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
  }
  if (m.antialias && scale < 1) {
    // The kernel stretched by 1 / scale over the input (downsampling).
    std::vector<double> c;
    if (m.mode == "linear") {
      const int64_t start = static_cast<int64_t>(std::floor(-1 / scale) + 1);
      const int64_t footprint = 2 - 2 * start;
      for (int64_t i = start; i < start + footprint; ++i)
        c.push_back(std::clamp(1 - std::abs((i - ratio) * scale), 0.0, 1.0));
    } else {
      const double a = m.cubicA;
      const int64_t start = static_cast<int64_t>(std::floor(-2 / scale) + 1);
      for (int64_t i = start; i < 2 - start; ++i) {
        const double x = std::abs(scale * (i - ratio));
        c.push_back(x < 1   ? ((a + 2) * x - (a + 3)) * x * x + 1
                    : x < 2 ? ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
                            : 0.0);
      }
    }
    const double sum = std::accumulate(c.begin(), c.end(), 0.0);
    for (double &v : c)
      v /= sum;
    return c;
  }
  if (m.mode == "linear")
    return {1 - ratio, ratio};
  const double a = m.cubicA, r = ratio;
  auto far = [&](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  auto near = [&](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

/// The [out, in] weights of one axis, row-major.
std::vector<float> axisWeights(const ResizeMode &m, int64_t in, int64_t out, double scale) {
  std::vector<float> w(static_cast<size_t>(out * in), 0.0f);
  const double outLength = scale * static_cast<double>(in); // the reference's output_width
  for (int64_t o = 0; o < out; ++o) {
    const double x = static_cast<double>(o);
    double src;
    if (m.coordinates == "align_corners")
      src = outLength == 1 ? 0.0 : x * (in - 1) / (outLength - 1);
    else if (m.coordinates == "asymmetric")
      src = x / scale;
    else if (m.coordinates == "tf_half_pixel_for_nn") // (opsets 11 and 12)
      src = (x + 0.5) / scale;
    else if (m.coordinates == "pytorch_half_pixel")
      src = outLength == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (m.coordinates == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out) / outLength;
      const double center = static_cast<double>(in) / 2;
      src = center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    } else // half_pixel
      src = (x + 0.5) / scale - 0.5;
    const double floorSrc = std::floor(src);
    const double ratio = src == floorSrc ? 1.0 : src - floorSrc;
    std::vector<double> c = coefficients(m, ratio, scale);
    const int64_t n = static_cast<int64_t>(c.size());
    // The n positions nearest to src (ties to the lower), among the input
    // padded by n on each side with its edge values: a contiguous window.
    // Each candidate window [s, s + n) is scored by its farthest member.
    const double padded = src + static_cast<double>(n);
    const int64_t limit = in + 2 * n;
    std::vector<int64_t> order(static_cast<size_t>(limit));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int64_t p, int64_t q) {
      const double dp = std::abs(padded - p), dq = std::abs(padded - q);
      return dp != dq ? dp < dq : p < q;
    });
    std::vector<int64_t> picked(order.begin(), order.begin() + n);
    std::sort(picked.begin(), picked.end());
    if (m.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = picked[k] - n;
        if (at < 0 || at >= in)
          c[k] = 0;
        sum += c[k];
      }
      for (double &v : c)
        v /= sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = std::clamp<int64_t>(picked[k] - n, 0, in - 1);
      w[o * in + at] += static_cast<float>(c[k]);
    }
  }
  return w;
}

bool isIdentity(ArrayRef<float> w, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (w[i * n + j] != (i == j ? 1.0f : 0.0f))
        return false;
  return true;
}

} // namespace

LogicalResult convertResize(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto outType = n.outputType(0);
  if (failed(outType))
    return failure();
  ArrayRef<int64_t> inShape = shapeOf(*x);
  ArrayRef<int64_t> outShape = outType->getShape();
  const int64_t rank = static_cast<int64_t>(inShape.size());
  if (static_cast<int64_t>(outShape.size()) != rank)
    return n.emitError() << "output of rank " << outShape.size() << " for an input of rank "
                         << rank;

  ResizeMode m;
  m.mode = n.stringAttr("mode", "nearest");
  m.coordinates = n.stringAttr("coordinate_transformation_mode", "half_pixel");
  m.nearest = n.stringAttr("nearest_mode", "round_prefer_floor");
  m.cubicA = n.floatAttr("cubic_coeff_a", -0.75f);
  m.excludeOutside = n.intAttr("exclude_outside", 0) != 0;
  m.antialias = n.intAttr("antialias", 0) != 0;
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return n.emitError() << "mode '" << m.mode << "' is not one of nearest, linear, cubic";
  static const char *const kModes[] = {"half_pixel",    "half_pixel_symmetric",
                                       "pytorch_half_pixel", "align_corners",
                                       "asymmetric",    "tf_half_pixel_for_nn"};
  if (!llvm::is_contained(kModes, m.coordinates))
    return n.emitError() << "coordinate_transformation_mode '" << m.coordinates
                         << "': mgs resizes with half_pixel, half_pixel_symmetric, "
                            "pytorch_half_pixel, align_corners, asymmetric or "
                            "tf_half_pixel_for_nn (not tf_crop_and_resize's region of interest)";
  static const char *const kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
  if (m.mode == "nearest" && !llvm::is_contained(kNearest, m.nearest))
    return n.emitError() << "nearest_mode '" << m.nearest << "' is not one of "
                            "round_prefer_floor, round_prefer_ceil, floor, ceil";
  const std::string policy = n.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return n.emitError() << "keep_aspect_ratio_policy '" << policy
                         << "' is not one of stretch, not_larger, not_smaller";

  // The axes scales or sizes apply to (opset 18's axes; all by default).
  SmallVector<int64_t> axes;
  if (auto given = n.intsAttr("axes")) {
    for (int64_t a : *given) {
      auto axis = n.normalizeAxis(a, rank);
      if (failed(axis))
        return failure();
      axes.push_back(*axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }

  // Scales (input 2) or sizes (input 3), constants (opset 11 on: older
  // models were upgraded).
  const int scalesInput = 2;
  auto given = [&](int i) { return n.hasInput(i) && !n.inputIsEmpty(i); };
  SmallVector<double> scale(rank, 1.0);
  bool fromScales = false;
  if (given(scalesInput) && n.inputIsConstant(scalesInput)) {
    auto scales = n.constantFloats(scalesInput);
    if (failed(scales))
      return failure();
    fromScales = !scales->empty();
    if (fromScales && scales->size() != axes.size())
      return n.emitError() << "scales holds " << scales->size() << " values for "
                           << axes.size() << " axes";
    for (auto [axis, s] : llvm::zip(axes, *scales)) {
      if (!(s > 0) || !std::isfinite(s))
        return n.emitError() << "scale " << s << " of axis " << axis
                             << " is not a positive number";
      scale[axis] = s;
    }
  } else if (given(scalesInput)) {
    return n.emitError() << "its scales '" << n.node().input(scalesInput)
                         << "' are computed at run time; mgs resizes by constant scales or "
                            "sizes";
  }
  if (!fromScales) {
    if (!given(3))
      return n.emitError() << "neither scales nor sizes is given";
    if (!n.inputIsConstant(3))
      return n.emitError() << "its sizes '" << n.node().input(3)
                           << "' are computed at run time; mgs resizes by constant scales or "
                              "sizes";
    auto sizes = n.constantInts(3);
    if (failed(sizes))
      return failure();
    if (sizes->size() != axes.size())
      return n.emitError() << "sizes holds " << sizes->size() << " values for " << axes.size()
                           << " axes";
    // stretch: each axis to its size; not_larger / not_smaller: every axis
    // by the least / greatest of those ratios (the output's sizes rounded,
    // as ONNX's shape inference gave them).
    double kept = policy == "not_larger" ? INFINITY : 0.0;
    for (auto [axis, size] : llvm::zip(axes, *sizes)) {
      if (size < 1)
        return n.emitError() << "size " << size << " of axis " << axis << " is not positive";
      if (policy == "stretch" && size != outShape[axis])
        return n.emitError() << "size " << size << " of axis " << axis
                             << " is not the output's " << outShape[axis];
      scale[axis] = static_cast<double>(size) / static_cast<double>(inShape[axis]);
      kept = policy == "not_larger" ? std::min(kept, scale[axis]) : std::max(kept, scale[axis]);
    }
    if (policy != "stretch")
      for (int64_t axis : axes)
        scale[axis] = kept;
  }

  // One matrix product per axis whose weights are not the identity.
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Value v = *x;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t in = inShape[d], out = outShape[d];
    if (in < 1 || out < 1)
      return n.emitError() << "axis " << d << " resizes " << in << " elements to " << out
                           << "; mgs has no empty tensors";
    // An axis kept at its size by a scale of 1 is the identity (the source
    // coordinate of each position is the position itself).
    if (in == out && scale[d] == 1.0 && m.coordinates != "tf_half_pixel_for_nn")
      continue;
    // (a matrix of in x out weights: bounded, as the folder bounds its values)
    constexpr int64_t kMaxWeights = int64_t(1) << 26;
    if (in > kMaxWeights || out > kMaxWeights || in * out > kMaxWeights)
      return n.emitError() << "axis " << d << " resizes " << in << " elements to " << out
                           << ": an interpolation matrix of more than 2^26 weights, beyond what "
                              "mgs resizes";
    std::vector<float> w = axisWeights(m, in, out, scale[d]);
    if (in == out && isIdentity(w, in))
      continue;
    v = matrixAlongAxis(n, v, d, w, out);
  }
  if (v == *x) // every axis kept: still a value of its own
    v = ReshapeOp::create(b, loc, *outType, v);
  n.setOutput(0, v);
  return success();
}

Value matrixAlongAxis(NodeImporter &n, Value v, int64_t axis, ArrayRef<float> w, int64_t out) {
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  const int64_t rank = static_cast<int64_t>(shapeOf(v).size());
  const int64_t in = shapeOf(v)[axis];
  SmallVector<int64_t> shape(shapeOf(v));
  shape[axis] = out;
  auto type = RankedTensorType::get(shape, b.getF32Type());
  if (rank >= 2 && axis == rank - 2) // [out, in] x [..., in, W]
    return MatMulOp::create(b, loc, type, f32Constant(n, {out, in}, w), v, false, false);
  // The axis last, [..., in] x [out, in]^T, and back.
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis], perm[rank - 1]);
  Value t = axis == rank - 1 ? v : permuteDims(b, loc, v, perm);
  SmallVector<int64_t> product(shapeOf(t));
  product[rank - 1] = out;
  t = MatMulOp::create(b, loc, RankedTensorType::get(product, b.getF32Type()), t,
                       f32Constant(n, {out, in}, w), false, true);
  return axis == rank - 1 ? t : permuteDims(b, loc, t, perm);
}

} // namespace mgs::onnx_import
