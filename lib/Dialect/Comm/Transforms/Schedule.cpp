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
      if (!llvm::all_of(wait.getResult().getUsers(),
                        [](Operation *u) { return isa<train::SGDUpdateOp>(u); }))
        continue;
      wait->moveBefore(end);
      for (Operation *user : llvm::make_early_inc_range(wait.getResult().getUsers()))
        user->moveBefore(end);
      ++numMoved;
    }
  }
};

} // namespace
} // namespace mgs::comm
