//===- Attention.cpp - Converters of attention's masking ops ---------------===//
//
// Attention masks arrive as a Where whose condition the importer evaluated
// (a causal mask from Range/Equal on shapes, or a BOOL initializer): with
// the condition known, Where is a multiplication by a constant 0/1 mask and
// an addition of the fill, ops every target has, whose gradients are exact
// (the gradient is 0 where the fill is chosen). Expand of computed data
// (ViT's class token expanded over the batch) is a broadcasting add of zeros.
//
//===----------------------------------------------------------------------===//

#include "converters/Attention.h"
#include "converters/Indexing.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {
namespace {

/// `values` (row-major, of shape `from`) broadcast to `to` (numpy rules;
/// `from` is broadcastable to `to`).
std::vector<float> broadcastTo(ArrayRef<float> values, ArrayRef<int64_t> from,
                               ArrayRef<int64_t> to) {
  const size_t rank = to.size(), offset = rank - from.size();
  // The stride of each result axis in `values` (0 where it is broadcast).
  SmallVector<int64_t> strides(rank, 0);
  for (int64_t d = static_cast<int64_t>(from.size()) - 1, s = 1; d >= 0; --d) {
    strides[offset + d] = from[d] == 1 ? 0 : s;
    s *= from[d];
  }
  std::vector<float> out(numElements(to));
  SmallVector<int64_t> index(rank, 0);
  for (float &v : out) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += index[d] * strides[d];
    v = values[at];
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0 && ++index[d] == to[d]; --d)
      index[d] = 0;
  }
  return out;
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// A constant attn_mask (input 3 of Attention) as additive bias values:
/// a BOOL mask gives 0 where it is true (attend) and -inf where false, a
/// FLOAT mask its values. A last axis shorter than `keys` is padded with
/// -inf, as ONNX's reference does.
FailureOr<std::vector<float>> constantAttentionBias(NodeImporter &n, int64_t keys,
                                                     SmallVectorImpl<int64_t> &shape) {
  auto t = n.constantInput(3);
  if (failed(t))
    return failure();
  std::vector<float> bias;
  if ((*t)->data_type() == onnx::TensorProto::BOOL) {
    auto mask = conditionMask(n, shape, 3);
    if (failed(mask))
      return failure();
    for (float m : *mask)
      bias.push_back(m != 0.0f ? 0.0f : kNegInf);
  } else {
    auto values = n.constantFloats(3);
    if (failed(values))
      return failure();
    bias = std::move(*values);
    shape.assign((*t)->dims().begin(), (*t)->dims().end());
  }
  if (shape.empty() || shape.back() > keys)
    return n.emitError() << "attn_mask of shape " << shapeToString(shape)
                         << " must have a last axis of at most the " << keys << " keys";
  if (shape.back() < keys) {
    const int64_t given = shape.back();
    std::vector<float> padded;
    for (size_t row = 0; row < bias.size() / std::max<int64_t>(given, 1); ++row) {
      padded.insert(padded.end(), bias.begin() + row * given, bias.begin() + (row + 1) * given);
      padded.insert(padded.end(), keys - given, kNegInf);
    }
    bias = std::move(padded);
    shape.back() = keys;
  }
  return bias;
}

} // namespace

FailureOr<std::vector<float>> conditionMask(NodeImporter &n, SmallVectorImpl<int64_t> &shape,
                                            int input) {
  if (!n.inputIsConstant(input))
    return n.emitError() << "the condition '" << n.node().input(input)
                         << "' must be a constant (an initializer, a Constant node or shape "
                            "arithmetic on them, evaluated at import); here it is computed by "
                            "the graph";
  auto t = n.constantInput(input);
  if (failed(t))
    return failure();
  const onnx::TensorProto &tensor = **t;
  if (tensor.data_type() != onnx::TensorProto::BOOL)
    return n.emitError() << "the condition must be BOOL, got data type " << tensor.data_type();
  shape.assign(tensor.dims().begin(), tensor.dims().end());
  std::vector<float> mask;
  if (tensor.has_raw_data())
    for (char c : tensor.raw_data())
      mask.push_back(c != 0 ? 1.0f : 0.0f);
  else
    for (int32_t v : tensor.int32_data())
      mask.push_back(v != 0 ? 1.0f : 0.0f);
  if (static_cast<int64_t>(mask.size()) != numElements(shape))
    return n.emitError() << "the condition holds " << mask.size() << " values for shape "
                         << shapeToString(shape);
  return mask;
}

LogicalResult convertWhere(NodeImporter &n) {
  SmallVector<int64_t> condShape;
  auto mask = conditionMask(n, condShape);
  if (failed(mask))
    return failure();
  auto outType = n.outputType(0);
  if (failed(outType))
    return failure();
  ArrayRef<int64_t> outShape = outType->getShape();
  OpBuilder &b = n.builder();
  Location loc = n.loc();

  // The constant branches' values where the condition chooses them, at the
  // shape they and the condition broadcast to (a mask's T x T, not the
  // scores' N x T x T); the data branches times their mask, summed.
  SmallVector<int64_t> fillShape(condShape);
  for (int branch = 1; branch <= 2; ++branch) {
    if (!n.inputIsConstant(branch))
      continue;
    auto t = n.constantInput(branch);
    if (failed(t))
      return failure();
    SmallVector<int64_t> shape((*t)->dims().begin(), (*t)->dims().end());
    auto joined = broadcastShapes(fillShape, shape);
    if (!joined || !isUnidirectionallyBroadcastable(*joined, outShape))
      return n.emitError() << "input " << branch << " of shape " << shapeToString(shape)
                           << " does not broadcast to the result's " << shapeToString(outShape);
    fillShape = *joined;
  }
  std::vector<float> condFull = broadcastTo(*mask, condShape, fillShape);
  std::vector<float> fill(condFull.size(), 0.0f);
  bool anyFill = false;
  Value sum;
  for (int branch = 1; branch <= 2; ++branch) {
    const bool chosenWhenTrue = branch == 1;
    if (n.inputIsConstant(branch)) {
      auto t = n.constantInput(branch);
      auto values = n.constantFloats(branch);
      if (failed(t) || failed(values))
        return failure();
      SmallVector<int64_t> shape((*t)->dims().begin(), (*t)->dims().end());
      std::vector<float> full = broadcastTo(*values, shape, fillShape);
      for (size_t i = 0; i < full.size(); ++i)
        if ((condFull[i] != 0.0f) == chosenWhenTrue && full[i] != 0.0f) {
          fill[i] = full[i];
          anyFill = true;
        }
      continue;
    }
    auto x = n.input(branch);
    if (failed(x))
      return failure();
    std::vector<float> keep = *mask;
    if (!chosenWhenTrue)
      for (float &v : keep)
        v = 1.0f - v;
    auto xShape = cast<RankedTensorType>(x->getType()).getShape();
    auto shape = broadcastShapes(xShape, condShape);
    if (!shape || !isUnidirectionallyBroadcastable(*shape, outShape))
      return n.emitError() << "input " << branch << " of shape " << shapeToString(xShape)
                           << " and the condition of shape " << shapeToString(condShape)
                           << " do not broadcast to the result's " << shapeToString(outShape);
    // A branch the condition never chooses adds nothing (not even its NaNs,
    // as Where's semantics say); one it always chooses is taken as it is.
    if (llvm::all_of(keep, [](float v) { return v == 0.0f; }))
      continue;
    auto type = RankedTensorType::get(*shape, b.getF32Type());
    Value masked = xShape == ArrayRef<int64_t>(*shape) &&
                           llvm::all_of(keep, [](float v) { return v == 1.0f; })
                       ? *x
                       : Value(MulOp::create(b, loc, type, *x, f32Constant(n, condShape, keep)));
    if (sum) {
      auto sumShape = broadcastShapes(cast<RankedTensorType>(sum.getType()).getShape(), *shape);
      sum = AddOp::create(b, loc, RankedTensorType::get(*sumShape, b.getF32Type()), sum, masked);
    } else {
      sum = masked;
    }
  }
  Value result;
  if (!sum)
    result = f32Constant(n, outShape, broadcastTo(fill, fillShape, outShape));
  else if (anyFill || cast<RankedTensorType>(sum.getType()) != *outType)
    result = AddOp::create(b, loc, *outType, sum, f32Constant(n, fillShape, fill));
  else
    result = sum;
  n.setOutput(0, result);
  return success();
}

LogicalResult convertExpand(NodeImporter &n) {
  auto x = n.input(0);
  if (failed(x))
    return failure();
  auto shape = n.constantInts(1);
  auto outType = n.outputType(0);
  if (failed(shape) || failed(outType))
    return failure();
  n.setOutput(0, broadcastTo(n.builder(), n.loc(), *x, *outType));
  return success();
}

LogicalResult convertAttention(NodeImporter &n) {
  auto qIn = n.input(0), kIn = n.input(1), vIn = n.input(2);
  if (failed(qIn) || failed(kIn) || failed(vIn))
    return failure();
  if (n.hasOutput(3))
    return n.emitError() << "output 3 (qk_matmul_output, the attention scores) is not "
                            "supported; mgs computes Y, present_key and present_value";
  if (const onnx::AttributeProto *precision = n.findAttr("softmax_precision");
      precision && precision->i() != onnx::TensorProto::FLOAT)
    return n.emitError() << "unsupported value " << precision->i()
                         << " of attribute 'softmax_precision'; supported: 1 (float32, the "
                            "inputs' type)";
  const int64_t rank = shapeOf(*qIn).size();
  if ((rank != 3 && rank != 4) || shapeOf(*kIn).size() != static_cast<size_t>(rank) ||
      shapeOf(*vIn).size() != static_cast<size_t>(rank))
    return n.emitError() << "Q, K and V must all be 3-D (batch, sequence, heads x head size) or "
                            "all 4-D (batch, heads, sequence, head size), got ranks "
                         << rank << ", " << shapeOf(*kIn).size() << " and "
                         << shapeOf(*vIn).size();
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  Value q = *qIn, k = *kIn, v = *vIn;
  if (rank == 3) {
    // (batch, sequence, heads x size) -> (batch, heads, sequence, size).
    const int64_t qHeads = n.intAttr("q_num_heads", 0), kvHeads = n.intAttr("kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0)
      return n.emitError() << "3-D Q, K and V need positive attributes q_num_heads and "
                              "kv_num_heads, got "
                           << qHeads << " and " << kvHeads;
    for (auto [value, heads, name] :
         {std::tuple(&q, qHeads, "Q"), std::tuple(&k, kvHeads, "K"), std::tuple(&v, kvHeads, "V")}) {
      SmallVector<int64_t> s(shapeOf(*value));
      if (s[2] % heads != 0)
        return n.emitError() << name << "'s hidden size " << s[2] << " is not a multiple of its "
                             << heads << " heads";
      *value = permuteDims(b, loc, reshapeTo(n, *value, {s[0], s[1], heads, s[2] / heads}),
                           {0, 2, 1, 3});
    }
  }
  if (n.hasInput(4) != n.hasInput(5))
    return n.emitError() << "past_key and past_value must be given together";
  int64_t past = 0;
  if (n.hasInput(4)) {
    // The cache: present = concat(past, new) along the sequence.
    for (auto [value, input] : {std::pair(&k, 4), std::pair(&v, 5)}) {
      auto cached = n.input(input);
      if (failed(cached))
        return failure();
      ArrayRef<int64_t> c = shapeOf(*cached), s = shapeOf(*value);
      if (c.size() != 4 || c[0] != s[0] || c[1] != s[1] || c[3] != s[3])
        return n.emitError() << "input " << input << " of shape " << shapeToString(c)
                             << " does not extend the sequence of shape " << shapeToString(s);
      SmallVector<int64_t> joined(s);
      joined[2] += c[2];
      past = c[2];
      *value = ConcatOp::create(b, loc, RankedTensorType::get(joined, b.getF32Type()),
                                ValueRange{*cached, *value}, b.getI64IntegerAttr(2));
    }
  }
  const SmallVector<int64_t> qs(shapeOf(q)), ks(shapeOf(k)), vs(shapeOf(v));
  const int64_t batch = qs[0], qHeads = qs[1], queries = qs[2], size = qs[3];
  const int64_t kvHeads = ks[1], keys = ks[2], valueSize = vs[3];
  if (ks[0] != batch || vs[0] != batch || ks[3] != size || vs[1] != kvHeads || vs[2] != keys ||
      kvHeads <= 0 || qHeads % kvHeads != 0)
    return n.emitError() << "Q " << shapeToString(qs) << ", K " << shapeToString(ks) << " and V "
                         << shapeToString(vs)
                         << " (batch, heads, sequence, head size) do not match: K and V need Q's "
                            "batch, K Q's head size, V K's heads and sequence, and Q's heads "
                            "a multiple of K's";
  for (int output = 1; output <= 2; ++output)
    if (n.hasOutput(output))
      n.setOutput(output, output == 1 ? k : v);

  // The additive bias every score gets: the attn_mask (a constant, or data
  // added below), the causal mask and the padding of nonpad_kv_seqlen, all
  // known at import, as one constant broadcast to the scores.
  SmallVector<int64_t> biasShape{queries, keys};
  std::vector<float> maskBias;
  SmallVector<int64_t> maskShape;
  Value maskData;
  if (n.hasInput(3) && n.inputIsConstant(3)) {
    auto bias = constantAttentionBias(n, keys, maskShape);
    if (failed(bias))
      return failure();
    maskBias = std::move(*bias);
  } else if (n.hasInput(3)) {
    auto data = n.input(3);
    if (failed(data))
      return failure();
    if (!cast<RankedTensorType>(data->getType()).getElementType().isF32())
      return n.emitError() << "attn_mask '" << n.node().input(3)
                           << "' is computed by the graph and not FLOAT: a BOOL mask must be a "
                              "constant (evaluated at import)";
    maskData = *data;
  }
  SmallVector<int64_t> nonpad;
  if (n.hasInput(6)) {
    if (!n.inputIsConstant(6))
      return n.emitError() << "nonpad_kv_seqlen '" << n.node().input(6)
                           << "' must be a constant (evaluated at import); here it is computed "
                              "by the graph";
    auto lengths = n.constantInts(6);
    if (failed(lengths))
      return failure();
    if (static_cast<int64_t>(lengths->size()) != batch)
      return n.emitError() << "nonpad_kv_seqlen holds " << lengths->size() << " values for a batch of "
                           << batch;
    nonpad = *lengths;
    biasShape = {batch, 1, queries, keys};
  }
  const SmallVector<int64_t> fullScores{batch, qHeads, queries, keys};
  const SmallVector<int64_t> maskDataShape(maskData ? shapeOf(maskData) : ArrayRef<int64_t>());
  for (ArrayRef<int64_t> part : {ArrayRef<int64_t>(maskShape), ArrayRef<int64_t>(maskDataShape)}) {
    if (part.size() > 4 || !isUnidirectionallyBroadcastable(part, fullScores))
      return n.emitError() << "attn_mask of shape " << shapeToString(part)
                           << " does not broadcast to the scores' " << shapeToString(fullScores)
                           << " (batch, heads, queries, keys)";
    biasShape = *broadcastShapes(biasShape, part);
  }
  const bool causal = n.intAttr("is_causal", 0) != 0;
  std::vector<float> bias(numElements(biasShape), 0.0f);
  if (!maskBias.empty())
    bias = broadcastTo(maskBias, maskShape, biasShape);
  const size_t biasRank = biasShape.size();
  SmallVector<int64_t> index(biasRank, 0);
  for (float &value : bias) {
    const int64_t i = index[biasRank - 2], j = index[biasRank - 1];
    const int64_t b0 = biasRank == 4 ? index[0] : 0;
    // A query i attends key j <= i + offset (bottom-right aligned causal mask).
    const int64_t offset = nonpad.empty() ? past : nonpad[b0] - queries;
    if ((causal && j > i + offset) || (!nonpad.empty() && j >= nonpad[b0]))
      value += kNegInf;
    for (int64_t d = static_cast<int64_t>(biasRank) - 1; d >= 0 && ++index[d] == biasShape[d];
         --d)
      index[d] = 0;
  }
  // A row the constant bias masks entirely has no key to attend: its output
  // is 0 (ONNX's convention). Its bias row becomes 0 and its probabilities are
  // multiplied by 0, so the softmax stays finite and the gradient is 0 there.
  SmallVector<int64_t> rowShape(biasShape);
  rowShape.back() = 1;
  std::vector<float> rowKeep(bias.size() / keys, 1.0f);
  bool anyMaskedRow = false, anyBias = false;
  for (size_t row = 0; row < rowKeep.size(); ++row) {
    auto first = bias.begin() + row * keys, last = first + keys;
    if (std::all_of(first, last, [](float x) { return x == kNegInf; })) {
      std::fill(first, last, 0.0f);
      rowKeep[row] = 0.0f;
      anyMaskedRow = true;
    }
    anyBias = anyBias || std::any_of(first, last, [](float x) { return x != 0.0f; });
  }

  // Grouped-query attention without repeating K and V: Q's heads split into
  // (kv heads, group), K and V get a group axis of 1 that the matmuls
  // broadcast; query head h reads kv head h / group, as ONNX's repeat does.
  const int64_t group = qHeads / kvHeads;
  SmallVector<int64_t> scoresShape{batch, qHeads, queries, keys};
  auto toScoresRank = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> out(4 - shape.size(), 1);
    out.append(shape.begin(), shape.end());
    if (group > 1) {
      const int64_t heads = out[1];
      out[1] = heads == 1 ? 1 : kvHeads;
      out.insert(out.begin() + 2, heads == 1 ? 1 : group);
    }
    return out;
  };
  const float scale = n.floatAttr("scale", 1.0f / std::sqrt(static_cast<float>(size)));
  const float softcap = n.floatAttr("softcap", 0.0f);
  if (!std::isfinite(scale) || !std::isfinite(softcap))
    return n.emitError() << "scale and softcap must be finite, got " << scale << " and " << softcap;
  auto f32 = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, b.getF32Type()); };
  Value scaled = MulOp::create(b, loc, f32(qs), q, f32Scalar(n, scale));
  if (group > 1) {
    scaled = reshapeTo(n, scaled, {batch, kvHeads, group, queries, size});
    k = reshapeTo(n, k, {batch, kvHeads, 1, keys, size});
    v = reshapeTo(n, v, {batch, kvHeads, 1, keys, valueSize});
    scoresShape = {batch, kvHeads, group, queries, keys};
  }
  Value scores = MatMulOp::create(b, loc, f32(scoresShape), scaled, k, /*trans_lhs=*/false,
                                  /*trans_rhs=*/true);
  if (softcap > 0.0f) {
    Value capped = DivOp::create(b, loc, f32(scoresShape), scores, f32Scalar(n, softcap));
    capped = TanhOp::create(b, loc, f32(scoresShape), capped);
    scores = MulOp::create(b, loc, f32(scoresShape), capped, f32Scalar(n, softcap));
  }
  if (anyBias)
    scores = AddOp::create(b, loc, f32(scoresShape), scores,
                           f32Constant(n, toScoresRank(biasShape), bias));
  if (maskData)
    scores = AddOp::create(b, loc, f32(scoresShape), scores,
                           reshapeTo(n, maskData, toScoresRank(shapeOf(maskData))));
  Value probs = SoftmaxOp::create(b, loc, f32(scoresShape), scores,
                                  b.getI64IntegerAttr(scoresShape.size() - 1));
  if (anyMaskedRow)
    probs = MulOp::create(b, loc, f32(scoresShape), probs,
                          f32Constant(n, toScoresRank(rowShape), rowKeep));
  SmallVector<int64_t> outShape(scoresShape);
  outShape.back() = valueSize;
  Value out = MatMulOp::create(b, loc, f32(outShape), probs, v, false, false);
  if (group > 1)
    out = reshapeTo(n, out, {batch, qHeads, queries, valueSize});
  if (rank == 3)
    out = reshapeTo(n, permuteDims(b, loc, out, {0, 2, 1, 3}),
                    {batch, queries, qHeads * valueSize});
  auto yType = n.outputType(0);
  if (failed(yType))
    return failure();
  if (*yType != out.getType())
    return n.emitError() << "ONNX's shape inference gives Y the type " << *yType
                         << ", the computation " << out.getType();
  n.setOutput(0, out);
  return success();
}

LogicalResult convertRotaryEmbedding(NodeImporter &n) {
  auto xIn = n.input(0), cosIn = n.input(1), sinIn = n.input(2);
  auto yType = n.outputType(0);
  if (failed(xIn) || failed(cosIn) || failed(sinIn) || failed(yType))
    return failure();
  OpBuilder &b = n.builder();
  Location loc = n.loc();
  auto f32 = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, b.getF32Type()); };
  // Work in (batch, a, b, head size), the sequence at axis 1 (3-D input,
  // split into heads) or 2 (4-D: batch, heads, sequence, head size).
  const SmallVector<int64_t> given(shapeOf(*xIn));
  Value x = *xIn;
  int64_t seqAxis = 2;
  if (given.size() == 3) {
    const int64_t heads = n.intAttr("num_heads", 0);
    if (heads <= 0 || given[2] % heads != 0)
      return n.emitError() << "a 3-D input needs attribute num_heads dividing its hidden size "
                           << given[2] << ", got " << heads;
    x = reshapeTo(n, x, {given[0], given[1], heads, given[2] / heads});
    seqAxis = 1;
  } else if (given.size() != 4) {
    return n.emitError() << "the input must be 3-D (batch, sequence, hidden) or 4-D (batch, "
                            "heads, sequence, head size), got rank "
                         << given.size();
  }
  const SmallVector<int64_t> shape(shapeOf(x));
  const int64_t batch = shape[0], sequence = shape[seqAxis], size = shape[3];
  int64_t rotary = n.intAttr("rotary_embedding_dim", 0);
  if (rotary == 0)
    rotary = size;
  if (rotary < 2 || rotary > size || rotary % 2 != 0)
    return n.emitError() << "rotary_embedding_dim " << rotary
                         << " must be even and at most the head size " << size;
  const int64_t half = rotary / 2;
  // The caches as (batch, sequence, half): rows at position_ids, or as given.
  Value caches[2] = {*cosIn, *sinIn};
  for (Value &cache : caches) {
    if (n.hasInput(3)) {
      Value indices;
      if (std::optional<Value> data = n.indexInput(3)) {
        indices = *data;
      } else {
        auto at = n.constantInts(3);
        auto proto = n.constantInput(3);
        if (failed(at) || failed(proto))
          return failure();
        const int64_t rows = shapeOf(cache).empty() ? 0 : shapeOf(cache)[0];
        for (int64_t i : *at)
          if (i < 0 || i >= rows)
            return n.emitError() << "position id " << i << " is out of range for a cache of "
                                 << rows << " positions";
        auto type = RankedTensorType::get(
            SmallVector<int64_t>((*proto)->dims().begin(), (*proto)->dims().end()),
            b.getI64Type());
        indices = arith::ConstantOp::create(b, loc, type,
                                            DenseElementsAttr::get(type, ArrayRef<int64_t>(*at)));
      }
      if (shapeOf(cache).size() != 2)
        return n.emitError() << "with position_ids the caches must be 2-D (positions, "
                                "rotary_embedding_dim / 2), got "
                             << shapeToString(shapeOf(cache));
      cache = gatherAlongAxis(b, loc, cache, 0, indices);
    }
    if (shapeOf(cache) != ArrayRef<int64_t>{batch, sequence, half})
      return n.emitError() << "the caches give " << shapeToString(shapeOf(cache))
                           << " where the input needs (batch, sequence, rotary_embedding_dim / "
                              "2) = "
                           << shapeToString({batch, sequence, half});
    // Broadcast over the heads: a unit axis where they are.
    cache = reshapeTo(n, cache,
                      seqAxis == 2 ? SmallVector<int64_t>{batch, 1, sequence, half}
                                   : SmallVector<int64_t>{batch, sequence, 1, half});
  }
  auto piece = [&](int64_t last) {
    SmallVector<int64_t> s(shape);
    s.back() = last;
    return s;
  };
  // x = [rotated part | the rest]; the rotated part's two halves, or its
  // even and odd elements (interleaved: pairs on a last axis of 2).
  SmallVector<Type> parts{f32(piece(rotary))};
  if (rotary < size)
    parts.push_back(f32(piece(size - rotary)));
  auto split = SplitOp::create(b, loc, parts, x, b.getI64IntegerAttr(3));
  Value rotate = split.getResult(0);
  const bool interleaved = n.intAttr("interleaved", 0) != 0;
  SmallVector<int64_t> pairShape(piece(half));
  pairShape.push_back(interleaved ? 2 : 1);
  Value x1, x2;
  if (interleaved) {
    SmallVector<int64_t> one(pairShape);
    one.back() = 1;
    auto pairs = SplitOp::create(b, loc, SmallVector<Type>(2, f32(one)),
                                 reshapeTo(n, rotate, pairShape), b.getI64IntegerAttr(4));
    x1 = reshapeTo(n, pairs.getResult(0), piece(half));
    x2 = reshapeTo(n, pairs.getResult(1), piece(half));
  } else {
    auto halves = SplitOp::create(b, loc, SmallVector<Type>(2, f32(piece(half))), rotate,
                                  b.getI64IntegerAttr(3));
    x1 = halves.getResult(0);
    x2 = halves.getResult(1);
  }
  auto halfType = f32(piece(half));
  auto mul = [&](Value p, Value q) { return MulOp::create(b, loc, halfType, p, q).getResult(); };
  // (x1 + i x2) (cos + i sin)
  Value real = SubOp::create(b, loc, halfType, mul(caches[0], x1), mul(caches[1], x2));
  Value imag = AddOp::create(b, loc, halfType, mul(caches[1], x1), mul(caches[0], x2));
  Value rotated;
  if (interleaved) {
    SmallVector<int64_t> one(pairShape);
    one.back() = 1;
    Value joined = ConcatOp::create(b, loc, f32(pairShape),
                                    ValueRange{reshapeTo(n, real, one), reshapeTo(n, imag, one)},
                                    b.getI64IntegerAttr(4));
    rotated = reshapeTo(n, joined, piece(rotary));
  } else {
    rotated = ConcatOp::create(b, loc, f32(piece(rotary)), ValueRange{real, imag},
                               b.getI64IntegerAttr(3));
  }
  Value y = rotated;
  if (rotary < size)
    y = ConcatOp::create(b, loc, f32(shape), ValueRange{rotated, split.getResult(1)},
                         b.getI64IntegerAttr(3));
  if (given.size() == 3)
    y = reshapeTo(n, y, given);
  if (*yType != y.getType())
    return n.emitError() << "ONNX's shape inference gives the output the type " << *yType
                         << ", the computation " << y.getType();
  n.setOutput(0, y);
  return success();
}

} // namespace mgs::onnx_import
