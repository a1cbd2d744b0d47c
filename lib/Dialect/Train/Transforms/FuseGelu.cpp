//===- FuseGelu.cpp - Decomposed GELUs into train.gelu --------------------===//
//
// Matches the ops PyTorch's opset-15 export of nn.GELU consists of:
//
//   exact: 0.5 * x * (1 + erf(x / sqrt(2)))      (or x * 0.70710677)
//   tanh:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
//
// x^3 as x * (x * x) or pow(x, 3); the three factors of the outer product in
// any order and association, every commutative op's operands either way. The
// ops become one train.gelu when every one has x's type (no broadcasting but
// the constants'), every intermediate value has no other user and every x is
// the same value. The irrational constants may differ from the float nearest
// to them by a few ulps (how an exporter rounded them); 0.5, 1 and 3 are
// exact. Anything else stays as it is.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/Transforms/Passes.h"

#include "FusionMatchers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINFUSEGELU
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

/// Whether v is a one-value constant within a few float ulps of `ref`
/// (exactly `ref` when `exact`).
bool isConstant(Value v, double ref, bool exact = false) {
  std::optional<float> c = splatValue(v);
  if (!c)
    return false;
  if (exact)
    return *c == static_cast<float>(ref);
  return std::abs(static_cast<double>(*c) - ref) <= 1e-6 * std::abs(ref);
}

/// One match: x, whether it is the tanh form, and every op it replaces.
struct Match {
  Value x;
  bool tanh = false;
  SmallVector<Operation *> ops;

  /// Records `op` when its result has x's type.
  bool take(Operation *op) {
    if (!op || op->getResult(0).getType() != x.getType())
      return false;
    ops.push_back(op);
    return true;
  }
};

/// `v` = x * c or c * x with the constant c near `ref` (`x` given), or null.
MulOp scaledX(Value v, Value x, double ref) {
  auto mul = soleDef<MulOp>(v);
  if (!mul)
    return MulOp();
  Value other = otherOperand(mul, x);
  return other && other != x && isConstant(other, ref) ? mul : MulOp();
}

/// `v` = c * w or w * c with c near `ref`: w, or null.
Value unscaled(Value v, double ref, Operation *&mulOp) {
  auto mul = soleDef<MulOp>(v);
  if (!mul)
    return Value();
  for (int side = 0; side < 2; ++side)
    if (isConstant(mul->getOperand(1 - side), ref)) {
      mulOp = mul;
      return mul->getOperand(side);
    }
  return Value();
}

/// erf(x / sqrt(2)) or erf(x * (1 / sqrt(2))) of the given x.
bool matchExactCdf(Value v, Match &m) {
  auto erf = soleDef<ErfOp>(v);
  if (!erf)
    return false;
  Value u = erf.getInput();
  Operation *scale = nullptr;
  if (auto div = soleDef<DivOp>(u); div && div.getLhs() == m.x &&
                                    isConstant(div.getRhs(), std::sqrt(2.0)))
    scale = div;
  else
    scale = scaledX(u, m.x, std::sqrt(0.5));
  return m.take(scale) && m.take(erf);
}

/// x^3 of the given x: x * (x * x) (either order) or pow(x, 3).
bool matchCube(Value v, Match &m) {
  if (auto pow = soleDef<PowOp>(v))
    return pow.getInput() == m.x && pow.getExponent().convertToFloat() == 3.0f && m.take(pow);
  auto cube = soleDef<MulOp>(v);
  if (!cube)
    return false;
  auto square = soleDef<MulOp>(otherOperand(cube, m.x));
  return square && square.getLhs() == m.x && square.getRhs() == m.x && m.take(square) &&
         m.take(cube);
}

/// tanh(sqrt(2 / pi) (x + 0.044715 x^3)) of the given x.
bool matchTanhCdf(Value v, Match &m) {
  auto tanh = soleDef<TanhOp>(v);
  if (!tanh)
    return false;
  Operation *outerScale = nullptr, *cubeScale = nullptr;
  auto sum = soleDef<AddOp>(unscaled(tanh.getInput(), std::sqrt(2.0 / llvm::numbers::pi), outerScale));
  if (!sum)
    return false;
  Value cubic = otherOperand(sum, m.x);
  if (!cubic || cubic == m.x)
    return false;
  Value cube = unscaled(cubic, 0.044715, cubeScale);
  return cube && matchCube(cube, m) && m.take(cubeScale) && m.take(sum) && m.take(outerScale) &&
         m.take(tanh);
}

/// 1 + cdf(x) (either order) of the given x.
bool matchOnePlusCdf(Value v, Match &m) {
  auto add = soleDef<AddOp>(v);
  if (!add)
    return false;
  const size_t taken = m.ops.size();
  for (int side = 0; side < 2; ++side) {
    if (!isConstant(add->getOperand(side), 1.0, /*exact=*/true))
      continue;
    Value cdf = add->getOperand(1 - side);
    m.tanh = static_cast<bool>(cdf.getDefiningOp<TanhOp>());
    if ((m.tanh ? matchTanhCdf(cdf, m) : matchExactCdf(cdf, m)) && m.take(add))
      return true;
    m.ops.truncate(taken);
  }
  return false;
}

struct FuseGelu : OpRewritePattern<MulOp> {
  FuseGelu(MLIRContext *ctx, llvm::Statistic &numFused)
      : OpRewritePattern(ctx), numFused(numFused) {}

  LogicalResult matchAndRewrite(MulOp outer, PatternRewriter &rewriter) const override {
    // The outer product of three factors {0.5, x, 1 + cdf(x)}: one of its
    // operands is a product of two of them (no other user), the other the third.
    for (int side = 0; side < 2; ++side) {
      auto inner = soleDef<MulOp>(outer->getOperand(side));
      if (!inner)
        continue;
      Value factors[3] = {inner.getLhs(), inner.getRhs(), outer->getOperand(1 - side)};
      for (int half = 0; half < 3; ++half) {
        if (!isConstant(factors[half], 0.5, /*exact=*/true))
          continue;
        for (int xi = 0; xi < 3; ++xi) {
          if (xi == half)
            continue;
          Match m;
          m.x = factors[xi];
          if (!matchOnePlusCdf(factors[3 - half - xi], m) || !m.take(inner) || !m.take(outer))
            continue;
          rewrite(outer, m, rewriter);
          return success();
        }
      }
    }
    return failure();
  }

  void rewrite(MulOp outer, Match &m, PatternRewriter &rewriter) const {
    SmallVector<Location> locs;
    for (Operation *op : m.ops)
      locs.push_back(op->getLoc());
    rewriter.setInsertionPoint(outer);
    auto gelu = GeluOp::create(rewriter, rewriter.getFusedLoc(locs), m.x.getType(), m.x,
                               rewriter.getStringAttr(m.tanh ? "tanh" : "none"));
    rewriter.replaceOp(outer, gelu.getResult());
    // Users first: m.ops lists each op after its operands' (the outer product last).
    for (Operation *op : llvm::reverse(ArrayRef(m.ops).drop_back()))
      rewriter.eraseOp(op);
    ++numFused;
  }

  llvm::Statistic &numFused;
};

struct TrainFuseGelu : impl::TrainFuseGeluBase<TrainFuseGelu> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseGelu>(&getContext(), numFused);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mgs::train
