//===- KernelCalls.cpp - train/comm ops as runtime kernel calls -----------===//
//
// Each op becomes a call of a runtime entry point with a descriptor built
// field by field through the names of mgsrt/contract.h (Descriptors.h), the
// layouts the runtime reads (runtime/lib/Descriptors).
//
//===----------------------------------------------------------------------===//

#include "KernelCalls.h"
#include "Descriptors.h"

#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

#include <utility>

namespace mgs::lowering {

using namespace mlir;
using namespace mgs::train;
using namespace mgs::contract;

int64_t byteSize(Value v) {
  Type elem = cast<RankedTensorType>(v.getType()).getElementType();
  int64_t bytes = elem.isInteger(1) ? 1 : elem.getIntOrFloatBitWidth() / 8;
  return std::max<int64_t>(numel(v) * bytes, 1);
}

bool assignsZeros(AssignParamOp a) {
  auto c = a.getValue().getDefiningOp<arith::ConstantOp>();
  auto attr = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
  return attr && attr.isSplat() && attr.getElementType().isF32() &&
         attr.getSplatValue<APFloat>().isPosZero();
}

bool onlyAssignedAsZeros(Value constant) {
  return !constant.use_empty() && llvm::all_of(constant.getUsers(), [](Operation *user) {
    auto a = dyn_cast<AssignParamOp>(user);
    return a && assignsZeros(a);
  });
}

AddOp inPlaceAccumulation(AssignParamOp a) {
  auto add = a.getValue().getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse())
    return {};
  auto get = add.getLhs().getDefiningOp<GetParamOp>();
  if (!get || get.getName() != a.getParam() || add.getLhs().getType() != add.getType() ||
      add.getRhs().getType() != add.getType())
    return {};
  return add;
}

namespace {

FailureOr<std::optional<KernelCall>> describeOp(Operation *op,
                                                DenseMap<Operation *, int64_t> &slots) {
  using Result = FailureOr<std::optional<KernelCall>>;
  auto call = [&](Kernel kernel, SmallVector<int64_t> desc, SmallVector<BufArg> bufs) -> Result {
    return std::optional<KernelCall>(KernelCall{op, kernel, std::move(desc), std::move(bufs)});
  };
  auto none = []() -> Result { return std::optional<KernelCall>(); };
  if (std::optional<UnaryParams> un = unaryParams(op))
    return call(Kernel::unary_fwd,
                unaryDesc(unaryCode(un->kind), numel(op->getResult(0)), un->alpha, un->beta),
                {{op->getOperand(0)}, {op->getResult(0)}});
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<GetParamOp, arith::ConstantOp, ReshapeOp, FlattenOp>(
          [&](Operation *) { return none(); })
      .Case([&](GradientOp g) -> Result {
        // A gradient is communicated in place: it gets its own buffer when
        // its value is also read elsewhere (a gradient passed through an add).
        if (gradientAliases(g))
          return none();
        return call(Kernel::copy, countDesc(byteSize(g.getResult()) / 4), {{g.getGrad()}, {g.getResult()}});
      })
      .Case([&](ClipOp c) {
        return call(Kernel::clip_fwd, countDesc(numel(c.getResult())),
                    {{c.getInput()}, {c.getMin()}, {c.getMax()}, {c.getResult()}});
      })
      .Case<AddOp, SubOp, MulOp, DivOp, GreaterOp, GreaterOrEqualOp, EqualOp,
            KeepWhereOp>([&](Operation *) -> Result {
        if (auto add = dyn_cast<AddOp>(op); add && add->hasOneUse())
          if (auto assign = dyn_cast<AssignParamOp>(*add->getUsers().begin());
              assign && inPlaceAccumulation(assign) == add)
            return none(); // the assignment's accumulate computes it
        int64_t code = binaryCode(elementwiseKind(op));
        Value l = op->getOperand(0), r = op->getOperand(1), o = op->getResult(0);
        return call(Kernel::binary_fwd, binaryDesc(code, shapeOf(l), shapeOf(r), shapeOf(o)),
                    {{l}, {r}, {o}});
      })
      .Case([&](GemmOp g) {
        return call(Kernel::gemm_fwd,
                    gemmDesc(shapeOf(g.getA()), shapeOf(g.getB()), g.getTransA(), g.getTransB(),
                             g.getAlphaAttr(), g.getBetaAttr(), g.getC()),
                    {{g.getA()}, {g.getB()}, {g.getC()}, {g.getResult()}});
      })
      .Case([&](MatMulOp m) {
        return call(Kernel::matmul_fwd,
                    matmulDesc(shapeOf(m.getLhs()), shapeOf(m.getRhs()), m.getTransLhs(),
                               m.getTransRhs()),
                    {{m.getLhs()}, {m.getRhs()}, {m.getResult()}});
      })
      .Case([&](ConvOp c) {
        return call(Kernel::conv_fwd,
                    convDesc(shapeOf(c.getInput()), shapeOf(c.getWeight()), shapeOf(c.getResult()),
                             c.getStrides(), c.getPads(), c.getDilations(), c.getGroup()),
                    {{c.getInput()}, {c.getWeight()}, {c.getBias()}, {c.getResult()}});
      })
      .Case([&](MaxPoolOp p) {
        return call(Kernel::pool_fwd,
                    poolDesc(MGSRT_POOL_MAX, shapeOf(p.getInput()), p.getKernelShape(),
                             shapeOf(p.getResult()),
                             p.getStrides(), p.getPads(), p.getDilations(), false,
                             p.getStorageOrder()),
                    {{p.getInput()}, {p.getResult()}, {p.getIndices(), true}});
      })
      .Case([&](AveragePoolOp p) {
        return call(Kernel::pool_fwd,
                    poolDesc(MGSRT_POOL_AVG, shapeOf(p.getInput()), p.getKernelShape(),
                             shapeOf(p.getResult()), p.getStrides(), p.getPads(),
                             p.getDilationsOrOnes(), p.getCountIncludePad(), 0),
                    {{p.getInput()}, {p.getResult()}, {Value()}});
      })
      .Case([&](GlobalAveragePoolOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        PoolWindow w = globalPoolWindow(x);
        return call(Kernel::pool_fwd,
                    poolDesc(MGSRT_POOL_AVG, x, w.kernel, shapeOf(p.getResult()), w.strides,
                             w.pads, w.dilations, true, 0),
                    {{p.getInput()}, {p.getResult()}, {Value()}});
      })
      .Case([&](BatchNormOp bn) {
        ArrayRef<int64_t> x = shapeOf(bn.getInput());
        return call(Kernel::batch_norm_fwd,
                    batchNormDesc(x, bn.getTraining(), bitsOf(bn.getEpsilonAttr()),
                                  bitsOf(bn.getMomentumAttr()), bn.getUnbiasedRunningVar(),
                                  bn.getRelu()),
                    {{bn.getInput()}, {bn.getScale()}, {bn.getBias()}, {bn.getMean()}, {bn.getVar()},
                     {bn.getResult()}, {bn.getRunningMean()}, {bn.getRunningVar()},
                     {bn.getSavedMean(), true}, {bn.getSavedInvStd(), true}});
      })
      .Case([&](GeluOp g) {
        return call(Kernel::gelu_fwd, geluDesc(numel(g.getResult()), g.getApproximate()),
                    {{g.getInput()}, {g.getResult()}});
      })
      .Case([&](GatherOp g) {
        ArrayRef<int64_t> t = shapeOf(g.getTable());
        return call(Kernel::gather_fwd, gatherDesc(t, g.getIndices()),
                    {{g.getTable()}, {g.getIndices()}, {g.getResult()}});
      })
      .Case([&](GatherGradOp g) {
        ArrayRef<int64_t> t = shapeOf(g.getResult());
        return call(Kernel::gather_bwd, gatherDesc(t, g.getIndices()),
                    {{g.getIndices()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](LSTMOp l) {
        ArrayRef<int64_t> x = shapeOf(l.getInput());
        return call(Kernel::lstm_fwd, lstmDesc(x, shapeOf(l.getR())),
                    {{l.getInput()},
                     {l.getW()},
                     {l.getR()},
                     {l.getB()},
                     {l.getY()},
                     {l.getYH(), true},
                     {l.getYC(), true},
                     {l.getSaved()},
                     {l.getInitialH()},
                     {l.getInitialC()}});
      })
      .Case([&](DropoutOp d) {
        return call(Kernel::dropout_fwd,
                    dropoutDesc(d.getResult(), d.getMask(), d.getRatioAttr(), d.getTraining()),
                    {{d.getInput()}, {d.getResult()}, {d.getMask(), true}});
      })
      .Case([&](RandomNormalOp r) {
        return call(Kernel::random_normal,
                    randomNormalDesc(r.getResult(), r.getMeanAttr(), r.getScaleAttr()),
                    {{r.getResult()}});
      })
      .Case([&](RandomUniformOp r) {
        return call(Kernel::random_uniform,
                    randomUniformDesc(r.getResult(), r.getLowAttr(), r.getHighAttr()),
                    {{r.getResult()}});
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *) {
        ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
        int64_t axis = normalizedAxis(isa<SoftmaxOp>(op) ? cast<SoftmaxOp>(op).getAxis()
                                                         : cast<LogSoftmaxOp>(op).getAxis(),
                                      shape.size());
        return call(Kernel::softmax_fwd, softmaxDesc(shape, axis, isa<LogSoftmaxOp>(op)),
                    {{op->getOperand(0)}, {op->getResult(0)}});
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> x = shapeOf(t.getInput());
        return call(Kernel::transpose, transposeDesc(x, t.getPerm()),
                    {{t.getInput()}, {t.getResult()}});
      })
      .Case([&](ConcatOp c) {
        ArrayRef<int64_t> out = shapeOf(c.getResult());
        int64_t axis = normalizedAxis(c.getAxis(), out.size());
        SmallVector<BufArg> bufs;
        for (Value in : c.getInputs())
          bufs.push_back({in});
        bufs.push_back({c.getResult()});
        return call(Kernel::concat, concatDesc(out, axis, c.getInputs()), bufs);
      })
      .Case([&](PadOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        return call(Kernel::pad_fwd, padDesc(x, p.getPads(), p.getValueAttr()),
                    {{p.getInput()}, {p.getResult()}});
      })
      .Case([&](SoftmaxCrossEntropyOp l) {
        ArrayRef<int64_t> s = shapeOf(l.getLogits());
        return call(
            Kernel::softmax_cross_entropy,
            fields<SoftmaxCrossEntropyDesc>(
                {{SoftmaxCrossEntropyDesc::Batch, s[0]},
                 {SoftmaxCrossEntropyDesc::Classes, s[1]},
                 {SoftmaxCrossEntropyDesc::IgnoreIndex, static_cast<int64_t>(l.getIgnoreIndex())},
                 {SoftmaxCrossEntropyDesc::LabelSmoothingBits, bitsOf(l.getLabelSmoothingAttr())},
                 {SoftmaxCrossEntropyDesc::Flags,
                  (l.getSum() ? int64_t{SoftmaxCrossEntropyDesc::kSum} : 0) |
                      (l.getInGraph() ? int64_t{SoftmaxCrossEntropyDesc::kUnscaled} : 0) |
                      (l.getPerSample() ? int64_t{SoftmaxCrossEntropyDesc::kPerSample} : 0) |
                      (l.getLogProbabilities() ? int64_t{SoftmaxCrossEntropyDesc::kLogProbabilities}
                                               : 0)}}),
            {{l.getLogits()},
             {l.getLabels()},
             {l.getLoss()},
             {l.getDlogits(), true},
             {l.getWeight()}});
      })
      .Case([&](ElementwiseLossOp l) {
        const int64_t kind = contract::manifest::lossKindNamed(l.getKind());
        ArrayRef<int64_t> shape = shapeOf(l.getPrediction());
        return call(Kernel::elementwise_loss,
                    fields<ElementwiseLossDesc>(
                        {{ElementwiseLossDesc::Kind, kind},
                         {ElementwiseLossDesc::Count, numel(l.getPrediction())},
                         {ElementwiseLossDesc::BetaBits, bitsOf(l.getBetaAttr())},
                         {ElementwiseLossDesc::Last, shape.empty() ? 1 : shape.back()},
                         {ElementwiseLossDesc::Sum, l.getSum() ? 1 : 0}}),
                    {{l.getPrediction()}, {l.getTarget()}, {l.getLoss()},
                     {l.getDprediction(), true}, {l.getPosWeight()}});
      })
      .Case([&](CumSumOp c) {
        return call(Kernel::cumsum,
                    cumSumDesc(shapeOf(c.getInput()), c.getAxis(), c.getExclusive(), c.getReverse()),
                    {{c.getInput()}, {c.getResult()}});
      })
      .Case([&](ToIndexOp t) {
        return call(Kernel::to_index, countDesc(numel(t.getInput())),
                    {{t.getInput()}, {t.getResult()}});
      })
      .Case([&](FromIndexOp f) {
        return call(Kernel::from_index,
                    fields<FromIndexDesc>({{FromIndexDesc::Count, numel(f.getInput())},
                                           {FromIndexDesc::Lo, static_cast<int64_t>(f.getLo())},
                                           {FromIndexDesc::Hi, static_cast<int64_t>(f.getHi())}}),
                    {{f.getInput()}, {f.getResult()}});
      })
      .Case([&](TopKPositionsOp t) {
        ArrayRef<int64_t> in = shapeOf(t.getInput());
        return call(Kernel::topk_positions,
                    topKPositionsDesc(numel(t.getInput()) / in.back(), in.back(), t.getK(),
                                      t.getLargest()),
                    {{t.getInput()}, {t.getResult()}});
      })
      .Case([&](ReduceOp r) {
        return call(Kernel::reduce_fwd, reduceDesc(r.getKind(), shapeOf(r.getInput()), r.getAxes()),
                    {{r.getInput()}, {r.getResult()}});
      })
      .Case([&](ReduceGradOp r) {
        return call(Kernel::reduce_bwd,
                    reduceDesc(r.getKind(), shapeOf(r.getResult()), r.getAxes()),
                    {{r.getGrad()}, {r.getResult()}});
      })
      .Case([&](UnaryGradOp g) {
        return call(Kernel::unary_bwd,
                    unaryDesc(unaryCode(g.getKind()), numel(g.getResult()),
                              g.getAlphaAttr().getValueAsDouble(),
                              g.getBetaAttr().getValueAsDouble()),
                    {{g.getInput()}, {g.getOutput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](GeluGradOp g) {
        return call(Kernel::gelu_bwd, geluDesc(numel(g.getResult()), g.getApproximate()),
                    {{g.getInput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](ClipGradOp g) {
        return call(Kernel::clip_bwd, countDesc(numel(g.getResult())),
                    {{g.getInput()}, {g.getMin()}, {g.getMax()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](BinaryGradOp g) {
        return call(Kernel::binary_bwd,
                    binaryDesc(binaryCode(g.getKind()), shapeOf(g.getLhs()), shapeOf(g.getRhs()),
                               shapeOf(g.getGrad())),
                    {{g.getLhs()}, {g.getRhs()}, {g.getGrad()}, {g.getLhsGrad(), true},
                     {g.getRhsGrad(), true}});
      })
      .Case([&](GemmGradOp g) {
        return call(Kernel::gemm_bwd,
                    gemmDesc(shapeOf(g.getA()), shapeOf(g.getB()), g.getTransA(), g.getTransB(),
                             g.getAlphaAttr(), g.getBetaAttr(), g.getCGrad()),
                    {{g.getA()}, {g.getB()}, {g.getGrad()}, {g.getAGrad(), true},
                     {g.getBGrad(), true}, {g.getCGrad(), true}});
      })
      .Case([&](MatMulGradOp g) {
        return call(Kernel::matmul_bwd,
                    matmulDesc(shapeOf(g.getLhs()), shapeOf(g.getRhs()), g.getTransLhs(),
                               g.getTransRhs()),
                    {{g.getLhs()}, {g.getRhs()}, {g.getGrad()}, {g.getLhsGrad(), true},
                     {g.getRhsGrad(), true}});
      })
      .Case([&](ConvGradDataOp g) {
        return call(Kernel::conv_bwd_data,
                    convDesc(shapeOf(g.getResult()), shapeOf(g.getWeight()), shapeOf(g.getGrad()),
                             g.getStrides(), g.getPads(), g.getDilations(), g.getGroup()),
                    {{g.getGrad()}, {g.getWeight()}, {g.getResult()}});
      })
      .Case([&](ConvGradWeightsOp g) {
        return call(Kernel::conv_bwd_weights,
                    convDesc(shapeOf(g.getInput()), shapeOf(g.getWeightGrad()),
                             shapeOf(g.getGrad()), g.getStrides(), g.getPads(), g.getDilations(),
                             g.getGroup()),
                    {{g.getInput()}, {g.getGrad()}, {g.getWeightGrad()}, {g.getBiasGrad(), true}});
      })
      .Case([&](PoolGradOp g) {
        bool max = g.getKind() == "max";
        return call(Kernel::pool_bwd,
                    poolDesc(max ? MGSRT_POOL_MAX : MGSRT_POOL_AVG, shapeOf(g.getInput()),
                             g.getKernelShape(), shapeOf(g.getGrad()), g.getStrides(),
                             g.getPads(), g.getDilations(), g.getCountIncludePad(), 0),
                    {{g.getInput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](BatchNormGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        SmallVector<BufArg> bufs{{g.getInput()},     {g.getScale()},     {g.getSavedMean()},
                                 {g.getSavedInvStd()}, {g.getGrad()},      {g.getInputGrad()},
                                 {g.getScaleGrad()},  {g.getBiasGrad()}};
        if (g.getRelu())
          bufs.push_back({g.getBias()});
        return call(Kernel::batch_norm_bwd,
                    batchNormDesc(x, /*training=*/true, bitsOf(0.0), bitsOf(0.0),
                                  /*unbiasedRunningVar=*/false, g.getRelu()),
                    bufs);
      })
      .Case([&](LSTMGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call(Kernel::lstm_bwd, lstmDesc(x, shapeOf(g.getR())),
                    {{g.getInput()},
                     {g.getW()},
                     {g.getR()},
                     {g.getY()},
                     {g.getSaved()},
                     {g.getYGrad()},
                     {g.getYHGrad()},
                     {g.getYCGrad()},
                     {g.getInputGrad(), true},
                     {g.getWGrad()},
                     {g.getRGrad()},
                     {g.getBGrad()},
                     {g.getInitialH()},
                     {g.getInitialC()},
                     {g.getInitialHGrad(), true},
                     {g.getInitialCGrad(), true}});
      })
      .Case([&](DropoutGradOp g) {
        return call(Kernel::dropout_bwd,
                    dropoutDesc(g.getResult(), g.getMask(), g.getRatioAttr(), /*training=*/true),
                    {{g.getGrad()}, {g.getMask()}, {g.getResult()}});
      })
      .Case([&](SoftmaxGradOp g) {
        ArrayRef<int64_t> shape = shapeOf(g.getResult());
        int64_t axis = normalizedAxis(g.getAxis(), shape.size());
        return call(Kernel::softmax_bwd, softmaxDesc(shape, axis, g.getLog()),
                    {{g.getOutput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](SplitOp s) {
        SmallVector<BufArg> bufs{{s.getInput()}};
        for (Value r : s.getResults())
          bufs.push_back({r, true});
        ArrayRef<int64_t> whole = shapeOf(s.getInput());
        return call(Kernel::split,
                    concatDesc(whole, normalizedAxis(s.getAxis(), whole.size()), s.getResults()),
                    bufs);
      })
      .Case<comm::AllReduceStartOp, comm::AllGatherStartOp, comm::GTopKStartOp,
            comm::SparseAllReduceStartOp>([&](Operation *start) -> Result {
        // A slot of the runtime's request table, free again after the wait.
        int64_t slot = 0;
        while (llvm::is_contained(llvm::make_second_range(slots), slot))
          ++slot;
        if (slot >= MGSRT_COMM_MAX_SLOTS)
          return start->emitOpError() << "would be collective number " << slot + 1
                                      << " in flight; the runtime waits for at most "
                                      << MGSRT_COMM_MAX_SLOTS << " at once";
        slots[start] = slot;
        if (auto reduce = dyn_cast<comm::AllReduceStartOp>(start))
          // In place: the gradient's buffer is sent and receives the average.
          return call(Kernel::allreduce_start,
                      fields<AllReduceDesc>({{AllReduceDesc::Count, numel(reduce.getInput())},
                                             {AllReduceDesc::Slot, slot}}),
                      {{reduce.getInput()}});
        Value request = start->getResult(0);
        if (!request.hasOneUse() || !isa<comm::WaitOp>(*request.getUsers().begin()))
          return start->emitOpError() << "needs exactly one comm.wait (convert-train-to-runtime)";
        // The received buffers are the wait's results, written from the start on.
        auto wait = cast<comm::WaitOp>(*request.getUsers().begin());
        if (auto global = dyn_cast<comm::GTopKStartOp>(start)) {
          // Buffer 2 (the residual, updated at the wait) is its parameter's io slot.
          auto topk = global.getValues().getDefiningOp<comm::TopKSparsifyOp>();
          if (!topk)
            return global.emitOpError() << "sends values that no comm.topk_sparsify produced "
                                           "directly; the residual's size is unknown";
          return call(Kernel::gtopk_start,
                      fields<GTopKDesc>({{GTopKDesc::K, numel(global.getValues())},
                                         {GTopKDesc::Slot, slot},
                                         {GTopKDesc::Count, numel(topk.getGrad())}}),
                      {{global.getValues()}, {global.getIndices()}, {Value()},
                       {wait.getResults()[0]}, {wait.getResults()[1]}});
        }
        if (auto sparse = dyn_cast<comm::SparseAllReduceStartOp>(start))
          return call(Kernel::sparse_allreduce_start,
                      fields<SparseAllReduceDesc>(
                          {{SparseAllReduceDesc::K, numel(sparse.getValues())},
                           {SparseAllReduceDesc::Slot, slot},
                           {SparseAllReduceDesc::Count, numel(wait.getResults()[0])},
                           {SparseAllReduceDesc::Balanced, sparse.getBalanced() ? 1 : 0}}),
                      {{sparse.getValues()}, {sparse.getIndices()}, {wait.getResults()[0]}});
        auto gather = cast<comm::AllGatherStartOp>(start);
        // n: the gradient the values were selected from (the density warm-up's k).
        int64_t source = 0;
        if (auto topk = gather.getValues().getDefiningOp<comm::TopKSparsifyOp>())
          source = numel(topk.getGrad());
        return call(Kernel::allgather_start,
                    fields<AllGatherDesc>({{AllGatherDesc::K, numel(gather.getValues())},
                                           {AllGatherDesc::Slot, slot},
                                           {AllGatherDesc::SourceCount, source},
                                           {AllGatherDesc::Values, wireValues(gather)}}),
                    {{gather.getValues()}, {gather.getIndices()}, {wait.getResults()[0]},
                     {wait.getResults()[1]}});
      })
      .Case([&](comm::WaitOp wait) -> Result {
        Operation *start = wait.getRequest().getDefiningOp();
        if (!start || !slots.count(start))
          return wait.emitOpError() << "waits for a request convert-train-to-runtime cannot trace";
        auto result =
            call(Kernel::comm_wait, fields<WaitDesc>({{WaitDesc::Slot, slots.lookup(start)}}), {});
        slots.erase(start);
        if (auto reduce = dyn_cast<comm::AllReduceStartOp>(start))
          (*result)->keepAlive.push_back(reduce.getInput());
        return result;
      })
      .Case([&](comm::TopKSparsifyOp topk) {
        // Buffer 1 (the residual, updated in place) is its parameter's io slot.
        return call(Kernel::topk_sparsify,
                    fields<TopKDesc>({{TopKDesc::Count, numel(topk.getGrad())},
                                      {TopKDesc::K, static_cast<int64_t>(topk.getK())}}),
                    {{topk.getGrad()}, {Value()}, {topk.getValues()}, {topk.getIndices()}});
      })
      .Case([&](comm::ScatterAddOp scatter) {
        int64_t workers = static_cast<int64_t>(scatter.getWorkers());
        return call(Kernel::scatter_add,
                    fields<ScatterAddDesc>({{ScatterAddDesc::Count, numel(scatter.getResult())},
                                            {ScatterAddDesc::K, numel(scatter.getValues()) / workers},
                                            {ScatterAddDesc::Workers, workers}}),
                    {{scatter.getValues()}, {scatter.getIndices()}, {scatter.getResult()}});
      })
      .Case([&](SGDUpdateOp u) {
        // Buffers 0 and 2 (parameter, velocity) are io slots resolved by the caller.
        return call(Kernel::sgd_update, countDesc(numel(u.getGrad())),
                    {{Value()}, {u.getGrad()}, {Value()}});
      })
      .Case([&](ClipGradNormOp c) {
        using D = ClipGradNormDesc;
        SmallVector<int64_t> d(D::size(c.getGrads().size()), 0);
        d[D::Count] = c.getGrads().size();
        d[D::MaxNormBits] = bitsOf(c.getMaxNorm().convertToDouble());
        SmallVector<BufArg> bufs;
        for (auto [i, g] : llvm::enumerate(c.getGrads())) {
          d[D::sizeAt(i)] = numel(g);
          bufs.push_back({g});
        }
        return call(Kernel::clip_grad_norm, d, bufs);
      })
      // The parameter is the last buffer, which the lowering points at its
      // slot.
      .Case([&](AssignParamOp a) {
        const int64_t n = byteSize(a.getValue()) / 4;
        if (assignsZeros(a))
          return call(Kernel::zero, countDesc(n), {{Value()}});
        if (AddOp add = inPlaceAccumulation(a))
          return call(Kernel::accumulate, countDesc(n),
                      {{add.getLhs()}, {add.getRhs()}, {Value()}});
        return call(Kernel::copy, countDesc(n), {{a.getValue()}, {Value()}});
      })
      .Case([&](GRUOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call(Kernel::gru_fwd, gruDesc(x, shapeOf(g.getR()), g.getLinearBeforeReset()),
                    {{g.getInput()},
                     {g.getW()},
                     {g.getR()},
                     {g.getB()},
                     {g.getY()},
                     {g.getYH(), true},
                     {g.getSaved()},
                     {g.getInitialH()}});
      })
      .Case([&](GRUGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call(Kernel::gru_bwd, gruDesc(x, shapeOf(g.getR()), g.getLinearBeforeReset()),
                    {{g.getInput()},
                     {g.getW()},
                     {g.getR()},
                     {g.getY()},
                     {g.getSaved()},
                     {g.getYGrad()},
                     {g.getYHGrad()},
                     {g.getInputGrad(), true},
                     {g.getWGrad()},
                     {g.getRGrad()},
                     {g.getBGrad()},
                     {g.getInitialH()},
                     {g.getInitialHGrad(), true}});
      })
      .Case([&](LayerNormOp l) {
        ArrayRef<int64_t> x = shapeOf(l.getInput());
        return call(Kernel::layer_norm_fwd,
                    layerNormDesc(x, l.getAxis(), bitsOf(l.getEpsilonAttr())),
                    {{l.getInput()}, {l.getScale()}, {l.getBias()}, {l.getResult()},
                     {l.getMean()}, {l.getInvStd()}});
      })
      .Case([&](LayerNormGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call(Kernel::layer_norm_bwd, layerNormDesc(x, g.getAxis(), bitsOf(0.0)),
                    {{g.getInput()}, {g.getScale()}, {g.getMean()}, {g.getInvStd()}, {g.getGrad()},
                     {g.getInputGrad(), true}, {g.getScaleGrad(), true},
                     {g.getBiasGrad(), true}});
      })
      .Default([&](Operation *other) -> Result {
        return other->emitOpError() << "has no runtime kernel (convert-train-to-runtime)";
      });
}

/// The index of a GEMM, matmul or convolution descriptor's precision field;
/// -1 for every other kernel.
int64_t precisionField(const KernelCall &call) {
  switch (call.kernel) {
  case Kernel::gemm_fwd:
  case Kernel::gemm_bwd:
    return GemmDesc::Precision;
  case Kernel::matmul_fwd:
  case Kernel::matmul_bwd:
    return MatMulDesc::at(MatMulDesc::Precision, call.desc[MatMulDesc::BatchRank]);
  case Kernel::conv_fwd:
  case Kernel::conv_bwd_data:
  case Kernel::conv_bwd_weights:
    return ConvDesc::at(ConvDesc::Precision, call.desc[ConvDesc::SpatialRank]);
  default:
    return -1;
  }
}

} // namespace

FailureOr<std::optional<KernelCall>> describe(Operation *op,
                                              DenseMap<Operation *, int64_t> &slots,
                                              int64_t precision) {
  auto described = describeOp(op, slots);
  if (succeeded(described) && *described) {
    KernelCall &call = **described;
    if (int64_t field = precisionField(call); field >= 0)
      call.desc[field] = precision;
  }
  return described;
}

} // namespace mgs::lowering
