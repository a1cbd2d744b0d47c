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
#include "converters/Attention.h"
#include "converters/Indexing.h"
#include "converters/LayerNorm.h"
#include "converters/MobileNet.h"
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

/// Reads an attribute that must, if present, have a fixed size.
FailureOr<SmallVector<int64_t>> sizedInts(NodeImporter &n, StringRef name, size_t size,
                                          int64_t dflt) {
  auto values = n.intsAttr(name);
  if (!values)
    return SmallVector<int64_t>(size, dflt);
  if (values->size() != size)
    return n.emitError() << "attribute '" << name << "' has " << values->size()
                         << " entries, expected " << size;
  return *values;
}

/// Strides, dilations and explicit pads of a Conv/MaxPool/AveragePool, with
/// auto_pad resolved the way ONNX defines it.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> inputShape,
                             ArrayRef<int64_t> kernel) {
  if (inputShape.size() < 3)
    return n.emitError() << "input must have rank >= 3 (N x C x spatial...), got "
                         << shapeToString(inputShape);
  size_t spatial = inputShape.size() - 2;
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  if (w.kernel.size() != spatial)
    return n.emitError() << "kernel has " << w.kernel.size() << " spatial dims, input has "
                         << spatial;
  auto strides = sizedInts(n, "strides", spatial, 1);
  auto dilations = sizedInts(n, "dilations", spatial, 1);
  auto pads = sizedInts(n, "pads", 2 * spatial, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  w.pads = *pads;
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      auto [begin, end] = samePadding(inputShape[2 + i], w.kernel[i], w.strides[i],
                                      w.dilations[i], autoPad == "SAME_UPPER");
      w.pads[i] = begin;
      w.pads[i + spatial] = end;
    }
  } else if (autoPad != "NOTSET") {
    return n.emitError() << "unsupported value '" << autoPad
                         << "' of attribute 'auto_pad'; supported: NOTSET, SAME_UPPER, "
                            "SAME_LOWER, VALID";
  }
  return w;
}

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

LogicalResult convertConv(NodeImporter &n) {
  auto x = n.input(0), w = n.input(1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (n.hasInput(2)) {
    auto b = n.input(2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  ArrayRef<int64_t> weightShape = shapeOf(*w);
  if (weightShape.size() < 3)
    return n.emitError() << "weight must have rank >= 3, got " << shapeToString(weightShape);
  ArrayRef<int64_t> kernel = weightShape.drop_front(2);
  if (auto given = n.intsAttr("kernel_shape"); given && ArrayRef<int64_t>(*given) != kernel)
    return n.emitError() << "attribute 'kernel_shape' (" << shapeToString(*given)
                         << ") does not match the weight's spatial shape ("
                         << shapeToString(kernel) << ")";
  auto window = readWindow(n, shapeOf(*x), kernel);
  if (failed(window))
    return failure();
  OpBuilder &bld = n.builder();
  return buildSingle<ConvOp>(n, *x, *w, bias, bld.getDenseI64ArrayAttr(window->strides),
                             bld.getDenseI64ArrayAttr(window->pads),
                             bld.getDenseI64ArrayAttr(window->dilations),
                             bld.getI64IntegerAttr(n.intAttr("group", 1)));
}

/// ONNX ConvTranspose: the adjoint of the convolution whose input has the
/// output's shape and whose output has the input's (train.conv_grad_data,
/// the conv's own backward kernel; ONNX's weight [C, M/group, k...] is that
/// conv's weight as it stands). Its pads are the conv's: given, or split from
/// the total that output_shape or auto_pad implies, as ONNX specifies.
LogicalResult convertConvTranspose(NodeImporter &n) {
  auto x = n.input(0), w = n.input(1);
  if (failed(x) || failed(w))
    return failure();
  auto outType = n.outputType(0);
  if (failed(outType))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x), weight = shapeOf(*w), out = outType->getShape();
  if (in.size() < 3 || weight.size() != in.size() || out.size() != in.size())
    return n.emitError() << "input " << shapeToString(in) << ", weight " << shapeToString(weight)
                         << " and output " << shapeToString(out)
                         << " must have one rank of at least 3 (N x C x spatial...)";
  const size_t spatial = in.size() - 2;
  const int64_t group = n.intAttr("group", 1);
  if (group < 1 || in[1] != weight[0] || in[1] % group != 0 || out[1] != weight[1] * group)
    return n.emitError() << "input " << shapeToString(in) << ", weight " << shapeToString(weight)
                         << ", group " << group << " and output " << shapeToString(out)
                         << " do not agree (weight C x M/group x kernel)";
  ArrayRef<int64_t> kernel = weight.drop_front(2);
  if (auto given = n.intsAttr("kernel_shape"); given && ArrayRef<int64_t>(*given) != kernel)
    return n.emitError() << "attribute 'kernel_shape' (" << shapeToString(*given)
                         << ") does not match the weight's spatial shape ("
                         << shapeToString(kernel) << ")";
  auto strides = sizedInts(n, "strides", spatial, 1);
  auto dilations = sizedInts(n, "dilations", spatial, 1);
  auto pads = sizedInts(n, "pads", 2 * spatial, 0);
  auto outputPadding = sizedInts(n, "output_padding", spatial, 0);
  if (failed(strides) || failed(dilations) || failed(pads) || failed(outputPadding))
    return failure();
  const std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.emitError() << "unsupported value '" << autoPad
                         << "' of attribute 'auto_pad'; supported: NOTSET, SAME_UPPER, "
                            "SAME_LOWER, VALID";
  const bool split = n.findAttr("output_shape") || autoPad == "SAME_UPPER" ||
                     autoPad == "SAME_LOWER";
  // The transposed conv's own output (the output less any negative pads) and
  // the zeros padded around it, per axis of the output (begins, then ends).
  SmallVector<int64_t> reached(out.begin(), out.end()), extra(2 * out.size(), 0);
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t s = (*strides)[i], d = (*dilations)[i], k = kernel[i];
    if (s < 1 || d < 1 || (*outputPadding)[i] < 0 ||
        (*outputPadding)[i] >= std::max(s, d))
      return n.emitError() << "strides " << s << ", dilations " << d << " and output_padding "
                           << (*outputPadding)[i] << " of spatial axis " << i
                           << ": mgs needs positive strides and dilations, and output_padding "
                              "in [0, max(stride, dilation))";
    const int64_t total = s * (in[2 + i] - 1) + (*outputPadding)[i] + (k - 1) * d + 1 - out[2 + i];
    if (autoPad == "VALID") {
      (*pads)[i] = (*pads)[i + spatial] = 0;
    } else if (split) {
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2); // (floor, as ONNX's)
      (*pads)[i] = autoPad == "SAME_UPPER" ? half : total - half;
      (*pads)[i + spatial] = total - (*pads)[i];
    }
    if ((*pads)[i] + (*pads)[i + spatial] != total)
      return n.emitError() << "spatial axis " << i << ": an input of " << in[2 + i]
                           << " with pads " << (*pads)[i] << " and " << (*pads)[i + spatial]
                           << " does not give the output's " << out[2 + i];
    // A negative pad (an output_shape beyond what the input reaches) adds
    // positions no input reaches: zeros, padded after the transposed conv.
    for (size_t at : {i, i + spatial}) {
      extra[2 + i + (at == i ? 0 : spatial + 2)] = std::max<int64_t>(0, -(*pads)[at]);
      (*pads)[at] = std::max<int64_t>(0, (*pads)[at]);
    }
    reached[2 + i] -= extra[2 + i] + extra[2 + i + spatial + 2];
  }
  OpBuilder &b = n.builder();
  Value y = ConvGradDataOp::create(b, n.loc(), RankedTensorType::get(reached, b.getF32Type()),
                                   *x, *w, b.getDenseI64ArrayAttr(*strides),
                                   b.getDenseI64ArrayAttr(*pads),
                                   b.getDenseI64ArrayAttr(*dilations),
                                   b.getI64IntegerAttr(group));
  if (reached != out)
    y = PadOp::create(b, n.loc(), *outType, y, b.getDenseI64ArrayAttr(extra),
                      b.getF32FloatAttr(0.0f));
  if (n.hasInput(2)) {
    auto bias = n.input(2);
    if (failed(bias))
      return failure();
    if (shapeOf(*bias) != ArrayRef<int64_t>{out[1]})
      return n.emitError() << "bias of shape " << shapeToString(shapeOf(*bias))
                           << " for " << out[1] << " output channels";
    SmallVector<int64_t> perChannel(out.size() - 1, 1);
    perChannel[0] = out[1];
    y = AddOp::create(b, n.loc(), *outType, y, reshapeTo(n, *bias, perChannel));
  }
  n.setOutput(0, y);
  return success();
}

LogicalResult convertMaxPool(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto window =
      readWindow(n, shapeOf(*x), n.intsAttr("kernel_shape").value_or(SmallVector<int64_t>{}));
  if (failed(window))
    return failure();
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  Type indicesType;
  if (n.hasOutput(1)) {
    auto it = n.outputType(1, n.builder().getI64Type());
    if (failed(it))
      return failure();
    indicesType = *it;
  }
  OpBuilder &bld = n.builder();
  auto op = MaxPoolOp::create(
      bld, n.loc(), *type, indicesType, *x, bld.getDenseI64ArrayAttr(window->kernel),
      bld.getDenseI64ArrayAttr(window->strides), bld.getDenseI64ArrayAttr(window->pads),
      bld.getDenseI64ArrayAttr(window->dilations), bld.getBoolAttr(n.intAttr("ceil_mode", 0)),
      bld.getI64IntegerAttr(n.intAttr("storage_order", 0)));
  n.setOutput(0, op.getResult());
  if (n.hasOutput(1))
    n.setOutput(1, op.getIndices());
  return success();
}

LogicalResult convertAveragePool(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto window =
      readWindow(n, shapeOf(*x), n.intsAttr("kernel_shape").value_or(SmallVector<int64_t>{}));
  if (failed(window))
    return failure();
  OpBuilder &bld = n.builder();
  // Dilations (opset 19) only where they are not all ones.
  DenseI64ArrayAttr dilations;
  if (llvm::any_of(window->dilations, [](int64_t d) { return d != 1; }))
    dilations = bld.getDenseI64ArrayAttr(window->dilations);
  return buildSingle<AveragePoolOp>(n, *x, bld.getDenseI64ArrayAttr(window->kernel),
                                    bld.getDenseI64ArrayAttr(window->strides),
                                    bld.getDenseI64ArrayAttr(window->pads),
                                    bld.getBoolAttr(n.intAttr("ceil_mode", 0)),
                                    bld.getBoolAttr(n.intAttr("count_include_pad", 0)), dilations);
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
  bool training = n.opset() >= 14 ? n.intAttr("training_mode", 0) != 0
                                  : n.node().output_size() > 1;
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

LogicalResult convertPad(NodeImporter &n) {
  std::string mode = n.stringAttr("mode", "constant");
  if (mode != "constant")
    return n.emitError() << "unsupported value '" << mode
                         << "' of attribute 'mode'; supported: constant";
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
      return n.emitError() << "input 'pads' has " << pads->size() << " values for "
                           << axes->size() << " axes; expected " << 2 * axes->size();
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

/// Gather at an INT64 graph input's indices (an embedding on axis 0, or any
/// other axis), or of a computed tensor at one constant index (PyTorch's
/// h[-1]: the slice at that index, the axis dropped), at consecutive constant
/// indices (position ids, arange(T): the slice, reshaped to the result) or at
/// any other constant indices (a gather at an index constant). Constant data
/// is evaluated at import.
LogicalResult convertGather(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(*x);
  auto normAxis = n.axisAttr("axis", 0, static_cast<int64_t>(shape.size()));
  if (failed(normAxis))
    return failure();
  const int64_t axis = *normAxis;
  OpBuilder &b = n.builder();
  // A gather at `indices` along the axis, of ONNX's shape.
  auto gather = [&](Value indices) -> LogicalResult {
    Value y = gatherAlongAxis(b, n.loc(), *x, axis, indices);
    if (shapeOf(y) != type->getShape())
      return n.emitError() << "the gather has shape " << shapeToString(shapeOf(y))
                           << ", ONNX shape inference says " << shapeToString(type->getShape());
    n.setOutput(0, y);
    return success();
  };
  // Transposed ids (XLNet's time-major ones): the rows at the ids, transposed
  // as the ids were (the rows' own dimensions last).
  if (auto transposed = n.transposedIndexInput(1)) {
    auto [ids, perm] = *transposed;
    if (axis != 0)
      return n.emitError() << "it gathers transposed token ids along axis " << axis
                           << "; mgs gathers them along axis 0 (an embedding)";
    Value rows = gatherAlongAxis(b, n.loc(), *x, 0, ids);
    const int64_t idRank = static_cast<int64_t>(perm.size());
    SmallVector<int64_t> full(perm);
    for (int64_t d = idRank; d < static_cast<int64_t>(shapeOf(rows).size()); ++d)
      full.push_back(d);
    Value y = permuteDims(b, n.loc(), rows, full);
    if (shapeOf(y) != type->getShape())
      return n.emitError() << "the gather has shape " << shapeToString(shapeOf(y))
                           << ", ONNX shape inference says " << shapeToString(type->getShape());
    n.setOutput(0, y);
    return success();
  }
  // An embedding: rows of the table at the graph's integer inputs. Ids
  // reshaped on their way (GPT-2's view(-1, T)) give the same rows, reshaped.
  if (std::optional<Value> indices = n.indexInput(1)) {
    if (axis == 0 && shapeOf(*indices) != ArrayRef<int64_t>(type->getShape()).drop_back(
                                               shape.size() - 1)) {
      Value rows = gatherAlongAxis(b, n.loc(), *x, axis, *indices);
      if (cast<RankedTensorType>(rows.getType()).getNumElements() != type->getNumElements())
        return n.emitError() << "the gather has shape " << shapeToString(shapeOf(rows))
                             << ", ONNX shape inference says " << shapeToString(type->getShape());
      n.setOutput(0, reshapeTo(n, rows, type->getShape()));
      return success();
    }
    return gather(*indices);
  }
  auto index = n.constantInts(1);
  if (failed(index))
    return failure();
  SmallVector<int64_t> at(*index);
  for (int64_t &i : at) {
    if (i < -shape[axis] || i >= shape[axis])
      return n.emitError() << "index " << i << " is out of range for dimension " << axis
                           << " of size " << shape[axis];
    if (i < 0)
      i += shape[axis];
  }
  const int64_t count = static_cast<int64_t>(at.size());
  if (count == 0)
    return n.emitError() << "input 1 holds no index";
  for (int64_t j = 1; j < count; ++j) {
    if (at[j] == at[0] + j)
      continue;
    // Any other indices (Swin's relative position bias): a gather at them.
    auto proto = n.constantInput(1);
    if (failed(proto))
      return failure();
    auto indexType = RankedTensorType::get(
        SmallVector<int64_t>((*proto)->dims().begin(), (*proto)->dims().end()), b.getI64Type());
    return gather(arith::ConstantOp::create(
        b, n.loc(), indexType, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(at))));
  }
  // The slice [at[0], at[0] + count) along the axis, reshaped to the result
  // (the axis dropped for a scalar index, replaced by the indices' shape).
  Value slice = *x;
  if (count < shape[axis]) {
    // One index: unit pieces, as mgs has always split (h[-1]); a range: the
    // rows before, the range, the rows after.
    SmallVector<int64_t> sizes;
    if (count == 1)
      sizes.assign(shape[axis], 1);
    else
      for (int64_t size : {at[0], count, shape[axis] - at[0] - count})
        if (size > 0)
          sizes.push_back(size);
    SmallVector<Type> pieces;
    for (int64_t size : sizes) {
      SmallVector<int64_t> pieceShape(shape);
      pieceShape[axis] = size;
      pieces.push_back(RankedTensorType::get(pieceShape, b.getF32Type()));
    }
    slice = SplitOp::create(b, n.loc(), pieces, *x, b.getI64IntegerAttr(axis))
                .getResult(count == 1 ? at[0] : at[0] > 0 ? 1 : 0);
  }
  n.setOutput(0, ReshapeOp::create(b, n.loc(), *type, slice));
  return success();
}

/// Slice with constant starts/ends/axes and positive steps: per sliced axis,
/// a split into the part before, the slice and the part after, keeping the
/// slice (PyTorch re-slices an LSTM's weights into ONNX's gate order so);
/// with a step, every step-th element of the slice (Swin's patch merging,
/// x[:, 0::2]: strideAxis).
LogicalResult convertSlice(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto starts = n.constantInts(1), ends = n.constantInts(2);
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  for (auto [i, list] : {std::pair{3, &axes}, std::pair{4, &steps}}) {
    if (!n.hasInput(i))
      continue;
    auto given = n.constantInts(i);
    if (failed(given))
      return failure();
    *list = *given;
  }
  SmallVector<int64_t> los, his, stepOf;
  if (std::string problem = sliceBounds(shapeOf(*x), *starts, *ends, axes, steps, los, his,
                                        &stepOf);
      !problem.empty())
    return n.emitError() << problem;
  const int64_t rank = static_cast<int64_t>(los.size());
  OpBuilder &b = n.builder();
  Value v = *x;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t lo = los[axis], hi = his[axis], step = stepOf[axis];
    if (lo == 0 && hi == shapeOf(v)[axis] && step == 1)
      continue;
    if (lo == hi) { // Phi-3's rotary pass-through part at partial_rotary_factor 1
      n.setEmptyOutput(0);
      return success();
    }
    v = step == 1 ? sliceAxis(b, n.loc(), v, axis, lo, hi)
                  : strideAxis(b, n.loc(), v, axis, lo, (hi - lo + step - 1) / step, step);
  }
  auto type = n.outputType(0);
  if (failed(type))
    return failure();
  if (v.getType() != *type)
    return n.emitError() << "the slice has shape " << shapeToString(shapeOf(v))
                         << ", ONNX shape inference says " << shapeToString(type->getShape());
  n.setOutput(0, v);
  return success();
}

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
      {"GatherElements", convertGatherElements},
      {"Reciprocal", convertReciprocal},
      {"Cos", convertUnary<CosOp>},
      {"Sin", convertUnary<SinOp>},
      {"ReduceMean", convertReduceMean},
      {"ReduceSum", convertReduceSum},
      {"ReduceL2", convertReduceL2},
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
      {"HardSigmoid", convertHardSigmoid},
      {"HardSwish", convertUnary<HardSwishOp>},
      {"Where", convertWhere},
      {"Expand", convertExpand},
      {"Split", convertSplit},
      {"ScatterND", convertScatterND},
  };
  return table;
}

} // namespace mgs::onnx_import
