//===- ElementwiseOps.cpp - The elementwise ops' kinds and parameters -----===//
//
// elementwiseKind(), unaryKinds() and unaryParams(): the one list of the
// elementwise ops that autodiff and the lowering share (TrainOps.h); and the
// verifiers of the unary ops with parameters (elu, celu, selu, hard_sigmoid).
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mgs::train;

StringRef mgs::train::elementwiseKind(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](ReluOp) { return "relu"; })
      .Case([](LeakyReluOp) { return "leaky_relu"; })
      .Case([](SigmoidOp) { return "sigmoid"; })
      .Case([](TanhOp) { return "tanh"; })
      .Case([](HardSigmoidOp) { return "hard_sigmoid"; })
      .Case([](HardSwishOp) { return "hard_swish"; })
      .Case([](AddOp) { return "add"; })
      .Case([](SubOp) { return "sub"; })
      .Case([](MulOp) { return "mul"; })
      .Case([](DivOp) { return "div"; })
      .Case([](GreaterOp) { return "greater"; })
      .Case([](GreaterOrEqualOp) { return "greater_equal"; })
      .Case([](EqualOp) { return "equal"; })
      .Case([](KeepWhereOp) { return "keep_where"; })
      .Case([](SqrtOp) { return "sqrt"; })
      .Case([](ErfOp) { return "erf"; })
      .Case([](ExpOp) { return "exp"; })
      .Case([](CosOp) { return "cos"; })
      .Case([](SinOp) { return "sin"; })
      .Case([](PowOp) { return "pow"; })
      .Case([](AbsOp) { return "abs"; })
      .Case([](LogOp) { return "log"; })
      .Case([](SoftsignOp) { return "softsign"; })
      .Case([](MishOp) { return "mish"; })
      .Case([](EluOp) { return "elu"; })
      .Case([](CeluOp) { return "celu"; })
      .Case([](SeluOp) { return "selu"; })
      .Case([](RoundOp) { return "round"; })
      .Case([](FloorOp) { return "floor"; })
      .Case([](CeilOp) { return "ceil"; })
      .Default([](Operation *) { return ""; });
}

ArrayRef<StringRef> mgs::train::unaryKinds() {
  static const StringRef kinds[] = {
      "relu", "leaky_relu", "sigmoid",      "tanh",       "sqrt",  "erf", "pow",      "exp",
      "cos",  "sin",        "hard_sigmoid", "hard_swish", "abs",   "log", "softsign", "mish",
      "elu",  "celu",       "selu",         "round",      "floor", "ceil"};
  return kinds;
}

std::optional<UnaryParams> mgs::train::unaryParams(Operation *op) {
  UnaryParams p{elementwiseKind(op)};
  if (!llvm::is_contained(unaryKinds(), p.kind))
    return std::nullopt;
  auto f = [](FloatAttr a) { return a.getValue().convertToDouble(); };
  if (auto leaky = dyn_cast<LeakyReluOp>(op))
    p.alpha = f(leaky.getAlphaAttr());
  else if (auto pow = dyn_cast<PowOp>(op))
    p.alpha = f(pow.getExponentAttr());
  else if (auto hard = dyn_cast<HardSigmoidOp>(op))
    p = {p.kind, f(hard.getAlphaAttr()), f(hard.getBetaAttr())};
  else if (isa<HardSwishOp>(op)) // ONNX's constants, as float32
    p = {p.kind, 1.0f / 6.0f, 0.5f};
  else if (auto elu = dyn_cast<EluOp>(op))
    p.alpha = f(elu.getAlphaAttr());
  else if (auto celu = dyn_cast<CeluOp>(op))
    p.alpha = f(celu.getAlphaAttr());
  else if (auto selu = dyn_cast<SeluOp>(op))
    p = {p.kind, f(selu.getAlphaAttr()), f(selu.getGammaAttr())};
  return p;
}

/// alpha (and gamma) of elu, celu and selu: finite, and celu's not 0 (it
/// divides by it).
static LogicalResult verifyExpUnitParams(Operation *op, ArrayRef<float> values, bool nonZero) {
  for (float v : values)
    if (!std::isfinite(v) || (nonZero && v == 0.0f))
      return op->emitOpError() << "alpha" << (values.size() > 1 ? " and gamma" : "")
                               << " must be finite" << (nonZero ? " and not 0" : "") << ", got "
                               << v;
  return success();
}

LogicalResult EluOp::verify() {
  return verifyExpUnitParams(*this, {getAlpha().convertToFloat()}, false);
}
LogicalResult CeluOp::verify() {
  return verifyExpUnitParams(*this, {getAlpha().convertToFloat()}, true);
}
LogicalResult SeluOp::verify() {
  return verifyExpUnitParams(*this, {getAlpha().convertToFloat(), getGamma().convertToFloat()},
                             false);
}

LogicalResult HardSigmoidOp::verify() {
  float alpha = getAlpha().convertToFloat(), beta = getBeta().convertToFloat();
  if (!std::isfinite(alpha) || !std::isfinite(beta))
    return emitOpError() << "alpha and beta must be finite, got alpha " << alpha << " and beta "
                         << beta;
  return success();
}
