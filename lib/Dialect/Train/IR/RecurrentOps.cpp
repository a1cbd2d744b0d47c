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
} // namespace

LogicalResult LSTMOp::verify() {
  auto d = recurrentDims(*this, 4, getInput(), getW(), getR(), getB());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  if (failed(checkResultShape(*this, getY(), {t, 1, n, h}, "y")) ||
      failed(checkResultShape(*this, getYH(), {1, n, h}, "y_h")) ||
      failed(checkResultShape(*this, getYC(), {1, n, h}, "y_c")))
    return failure();
  return checkResultShape(*this, getSaved(), {t, n, 5 * h}, "saved");
}

LogicalResult LSTMGradOp::verify() {
  auto d = recurrentDims(*this, 4, getInput(), getW(), getR(), Value());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  if (failed(checkResultShape(*this, getY(), {t, 1, n, h}, "y")) ||
      failed(checkResultShape(*this, getSaved(), {t, n, 5 * h}, "saved")) ||
      (getYGrad() && failed(checkResultShape(*this, getYGrad(), {t, 1, n, h}, "y_grad"))) ||
      (getYHGrad() && failed(checkResultShape(*this, getYHGrad(), {1, n, h}, "y_h_grad"))) ||
      (getYCGrad() && failed(checkResultShape(*this, getYCGrad(), {1, n, h}, "y_c_grad"))) ||
      failed(checkResultShape(*this, getInputGrad(), {t, n, i}, "input_grad")) ||
      failed(checkResultShape(*this, getWGrad(), {1, 4 * h, i}, "w_grad")) ||
      failed(checkResultShape(*this, getRGrad(), {1, 4 * h, h}, "r_grad")))
    return failure();
  return checkResultShape(*this, getBGrad(), {1, 8 * h}, "b_grad");
}

LogicalResult GRUOp::verify() {
  auto d = recurrentDims(*this, 3, getInput(), getW(), getR(), getB());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  if (failed(checkResultShape(*this, getY(), {t, 1, n, h}, "y")) ||
      failed(checkResultShape(*this, getYH(), {1, n, h}, "y_h")))
    return failure();
  return checkResultShape(*this, getSaved(), {t, n, 4 * h}, "saved");
}

LogicalResult GRUGradOp::verify() {
  auto d = recurrentDims(*this, 3, getInput(), getW(), getR(), Value());
  if (failed(d))
    return failure();
  auto [t, n, i, h] = *d;
  if (failed(checkResultShape(*this, getY(), {t, 1, n, h}, "y")) ||
      failed(checkResultShape(*this, getSaved(), {t, n, 4 * h}, "saved")) ||
      (getYGrad() && failed(checkResultShape(*this, getYGrad(), {t, 1, n, h}, "y_grad"))) ||
      (getYHGrad() && failed(checkResultShape(*this, getYHGrad(), {1, n, h}, "y_h_grad"))) ||
      failed(checkResultShape(*this, getInputGrad(), {t, n, i}, "input_grad")) ||
      failed(checkResultShape(*this, getWGrad(), {1, 3 * h, i}, "w_grad")) ||
      failed(checkResultShape(*this, getRGrad(), {1, 3 * h, h}, "r_grad")))
    return failure();
  return checkResultShape(*this, getBGrad(), {1, 6 * h}, "b_grad");
}
