//===- RuntimeInts.cpp - Integers computed at run time from token ids -----===//
//
// RoBERTa (and every model built on its embeddings: XLM-R, CamemBERT, ...)
// numbers the positions of each sequence at run time from its token ids:
// `cumsum(ids != pad, 1) * (ids != pad) + pad`, then reads the position
// embedding at those numbers. The padding mask is a RuntimeMask; Cast of it
// to an integer type starts a RuntimeInt: an integer tensor computed in float
// (train ops that already run and differentiate), with bounds [lo, hi]
// derived op by op. The bounds keep it exact (every value stays within
// +-2^24, where float sums and products of integers are exact) and prove
// the indices a Gather reads from it inside the table, so neither can go
// wrong at run time; train.to_index makes the Gather's int64 indices.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OnnxNodes.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

/// Float arithmetic on integers is exact up to here.
constexpr double kExactLimit = static_cast<double>(kFloatExactIntegers);

/// A bound (an integer, as double) as diagnostics print it.
int64_t asInt(double v) { return static_cast<int64_t>(v); }

/// The range of the ONNX integer type `dtype`, or nothing for other types.
std::optional<std::pair<double, double>> integerRange(int dtype) {
  using T = onnx::TensorProto;
  switch (dtype) {
  case T::INT8:
    return std::pair{-128.0, 127.0};
  case T::UINT8:
    return std::pair{0.0, 255.0};
  case T::INT16:
    return std::pair{-32768.0, 32767.0};
  case T::UINT16:
    return std::pair{0.0, 65535.0};
  case T::INT32:
    return std::pair{-2147483648.0, 2147483647.0};
  case T::UINT32:
    return std::pair{0.0, 4294967295.0};
  case T::INT64:
    return std::pair{-9223372036854775808.0, 9223372036854775807.0};
  case T::UINT64:
    return std::pair{0.0, 18446744073709551615.0};
  default:
    return std::nullopt;
  }
}

/// The values of an INT64 or INT32 constant (the integer types the folder
/// evaluates) as doubles, or nothing for another dtype.
std::optional<std::vector<double>> integerValues(const onnx::TensorProto &t) {
  std::vector<double> out;
  if (t.data_type() == onnx::TensorProto::INT64) {
    std::vector<int64_t> v = onnx::ParseData<int64_t>(&t);
    out.assign(v.begin(), v.end());
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    std::vector<int32_t> v = onnx::ParseData<int32_t>(&t);
    out.assign(v.begin(), v.end());
  } else {
    return std::nullopt;
  }
  return out;
}

} // namespace

LogicalResult GraphImporter::integerOperand(int i, Value &value, double &lo, double &hi,
                                            const std::string &use) {
  if (auto it = runtimeInts.find(curNode->input(i)); it != runtimeInts.end()) {
    value = it->second.value;
    lo = it->second.lo;
    hi = it->second.hi;
    return success();
  }
  value = Value();
  const onnx::TensorProto *c = foldableConstant(curNode->input(i));
  auto values = c && c->data_type() != onnx::TensorProto::BOOL ? tensorInts(c) : std::nullopt;
  if (!values || values->empty())
    return success();
  for (int64_t v : *values)
    if (std::fabs(static_cast<double>(v)) > kExactLimit)
      return emitError() << "input " << i << " ('" << curNode->input(i) << "') holds " << v
                         << ", beyond 2^24, where " << use;
  SmallVector<int64_t> dims(c->dims().begin(), c->dims().end());
  SmallVector<float> asFloat(values->begin(), values->end());
  auto type = RankedTensorType::get(dims, b.getF32Type());
  value = arith::ConstantOp::create(b, curLoc, type,
                                    DenseElementsAttr::get(type, ArrayRef<float>(asFloat)));
  lo = static_cast<double>(*llvm::min_element(*values));
  hi = static_cast<double>(*llvm::max_element(*values));
  return success();
}

LogicalResult GraphImporter::setRuntimeInt(Value value, double lo, double hi, StringRef origin) {
  if (std::max(std::fabs(lo), std::fabs(hi)) > kExactLimit)
    return emitError() << "its values, integers computed at run time " << origin << ", may reach "
                       << asInt(std::fabs(lo) > std::fabs(hi) ? lo : hi)
                       << ", beyond 2^24: mgs computes such integers in float, which is exact "
                          "only up to 2^24";
  runtimeInts[curNode->output(0)] = RuntimeInt{value, lo, hi, std::nullopt, origin.str()};
  return success();
}

std::optional<SmallVector<int64_t>> GraphImporter::knownShape(const std::string &name) const {
  if (auto it = values.find(name); it != values.end())
    if (auto type = dyn_cast<RankedTensorType>(it->second.getType()); type && type.hasStaticShape())
      return SmallVector<int64_t>(type.getShape());
  if (auto it = initializers.find(name); it != initializers.end())
    return SmallVector<int64_t>(it->second->dims().begin(), it->second->dims().end());
  auto it = valueTypes.find(name);
  if (it == valueTypes.end() || !it->second->has_tensor_type() ||
      !it->second->tensor_type().has_shape())
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (const auto &dim : it->second->tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return std::nullopt;
    dims.push_back(dim.dim_value());
  }
  return dims;
}

LogicalResult GraphImporter::importRuntimeIndexed(const RuntimeInt &in, int at, bool &done) {
  const std::string &op = curNode->op_type();
  auto f32 = b.getF32Type();
  auto scalar = RankedTensorType::get({}, f32);
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, curLoc, scalar,
                                     DenseElementsAttr::get(scalar, static_cast<float>(v)));
  };
  auto outside = [&](int64_t extent) {
    return emitError() << "its indices '" << curNode->input(at) << "', computed at run time "
                       << in.origin << ", lie in [" << asInt(in.lo) << ", " << asInt(in.hi)
                       << "]; mgs reads such indices here only when they lie in [0, " << extent
                       << ") (no negative ones)";
  };
  const int64_t rank = static_cast<int64_t>(shapeOf(in.value).size());
  if (op == "OneHot" && at == 0) {
    // The values [off, on]: FLOAT (the output is data) or integers (the
    // output is integers computed at run time, as the indices).
    auto depths = constantInts(1);
    if (failed(depths))
      return failure();
    const bool isFloat = valueTypeOf(curNode->input(2)) == onnx::TensorProto::FLOAT;
    double off = 0, on = 0;
    if (isFloat) {
      auto values = constantFloats(2);
      if (failed(values))
        return failure();
      if (values->size() != 2)
        return emitError() << "its values (input 2) must be [off, on], got " << values->size()
                           << " of them";
      off = (*values)[0];
      on = (*values)[1];
    } else {
      const onnx::TensorProto *c = foldableConstant(curNode->input(2));
      auto values = c ? integerValues(*c) : std::nullopt;
      if (!values || values->size() != 2)
        return emitError() << "its values (input 2) must be a constant [off, on] of 2 numbers";
      off = (*values)[0];
      on = (*values)[1];
    }
    if (depths->size() != 1 || (*depths)[0] < 1 || (*depths)[0] > kFloatExactIntegers)
      return emitError() << "its depth (input 1) must be one number in [1, 2^24]";
    const int64_t depth = (*depths)[0];
    if (in.lo < 0)
      return outside(depth);
    auto axis = axisAttr("axis", -1, rank + 1);
    if (failed(axis))
      return failure();
    Value hot = oneHotAt(b, curLoc, in.value, depth, *axis);
    if (off != 0.0 || on != 1.0) {
      Type type = hot.getType();
      hot = AddOp::create(b, curLoc, type, MulOp::create(b, curLoc, type, hot, constant(on - off)),
                          constant(off));
    }
    done = true;
    if (isFloat) {
      setOutput(0, hot);
      return success();
    }
    return setRuntimeInt(hot, std::min(off, on), std::max(off, on), in.origin);
  }
  if (op == "ScatterElements" && at == 1) {
    const std::string reduction = stringAttr("reduction", "none");
    if (reduction != "none" && reduction != "add")
      return emitError() << "reduction '" << reduction << "' at indices computed at run time "
                         << in.origin << " is not supported; supported: none, add";
    auto data = input(0), updates = input(2);
    if (failed(data) || failed(updates))
      return failure();
    ArrayRef<int64_t> shape = shapeOf(*data), indexShape = shapeOf(in.value);
    auto axis = axisAttr("axis", 0, static_cast<int64_t>(shape.size()));
    if (failed(axis))
      return failure();
    bool fits = indexShape.size() == shape.size() && shapeOf(*updates) == indexShape;
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = static_cast<int64_t>(d) == *axis || indexShape[d] == shape[d];
    if (!fits)
      return emitError() << "its data " << shapeToString(shape) << ", indices "
                         << shapeToString(indexShape) << " and updates "
                         << shapeToString(shapeOf(*updates))
                         << " must have one shape but along axis " << *axis
                         << " (the indices' and the updates' the same) when the indices are "
                            "computed at run time";
    const int64_t extent = shape[*axis];
    if (in.lo < 0 || in.hi >= static_cast<double>(extent))
      return outside(extent);
    // Two updates to one place would add up where ONNX keeps one: without a
    // reduction the indices must be distinct along the axis, as TopK's are.
    if (reduction == "none" && indexShape[*axis] > 1 && in.origin != "by TopK")
      return emitError() << "its indices '" << curNode->input(1) << "', computed at run time "
                         << in.origin << ", may repeat along axis " << *axis
                         << "; mgs scatters without a reduction only at indices that cannot "
                            "(TopK's along that axis, or one a row)";
    // The one-hot of the positions has data x the indices' extent elements.
    const int64_t cells = numElements(shape) * indexShape[*axis];
    if (cells > (int64_t{1} << 27))
      return emitError() << "it scatters along an axis of " << extent << " with "
                         << indexShape[*axis] << " indices each, " << cells
                         << " one-hot entries in all; mgs scatters at indices computed at run "
                            "time through such a one-hot, up to 2^27 entries";
    setOutput(0,
              scatterElementsAt(b, curLoc, *data, *axis, in.value, *updates, reduction == "add"));
    done = true;
    return success();
  }
  return success();
}

LogicalResult GraphImporter::importDataCast(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  if ((op != "Cast" && op != "CastLike") || !hasInput(0) || !hasOutput(0) ||
      foldableConstant(curNode->input(0)) ||
      valueTypeOf(curNode->input(0)) != onnx::TensorProto::FLOAT)
    return success();
  auto it = values.find(curNode->input(0));
  if (it == values.end() || !integerRange(castTarget()))
    return success();
  // Unbounded: only a Gather reads them, and the runtime checks each index.
  runtimeInts[curNode->output(0)] =
      RuntimeInt{it->second, -std::numeric_limits<double>::infinity(),
                 std::numeric_limits<double>::infinity(), std::nullopt, "cast from FLOAT data"};
  handled = true;
  return success();
}

LogicalResult GraphImporter::importRuntimeInt(bool &handled) {
  handled = false;
  const std::string &op = curNode->op_type();
  int at = -1;
  for (int i = 0; i < curNode->input_size() && at < 0; ++i)
    if (hasInput(i) && runtimeInts.count(curNode->input(i)))
      at = i;
  if (at < 0 || !hasOutput(0))
    return success();
  if (op == "Shape" || op == "Size")
    return success(); // the folder reads the static shape
  const RuntimeInt in = runtimeInts.lookup(curNode->input(at));
  // Integers cast from FLOAT data: their FLOAT values are rounded toward
  // zero where a Gather reads them (train.to_index); until then only
  // reshaped, sliced or cast to another integer type.
  const bool unbounded = std::isinf(in.lo) || std::isinf(in.hi);
  if (unbounded && !(op == "Gather" && at == 1) &&
      !(at == 0 && llvm::is_contained({"Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten",
                                       "Slice", "Expand", "Cast", "CastLike"},
                                      op)))
    return emitError() << "its input '" << curNode->input(at) << "' holds integers " << in.origin
                       << " at run time, of no known range; mgs reads those only as "
                          "a Gather's indices (an embedding of categorical values), reshaped or "
                          "sliced on their way";
  auto f32 = b.getF32Type();
  // ONNX's shape of output 0 (an integer type) for the FLOAT values.
  auto outType = [&]() -> FailureOr<RankedTensorType> {
    auto shape = knownShape(curNode->output(0));
    if (!shape)
      return emitError() << "output '" << curNode->output(0)
                         << "' has no static shape after ONNX shape inference";
    return RankedTensorType::get(*shape, f32);
  };
  auto notAnIndex = [&](double lo, double hi, int64_t extent) {
    return emitError() << "its indices '" << curNode->input(at)
                       << "', computed at run time " << in.origin << ", lie in [" << asInt(lo) << ", " << asInt(hi)
                       << "], which may fall outside the " << extent
                       << " entries of the axis they index";
  };

  if (op == "Gather" && at == 1) {
    // Indices: checked against the table, made int64 for the Gather's converter.
    auto shape = knownShape(curNode->input(0));
    if (!shape || shape->empty())
      return success(); // the converter reports the data's problem
    auto axis = axisAttr("axis", 0, static_cast<int64_t>(shape->size()));
    if (failed(axis))
      return failure();
    const int64_t extent = (*shape)[*axis];
    if (!unbounded &&
        (in.lo < -static_cast<double>(extent) || in.hi >= static_cast<double>(extent)))
      return notAnIndex(in.lo, in.hi, extent);
    auto valueShape = cast<RankedTensorType>(in.value.getType()).getShape();
    computedIndices[curNode->input(1)] = ToIndexOp::create(
        b, curLoc, RankedTensorType::get(valueShape, b.getI64Type()), in.value);
    return success(); // not handled: the Gather converter reads computedIndices
  }
  handled = true;
  if (op == "GatherND" && at == 1) {
    // Index tuples of one coordinate (PyTorch 2.x's exporter writes
    // experts[idx] so): a Gather on axis 0 at the tuples' only coordinate.
    auto shape = knownShape(curNode->input(0));
    ArrayRef<int64_t> tuples = shapeOf(in.value);
    if (intAttr("batch_dims", 0) != 0 || !shape || shape->empty() || tuples.empty() ||
        tuples.back() != 1)
      return emitError() << "its indices '" << curNode->input(1) << "' are computed at run time "
                         << in.origin << "; mgs imports a GatherND at such indices only with "
                                         "batch_dims 0 and tuples of one coordinate";
    const int64_t extent = shape->front();
    if (in.lo < -static_cast<double>(extent) || in.hi >= static_cast<double>(extent))
      return notAnIndex(in.lo, in.hi, extent);
    auto data = input(0);
    auto type = outType();
    if (failed(data) || failed(type))
      return failure();
    auto indexType = RankedTensorType::get(tuples.drop_back(), b.getI64Type());
    Value flatIndices = ReshapeOp::create(
        b, curLoc, RankedTensorType::get(tuples.drop_back(), f32), in.value);
    Value gathered = GatherOp::create(b, curLoc, *type, *data,
                                      ToIndexOp::create(b, curLoc, indexType, flatIndices));
    setOutput(0, gathered);
    return success();
  }
  if (op == "GatherElements" && at == 1 && !foldableConstant(curNode->input(0))) {
    // Computed data (a router's probabilities at its TopK indices): read at
    // each element's flat position, computed in float.
    auto data = input(0);
    auto type = outType();
    if (failed(data) || failed(type))
      return failure();
    ArrayRef<int64_t> shape = shapeOf(*data), indexShape = shapeOf(in.value);
    const int64_t rank = static_cast<int64_t>(shape.size());
    auto axis = axisAttr("axis", 0, rank);
    if (failed(axis))
      return failure();
    if (failed(checkGatherElementsShapes(*this, shape, indexShape, *axis)))
      return failure();
    const int64_t extent = shape[*axis];
    if (in.lo < 0 || in.hi >= static_cast<double>(extent))
      return emitError() << "its indices '" << curNode->input(1) << "', computed at run time "
                         << in.origin << ", lie in [" << asInt(in.lo) << ", " << asInt(in.hi)
                         << "]; mgs gathers computed data at such indices only when they lie in "
                            "[0, "
                         << extent << "), the axis' extent (no negative ones)";
    const int64_t count = cast<RankedTensorType>((*data).getType()).getNumElements();
    if (count > kFloatExactIntegers)
      return emitError() << "its data has " << count
                         << " elements, more than 2^24: mgs computes the positions it reads at "
                            "run time in float, exact only up to 2^24";
    setOutput(0, gatherElementsAt(b, curLoc, *data, *axis, in.value));
    return success();
  }
  if (op == "GatherElements" && at == 1) {
    // RoBERTa's token_type_ids buffer (all zeros) read at the position ids:
    // a constant whose entries are all one value gives that value anywhere.
    const onnx::TensorProto *data = foldableConstant(curNode->input(0));
    auto values = data ? integerValues(*data) : std::nullopt;
    if (!values || values->empty() ||
        llvm::any_of(*values, [&](double v) { return v != values->front(); }))
      return emitError() << "its indices '" << curNode->input(1)
                         << "' are computed at run time " << in.origin << "; mgs imports a "
                            "GatherElements at such indices only from an INT64 or INT32 "
                            "constant holding one value (a buffer of zeros)";
    const int64_t rank = data->dims_size();
    auto axis = axisAttr("axis", 0, rank);
    if (failed(axis))
      return failure();
    const int64_t extent = data->dims(*axis);
    if (in.lo < -static_cast<double>(extent) || in.hi >= static_cast<double>(extent))
      return notAnIndex(in.lo, in.hi, extent);
    auto type = outType();
    if (failed(type))
      return failure();
    onnx::TensorProto filled;
    filled.set_name(curNode->output(0));
    filled.set_data_type(data->data_type());
    for (int64_t d : type->getShape())
      filled.add_dims(d);
    const auto count = static_cast<int>(type->getNumElements());
    if (data->data_type() == onnx::TensorProto::INT64)
      filled.mutable_int64_data()->Resize(count, static_cast<int64_t>(values->front()));
    else
      filled.mutable_int32_data()->Resize(count, static_cast<int32_t>(values->front()));
    ownedConstants.push_back(std::move(filled));
    constants[curNode->output(0)] = &ownedConstants.back();
    return success();
  }
  if (op == "Cast" || op == "CastLike") {
    const int to = castTarget();
    if (to == onnx::TensorProto::FLOAT && unbounded)
      return emitError() << "it casts '" << curNode->input(at) << "', integers " << in.origin
                         << " at run time, back to FLOAT; mgs reads those only as a Gather's "
                            "indices";
    if (to == onnx::TensorProto::FLOAT) {
      setOutput(0, in.value); // data from here on (not differentiable: a function of the ids)
      return success();
    }
    if (to == onnx::TensorProto::BOOL && in.mask) { // the mask these 0/1 values are
      runtimeMasks[curNode->output(0)] = *in.mask;
      return success();
    }
    auto range = integerRange(to);
    if (!range)
      return emitError() << "it casts '" << curNode->input(at)
                         << "', integers computed at run time " << in.origin << ", to "
                         << dtypeName(to) << "; mgs casts them to integer types and FLOAT only";
    if (!unbounded && (in.lo < range->first || in.hi > range->second))
      return emitError() << "it casts '" << curNode->input(at) << "', whose values lie in ["
                         << asInt(in.lo) << ", " << asInt(in.hi) << "], to " << dtypeName(to)
                         << ", which does not hold them all";
    runtimeInts[curNode->output(0)] = in;
    return success();
  }
  const bool oneInput = curNode->input_size() == 1;
  if (op == "Identity" || op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" ||
      op == "Flatten" || ((op == "Max" || op == "Min" || op == "Concat") && oneInput)) {
    if (at != 0)
      return emitError() << "its input " << at << " ('" << curNode->input(at)
                         << "') is computed at run time " << in.origin << "; it must be a constant";
    auto type = outType();
    if (failed(type))
      return failure();
    Value v = *type == in.value.getType() ? in.value
                                          : ReshapeOp::create(b, curLoc, *type, in.value).getResult();
    std::optional<RuntimeMask> mask = in.mask;
    if (mask && failed(layOutMask(*mask)))
      return failure();
    runtimeInts[curNode->output(0)] = RuntimeInt{v, in.lo, in.hi, std::move(mask), in.origin};
    return success();
  }
  if (op == "Slice" && at == 0) {
    auto sliced = sliceByNode(*this, in.value);
    if (failed(sliced))
      return failure();
    if (!*sliced)
      return emitError() << "the slice of '" << curNode->input(0)
                         << "', integers computed at "
                            "run time "
                         << in.origin << ", is empty";
    runtimeInts[curNode->output(0)] = RuntimeInt{*sliced, in.lo, in.hi, std::nullopt, in.origin};
    return success();
  }
  if (op == "Expand" && at == 0) {
    auto type = outType();
    if (failed(type))
      return failure();
    runtimeInts[curNode->output(0)] =
        RuntimeInt{broadcastTo(b, curLoc, in.value, *type), in.lo, in.hi, std::nullopt, in.origin};
    return success();
  }
  if (op == "Neg") {
    auto type = outType();
    if (failed(type))
      return failure();
    auto minusOne = arith::ConstantOp::create(
        b, curLoc, RankedTensorType::get({}, f32),
        DenseElementsAttr::get(RankedTensorType::get({}, f32), -1.0f));
    return setRuntimeInt(MulOp::create(b, curLoc, *type, in.value, minusOne), -in.hi, -in.lo, in.origin);
  }
  if (op == "CumSum" && at == 0) {
    auto sum = buildCumSum(*this, in.value, in.value.getType());
    if (failed(sum))
      return failure();
    auto cumsum = sum->getDefiningOp<CumSumOp>();
    // The sum of k of the values, k from 0 or 1 to the axis' extent n: between
    // the extremes of k lo and k hi at k = 0, 1 and n (linear in k).
    const double n = static_cast<double>(shapeOf(in.value)[cumsum.getAxis()]);
    double lo = std::min(in.lo, n * in.lo), hi = std::max(in.hi, n * in.hi);
    if (cumsum.getExclusive()) { // k = 0: the first sum is 0
      lo = std::min(lo, 0.0);
      hi = std::max(hi, 0.0);
    }
    return setRuntimeInt(*sum, lo, hi, in.origin);
  }
  if (op == "OneHot" || op == "ScatterElements") {
    bool ok = false;
    if (failed(importRuntimeIndexed(in, at, ok)))
      return failure();
    if (ok)
      return success();
  }
  if (op == "Add" || op == "Sub" || op == "Mul") {
    // Each operand a RuntimeInt or an integer constant (as float, broadcast).
    Value operand[2];
    double lo[2], hi[2];
    for (int i = 0; i < 2; ++i) {
      if (failed(integerOperand(i, operand[i], lo[i], hi[i],
                                "float arithmetic on integers (how mgs computes the run-time "
                                "integers of input " +
                                    std::to_string(at) + ") is no longer exact")))
        return failure();
      if (!operand[i])
        return emitError() << "input " << i << " ('" << curNode->input(i)
                           << "') is neither an INT64 or INT32 constant nor integers computed at "
                              "run time "
                           << in.origin << ", which input " << 1 - i
                           << " is; mgs adds and multiplies such integers only with "
                              "each other and with integer constants";
    }
    auto type = outType();
    if (failed(type))
      return failure();
    if (op == "Add")
      return setRuntimeInt(AddOp::create(b, curLoc, *type, operand[0], operand[1]), lo[0] + lo[1],
                           hi[0] + hi[1], in.origin);
    if (op == "Sub")
      return setRuntimeInt(SubOp::create(b, curLoc, *type, operand[0], operand[1]), lo[0] - hi[1],
                           hi[0] - lo[1], in.origin);
    const double products[] = {lo[0] * lo[1], lo[0] * hi[1], hi[0] * lo[1], hi[0] * hi[1]};
    return setRuntimeInt(MulOp::create(b, curLoc, *type, operand[0], operand[1]),
                         *llvm::min_element(products), *llvm::max_element(products), in.origin);
  }
  InFlightDiagnostic diag = emitError();
  diag << "its input '" << curNode->input(at) << "' holds integers computed at run time "
       << in.origin
       << "; mgs supports Cast, CumSum, Add, Sub, Mul, Neg, Reshape, Unsqueeze, Squeeze, "
          "Flatten, Identity, Expand, Slice, one-input Max, Min and Concat on them, comparisons "
          "of them (Equal, Less, Greater, ...), OneHot of them, and "
          "Gather, GatherND, GatherElements and ScatterElements reading them as indices";
  // transformers' mixtures of experts loop over the experts that received
  // tokens (one_hot, torch.where, index_add_) unless told otherwise.
  if (op == "NonZero" && in.origin == "by TopK")
    diag << " (a mixture of experts' loop over its experts, one-hot of the routing: export the "
            "model after model.set_experts_implementation(\"batched_mm\"), which gathers each "
            "token's experts' weights instead)";
  return diag;
}

} // namespace mgs::onnx_import
