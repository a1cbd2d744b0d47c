//===- ConstantFoldingIndexing.cpp - Gathers, scatters, NonZero, CumSum ---===//
//
// The import-time evaluation of the indexing and scan ops transformers'
// masking code applies to constant position ids and buffers: BERT's
// token_type_ids read by GatherElements, packed-sequence detection by CumSum,
// position ids gathered by GatherND (FoldEvaluator.h).
//
//===----------------------------------------------------------------------===//

#include "FoldEvaluator.h"

using llvm::SmallVector;

namespace mgs::onnx_import::fold {

namespace {

/// `i` made non-negative for a dimension of `size`; false when out of range.
bool wrapIndex(int64_t &i, int64_t size) {
  if (i < -size || i >= size)
    return false;
  if (i < 0)
    i += size;
  return true;
}

std::string outOfRange(int64_t i, int64_t axis, int64_t size) {
  return "index " + std::to_string(i) + " is out of range for dimension " + std::to_string(axis) +
         " of size " + std::to_string(size);
}

} // namespace

bool Folder::elementPlaces(const HostTensor &idx, llvm::ArrayRef<int64_t> dims,
                           SmallVector<int64_t> &places) {
  if (idx.kind != Kind::Int)
    return fail("input 1 must be integers");
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (idx.rank() != rank)
    return fail("indices have rank " + std::to_string(idx.rank()) + ", data rank " +
                std::to_string(rank));
  int64_t axis = intAttr("axis", 0);
  if (!normalize(axis, rank, "axis"))
    return false;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && idx.dims[d] > dims[d])
      return fail("indices' dimension " + std::to_string(d) + " (" + std::to_string(idx.dims[d]) +
                  ") exceeds the data's (" + std::to_string(dims[d]) + ")");
  const SmallVector<int64_t> idxStrides = stridesOf(idx.dims), dataStrides = stridesOf(dims);
  places.clear();
  for (int64_t i = 0; i < idx.size(); ++i) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = (i / idxStrides[d]) % idx.dims[d];
      if (d == axis) {
        c = idx.ints[i];
        if (!wrapIndex(c, dims[axis]))
          return fail(outOfRange(idx.ints[i], axis, dims[axis]));
      }
      at += c * dataStrides[d];
    }
    places.push_back(at);
  }
  return true;
}

bool Folder::gatherElements(HostTensor &r) {
  HostTensor data, idx;
  SmallVector<int64_t> places;
  if (!input(0, data) || !input(1, idx) || !elementPlaces(idx, data.dims, places))
    return false;
  r.kind = data.kind;
  r.dims = idx.dims;
  for (int64_t place : places)
    r.append(data, place);
  return true;
}

bool Folder::gatherND(HostTensor &r) {
  HostTensor data, idx;
  if (!input(0, data) || !input(1, idx))
    return false;
  if (idx.kind != Kind::Int)
    return fail("input 1 must be integers");
  if (intAttr("batch_dims", 0) != 0)
    return fail("batch_dims " + std::to_string(intAttr("batch_dims", 0)) +
                " is not evaluated at import (0 only)");
  if (idx.rank() < 1)
    return fail("indices must have rank 1 or more");
  const int64_t depth = idx.dims.back();
  if (depth < 1 || depth > data.rank())
    return fail("indices' last dimension " + std::to_string(depth) +
                " must be in [1, the data's rank " + std::to_string(data.rank()) + "]");
  r.kind = data.kind;
  r.dims.assign(idx.dims.begin(), idx.dims.end() - 1);
  r.dims.append(data.dims.begin() + depth, data.dims.end());
  if (!checkRank(r.rank()) || !checkSize(r.dims))
    return false;
  const int64_t slice = countOf(llvm::ArrayRef<int64_t>(data.dims).drop_front(depth));
  const SmallVector<int64_t> dataStrides = stridesOf(data.dims);
  for (int64_t t = 0; t < idx.size() / depth; ++t) {
    int64_t src = 0;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t c = idx.ints[t * depth + d];
      if (!wrapIndex(c, data.dims[d]))
        return fail(outOfRange(idx.ints[t * depth + d], d, data.dims[d]));
      src += c * dataStrides[d];
    }
    for (int64_t k = 0; k < slice; ++k)
      r.append(data, src + k);
  }
  return true;
}

bool Folder::scatterReduction(Reduction &reduction) {
  const std::string name = attr("reduction") ? attr("reduction")->s() : "none";
  static constexpr std::pair<llvm::StringLiteral, Reduction> kNames[] = {{"none", Reduction::None},
                                                                         {"add", Reduction::Add},
                                                                         {"mul", Reduction::Mul},
                                                                         {"max", Reduction::Max},
                                                                         {"min", Reduction::Min}};
  for (const auto &[known, value] : kNames)
    if (name == known) {
      reduction = value;
      return true;
    }
  return fail("unsupported reduction '" + name + "'");
}

bool Folder::scatterElements(HostTensor &r) {
  HostTensor idx, updates;
  if (!input(0, r) || !input(1, idx) || !input(2, updates))
    return false;
  Reduction reduction;
  SmallVector<int64_t> places;
  if (!scatterReduction(reduction) || !elementPlaces(idx, r.dims, places))
    return false;
  if (updates.kind != r.kind || idx.dims != updates.dims)
    return fail("updates must have the indices' shape and the data's dtype");
  for (auto [i, place] : llvm::enumerate(places))
    r.combine(reduction, place, updates, static_cast<int64_t>(i));
  return true;
}

bool Folder::nonZero(HostTensor &r) {
  HostTensor data;
  if (!input(0, data))
    return false;
  SmallVector<int64_t> hits;
  for (int64_t i = 0; i < data.size(); ++i)
    if (data.isFloat() ? data.floats[i] != 0.0f : data.ints[i] != 0)
      hits.push_back(i);
  // [rank, hits]: row d holds each hit's coordinate d (a scalar's result
  // is [0, hits], no rows).
  const int64_t rank = data.rank(), count = static_cast<int64_t>(hits.size());
  r.kind = Kind::Int;
  r.dims = {rank, count};
  const SmallVector<int64_t> strides = stridesOf(data.dims);
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t hit : hits)
      r.ints.push_back(hit / strides[d] % data.dims[d]);
  return true;
}

bool Folder::cumSum(HostTensor &r) {
  SmallVector<int64_t> axisValue;
  if (!input(0, r) || !ints(1, axisValue))
    return false;
  if (r.kind == Kind::Bool)
    return fail("CumSum does not take a BOOL input");
  if (axisValue.size() != 1)
    return fail("axis must hold one value, got " + std::to_string(axisValue.size()));
  int64_t axis = axisValue[0];
  if (!normalize(axis, r.rank(), "axis"))
    return false;
  const bool exclusive = intAttr("exclusive", 0) != 0, reverse = intAttr("reverse", 0) != 0;
  const int64_t size = r.dims[axis];
  const int64_t inner = countOf(llvm::ArrayRef<int64_t>(r.dims).drop_front(axis + 1));
  const int64_t outer = size == 0 ? 0 : r.size() / (size * inner);
  // One running sum along the axis for each (outer, inner) position, from
  // the axis' end when reversed; exclusive sums leave out the element itself.
  auto scan = [&](auto &values) {
    using T = std::decay_t<decltype(values[0])>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        T sum = 0;
        for (int64_t k = 0; k < size; ++k) {
          const int64_t at = (o * size + (reverse ? size - 1 - k : k)) * inner + in;
          const T x = values[at];
          if constexpr (std::is_integral_v<T>) {
            if (__builtin_add_overflow(sum, x, &sum))
              return fail("integer overflow in CumSum");
            values[at] = exclusive ? sum - x : sum;
          } else {
            values[at] = exclusive ? sum : sum + x;
            sum += x;
          }
        }
      }
    return true;
  };
  return r.isFloat() ? scan(r.floats) : scan(r.ints);
}

bool Folder::reduce(HostTensor &r) {
  HostTensor x;
  if (!input(0, x))
    return false;
  if (x.kind == Kind::Bool)
    return fail(node.op_type() + " does not take a BOOL input");
  SmallVector<int64_t> axes;
  if (hasInput(1)) {
    if (!ints(1, axes))
      return false;
  } else if (const onnx::AttributeProto *a = attr("axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  const bool keepDims = intAttr("keepdims", 1) != 0;
  if (axes.empty() && intAttr("noop_with_empty_axes", 0) != 0) {
    r = std::move(x);
    return true;
  }
  SmallVector<bool> reduced(x.rank(), axes.empty());
  for (int64_t axis : axes) {
    if (!normalize(axis, x.rank(), "axis"))
      return false;
    reduced[axis] = true;
  }
  r = HostTensor{};
  r.kind = x.kind;
  // Each element's position in the result: its coordinates, the reduced
  // ones dropped.
  SmallVector<int64_t> outDims;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!reduced[d] || keepDims)
      outDims.push_back(reduced[d] ? 1 : x.dims[d]);
  SmallVector<int64_t> kept(x.dims);
  for (int64_t d = 0; d < x.rank(); ++d)
    if (reduced[d])
      kept[d] = 1;
  const SmallVector<int64_t> keptStrides = stridesOf(kept);
  const int64_t count = countOf(kept);
  if (x.size() == 0 && node.op_type() != "ReduceSum" && node.op_type() != "ReduceProd")
    return fail(node.op_type() + " of no elements");
  const std::string &op = node.op_type();
  auto run = [&](const auto &in, auto &out) {
    using T = std::decay_t<decltype(in[0])>;
    out.assign(count, op == "ReduceSum" ? T(0) : op == "ReduceProd" ? T(1) : T());
    std::vector<bool> seen(count, false);
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
      int64_t rest = i, at = 0;
      for (int64_t d = x.rank() - 1; d >= 0; --d) {
        const int64_t c = rest % x.dims[d];
        rest /= x.dims[d];
        if (!reduced[d])
          at += c * keptStrides[d];
      }
      T &acc = out[at];
      if (op == "ReduceSum") {
        if constexpr (std::is_integral_v<T>) {
          if (__builtin_add_overflow(acc, in[i], &acc))
            return fail("integer overflow in ReduceSum");
        } else {
          acc += in[i];
        }
      } else if (op == "ReduceProd") {
        // (torch.var / std's unbiased count: the product of the reduced
        // dimensions, read from the shape.)
        if constexpr (std::is_integral_v<T>) {
          if (__builtin_mul_overflow(acc, in[i], &acc))
            return fail("integer overflow in ReduceProd");
        } else {
          acc *= in[i];
        }
      } else if (!seen[at] || (op == "ReduceMax" ? in[i] > acc : in[i] < acc)) {
        acc = in[i];
      }
      seen[at] = true;
    }
    return true;
  };
  if (!(x.isFloat() ? run(x.floats, r.floats) : run(x.ints, r.ints)))
    return false;
  r.dims = outDims;
  return true;
}

} // namespace mgs::onnx_import::fold
