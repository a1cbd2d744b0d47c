//===- FuseBatchNormRelu.cpp - ReLU fused into batch_norm -----------------===//

#include "mgs/Dialect/Train/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINFUSEBATCHNORMRELU
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

struct FuseRelu : OpRewritePattern<ReluOp> {
  FuseRelu(MLIRContext *ctx, llvm::Statistic &numFused)
      : OpRewritePattern(ctx), numFused(numFused) {}

  LogicalResult matchAndRewrite(ReluOp relu, PatternRewriter &rewriter) const override {
    auto bn = relu.getInput().getDefiningOp<BatchNormOp>();
    if (!bn || bn.getRelu() || bn.getResult() != relu.getInput() || !bn.getResult().hasOneUse())
      return failure();
    rewriter.modifyOpInPlace(bn, [&] {
      bn.setRelu(true);
      bn->setLoc(rewriter.getFusedLoc({bn.getLoc(), relu.getLoc()}));
    });
    rewriter.replaceOp(relu, bn.getResult());
    ++numFused;
    return success();
  }

  llvm::Statistic &numFused;
};

struct TrainFuseBatchNormRelu : impl::TrainFuseBatchNormReluBase<TrainFuseBatchNormRelu> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseRelu>(&getContext(), numFused);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mgs::train
