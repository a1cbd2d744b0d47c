//===- Recurrent.cpp - ONNX LSTM, GRU and RNN -----------------------------===//
//
// LSTM and GRU with ONNX's default activations, in any direction, their
// initial states any value: a zero one (what PyTorch's nn.LSTM and nn.GRU
// export without one, built from shapes and evaluated at import) is left to
// the kernels' zero state, any other (an encoder's last state, a learned
// parameter) becomes the ops' initial_h / initial_c. Each direction
// is one train.lstm / train.gru, which runs forward; the reverse direction
// runs it over the sequence reversed (a split into steps concatenated in the
// other order) and reverses its y back. A bidirectional node concatenates
// the two directions' results as ONNX lays them out (y: T x 2 x N x H, the
// states 2 x N x H); its W, R and B are split per direction. With layout = 1
// (batch first: X N x T x I, y N x T x D x H, the states N x D x H) X and the
// results are transposed around the sequence-first cells. An RNN (nn.RNN,
// tanh or relu) is unrolled into gemms and activations (unrollRNN).
//
//===----------------------------------------------------------------------===//

#include "Indexing.h"
#include "OpConverters.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

/// What differs between the two cells.
struct Cell {
  int64_t gates;                            ///< LSTM 4, GRU 3, RNN 1
  int64_t states;                           ///< the outputs after Y: y_h, y_c / y_h
  const char *initial[2];                   ///< the initial states' names (inputs 5, 6)
  llvm::ArrayRef<const char *> activations; ///< ONNX's default, one direction
};

/// One direction of an RNN (ONNX RNN: h_t = f(x_t W^T + h_{t-1} R^T + Wb +
/// Rb)), unrolled over the T steps of `input` (T x N x I) into the train ops
/// autodiff differentiates: one gemm for every step's input projection,
/// then per step a gemm adding h_{t-1} R^T to it and the activation. `w` is
/// 1 x H x I, `r` 1 x H x H, `bias` 1 x 2H; `h0` (N x H) the initial state,
/// none for zeros. Returns y (T x 1 x N x H) and the last state (1 x N x H).
std::pair<Value, Value> unrollRNN(OpBuilder &b, Location loc, Value input, Value w, Value r,
                                  Value bias, Value h0, StringRef activation) {
  ArrayRef<int64_t> xs = shapeOf(input);
  const int64_t t = xs[0], batch = xs[1], in = xs[2], h = shapeOf(w)[1];
  Type f32 = b.getF32Type();
  auto tensor = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, f32); };
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) -> Value {
    return ReshapeOp::create(b, loc, tensor(shape), v);
  };
  auto gemm = [&](Value a, Value m, Value c, ArrayRef<int64_t> shape) -> Value {
    return GemmOp::create(b, loc, tensor(shape), a, m, c, b.getF32FloatAttr(1.0f),
                          b.getF32FloatAttr(1.0f), b.getBoolAttr(false), b.getBoolAttr(true));
  };
  auto halves =
      SplitOp::create(b, loc, SmallVector<Type>(2, tensor({1, h})), bias, b.getI64IntegerAttr(1));
  Value bsum = AddOp::create(b, loc, tensor({1, h}), halves.getResult(0), halves.getResult(1));
  Value projected =
      gemm(reshape(input, {t * batch, in}), reshape(w, {h, in}), bsum, {t * batch, h});
  Value rm = reshape(r, {h, h});
  SmallVector<Value> steps{reshape(projected, {t, batch, h})};
  if (t > 1)
    steps = SmallVector<Value>(SplitOp::create(b, loc, SmallVector<Type>(t, tensor({1, batch, h})),
                                               steps[0], b.getI64IntegerAttr(0))
                                   .getResults());
  Value state = h0;
  SmallVector<Value> ys;
  for (Value step : steps) {
    Value pre = reshape(step, {batch, h});
    if (state)
      pre = gemm(state, rm, pre, {batch, h});
    if (activation == "Relu")
      state = ReluOp::create(b, loc, pre.getType(), pre);
    else if (activation == "Sigmoid")
      state = SigmoidOp::create(b, loc, pre.getType(), pre);
    else
      state = TanhOp::create(b, loc, pre.getType(), pre);
    ys.push_back(reshape(state, {1, 1, batch, h}));
  }
  Value y = t == 1 ? ys[0]
                   : ConcatOp::create(b, loc, tensor({t, 1, batch, h}), ys, b.getI64IntegerAttr(0))
                         .getResult();
  return {y, reshape(state, {1, batch, h})};
}

/// `v` with its axis 0 (T steps) in reverse order.
Value reverseSteps(OpBuilder &b, Location loc, Value v) {
  SmallVector<int64_t> piece(shapeOf(v));
  const int64_t t = piece[0];
  if (t == 1)
    return v;
  piece[0] = 1;
  auto type = RankedTensorType::get(piece, b.getF32Type());
  auto split = SplitOp::create(b, loc, SmallVector<Type>(t, type), v, b.getI64IntegerAttr(0));
  SmallVector<Value> reversed(llvm::reverse(split.getResults()));
  return ConcatOp::create(b, loc, v.getType(), reversed, b.getI64IntegerAttr(0));
}

/// The pieces of `v` along axis 0, one per direction.
SmallVector<Value> perDirection(OpBuilder &b, Location loc, Value v, int64_t dirs) {
  if (dirs == 1)
    return {v};
  SmallVector<int64_t> piece(shapeOf(v));
  piece[0] = 1;
  auto type = RankedTensorType::get(piece, b.getF32Type());
  auto split = SplitOp::create(b, loc, SmallVector<Type>(dirs, type), v, b.getI64IntegerAttr(0));
  return SmallVector<Value>(split.getResults());
}

LogicalResult convertRecurrent(NodeImporter &n, const Cell &cell) {
  auto x = n.input(0), w = n.input(1), r = n.input(2);
  if (failed(x) || failed(w) || failed(r))
    return failure();
  const bool lstm = cell.gates == 4, rnn = cell.gates == 1;
  std::string direction = n.stringAttr("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return n.emitError() << "direction '" << direction
                         << "' is not supported (forward, reverse or bidirectional)";
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  // An RNN's one activation a direction: Tanh (the default), Relu or Sigmoid.
  SmallVector<std::string, 2> rnnActivations(dirs, "Tanh");
  if (auto acts = n.findAttr("activations"); acts && rnn) {
    if (acts->strings_size() != dirs)
      return n.emitError() << "expected " << dirs << " activation(s), one a direction, got "
                           << acts->strings_size();
    for (int i = 0; i < acts->strings_size(); ++i) {
      rnnActivations[i] = acts->strings(i);
      if (!llvm::is_contained({"Tanh", "Relu", "Sigmoid"}, rnnActivations[i]))
        return n.emitError() << "activation '" << rnnActivations[i]
                             << "' is not supported (Tanh, Relu or Sigmoid)";
    }
  } else if (acts) {
    bool isDefault = acts->strings_size() == static_cast<int>(dirs * cell.activations.size());
    for (int i = 0; isDefault && i < acts->strings_size(); ++i)
      isDefault = acts->strings(i) == cell.activations[i % cell.activations.size()];
    if (!isDefault) {
      auto diag = n.emitError() << "activations other than the default (";
      llvm::interleaveComma(cell.activations, diag);
      return diag << (dirs == 2 ? " per direction" : "") << ") are not supported";
    }
  }
  if (n.findAttr("clip"))
    return n.emitError() << "attribute 'clip' is not supported";
  if (lstm && n.intAttr("input_forget", 0) != 0)
    return n.emitError() << "input_forget = 1 is not supported";
  const int64_t layout = n.intAttr("layout", 0);
  if (layout != 0 && layout != 1)
    return n.emitError() << "layout must be 0 (sequence first) or 1 (batch first), got "
                         << layout;
  if (lstm && n.hasInput(7))
    return n.emitError() << "peephole weights (input 7, P) are not supported";
  ArrayRef<int64_t> xs = shapeOf(*x), ws = shapeOf(*w), rs = shapeOf(*r);
  const int64_t g = cell.gates;
  if (xs.size() != 3 || ws.size() != 3 || ws[0] != dirs || ws[1] % g != 0 || ws[1] == 0 ||
      ws[2] != xs[2])
    return n.emitError() << "expected X of shape "
                         << (layout ? "[batch, seq, input]" : "[seq, batch, input]")
                         << " and W of shape [" << dirs
                         << ", " << g << " * hidden_size, input], got " << shapeToString(xs)
                         << " and " << shapeToString(ws);
  const int64_t t = xs[layout], batch = xs[1 - layout], h = ws[1] / g;
  if (rs != ArrayRef<int64_t>{dirs, g * h, h})
    return n.emitError() << "R must have shape " << dirs << "x" << g * h << "x" << h << ", got "
                         << shapeToString(rs);
  if (int64_t given = n.intAttr("hidden_size", h); given != h)
    return n.emitError() << "hidden_size " << given << " does not match W's " << ws[1] << " rows ("
                         << g << " * hidden_size)";
  if (n.hasInput(4)) {
    auto lens = n.constantInts(4);
    if (failed(lens))
      return failure();
    if (llvm::any_of(*lens, [&](int64_t l) { return l != t; }))
      return n.emitError() << "sequence_lens (input 4) must be " << t
                           << " for every sequence; sequences of other lengths are not supported";
  }
  // The initial states given and not a constant zero (sequence first, D x N x H),
  // as values; a zero one stays absent (the kernels' zero state).
  SmallVector<Value, 2> initial(cell.states);
  SmallVector<int64_t> expected =
      layout ? SmallVector<int64_t>{batch, dirs, h} : SmallVector<int64_t>{dirs, batch, h};
  for (int i = 5; i < 5 + cell.states; ++i) {
    if (!n.hasInput(i))
      continue;
    const char *name = cell.initial[i - 5];
    SmallVector<int64_t> dims;
    bool zero = false;
    if (n.inputIsConstant(i)) {
      auto values = n.constantFloats(i);
      auto proto = n.constantInput(i);
      if (failed(values) || failed(proto))
        return failure();
      dims.assign((*proto)->dims().begin(), (*proto)->dims().end());
      zero = llvm::all_of(*values, [](float v) { return v == 0.0f; });
    }
    FailureOr<Value> value = failure();
    if (!zero) {
      value = n.input(i);
      if (failed(value))
        return failure();
      dims.assign(shapeOf(*value).begin(), shapeOf(*value).end());
    }
    // (An LSTM with proj_size exported by torch.export: hidden_size is the
    // projection's, its cell state the LSTM's, wider.)
    if (dims != expected)
      return n.emitError() << name << " (input " << i << ") must have shape "
                           << shapeToString(expected)
                           << (layout ? " [batch, num_directions, hidden_size]"
                                      : " [num_directions, batch, hidden_size]")
                           << ", got " << shapeToString(dims);
    if (!zero)
      initial[i - 5] = layout ? permuteDims(n.builder(), n.loc(), *value, {1, 0, 2}) : *value;
  }
  const int64_t linearBeforeReset = lstm ? 0 : n.intAttr("linear_before_reset", 0);
  if (linearBeforeReset != 0 && linearBeforeReset != 1)
    return n.emitError() << "linear_before_reset must be 0 or 1, got " << linearBeforeReset;
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Type f32 = b.getF32Type();
  Value seqFirst = layout ? permuteDims(b, loc, *x, {1, 0, 2}) : *x;
  Value bias;
  if (n.hasInput(3)) {
    auto given = n.input(3);
    if (failed(given))
      return failure();
    if (shapeOf(*given) != ArrayRef<int64_t>{dirs, 2 * g * h})
      return n.emitError() << "B must have shape " << dirs << "x" << 2 * g * h << ", got "
                           << shapeToString(shapeOf(*given));
    bias = *given;
  } else {
    auto type = RankedTensorType::get({dirs, 2 * g * h}, f32);
    bias = arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, b.getFloatAttr(f32, 0.0)));
  }
  SmallVector<Value> wd = perDirection(b, loc, *w, dirs), rd = perDirection(b, loc, *r, dirs),
                     bd = perDirection(b, loc, bias, dirs);
  // initialPer[k][d]: initial state k of direction d (1 x N x H), or null.
  SmallVector<SmallVector<Value, 2>, 2> initialPer(cell.states, SmallVector<Value, 2>(dirs));
  for (int k = 0; k < cell.states; ++k)
    if (initial[k])
      initialPer[k] = SmallVector<Value, 2>(perDirection(b, loc, initial[k], dirs));
  auto yType = RankedTensorType::get({t, 1, batch, h}, f32);
  auto state = RankedTensorType::get({1, batch, h}, f32);
  // results[k]: output k of each direction.
  SmallVector<SmallVector<Value, 2>> results(1 + cell.states);
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    Value input = reverse ? reverseSteps(b, loc, seqFirst) : seqFirst;
    if (rnn) {
      Value h0 = initialPer[0][d];
      if (h0)
        h0 = ReshapeOp::create(b, loc, RankedTensorType::get({batch, h}, f32), h0);
      auto [y, last] = unrollRNN(b, loc, input, wd[d], rd[d], bd[d], h0, rnnActivations[d]);
      results[0].push_back(reverse ? reverseSteps(b, loc, y) : y);
      results[1].push_back(last);
      continue;
    }
    Operation *op;
    if (lstm)
      op =
          LSTMOp::create(b, loc, yType, state, state, RankedTensorType::get({t, batch, 5 * h}, f32),
                         input, wd[d], rd[d], bd[d], initialPer[0][d], initialPer[1][d]);
    else
      op = GRUOp::create(b, loc, yType, state, RankedTensorType::get({t, batch, 4 * h}, f32), input,
                         wd[d], rd[d], bd[d], initialPer[0][d], linearBeforeReset != 0);
    results[0].push_back(reverse ? reverseSteps(b, loc, op->getResult(0)) : op->getResult(0));
    for (int k = 1; k <= cell.states; ++k)
      results[k].push_back(op->getResult(k));
  }
  for (int k = 0; k <= cell.states; ++k) {
    if (!n.hasOutput(k))
      continue;
    Value v = results[k][0];
    if (dirs == 2) {
      // y: T x 2 x N x H (axis 1); the states: 2 x N x H (axis 0).
      SmallVector<int64_t> shape(shapeOf(v));
      const int64_t axis = k == 0 ? 1 : 0;
      shape[axis] = 2;
      v = ConcatOp::create(b, loc, RankedTensorType::get(shape, f32), results[k],
                           b.getI64IntegerAttr(axis));
    }
    // Batch first: y T x D x N x H -> N x T x D x H, the states D x N x H -> N x D x H.
    if (layout)
      v = k == 0 ? permuteDims(b, loc, v, {2, 0, 1, 3}) : permuteDims(b, loc, v, {1, 0, 2});
    n.setOutput(k, v);
  }
  return success();
}

const char *const kLstmActivations[] = {"Sigmoid", "Tanh", "Tanh"};
const char *const kGruActivations[] = {"Sigmoid", "Tanh"};
const char *const kRnnActivations[] = {"Tanh"};

} // namespace

LogicalResult convertLSTM(NodeImporter &n) {
  return convertRecurrent(n, {4, 2, {"initial_h", "initial_c"}, kLstmActivations});
}

LogicalResult convertGRU(NodeImporter &n) {
  return convertRecurrent(n, {3, 1, {"initial_h", nullptr}, kGruActivations});
}

LogicalResult convertRNN(NodeImporter &n) {
  return convertRecurrent(n, {1, 1, {"initial_h", nullptr}, kRnnActivations});
}

} // namespace mgs::onnx_import
