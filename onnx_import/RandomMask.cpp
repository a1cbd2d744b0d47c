//===- RandomMask.cpp - Random draws that become a dropout mask -----------===//
//
// PyTorch 2.x exports torchvision's StochasticDepth (drop path) in training
// mode as RandomUniformLike of the per-sample shape, Less than the survival
// rate, Cast to FLOAT, Div by the survival rate and Mul with the branch: a
// dropout whose mask has one element per sample. The chain is followed node by
// node (RandomMask says how far along it a value is) and its Mul becomes a
// train.dropout with that mask. Uniform numbers read any other way (a
// diffusion objective's time steps, (torch.rand(N) * T).long()) are a
// train.random_uniform; a FLOAT mask read any other way (x * (u < 0.8) or
// x * bernoulli(0.8) unscaled: a denoising autoencoder's masking noise) is
// numbers, as is a Bernoulli of computed probabilities (p > u); a BOOL mask
// used any other way is an error naming the node and the draw.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OnnxNodes.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "llvm/ADT/STLExtras.h"

#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

/// The comparisons that turn uniform numbers into a dropout mask's keep test.
LogicalResult GraphImporter::importRandomMask(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  auto shapeOfOutput = [&]() -> FailureOr<SmallVector<int64_t>> {
    auto type = outputType(0, Type());
    if (failed(type))
      return failure();
    return SmallVector<int64_t>(type->getShape());
  };
  const bool draws = op == "RandomUniformLike" || op == "RandomUniform" || op == "Bernoulli";
  if (draws) {
    if (!hasOutput(0))
      return success();
    handled = true;
    auto shape = shapeOfOutput();
    if (failed(shape))
      return failure();
    RandomMask mask{RandomMask::Uniform, *shape, 1.0, 1.0, nodeLabel};
    mask.loc = curLoc;
    if (op == "Bernoulli") {
      // Bernoulli(p): 1 with probability p, in the input's dtype (or `dtype`).
      // One constant p may start a dropout mask; other probabilities (computed,
      // or a constant per element) give numbers: p > u for u uniform in [0, 1).
      auto p = inputIsConstant(0) ? constantFloats(0) : FailureOr<std::vector<float>>(failure());
      if (failed(p) || p->empty() ||
          llvm::any_of(*p, [&](float v) { return v != (*p)[0] || !(v >= 0.0f && v <= 1.0f); })) {
        if (valueTypeOf(curNode->output(0)) != onnx::TensorProto::FLOAT)
          return emitError() << "it draws " << dtypeName(valueTypeOf(curNode->output(0)))
                             << " values of computed or per-element probabilities; mgs draws "
                                "such Bernoulli numbers as FLOAT (a mask's BOOL only of one "
                                "constant probability)";
        auto probabilities = input(0);
        if (failed(probabilities))
          return failure();
        auto type = RankedTensorType::get(*shape, b.getF32Type());
        Value u = RandomUniformOp::create(b, curLoc, type, b.getF32FloatAttr(0.0f),
                                          b.getF32FloatAttr(1.0f));
        setOutput(0, GreaterOp::create(b, curLoc, type, *probabilities, u));
        return success();
      }
      mask.stage = valueTypeOf(curNode->output(0)) == onnx::TensorProto::BOOL
                       ? RandomMask::Keep
                       : RandomMask::KeepFloat;
      mask.keep = mask.threshold = (*p)[0];
    } else {
      if (const onnx::AttributeProto *dtype = findAttr("dtype");
          dtype && dtype->i() != onnx::TensorProto::FLOAT)
        return emitError() << "it draws values of ONNX dtype " << dtype->i()
                           << "; mgs draws float32 (dtype 1) only";
      mask.low = floatAttr("low", 0.0f);
      mask.high = floatAttr("high", 1.0f);
      if (!std::isfinite(mask.low) || !std::isfinite(mask.high) || !(mask.low < mask.high))
        return emitError() << "it draws from [" << mask.low << ", " << mask.high
                           << "): low must be below high, both finite";
    }
    randomMasks[curNode->output(0)] = std::move(mask);
    return success();
  }
  const bool compares = isOrderComparison(op);
  int at = -1;
  for (int i = 0; i < curNode->input_size() && at < 0; ++i)
    if (hasInput(i) && randomMasks.count(curNode->input(i)))
      at = i;
  if (at < 0)
    return success();
  handled = true;
  RandomMask mask = randomMasks.lookup(curNode->input(at));
  auto reject = [&](const Twine &why) {
    return emitError() << "its input '" << curNode->input(at) << "' is random (drawn by node '"
                       << mask.draw << "'): " << why
                       << "; mgs imports uniform numbers compared with a constant as a dropout "
                          "mask, which must be cast to FLOAT, scaled by a constant and "
                          "multiplied with data (stochastic depth as PyTorch exports it: "
                          "RandomUniformLike, Less, Cast, Div, Mul)";
  };
  // A mask read other than on the way to a dropout (a denoising
  // autoencoder's x * bernoulli(0.8), unscaled; the Where by u >= 1 - eps/2
  // of torch.export's exponential_) is numbers, 0 or its scale, or a truth
  // (materializeDraw), and the node imports as usual.
  auto rejectOrNumbers = [&](const Twine &why) -> LogicalResult {
    if (mask.stage == RandomMask::Uniform)
      return reject(why);
    handled = false;
    return materializeDraw(curNode->input(at));
  };
  const bool scales = op == "Div" || op == "Mul";
  const int64_t castTo = op == "Cast" ? intAttr("to", 0) : 0;
  if (!hasOutput(0) || curNode->output_size() != 1)
    return rejectOrNumbers("'" + op + "' is not on the way to a dropout mask");
  std::optional<double> c;
  if (compares || scales)
    c = otherScalarOperand(at);
  if (mask.stage == RandomMask::Uniform && compares) {
    if (!c)
      return reject("it is compared with something other than a constant FLOAT scalar");
    // u < c (or c > u) holds with probability c for u uniform in [0, 1); u > c
    // with 1 - c; whether equality counts changes nothing.
    mask.below = (op.rfind("Less", 0) == 0) == (at == 0);
    mask.strict = op == "Less" || op == "Greater";
    mask.threshold = *c;
    mask.keep = std::clamp(mask.below ? *c : 1.0 - *c, 0.0, 1.0);
    mask.stage = RandomMask::Keep;
  } else if (mask.stage == RandomMask::Keep && op == "Cast" &&
             castTo == onnx::TensorProto::FLOAT) {
    mask.stage = RandomMask::KeepFloat;
  } else if (mask.stage != RandomMask::Uniform &&
             (op == "Identity" || (op == "Cast" && castTo == (mask.stage == RandomMask::Keep
                                                                  ? onnx::TensorProto::BOOL
                                                                  : onnx::TensorProto::FLOAT)))) {
    // Unchanged.
  } else if (mask.stage == RandomMask::KeepFloat && scales && c) {
    if (op == "Div" && at != 0)
      return rejectOrNumbers("it is a divisor");
    mask.scale = op == "Div" ? mask.scale / *c : mask.scale * *c;
  } else if (mask.stage == RandomMask::KeepFloat && op == "Mul") {
    // data * mask: dropout of the data with the mask broadcast over it.
    auto x = input(1 - at);
    if (failed(x))
      return failure();
    ArrayRef<int64_t> xs = cast<RankedTensorType>(x->getType()).getShape();
    SmallVector<int64_t> ms(mask.shape);
    if (ms.size() > xs.size())
      return rejectOrNumbers("it has more dimensions than the data it multiplies");
    ms.insert(ms.begin(), xs.size() - ms.size(), 1);
    if (!isLeadingBlockMask(xs, ms))
      return rejectOrNumbers("its shape " + shapeToString(mask.shape) +
                             " is not the data's leading dimensions followed by ones (data " +
                             shapeToString(xs) +
                             "): a dropout mask keeps or drops whole samples or "
                             "elements");
    if (mask.keep <= 0.0)
      return rejectOrNumbers("it keeps nothing (probability 0)");
    // The kept values are scaled by 1 / keep (torchvision's stochastic_depth
    // divides by the survival rate), as train.dropout scales by 1 / (1 - ratio).
    if (std::abs(mask.scale * mask.keep - 1.0) > 1e-6)
      return rejectOrNumbers("the kept values are scaled by " + std::to_string(mask.scale) +
                             ", not by 1 / " + std::to_string(mask.keep) +
                             " (one over the probability of keeping), as dropout scales them");
    if (!usedDraws.insert(mask.draw).second)
      return reject("the same draw masks a second tensor; mgs draws one mask per dropout");
    if (materializedDraws.contains(mask.draw))
      return reject("the same draw is also read as numbers; mgs draws a dropout's mask apart");
    auto maskType = RankedTensorType::get(ms, b.getI1Type());
    auto drop = DropoutOp::create(b, curLoc, x->getType(), maskType, *x,
                                  b.getF32FloatAttr(static_cast<float>(1.0 - mask.keep)),
                                  b.getUnitAttr(), IntegerAttr());
    setOutput(0, drop.getResult());
    return success();
  } else {
    return rejectOrNumbers("'" + op + "' is not on the way to a dropout mask");
  }
  randomMasks[curNode->output(0)] = std::move(mask);
  return success();
}

std::optional<double> GraphImporter::otherScalarOperand(int at) {
  if (curNode->input_size() != 2 || !inputIsConstant(1 - at))
    return std::nullopt;
  auto t = constantInput(1 - at);
  if (failed(t) || (*t)->data_type() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  std::vector<float> v = onnx::ParseData<float>(*t);
  if (v.size() != 1)
    return std::nullopt;
  return v[0];
}

LogicalResult GraphImporter::importUniformNumbers(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  const bool compares = isOrderComparison(op);
  // Uniform numbers in [0, 1) compared with a constant start a dropout mask;
  // read any other way, they are numbers (the node imports as usual).
  for (int i = 0; i < curNode->input_size(); ++i) {
    auto it = hasInput(i) ? randomMasks.find(curNode->input(i)) : randomMasks.end();
    if (it == randomMasks.end() || it->second.stage != RandomMask::Uniform)
      continue;
    const RandomMask &draw = it->second;
    const bool startsMask = compares && hasOutput(0) && curNode->output_size() == 1 &&
                            draw.low == 0.0 && draw.high == 1.0 && otherScalarOperand(i);
    if (!startsMask && failed(materializeDraw(curNode->input(i))))
      return failure();
  }
  return success();
}

LogicalResult GraphImporter::materializeDraw(const std::string &name) {
  RandomMask draw = randomMasks.lookup(name);
  if (usedDraws.contains(draw.draw))
    return emitError() << "its input '" << name << "' is random (drawn by node '" << draw.draw
                       << "'), and the same draw is a dropout's mask; mgs draws a dropout's mask "
                          "apart";
  auto type = RankedTensorType::get(draw.shape, b.getF32Type());
  Location loc = draw.loc ? Location(draw.loc) : curLoc;
  Value &u = drawValues[draw.draw];
  if (!u)
    u = RandomUniformOp::create(b, loc, type, b.getF32FloatAttr(draw.low),
                                b.getF32FloatAttr(draw.high));
  Value value = u;
  if (draw.stage != RandomMask::Uniform) {
    // The mask's comparison of the draw (1 with probability `keep`), times
    // its scale.
    Value c = f32Constant(static_cast<float>(draw.threshold));
    auto [lhs, rhs] = draw.below ? std::pair{c, u} : std::pair{u, c};
    value = draw.strict ? GreaterOp::create(b, loc, type, lhs, rhs).getResult()
                        : GreaterOrEqualOp::create(b, loc, type, lhs, rhs).getResult();
    if (draw.scale != 1.0)
      value = MulOp::create(b, loc, type, value, f32Constant(static_cast<float>(draw.scale)));
    if (draw.stage == RandomMask::Keep)
      truths.insert(name);
  }
  values[name] = value;
  randomMasks.erase(name);
  materializedDraws.insert(draw.draw);
  return success();
}

} // namespace mgs::onnx_import
