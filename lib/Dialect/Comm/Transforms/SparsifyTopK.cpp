//===- SparsifyTopK.cpp - Top-k gradient sparsification -------------------===//

#include "mgs/Dialect/Comm/Transforms/Passes.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Planner/Profile.h"
#include "mgsrt/contract.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace mgs::comm {

#define GEN_PASS_DEF_COMMSPARSIFYTOPK
#include "mgs/Dialect/Comm/Transforms/Passes.h.inc"

namespace {

struct CommSparsifyTopK : impl::CommSparsifyTopKBase<CommSparsifyTopK> {
  using CommSparsifyTopKBase::CommSparsifyTopKBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!(density > 0.0 && density <= 1.0)) {
      module.emitError() << "comm-sparsify-topk: density must be in (0, 1], got " << density;
      return signalPassFailure();
    }
    if (maxDensity != 0.0 && !(maxDensity >= density && maxDensity <= 1.0)) {
      module.emitError() << "comm-sparsify-topk: max-density must be in [density, 1], got "
                         << maxDensity;
      return signalPassFailure();
    }
    if (workers < 1 || workers > planner::kMaxWorkers) {
      module.emitError() << "comm-sparsify-topk: workers must be in [1, " << planner::kMaxWorkers
                         << "], got " << static_cast<int64_t>(workers);
      return signalPassFailure();
    }
    if (minElements < 0) {
      module.emitError() << "comm-sparsify-topk: min-elements must be >= 0 (0: every gradient "
                            "is sparsified), got "
                         << static_cast<int64_t>(minElements);
      return signalPassFailure();
    }
    if (failed(checkCollective(module, collective, "collective")))
      return signalPassFailure();
    SmallVector<AllReduceStartOp> starts;
    module.walk([&](AllReduceStartOp start) { starts.push_back(start); });
    // (A step with no gradient, every parameter frozen, has nothing to send.)
    bool hasGradients = module.walk([](train::GradientOp) { return WalkResult::interrupt(); })
                            .wasInterrupted();
    if (starts.empty() && hasGradients)
      module.emitWarning() << "comm-sparsify-topk: no comm.all_reduce_start to sparsify "
                              "(comm-insert-allreduce inserts one for each gradient)";
    for (AllReduceStartOp start : starts)
      if (failed(sparsify(start)))
        return signalPassFailure();
  }

  /// Whether `name` is a sparse exchange this pass builds (with half or
  /// bfloat16 values: the allgather alone, and one of the two).
  LogicalResult checkCollective(Operation *where, StringRef name, StringRef what) {
    if (name != kAllGather && name != kGTopK && name != kSparseAllReduce)
      return where->emitError() << "comm-sparsify-topk: " << what << " must be " << kAllGather
                                << ", " << kGTopK << " or " << kSparseAllReduce << ", got '"
                                << name << "'";
    if (halfValues && bf16Values)
      return where->emitError() << "comm-sparsify-topk: half-values and bf16-values exclude "
                                   "each other";
    for (auto [set, flag] : {std::pair{bool(halfValues), "half-values"},
                             std::pair{bool(bf16Values), "bf16-values"}})
      if (set && name != kAllGather)
        return where->emitError() << "comm-sparsify-topk: " << flag << " applies to the "
                                  << kAllGather << ", not to " << name;
    return success();
  }

  static constexpr const char *kAllGather = "allgather", *kGTopK = "gtopk",
                              *kSparseAllReduce = "sparse-allreduce";

  LogicalResult sparsify(AllReduceStartOp start) {
    // The residual is named after the gradient's parameter or the bucket.
    std::string residualOf;
    if (auto grad = start.getInput().getDefiningOp<train::GradientOp>())
      residualOf = grad.getParam().str();
    else if (auto concat = start.getInput().getDefiningOp<train::ConcatOp>())
      if (auto bucket = commDialect(&getContext()).getBucketAttrHelper().getAttr(concat))
        residualOf = bucket.getValue().str();
    auto type = cast<RankedTensorType>(start.getInput().getType());
    int64_t n = type.getNumElements();
    if (residualOf.empty() || commDialect(&getContext()).getDenseAttrHelper().isAttrPresent(start) || n < minElements ||
        !start.getRequest().hasOneUse())
      return success(); // stays dense
    auto wait = dyn_cast<WaitOp>(*start.getRequest().getUsers().begin());
    if (!wait)
      return success();
    // k: the most entries sent; a density warm-up sends fewer at run time
    // (mgsrt_ctx_set_density), by the same rule.
    double most = maxDensity > 0.0 ? static_cast<double>(maxDensity) : static_cast<double>(density);
    int64_t k = contract::topkCount(n, most);

    // The residual: a state parameter, zero at the start.
    ModuleOp module = getOperation();
    std::string name = std::string(contract::manifest::kResidualPrefix) + residualOf;
    if (Operation *existing = module.lookupSymbol(name)) {
      // (The prefix is the contract's: --save leaves the residuals out by it.)
      existing->emitError() << "comm-sparsify-topk: the module has a symbol @\"" << name
                            << "\" already, the name of the residual of '" << residualOf
                            << "' this pass creates";
      return failure();
    }
    OpBuilder mb(&getContext());
    mb.setInsertionPoint(start->getParentOfType<func::FuncOp>());
    train::ParameterOp::create(mb, start.getLoc(), mb.getStringAttr(name), TypeAttr::get(type),
                               UnitAttr(), DenseElementsAttr::get(type, 0.0f));

    OpBuilder b(start);
    Location loc = start.getLoc();
    auto k1 = [&](Type elem) { return RankedTensorType::get({k}, elem); };
    auto gathered = [&](Type elem) { return RankedTensorType::get({workers * k}, elem); };
    auto topk = TopKSparsifyOp::create(b, loc, k1(b.getF32Type()), k1(b.getI32Type()),
                                       start.getInput(), FlatSymbolRefAttr::get(&getContext(), name),
                                       b.getI64IntegerAttr(k));
    std::string exchange = collective;
    // The plan's choice for this group (comm-merge-buckets), if it made one.
    auto chosenAttr = commDialect(&getContext()).getCollectiveAttrHelper();
    if (StringAttr chosen = chosenAttr.getAttr(start)) {
      exchange = chosen.getValue().str();
      if (failed(checkCollective(start, exchange, chosenAttr.getName().getValue())))
        return failure();
    }
    Value average;
    if (exchange == kSparseAllReduce) {
      // The wait gives the dense average itself.
      auto requestType = RequestType::get(&getContext(), {type});
      auto reduce = SparseAllReduceStartOp::create(b, loc, requestType, topk.getValues(),
                                                   topk.getIndices(), b.getI64IntegerAttr(workers),
                                                   /*balanced=*/b.getUnitAttr());
      b.setInsertionPoint(wait);
      average = WaitOp::create(b, wait.getLoc(), requestType.getResultTypes(), reduce.getRequest())
                    .getResults()[0];
    } else {
      // gtopk: the k global entries, averaged, scatter-added over 1 worker.
      bool global = exchange == kGTopK;
      auto requestType =
          global ? RequestType::get(&getContext(), {k1(b.getF32Type()), k1(b.getI32Type())})
                 : RequestType::get(&getContext(),
                                    {gathered(b.getF32Type()), gathered(b.getI32Type())});
      Value request =
          global ? GTopKStartOp::create(b, loc, requestType, topk.getValues(), topk.getIndices(),
                                        FlatSymbolRefAttr::get(&getContext(), name),
                                        b.getI64IntegerAttr(workers))
                       .getRequest()
                 : AllGatherStartOp::create(b, loc, requestType, topk.getValues(),
                                            topk.getIndices(), b.getI64IntegerAttr(workers),
                                            halfValues ? b.getUnitAttr() : UnitAttr(),
                                            bf16Values ? b.getUnitAttr() : UnitAttr())
                       .getRequest();
      b.setInsertionPoint(wait);
      auto newWait = WaitOp::create(b, wait.getLoc(), requestType.getResultTypes(), request);
      average = ScatterAddOp::create(b, wait.getLoc(), type, newWait.getResults()[0],
                                     newWait.getResults()[1],
                                     b.getI64IntegerAttr(global ? int64_t(1) : int64_t(workers)));
    }
    wait.getResults().front().replaceAllUsesWith(average);
    wait.erase();
    start.erase();
    ++numSparsified;
    return success();
  }
};

} // namespace
} // namespace mgs::comm
