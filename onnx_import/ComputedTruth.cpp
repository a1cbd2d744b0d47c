//===- ComputedTruth.cpp - BOOL tensors computed from FLOAT data ----------===//
//
// A comparison of computed FLOAT data (`h < 0`, `x == x.max()`) is a BOOL
// tensor the data decide: a "truth", held as 1.0 / 0.0 floats made by
// train.greater, greater_equal or equal (Less and LessOrEqual swap the
// operands), through which no gradient flows. Not, And, Or and Xor of truths
// (or of a truth and a constant BOOL) are arithmetic on them, exact on 0 and
// 1; Cast to FLOAT reads the values, Cast to BOOL keeps the truth; IsInf is
// an equal to the infinity; Sign is greater(x, 0) - greater(0, x). Where
// with a truth as its condition selects by train.keep_where, which gives 0,
// not NaN, in place of a branch's NaN or infinity where it is not chosen:
// masked_fill(h < 0, v) and torch.where(x > 0, log(x), 0) are exact.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OnnxNodes.h"
#include "converters/Attention.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cmath>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

FailureOr<Value> GraphImporter::truthOperand(int i) {
  const std::string &name = curNode->input(i);
  if (truths.contains(name))
    return values[name];
  const onnx::TensorProto *c = foldableConstant(name);
  if (!c || c->data_type() != onnx::TensorProto::BOOL)
    return failure();
  SmallVector<int64_t> shape;
  auto ones = conditionMask(*this, shape, i);
  if (failed(ones))
    return failure();
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return Value(arith::ConstantOp::create(b, curLoc, type,
                                         DenseElementsAttr::get(type, ArrayRef<float>(*ones))));
}

Value GraphImporter::compareFloats(StringRef op, Value l, Value r) {
  const bool swap = op.starts_with("Less");
  Value a = swap ? r : l, c = swap ? l : r;
  auto shape = broadcastShapes(cast<RankedTensorType>(a.getType()).getShape(),
                               cast<RankedTensorType>(c.getType()).getShape());
  auto type = RankedTensorType::get(shape ? *shape : SmallVector<int64_t>(), b.getF32Type());
  if (op == "Equal")
    return EqualOp::create(b, curLoc, type, a, c);
  if (op.ends_with("OrEqual"))
    return GreaterOrEqualOp::create(b, curLoc, type, a, c);
  return GreaterOp::create(b, curLoc, type, a, c);
}

Value GraphImporter::f32Constant(float v) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return arith::ConstantOp::create(b, curLoc, type, DenseElementsAttr::get(type, v));
}

LogicalResult GraphImporter::setTruth(Value v) {
  auto type = outputType(0, Type()); // BOOL: its shape
  if (failed(type))
    return failure();
  if (cast<RankedTensorType>(v.getType()).getShape() != type->getShape())
    return emitError() << "its result has shape "
                       << shapeToString(cast<RankedTensorType>(v.getType()).getShape())
                       << ", ONNX shape inference says " << shapeToString(type->getShape());
  values[curNode->output(0)] = v;
  truths.insert(curNode->output(0));
  return success();
}

LogicalResult GraphImporter::importComputedTruth(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  if (!hasOutput(0) || curNode->output_size() != 1)
    return success();
  auto computedFloat = [&](int i) {
    return hasInput(i) && values.count(curNode->input(i)) && !truths.contains(curNode->input(i)) &&
           valueTypeOf(curNode->input(i)) == onnx::TensorProto::FLOAT;
  };
  auto floatType = [&](int i) {
    return hasInput(i) && valueTypeOf(curNode->input(i)) == onnx::TensorProto::FLOAT;
  };
  auto isTruth = [&](int i) { return hasInput(i) && truths.contains(curNode->input(i)); };
  auto f32Like = [&](Value a, Value c) {
    auto shape = broadcastShapes(cast<RankedTensorType>(a.getType()).getShape(),
                                 cast<RankedTensorType>(c.getType()).getShape());
    return RankedTensorType::get(shape ? *shape : SmallVector<int64_t>(), b.getF32Type());
  };

  static constexpr llvm::StringLiteral kComparisons[] = {"Equal", "Greater", "Less",
                                                         "GreaterOrEqual", "LessOrEqual"};
  if (llvm::is_contained(kComparisons, op) && curNode->input_size() == 2 && floatType(0) &&
      floatType(1) && (computedFloat(0) || computedFloat(1))) {
    handled = true;
    auto l = input(0), r = input(1);
    if (failed(l) || failed(r))
      return failure();
    return setTruth(compareFloats(op, *l, *r));
  }
  if ((op == "IsInf" || op == "Sign") && hasInput(0) && !foldableConstant(curNode->input(0))) {
    handled = true;
    auto x = input(0); // (a graph input of another type is an error naming it)
    if (failed(x))
      return failure();
    if (!computedFloat(0))
      return emitError() << "its input '" << curNode->input(0) << "' is "
                         << dtypeName(valueTypeOf(curNode->input(0)))
                         << " computed at run time; mgs computes " << op << " of FLOAT data";
    auto type = cast<RankedTensorType>(x->getType());
    if (op == "Sign") { // 1, -1 or 0 (0 for NaN), no gradient
      Value zero = f32Constant(0.0f);
      Value up = GreaterOp::create(b, curLoc, type, *x, zero);
      Value down = GreaterOp::create(b, curLoc, type, zero, *x);
      setOutput(0, SubOp::create(b, curLoc, type, up, down));
      return success();
    }
    const bool pos = intAttr("detect_positive", 1) != 0, neg = intAttr("detect_negative", 1) != 0;
    Value t;
    if (pos)
      t = EqualOp::create(b, curLoc, type, *x, f32Constant(INFINITY));
    if (neg) {
      Value n = EqualOp::create(b, curLoc, type, *x, f32Constant(-INFINITY));
      t = t ? Value(AddOp::create(b, curLoc, type, t, n)) : n;
    }
    if (!t) // neither: all false
      t = MulOp::create(b, curLoc, type, EqualOp::create(b, curLoc, type, *x, *x),
                        f32Constant(0.0f));
    return setTruth(t);
  }
  const bool logic = op == "And" || op == "Or" || op == "Xor";
  if ((op == "Not" && isTruth(0)) || (logic && (isTruth(0) || isTruth(1)))) {
    handled = true;
    auto p = truthOperand(0);
    if (failed(p))
      return emitError() << "input 0 ('" << curNode->input(0)
                         << "') is neither a truth computed from FLOAT data nor a constant BOOL";
    if (op == "Not")
      return setTruth(SubOp::create(b, curLoc, p->getType(), f32Constant(1.0f), *p));
    auto q = truthOperand(1);
    if (failed(q))
      return emitError() << "input 1 ('" << curNode->input(1)
                         << "') is neither a truth computed from FLOAT data nor a constant BOOL";
    auto type = f32Like(*p, *q);
    if (op == "Xor") { // (p - q)^2
      Value d = SubOp::create(b, curLoc, type, *p, *q);
      return setTruth(MulOp::create(b, curLoc, type, d, d));
    }
    Value both = MulOp::create(b, curLoc, type, *p, *q);
    if (op == "And")
      return setTruth(both);
    // Or: p + q - pq
    return setTruth(SubOp::create(b, curLoc, type, AddOp::create(b, curLoc, type, *p, *q), both));
  }
  if (op == "Cast" && isTruth(0)) {
    handled = true;
    const int64_t to = intAttr("to", 0);
    Value t = values[curNode->input(0)];
    if (to == onnx::TensorProto::BOOL)
      return setTruth(t);
    if (to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 ||
        narrowIntType(static_cast<int>(to))) // (F.one_hot's int64 0 / 1, by torch.export)
      return setRuntimeInt(t, 0.0, 1.0, "by a comparison");
    if (to != onnx::TensorProto::FLOAT)
      return emitError() << "it casts a truth computed from FLOAT data ('" << curNode->input(0)
                         << "') to " << dtypeName(static_cast<int>(to))
                         << "; mgs casts such a BOOL tensor to FLOAT, BOOL or an integer type";
    setOutput(0, t);
    return success();
  }
  if (op == "Where" && isTruth(0) && curNode->input_size() == 3) {
    handled = true;
    Value c = values[curNode->input(0)];
    auto outType = outputType(0, b.getF32Type());
    if (failed(outType))
      return failure();
    // keep_where(x, c) + keep_where(y, 1 - c); a branch that is the constant
    // 0 adds nothing.
    auto isZero = [&](int i) {
      const onnx::TensorProto *k = foldableConstant(curNode->input(i));
      if (!k || k->data_type() != onnx::TensorProto::FLOAT)
        return false;
      std::vector<float> v = onnx::ParseData<float>(k);
      return llvm::all_of(v, [](float f) { return f == 0.0f && !std::signbit(f); });
    };
    Value notC = SubOp::create(b, curLoc, c.getType(), f32Constant(1.0f), c);
    Value sum;
    for (int i = 1; i <= 2; ++i) {
      if (isZero(i))
        continue;
      auto branch = input(i);
      if (failed(branch))
        return failure();
      Value cond = i == 1 ? c : notC;
      Value kept = KeepWhereOp::create(b, curLoc, f32Like(*branch, cond), *branch, cond);
      sum = sum ? Value(AddOp::create(b, curLoc, f32Like(sum, kept), sum, kept)) : kept;
    }
    if (!sum)
      sum = MulOp::create(b, curLoc, c.getType(), c, f32Constant(0.0f));
    if (cast<RankedTensorType>(sum.getType()).getShape() != outType->getShape())
      sum = broadcastTo(b, curLoc, sum, *outType);
    setOutput(0, sum);
    return success();
  }
  return success();
}

} // namespace mgs::onnx_import
