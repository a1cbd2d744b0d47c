//===- LayerNorm.cpp - Converters of LayerNorm and GELU pieces ------------===//
//
// Reductions, Pow with a constant exponent and the normalizations. A
// LayerNormalization becomes the ops PyTorch exports for LayerNorm at opset
// 15 (mean, centred square, mean, + epsilon, sqrt, divide, scale, shift), so
// both exports train through the same kernels and gradients; RMS, instance
// and group normalization are the same pieces over other axes.
//
//===----------------------------------------------------------------------===//

#include "converters/LayerNorm.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {
namespace {

/// `axes` normalized into [0, rank) and sorted; an axis out of range or
/// given twice is an error naming the node.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeImporter &n, ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    auto norm = n.normalizeAxis(a, rank);
    if (failed(norm))
      return failure();
    if (llvm::is_contained(out, *norm))
      return n.emitError() << "axis " << a << " is given twice";
    out.push_back(*norm);
  }
  llvm::sort(out);
  return out;
}

/// A reduction's input 0, the axes it reduces (normalized and sorted; every
/// axis when `axes` is empty) and its result type.
struct Reduction {
  Value x;
  SmallVector<int64_t> axes;
  RankedTensorType type;
};

/// The axes of a reduction: input 1 where the opset passes them as an input
/// (a constant), else the attribute.
FailureOr<SmallVector<int64_t>> reduceAxes(NodeImporter &n, bool axesAsInput) {
  if (axesAsInput) {
    if (n.findAttr("axes"))
      return n.emitError() << "attribute 'axes' is not valid at opset " << n.opset()
                           << " (axes are input 1)";
    if (!n.hasInput(1))
      return SmallVector<int64_t>();
    return n.constantInts(1);
  }
  return n.intsAttr("axes").value_or(SmallVector<int64_t>());
}

/// The Reduction of node `n` over its axes (input 1 from opset
/// `axesInputFrom`, else the attribute), or nullopt when
/// noop_with_empty_axes (or a scalar input) leaves nothing to reduce: the
/// output is then the input.
FailureOr<std::optional<Reduction>> prepareReduction(NodeImporter &n, int64_t axesInputFrom) {
  auto given = reduceAxes(n, n.opset() >= axesInputFrom);
  auto x = n.input(0);
  if (failed(given) || failed(x))
    return failure();
  ArrayRef<int64_t> axes = *given;
  const int64_t rank = shapeOf(*x).size();
  SmallVector<int64_t> all;
  if (axes.empty() && n.intAttr("noop_with_empty_axes", 0) == 0)
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
  auto norm = normalizeAxes(n, axes.empty() ? ArrayRef<int64_t>(all) : axes, rank);
  if (failed(norm))
    return failure();
  if (norm->empty()) {
    n.setOutput(0, *x);
    return std::optional<Reduction>();
  }
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  return std::optional<Reduction>(Reduction{*x, std::move(*norm), *type});
}

/// What a reduction applies to each element first, and to each sum after.
enum class Before { None, Square, Abs };
enum class After { None, Sqrt, Log };

/// The reduction of input 0 of `n` over its axes (prepareReduction), as
/// `kind`, with `before` applied to
/// each element first (ReduceL2, ReduceSumSquare: x * x; ReduceL1: abs) and
/// `after` to the result (ReduceL2: sqrt; ReduceLogSum: log).
LogicalResult buildReduce(NodeImporter &n, StringRef kind, int64_t axesInputFrom,
                          Before before = Before::None, After after = After::None) {
  auto r = prepareReduction(n, axesInputFrom);
  if (failed(r) || !*r)
    return failure(failed(r)); // an error, or nothing to reduce
  auto [x, norm, type] = **r;
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Value in = x;
  if (before == Before::Square)
    in = MulOp::create(b, loc, in.getType(), in, in);
  else if (before == Before::Abs)
    in = AbsOp::create(b, loc, in.getType(), in);
  Value out =
      ReduceOp::create(b, loc, type, b.getStringAttr(kind), in, b.getDenseI64ArrayAttr(norm),
                       b.getBoolAttr(n.intAttr("keepdims", 1) != 0));
  if (after == After::Sqrt)
    out = SqrtOp::create(b, loc, type, out);
  else if (after == After::Log)
    out = LogOp::create(b, loc, type, out);
  n.setOutput(0, out);
  return success();
}

/// The greatest or least element over the reduced axes, of `shape` (x's
/// dimensions with the reduced ones kept as 1 or dropped). x has at most
/// 2^24 elements: their positions are held in float.
FailureOr<Value> extremum(NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool largest,
                          ArrayRef<int64_t> shape, Value *position = nullptr) {
  const int64_t count = numElements(shapeOf(x));
  if (count > kFloatExactIntegers)
    return n.emitError() << "its input has " << count
                         << " elements, more than 2^24: mgs finds the greatest or least by "
                            "its position, computed in float, exact only up to 2^24";
  if (count == 0)
    return n.emitError() << "its input is empty";
  OpBuilder &b = n.builder();
  auto [value, at] = selectExtremum(b, n.loc(), x, axes, largest);
  auto type = RankedTensorType::get(shape, b.getF32Type());
  if (position)
    *position = ReshapeOp::create(b, n.loc(), type, at);
  return Value(ReshapeOp::create(b, n.loc(), type, value));
}

} // namespace

LogicalResult convertReduceMean(NodeImporter &n) { return buildReduce(n, "mean", 18); }

LogicalResult convertReduceSum(NodeImporter &n) { return buildReduce(n, "sum", 13); }

LogicalResult convertReduceL2(NodeImporter &n) {
  return buildReduce(n, "sum", 18, Before::Square, After::Sqrt);
}

LogicalResult convertReduceSumLike(NodeImporter &n) {
  StringRef op = n.node().op_type();
  if (op == "ReduceL1")
    return buildReduce(n, "sum", 18, Before::Abs);
  if (op == "ReduceSumSquare")
    return buildReduce(n, "sum", 18, Before::Square);
  return buildReduce(n, "sum", 18, Before::None, After::Log); // ReduceLogSum
}

LogicalResult convertReduceMaxMin(NodeImporter &n) {
  auto r = prepareReduction(n, 18);
  if (failed(r) || !*r)
    return failure(failed(r)); // an error, or nothing to reduce
  auto out =
      extremum(n, (*r)->x, (*r)->axes, n.node().op_type() == "ReduceMax", (*r)->type.getShape());
  if (failed(out))
    return failure();
  n.setOutput(0, *out);
  return success();
}

LogicalResult convertReduceLogSumExp(NodeImporter &n) {
  auto r = prepareReduction(n, 18);
  if (failed(r) || !*r)
    return failure(failed(r)); // an error, or nothing to reduce
  auto [x, norm, type] = **r;
  SmallVector<int64_t> kept(shapeOf(x));
  for (int64_t a : norm)
    kept[a] = 1;
  auto m = extremum(n, x, norm, /*largest=*/true, kept);
  if (failed(m))
    return failure();
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  // log sum exp(x - m) + m, m the greatest and detached: its gradient is
  // the softmax over the axes, as PyTorch's.
  Value shift = StopGradientOp::create(b, loc, m->getType(), *m);
  Value e = ExpOp::create(b, loc, x.getType(), SubOp::create(b, loc, x.getType(), x, shift));
  Value sum =
      ReduceOp::create(b, loc, type, b.getStringAttr("sum"), e, b.getDenseI64ArrayAttr(norm),
                       b.getBoolAttr(n.intAttr("keepdims", 1) != 0));
  Value lse = LogOp::create(b, loc, type, sum);
  n.setOutput(0,
              AddOp::create(b, loc, type, lse, ReshapeOp::create(b, loc, type, shift)).getResult());
  return success();
}

LogicalResult convertArgMaxMin(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  const int64_t rank = shapeOf(*x).size();
  auto axis = n.axisAttr("axis", 0, rank);
  if (failed(axis))
    return failure();
  if (n.intAttr("select_last_index", 0) != 0)
    return n.emitError() << "unsupported value 1 of attribute 'select_last_index'; mgs takes "
                            "the first of equal elements (0)";
  auto type = n.outputType(0, n.builder().getI64Type());
  if (failed(type))
    return failure();
  Value position;
  auto value =
      extremum(n, *x, {*axis}, n.node().op_type() == "ArgMax", type->getShape(), &position);
  if (failed(value))
    return failure();
  n.setIntegerOutput(0, position, 0, static_cast<double>(shapeOf(*x)[*axis] - 1),
                     "by " + n.node().op_type());
  return success();
}

LogicalResult convertPow(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto exponent = n.constantFloats(1);
  if (failed(exponent))
    return failure();
  if (exponent->size() != 1)
    return n.emitError() << "the exponent (input 1) must be one value, got " << exponent->size()
                         << "; mgs supports a constant exponent";
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (shapeOf(*x) != type->getShape())
    return n.emitError() << "the exponent may not broadcast the base: result shape "
                         << shapeToString(type->getShape()) << ", base "
                         << shapeToString(shapeOf(*x));
  auto op = PowOp::create(n.builder(), n.loc(), *type, *x,
                          n.builder().getF32FloatAttr(exponent->front()));
  n.setOutput(0, op.getResult());
  return success();
}

/// The normalizations' statistics are computed in float32 (stash_type 1).
static LogicalResult checkStashType(NodeImporter &n) {
  if (n.intAttr("stash_type", 1) == 1)
    return success();
  return n.emitError() << "unsupported value " << n.intAttr("stash_type", 1)
                       << " of attribute 'stash_type'; supported: 1 (float32)";
}

/// (x - E[x]) / sqrt(E[(x - E[x])^2] + epsilon) over `axes` (statistics kept
/// with their axes as 1), as PyTorch exports LayerNorm at opset 15; the mean
/// and standard deviation in `mean` and `stddev` when given.
static Value normalizeOver(NodeImporter &n, Value x, ArrayRef<int64_t> axes, float epsilon,
                           Value *mean = nullptr, Value *stddev = nullptr) {
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> statShape(xType.getShape());
  for (int64_t d : axes)
    statShape[d] = 1;
  auto statType = RankedTensorType::get(statShape, b.getF32Type());
  auto meanOf = [&](Value v) {
    return ReduceOp::create(b, loc, statType, b.getStringAttr("mean"), v,
                            b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true))
        .getResult();
  };
  Value mu = meanOf(x);
  Value centred = SubOp::create(b, loc, xType, x, mu);
  Value squared = PowOp::create(b, loc, xType, centred, b.getF32FloatAttr(2.0f));
  Value var = meanOf(squared);
  Value shifted = AddOp::create(b, loc, statType, var, f32Scalar(n, epsilon));
  Value sd = SqrtOp::create(b, loc, statType, shifted);
  if (mean)
    *mean = mu;
  if (stddev)
    *stddev = sd;
  return DivOp::create(b, loc, xType, centred, sd);
}

LogicalResult convertLayerNormalization(NodeImporter &n) {
  auto x = n.input(0), scale = n.input(1);
  if (failed(x) || failed(scale))
    return failure();
  Value bias;
  if (n.hasInput(2)) {
    auto given = n.input(2);
    if (failed(given))
      return failure();
    bias = *given;
  }
  if (failed(checkStashType(n)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  int64_t rank = shape.size();
  auto normAxis = n.axisAttr("axis", -1, rank);
  if (failed(normAxis))
    return failure();
  const int64_t axis = *normAxis;
  SmallVector<int64_t> axes, statShape(shape);
  for (int64_t d = axis; d < rank; ++d) {
    axes.push_back(d);
    statShape[d] = 1;
  }
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  auto xType = cast<RankedTensorType>(x->getType());
  auto statType = RankedTensorType::get(statShape, b.getF32Type());
  Value mu, stddev;
  Value normed = normalizeOver(n, *x, axes, n.floatAttr("epsilon", 1e-5f), &mu, &stddev);
  auto yType = n.outputType(0);
  if (failed(yType))
    return failure();
  if (!broadcastShapes(shape, shapeOf(*scale)) || (bias && !broadcastShapes(shape, shapeOf(bias))))
    return n.emitError() << "Scale and B must broadcast to the normalized shape";
  Value y = MulOp::create(b, loc, xType, normed, *scale);
  if (bias)
    y = AddOp::create(b, loc, xType, y, bias);
  if (*yType != xType)
    return n.emitError() << "output type " << *yType << " is not the input's " << xType;
  n.setOutput(0, y);
  if (n.hasOutput(1))
    n.setOutput(1, mu);
  if (n.hasOutput(2))
    n.setOutput(2, DivOp::create(b, loc, statType, f32Scalar(n, 1.0f), stddev).getResult());
  return success();
}

LogicalResult convertRMSNormalization(NodeImporter &n) {
  auto x = n.input(0), scale = n.input(1);
  if (failed(x) || failed(scale))
    return failure();
  if (failed(checkStashType(n)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  const int64_t rank = shape.size();
  auto normAxis = n.axisAttr("axis", -1, rank);
  if (failed(normAxis))
    return failure();
  SmallVector<int64_t> axes, statShape(shape);
  for (int64_t d = *normAxis; d < rank; ++d) {
    axes.push_back(d);
    statShape[d] = 1;
  }
  auto yType = n.outputType(0);
  if (failed(yType))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  if (*yType != xType)
    return n.emitError() << "output type " << *yType << " is not the input's " << xType;
  if (!isUnidirectionallyBroadcastable(shapeOf(*scale), shape))
    return n.emitError() << "Scale of shape " << shapeToString(shapeOf(*scale))
                         << " must broadcast to the input's " << shapeToString(shape);
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  auto statType = RankedTensorType::get(statShape, b.getF32Type());
  // y = x / sqrt(E[x^2] + epsilon) * scale
  Value squared = PowOp::create(b, loc, xType, *x, b.getF32FloatAttr(2.0f));
  Value meanSquare = ReduceOp::create(b, loc, statType, b.getStringAttr("mean"), squared,
                                      b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  Value shifted =
      AddOp::create(b, loc, statType, meanSquare, f32Scalar(n, n.floatAttr("epsilon", 1e-5f)));
  Value rms = SqrtOp::create(b, loc, statType, shifted);
  Value normed = DivOp::create(b, loc, xType, *x, rms);
  n.setOutput(0, MulOp::create(b, loc, xType, normed, *scale).getResult());
  return success();
}

/// A per-channel input (InstanceNormalization's and GroupNormalization's
/// scale and bias, of `channels` values) reshaped to [C, 1, ...] so that it
/// broadcasts along axis 1 of a tensor of `rank`.
static FailureOr<Value> perChannel(NodeImporter &n, int i, int64_t channels, int64_t rank,
                                   StringRef name) {
  auto v = n.input(i);
  if (failed(v))
    return failure();
  if (shapeOf(*v) != ArrayRef<int64_t>{channels})
    return n.emitError() << name << " has shape " << shapeToString(shapeOf(*v)) << ", expected "
                         << channels << " (one value a channel)";
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return reshapeTo(n, *v, shape);
}

LogicalResult convertInstanceNormalization(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  const int64_t rank = shape.size();
  if (rank < 3)
    return n.emitError() << "input of rank " << rank << ": expected N x C x D1 x ...";
  auto scale = perChannel(n, 1, shape[1], rank, "scale");
  auto bias = perChannel(n, 2, shape[1], rank, "B");
  if (failed(scale) || failed(bias))
    return failure();
  // Each (sample, channel) normalized over its spatial axes.
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  OpBuilder &b = n.builder();
  auto xType = cast<RankedTensorType>(x->getType());
  Value normed = normalizeOver(n, *x, axes, n.floatAttr("epsilon", 1e-5f));
  Value y = MulOp::create(b, n.loc(), xType, normed, *scale);
  n.setOutput(0, AddOp::create(b, n.loc(), xType, y, *bias).getResult());
  return success();
}

LogicalResult convertGroupNormalization(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  if (failed(checkStashType(n)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  const int64_t rank = shape.size();
  if (rank < 3)
    return n.emitError() << "input of rank " << rank << ": expected N x C x D1 x ...";
  const int64_t channels = shape[1], groups = n.intAttr("num_groups", 0);
  if (groups < 1 || channels % groups != 0)
    return n.emitError() << "num_groups " << groups << " must be positive and divide the "
                         << channels << " channels";
  // (Opset 18's scale per group is deprecated: ONNX's checker refuses it
  // before the import; opset 21 scales each channel.)
  int64_t spatial = 1;
  for (int64_t d : shape.drop_front(2))
    spatial *= d;
  auto scale = perChannel(n, 1, channels, rank, "scale");
  auto bias = perChannel(n, 2, channels, rank, "bias");
  if (failed(scale) || failed(bias))
    return failure();
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  // Each (sample, group) normalized over its channels and spatial axes.
  Value grouped = reshapeTo(n, *x, {shape[0], groups, channels / groups * spatial});
  Value normed = normalizeOver(n, grouped, {2}, n.floatAttr("epsilon", 1e-5f));
  Value y = reshapeTo(n, normed, shape);
  auto xType = cast<RankedTensorType>(x->getType());
  y = MulOp::create(b, loc, xType, y, *scale);
  n.setOutput(0, AddOp::create(b, loc, xType, y, *bias).getResult());
  return success();
}

} // namespace mgs::onnx_import
