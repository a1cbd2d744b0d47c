//===- Autodiff.cpp - Reverse-mode differentiation of train ops -----------===//
//
// Walks the forward ops in reverse, keeps one accumulated gradient (adjoint)
// per value, and emits each op's gradient ops. Only values that depend on a
// trainable parameter get gradients. A parameter's gradient is complete when
// the walk reaches its train.get_param (every use of the value comes after
// it in program order), which fixes the backprop order.
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/Transforms/Autodiff.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace mgs::train {
namespace {

class Differentiator {
public:
  Differentiator(OpBuilder &b, ModuleOp module) : b(b), symbols(module) {}

  FailureOr<AutodiffResult> run(ArrayRef<Operation *> ops, Value seed, Value seedGrad);

private:
  bool needsGrad(Value v) const { return requiresGrad.contains(v); }
  Value gradOf(Value v) const { return adjoints.lookup(v); }
  /// Adds `g` to the gradient of `v` (if `v` needs one).
  void accumulate(Value v, Value g);
  template <typename OpTy, typename... Args>
  OpTy create(Location loc, Args &&...args) {
    ++result.numBackwardOps;
    return OpTy::create(b, loc, std::forward<Args>(args)...);
  }
  LogicalResult differentiate(Operation *op);
  /// A constant zero tensor of `type` (the gradient of an unused result),
  /// one per type: backward ops are emitted in order, so the first dominates.
  Value zerosLike(Location loc, Type type) {
    Value &zeros = zeroConstants[type];
    if (!zeros) {
      ++result.numBackwardOps;
      auto tensor = cast<RankedTensorType>(type);
      zeros = arith::ConstantOp::create(
          b, loc, tensor,
          DenseElementsAttr::get(tensor, b.getFloatAttr(tensor.getElementType(), 0.0)));
    }
    return zeros;
  }
  llvm::DenseMap<Type, Value> zeroConstants;
  /// `lhs + rhs` as one concatenation when both are concatenations along one
  /// axis whose non-zero pieces (zerosLike's are zero) line up, each either
  /// matched by zeros or by a piece of the same extent (the gradients of
  /// several splits of one tensor, such as PyTorch's LSTM gate reordering
  /// makes: every piece of the weight once, the rest zeros); null otherwise.
  Value addConcats(Location loc, Value lhs, Value rhs);
  /// Erases the concatenations addConcats replaced, and zero constants, that
  /// nothing uses once the backward pass is built.
  void eraseReplaced();
  SmallVector<Operation *> replaced;
  LogicalResult finishParameter(GetParamOp op);

  OpBuilder &b;
  SymbolTable symbols;
  llvm::DenseSet<Value> requiresGrad;
  llvm::DenseMap<Value, Value> adjoints;
  AutodiffResult result;
};

void Differentiator::accumulate(Value v, Value g) {
  if (!needsGrad(v) || !g)
    return;
  Value &slot = adjoints[v];
  if (!slot) {
    slot = g;
    return;
  }
  if (Value merged = addConcats(g.getLoc(), slot, g)) {
    slot = merged;
    return;
  }
  ++result.numBackwardOps;
  slot = AddOp::create(b, g.getLoc(), v.getType(), slot, g);
}

Value Differentiator::addConcats(Location loc, Value lhs, Value rhs) {
  auto ca = lhs.getDefiningOp<ConcatOp>(), cb = rhs.getDefiningOp<ConcatOp>();
  if (!ca || !cb || lhs.getType() != rhs.getType())
    return {};
  auto type = cast<RankedTensorType>(lhs.getType());
  const int64_t axis = normalizedAxis(ca.getAxis(), type.getRank());
  if (normalizedAxis(cb.getAxis(), type.getRank()) != axis)
    return {};
  // Each side's pieces: [begin, end) along the axis, the value (null: zeros).
  struct Piece {
    int64_t begin, end;
    Value value;
  };
  auto piecesOf = [&](ConcatOp cat) {
    SmallVector<Piece> pieces;
    int64_t offset = 0;
    for (Value in : cat.getInputs()) {
      int64_t size = cast<RankedTensorType>(in.getType()).getDimSize(axis);
      bool zero = zeroConstants.lookup(in.getType()) == in;
      pieces.push_back({offset, offset + size, zero ? Value() : in});
      offset += size;
    }
    return pieces;
  };
  SmallVector<Piece> pa = piecesOf(ca), pb = piecesOf(cb);
  SmallVector<int64_t> cuts;
  for (const Piece &p : llvm::concat<Piece>(pa, pb))
    cuts.push_back(p.end);
  llvm::sort(cuts);
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // The sum's pieces between consecutive cuts; a non-zero piece split by a cut fails.
  SmallVector<Piece> sum;
  SmallVector<std::pair<Value, Value>> operands;
  int64_t begin = 0;
  for (int64_t end : cuts) {
    auto covering = [&](ArrayRef<Piece> pieces) -> std::optional<Value> {
      for (const Piece &p : pieces)
        if (p.begin <= begin && end <= p.end) {
          if (p.value && (p.begin != begin || p.end != end))
            return std::nullopt;
          return p.value;
        }
      return std::nullopt;
    };
    std::optional<Value> x = covering(pa), y = covering(pb);
    if (!x || !y)
      return {};
    if (!*x && !*y && !sum.empty() && !sum.back().value) {
      sum.back().end = end; // zeros next to zeros: one piece
    } else {
      sum.push_back({begin, end, *x ? *x : *y});
      operands.push_back({*x, *y});
    }
    begin = end;
  }
  SmallVector<Value> inputs;
  for (auto [piece, xy] : llvm::zip(sum, operands)) {
    auto [x, y] = xy;
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = piece.end - piece.begin;
    auto pieceType = RankedTensorType::get(shape, type.getElementType());
    if (x && y)
      inputs.push_back(create<AddOp>(loc, pieceType, x, y));
    else
      inputs.push_back(x ? x : y ? y : zerosLike(loc, pieceType));
  }
  replaced.push_back(ca);
  replaced.push_back(cb);
  if (inputs.size() == 1)
    return inputs.front();
  return create<ConcatOp>(loc, type, inputs, b.getI64IntegerAttr(axis));
}

void Differentiator::eraseReplaced() {
  for (Operation *op : llvm::reverse(replaced))
    if (op->use_empty()) {
      op->erase();
      --result.numBackwardOps;
    }
  for (auto &[type, zeros] : zeroConstants)
    if (zeros.use_empty()) {
      zeros.getDefiningOp()->erase();
      --result.numBackwardOps;
    }
}

LogicalResult Differentiator::finishParameter(GetParamOp op) {
  Value grad = gradOf(op.getResult());
  if (!grad)
    return success();
  auto param = symbols.lookup<ParameterOp>(op.getName());
  if (!param || !param.getTrainable())
    return success();
  Location loc = op.getLoc();
  auto tagged = GradientOp::create(b, loc, op.getNameAttr(), grad,
                                   b.getI64IntegerAttr(result.numGradients++));
  SGDUpdateOp::create(b, loc, op.getNameAttr(), tagged);
  return success();
}

LogicalResult Differentiator::differentiate(Operation *op) {
  Location loc = op->getLoc();
  if (std::optional<UnaryParams> un = unaryParams(op)) {
    Value x = op->getOperand(0), y = op->getResult(0);
    auto dx = create<UnaryGradOp>(loc, x.getType(), b.getStringAttr(un->kind), x, y, gradOf(y),
                                  b.getF32FloatAttr(un->alpha), b.getF32FloatAttr(un->beta));
    accumulate(x, dx);
    return success();
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, KeepWhereOp>([&](auto bin) {
        // An operand of an add (or a sub's lhs) that has the result's shape
        // takes the result's gradient as it is: no op for an add without
        // broadcasting (residual blocks); for a bias add, the op computes
        // only the bias's gradient (its unused result is never written).
        auto passesThrough = [&](Value operand, bool lhs) {
          return (isa<AddOp>(op) || (isa<SubOp>(op) && lhs)) &&
                 operand.getType() == bin.getResult().getType();
        };
        const bool lhsPass = passesThrough(bin.getLhs(), true);
        const bool rhsPass = passesThrough(bin.getRhs(), false);
        Value g = gradOf(bin.getResult());
        if (lhsPass)
          accumulate(bin.getLhs(), g);
        if (rhsPass)
          accumulate(bin.getRhs(), g);
        if ((lhsPass || !needsGrad(bin.getLhs())) && (rhsPass || !needsGrad(bin.getRhs())))
          return success();
        StringRef kind = elementwiseKind(op);
        auto grads = create<BinaryGradOp>(loc, bin.getLhs().getType(), bin.getRhs().getType(),
                                          b.getStringAttr(kind), bin.getLhs(), bin.getRhs(), g);
        if (!lhsPass)
          accumulate(bin.getLhs(), grads.getLhsGrad());
        if (!rhsPass)
          accumulate(bin.getRhs(), grads.getRhsGrad());
        return success();
      })
      .Case([&](GeluOp gelu) {
        // Recomputed from x: the forward keeps nothing else for it.
        auto dx = create<GeluGradOp>(loc, gelu.getInput().getType(), gelu.getInput(),
                                     gradOf(gelu.getResult()), gelu.getApproximateAttr());
        accumulate(gelu.getInput(), dx);
        return success();
      })
      .Case([&](ClipOp clip) {
        auto dx = create<ClipGradOp>(loc, clip.getInput().getType(), clip.getInput(),
                                     clip.getMin(), clip.getMax(), gradOf(clip.getResult()));
        accumulate(clip.getInput(), dx);
        return success();
      })
      .Case([&](GemmOp gemm) {
        Type cType = gemm.getC() ? gemm.getC().getType() : Type();
        auto grads = create<GemmGradOp>(loc, gemm.getA().getType(), gemm.getB().getType(), cType,
                                        gemm.getA(), gemm.getB(), gradOf(gemm.getResult()),
                                        gemm.getAlphaAttr(), gemm.getBetaAttr(),
                                        gemm.getTransAAttr(), gemm.getTransBAttr());
        accumulate(gemm.getA(), grads.getAGrad());
        accumulate(gemm.getB(), grads.getBGrad());
        if (gemm.getC())
          accumulate(gemm.getC(), grads.getCGrad());
        return success();
      })
      .Case([&](MatMulOp mm) {
        auto grads = create<MatMulGradOp>(loc, mm.getLhs().getType(), mm.getRhs().getType(),
                                          mm.getLhs(), mm.getRhs(), gradOf(mm.getResult()),
                                          mm.getTransLhs(), mm.getTransRhs());
        accumulate(mm.getLhs(), grads.getLhsGrad());
        accumulate(mm.getRhs(), grads.getRhsGrad());
        return success();
      })
      .Case([&](ConvOp conv) {
        Value dy = gradOf(conv.getResult());
        if (needsGrad(conv.getInput())) {
          auto dx = create<ConvGradDataOp>(loc, conv.getInput().getType(), dy, conv.getWeight(),
                                           conv.getStridesAttr(), conv.getPadsAttr(),
                                           conv.getDilationsAttr(), conv.getGroupAttr());
          accumulate(conv.getInput(), dx);
        }
        bool biasGrad = conv.getBias() && needsGrad(conv.getBias());
        if (needsGrad(conv.getWeight()) || biasGrad) {
          Type biasType = conv.getBias() ? conv.getBias().getType() : Type();
          auto grads = create<ConvGradWeightsOp>(
              loc, conv.getWeight().getType(), biasType, conv.getInput(), dy,
              conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
              conv.getGroupAttr());
          accumulate(conv.getWeight(), grads.getWeightGrad());
          if (conv.getBias())
            accumulate(conv.getBias(), grads.getBiasGrad());
        }
        return success();
      })
      .Case([&](ConvGradDataOp t) {
        // In the forward graph a transposed convolution (ONNX ConvTranspose):
        // the adjoint of a conv from the result's shape to the operand's. The
        // gradient of its operand is that conv of dr; of its weight, the
        // conv's weight gradient with input dr and output gradient the operand.
        Value dr = gradOf(t.getResult());
        if (needsGrad(t.getGrad())) {
          auto dg = create<ConvOp>(loc, t.getGrad().getType(), dr, t.getWeight(), Value(),
                                   t.getStridesAttr(), t.getPadsAttr(), t.getDilationsAttr(),
                                   t.getGroupAttr());
          accumulate(t.getGrad(), dg);
        }
        if (needsGrad(t.getWeight())) {
          auto grads = create<ConvGradWeightsOp>(loc, t.getWeight().getType(), Type(), dr,
                                                 t.getGrad(), t.getStridesAttr(), t.getPadsAttr(),
                                                 t.getDilationsAttr(), t.getGroupAttr());
          accumulate(t.getWeight(), grads.getWeightGrad());
        }
        return success();
      })
      .Case([&](MaxPoolOp pool) -> LogicalResult {
        if (pool.getIndices() && gradOf(pool.getIndices()))
          return pool.emitOpError() << "cannot be differentiated through its indices";
        auto dx = create<PoolGradOp>(loc, pool.getInput().getType(), b.getStringAttr("max"),
                                     pool.getInput(), gradOf(pool.getResult()),
                                     pool.getKernelShapeAttr(), pool.getStridesAttr(),
                                     pool.getPadsAttr(), pool.getDilationsAttr(),
                                     b.getBoolAttr(false));
        accumulate(pool.getInput(), dx);
        return success();
      })
      .Case([&](AveragePoolOp pool) {
        auto dx = create<PoolGradOp>(loc, pool.getInput().getType(), b.getStringAttr("average"),
                                     pool.getInput(), gradOf(pool.getResult()),
                                     pool.getKernelShapeAttr(), pool.getStridesAttr(),
                                     pool.getPadsAttr(),
                                     b.getDenseI64ArrayAttr(pool.getDilationsOrOnes()),
                                     pool.getCountIncludePadAttr());
        accumulate(pool.getInput(), dx);
        return success();
      })
      .Case([&](GlobalAveragePoolOp pool) {
        PoolWindow w =
            globalPoolWindow(cast<RankedTensorType>(pool.getInput().getType()).getShape());
        auto dx = create<PoolGradOp>(loc, pool.getInput().getType(), b.getStringAttr("average"),
                                     pool.getInput(), gradOf(pool.getResult()),
                                     b.getDenseI64ArrayAttr(w.kernel),
                                     b.getDenseI64ArrayAttr(w.strides),
                                     b.getDenseI64ArrayAttr(w.pads),
                                     b.getDenseI64ArrayAttr(w.dilations), b.getBoolAttr(true));
        accumulate(pool.getInput(), dx);
        return success();
      })
      .Case([&](BatchNormOp bn) -> LogicalResult {
        if (gradOf(bn.getRunningMean()) || gradOf(bn.getRunningVar()) ||
            gradOf(bn.getSavedMean()) || gradOf(bn.getSavedInvStd()))
          return bn.emitOpError() << "cannot be differentiated through its statistics outputs";
        if (!bn.getTraining())
          return bn.emitOpError()
                 << "in inference form (fixed statistics) cannot be trained; export the "
                    "model in training mode (torch.onnx.export(..., training="
                    "TrainingMode.TRAINING); PyTorch 2.x's torch.export-based exporter "
                    "(dynamo=True) writes BatchNorm in inference form even then, and mgs "
                    "finds it trained only in the node metadata that exporter keeps by "
                    "default: compile with mgsc --train-batchnorm, or export with "
                    "dynamo=False)";
        auto grads = create<BatchNormGradOp>(
            loc, bn.getInput().getType(), bn.getScale().getType(), bn.getBias().getType(),
            bn.getInput(), bn.getScale(), bn.getSavedMean(), bn.getSavedInvStd(),
            gradOf(bn.getResult()), bn.getRelu() ? bn.getBias() : Value(), bn.getReluAttr());
        accumulate(bn.getInput(), grads.getInputGrad());
        accumulate(bn.getScale(), grads.getScaleGrad());
        accumulate(bn.getBias(), grads.getBiasGrad());
        return success();
      })
      .Case([&](DropoutOp drop) {
        Value dy = gradOf(drop.getResult());
        if (!drop.getTraining()) {
          accumulate(drop.getInput(), dy);
          return success();
        }
        auto dx = create<DropoutGradOp>(loc, drop.getInput().getType(), dy, drop.getMask(),
                                        drop.getRatioAttr());
        accumulate(drop.getInput(), dx);
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto sm) {
        auto dx = create<SoftmaxGradOp>(loc, sm.getInput().getType(), sm.getResult(),
                                        gradOf(sm.getResult()), sm.getAxisAttr(),
                                        isa<LogSoftmaxOp>(op) ? b.getUnitAttr() : UnitAttr());
        accumulate(sm.getInput(), dx);
        return success();
      })
      .Case<FlattenOp, ReshapeOp>([&](auto reshape) {
        auto dx = create<ReshapeOp>(loc, reshape.getInput().getType(), gradOf(reshape.getResult()));
        accumulate(reshape.getInput(), dx);
        return success();
      })
      .Case([&](TransposeOp tr) {
        ArrayRef<int64_t> perm = tr.getPerm();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        auto dx = create<TransposeOp>(loc, tr.getInput().getType(), gradOf(tr.getResult()),
                                      b.getDenseI64ArrayAttr(inverse));
        accumulate(tr.getInput(), dx);
        return success();
      })
      .Case([&](ConcatOp cat) {
        int64_t rank = cast<RankedTensorType>(cat.getResult().getType()).getRank();
        int64_t axis = normalizedAxis(cat.getAxis(), rank);
        auto split = create<SplitOp>(loc, cat.getInputs().getTypes(), gradOf(cat.getResult()),
                                     b.getI64IntegerAttr(axis));
        for (auto [in, g] : llvm::zip(cat.getInputs(), split.getResults()))
          accumulate(in, g);
        return success();
      })
      .Case([&](GatherOp g) {
        auto dtable = create<GatherGradOp>(loc, g.getTable().getType(), g.getIndices(),
                                           gradOf(g.getResult()));
        accumulate(g.getTable(), dtable);
        return success();
      })
      .Case([&](SoftmaxCrossEntropyOp ce) -> LogicalResult {
        // A cross-entropy inside the graph's loss: its logits' gradient is
        // its own (dlogits, computed with the loss) times its loss's.
        if (!ce.getInGraph())
          return ce.emitOpError() << "is the step's loss; only a cross-entropy inside a loss "
                                     "the graph computes (in_graph) is differentiated";
        Value dloss = gradOf(ce.getLoss());
        if (!dloss)
          return success();
        if (ce.getPerSample()) // row i times loss[i]'s gradient: (N) as (N, 1)
          dloss = create<ReshapeOp>(
              loc,
              RankedTensorType::get({cast<RankedTensorType>(dloss.getType()).getDimSize(0), 1},
                                    cast<RankedTensorType>(dloss.getType()).getElementType()),
              dloss);
        auto dlogits = create<MulOp>(loc, ce.getDlogits().getType(), ce.getDlogits(), dloss);
        accumulate(ce.getLogits(), dlogits);
        return success();
      })
      .Case([&](GatherGradOp scatter) {
        // A scatter-add in the forward pass (ONNX ScatterElements 'add' at
        // constant indices): each added row's gradient is its place's.
        auto dgrad = create<GatherOp>(loc, scatter.getGrad().getType(), gradOf(scatter.getResult()),
                                      scatter.getIndices());
        accumulate(scatter.getGrad(), dgrad);
        return success();
      })
      .Case([&](LSTMOp lstm) -> LogicalResult {
        if (gradOf(lstm.getSaved()))
          return lstm.emitOpError() << "cannot be differentiated through its saved states";
        // Results without a gradient (often y or y_c) are passed as absent: zero.
        Type state = lstm.getYH().getType();
        auto grads = create<LSTMGradOp>(
            loc, lstm.getInput().getType(), lstm.getW().getType(), lstm.getR().getType(),
            lstm.getB().getType(), state, state, lstm.getInput(), lstm.getW(), lstm.getR(),
            lstm.getY(), lstm.getSaved(), lstm.getInitialH(), lstm.getInitialC(),
            gradOf(lstm.getY()), gradOf(lstm.getYH()), gradOf(lstm.getYC()));
        accumulate(lstm.getInput(), grads.getInputGrad());
        accumulate(lstm.getW(), grads.getWGrad());
        accumulate(lstm.getR(), grads.getRGrad());
        accumulate(lstm.getB(), grads.getBGrad());
        if (Value h0 = lstm.getInitialH())
          accumulate(h0, grads.getInitialHGrad());
        if (Value c0 = lstm.getInitialC())
          accumulate(c0, grads.getInitialCGrad());
        return success();
      })
      .Case([&](GRUOp gru) -> LogicalResult {
        if (gradOf(gru.getSaved()))
          return gru.emitOpError() << "cannot be differentiated through its saved states";
        auto grads = create<GRUGradOp>(
            loc, gru.getInput().getType(), gru.getW().getType(), gru.getR().getType(),
            gru.getB().getType(), gru.getYH().getType(), gru.getInput(), gru.getW(), gru.getR(),
            gru.getY(), gru.getSaved(), gru.getInitialH(), gradOf(gru.getY()), gradOf(gru.getYH()),
            gru.getLinearBeforeReset());
        accumulate(gru.getInput(), grads.getInputGrad());
        accumulate(gru.getW(), grads.getWGrad());
        accumulate(gru.getR(), grads.getRGrad());
        accumulate(gru.getB(), grads.getBGrad());
        if (Value h0 = gru.getInitialH())
          accumulate(h0, grads.getInitialHGrad());
        return success();
      })
      .Case([&](SplitOp split) {
        // The pieces' gradients concatenated back; a piece nobody used
        // contributes zeros.
        SmallVector<Value> grads;
        for (Value r : split.getResults())
          grads.push_back(gradOf(r) ? gradOf(r) : zerosLike(loc, r.getType()));
        auto dx = create<ConcatOp>(loc, split.getInput().getType(), grads, split.getAxisAttr());
        accumulate(split.getInput(), dx);
        return success();
      })
      .Case([&](PadOp pad) {
        SmallVector<int64_t> negated;
        for (int64_t p : pad.getPads())
          negated.push_back(-p);
        auto dx = create<PadOp>(loc, pad.getInput().getType(), gradOf(pad.getResult()),
                                b.getDenseI64ArrayAttr(negated), b.getF32FloatAttr(0.0f));
        accumulate(pad.getInput(), dx);
        return success();
      })
      .Case([&](CumSumOp sum) {
        // Each input element adds to every sum at or after it (before it,
        // reversed): the gradient is the sum in the other direction.
        auto dx = create<CumSumOp>(loc, sum.getType(), gradOf(sum.getResult()),
                                   sum.getAxisAttr(), sum.getExclusiveAttr(),
                                   sum.getReverse() ? UnitAttr() : b.getUnitAttr());
        accumulate(sum.getInput(), dx);
        return success();
      })
      .Case([&](ReduceOp red) {
        auto dx = create<ReduceGradOp>(loc, red.getInput().getType(), red.getKindAttr(),
                                       gradOf(red.getResult()), red.getAxesAttr());
        accumulate(red.getInput(), dx);
        return success();
      })
      .Case([&](LayerNormOp ln) -> LogicalResult {
        if (gradOf(ln.getMean()) || gradOf(ln.getInvStd()))
          return ln.emitOpError() << "cannot be differentiated through its statistics outputs";
        auto grads = create<LayerNormGradOp>(
            loc, ln.getInput().getType(), ln.getScale().getType(), ln.getBias().getType(),
            ln.getInput(), ln.getScale(), ln.getMean(), ln.getInvStd(), gradOf(ln.getResult()),
            ln.getAxisAttr());
        accumulate(ln.getInput(), grads.getInputGrad());
        accumulate(ln.getScale(), grads.getScaleGrad());
        accumulate(ln.getBias(), grads.getBiasGrad());
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitOpError() << "has no gradient rule in mgs";
      });
}

FailureOr<AutodiffResult> Differentiator::run(ArrayRef<Operation *> ops, Value seed,
                                              Value seedGrad) {
  // Forward: which values depend on a trainable parameter.
  for (Operation *op : ops) {
    if (auto get = dyn_cast<GetParamOp>(op)) {
      auto param = symbols.lookup<ParameterOp>(get.getName());
      if (param && param.getTrainable())
        requiresGrad.insert(get.getResult());
      continue;
    }
    if (isa<TopKPositionsOp, GreaterOp, GreaterOrEqualOp, EqualOp, RoundOp, FloorOp, CeilOp,
            StopGradientOp>(op))
      continue; // piecewise constant positions or truths, or a detached value: no gradient flows
    if (llvm::any_of(op->getOperands(), [&](Value v) { return needsGrad(v); }))
      for (Value r : op->getResults())
        if (isa<FloatType>(cast<ShapedType>(r.getType()).getElementType()))
          requiresGrad.insert(r);
  }
  if (!needsGrad(seed))
    return result; // Nothing to train.
  adjoints[seed] = seedGrad;

  for (Operation *op : llvm::reverse(ops)) {
    if (auto get = dyn_cast<GetParamOp>(op)) {
      if (failed(finishParameter(get)))
        return failure();
      continue;
    }
    if (llvm::none_of(op->getResults(), [&](Value r) { return gradOf(r); }))
      continue;
    // Results without a gradient (unused, or not differentiable) count as zero:
    // every rule below only reads the gradient of the results that have one,
    // so give the main result a gradient or skip the op.
    if (!gradOf(op->getResult(0)) && !isa<SplitOp, LSTMOp, GRUOp>(op))
      return op->emitOpError() << "only gradients through its first result are supported";
    if (failed(differentiate(op)))
      return failure();
  }
  eraseReplaced();
  return result;
}

} // namespace

FailureOr<AutodiffResult> buildBackward(OpBuilder &builder, ArrayRef<Operation *> forwardOps,
                                        Value seed, Value seedGrad) {
  auto module = builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  Differentiator diff(builder, module);
  return diff.run(forwardOps, seed, seedGrad);
}

} // namespace mgs::train
