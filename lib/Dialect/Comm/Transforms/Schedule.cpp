//===- Schedule.cpp - Overlap communication with backprop -----------------===//

#include "mgs/Dialect/Comm/Transforms/Passes.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

using namespace mlir;

namespace mgs::comm {

#define GEN_PASS_DEF_COMMSCHEDULE
#include "mgs/Dialect/Comm/Transforms/Passes.h.inc"

namespace {

struct CommSchedule : impl::CommScheduleBase<CommSchedule> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    // The end of the backward pass: before the first op that must stay last
    // (running-statistics assignments, the return).
    Operation *end = body.getTerminator();
    for (Operation &op : body)
      if (isa<train::AssignParamOp>(op)) {
        end = &op;
        break;
      }
    SmallVector<WaitOp> waits(func.getOps<WaitOp>());
    for (WaitOp wait : waits) {
      // The wait and the updates it feeds, which only write their parameter.
      // What follows from its result up to the updates: scatter-adds
      // (sparse), splits and reshapes (buckets), the updates themselves.
      SmallVector<Operation *> chain;
      SmallVector<Operation *> work(wait->getUsers().begin(), wait->getUsers().end());
      bool movable = true;
      while (!work.empty() && movable) {
        Operation *op = work.pop_back_val();
        if (llvm::is_contained(chain, op))
          continue;
        if (!isa<train::SGDUpdateOp, ScatterAddOp, train::SplitOp, train::ReshapeOp>(op)) {
          movable = false;
          break;
        }
        chain.push_back(op);
        work.append(op->getUsers().begin(), op->getUsers().end());
      }
      // What the moved ops read must still come before them: the request's
      // start, in particular, may come after `end`.
      auto definedBeforeEnd = [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !def || def->getBlock() != &body || llvm::is_contained(chain, def) ||
               def->isBeforeInBlock(end);
      };
      movable &= llvm::all_of(wait->getOperands(), definedBeforeEnd);
      for (Operation *op : chain)
        movable &= llvm::all_of(op->getOperands(), [&](Value v) {
          return v.getDefiningOp() == wait || definedBeforeEnd(v);
        });
      if (!movable)
        continue;
      llvm::sort(chain, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      wait->moveBefore(end);
      for (Operation *op : chain)
        op->moveBefore(end);
      ++numMoved;
    }
  }
};

} // namespace
} // namespace mgs::comm
