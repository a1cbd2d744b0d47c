//===- FoldTransposeIntoMatMul.cpp - Transposed matmul operands as flags --===//
//
// train-fold-transpose-into-matmul: a transpose feeding a matmul operand is
// the matmul's trans flag on a transpose that keeps the last dimension (or on
// the transpose's input when that transpose is the identity):
//
//   matmul(transpose(x, p)) = matmul{trans}(transpose(x, q)),
//   q = p with its last two entries swapped, q[r-1] = r-1.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/Transforms/Passes.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mgs::train {

#define GEN_PASS_DEF_TRAINFOLDTRANSPOSEINTOMATMUL
#include "mgs/Dialect/Train/Transforms/Passes.h.inc"

namespace {

struct FoldTransposeIntoMatMul : OpRewritePattern<MatMulOp> {
  FoldTransposeIntoMatMul(MLIRContext *ctx, llvm::Statistic &numFolded)
      : OpRewritePattern(ctx), numFolded(numFolded) {}

  LogicalResult matchAndRewrite(MatMulOp mm, PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto transpose = mm->getOperand(side).getDefiningOp<TransposeOp>();
      if (!transpose)
        continue;
      SmallVector<int64_t> q(transpose.getPerm());
      const int64_t r = q.size();
      // Only a transpose whose swapped permutation keeps the last dimension.
      if (r < 2 || q[r - 2] != r - 1)
        continue;
      std::swap(q[r - 2], q[r - 1]);
      const bool identity = llvm::equal(q, llvm::seq<int64_t>(0, r));
      if (!identity && !transpose->hasOneUse())
        continue;
      Value operand = transpose.getInput();
      if (!identity) {
        auto type = cast<RankedTensorType>(transpose.getType());
        SmallVector<int64_t> shape(type.getShape());
        std::swap(shape[r - 2], shape[r - 1]);
        rewriter.setInsertionPoint(transpose);
        operand = TransposeOp::create(rewriter, transpose.getLoc(), type.clone(shape), operand,
                                      rewriter.getDenseI64ArrayAttr(q));
      }
      rewriter.modifyOpInPlace(mm, [&] {
        mm->setOperand(side, operand);
        if (side == 0)
          mm.setTransLhs(!mm.getTransLhs());
        else
          mm.setTransRhs(!mm.getTransRhs());
      });
      if (transpose->use_empty())
        rewriter.eraseOp(transpose);
      ++numFolded;
      return success();
    }
    return failure();
  }

  llvm::Statistic &numFolded;
};

struct TrainFoldTransposeIntoMatMul
    : impl::TrainFoldTransposeIntoMatMulBase<TrainFoldTransposeIntoMatMul> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoMatMul>(&getContext(), numFolded);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mgs::train
