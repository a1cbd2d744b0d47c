//===- TrainToRuntime.cpp - train steps -> LLVM calls into mgsrt ----------===//
//
// Three phases per step function:
//  1. describe: every op becomes a kernel call (name, constant descriptor,
//     buffer list) or an alias (reshape, flatten, gradient tag);
//  2. plan: every value gets storage: an io slot (parameters, velocities,
//     inputs, labels, loss, outputs), a constant global, or an arena offset
//     placed by liveness (BufferPlan);
//  3. emit: an LLVM function that fills a pointer array per call and calls
//     the kernel, then returns the context's sticky status.
// The descriptor layouts are those of runtime/include/mgsrt/mgsrt.h.
//
//===----------------------------------------------------------------------===//

#include "mgs/Conversion/Passes.h"
#include "mgs/Conversion/TrainToRuntime/BufferPlan.h"
#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mgsrt/mgsrt.h" // the C ABI: MGSRT_COMM_MAX_SLOTS (no MLIR in it)

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

#include <cstdio>

#include <cstring>
#include <map>
#include <vector>

namespace mgs {

#define GEN_PASS_DEF_CONVERTTRAINTORUNTIME
#include "mgs/Conversion/Passes.h.inc"

namespace {

using namespace mlir;
using namespace mgs::train;

int64_t bitsOf(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}
int64_t bitsOf(FloatAttr f) { return bitsOf(f.getValueAsDouble()); }

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }
int64_t numel(Value v) { return numElements(shapeOf(v)); }
int64_t byteSize(Value v) {
  Type elem = cast<RankedTensorType>(v.getType()).getElementType();
  int64_t bytes = elem.isInteger(1) ? 1 : elem.getIntOrFloatBitWidth() / 8;
  return std::max<int64_t>(numel(v) * bytes, 1);
}

/// A buffer of a kernel call: a value, or null. A nullable output that
/// nobody reads is passed as null.
struct BufArg {
  Value value;
  bool nullable = false;
};

struct KernelCall {
  Operation *op;
  std::string kernel;
  SmallVector<int64_t> desc;
  SmallVector<BufArg> bufs;
  /// Values the call does not pass but whose memory it uses (a collective in
  /// flight until its wait).
  SmallVector<Value> keepAlive;
};

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

void append(SmallVectorImpl<int64_t> &desc, ArrayRef<int64_t> values) {
  desc.append(values.begin(), values.end());
}

SmallVector<int64_t> convDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> w, ArrayRef<int64_t> y,
                              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                              ArrayRef<int64_t> dilations, int64_t group) {
  int64_t s = x.size() - 2;
  SmallVector<int64_t> d{s, x[0], x[1], w[0], group};
  append(d, x.drop_front(2));
  append(d, w.drop_front(2));
  append(d, y.drop_front(2));
  append(d, strides);
  append(d, pads); // begins then ends, as ONNX orders them
  append(d, dilations);
  return d;
}

SmallVector<int64_t> poolDesc(int64_t kind, ArrayRef<int64_t> x, ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> y, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                              bool countIncludePad, int64_t storageOrder) {
  int64_t s = x.size() - 2;
  SmallVector<int64_t> d{kind, s, x[0], x[1]};
  append(d, x.drop_front(2));
  append(d, kernel);
  append(d, y.drop_front(2));
  append(d, strides);
  append(d, pads);
  append(d, dilations);
  d.push_back(countIncludePad);
  d.push_back(storageOrder);
  return d;
}

/// [op, R, out[R], lhs[R], rhs[R]] with operand shapes left-padded with 1s.
SmallVector<int64_t> binaryDesc(int64_t op, ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                ArrayRef<int64_t> out) {
  int64_t r = out.size();
  SmallVector<int64_t> d{op, r};
  append(d, out);
  for (ArrayRef<int64_t> operand : {lhs, rhs}) {
    d.append(r - operand.size(), 1);
    append(d, operand);
  }
  return d;
}

/// The runtime's op codes (mgsrt.h) for the kinds of elementwiseKind().
int64_t binaryCode(StringRef kind) {
  return llvm::StringSwitch<int64_t>(kind)
      .Case("add", MGSRT_BINARY_ADD)
      .Case("sub", MGSRT_BINARY_SUB)
      .Case("mul", MGSRT_BINARY_MUL)
      .Default(MGSRT_BINARY_DIV);
}
int64_t unaryCode(StringRef kind) {
  return llvm::StringSwitch<int64_t>(kind)
      .Case("relu", MGSRT_UNARY_RELU)
      .Case("leaky_relu", MGSRT_UNARY_LEAKY_RELU)
      .Case("sigmoid", MGSRT_UNARY_SIGMOID)
      .Default(MGSRT_UNARY_TANH);
}

/// [M, N, K, trans_a, trans_b, alpha, beta, c0, c1].
SmallVector<int64_t> gemmDesc(ArrayRef<int64_t> a, ArrayRef<int64_t> b, bool transA, bool transB,
                              FloatAttr alpha, FloatAttr beta, Value c) {
  int64_t m = transA ? a[1] : a[0], k = transA ? a[0] : a[1], n = transB ? b[0] : b[1];
  SmallVector<int64_t> d{m, n, k, transA, transB, bitsOf(alpha), bitsOf(beta)};
  if (!c) {
    d.append({0, 0});
  } else {
    ArrayRef<int64_t> cs = shapeOf(c);
    d.push_back(cs.size() == 2 ? cs[0] : 1);
    d.push_back(cs.empty() ? 1 : cs.back());
  }
  return d;
}

/// [B, out_batch[B], lhs_batch[B], rhs_batch[B], M, K, N], with numpy's 1-D
/// promotion resolved.
SmallVector<int64_t> matmulDesc(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  SmallVector<int64_t> l(lhs), r(rhs);
  if (l.size() == 1)
    l.insert(l.begin(), 1);
  if (r.size() == 1)
    r.push_back(1);
  ArrayRef<int64_t> lb = ArrayRef<int64_t>(l).drop_back(2), rb = ArrayRef<int64_t>(r).drop_back(2);
  SmallVector<int64_t> ob = *broadcastShapes(lb, rb);
  int64_t batch = ob.size();
  SmallVector<int64_t> d{batch};
  append(d, ob);
  for (ArrayRef<int64_t> operand : {lb, rb}) {
    d.append(batch - operand.size(), 1);
    append(d, operand);
  }
  d.append({l[l.size() - 2], l.back(), r.back()});
  return d;
}

/// [outer, axis, inner, log] of a softmax over `axis`.
SmallVector<int64_t> softmaxDesc(ArrayRef<int64_t> shape, int64_t axis, bool log) {
  return {numElements(shape.take_front(axis)), shape[axis], numElements(shape.drop_front(axis + 1)),
          log};
}

/// [outer, inner, K, extent[K]] of a concat/split along `axis`.
SmallVector<int64_t> concatDesc(ArrayRef<int64_t> whole, int64_t axis, ValueRange parts) {
  SmallVector<int64_t> d{numElements(whole.take_front(axis)),
                         numElements(whole.drop_front(axis + 1)),
                         static_cast<int64_t>(parts.size())};
  for (Value p : parts)
    d.push_back(shapeOf(p)[axis]);
  return d;
}

/// A gradient tag shares its operand's buffer unless that value has other
/// readers, which the in-place collective on the gradient would disturb.
bool gradientAliases(GradientOp g) { return g.getGrad().hasOneUse(); }

/// The kernel call for `op`, or nullopt for ops that need none (aliases and
/// storage). Fails for an op the runtime has no kernel for.
FailureOr<std::optional<KernelCall>> describe(Operation *op,
                                              DenseMap<Operation *, int64_t> &slots) {
  using Result = FailureOr<std::optional<KernelCall>>;
  auto call = [&](StringRef kernel, SmallVector<int64_t> desc,
                  SmallVector<BufArg> bufs) -> Result {
    return std::optional<KernelCall>(KernelCall{op, kernel.str(), std::move(desc), std::move(bufs)});
  };
  auto none = []() -> Result { return std::optional<KernelCall>(); };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<GetParamOp, arith::ConstantOp, ReshapeOp, FlattenOp>(
          [&](Operation *) { return none(); })
      .Case([&](GradientOp g) -> Result {
        // A gradient is communicated in place: it gets its own buffer when
        // its value is also read elsewhere (a gradient passed through an add).
        if (gradientAliases(g))
          return none();
        return call("mgsrt_copy", {byteSize(g.getResult()) / 4}, {{g.getGrad()}, {g.getResult()}});
      })
      .Case<ReluOp, LeakyReluOp, SigmoidOp, TanhOp>([&](Operation *) {
        int64_t code = unaryCode(elementwiseKind(op));
        double alpha = 0;
        if (auto leaky = dyn_cast<LeakyReluOp>(op))
          alpha = leaky.getAlpha().convertToDouble();
        return call("mgsrt_unary_fwd", {code, numel(op->getResult(0)), bitsOf(alpha)},
                    {{op->getOperand(0)}, {op->getResult(0)}});
      })
      .Case([&](ClipOp c) {
        return call("mgsrt_clip_fwd", {numel(c.getResult())},
                    {{c.getInput()}, {c.getMin()}, {c.getMax()}, {c.getResult()}});
      })
      .Case<AddOp, SubOp, MulOp, DivOp>([&](Operation *) {
        int64_t code = binaryCode(elementwiseKind(op));
        Value l = op->getOperand(0), r = op->getOperand(1), o = op->getResult(0);
        return call("mgsrt_binary_fwd", binaryDesc(code, shapeOf(l), shapeOf(r), shapeOf(o)),
                    {{l}, {r}, {o}});
      })
      .Case([&](GemmOp g) {
        return call("mgsrt_gemm_fwd",
                    gemmDesc(shapeOf(g.getA()), shapeOf(g.getB()), g.getTransA(), g.getTransB(),
                             g.getAlphaAttr(), g.getBetaAttr(), g.getC()),
                    {{g.getA()}, {g.getB()}, {g.getC()}, {g.getResult()}});
      })
      .Case([&](MatMulOp m) {
        return call("mgsrt_matmul_fwd", matmulDesc(shapeOf(m.getLhs()), shapeOf(m.getRhs())),
                    {{m.getLhs()}, {m.getRhs()}, {m.getResult()}});
      })
      .Case([&](ConvOp c) {
        return call("mgsrt_conv_fwd",
                    convDesc(shapeOf(c.getInput()), shapeOf(c.getWeight()), shapeOf(c.getResult()),
                             c.getStrides(), c.getPads(), c.getDilations(), c.getGroup()),
                    {{c.getInput()}, {c.getWeight()}, {c.getBias()}, {c.getResult()}});
      })
      .Case([&](MaxPoolOp p) {
        return call("mgsrt_pool_fwd",
                    poolDesc(MGSRT_POOL_MAX, shapeOf(p.getInput()), p.getKernelShape(), shapeOf(p.getResult()),
                             p.getStrides(), p.getPads(), p.getDilations(), false,
                             p.getStorageOrder()),
                    {{p.getInput()}, {p.getResult()}, {p.getIndices(), true}});
      })
      .Case([&](AveragePoolOp p) {
        SmallVector<int64_t> ones(p.getKernelShape().size(), 1);
        return call("mgsrt_pool_fwd",
                    poolDesc(MGSRT_POOL_AVG, shapeOf(p.getInput()), p.getKernelShape(), shapeOf(p.getResult()),
                             p.getStrides(), p.getPads(), ones, p.getCountIncludePad(), 0),
                    {{p.getInput()}, {p.getResult()}, {Value()}});
      })
      .Case([&](GlobalAveragePoolOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        PoolWindow w = globalPoolWindow(x);
        return call("mgsrt_pool_fwd",
                    poolDesc(MGSRT_POOL_AVG, x, w.kernel, shapeOf(p.getResult()), w.strides,
                             w.pads, w.dilations, true, 0),
                    {{p.getInput()}, {p.getResult()}, {Value()}});
      })
      .Case([&](BatchNormOp bn) {
        ArrayRef<int64_t> x = shapeOf(bn.getInput());
        return call("mgsrt_batch_norm_fwd",
                    {x[0], x[1], numElements(x.drop_front(2)), bn.getTraining(),
                     bitsOf(bn.getEpsilonAttr()), bitsOf(bn.getMomentumAttr()),
                     bn.getUnbiasedRunningVar(), bn.getRelu()},
                    {{bn.getInput()}, {bn.getScale()}, {bn.getBias()}, {bn.getMean()}, {bn.getVar()},
                     {bn.getResult()}, {bn.getRunningMean()}, {bn.getRunningVar()},
                     {bn.getSavedMean(), true}, {bn.getSavedInvStd(), true}});
      })
      .Case([&](GatherOp g) {
        ArrayRef<int64_t> t = shapeOf(g.getTable());
        return call("mgsrt_gather_fwd", {t[0], numElements(t.drop_front()), numel(g.getIndices())},
                    {{g.getTable()}, {g.getIndices()}, {g.getResult()}});
      })
      .Case([&](GatherGradOp g) {
        ArrayRef<int64_t> t = shapeOf(g.getResult());
        return call("mgsrt_gather_bwd", {t[0], numElements(t.drop_front()), numel(g.getIndices())},
                    {{g.getIndices()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](LSTMOp l) {
        ArrayRef<int64_t> x = shapeOf(l.getInput());
        return call("mgsrt_lstm_fwd", {x[0], x[1], x[2], shapeOf(l.getR())[2]},
                    {{l.getInput()}, {l.getW()}, {l.getR()}, {l.getB()}, {l.getY()},
                     {l.getYH(), true}, {l.getYC(), true}, {l.getSaved()}});
      })
      .Case([&](DropoutOp d) {
        return call("mgsrt_dropout_fwd",
                    {numel(d.getResult()), bitsOf(d.getRatioAttr()), d.getTraining()},
                    {{d.getInput()}, {d.getResult()}, {d.getMask(), true}});
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *) {
        ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
        int64_t axis = normalizedAxis(isa<SoftmaxOp>(op) ? cast<SoftmaxOp>(op).getAxis()
                                                         : cast<LogSoftmaxOp>(op).getAxis(),
                                      shape.size());
        return call("mgsrt_softmax_fwd", softmaxDesc(shape, axis, isa<LogSoftmaxOp>(op)),
                    {{op->getOperand(0)}, {op->getResult(0)}});
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> x = shapeOf(t.getInput());
        SmallVector<int64_t> d{static_cast<int64_t>(x.size())};
        append(d, x);
        append(d, t.getPerm());
        return call("mgsrt_transpose", d, {{t.getInput()}, {t.getResult()}});
      })
      .Case([&](ConcatOp c) {
        ArrayRef<int64_t> out = shapeOf(c.getResult());
        int64_t axis = normalizedAxis(c.getAxis(), out.size());
        SmallVector<BufArg> bufs;
        for (Value in : c.getInputs())
          bufs.push_back({in});
        bufs.push_back({c.getResult()});
        return call("mgsrt_concat", concatDesc(out, axis, c.getInputs()), bufs);
      })
      .Case([&](PadOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        SmallVector<int64_t> d{static_cast<int64_t>(x.size())};
        append(d, x);
        append(d, p.getPads());
        d.push_back(bitsOf(p.getValueAttr()));
        return call("mgsrt_pad_fwd", d, {{p.getInput()}, {p.getResult()}});
      })
      .Case([&](SoftmaxCrossEntropyOp l) {
        ArrayRef<int64_t> s = shapeOf(l.getLogits());
        return call("mgsrt_softmax_cross_entropy", {s[0], s[1]},
                    {{l.getLogits()}, {l.getLabels()}, {l.getLoss()}, {l.getDlogits(), true}});
      })
      .Case([&](UnaryGradOp g) {
        return call("mgsrt_unary_bwd",
                    {unaryCode(g.getKind()), numel(g.getResult()), bitsOf(g.getAlphaAttr())},
                    {{g.getInput()}, {g.getOutput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](ClipGradOp g) {
        return call("mgsrt_clip_bwd", {numel(g.getResult())},
                    {{g.getInput()}, {g.getMin()}, {g.getMax()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](BinaryGradOp g) {
        return call("mgsrt_binary_bwd",
                    binaryDesc(binaryCode(g.getKind()), shapeOf(g.getLhs()), shapeOf(g.getRhs()),
                               shapeOf(g.getGrad())),
                    {{g.getLhs()}, {g.getRhs()}, {g.getGrad()}, {g.getLhsGrad(), true},
                     {g.getRhsGrad(), true}});
      })
      .Case([&](GemmGradOp g) {
        return call("mgsrt_gemm_bwd",
                    gemmDesc(shapeOf(g.getA()), shapeOf(g.getB()), g.getTransA(), g.getTransB(),
                             g.getAlphaAttr(), g.getBetaAttr(), g.getCGrad()),
                    {{g.getA()}, {g.getB()}, {g.getGrad()}, {g.getAGrad(), true},
                     {g.getBGrad(), true}, {g.getCGrad(), true}});
      })
      .Case([&](MatMulGradOp g) {
        return call("mgsrt_matmul_bwd", matmulDesc(shapeOf(g.getLhs()), shapeOf(g.getRhs())),
                    {{g.getLhs()}, {g.getRhs()}, {g.getGrad()}, {g.getLhsGrad(), true},
                     {g.getRhsGrad(), true}});
      })
      .Case([&](ConvGradDataOp g) {
        return call("mgsrt_conv_bwd_data",
                    convDesc(shapeOf(g.getResult()), shapeOf(g.getWeight()), shapeOf(g.getGrad()),
                             g.getStrides(), g.getPads(), g.getDilations(), g.getGroup()),
                    {{g.getGrad()}, {g.getWeight()}, {g.getResult()}});
      })
      .Case([&](ConvGradWeightsOp g) {
        return call("mgsrt_conv_bwd_weights",
                    convDesc(shapeOf(g.getInput()), shapeOf(g.getWeightGrad()),
                             shapeOf(g.getGrad()), g.getStrides(), g.getPads(), g.getDilations(),
                             g.getGroup()),
                    {{g.getInput()}, {g.getGrad()}, {g.getWeightGrad()}, {g.getBiasGrad(), true}});
      })
      .Case([&](PoolGradOp g) {
        bool max = g.getKind() == "max";
        return call("mgsrt_pool_bwd",
                    poolDesc(max ? MGSRT_POOL_MAX : MGSRT_POOL_AVG, shapeOf(g.getInput()), g.getKernelShape(),
                             shapeOf(g.getGrad()), g.getStrides(), g.getPads(), g.getDilations(),
                             g.getCountIncludePad(), 0),
                    {{g.getInput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](BatchNormGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        SmallVector<BufArg> bufs{{g.getInput()},     {g.getScale()},     {g.getSavedMean()},
                                 {g.getSavedInvStd()}, {g.getGrad()},      {g.getInputGrad()},
                                 {g.getScaleGrad()},  {g.getBiasGrad()}};
        if (g.getRelu())
          bufs.push_back({g.getBias()});
        return call("mgsrt_batch_norm_bwd",
                    {x[0], x[1], numElements(x.drop_front(2)), 1, bitsOf(0.0), bitsOf(0.0), 0,
                     g.getRelu()},
                    bufs);
      })
      .Case([&](LSTMGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call("mgsrt_lstm_bwd", {x[0], x[1], x[2], shapeOf(g.getR())[2]},
                    {{g.getInput()}, {g.getW()}, {g.getR()}, {g.getY()}, {g.getSaved()},
                     {g.getYGrad()}, {g.getYHGrad()}, {g.getYCGrad()}, {g.getInputGrad(), true},
                     {g.getWGrad()}, {g.getRGrad()}, {g.getBGrad()}});
      })
      .Case([&](DropoutGradOp g) {
        return call("mgsrt_dropout_bwd", {numel(g.getResult()), bitsOf(g.getRatioAttr()), 1},
                    {{g.getGrad()}, {g.getMask()}, {g.getResult()}});
      })
      .Case([&](SoftmaxGradOp g) {
        ArrayRef<int64_t> shape = shapeOf(g.getResult());
        int64_t axis = normalizedAxis(g.getAxis(), shape.size());
        return call("mgsrt_softmax_bwd", softmaxDesc(shape, axis, g.getLog()),
                    {{g.getOutput()}, {g.getGrad()}, {g.getResult()}});
      })
      .Case([&](SplitOp s) {
        SmallVector<BufArg> bufs{{s.getInput()}};
        for (Value r : s.getResults())
          bufs.push_back({r, true});
        ArrayRef<int64_t> whole = shapeOf(s.getInput());
        return call("mgsrt_split",
                    concatDesc(whole, normalizedAxis(s.getAxis(), whole.size()), s.getResults()),
                    bufs);
      })
      .Case<comm::AllReduceStartOp, comm::AllGatherStartOp>([&](Operation *start) -> Result {
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
          return call("mgsrt_allreduce_start", {numel(reduce.getInput()), slot},
                      {{reduce.getInput()}});
        auto gather = cast<comm::AllGatherStartOp>(start);
        Value request = gather.getRequest();
        if (!request.hasOneUse() || !isa<comm::WaitOp>(*request.getUsers().begin()))
          return gather.emitOpError() << "needs exactly one comm.wait (convert-train-to-runtime)";
        // The gathered buffers are the wait's results, written from the start on.
        auto wait = cast<comm::WaitOp>(*request.getUsers().begin());
        // n: the gradient the values were selected from (the density warm-up's k).
        int64_t source = 0;
        if (auto topk = gather.getValues().getDefiningOp<comm::TopKSparsifyOp>())
          source = numel(topk.getGrad());
        return call("mgsrt_allgather_start",
                    {numel(gather.getValues()), slot, source, gather.getHalfValues() ? 1 : 0},
                    {{gather.getValues()}, {gather.getIndices()}, {wait.getResults()[0]},
                     {wait.getResults()[1]}});
      })
      .Case([&](comm::WaitOp wait) -> Result {
        Operation *start = wait.getRequest().getDefiningOp();
        if (!start || !slots.count(start))
          return wait.emitOpError() << "waits for a request convert-train-to-runtime cannot trace";
        auto result = call("mgsrt_comm_wait", {slots.lookup(start)}, {});
        slots.erase(start);
        if (auto reduce = dyn_cast<comm::AllReduceStartOp>(start))
          (*result)->keepAlive.push_back(reduce.getInput());
        return result;
      })
      .Case([&](comm::TopKSparsifyOp topk) {
        // Buffer 1 (the residual, updated in place) is its parameter's io slot.
        return call("mgsrt_topk_sparsify",
                    {numel(topk.getGrad()), static_cast<int64_t>(topk.getK())},
                    {{topk.getGrad()}, {Value()}, {topk.getValues()}, {topk.getIndices()}});
      })
      .Case([&](comm::ScatterAddOp scatter) {
        int64_t workers = static_cast<int64_t>(scatter.getWorkers());
        return call("mgsrt_scatter_add",
                    {numel(scatter.getResult()), numel(scatter.getValues()) / workers, workers},
                    {{scatter.getValues()}, {scatter.getIndices()}, {scatter.getResult()}});
      })
      .Case([&](SGDUpdateOp u) {
        // Buffers 0 and 2 (parameter, velocity) are io slots resolved by the caller.
        return call("mgsrt_sgd_update", {numel(u.getGrad())}, {{Value()}, {u.getGrad()}, {Value()}});
      })
      .Case([&](AssignParamOp a) {
        return call("mgsrt_copy", {byteSize(a.getValue()) / 4}, {{a.getValue()}, {Value()}});
      })
      .Default([&](Operation *other) -> Result {
        return other->emitOpError() << "has no runtime kernel (convert-train-to-runtime)";
      });
}

//===----------------------------------------------------------------------===//
// Lowering of one step function
//===----------------------------------------------------------------------===//

/// Where a value lives.
struct Storage {
  enum Kind { Slot, Arena, Global, Unset } kind = Unset;
  int64_t index = 0; // io slot or arena offset
  LLVM::GlobalOp global;
};

/// The constant globals of the module, shared by both steps: descriptors
/// with the same contents are emitted once.
struct Globals {
  int counter = 0;
  std::map<std::vector<int64_t>, LLVM::GlobalOp> descs;
};

class StepLowering {
public:
  StepLowering(ModuleOp module, const llvm::StringMap<int64_t> &paramIndex,
               const llvm::StringMap<int64_t> &velocityIndex, int64_t numParams,
               int64_t numVelocities, Globals &globals)
      : module(module), b(module.getContext()), paramIndex(paramIndex),
        velocityIndex(velocityIndex), numParams(numParams), numVelocities(numVelocities),
        globals(globals) {}

  /// Lowers `func` (train_step when `train`) to an LLVM function `name`.
  LogicalResult lower(func::FuncOp func, bool train, StringRef name);

  int64_t arenaBytes = 0, unplannedBytes = 0, numCalls = 0, numCollectives = 0;
  int64_t compiledWorkers = 0; // the workers a sparse exchange was compiled for (0: any)
  /// Calibration (mgsc --profile-generate): mark the start of backprop and
  /// each gradient's completion with mgsrt_mark calls.
  bool instrument = false;
  int64_t numCopyFreeBuckets = 0, numCopyFreeSplits = 0;

private:
  Value root(Value v) {
    while (true) {
      Operation *def = v.getDefiningOp();
      if (auto r = dyn_cast_or_null<ReshapeOp>(def))
        v = r.getInput();
      else if (auto f = dyn_cast_or_null<FlattenOp>(def))
        v = f.getInput();
      else if (auto g = dyn_cast_or_null<GradientOp>(def); g && gradientAliases(g))
        v = g.getGrad();
      else if (auto wait = dyn_cast_or_null<comm::WaitOp>(def);
               wait && wait.getRequest().getDefiningOp<comm::AllReduceStartOp>())
        v = wait.getRequest().getDefiningOp<comm::AllReduceStartOp>().getInput();
      else
        return v;
    }
  }
  /// The value whose buffer holds v's (its root, or the root of the buffer
  /// it is a slice of) and v's byte offset in it.
  std::pair<Value, int64_t> base(Value v) {
    int64_t offset = 0;
    Value r = root(v);
    for (auto it = slices.find(r); it != slices.end(); it = slices.find(r)) {
      offset += it->second.second;
      r = root(it->second.first);
    }
    return {r, offset};
  }
  /// Whether every reader of `v`'s buffer (through aliases) other than the
  /// path into `concat` comes before it.
  bool readBefore(Value v, Operation *concat);
  void planSlices(Block &body);
  LLVM::GlobalOp constantGlobal(arith::ConstantOp c);
  LLVM::GlobalOp descGlobal(Location loc, ArrayRef<int64_t> desc);
  LLVM::LLVMFuncOp kernelDecl(StringRef name);
  Value slotPointer(int64_t slot);
  Value pointerTo(Value v);

  ModuleOp module;
  OpBuilder b;
  const llvm::StringMap<int64_t> &paramIndex, &velocityIndex;
  int64_t numParams, numVelocities;
  Globals &globals;
  DenseMap<Value, Storage> storage;
  /// Copy-free buckets: a value laid out inside another's buffer (value ->
  /// the buffer's value, byte offset), and the concats and splits that so
  /// need no kernel.
  DenseMap<Value, std::pair<Value, int64_t>> slices;
  DenseSet<Operation *> freeOps;
  DenseMap<int64_t, Value> loadedSlots;
  Value io, arena;
};

bool StepLowering::readBefore(Value v, Operation *concat) {
  for (Operation *user : v.getUsers()) {
    if (user == concat)
      continue;
    if (isa<ReshapeOp, FlattenOp>(user) ||
        (isa<GradientOp>(user) && gradientAliases(cast<GradientOp>(user)))) {
      if (!readBefore(user->getResult(0), concat))
        return false;
      continue;
    }
    if (!user->isBeforeInBlock(concat))
      return false;
  }
  return true;
}

/// Copy-free buckets. A bucket's gradients are computed straight into their
/// slices of the bucket's buffer (the concat then needs no kernel), and the
/// pieces a split hands back are slices of its input (no kernel either).
/// A gradient keeps its own buffer (and the bucket its copy) when it is read
/// after the bucket is formed: a dense bucket is averaged in place.
void StepLowering::planSlices(Block &body) {
  for (Operation &op : body.without_terminator()) {
    if (auto c = dyn_cast<ConcatOp>(op)) {
      if (!c->hasAttr("comm.bucket") || shapeOf(c.getResult()).size() != 1)
        continue;
      SmallVector<Value> members;
      DenseSet<Value> seen;
      bool ok = true;
      for (Value in : c.getInputs()) {
        Value r = root(in);
        Operation *def = r.getDefiningOp();
        if (!def || isa<GetParamOp, arith::ConstantOp>(def) || slices.count(r) ||
            !seen.insert(r).second || !readBefore(r, c)) {
          ok = false;
          break;
        }
        members.push_back(r);
      }
      if (!ok)
        continue;
      int64_t offset = 0;
      for (auto [in, r] : llvm::zip(c.getInputs(), members)) {
        slices[r] = {c.getResult(), offset};
        offset += byteSize(in);
      }
      freeOps.insert(c);
      ++numCopyFreeBuckets;
    } else if (auto sp = dyn_cast<SplitOp>(op)) {
      ArrayRef<int64_t> whole = shapeOf(sp.getInput());
      if (normalizedAxis(sp.getAxis(), whole.size()) != 0)
        continue;
      int64_t offset = 0;
      for (Value r : sp.getResults()) {
        slices[r] = {sp.getInput(), offset};
        offset += byteSize(r);
      }
      freeOps.insert(sp);
      ++numCopyFreeSplits;
    }
  }
}

LLVM::GlobalOp StepLowering::constantGlobal(arith::ConstantOp c) {
  auto attr = cast<DenseElementsAttr>(c.getValue());
  const int64_t count = attr.getNumElements();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getF32Type(), count);
  auto tensorType = RankedTensorType::get({count}, b.getF32Type());
  // All +0 (the zero gradients of unused pieces, an LSTM's absent bias): a
  // zero-initialized global, in .bss rather than in the executable's file.
  const bool zeros = attr.isSplat() && std::signbit(attr.getSplatValue<float>()) == 0 &&
                     attr.getSplatValue<float>() == 0.0f;
  DenseElementsAttr value =
      zeros ? DenseElementsAttr::get(tensorType, 0.0f)
            : DenseElementsAttr::get(tensorType, ArrayRef<float>(SmallVector<float>(
                                                     attr.getValues<float>())));
  return LLVM::GlobalOp::create(b, c.getLoc(), type, /*isConstant=*/!zeros,
                                LLVM::Linkage::Internal,
                                "__mgs_const_" + std::to_string(globals.counter++), value,
                                /*alignment=*/64);
}

LLVM::GlobalOp StepLowering::descGlobal(Location loc, ArrayRef<int64_t> desc) {
  LLVM::GlobalOp &global = globals.descs[std::vector<int64_t>(desc.begin(), desc.end())];
  if (global)
    return global;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI64Type(), desc.size());
  auto tensorType = RankedTensorType::get({static_cast<int64_t>(desc.size())}, b.getI64Type());
  global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
                                  "__mgs_desc_" + std::to_string(globals.counter++),
                                  DenseElementsAttr::get(tensorType, desc));
  return global;
}

LLVM::LLVMFuncOp StepLowering::kernelDecl(StringRef name) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::LLVMFuncOp::create(
      b, module.getLoc(), name, LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, ptr, ptr}));
}

Value StepLowering::slotPointer(int64_t slot) {
  Value &loaded = loadedSlots[slot];
  if (!loaded) {
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    Value addr = LLVM::GEPOp::create(b, io.getLoc(), ptr, ptr, io, ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
    loaded = LLVM::LoadOp::create(b, io.getLoc(), ptr, addr);
  }
  return loaded;
}

Value StepLowering::pointerTo(Value v) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Location loc = io.getLoc();
  if (!v)
    return LLVM::ZeroOp::create(b, loc, ptr);
  auto [r, offset] = base(v);
  if (offset) {
    // A slice of a copy-free bucket (or of a split's input).
    Value o = LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(offset));
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), pointerTo(r), ArrayRef<LLVM::GEPArg>{o});
  }
  const Storage &s = storage.lookup(r);
  switch (s.kind) {
  case Storage::Slot:
    return slotPointer(s.index);
  case Storage::Arena: {
    // A dynamic index: constant GEP indices hold only 29 bits, and arenas of
    // large models (VGG-16, ResNet-50) go past 256 MiB.
    Value offset = LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(s.index));
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), arena, ArrayRef<LLVM::GEPArg>{offset});
  }
  case Storage::Global:
    return LLVM::AddressOfOp::create(b, loc, s.global);
  case Storage::Unset:
    break;
  }
  return LLVM::ZeroOp::create(b, loc, ptr); // a nullable output nobody reads
}

LogicalResult StepLowering::lower(func::FuncOp func, bool train, StringRef name) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // 1. Describe (copy-free concats and splits need no kernel).
  planSlices(body);
  SmallVector<KernelCall> calls;
  DenseMap<Operation *, int64_t> slots;
  for (Operation &op : body.without_terminator()) {
    if (freeOps.contains(&op))
      continue;
    if (isa<comm::AllReduceStartOp, comm::AllGatherStartOp>(op))
      ++numCollectives;
    if (auto gather = dyn_cast<comm::AllGatherStartOp>(op))
      compiledWorkers = static_cast<int64_t>(gather.getWorkers());
    auto described = describe(&op, slots);
    if (failed(described))
      return failure();
    if (*described)
      calls.push_back(std::move(**described));
    // Marks for calibration: -1 when the loss (and so backprop) starts, the
    // backprop index when a gradient is complete.
    if (instrument && train) {
      if (isa<SoftmaxCrossEntropyOp>(op))
        calls.push_back(KernelCall{&op, "mgsrt_mark", {-1}, {}});
      else if (auto g = dyn_cast<GradientOp>(op))
        calls.push_back(KernelCall{&op, "mgsrt_mark", {static_cast<int64_t>(g.getBackpropIndex())}, {}});
    }
  }

  // 2. Storage of io values.
  int64_t numArgs = func.getNumArguments();
  int64_t firstInput = 1 + numParams + (train ? numVelocities : 0);
  for (int64_t i = 0; i < numArgs; ++i)
    storage[func.getArgument(i)] = {Storage::Slot, firstInput + i};
  int64_t firstResult = firstInput + numArgs;
  for (Operation &op : body.without_terminator()) {
    if (auto get = dyn_cast<GetParamOp>(op))
      storage[get.getResult()] = {Storage::Slot, 1 + paramIndex.lookup(get.getName())};
    else if (auto c = dyn_cast<arith::ConstantOp>(op))
      storage[c.getResult()] = {Storage::Global, 0, constantGlobal(c)};
  }
  // Results computed straight into their io slot when nothing else owns them.
  SmallVector<std::pair<Value, int64_t>> resultCopies;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value r = root(v);
    if (!storage.count(r) && r.getDefiningOp() && !slices.count(r))
      storage[r] = {Storage::Slot, firstResult + static_cast<int64_t>(i)};
    else
      resultCopies.push_back({v, firstResult + static_cast<int64_t>(i)});
  }

  // 3. Arena values and their live ranges (in call indices; results that are
  // copied at the end live to the end).
  DenseMap<Value, std::pair<int64_t, int64_t>> live;
  auto touch = [&](Value v, int64_t at) {
    Value r = base(v).first;
    if (storage.count(r))
      return;
    auto [it, inserted] = live.try_emplace(r, at, at);
    if (!inserted) {
      it->second.first = std::min(it->second.first, at);
      it->second.second = std::max(it->second.second, at);
    }
  };
  for (auto [i, c] : llvm::enumerate(calls))
    for (BufArg &arg : c.bufs) {
      if (arg.value && arg.nullable && arg.value.use_empty())
        arg.value = Value(); // nobody reads it: pass null
      if (arg.value)
        touch(arg.value, i);
    }
  for (auto [i, c] : llvm::enumerate(calls))
    for (Value v : c.keepAlive)
      touch(v, i);
  for (auto [v, slot] : resultCopies)
    touch(v, calls.size());
  SmallVector<Value> arenaValues;
  SmallVector<BufferInterval> intervals;
  for (auto &[v, range] : live) {
    arenaValues.push_back(v);
    intervals.push_back({byteSize(v), range.first, range.second});
    unplannedBytes += byteSize(v);
  }
  BufferPlan plan = planBuffers(intervals);
  for (auto [v, offset] : llvm::zip(arenaValues, plan.offsets))
    storage[v] = {Storage::Arena, offset};
  arenaBytes = plan.arenaBytes;

  // 4. Emit.
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, func.getLoc(), name,
                                     LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, ptr}));
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value ctxArg = entry->getArgument(0);
  io = entry->getArgument(1);
  loadedSlots.clear();
  arena = slotPointer(0);
  // The buffer-pointer array every call fills: as long as the longest call's
  // list, including the copies of results at the end (two pointers each; a
  // step of aliases alone has no other call, and an array of one overflowed).
  size_t maxBufs = resultCopies.empty() ? 1 : 2;
  for (const KernelCall &c : calls)
    maxBufs = std::max(maxBufs, c.bufs.size());
  Value count = LLVM::ConstantOp::create(b, func.getLoc(), b.getI64Type(),
                                         b.getI64IntegerAttr(maxBufs));
  Value bufs = LLVM::AllocaOp::create(b, func.getLoc(), ptr, ptr, count, 8);

  auto emitCall = [&](Location loc, StringRef kernel, ArrayRef<int64_t> desc,
                      ArrayRef<Value> pointers) {
    for (auto [j, p] : llvm::enumerate(pointers)) {
      Value addr = LLVM::GEPOp::create(b, loc, ptr, ptr, bufs,
                                       ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(j)});
      LLVM::StoreOp::create(b, loc, p, addr);
    }
    Value descAddr = LLVM::AddressOfOp::create(b, loc, descGlobal(loc, desc));
    LLVM::CallOp::create(b, loc, kernelDecl(kernel), ValueRange{ctxArg, descAddr, bufs});
    ++numCalls;
  };

  for (const KernelCall &c : calls) {
    SmallVector<Value> pointers;
    for (const BufArg &arg : c.bufs)
      pointers.push_back(pointerTo(arg.value));
    if (auto update = dyn_cast<SGDUpdateOp>(c.op)) {
      pointers[0] = slotPointer(1 + paramIndex.lookup(update.getParam()));
      pointers[2] = slotPointer(1 + numParams + velocityIndex.lookup(update.getParam()));
    } else if (auto assign = dyn_cast<AssignParamOp>(c.op)) {
      pointers[1] = slotPointer(1 + paramIndex.lookup(assign.getParam()));
    } else if (auto topk = dyn_cast<comm::TopKSparsifyOp>(c.op)) {
      pointers[1] = slotPointer(1 + paramIndex.lookup(topk.getResidual()));
    }
    emitCall(c.op->getLoc(), c.kernel, c.desc, pointers);
  }
  for (auto [v, slot] : resultCopies)
    emitCall(ret.getLoc(), "mgsrt_copy", {(byteSize(v) + 3) / 4}, {pointerTo(v), slotPointer(slot)});

  auto statusFn = module.lookupSymbol<LLVM::LLVMFuncOp>("mgsrt_ctx_status");
  if (!statusFn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    statusFn = LLVM::LLVMFuncOp::create(b, module.getLoc(), "mgsrt_ctx_status",
                                        LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr}));
  }
  Value status = LLVM::CallOp::create(b, ret.getLoc(), statusFn, ValueRange{ctxArg}).getResult();
  LLVM::ReturnOp::create(b, ret.getLoc(), status);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

void appendShape(std::string &out, Type type) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
  out += " " + std::to_string(shape.size());
  for (int64_t d : shape)
    out += " " + std::to_string(d);
}

struct ConvertTrainToRuntime : impl::ConvertTrainToRuntimeBase<ConvertTrainToRuntime> {
  using ConvertTrainToRuntimeBase::ConvertTrainToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!eval) {
      module.emitError() << "convert-train-to-runtime: no @eval_step (run train-build-step first)";
      return signalPassFailure();
    }
    // A density warm-up changes k at run time in the top-k, the gather and
    // the scatter-add alike: the gather must know the gradient's size.
    if (!densitySchedule.empty()) {
      WalkResult walk = module.walk([&](comm::AllGatherStartOp gather) {
        if (gather.getValues().getDefiningOp<comm::TopKSparsifyOp>())
          return WalkResult::advance();
        gather.emitOpError() << "gathers values that no comm.topk_sparsify produced directly; "
                                "a density schedule cannot size it";
        return WalkResult::interrupt();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
    }
    if (target == "cuda") {
      WalkResult walk = module.walk([&](Operation *op) {
        if (!isa<LSTMOp, LSTMGradOp, GatherOp, GatherGradOp>(op))
          return WalkResult::advance();
        // The ONNX node it was imported from, when the location names one.
        std::string node;
        op->getLoc()->walk([&](Location inner) {
          if (auto name = dyn_cast<NameLoc>(inner)) {
            node = "node '" + name.getName().str() + "': ";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
        op->emitError() << node << "'" << op->getName()
                        << "' has no CUDA kernel yet; the CPU target runs it (--target=cpu)";
        return WalkResult::interrupt();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
    }
    if (target != "cpu" && target != "cuda") {
      module.emitError() << "convert-train-to-runtime: unknown target '" << target
                         << "' (expected cpu or cuda)";
      return signalPassFailure();
    }

    llvm::StringMap<int64_t> paramIndex, velocityIndex;
    std::string manifest = "mgs-manifest 2\nmode " + std::string(train ? "train" : "inference");
    std::string params;
    for (auto param : module.getOps<ParameterOp>()) {
      StringRef name = param.getSymName();
      if (name.find_first_of(" \t\n") != StringRef::npos) {
        param.emitError() << "parameter name '" << name
                          << "' contains whitespace, which the runtime manifest cannot hold";
        return signalPassFailure();
      }
      paramIndex[name] = paramIndex.size();
      if (param.getTrainable())
        velocityIndex[name] = velocityIndex.size();
      params += "\nparam " + name.str() + (param.getTrainable() ? " trainable" : " state");
      appendShape(params, param.getType());
    }

    Globals globals;
    int64_t arena = 0, collectives = 0, compiledWorkers = 0;
    for (auto [func, isTrain, name] :
         {std::tuple{train, true, "mgs_train_step"}, std::tuple{eval, false, "mgs_eval_step"}}) {
      if (!func)
        continue;
      StepLowering lowering(module, paramIndex, velocityIndex, paramIndex.size(),
                            velocityIndex.size(), globals);
      lowering.instrument = instrument;
      if (failed(lowering.lower(func, isTrain, name)))
        return signalPassFailure();
      arena = std::max(arena, lowering.arenaBytes);
      if (isTrain) {
        collectives = lowering.numCollectives;
        compiledWorkers = lowering.compiledWorkers;
      }
      unplannedBytes = std::max<uint64_t>(unplannedBytes, lowering.unplannedBytes);
      numKernelCalls += lowering.numCalls;
      copyFreeBuckets += lowering.numCopyFreeBuckets;
      copyFreeSplits += lowering.numCopyFreeSplits;
    }
    arenaBytes = arena;

    FunctionType evalType = eval.getFunctionType();
    // The driver reads and writes float32 files for graph inputs and outputs.
    for (auto [i, type] : llvm::enumerate(evalType.getResults()))
      if (!cast<RankedTensorType>(type).getElementType().isF32()) {
        eval.emitError() << "graph output " << i << " has element type "
                         << cast<RankedTensorType>(type).getElementType()
                         << "; compiled models can only output float32 tensors";
        return signalPassFailure();
      }
    int64_t batch = evalType.getNumInputs()
                        ? cast<RankedTensorType>(evalType.getInput(0)).getDimSize(0)
                        : 1;
    manifest += "\nbatch_size " + std::to_string(batch);
    manifest += "\narena_bytes " + std::to_string(arena);
    manifest += params;
    auto ioName = [&](func::FuncOp f, bool arg, unsigned i) -> std::string {
      auto attr = arg ? f.getArgAttrOfType<StringAttr>(i, "train.name")
                      : f.getResultAttrOfType<StringAttr>(i, "train.name");
      return attr ? attr.getValue().str() : (arg ? "input" : "output") + std::to_string(i);
    };
    for (unsigned i = 0; i < evalType.getNumInputs(); ++i) {
      // An integer input holds indices (token ids, int64).
      bool indices = cast<ShapedType>(evalType.getInput(i)).getElementType().isInteger(64);
      manifest += (indices ? "\nindex_input " : "\ninput ") + ioName(eval, true, i);
      appendShape(manifest, evalType.getInput(i));
    }
    for (unsigned i = 0; i < evalType.getNumResults(); ++i) {
      manifest += "\noutput " + ioName(eval, false, i);
      appendShape(manifest, evalType.getResult(i));
    }
    if (train) {
      FunctionType t = train.getFunctionType();
      manifest += "\nlabels";
      appendShape(manifest, t.getInput(t.getNumInputs() - 1));
      manifest += "\nclasses " +
                  std::to_string(cast<RankedTensorType>(t.getResult(1)).getDimSize(1));
    }
    if (collectives > 0)
      manifest += "\ncollectives " + std::to_string(collectives);
    if (compiledWorkers > 0)
      manifest += "\nworkers " + std::to_string(compiledWorkers);
    if (target == "cuda")
      manifest += "\ntarget cuda";
    if (!densitySchedule.empty() && train) {
      manifest += "\ndensity_schedule";
      for (double d : densitySchedule) {
        char text[32];
        std::snprintf(text, sizeof text, " %.17g", d);
        manifest += text;
      }
    }
    if (instrument && train) {
      manifest += "\ninstrumented 1";
      // Which parameter each gradient mark stands for.
      for (auto g : train.getOps<GradientOp>())
        manifest += "\nmark " + std::to_string(g.getBackpropIndex()) + " " + g.getParam().str();
    }
    if (auto source = module->getAttrOfType<StringAttr>(kWeightsFileAttrName))
      if (!source.getValue().contains('\n'))
        manifest += "\nsource " + source.getValue().str();
    manifest += "\n";
    emitManifest(module, manifest);
    if (!train)
      emitNoTrainStep(module);

    // Only the LLVM dialect remains.
    for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (isa<func::FuncOp, ParameterOp>(op))
        op.erase();
    module->removeAttr(kWeightsFileAttrName);
  }

  /// An inference-only model still defines mgs_train_step (the driver links
  /// against it): it fails with a message saying why.
  void emitNoTrainStep(ModuleOp module) {
    OpBuilder b(module.getContext());
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    std::string message = "this model was compiled with --inference: it has no training step";
    message.push_back('\0');
    b.setInsertionPointToStart(module.getBody());
    auto text = LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), message.size()),
                                       /*isConstant=*/true, LLVM::Linkage::Internal,
                                       "__mgs_no_train_step", b.getStringAttr(message));
    auto failFn = LLVM::LLVMFuncOp::create(
        b, loc, "mgsrt_ctx_fail",
        LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, b.getI32Type(), ptr}));
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(b, loc, "mgs_train_step",
                                       LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, ptr}));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value code = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                          b.getI32IntegerAttr(1 /*MGSRT_ERROR_INVALID_ARGUMENT*/));
    Value addr = LLVM::AddressOfOp::create(b, loc, text);
    Value status =
        LLVM::CallOp::create(b, loc, failFn, ValueRange{entry->getArgument(0), code, addr})
            .getResult();
    LLVM::ReturnOp::create(b, loc, status);
  }

  void emitManifest(ModuleOp module, StringRef text) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    std::string data = text.str();
    data.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
    auto global = LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                         LLVM::Linkage::Internal, "__mgs_manifest",
                                         b.getStringAttr(data));
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(b, module.getLoc(), "mgs_model_manifest",
                                       LLVM::LLVMFunctionType::get(ptr, {}));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value addr = LLVM::AddressOfOp::create(b, module.getLoc(), global);
    LLVM::ReturnOp::create(b, module.getLoc(), addr);
  }
};

} // namespace
} // namespace mgs
