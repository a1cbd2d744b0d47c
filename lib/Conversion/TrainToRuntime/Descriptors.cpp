//===- Descriptors.cpp - Kernel descriptors by field name -----------------===//
//
// Descriptors.h. Each builder fills the fields mgsrt/contract.h names, in the
// layouts the runtime reads (runtime/lib/Descriptors).
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"

#include "KernelCalls.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "llvm/ADT/StringSwitch.h"

#include <cstring>

namespace mgs::lowering {

using namespace mlir;
using namespace mgs::train;
using namespace mgs::contract;

namespace {

/// Writes `values` into `d` from index `at` (an array of a descriptor).
void put(SmallVectorImpl<int64_t> &d, int64_t at, ArrayRef<int64_t> values) {
  llvm::copy(values, d.begin() + at);
}

} // namespace

int64_t bitsOf(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}
int64_t bitsOf(FloatAttr f) { return bitsOf(f.getValueAsDouble()); }

SmallVector<int64_t> unaryDesc(int64_t op, int64_t count, double alpha, double beta) {
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
      .Case("greater", MGSRT_BINARY_GREATER)
      .Case("greater_equal", MGSRT_BINARY_GREATER_EQUAL)
      .Case("equal", MGSRT_BINARY_EQUAL)
      .Case("keep_where", MGSRT_BINARY_KEEP_WHERE)
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
      .Case("abs", MGSRT_UNARY_ABS)
      .Case("log", MGSRT_UNARY_LOG)
      .Case("softsign", MGSRT_UNARY_SOFTSIGN)
      .Case("mish", MGSRT_UNARY_MISH)
      .Case("elu", MGSRT_UNARY_ELU)
      .Case("celu", MGSRT_UNARY_CELU)
      .Case("selu", MGSRT_UNARY_SELU)
      .Case("round", MGSRT_UNARY_ROUND)
      .Case("floor", MGSRT_UNARY_FLOOR)
      .Case("ceil", MGSRT_UNARY_CEIL)
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

SmallVector<int64_t> randomNormalDesc(Value result, FloatAttr mean, FloatAttr scale) {
  using D = RandomNormalDesc;
  return fields<D>(
      {{D::Count, numel(result)}, {D::MeanBits, bitsOf(mean)}, {D::ScaleBits, bitsOf(scale)}});
}

SmallVector<int64_t> randomUniformDesc(Value result, FloatAttr low, FloatAttr high) {
  using D = RandomUniformDesc;
  return fields<D>(
      {{D::Count, numel(result)}, {D::LowBits, bitsOf(low)}, {D::HighBits, bitsOf(high)}});
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

/// How an allgather's values travel (MGSRT_VALUES_*).
int64_t wireValues(comm::AllGatherStartOp gather) {
  if (gather.getHalfValues())
    return MGSRT_VALUES_F16;
  return gather.getBf16Values() ? MGSRT_VALUES_BF16 : MGSRT_VALUES_F32;
}

SmallVector<int64_t> countDesc(int64_t count) {
  return fields<CountDesc>({{CountDesc::Count, count}});
}

} // namespace mgs::lowering
