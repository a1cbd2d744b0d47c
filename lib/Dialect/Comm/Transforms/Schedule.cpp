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
      // Its users: a scatter-add (sparse) and the updates that read them.
      SmallVector<Operation *> chain;
      bool movable = true;
      for (Operation *user : wait->getUsers()) {
        if (isa<train::SGDUpdateOp>(user)) {
          chain.push_back(user);
        } else if (auto scatter = dyn_cast<ScatterAddOp>(user)) {
          if (!llvm::is_contained(chain, user))
            chain.push_back(user);
          for (Operation *u : scatter->getUsers())
            if (isa<train::SGDUpdateOp>(u))
              chain.push_back(u);
            else
              movable = false;
        } else {
          movable = false;
        }
      }
      if (!movable)
        continue;
      wait->moveBefore(end);
      for (Operation *op : chain)
        op->moveBefore(end);
      ++numMoved;
    }
  }
};

} // namespace
} // namespace mgs::comm
