//===- InsertAllReduce.cpp - Dense gradient averaging ---------------------===//

#include "mgs/Dialect/Comm/Transforms/Passes.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace mgs::comm {

#define GEN_PASS_DEF_COMMINSERTALLREDUCE
#include "mgs/Dialect/Comm/Transforms/Passes.h.inc"

namespace {

struct CommInsertAllReduce : impl::CommInsertAllReduceBase<CommInsertAllReduce> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    // A step whose gradients are exchanged already (this pass ran, perhaps
    // followed by comm-merge-buckets or comm-sparsify-topk, which reshape
    // what it inserted) gets no second exchange: each gradient would be
    // averaged twice.
    auto exchanges = [](Operation *op) {
      return isa<AllReduceStartOp, AllGatherStartOp, GTopKStartOp, SparseAllReduceStartOp>(op)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    };
    if (getOperation().walk(exchanges).wasInterrupted())
      return;
    getOperation().walk([&](train::GradientOp grad) {
      Value tagged = grad.getResult();
      if (tagged.use_empty())
        return;
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : tagged.getUses())
        uses.push_back(&use);
      b.setInsertionPointAfter(grad);
      auto requestType = RequestType::get(&getContext(), {tagged.getType()});
      auto start = AllReduceStartOp::create(b, grad.getLoc(), requestType, tagged);
      // The wait goes right before the first user in the gradient's block
      // (comm-schedule sinks it), or before its terminator: anywhere after the
      // start there, it dominates the uses in the blocks that block dominates.
      Block *block = grad->getBlock();
      Operation *first = block->getTerminator();
      for (OpOperand *use : uses)
        if (Operation *user = block->findAncestorOpInBlock(*use->getOwner());
            user && user->isBeforeInBlock(first))
          first = user;
      b.setInsertionPoint(first);
      auto wait = WaitOp::create(b, grad.getLoc(), TypeRange{tagged.getType()}, start.getRequest());
      for (OpOperand *use : uses)
        use->set(wait.getResults().front());
      ++numAllReduces;
    });
  }
};

} // namespace
} // namespace mgs::comm
