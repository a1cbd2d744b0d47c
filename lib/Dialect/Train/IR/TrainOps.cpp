//===- TrainOps.cpp - train dialect operations ----------------------------===//
//
// Verifiers recompute each op's result shape with the ONNX shape rules
// (ShapeUtils.h) and report a mismatch with the op's location.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "OpVerifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace mgs::train;
using namespace mgs::train::detail;

namespace {

/// Normalizes `axis` into [0, rank + extra) or reports it.
FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank, int64_t extra = 0) {
  int64_t limit = rank + extra;
  if (axis < -rank || axis >= limit)
    return op->emitOpError() << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

/// Shared checks of Conv/MaxPool/AveragePool window attributes; returns the
/// spatial output extents.
FailureOr<SmallVector<int64_t>> verifyWindow(Operation *op, ArrayRef<int64_t> inputShape,
                                             ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                                             ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                                             bool ceilMode) {
  if (inputShape.size() < 3)
    return op->emitOpError() << "input must have rank >= 3 (N x C x spatial...), got rank "
                             << inputShape.size();
  size_t spatial = inputShape.size() - 2;
  auto checkSize = [&](ArrayRef<int64_t> attr, size_t expected, StringRef name) -> LogicalResult {
    if (attr.size() == expected)
      return success();
    return op->emitOpError() << "'" << name << "' has " << attr.size() << " entries, expected "
                             << expected;
  };
  if (failed(checkSize(kernel, spatial, "kernel_shape")) ||
      failed(checkSize(strides, spatial, "strides")) ||
      failed(checkSize(pads, 2 * spatial, "pads")) ||
      failed(checkSize(dilations, spatial, "dilations")))
    return failure();
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1)
      return op->emitOpError() << "kernel_shape, strides and dilations must be positive (axis "
                               << i << ")";
    if (pads[i] < 0 || pads[i + spatial] < 0)
      return op->emitOpError() << "pads must be non-negative (axis " << i << ")";
  }
  SmallVector<int64_t> out;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = slidingWindowSize(inputShape[2 + i], kernel[i], strides[i], pads[i],
                                     pads[i + spatial], dilations[i], ceilMode);
    if (size < 1)
      return op->emitOpError() << "window of extent " << (kernel[i] - 1) * dilations[i] + 1
                               << " does not fit spatial axis " << i << " of size "
                               << inputShape[2 + i] << " with its padding";
    out.push_back(size);
  }
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  if (auto value = getInitialValueAttr())
    if (value.getType() != getType())
      return emitOpError() << "initial value type " << value.getType()
                           << " does not match the parameter type " << getType();
  return success();
}

/// The parameter `name` refers to, checked to have type `type` (`what` names
/// the value compared in the message).
static FailureOr<ParameterOp> lookupParameter(Operation *op, SymbolTableCollection &symbolTable,
                                              FlatSymbolRefAttr name, Type type,
                                              StringRef what) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParameterOp>(op, name);
  if (!param)
    return op->emitOpError() << "'" << name.getValue() << "' does not name a train.parameter";
  if (param.getType() != type)
    return op->emitOpError() << what << " type " << type
                             << " does not match the type of parameter '" << name.getValue()
                             << "' (" << param.getType() << ")";
  return param;
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return lookupParameter(*this, symbolTable, getNameAttr(), getResult().getType(), "result");
}

/// Gradients and updates refer to a trainable parameter of the gradient's type.
static LogicalResult verifyTrainableUse(Operation *op, SymbolTableCollection &symbolTable,
                                        FlatSymbolRefAttr name, Value grad) {
  auto param = lookupParameter(op, symbolTable, name, grad.getType(), "gradient");
  if (failed(param))
    return failure();
  if (!param->getTrainable())
    return op->emitOpError() << "parameter '" << name.getValue() << "' is not trainable";
  return success();
}

LogicalResult GradientOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyTrainableUse(*this, symbolTable, getParamAttr(), getGrad());
}

LogicalResult SGDUpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyTrainableUse(*this, symbolTable, getParamAttr(), getGrad());
}

LogicalResult ClipGradNormOp::verify() {
  double maxNorm = getMaxNorm().convertToDouble();
  if (!(maxNorm > 0) || !std::isfinite(maxNorm))
    return emitOpError() << "max_norm must be a positive number, got " << maxNorm;
  if (getGrads().empty())
    return emitOpError() << "needs at least one gradient";
  return success();
}

LogicalResult AssignParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param = lookupParameter(*this, symbolTable, getParamAttr(), getValue().getType(), "value");
  if (failed(param))
    return failure();
  if (param->getTrainable())
    return emitOpError() << "parameter '" << getParam()
                         << "' is trainable; only state parameters are assigned";
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static LogicalResult verifyBroadcastBinary(Operation *op) {
  auto expected = broadcastShapes(shapeOf(op->getOperand(0)), shapeOf(op->getOperand(1)));
  if (!expected)
    return op->emitOpError() << "operand shapes " << shapeToString(shapeOf(op->getOperand(0)))
                             << " and " << shapeToString(shapeOf(op->getOperand(1)))
                             << " are not broadcast-compatible";
  return checkResultShape(op, op->getResult(0), *expected);
}

LogicalResult AddOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult SubOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult MulOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult DivOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult GreaterOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult GreaterOrEqualOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult EqualOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult KeepWhereOp::verify() { return verifyBroadcastBinary(*this); }

/// Clip's bounds: one element each (clip and clip_grad).
static LogicalResult verifyClipBounds(Operation *op, Value min, Value max) {
  for (auto [name, bound] : {std::pair<StringRef, Value>{"min", min}, {"max", max}})
    if (numElements(shapeOf(bound)) != 1)
      return op->emitOpError() << name << " must have exactly one element, got shape "
                               << shapeToString(shapeOf(bound));
  return success();
}

LogicalResult ClipOp::verify() { return verifyClipBounds(*this, getMin(), getMax()); }

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// gemm's M x N result from A and B (2-D, inner dimensions equal) and, when
/// present, C (broadcast to it); gemm and gemm_grad.
static FailureOr<SmallVector<int64_t>> gemmResultShape(Operation *op, Value aValue,
                                                       Value bValue, bool transA, bool transB,
                                                       Value c, StringRef cName = "C") {
  ArrayRef<int64_t> a = shapeOf(aValue), b = shapeOf(bValue);
  if (a.size() != 2 || b.size() != 2)
    return op->emitOpError() << "A and B must be 2-D, got " << shapeToString(a) << " and "
                             << shapeToString(b);
  int64_t m = transA ? a[1] : a[0], ka = transA ? a[0] : a[1];
  int64_t kb = transB ? b[1] : b[0], n = transB ? b[0] : b[1];
  if (ka != kb)
    return op->emitOpError() << "inner dimensions differ: op(A) is " << m << "x" << ka
                             << ", op(B) is " << kb << "x" << n;
  SmallVector<int64_t> expected{m, n};
  if (c && !isUnidirectionallyBroadcastable(shapeOf(c), expected))
    return op->emitOpError() << cName << " of shape " << shapeToString(shapeOf(c))
                             << " does not broadcast to " << shapeToString(expected);
  return expected;
}

LogicalResult GemmOp::verify() {
  auto expected = gemmResultShape(*this, getA(), getB(), getTransA(), getTransB(), getC());
  if (failed(expected))
    return failure();
  return checkResultShape(*this, getResult(), *expected);
}

/// numpy.matmul's result shape of lhs and rhs, each with its last two
/// dimensions swapped when transposed; matmul and matmul_grad.
static FailureOr<SmallVector<int64_t>> matmulResultShape(Operation *op, Value lhsValue,
                                                         Value rhsValue, bool transLhs,
                                                         bool transRhs) {
  SmallVector<int64_t> lhs(shapeOf(lhsValue)), rhs(shapeOf(rhsValue));
  for (auto [shape, trans, name] :
       {std::tuple(&lhs, transLhs, "trans_lhs"), std::tuple(&rhs, transRhs, "trans_rhs")}) {
    if (!trans)
      continue;
    if (shape->size() < 2)
      return op->emitOpError() << name << " needs an operand of rank >= 2, got rank "
                               << shape->size();
    std::swap((*shape)[shape->size() - 2], shape->back());
  }
  auto expected = matmulShape(lhs, rhs);
  if (!expected)
    return op->emitOpError() << "operand shapes " << shapeToString(shapeOf(lhsValue))
                             << (transLhs ? " (transposed)" : "") << " and "
                             << shapeToString(shapeOf(rhsValue))
                             << (transRhs ? " (transposed)" : "") << " do not match for matmul";
  return *expected;
}

LogicalResult MatMulOp::verify() {
  auto expected = matmulResultShape(*this, getLhs(), getRhs(), getTransLhs(), getTransRhs());
  if (failed(expected))
    return failure();
  return checkResultShape(*this, getResult(), *expected);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

namespace {
/// A convolution's operands as its op names them: conv's input, weight and
/// bias; conv_grad_data's result (the conv's input) and weight;
/// conv_grad_weights' input, weight_grad and bias_grad.
struct ConvOperands {
  Value input, weight, bias;
  StringRef inputName = "input", weightName = "weight", biasName = "bias";
};

/// The N x M x spatial... output of a convolution (ONNX Conv's rules); conv
/// and its two gradients, whose kernels read the same descriptor.
FailureOr<SmallVector<int64_t>> convShape(Operation *op, const ConvOperands &conv,
                                          ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                                          ArrayRef<int64_t> dilations, int64_t group) {
  ArrayRef<int64_t> x = shapeOf(conv.input), w = shapeOf(conv.weight);
  if (x.size() < 3)
    return op->emitOpError() << conv.inputName
                             << " must have rank >= 3 (N x C x spatial...), got rank " << x.size();
  if (w.size() != x.size())
    return op->emitOpError() << conv.weightName << " rank " << w.size() << " differs from "
                             << conv.inputName << " rank " << x.size();
  if (group < 1)
    return op->emitOpError() << "group must be positive, got " << group;
  if (x[1] % group != 0 || w[1] * group != x[1])
    return op->emitOpError() << conv.inputName << " has " << x[1] << " channels but "
                             << conv.weightName << " expects " << w[1] << " per group x " << group
                             << " groups";
  if (w[0] % group != 0)
    return op->emitOpError() << "output channels (" << w[0] << ") are not divisible by group ("
                             << group << ")";
  if (conv.bias && (shapeOf(conv.bias).size() != 1 || shapeOf(conv.bias)[0] != w[0]))
    return op->emitOpError() << conv.biasName << " must have shape " << w[0] << ", got "
                             << shapeToString(shapeOf(conv.bias));
  auto spatial = verifyWindow(op, x, w.drop_front(2), strides, pads, dilations,
                              /*ceilMode=*/false);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> expected{x[0], w[0]};
  expected.append(spatial->begin(), spatial->end());
  return expected;
}
} // namespace

LogicalResult ConvOp::verify() {
  auto expected = convShape(*this, {getInput(), getWeight(), getBias()}, getStrides(), getPads(),
                            getDilations(), getGroup());
  if (failed(expected))
    return failure();
  return checkResultShape(*this, getResult(), *expected);
}

LogicalResult ConvGradDataOp::verify() {
  // The conv from the result's shape to the gradient's (in the forward graph,
  // a transposed convolution from the gradient's to the result's).
  auto expected = convShape(*this, {getResult(), getWeight(), Value(), "result"}, getStrides(),
                            getPads(), getDilations(), getGroup());
  if (failed(expected))
    return failure();
  return checkResultShape(*this, getGrad(), *expected, "grad");
}

LogicalResult ConvGradWeightsOp::verify() {
  auto expected = convShape(
      *this, {getInput(), getWeightGrad(), getBiasGrad(), "input", "weight_grad", "bias_grad"},
      getStrides(), getPads(), getDilations(), getGroup());
  if (failed(expected))
    return failure();
  return checkResultShape(*this, getGrad(), *expected, "grad");
}

LogicalResult MaxPoolOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  auto spatial = verifyWindow(*this, x, getKernelShape(), getStrides(), getPads(), getDilations(),
                              getCeilMode());
  if (failed(spatial))
    return failure();
  if (getStorageOrder() != 0 && getStorageOrder() != 1)
    return emitOpError() << "storage_order must be 0 or 1, got " << getStorageOrder();
  SmallVector<int64_t> expected{x[0], x[1]};
  expected.append(spatial->begin(), spatial->end());
  if (getIndices() && failed(checkResultShape(*this, getIndices(), expected, "indices")))
    return failure();
  return checkResultShape(*this, getResult(), expected);
}

SmallVector<int64_t> AveragePoolOp::getDilationsOrOnes() {
  if (std::optional<ArrayRef<int64_t>> dilations = getDilations())
    return SmallVector<int64_t>(*dilations);
  return SmallVector<int64_t>(getKernelShape().size(), 1);
}

LogicalResult AveragePoolOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  auto spatial = verifyWindow(*this, x, getKernelShape(), getStrides(), getPads(),
                              getDilationsOrOnes(), getCeilMode());
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> expected{x[0], x[1]};
  expected.append(spatial->begin(), spatial->end());
  return checkResultShape(*this, getResult(), expected);
}

LogicalResult GlobalAveragePoolOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  if (x.size() < 3)
    return emitOpError() << "input must have rank >= 3 (N x C x spatial...), got rank "
                         << x.size();
  SmallVector<int64_t> expected(x.size(), 1);
  expected[0] = x[0];
  expected[1] = x[1];
  return checkResultShape(*this, getResult(), expected);
}

//===----------------------------------------------------------------------===//
// Normalization and regularization
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  if (x.size() < 2)
    return emitOpError() << "input must have rank >= 2 (N x C x ...), got rank " << x.size();
  SmallVector<int64_t> channels{x[1]};
  for (auto [name, v] : {std::pair<StringRef, Value>{"scale", getScale()},
                         {"bias", getBias()}, {"mean", getMean()}, {"var", getVar()}})
    if (failed(checkResultShape(*this, v, channels, name)))
      return failure();
  if (getEpsilon().convertToFloat() < 0)
    return emitOpError() << "epsilon must be non-negative";
  if (failed(checkResultShape(*this, getRunningMean(), channels, "running_mean")) ||
      failed(checkResultShape(*this, getRunningVar(), channels, "running_var")) ||
      failed(checkResultShape(*this, getSavedMean(), channels, "saved_mean")) ||
      failed(checkResultShape(*this, getSavedInvStd(), channels, "saved_inv_std")))
    return failure();
  return checkResultShape(*this, getResult(), x);
}

/// A dropout mask is the data's shape, or its leading dimensions followed by
/// ones: one mask element per block of consecutive data elements.
static LogicalResult checkDropoutMask(Operation *op, ArrayRef<int64_t> x, Value mask) {
  ArrayRef<int64_t> m = shapeOf(mask);
  if (isLeadingBlockMask(x, m))
    return success();
  return op->emitOpError() << "mask shape " << shapeToString(m)
                           << " must be the data's shape " << shapeToString(x)
                           << " or its leading dimensions followed by ones";
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError() << "ratio must be in [0, 1), got " << ratio;
  ArrayRef<int64_t> x = shapeOf(getInput());
  if (failed(checkDropoutMask(*this, x, getMask())))
    return failure();
  return checkResultShape(*this, getResult(), x);
}

LogicalResult DropoutGradOp::verify() {
  ArrayRef<int64_t> dy = shapeOf(getGrad());
  if (failed(checkDropoutMask(*this, dy, getMask())))
    return failure();
  return checkResultShape(*this, getResult(), dy);
}

LogicalResult RandomNormalOp::verify() {
  const float mean = getMean().convertToFloat(), scale = getScale().convertToFloat();
  if (!std::isfinite(mean) || !std::isfinite(scale))
    return emitOpError() << "mean " << mean << " and scale " << scale << " must be finite";
  return success();
}

LogicalResult RandomUniformOp::verify() {
  const float low = getLow().convertToFloat(), high = getHigh().convertToFloat();
  if (!std::isfinite(low) || !std::isfinite(high) || !(low < high))
    return emitOpError() << "low " << low << " must be below high " << high << ", both finite";
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return normalizeAxis(*this, getAxis(), shapeOf(getInput()).size());
}

LogicalResult LogSoftmaxOp::verify() {
  return normalizeAxis(*this, getAxis(), shapeOf(getInput()).size());
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult FlattenOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  auto axis = normalizeAxis(*this, getAxis(), x.size(), /*extra=*/1);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected{numElements(x.take_front(*axis)), numElements(x.drop_front(*axis))};
  return checkResultShape(*this, getResult(), expected);
}

LogicalResult ReshapeOp::verify() {
  int64_t in = numElements(shapeOf(getInput())), out = numElements(shapeOf(getResult()));
  if (in != out)
    return emitOpError() << "cannot reshape " << in << " elements into " << out;
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPerm();
  if (perm.size() != x.size())
    return emitOpError() << "perm has " << perm.size() << " entries for rank " << x.size();
  SmallVector<bool> seen(x.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[p])
      return emitOpError() << "perm is not a permutation of 0.." << x.size() - 1;
    seen[p] = true;
    expected.push_back(x[p]);
  }
  return checkResultShape(*this, getResult(), expected);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  ArrayRef<int64_t> first = shapeOf(getInputs().front());
  auto axis = normalizeAxis(*this, getAxis(), first.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(first);
  expected[*axis] = 0;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> s = shapeOf(v);
    bool ok = s.size() == first.size();
    for (size_t d = 0; ok && d < s.size(); ++d)
      ok = d == static_cast<size_t>(*axis) || s[d] == first[d];
    if (!ok)
      return emitOpError() << "input " << i << " of shape " << shapeToString(s)
                           << " does not match input 0 (" << shapeToString(first)
                           << ") outside axis " << *axis;
    expected[*axis] += s[*axis];
  }
  return checkResultShape(*this, getResult(), expected);
}

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  ArrayRef<int64_t> pads = getPads();
  if (pads.size() != 2 * x.size())
    return emitOpError() << "pads has " << pads.size() << " entries, expected " << 2 * x.size();
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t size = x[i] + pads[i] + pads[i + x.size()];
    if (size < 0)
      return emitOpError() << "pads remove more than the " << x[i] << " elements of axis " << i;
    expected.push_back(size);
  }
  return checkResultShape(*this, getResult(), expected);
}

//===----------------------------------------------------------------------===//
// Training step
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::verify() {
  ArrayRef<int64_t> logits = shapeOf(getLogits());
  if (logits.size() != 2)
    return emitOpError() << "logits must be N x C, got " << shapeToString(logits);
  if (logits[1] == 0)
    return emitOpError() << "logits must have at least one class, got " << shapeToString(logits);
  const double smoothing = getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    return emitOpError() << "label_smoothing must be in [0, 1], got " << smoothing;
  if (getLogProbabilities() && smoothing != 0.0)
    return emitOpError() << "label_smoothing " << smoothing
                         << " with log_probabilities: the negative log-likelihood has none";
  if (getPerSample() && (!getInGraph() || getSum()))
    return emitOpError() << "per_sample (reduction \"none\") is a cross-entropy inside a loss "
                            "the graph computes: it needs in_graph and not sum";
  // The labels: one a row, in any shape (a label per position, row-major).
  if (numElements(shapeOf(getLabels())) != logits[0])
    return emitOpError() << "labels must hold one value a row of logits (" << logits[0] << "), got "
                         << shapeToString(shapeOf(getLabels()));
  if (failed(checkResultShape(*this, getLoss(),
                              getPerSample() ? logits.take_front(1) : ArrayRef<int64_t>{}, "loss")))
    return failure();
  if (Value weight = getWeight();
      weight && failed(checkResultShape(*this, weight, logits.drop_front(1), "weight")))
    return failure();
  return checkResultShape(*this, getDlogits(), logits, "dlogits");
}

/// Checks that `kind` is one of `kinds`.
static LogicalResult verifyKind(Operation *op, StringRef kind, ArrayRef<StringRef> kinds) {
  if (llvm::is_contained(kinds, kind))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << "unknown kind '" << kind << "'; expected one of";
  for (StringRef k : kinds)
    diag << " " << k;
  return diag;
}

LogicalResult ElementwiseLossOp::verify() {
  if (failed(verifyKind(*this, getKind(), kElementwiseLossKinds)))
    return failure();
  const double beta = getBeta().convertToDouble();
  if (!(beta >= 0.0) || std::isinf(beta))
    return emitOpError() << "beta must be finite and >= 0, got " << beta;
  if (Value posWeight = getPosWeight()) {
    if (getKind() != "bce_with_logits")
      return emitOpError() << "pos_weight is bce_with_logits's, not " << getKind() << "'s";
    ArrayRef<int64_t> prediction = shapeOf(getPrediction());
    if (prediction.empty())
      return emitOpError() << "pos_weight needs a prediction with a last axis, got a scalar";
    if (failed(checkResultShape(*this, posWeight, prediction.take_back(1), "pos_weight")))
      return failure();
  }
  return checkResultShape(*this, getLoss(), {}, "loss");
}

/// Checks that every value in `values` has the type of `reference`.
static LogicalResult verifySameTypes(Operation *op, Value reference, ValueRange values,
                                     StringRef what) {
  for (Value v : values)
    if (v.getType() != reference.getType())
      return op->emitOpError() << what << " must all have type " << reference.getType()
                               << ", got " << v.getType();
  return success();
}

LogicalResult UnaryGradOp::verify() { return verifyKind(*this, getKind(), unaryKinds()); }

LogicalResult BinaryGradOp::verify() {
  if (failed(verifyKind(*this, getKind(), {"add", "sub", "mul", "div", "keep_where"})))
    return failure();
  if (getLhsGrad().getType() != getLhs().getType() ||
      getRhsGrad().getType() != getRhs().getType())
    return emitOpError() << "gradient types must match the operand types";
  auto out = broadcastShapes(shapeOf(getLhs()), shapeOf(getRhs()));
  if (!out)
    return emitOpError() << "operand shapes " << shapeToString(shapeOf(getLhs())) << " and "
                         << shapeToString(shapeOf(getRhs())) << " are not broadcast-compatible";
  return checkResultShape(*this, getGrad(), *out, "grad");
}

LogicalResult ClipGradOp::verify() {
  if (failed(verifyClipBounds(*this, getMin(), getMax())))
    return failure();
  return verifySameTypes(*this, getInput(), {getGrad(), getResult()}, "input, grad and result");
}

LogicalResult GemmGradOp::verify() {
  auto expected = gemmResultShape(*this, getA(), getB(), getTransA(), getTransB(), getCGrad(),
                                  "c_grad");
  if (failed(expected) || failed(checkResultShape(*this, getGrad(), *expected, "grad")) ||
      failed(verifySameTypes(*this, getA(), {getAGrad()}, "A and a_grad")))
    return failure();
  return verifySameTypes(*this, getB(), {getBGrad()}, "B and b_grad");
}

LogicalResult MatMulGradOp::verify() {
  auto expected = matmulResultShape(*this, getLhs(), getRhs(), getTransLhs(), getTransRhs());
  if (failed(expected) || failed(checkResultShape(*this, getGrad(), *expected, "grad")) ||
      failed(verifySameTypes(*this, getLhs(), {getLhsGrad()}, "lhs and lhs_grad")))
    return failure();
  return verifySameTypes(*this, getRhs(), {getRhsGrad()}, "rhs and rhs_grad");
}

LogicalResult SoftmaxGradOp::verify() {
  return normalizeAxis(*this, getAxis(), shapeOf(getResult()).size());
}

LogicalResult BatchNormGradOp::verify() {
  if (getRelu() != static_cast<bool>(getBias()))
    return emitOpError() << "takes the bias exactly when it has a fused relu";
  ArrayRef<int64_t> x = shapeOf(getInput());
  if (x.size() < 2)
    return emitOpError() << "input must have rank >= 2 (N x C x ...), got rank " << x.size();
  SmallVector<int64_t> channels{x[1]};
  for (auto [name, v] : {std::pair<StringRef, Value>{"scale", getScale()},
                         {"saved_mean", getSavedMean()}, {"saved_inv_std", getSavedInvStd()},
                         {"scale_grad", getScaleGrad()}, {"bias_grad", getBiasGrad()},
                         {"bias", getBias()}})
    if (v && failed(checkResultShape(*this, v, channels, name)))
      return failure();
  if (failed(checkResultShape(*this, getGrad(), x, "grad")))
    return failure();
  return checkResultShape(*this, getInputGrad(), x, "input_grad");
}

LogicalResult PoolGradOp::verify() {
  if (failed(verifyKind(*this, getKind(), {"max", "average"})) ||
      failed(verifySameTypes(*this, getInput(), {getResult()}, "input and result")))
    return failure();
  // The forward's output: the window's positions in floor or (the forward's
  // ceil_mode, which the gradient does not keep) ceil mode.
  ArrayRef<int64_t> x = shapeOf(getInput());
  auto floor = verifyWindow(*this, x, getKernelShape(), getStrides(), getPads(), getDilations(),
                            /*ceilMode=*/false);
  if (failed(floor))
    return failure();
  auto ceil = verifyWindow(*this, x, getKernelShape(), getStrides(), getPads(), getDilations(),
                           /*ceilMode=*/true);
  if (failed(ceil))
    return failure();
  ArrayRef<int64_t> dy = shapeOf(getGrad());
  SmallVector<int64_t> expected{x[0], x[1]};
  expected.append(floor->begin(), floor->end());
  if (dy.size() == x.size() && dy.take_front(2) == ArrayRef<int64_t>(expected).take_front(2)) {
    bool fits = true;
    for (size_t i = 2; i < dy.size() && fits; ++i)
      fits = dy[i] == (*floor)[i - 2] || dy[i] == (*ceil)[i - 2];
    if (fits)
      return success();
  }
  return emitOpError() << "grad shape " << shapeToString(dy)
                       << " is not the pooled shape of the input " << shapeToString(x) << " ("
                       << shapeToString(expected) << ", or its ceil-mode extents)";
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  auto axis = normalizeAxis(*this, getAxis(), in.size());
  if (failed(axis))
    return failure();
  int64_t total = 0;
  for (auto [i, r] : llvm::enumerate(getResults())) {
    ArrayRef<int64_t> s = shapeOf(r);
    bool ok = s.size() == in.size();
    for (size_t d = 0; ok && d < s.size(); ++d)
      ok = d == static_cast<size_t>(*axis) || s[d] == in[d];
    if (!ok)
      return emitOpError() << "result " << i << " of shape " << shapeToString(s)
                           << " does not match the input (" << shapeToString(in)
                           << ") outside axis " << *axis;
    total += s[*axis];
  }
  if (total != in[*axis])
    return emitOpError() << "results cover " << total << " of the " << in[*axis]
                         << " elements of axis " << *axis;
  return success();
}

LogicalResult GradientOp::verify() {
  if (static_cast<int64_t>(getBackpropIndex()) < 0)
    return emitOpError() << "backprop_index must be non-negative";
  return success();
}

namespace {

/// Checks a reduction's kind and axes (distinct, ascending, in [0, rank)) and
/// returns the shape it reduces `input` to, with the axes kept as 1s or
/// dropped.
FailureOr<SmallVector<int64_t>> reducedShape(Operation *op, StringRef kind,
                                             ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                                             bool keepdims) {
  if (failed(verifyKind(op, kind, {"sum", "mean"})))
    return failure();
  int64_t rank = input.size();
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < 0 || a >= rank)
      return op->emitOpError() << "axis " << a << " is out of range for rank " << rank;
    if (i > 0 && axes[i - 1] >= a)
      return op->emitOpError() << "axes must be distinct and ascending";
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(input[d]);
    else if (keepdims)
      shape.push_back(1);
  }
  return shape;
}

} // namespace

LogicalResult ReduceOp::verify() {
  auto shape = reducedShape(*this, getKind(), shapeOf(getInput()), getAxes(), getKeepdims());
  if (failed(shape))
    return failure();
  return checkResultShape(*this, getResult(), *shape);
}

LogicalResult ReduceGradOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getResult());
  auto kept = reducedShape(*this, getKind(), in, getAxes(), true);
  if (failed(kept))
    return failure();
  auto dropped = reducedShape(*this, getKind(), in, getAxes(), false);
  if (shapeOf(getGrad()) == ArrayRef<int64_t>(*kept) ||
      shapeOf(getGrad()) == ArrayRef<int64_t>(*dropped))
    return success();
  return emitOpError() << "grad shape " << shapeToString(shapeOf(getGrad()))
                       << " is not the reduction of " << shapeToString(in) << " over its axes";
}

#define GET_OP_CLASSES
#include "mgs/Dialect/Train/IR/TrainOps.cpp.inc"
