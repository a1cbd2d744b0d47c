//===- OpConverters.cpp - Per-ONNX-op conversion --------------------------===//
//
// Each converter reads its node with ONNX's attribute defaults for opsets
// 11-17 and builds the matching train op. Where ONNX passes what is really an
// attribute as an input (Clip bounds stay values; Pad pads, Dropout ratio and
// mode must be constants), the converter reads it at import time.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"
#include "ConstantFolding.h"
#include "TorchExport.h"
#include "converters/Attention.h"
#include "converters/Indexing.h"
#include "converters/LayerNorm.h"
#include "converters/Layout.h"
#include "converters/Loss.h"
#include "converters/MobileNet.h"
#include "converters/Random.h"
#include "converters/Scatter.h"
#include "converters/Split.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

//===----------------------------------------------------------------------===//
// Attribute access
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *NodeImporter::findAttr(llvm::StringRef name) const {
  for (const auto &attr : node().attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t NodeImporter::intAttr(llvm::StringRef name, int64_t dflt) const {
  const auto *attr = findAttr(name);
  return attr ? attr->i() : dflt;
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return emitError() << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

float NodeImporter::floatAttr(llvm::StringRef name, float dflt) const {
  const auto *attr = findAttr(name);
  return attr ? attr->f() : dflt;
}

std::string NodeImporter::stringAttr(llvm::StringRef name, llvm::StringRef dflt) const {
  const auto *attr = findAttr(name);
  return attr ? attr->s() : dflt.str();
}

std::optional<llvm::SmallVector<int64_t>> NodeImporter::intsAttr(llvm::StringRef name) const {
  const auto *attr = findAttr(name);
  if (!attr)
    return std::nullopt;
  return llvm::SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

namespace {

//===----------------------------------------------------------------------===//
// Converters
//===----------------------------------------------------------------------===//

template <typename OpTy>
LogicalResult convertBinary(NodeImporter &n) {
  auto lhs = n.input(0), rhs = n.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  return buildSingle<OpTy>(n, *lhs, *rhs);
}

LogicalResult convertLeakyRelu(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  return buildSingle<LeakyReluOp>(n, *x, n.builder().getF32FloatAttr(n.floatAttr("alpha", 0.01f)));
}

/// Elu, Celu and Selu: their attributes with ONNX's defaults.
LogicalResult convertExpUnit(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  OpBuilder &b = n.builder();
  StringRef op = n.node().op_type();
  if (op == "Elu")
    return buildSingle<EluOp>(n, *x, b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)));
  if (op == "Celu")
    return buildSingle<CeluOp>(n, *x, b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)));
  return buildSingle<SeluOp>(n, *x,
                             b.getF32FloatAttr(n.floatAttr("alpha", 1.67326319217681884765625f)),
                             b.getF32FloatAttr(n.floatAttr("gamma", 1.05070102214813232421875f)));
}

LogicalResult convertClip(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  // A missing bound is the extreme float, as in the ONNX reference.
  auto bound = [&](int i, float dflt) -> FailureOr<Value> {
    if (n.hasInput(i))
      return n.input(i);
    auto type = RankedTensorType::get({}, n.builder().getF32Type());
    return Value(arith::ConstantOp::create(n.builder(), n.loc(), type,
                                           DenseElementsAttr::get(type, dflt)));
  };
  auto lo = bound(1, std::numeric_limits<float>::lowest());
  auto hi = bound(2, std::numeric_limits<float>::max());
  if (failed(lo) || failed(hi))
    return failure();
  return buildSingle<ClipOp>(n, *x, *lo, *hi);
}

LogicalResult convertGemm(NodeImporter &n) {
  auto a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  Value c;
  if (n.hasInput(2)) {
    auto cv = n.input(2);
    if (failed(cv))
      return failure();
    c = *cv;
  }
  OpBuilder &bld = n.builder();
  return buildSingle<GemmOp>(n, *a, *b, c, bld.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
                             bld.getF32FloatAttr(n.floatAttr("beta", 1.0f)),
                             bld.getBoolAttr(n.intAttr("transA", 0) != 0),
                             bld.getBoolAttr(n.intAttr("transB", 0) != 0));
}

LogicalResult convertBatchNorm(NodeImporter &n) {
  SmallVector<Value, 5> operands;
  for (int i = 0; i < 5; ++i) {
    auto v = n.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  // Opset 9-13 (BatchNormalization-9): training mode is the 5-output form.
  // Opset 14+: the training_mode attribute, with 3 outputs.
  // --train-batchnorm: batch statistics whatever the form; so also, for
  // training, when the FX node that torch.export's exporter recorded says
  // training=True (it writes the inference form then too).
  bool training = n.trainBatchNorm() ||
                  (!n.forInference() && exportedBatchNormTraining(n.node())) ||
                  (n.opset() >= 14 ? n.intAttr("training_mode", 0) != 0
                                   : n.node().output_size() > 1);
  for (int i = 3; i < 5; ++i)
    if (n.hasOutput(i))
      n.rejectOutput(i, i == 3 ? "it is the saved_mean output of BatchNormalization, which is not "
                                 "supported"
                               : "it is the saved_var output of BatchNormalization, which is not "
                                 "supported");
  n.markStateParameter(3);
  n.markStateParameter(4);
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  Type statType = operands[3].getType();
  OpBuilder &bld = n.builder();
  auto op = BatchNormOp::create(bld, n.loc(), *type, statType, statType, statType, statType,
                                operands[0], operands[1], operands[2], operands[3], operands[4],
                                bld.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f)),
                                bld.getF32FloatAttr(n.floatAttr("momentum", 0.9f)),
                                training ? bld.getUnitAttr() : UnitAttr(),
                                n.producedByPyTorch() ? bld.getUnitAttr() : UnitAttr(),
                                /*relu=*/UnitAttr());
  n.setOutput(0, op.getResult());
  if (n.hasOutput(1))
    n.setOutput(1, op.getRunningMean());
  if (n.hasOutput(2))
    n.setOutput(2, op.getRunningVar());
  return success();
}

LogicalResult convertDropout(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  // Opset 11: ratio is an attribute and Dropout is never in training mode.
  // Opset 12+: ratio and training_mode are (constant) inputs.
  float ratio = n.opset() < 12 ? n.floatAttr("ratio", 0.5f) : 0.5f;
  bool training = false;
  if (n.opset() >= 12 && n.hasInput(1)) {
    auto r = n.constantFloat(1);
    if (failed(r))
      return failure();
    ratio = *r;
  }
  if (n.opset() >= 12 && n.hasInput(2)) {
    auto t = n.constantBool(2);
    if (failed(t))
      return failure();
    training = *t;
  }
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (ratio == 0.0f || !training) {
    // The output is the input: no op, no mask, no copy. The mask (all true) is not kept.
    n.setOutput(0, *x);
    if (n.hasOutput(1))
      n.rejectOutput(1, "it is the mask of a Dropout with ratio 0 or in inference mode, which "
                        "imports as the identity without one");
    return success();
  }
  OpBuilder &bld = n.builder();
  auto maskType = RankedTensorType::get(type->getShape(), bld.getI1Type());
  if (n.hasOutput(1)) {
    auto declared = n.outputType(1, bld.getI1Type());
    if (failed(declared))
      return failure();
  }
  IntegerAttr seed;
  if (n.findAttr("seed"))
    seed = bld.getI64IntegerAttr(n.intAttr("seed", 0));
  auto op = DropoutOp::create(bld, n.loc(), *type, maskType, *x, bld.getF32FloatAttr(ratio),
                              training ? bld.getUnitAttr() : UnitAttr(), seed);
  n.setOutput(0, op.getResult());
  if (n.hasOutput(1))
    n.setOutput(1, op.getMask());
  return success();
}

template <typename OpTy>
LogicalResult convertSoftmax(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  int64_t rank = shape.size();
  auto normAxis = n.axisAttr("axis", n.opset() >= 13 ? -1 : 1, rank);
  if (failed(normAxis))
    return failure();
  const int64_t axis = *normAxis;
  OpBuilder &bld = n.builder();
  if (n.opset() >= 13 || axis == rank - 1)
    return buildSingle<OpTy>(n, *x, bld.getI64IntegerAttr(axis));
  // Opset 11/12: softmax over the input flattened to 2-D at `axis`.
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  auto flatType = RankedTensorType::get(
      {numElements(shape.take_front(axis)), numElements(shape.drop_front(axis))},
      bld.getF32Type());
  Value flat = ReshapeOp::create(bld, n.loc(), flatType, *x);
  Value soft = OpTy::create(bld, n.loc(), flatType, flat, bld.getI64IntegerAttr(1));
  n.setOutput(0, ReshapeOp::create(bld, n.loc(), *type, soft));
  return success();
}

LogicalResult convertFlatten(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  return buildSingle<FlattenOp>(n, *x, n.builder().getI64IntegerAttr(n.intAttr("axis", 1)));
}

LogicalResult convertReshape(NodeImporter &n) {
  // The target shape comes from shape inference (with data propagation), so
  // shapes computed in the graph work as long as ONNX can resolve them.
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  if (numElements(in) != numElements(type->getShape()))
    return n.emitError() << "cannot reshape " << shapeToString(in) << " ("
                         << numElements(in) << " elements) to " << shapeToString(type->getShape())
                         << " (" << numElements(type->getShape())
                         << "): the target shape is a constant of the model, which fixes the batch "
                            "size it was exported with; export it with -1 for the batch "
                            "dimension (x.view(-1, ...), torch.flatten) or compile with that batch "
                            "size";
  return buildSingle<ReshapeOp>(n, *x);
}

LogicalResult convertTranspose(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> perm;
  if (auto given = n.intsAttr("perm"))
    perm = *given;
  else
    for (int64_t i = shapeOf(*x).size() - 1; i >= 0; --i)
      perm.push_back(i);
  return buildSingle<TransposeOp>(n, *x, n.builder().getDenseI64ArrayAttr(perm));
}

LogicalResult convertConcat(NodeImporter &n) {
  SmallVector<Value> inputs;
  for (int i = 0; i < n.node().input_size(); ++i) {
    if (n.inputIsEmpty(i))
      continue;
    auto v = n.input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return n.emitError() << "every input is empty";
  if (inputs.size() == 1) { // the others were empty
    auto type = n.outputType(0);
    if (failed(type))
      return failure();
    if (*type == inputs[0].getType()) {
      n.setOutput(0, inputs[0]);
      return success();
    }
  }
  return buildSingle<ConcatOp>(n, inputs, n.builder().getI64IntegerAttr(n.intAttr("axis", 0)));
}

/// Gelu (opset 20): train.gelu, exact or with the tanh approximation.
LogicalResult convertGelu(NodeImporter &n) {
  std::string approximate = n.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return n.emitError() << "unsupported value '" << approximate
                         << "' of attribute 'approximate'; supported: none, tanh";
  auto x = n.input(0);
  if (failed(x))
    return failure();
  return buildSingle<GeluOp>(n, *x, n.builder().getStringAttr(approximate));
}

/// Neg of a computed tensor (rotate_half's -x2): x * -1, exact.
LogicalResult convertNeg(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  return buildSingle<MulOp>(n, *x, f32Scalar(n, -1.0f));
}

/// Max and Min of computed tensors (torch.maximum, clamp with tensor
/// bounds), its inputs taken pairwise from the left and broadcast as ONNX
/// does: max(a, b) = b + relu(a - b), min(a, b) = a - relu(a - b). Where a
/// and b tie, the gradient goes to one of them (PyTorch splits it in two).
LogicalResult convertMaxMin(NodeImporter &n) {
  const bool max = n.node().op_type() == "Max";
  auto acc = n.input(0);
  if (failed(acc))
    return failure();
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  for (int i = 1; i < n.node().input_size(); ++i) {
    auto next = n.input(i);
    if (failed(next))
      return failure();
    auto shape = broadcastShapes(shapeOf(*acc), shapeOf(*next));
    if (!shape)
      return n.emitError() << "inputs " << shapeToString(shapeOf(*acc)) << " and "
                           << shapeToString(shapeOf(*next)) << " do not broadcast";
    auto type = RankedTensorType::get(*shape, b.getF32Type());
    Value excess = ReluOp::create(b, loc, type, SubOp::create(b, loc, type, *acc, *next));
    acc = max ? Value(AddOp::create(b, loc, type, *next, excess))
              : Value(SubOp::create(b, loc, type, *acc, excess));
  }
  n.setOutput(0, *acc);
  return success();
}

/// PRelu (nn.PReLU): y = relu(x) + slope (x - relu(x)), the slope (a
/// parameter of one value or one a channel, [C, 1, 1]) broadcast as ONNX
/// does. Its gradients follow from the pieces: 1 where x > 0, the slope
/// elsewhere; the slope's is min(x, 0), summed over what it broadcasts to.
LogicalResult convertPRelu(NodeImporter &n) {
  auto x = n.input(0), slope = n.input(1);
  auto outType = n.outputType(0);
  if (failed(x) || failed(slope) || failed(outType))
    return failure();
  if (*outType != x->getType())
    return n.emitError() << "slope " << shapeToString(shapeOf(*slope))
                         << " must broadcast to X " << shapeToString(shapeOf(*x));
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Type type = x->getType();
  Value positive = ReluOp::create(b, loc, type, *x);
  Value negative = SubOp::create(b, loc, type, *x, positive);
  Value scaled = MulOp::create(b, loc, type, *slope, negative);
  n.setOutput(0, AddOp::create(b, loc, type, positive, scaled));
  return success();
}

/// Softplus (Mamba's time steps): log(1 + e^x) = -log_softmax([0, x])[0],
/// each element paired with a zero along a new last axis. LogSoftmax is the
/// stable form (no overflow of e^x for large x, no loss for very negative x)
/// and mgs differentiates it: the gradient is sigmoid(x), as it should be.
LogicalResult convertSoftplus(NodeImporter &n) {
  auto x = n.input(0);
  auto outType = n.outputType(0);
  if (failed(x) || failed(outType))
    return failure();
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  SmallVector<int64_t> one(shapeOf(*x)), pair(shapeOf(*x));
  one.push_back(1);
  pair.push_back(2);
  const int64_t last = static_cast<int64_t>(pair.size()) - 1;
  auto pairType = RankedTensorType::get(pair, b.getF32Type());
  auto oneType = RankedTensorType::get(one, b.getF32Type());
  Value zeros = arith::ConstantOp::create(b, loc, oneType, DenseElementsAttr::get(oneType, 0.0f));
  Value joined = ConcatOp::create(b, loc, pairType, ValueRange{zeros, reshapeTo(n, *x, one)},
                                  b.getI64IntegerAttr(last));
  Value logs = LogSoftmaxOp::create(b, loc, pairType, joined, b.getI64IntegerAttr(last));
  auto halves = SplitOp::create(b, loc, SmallVector<Type>(2, oneType), logs,
                                b.getI64IntegerAttr(last));
  n.setOutput(0, MulOp::create(b, loc, *outType, reshapeTo(n, halves.getResult(0),
                                                           outType->getShape()),
                               f32Scalar(n, -1.0f)));
  return success();
}

/// Reciprocal of a computed tensor (RMSNorm's rsqrt: Sqrt then Reciprocal): 1 / x, exact.
LogicalResult convertReciprocal(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  return buildSingle<DivOp>(n, f32Scalar(n, 1.0f), *x);
}

/// CumSum of a computed tensor along a constant axis: train.cumsum.
LogicalResult convertCumSum(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto sum = buildCumSum(n, *x, (*x).getType());
  if (failed(sum))
    return failure();
  n.setOutput(0, *sum);
  return success();
}

LogicalResult convertIdentity(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  // PyTorch's detach, as torch.export's exporter writes it (the TorchScript
  // exporter leaves no trace of it): no gradient flows through.
  if (std::optional<FxCall> call = fxCall(n.node());
      n.node().op_type() == "Identity" && call && call->op == "detach") {
    n.setOutput(0, StopGradientOp::create(n.builder(), n.loc(), *x));
    return success();
  }
  n.setOutput(0, *x);
  return success();
}

} // namespace

Value f32Constant(NodeImporter &n, ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, n.builder().getF32Type());
  return arith::ConstantOp::create(n.builder(), n.loc(), type, DenseElementsAttr::get(type, values));
}

Value broadcastTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  Value zeros = arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, 0.0f));
  return AddOp::create(b, loc, type, v, zeros);
}

FailureOr<Value> buildCumSum(NodeImporter &n, Value x, Type type) {
  auto axes = n.constantInts(1);
  if (failed(axes))
    return failure();
  if (axes->size() != 1)
    return n.emitError() << "its axis input holds " << axes->size() << " values; CumSum takes one";
  auto axis = n.normalizeAxis(axes->front(), static_cast<int64_t>(shapeOf(x).size()));
  if (failed(axis))
    return failure();
  OpBuilder &b = n.builder();
  return CumSumOp::create(b, n.loc(), type, x, b.getI64IntegerAttr(*axis),
                          n.intAttr("exclusive", 0) ? b.getUnitAttr() : UnitAttr(),
                          n.intAttr("reverse", 0) ? b.getUnitAttr() : UnitAttr())
      .getResult();
}

Value f32Scalar(NodeImporter &n, float value) { return f32Constant(n, {}, value); }

Value reshapeTo(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  return ReshapeOp::create(n.builder(), n.loc(), RankedTensorType::get(shape, n.builder().getF32Type()), v);
}

/// Squeeze / Unsqueeze of a computed tensor: a reshape to the shape ONNX
/// shape inference gave (constant ones are evaluated at import).
LogicalResult convertReshapeLike(NodeImporter &n) { return convertReshape(n); }

const llvm::StringMap<OpConverter> &opConverters() {
  // Constant is handled by the importer itself: its value is materialized
  // where it is used, or read at import time by the converters above.
  static const llvm::StringMap<OpConverter> table = {
      {"Add", convertBinary<AddOp>},
      {"Sub", convertBinary<SubOp>},
      {"Mul", convertBinary<MulOp>},
      {"Div", convertBinary<DivOp>},
      {"Relu", convertUnary<ReluOp>},
      {"Sigmoid", convertUnary<SigmoidOp>},
      {"Tanh", convertUnary<TanhOp>},
      {"LeakyRelu", convertLeakyRelu},
      {"PRelu", convertPRelu},
      {"Max", convertMaxMin},
      {"Min", convertMaxMin},
      {"Clip", convertClip},
      {"Gemm", convertGemm},
      {"MatMul", convertBinary<MatMulOp>},
      {"Conv", convertConv},
      {"ConvTranspose", convertConvTranspose},
      {"MaxPool", convertMaxPool},
      {"AveragePool", convertAveragePool},
      {"GlobalAveragePool", convertUnary<GlobalAveragePoolOp>},
      {"BatchNormalization", convertBatchNorm},
      {"Dropout", convertDropout},
      {"Softmax", convertSoftmax<SoftmaxOp>},
      {"LogSoftmax", convertSoftmax<LogSoftmaxOp>},
      {"Flatten", convertFlatten},
      {"Reshape", convertReshape},
      {"Transpose", convertTranspose},
      {"Concat", convertConcat},
      {"Gather", convertGather},
      {"GatherND", convertGatherND},
      {"LSTM", convertLSTM},
      {"Slice", convertSlice},
      {"Squeeze", convertReshapeLike},
      {"Unsqueeze", convertReshapeLike},
      {"Pad", convertPad},
      {"DepthToSpace", convertDepthToSpace},
      {"SpaceToDepth", convertSpaceToDepth},
      {"Trilu", convertTrilu},
      {"Identity", convertIdentity},
      // CastLike of a computed tensor (PyTorch 2.x's type_as): computed tensors are FLOAT and
      // the importer refuses a computed result of another type, so the identity (constants are
      // cast at import).
      {"CastLike", convertIdentity},
      // Cast to FLOAT of a computed tensor: the same (T5LayerNorm's and RMSNorm's
      // .to(torch.float32) traced by the TorchScript exporter).
      {"Cast", convertIdentity},
      {"Neg", convertNeg},
      {"Softplus", convertSoftplus},
      {"CumSum", convertCumSum},
      {"Tile", convertTile},
      {"Resize", convertResize},
      {"TopK", convertTopK},
      {"DFT", convertDFT},
      {"GatherElements", convertGatherElements},
      {"Reciprocal", convertReciprocal},
      {"Cos", convertUnary<CosOp>},
      {"Sin", convertUnary<SinOp>},
      {"Abs", convertUnary<AbsOp>},
      {"Round", convertUnary<RoundOp>},
      {"Floor", convertUnary<FloorOp>},
      {"Ceil", convertUnary<CeilOp>},
      {"Log", convertUnary<LogOp>},
      {"Softsign", convertUnary<SoftsignOp>},
      {"Mish", convertUnary<MishOp>},
      {"Elu", convertExpUnit},
      {"Celu", convertExpUnit},
      {"Selu", convertExpUnit},
      {"ReduceMean", convertReduceMean},
      {"ReduceSum", convertReduceSum},
      {"ReduceL2", convertReduceL2},
      {"ReduceL1", convertReduceSumLike},
      {"ReduceSumSquare", convertReduceSumLike},
      {"ReduceLogSum", convertReduceSumLike},
      {"ReduceLogSumExp", convertReduceLogSumExp},
      {"ReduceMax", convertReduceMaxMin},
      {"ReduceMin", convertReduceMaxMin},
      {"ArgMax", convertArgMaxMin},
      {"ArgMin", convertArgMaxMin},
      {"Pow", convertPow},
      {"Sqrt", convertUnary<SqrtOp>},
      {"Erf", convertUnary<ErfOp>},
      {"Exp", convertUnary<ExpOp>},
      {"Gelu", convertGelu},
      {"LayerNormalization", convertLayerNormalization},
      {"RMSNormalization", convertRMSNormalization},
      {"InstanceNormalization", convertInstanceNormalization},
      {"GroupNormalization", convertGroupNormalization},
      {"Attention", convertAttention},
      {"RotaryEmbedding", convertRotaryEmbedding},
      {"Swish", convertSwish},
      {"GRU", convertGRU},
      {"RNN", convertRNN},
      {"HardSigmoid", convertHardSigmoid},
      {"HardSwish", convertUnary<HardSwishOp>},
      {"Where", convertWhere},
      {"Expand", convertExpand},
      {"Split", convertSplit},
      {"ScatterND", convertScatterND},
      {"ScatterElements", convertScatterElements},
      {"SoftmaxCrossEntropyLoss", convertCrossEntropyInGraph},
      {"NegativeLogLikelihoodLoss", convertCrossEntropyInGraph},
      {"RandomNormal", convertRandomNormal},
      {"RandomNormalLike", convertRandomNormal},
      {"OneHot", convertOneHot},
  };
  return table;
}

} // namespace mgs::onnx_import
