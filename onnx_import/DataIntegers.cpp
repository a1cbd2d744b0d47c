//===- DataIntegers.cpp - Integers fed as data, read as numbers -----------===//
//
// An INT64 graph input is token ids or class labels; a Gather, GatherElements
// or OneHot reads it as indices (TokenIds.cpp). A model also computes with
// labels as numbers: torch.export writes F.one_hot(t, C) as Equal(arange(C),
// t[:, None]), F.multi_margin_loss masks each row's own class the same way,
// `zeros.scatter_(1, t[:, None], 1.0)` scatters at them, and
// `t.float()` casts them to data (a binary label's BCE). Each such read takes
// the integers as floats by train.from_index, whose range the runtime checks
// (exact within +-2^24; for a scatter, the axis it indexes): comparisons give
// truths (ComputedTruth.cpp), a scatter is RuntimeInts.cpp's at run-time
// positions, a Cast to FLOAT is data through which no gradient flows.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

constexpr int64_t kExact = kFloatExactIntegers;

bool isComparison(StringRef op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
         op == "GreaterOrEqual";
}

} // namespace

FailureOr<Value> GraphImporter::dataIntegersAsFloat(int i, int64_t lo, int64_t hi) {
  const std::string &name = curNode->input(i);
  auto shape = knownShape(name);
  if (!shape)
    return emitError() << "input " << i << " ('" << name
                       << "') has no static shape after ONNX shape inference";
  Value ids;
  SmallVector<int64_t> perm;
  if (std::optional<Value> v = indexInput(i)) {
    ids = *v;
  } else if (auto t = transposedIndexInput(i)) {
    ids = t->first;
    perm = t->second;
  } else {
    return emitError() << "input " << i << " ('" << name << "') is not integers fed as data";
  }
  Value &f = fromIndexValues[{ids, lo, hi}]; // (one conversion for every read alike)
  if (!f) {
    ArrayRef<int64_t> idsShape = cast<RankedTensorType>(ids.getType()).getShape();
    f = FromIndexOp::create(b, curLoc, RankedTensorType::get(idsShape, b.getF32Type()), ids,
                            b.getI64IntegerAttr(lo), b.getI64IntegerAttr(hi));
  }
  Value v = f;
  if (!perm.empty())
    v = permuteDims(b, curLoc, v, perm);
  auto type = RankedTensorType::get(*shape, b.getF32Type());
  if (v.getType() != type) // (reshaped ids: the ids themselves, ONNX's shape here)
    v = ReshapeOp::create(b, curLoc, type, v);
  return v;
}

LogicalResult GraphImporter::importDataIntegers(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  if (!hasOutput(0) || curNode->output_size() != 1)
    return success();
  auto isData = [&](int i) {
    return hasInput(i) && (indexInput(i) || transposedIndexInput(i)) &&
           !computedIndices.count(curNode->input(i));
  };
  auto isRuntimeInt = [&](int i) { return hasInput(i) && runtimeInts.count(curNode->input(i)); };

  if (isComparison(op) && curNode->input_size() == 2 &&
      (isData(0) || isData(1) || isRuntimeInt(0) || isRuntimeInt(1))) {
    // RuntimeMask.cpp keeps its exact tables for an embedding's ids compared
    // with one value (a padding mask).
    if (paddingMaskIds() >= 0)
      return success();
    handled = true;
    Value operand[2];
    for (int i = 0; i < 2; ++i) {
      if (isData(i)) {
        auto f = dataIntegersAsFloat(i, -kExact, kExact);
        if (failed(f))
          return failure();
        operand[i] = *f;
        continue;
      }
      double lo = 0, hi = 0;
      if (failed(integerOperand(i, operand[i], lo, hi, "mgs compares integers in float")))
        return failure();
      if (!operand[i])
        return emitError() << "input " << i << " ('" << curNode->input(i)
                           << "') is compared with integers fed as data or computed at run "
                              "time; mgs compares those with each other and with integer "
                              "constants";
      if (std::isinf(lo) || std::isinf(hi))
        return emitError() << "its input '" << curNode->input(i) << "' holds integers "
                           << runtimeInts.lookup(curNode->input(i)).origin
                           << " at run time, of no known range; mgs compares "
                              "integers within 2^24 only";
    }
    return setTruth(compareFloats(op, operand[0], operand[1]));
  }

  if ((op == "Cast" || op == "CastLike") && isData(0) && castTarget() == onnx::TensorProto::FLOAT) {
    // Labels as numbers (a BCE target): data, no gradient into them.
    handled = true;
    auto f = dataIntegersAsFloat(0, -kExact, kExact);
    if (failed(f))
      return failure();
    setOutput(0, *f);
    return success();
  }

  if (op == "ScatterElements" && isData(1)) {
    // A scatter at the labels (a one-hot by scatter_): positions checked to
    // lie along the axis they index.
    handled = true;
    auto shape = knownShape(curNode->input(0));
    if (!shape || shape->empty())
      return emitError() << "its data ('" << curNode->input(0)
                         << "') has no static shape after ONNX shape inference";
    auto axis = axisAttr("axis", 0, static_cast<int64_t>(shape->size()));
    if (failed(axis))
      return failure();
    const int64_t extent = (*shape)[*axis];
    if (extent < 1 || extent > kExact)
      return emitError() << "it scatters along an axis of " << extent
                         << " entries; mgs scatters at labels fed as data along 1 to 2^24";
    auto f = dataIntegersAsFloat(1, 0, extent - 1);
    if (failed(f))
      return failure();
    RuntimeInt in{*f, 0.0, static_cast<double>(extent - 1), std::nullopt,
                  "from data fed to the model"};
    bool done = false;
    if (failed(importRuntimeIndexed(in, 1, done)))
      return failure();
    if (!done)
      return emitError() << "its indices '" << curNode->input(1)
                         << "' are integers fed as data; mgs scatters at them only as the "
                            "indices of ScatterElements";
    return success();
  }
  return success();
}

} // namespace mgs::onnx_import
