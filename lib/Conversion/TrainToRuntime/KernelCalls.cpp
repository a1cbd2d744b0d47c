//===- KernelCalls.cpp - train/comm ops as runtime kernel calls -----------===//
//
// Each op becomes a call of a runtime entry point with a descriptor built
// field by field through the names of mgsrt/contract.h, the layouts the
// runtime reads (runtime/lib/Descriptors).
//
//===----------------------------------------------------------------------===//

#include "KernelCalls.h"

#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>
#include <initializer_list>
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

namespace {

//===----------------------------------------------------------------------===//
// Descriptors, by field name
//===----------------------------------------------------------------------===//

int64_t bitsOf(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}
int64_t bitsOf(FloatAttr f) { return bitsOf(f.getValueAsDouble()); }

/// A fixed-layout descriptor D: D::Size entries, each given by its field.
template <typename D>
SmallVector<int64_t> fields(std::initializer_list<std::pair<int64_t, int64_t>> values) {
  SmallVector<int64_t> d(D::Size, 0);
  for (auto [field, value] : values)
    d[field] = value;
  return d;
}

/// Writes `values` into `d` from index `at` (an array of a descriptor).
void put(SmallVectorImpl<int64_t> &d, int64_t at, ArrayRef<int64_t> values) {
  llvm::copy(values, d.begin() + at);
}

SmallVector<int64_t> unaryDesc(int64_t op, int64_t count, double alpha, double beta = 0) {
  return fields<UnaryDesc>({{UnaryDesc::Op, op},
                            {UnaryDesc::Count, count},
                            {UnaryDesc::AlphaBits, bitsOf(alpha)},
                            {UnaryDesc::BetaBits, bitsOf(beta)}});
}

SmallVector<int64_t> convDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> w, ArrayRef<int64_t> y,
                              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                              ArrayRef<int64_t> dilations, int64_t group) {
  using D = ConvDesc;
  int64_t s = x.size() - 2;
  SmallVector<int64_t> d(D::size(s), 0);
  d[D::SpatialRank] = s;
  d[D::Batch] = x[0];
  d[D::Channels] = x[1];
  d[D::Filters] = w[0];
  d[D::Group] = group;
  put(d, D::at(D::In, s), x.drop_front(2));
  put(d, D::at(D::Kernel, s), w.drop_front(2));
  put(d, D::at(D::Out, s), y.drop_front(2));
  put(d, D::at(D::Strides, s), strides);
  put(d, D::at(D::PadsBegin, s), pads.take_front(s)); // ONNX: begins, then ends
  put(d, D::at(D::PadsEnd, s), pads.drop_front(s));
  put(d, D::at(D::Dilations, s), dilations);
  return d;
}

SmallVector<int64_t> poolDesc(int64_t kind, ArrayRef<int64_t> x, ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> y, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                              bool countIncludePad, int64_t storageOrder) {
  using D = PoolDesc;
  int64_t s = x.size() - 2;
  SmallVector<int64_t> d(D::size(s), 0);
  d[D::Kind] = kind;
  d[D::SpatialRank] = s;
  d[D::Batch] = x[0];
  d[D::Channels] = x[1];
  put(d, D::at(D::In, s), x.drop_front(2));
  put(d, D::at(D::Kernel, s), kernel);
  put(d, D::at(D::Out, s), y.drop_front(2));
  put(d, D::at(D::Strides, s), strides);
  put(d, D::at(D::PadsBegin, s), pads.take_front(s));
  put(d, D::at(D::PadsEnd, s), pads.drop_front(s));
  put(d, D::at(D::Dilations, s), dilations);
  d[D::at(D::CountIncludePad, s)] = countIncludePad;
  d[D::at(D::StorageOrder, s)] = storageOrder;
  return d;
}

/// Operand shapes left-padded with 1s to the output's rank.
SmallVector<int64_t> binaryDesc(int64_t op, ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                ArrayRef<int64_t> out) {
  using D = BinaryDesc;
  int64_t r = out.size();
  SmallVector<int64_t> d(D::size(r), 1);
  d[D::Op] = op;
  d[D::Rank] = r;
  put(d, D::at(D::Out, r), out);
  put(d, D::at(D::Lhs, r) + (r - lhs.size()), lhs);
  put(d, D::at(D::Rhs, r) + (r - rhs.size()), rhs);
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
      .Case("sqrt", MGSRT_UNARY_SQRT)
      .Case("erf", MGSRT_UNARY_ERF)
      .Case("exp", MGSRT_UNARY_EXP)
      .Case("cos", MGSRT_UNARY_COS)
      .Case("sin", MGSRT_UNARY_SIN)
      .Case("pow", MGSRT_UNARY_POW)
      .Case("hard_sigmoid", MGSRT_UNARY_HARD_SIGMOID)
      .Case("hard_swish", MGSRT_UNARY_HARD_SWISH)
      .Default(MGSRT_UNARY_TANH);
}

SmallVector<int64_t> gemmDesc(ArrayRef<int64_t> a, ArrayRef<int64_t> b, bool transA, bool transB,
                              FloatAttr alpha, FloatAttr beta, Value c) {
  using D = GemmDesc;
  int64_t m = transA ? a[1] : a[0], k = transA ? a[0] : a[1], n = transB ? b[0] : b[1];
  SmallVector<int64_t> d =
      fields<D>({{D::M, m}, {D::N, n}, {D::K, k}, {D::TransA, transA}, {D::TransB, transB},
                 {D::AlphaBits, bitsOf(alpha)}, {D::BetaBits, bitsOf(beta)}});
  if (c) { // C's shape left-padded to 2-D; no C: (0, 0)
    ArrayRef<int64_t> cs = shapeOf(c);
    d[D::C0] = cs.size() == 2 ? cs[0] : 1;
    d[D::C1] = cs.empty() ? 1 : cs.back();
  }
  return d;
}

/// Batched matmul, with numpy's 1-D promotion resolved and the batch shapes
/// left-padded with 1s to the broadcast batch rank; a transposed operand
/// (rank >= 2) is stored with its last two dimensions swapped.
SmallVector<int64_t> matmulDesc(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs, bool transLhs,
                                bool transRhs) {
  using D = MatMulDesc;
  SmallVector<int64_t> l(lhs), r(rhs);
  if (l.size() == 1)
    l.insert(l.begin(), 1);
  if (r.size() == 1)
    r.push_back(1);
  if (transLhs)
    std::swap(l[l.size() - 2], l.back());
  if (transRhs)
    std::swap(r[r.size() - 2], r.back());
  ArrayRef<int64_t> lb = ArrayRef<int64_t>(l).drop_back(2), rb = ArrayRef<int64_t>(r).drop_back(2);
  SmallVector<int64_t> ob = *broadcastShapes(lb, rb);
  int64_t batch = ob.size();
  SmallVector<int64_t> d(D::size(batch), 1);
  d[D::BatchRank] = batch;
  put(d, D::at(D::OutBatch, batch), ob);
  put(d, D::at(D::LhsBatch, batch) + (batch - lb.size()), lb);
  put(d, D::at(D::RhsBatch, batch) + (batch - rb.size()), rb);
  d[D::at(D::M, batch)] = l[l.size() - 2];
  d[D::at(D::K, batch)] = l.back();
  d[D::at(D::N, batch)] = r.back();
  d[D::at(D::TransLhs, batch)] = transLhs;
  d[D::at(D::TransRhs, batch)] = transRhs;
  return d;
}

SmallVector<int64_t> batchNormDesc(ArrayRef<int64_t> x, bool training, int64_t epsilonBits,
                                   int64_t momentumBits, bool unbiasedRunningVar, bool relu) {
  using D = BatchNormDesc;
  return fields<D>({{D::Batch, x[0]},
                    {D::Channels, x[1]},
                    {D::Spatial, numElements(x.drop_front(2))},
                    {D::Training, training},
                    {D::EpsilonBits, epsilonBits},
                    {D::MomentumBits, momentumBits},
                    {D::UnbiasedRunningVar, unbiasedRunningVar},
                    {D::Relu, relu}});
}

/// A gather from `table` (rows x the rest) at `indices`.
SmallVector<int64_t> gatherDesc(ArrayRef<int64_t> table, Value indices) {
  using D = GatherDesc;
  return fields<D>({{D::Rows, table[0]},
                    {D::RowSize, numElements(table.drop_front())},
                    {D::Count, numel(indices)}});
}

/// x: steps x batch x input; r: directions x 4H x H.
SmallVector<int64_t> lstmDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> r) {
  using D = LstmDesc;
  return fields<D>(
      {{D::Steps, x[0]}, {D::Batch, x[1]}, {D::InputSize, x[2]}, {D::HiddenSize, r[2]}});
}

/// A layer norm of x over its dimensions from `axis` on: rows x cols.
SmallVector<int64_t> layerNormDesc(ArrayRef<int64_t> x, int64_t axis, int64_t epsilonBits) {
  using D = LayerNormDesc;
  return fields<D>({{D::Rows, numElements(x.take_front(axis))},
                    {D::Cols, train::numElements(x.drop_front(axis))},
                    {D::EpsilonBits, epsilonBits}});
}

/// A GELU of `count` elements, exact ("none") or the tanh approximation.
SmallVector<int64_t> geluDesc(int64_t count, StringRef approximate) {
  using D = GeluDesc;
  return fields<D>({{D::Count, count},
                    {D::Approximate, approximate == "tanh" ? MGSRT_GELU_TANH : MGSRT_GELU_NONE}});
}

/// A cumulative sum of `in` along `axis`: outer x len x inner.
SmallVector<int64_t> cumSumDesc(ArrayRef<int64_t> in, int64_t axis, bool exclusive, bool reverse) {
  using D = CumSumDesc;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
    (i < axis ? outer : inner) *= i == axis ? 1 : in[i];
  return fields<D>({{D::Outer, outer},
                    {D::Len, in[axis]},
                    {D::Inner, inner},
                    {D::Exclusive, exclusive},
                    {D::Reverse, reverse}});
}

/// The positions of each of `rows` rows' k greatest or least of `len` entries.
SmallVector<int64_t> topKPositionsDesc(int64_t rows, int64_t len, int64_t k, bool largest) {
  using D = TopKPositionsDesc;
  return fields<D>({{D::Rows, rows}, {D::Len, len}, {D::K, k}, {D::Largest, largest}});
}

/// x: steps x batch x input; r: 1 x 3H x H.
SmallVector<int64_t> gruDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> r, bool linearBeforeReset) {
  using D = GruDesc;
  return fields<D>({{D::Steps, x[0]},
                    {D::Batch, x[1]},
                    {D::InputSize, x[2]},
                    {D::HiddenSize, r[2]},
                    {D::LinearBeforeReset, linearBeforeReset}});
}

/// Dropout of `data`'s elements with `mask` (one entry per block of
/// numel(data) / numel(mask) elements: the verifier's leading-dimensions rule).
SmallVector<int64_t> dropoutDesc(Value data, Value mask, FloatAttr ratio, bool training) {
  using D = DropoutDesc;
  const int64_t count = numel(data), masks = numel(mask);
  return fields<D>({{D::Count, count},
                    {D::RatioBits, bitsOf(ratio)},
                    {D::Training, training},
                    {D::Inner, masks > 0 ? count / masks : 1}});
}

/// A softmax over `axis`: outer x axis x inner.
SmallVector<int64_t> softmaxDesc(ArrayRef<int64_t> shape, int64_t axis, bool log) {
  using D = SoftmaxDesc;
  return fields<D>({{D::Outer, numElements(shape.take_front(axis))},
                    {D::Axis, shape[axis]},
                    {D::Inner, numElements(shape.drop_front(axis + 1))},
                    {D::Log, log}});
}

SmallVector<int64_t> transposeDesc(ArrayRef<int64_t> in, ArrayRef<int64_t> perm) {
  using D = TransposeDesc;
  int64_t r = in.size();
  SmallVector<int64_t> d(D::size(r), 0);
  d[D::Rank] = r;
  put(d, D::at(D::In, r), in);
  put(d, D::at(D::Perm, r), perm);
  return d;
}

/// A concat/split of `whole` along `axis` into `parts`.
SmallVector<int64_t> concatDesc(ArrayRef<int64_t> whole, int64_t axis, ValueRange parts) {
  using D = ConcatDesc;
  SmallVector<int64_t> d(D::size(parts.size()), 0);
  d[D::Outer] = numElements(whole.take_front(axis));
  d[D::Inner] = numElements(whole.drop_front(axis + 1));
  d[D::Parts] = parts.size();
  for (auto [i, p] : llvm::enumerate(parts))
    d[D::extentAt(i)] = shapeOf(p)[axis];
  return d;
}

/// A sum over `axes` of `in`, times 1 (sum) or 1 / the reduced count (mean).
SmallVector<int64_t> reduceDesc(StringRef kind, ArrayRef<int64_t> in, ArrayRef<int64_t> axes) {
  using D = ReduceDesc;
  int64_t r = in.size();
  SmallVector<int64_t> d(D::size(r), 0);
  SmallVector<int64_t> out(in);
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= in[a];
    out[a] = 1;
  }
  d[D::Rank] = r;
  d[D::ScaleBits] = bitsOf(kind == "mean" && count > 0 ? 1.0 / static_cast<double>(count) : 1.0);
  put(d, D::at(D::In, r), in);
  put(d, D::at(D::Out, r), out);
  return d;
}

SmallVector<int64_t> padDesc(ArrayRef<int64_t> in, ArrayRef<int64_t> pads, FloatAttr value) {
  using D = PadDesc;
  int64_t r = in.size();
  SmallVector<int64_t> d(D::size(r), 0);
  d[D::Rank] = r;
  put(d, D::inAt(r), in);
  put(d, D::padsAt(r), pads);
  d[D::valueBitsAt(r)] = bitsOf(value);
  return d;
}

} // namespace

/// How an allgather's values travel (MGSRT_VALUES_*).
int64_t wireValues(comm::AllGatherStartOp gather) {
  if (gather.getHalfValues())
    return MGSRT_VALUES_F16;
  return gather.getBf16Values() ? MGSRT_VALUES_BF16 : MGSRT_VALUES_F32;
}

SmallVector<int64_t> countDesc(int64_t count) {
  return fields<CountDesc>({{CountDesc::Count, count}});
}

namespace {

FailureOr<std::optional<KernelCall>> describeOp(Operation *op,
                                                DenseMap<Operation *, int64_t> &slots) {
  using Result = FailureOr<std::optional<KernelCall>>;
  auto call = [&](Kernel kernel, SmallVector<int64_t> desc, SmallVector<BufArg> bufs) -> Result {
    return std::optional<KernelCall>(KernelCall{op, kernel, std::move(desc), std::move(bufs)});
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
        return call(Kernel::copy, countDesc(byteSize(g.getResult()) / 4), {{g.getGrad()}, {g.getResult()}});
      })
      .Case<ReluOp, LeakyReluOp, SigmoidOp, TanhOp, SqrtOp, ErfOp, PowOp, HardSigmoidOp,
            HardSwishOp, ExpOp, CosOp, SinOp>([&](Operation *) {
        int64_t code = unaryCode(elementwiseKind(op));
        double alpha = 0, beta = 0;
        if (auto leaky = dyn_cast<LeakyReluOp>(op))
          alpha = leaky.getAlpha().convertToDouble();
        if (auto pow = dyn_cast<PowOp>(op))
          alpha = pow.getExponent().convertToDouble();
        if (auto hard = dyn_cast<HardSigmoidOp>(op)) {
          alpha = hard.getAlpha().convertToDouble();
          beta = hard.getBeta().convertToDouble();
        }
        if (isa<HardSwishOp>(op)) { // ONNX's constants, as float32
          alpha = 1.0f / 6.0f;
          beta = 0.5f;
        }
        return call(Kernel::unary_fwd, unaryDesc(code, numel(op->getResult(0)), alpha, beta),
                    {{op->getOperand(0)}, {op->getResult(0)}});
      })
      .Case([&](ClipOp c) {
        return call(Kernel::clip_fwd, countDesc(numel(c.getResult())),
                    {{c.getInput()}, {c.getMin()}, {c.getMax()}, {c.getResult()}});
      })
      .Case<AddOp, SubOp, MulOp, DivOp>([&](Operation *) {
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
                    {{l.getInput()}, {l.getW()}, {l.getR()}, {l.getB()}, {l.getY()},
                     {l.getYH(), true}, {l.getYC(), true}, {l.getSaved()}});
      })
      .Case([&](DropoutOp d) {
        return call(Kernel::dropout_fwd,
                    dropoutDesc(d.getResult(), d.getMask(), d.getRatioAttr(), d.getTraining()),
                    {{d.getInput()}, {d.getResult()}, {d.getMask(), true}});
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
        return call(Kernel::softmax_cross_entropy,
                    fields<SoftmaxCrossEntropyDesc>(
                        {{SoftmaxCrossEntropyDesc::Batch, s[0]},
                         {SoftmaxCrossEntropyDesc::Classes, s[1]},
                         {SoftmaxCrossEntropyDesc::IgnoreIndex,
                          static_cast<int64_t>(l.getIgnoreIndex())},
                         {SoftmaxCrossEntropyDesc::LabelSmoothingBits,
                          bitsOf(l.getLabelSmoothingAttr())},
                         {SoftmaxCrossEntropyDesc::Sum, l.getSum() ? 1 : 0}}),
                    {{l.getLogits()}, {l.getLabels()}, {l.getLoss()}, {l.getDlogits(), true},
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
                    {{g.getInput()}, {g.getW()}, {g.getR()}, {g.getY()}, {g.getSaved()},
                     {g.getYGrad()}, {g.getYHGrad()}, {g.getYCGrad()}, {g.getInputGrad(), true},
                     {g.getWGrad()}, {g.getRGrad()}, {g.getBGrad()}});
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
      .Case([&](AssignParamOp a) {
        return call(Kernel::copy, countDesc(byteSize(a.getValue()) / 4),
                    {{a.getValue()}, {Value()}});
      })
      .Case([&](GRUOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call(Kernel::gru_fwd, gruDesc(x, shapeOf(g.getR()), g.getLinearBeforeReset()),
                    {{g.getInput()}, {g.getW()}, {g.getR()}, {g.getB()}, {g.getY()},
                     {g.getYH(), true}, {g.getSaved()}});
      })
      .Case([&](GRUGradOp g) {
        ArrayRef<int64_t> x = shapeOf(g.getInput());
        return call(Kernel::gru_bwd, gruDesc(x, shapeOf(g.getR()), g.getLinearBeforeReset()),
                    {{g.getInput()}, {g.getW()}, {g.getR()}, {g.getY()}, {g.getSaved()},
                     {g.getYGrad()}, {g.getYHGrad()}, {g.getInputGrad(), true}, {g.getWGrad()},
                     {g.getRGrad()}, {g.getBGrad()}});
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
