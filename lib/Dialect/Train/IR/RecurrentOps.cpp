//===- RecurrentOps.cpp - Verifiers of the LSTM and GRU ops ---------------===//
//
// train.lstm, train.lstm_grad, train.gru and train.gru_grad: one direction,
// weights in ONNX's layout (gates stacked along w's and r's rows, b the
// input and recurrent biases side by side).
//
//===----------------------------------------------------------------------===//

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "OpVerifiers.h"

#include <array>
#include <tuple>

using namespace mlir;
using namespace mgs::train;
using namespace mgs::train::detail;

namespace {
/// A recurrent op's T, N, I, H from its input and weights, `gates` of them
/// (LSTM 4, GRU 3); checks w, r and b.
FailureOr<std::array<int64_t, 4>> recurrentDims(Operation *op, int64_t gates, Value input, Value w,
                                                Value r, Value b) {
  ArrayRef<int64_t> x = shapeOf(input), ws = shapeOf(w);
  if (x.size() != 3)
    return op->emitOpError() << "input must be T x N x I, got shape " << shapeToString(x);
  if (ws.size() != 3 || ws[0] != 1 || ws[1] % gates != 0 || ws[1] == 0 || ws[2] != x[2])
    return op->emitOpError() << "w must be 1 x " << gates << "H x I with I = " << x[2]
                             << ", got shape " << shapeToString(ws);
  const int64_t h = ws[1] / gates;
  if (failed(checkResultShape(op, r, {1, gates * h, h}, "r")) ||
      (b && failed(checkResultShape(op, b, {1, 2 * gates * h}, "b"))))
    return failure();
  return std::array<int64_t, 4>{x[0], x[1], x[2], h};
}

/// Checks each named value that is present against its expected shape.
LogicalResult checkShapes(Operation *op,
                          ArrayRef<std::tuple<Value, SmallVector<int64_t>, StringRef>> checks) {
  for (auto &[value, shape, name] : checks)
    if (value && failed(checkResultShape(op, value, shape, name)))
      return failure();
  return success();
}

/// What lstm_grad and gru_grad check alike: y and saved (`stateWidth` = 5H
/// or 4H columns), the optional initial state and the gradients of y and
/// y_h, and the input's, weights' and initial state's gradients.
FailureOr<std::array<int64_t, 4>> checkRecurrentGrad(Operation *op, int64_t gates, Value input,
                                                     Value w, Value r, Value y, Value saved,
                                                     Value initialH, Value yGrad, Value yhGrad,
                                                     Value inputGrad, Value wGrad, Value rGrad,
                                                     Value bGrad, Value initialHGrad) {
  auto d = recurrentDims(op, gates, input, w, r, Value());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  const int64_t g = gates * h;
  if (failed(checkShapes(op, {{y, {t, 1, n, h}, "y"},
                              {saved, {t, n, g + h}, "saved"},
                              {initialH, {1, n, h}, "initial_h"},
                              {yGrad, {t, 1, n, h}, "y_grad"},
                              {yhGrad, {1, n, h}, "y_h_grad"},
                              {inputGrad, {t, n, i}, "input_grad"},
                              {wGrad, {1, g, i}, "w_grad"},
                              {rGrad, {1, g, h}, "r_grad"},
                              {bGrad, {1, 2 * g}, "b_grad"},
                              {initialHGrad, {1, n, h}, "initial_h_grad"}})))
    return failure();
  return d;
}
} // namespace

LogicalResult LSTMOp::verify() {
  auto d = recurrentDims(*this, 4, getInput(), getW(), getR(), getB());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  return checkShapes(*this, {{getInitialH(), {1, n, h}, "initial_h"},
                             {getInitialC(), {1, n, h}, "initial_c"},
                             {getY(), {t, 1, n, h}, "y"},
                             {getYH(), {1, n, h}, "y_h"},
                             {getYC(), {1, n, h}, "y_c"},
                             {getSaved(), {t, n, 5 * h}, "saved"}});
}

LogicalResult LSTMGradOp::verify() {
  auto d = checkRecurrentGrad(*this, 4, getInput(), getW(), getR(), getY(), getSaved(),
                              getInitialH(), getYGrad(), getYHGrad(), getInputGrad(), getWGrad(),
                              getRGrad(), getBGrad(), getInitialHGrad());
  if (failed(d))
    return failure();
  const int64_t n = (*d)[1], h = (*d)[3];
  return checkShapes(*this, {{getInitialC(), {1, n, h}, "initial_c"},
                             {getYCGrad(), {1, n, h}, "y_c_grad"},
                             {getInitialCGrad(), {1, n, h}, "initial_c_grad"}});
}

LogicalResult GRUOp::verify() {
  auto d = recurrentDims(*this, 3, getInput(), getW(), getR(), getB());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  return checkShapes(*this, {{getInitialH(), {1, n, h}, "initial_h"},
                             {getY(), {t, 1, n, h}, "y"},
                             {getYH(), {1, n, h}, "y_h"},
                             {getSaved(), {t, n, 4 * h}, "saved"}});
}

LogicalResult GRUGradOp::verify() {
  return checkRecurrentGrad(*this, 3, getInput(), getW(), getR(), getY(), getSaved(), getInitialH(),
                            getYGrad(), getYHGrad(), getInputGrad(), getWGrad(), getRGrad(),
                            getBGrad(), getInitialHGrad());
}
