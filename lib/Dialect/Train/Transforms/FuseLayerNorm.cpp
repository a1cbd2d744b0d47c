//===- FuseLayerNorm.cpp - Decomposed layer norms into train.layer_norm ---===//
//
// Matches the ops PyTorch's opset-15 export of nn.LayerNorm consists of (and
// that ONNX LayerNormalization imports as):
//
//   mu = mean(x), c = x - mu, var = mean(c^2), sd = sqrt(var + eps),
//   y = c / sd * scale + bias
//
// with both means over the same trailing dimensions (keepdims), and replaces
// them by one train.layer_norm when every intermediate value has no other
// user and scale and bias have the normalized dimensions' shape. Anything
// else stays as it is.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/Transforms/Passes.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "FusionMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINFUSELAYERNORM
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

/// The first dimension of a keepdims mean over the trailing dimensions of a
/// rank-`rank` input (axes axis..rank-1), or -1.
int64_t trailingMeanAxis(ReduceOp red) {
  ArrayRef<int64_t> axes = red.getAxes();
  const int64_t rank = shapeOf(red.getInput()).size();
  if (red.getKind() != "mean" || !red.getKeepdims() || axes.empty())
    return -1;
  const int64_t axis = rank - static_cast<int64_t>(axes.size());
  for (auto [i, a] : llvm::enumerate(axes))
    if (a != axis + static_cast<int64_t>(i))
      return -1;
  return axis;
}

struct FuseLayerNorm : OpRewritePattern<AddOp> {
  FuseLayerNorm(MLIRContext *ctx, llvm::Statistic &numFused)
      : OpRewritePattern(ctx), numFused(numFused) {}

  LogicalResult matchAndRewrite(AddOp biasAdd, PatternRewriter &rewriter) const override {
    // y * scale + bias, y * scale on either side.
    for (int side = 0; side < 2; ++side) {
      auto mul = soleDef<MulOp>(biasAdd->getOperand(side));
      if (mul && succeeded(fuse(biasAdd, mul, biasAdd->getOperand(1 - side), rewriter)))
        return success();
    }
    return failure();
  }

  LogicalResult fuse(AddOp biasAdd, MulOp mul, Value bias, PatternRewriter &rewriter) const {
    for (int side = 0; side < 2; ++side) {
      auto div = soleDef<DivOp>(mul->getOperand(side));
      if (!div)
        continue;
      Value scale = mul->getOperand(1 - side);
      // c / sqrt(var + eps), c = x - mu used by the square and the division only.
      auto sub = div.getLhs().getDefiningOp<SubOp>();
      auto sqrt = soleDef<SqrtOp>(div.getRhs());
      if (!sub || !sqrt || !llvm::hasNItems(sub.getResult().getUses(), 2))
        return failure();
      auto epsAdd = soleDef<AddOp>(sqrt.getInput());
      if (!epsAdd)
        return failure();
      ReduceOp var;
      std::optional<float> eps;
      for (int e = 0; e < 2 && !var; ++e) {
        var = soleDef<ReduceOp>(epsAdd->getOperand(e));
        eps = splatValue(epsAdd->getOperand(1 - e));
        if (!eps)
          var = ReduceOp();
      }
      if (!var || !(*eps >= 0.0f))
        return failure();
      auto pow = soleDef<PowOp>(var.getInput());
      Value x = sub.getLhs();
      auto mu = soleDef<ReduceOp>(sub.getRhs());
      if (!pow || pow.getInput() != sub.getResult() || pow.getExponent().convertToFloat() != 2.0f ||
          !mu || mu.getInput() != x)
        return failure();
      const int64_t axis = trailingMeanAxis(mu);
      if (axis < 0 || trailingMeanAxis(var) != axis || mu.getAxes() != var.getAxes())
        return failure();
      // Every shape as a layer norm's: no broadcasting but the statistics'.
      ArrayRef<int64_t> xs = shapeOf(x);
      if (shapeOf(sub.getResult()) != xs || shapeOf(div.getResult()) != xs ||
          shapeOf(mul.getResult()) != xs || shapeOf(biasAdd.getResult()) != xs ||
          shapeOf(epsAdd.getResult()) != shapeOf(var.getResult()) ||
          shapeOf(scale) != xs.drop_front(axis) || shapeOf(bias) != xs.drop_front(axis) ||
          !cast<RankedTensorType>(x.getType()).getElementType().isF32())
        return failure();
      // Operands must be available where the fused op goes (at the bias add).
      rewriter.setInsertionPoint(biasAdd);
      Location loc = rewriter.getFusedLoc({mu.getLoc(), sub.getLoc(), pow.getLoc(), var.getLoc(),
                                           epsAdd.getLoc(), sqrt.getLoc(), div.getLoc(),
                                           mul.getLoc(), biasAdd.getLoc()});
      Type stat = mu.getResult().getType();
      auto ln = LayerNormOp::create(rewriter, loc, x.getType(), stat, stat, x, scale, bias,
                                    rewriter.getI64IntegerAttr(axis),
                                    rewriter.getF32FloatAttr(*eps));
      rewriter.replaceOp(biasAdd, ln.getResult());
      for (Operation *dead : {mul.getOperation(), div.getOperation(), sqrt.getOperation(),
                              epsAdd.getOperation(), var.getOperation(), pow.getOperation(),
                              sub.getOperation(), mu.getOperation()})
        rewriter.eraseOp(dead);
      ++numFused;
      return success();
    }
    return failure();
  }

  llvm::Statistic &numFused;
};

struct TrainFuseLayerNorm : impl::TrainFuseLayerNormBase<TrainFuseLayerNorm> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseLayerNorm>(&getContext(), numFused);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mgs::train
