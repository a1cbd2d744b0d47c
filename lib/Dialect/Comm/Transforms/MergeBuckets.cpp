//===- MergeBuckets.cpp - Gradient buckets chosen by the planner ----------===//

#include "mgs/Planner/Planner.h"
#include "mgs/Dialect/Comm/Transforms/Passes.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Support/FormatNumber.h"

#include "llvm/Support/Format.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace mgs::comm {

#define GEN_PASS_DEF_COMMMERGEBUCKETS
#include "mgs/Dialect/Comm/Transforms/Passes.h.inc"

namespace {

/// One gradient and its dense exchange, as comm-insert-allreduce left it.
struct Member {
  train::GradientOp grad;
  AllReduceStartOp start;
  WaitOp wait;
};

struct CommMergeBuckets : impl::CommMergeBucketsBase<CommMergeBuckets> {
  using CommMergeBucketsBase::CommMergeBucketsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (workers < 1 || workers > planner::kMaxWorkers) {
      module.emitError() << "comm-merge-buckets: workers must be in [1, " << planner::kMaxWorkers
                         << "], got " << static_cast<int64_t>(workers);
      return signalPassFailure();
    }
    if (batchSize < 0) {
      module.emitError() << "comm-merge-buckets: batch-size must be positive (0: unknown), got "
                         << static_cast<int64_t>(batchSize);
      return signalPassFailure();
    }
    if (!(density > 0.0 && density <= 1.0)) {
      module.emitError() << "comm-merge-buckets: density must be in (0, 1], got "
                         << formatNumber(density);
      return signalPassFailure();
    }
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!step)
      return;
    // Layers in forward order: the reverse of backprop order.
    SmallVector<Member> layers;
    for (auto grad : step.getOps<train::GradientOp>()) {
      auto start = dyn_cast_or_null<AllReduceStartOp>(
          grad.getResult().hasOneUse() ? *grad.getResult().getUsers().begin() : nullptr);
      auto wait = start && start.getRequest().hasOneUse()
                      ? dyn_cast<WaitOp>(*start.getRequest().getUsers().begin())
                      : WaitOp();
      if (!start || !wait) {
        grad.emitError() << "comm-merge-buckets: expects each gradient averaged by one "
                            "comm.all_reduce_start and its wait (run comm-insert-allreduce first)";
        return signalPassFailure();
      }
      // The planner's layers have elements: an empty parameter has nothing
      // to exchange (nor to train).
      if (cast<RankedTensorType>(grad.getType()).getNumElements() == 0) {
        Operation *param = module.lookupSymbol(grad.getParamAttr());
        (param ? param : grad.getOperation())->emitError()
            << "comm-merge-buckets: parameter '" << grad.getParam() << "' has no elements ("
            << grad.getType() << "): its gradient is nothing to plan or exchange";
        return signalPassFailure();
      }
      layers.push_back({grad, start, wait});
    }
    llvm::sort(layers, [](Member a, Member b) {
      return a.grad.getBackpropIndex() > b.grad.getBackpropIndex();
    });
    if (layers.empty())
      return;

    auto parsed = planner::Strategy::parse(strategy);
    if (!parsed) {
      module.emitError() << "comm-merge-buckets: " << llvm::toString(parsed.takeError());
      return signalPassFailure();
    }
    if (!autoCollectives.empty()) {
      planner::CollectiveSet allowed;
      SmallVector<StringRef> names;
      StringRef(autoCollectives).split(names, ',');
      for (StringRef name : names) {
        std::optional<planner::Collective> c = planner::parseCollective(name.trim());
        if (!c) {
          module.emitError() << "comm-merge-buckets: auto-collectives: unknown collective '"
                             << name.trim()
                             << "'; expected allgather, allreduce, gtopk or sparse-allreduce";
          return signalPassFailure();
        }
        allowed.insert(*c);
      }
      parsed->autoCollectives = allowed;
    }
    FailureOr<planner::Profile> prof = makeProfile(layers);
    if (failed(prof))
      return signalPassFailure();
    planner::Plan plan = planner::plan(*prof, *parsed, {/*relativeGap=*/0.0, exactPlan});
    if (plan.gap > 0.0) {
      std::string percent;
      llvm::raw_string_ostream(percent) << llvm::format("%.2g", 100.0 * plan.gap);
      mlir::emitRemark(module.getLoc())
          << "comm-merge-buckets: the " << plan.strategy << " plan is within " << percent
          << "% of the optimum: its exact search outgrew its budget (exact-plan searches on)";
    }

    for (const planner::Group &g : plan.groups) {
      SmallVector<Member> members(layers.begin() + g.begin, layers.begin() + g.end);
      AllReduceStartOp start = members.size() == 1 ? members.front().start : bucket(members);
      markCollective(start, g.collective);
      numBuckets += members.size() > 1;
    }
  }

  /// Tells comm-sparsify-topk the plan's collective: `comm.dense` for an
  /// all-reduce, `comm.collective` for the global top-k and the balanced
  /// sparse all-reduce, nothing for the all-gather.
  void markCollective(AllReduceStartOp start, planner::Collective c) {
    CommDialect &dialect = commDialect(&getContext());
    switch (c) {
    case planner::Collective::AllGather:
      return;
    case planner::Collective::AllReduce:
      dialect.getDenseAttrHelper().setAttr(start, UnitAttr::get(&getContext()));
      return;
    case planner::Collective::GTopK:
    case planner::Collective::SparseAllReduce:
      dialect.getCollectiveAttrHelper().setAttr(
          start, StringAttr::get(&getContext(), planner::stringifyCollective(c)));
      return;
    }
  }

  /// The profile: the given file, checked against the model, or an estimate.
  FailureOr<planner::Profile> makeProfile(MutableArrayRef<Member> layers) {
    ModuleOp module = getOperation();
    SmallVector<planner::ParameterShape> shapes;
    for (Member m : layers)
      shapes.push_back({m.grad.getParam(),
                        cast<RankedTensorType>(m.grad.getType()).getNumElements()});
    if (!profile.empty()) {
      auto loaded = planner::loadProfile(profile);
      if (!loaded) {
        module.emitError() << "comm-merge-buckets: profile '" << profile
                           << "': " << llvm::toString(loaded.takeError());
        return failure();
      }
      if (llvm::Error e = planner::checkProfileMatchesModel(*loaded, shapes)) {
        module.emitError() << "comm-merge-buckets: profile '" << profile
                           << "': " << llvm::toString(std::move(e));
        return failure();
      }
      // Its collective costs were fitted on its own communicator; the cost
      // model scales the allgather with P, but a profile from one worker
      // measured no network at all.
      const int64_t planned = workers;
      if (loaded->workers != planned)
        module.emitWarning() << "comm-merge-buckets: profile '" << profile
                             << "' was measured on " << loaded->workers
                             << " worker(s); planning for " << planned
                             << " with its collective costs (calibrate under mpirun -np "
                             << planned << " for measured ones)";
      const int64_t batch = batchSize;
      if (loaded->batchSize && batch && loaded->batchSize != batch)
        module.emitWarning() << "comm-merge-buckets: profile '" << profile
                             << "' was measured at batch size " << loaded->batchSize
                             << " per worker; this step is compiled for " << batch
                             << " (the layers' backward times grow with the batch: calibrate "
                                "a build of this batch size)";
      // The collectives' costs are per byte, so the exchange scales with the
      // density; the top-k's times were measured at the profile's.
      if (loaded->density > 0.0 &&
          std::abs(loaded->density - density) > 1e-9 * std::max(loaded->density, 1e-30))
        module.emitWarning() << "comm-merge-buckets: profile '" << profile
                             << "' was measured at density " << formatNumber(loaded->density)
                             << "; planning for " << formatNumber(density)
                             << " (its top-k times were measured at its own: calibrate with "
                                "--calibrate-density "
                             << formatNumber(density) << " for measured ones)";
      loaded->workers = workers;
      loaded->density = density;
      return *loaded;
    }
    // No calibration: backward time proportional to the parameter's size, a
    // top-k at 1 ns per element, and a 1 Gbit/s network with 100 us start-up.
    mlir::emitRemark(module.getLoc()) << "comm-merge-buckets: no profile; planning with an "
                                         "analytic estimate (calibrate for a better plan)";
    planner::Profile p;
    p.workers = workers;
    p.density = density;
    p.topkPoints = {{1, 1e-6}, {1 << 20, 1e-3}};
    p.allgather = {1e-4, 8e-9};
    p.allreduce = {1e-4, 8e-9};
    for (const planner::ParameterShape &s : shapes)
      p.layers.push_back({s.name.str(), s.numel, 2e-9 * static_cast<double>(s.numel) + 1e-6});
    if (llvm::Error e = p.validate()) { // e.g. more tensors than the planner handles
      module.emitError() << "comm-merge-buckets: the model's analytic profile: "
                         << llvm::toString(std::move(e));
      return failure();
    }
    return p;
  }

  /// One all-reduce for the members' concatenated gradients, split back
  /// after the wait; returns its start.
  AllReduceStartOp bucket(MutableArrayRef<Member> members) {
    OpBuilder b(&getContext());
    Operation *lastGrad = members.front().grad;
    Operation *firstWait = members.front().wait;
    for (Member m : members) {
      if (lastGrad->isBeforeInBlock(m.grad))
        lastGrad = m.grad;
      if (m.wait->isBeforeInBlock(firstWait))
        firstWait = m.wait;
    }
    Location loc = lastGrad->getLoc();
    b.setInsertionPointAfter(lastGrad);
    SmallVector<Value> flat;
    int64_t total = 0;
    for (Member m : members) {
      int64_t n = cast<RankedTensorType>(m.grad.getType()).getNumElements();
      total += n;
      flat.push_back(train::ReshapeOp::create(
          b, loc, RankedTensorType::get({n}, b.getF32Type()), m.grad.getResult()));
    }
    auto flatType = RankedTensorType::get({total}, b.getF32Type());
    auto concat = train::ConcatOp::create(b, loc, flatType, flat, b.getI64IntegerAttr(0));
    Member firstMember = members.front(), lastMember = members.back();
    std::string name =
        (firstMember.grad.getParam() + ".." + lastMember.grad.getParam()).str();
    commDialect(&getContext()).getBucketAttrHelper().setAttr(concat, b.getStringAttr(name));
    auto request = RequestType::get(&getContext(), {flatType});
    auto start = AllReduceStartOp::create(b, loc, request, concat.getResult());

    // The wait right after the start (comm-schedule sinks it); the members'
    // updates, which may come earlier, move after it: an update only writes its
    // parameter, which nothing later in the backward pass reads.
    auto wait = WaitOp::create(b, firstWait->getLoc(), TypeRange{flatType}, start.getRequest());
    SmallVector<Type> pieces(flat.size());
    for (auto [i, v] : llvm::enumerate(flat))
      pieces[i] = v.getType();
    auto split = train::SplitOp::create(b, firstWait->getLoc(), pieces, wait.getResults().front(),
                                        b.getI64IntegerAttr(0));
    Operation *last = split;
    for (auto [m, piece] : llvm::zip(members, split.getResults())) {
      b.setInsertionPointAfter(last);
      auto shaped = train::ReshapeOp::create(b, firstWait->getLoc(), m.grad.getType(), piece);
      last = shaped;
      SmallVector<Operation *> users(m.wait->getUsers().begin(), m.wait->getUsers().end());
      m.wait.getResults().front().replaceAllUsesWith(shaped.getResult());
      for (Operation *user : users)
        if (user->isBeforeInBlock(shaped)) {
          user->moveAfter(last);
          last = user;
        }
    }
    for (Member m : members) {
      m.wait->erase();
      m.start->erase();
    }
    return start;
  }
};

} // namespace
} // namespace mgs::comm
