//===- Conv.cpp - Convolutions and pooling ---------------------------------===//
//
// The windowed ops: Conv, ConvTranspose, MaxPool and AveragePool, their
// strides, dilations and pads read with ONNX's defaults and auto_pad
// resolved as ONNX defines it.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

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

} // namespace

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
  // A constant zero bias of another shape than ONNX's [M] adds nothing:
  // PyTorch 2.x's torch.export-based exporter gives a Conv3d without a bias
  // (MViT's pooling) a zero one of shape [M, N].
  DenseElementsAttr zeros;
  if (bias && shapeOf(bias) != ArrayRef<int64_t>{weightShape[0]} &&
      matchPattern(bias, m_Constant(&zeros)) && zeros.isSplat() &&
      isa<FloatType>(zeros.getElementType()) && zeros.getSplatValue<APFloat>().isZero())
    bias = Value();
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

} // namespace mgs::onnx_import
