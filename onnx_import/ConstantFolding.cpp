//===- ConstantFolding.cpp - Shape arithmetic evaluated at import ---------===//

#include "ConstantFolding.h"
#include "FoldEvaluator.h"
#include "OnnxNodes.h"

#include "llvm/ADT/STLExtras.h"

#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cstdint>

namespace mgs::onnx_import {
namespace fold {

using llvm::SmallVector;

int64_t countOf(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims) {
  SmallVector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

bool Folder::normalize(int64_t &axis, int64_t rank, const char *what, bool inclusive) {
  const int64_t hi = inclusive ? rank : rank - 1;
  if (axis < -rank - (inclusive ? 1 : 0) || axis > hi)
    return fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  if (axis < 0)
    axis += rank + (inclusive ? 1 : 0);
  return true;
}

bool Folder::checkSize(llvm::ArrayRef<int64_t> dims) {
  const int64_t count = countOf(dims);
  if (count <= kMaxValues)
    return true;
  return fail("the result would hold " + std::to_string(count) +
              " values; mgs evaluates at most 2^24 at import");
}

bool Folder::checkRank(int64_t rank) {
  if (rank <= kMaxRank)
    return true;
  return fail("the result would have rank " + std::to_string(rank) +
              "; mgs evaluates at most rank " + std::to_string(kMaxRank) + " at import");
}

bool Folder::input(int i, HostTensor &t) {
  if (!hasInput(i))
    return fail("input " + std::to_string(i) + " is missing");
  const onnx::TensorProto *p = ctx.constant(node.input(i));
  if (!p) {
    notConstant = true;
    return false;
  }
  return read(*p, "input " + std::to_string(i) + " ('" + node.input(i) + "')", t);
}

bool Folder::read(const onnx::TensorProto &p, const std::string &what, HostTensor &t) {
  t = HostTensor();
  t.dims.assign(p.dims().begin(), p.dims().end());
  const int type = p.data_type();
  if (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32 ||
      type == onnx::TensorProto::BOOL || narrowIntType(type)) {
    std::optional<std::vector<int64_t>> ints = tensorInts(&p);
    if (!ints)
      return fail(what + " holds data of another size than its shape says");
    t.ints = std::move(*ints);
    if (type == onnx::TensorProto::BOOL)
      t.kind = Kind::Bool;
  } else if (type == onnx::TensorProto::FLOAT) {
    t.floats = onnx::ParseData<float>(&p);
    t.kind = Kind::Float;
  } else if (type == onnx::TensorProto::DOUBLE) {
    // Read rounded to FLOAT, as the Cast to FLOAT that follows PyTorch's double scalars
    // (Swin V2's log(1 / 0.01) bound) rounds it; arithmetic on it is then in FLOAT.
    std::vector<double> v = onnx::ParseData<double>(&p);
    t.floats.assign(v.begin(), v.end());
    t.kind = Kind::Float;
  } else {
    return fail(what + " has a dtype mgs does not evaluate at import (FLOAT, DOUBLE, BOOL and "
                       "the integer types only)");
  }
  if (t.size() != countOf(t.dims))
    return fail(what + " holds " + std::to_string(t.size()) + " values for its shape of " +
                std::to_string(countOf(t.dims)));
  return true;
}

bool Folder::ints(int i, SmallVector<int64_t> &v) {
  HostTensor t;
  if (!input(i, t))
    return false;
  if (t.kind != Kind::Int)
    return fail("input " + std::to_string(i) + " must be integers");
  v.assign(t.ints.begin(), t.ints.end());
  return true;
}

bool Folder::staticDims(SmallVector<int64_t> &dims) {
  std::optional<SmallVector<int64_t>> found;
  if (const onnx::TensorProto *p = hasInput(0) ? ctx.constant(node.input(0)) : nullptr)
    found = SmallVector<int64_t>(p->dims().begin(), p->dims().end());
  else if (hasInput(0))
    found = ctx.staticShape(node.input(0));
  if (!found)
    return fail("the shape of input 0 ('" + (hasInput(0) ? node.input(0) : std::string()) +
                "') is not static after ONNX shape inference");
  dims = std::move(*found);
  return true;
}

bool Folder::shape(HostTensor &r) {
  SmallVector<int64_t> dims;
  if (!staticDims(dims))
    return false;
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto clampAxis = [&](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t(0), rank); };
  const int64_t start = clampAxis(intAttr("start", 0)), end = clampAxis(intAttr("end", rank));
  r.dims = {std::max<int64_t>(0, end - start)};
  for (int64_t d = start; d < end; ++d)
    r.ints.push_back(dims[d]);
  return true;
}

bool Folder::size(HostTensor &r) {
  SmallVector<int64_t> dims;
  if (!staticDims(dims))
    return false;
  r.ints = {countOf(dims)};
  return true;
}

bool Folder::gather(HostTensor &r) {
  HostTensor data;
  SmallVector<int64_t> idx;
  if (!input(0, data) || !ints(1, idx))
    return false;
  const onnx::TensorProto *ip = ctx.constant(node.input(1));
  SmallVector<int64_t> idxDims(ip->dims().begin(), ip->dims().end());
  int64_t axis = intAttr("axis", 0);
  if (!normalize(axis, data.rank(), "axis"))
    return false;
  const int64_t size = data.dims[axis];
  for (int64_t &i : idx) {
    if (i < -size || i >= size)
      return fail("index " + std::to_string(i) + " is out of range for dimension " +
                  std::to_string(axis) + " of size " + std::to_string(size));
    if (i < 0)
      i += size;
  }
  const int64_t outer = countOf(llvm::ArrayRef<int64_t>(data.dims).take_front(axis));
  const int64_t inner = countOf(llvm::ArrayRef<int64_t>(data.dims).drop_front(axis + 1));
  r.kind = data.kind;
  r.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  r.dims.append(idxDims.begin(), idxDims.end());
  r.dims.append(data.dims.begin() + axis + 1, data.dims.end());
  if (!checkSize(r.dims))
    return false;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx)
      for (int64_t in = 0; in < inner; ++in)
        r.append(data, (o * size + i) * inner + in);
  return true;
}

bool Folder::unsqueeze(HostTensor &r) {
  if (!input(0, r))
    return false;
  SmallVector<int64_t> axes;
  if (ctx.opset >= 13) {
    if (!ints(1, axes))
      return false;
  } else if (const onnx::AttributeProto *a = attr("axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  const int64_t outRank = r.rank() + static_cast<int64_t>(axes.size());
  if (!checkRank(outRank))
    return false;
  for (int64_t &a : axes)
    if (!normalize(a, outRank, "axis"))
      return false;
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return fail("axes repeat");
  for (int64_t a : axes)
    r.dims.insert(r.dims.begin() + a, 1);
  return true;
}

bool Folder::squeeze(HostTensor &r) {
  if (!input(0, r))
    return false;
  SmallVector<int64_t> axes;
  if (ctx.opset >= 13) {
    if (hasInput(1) && !ints(1, axes))
      return false;
  } else if (const onnx::AttributeProto *a = attr("axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  SmallVector<bool> drop(r.dims.size(), axes.empty());
  for (int64_t a : axes) {
    if (!normalize(a, r.rank(), "axis"))
      return false;
    if (r.dims[a] != 1)
      return fail("cannot squeeze dimension " + std::to_string(a) + " of size " +
                  std::to_string(r.dims[a]));
    drop[a] = true;
  }
  SmallVector<int64_t> dims;
  for (auto [d, size] : llvm::enumerate(r.dims))
    if (!drop[d] || size != 1)
      dims.push_back(size);
  r.dims = dims;
  return true;
}

bool Folder::concat(HostTensor &r) {
  SmallVector<HostTensor> parts(node.input_size());
  for (int i = 0; i < node.input_size(); ++i)
    if (!input(i, parts[i]))
      return false;
  if (parts.empty())
    return fail("no inputs");
  int64_t axis = intAttr("axis", 0);
  if (!normalize(axis, parts[0].rank(), "axis"))
    return false;
  r.kind = parts[0].kind;
  r.dims = parts[0].dims;
  r.dims[axis] = 0;
  for (const HostTensor &p : parts) {
    bool same = p.rank() == parts[0].rank() && p.kind == parts[0].kind;
    for (int64_t d = 0; same && d < p.rank(); ++d)
      same = d == axis || p.dims[d] == parts[0].dims[d];
    if (!same)
      return fail("inputs differ in dtype, rank or a dimension other than the axis");
    r.dims[axis] += p.dims[axis];
  }
  if (!checkSize(r.dims))
    return false;
  const int64_t outer = countOf(llvm::ArrayRef<int64_t>(r.dims).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor &p : parts) {
      const int64_t chunk = countOf(llvm::ArrayRef<int64_t>(p.dims).drop_front(axis));
      for (int64_t k = 0; k < chunk; ++k)
        r.append(p, o * chunk + k);
    }
  return true;
}

bool Folder::tile(HostTensor &r) {
  HostTensor data;
  SmallVector<int64_t> repeats;
  if (!input(0, data) || !ints(1, repeats))
    return false;
  if (static_cast<int64_t>(repeats.size()) != data.rank())
    return fail("repeats holds " + std::to_string(repeats.size()) + " values for an input of rank " +
                std::to_string(data.rank()));
  r.kind = data.kind;
  r.dims.clear();
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (repeats[d] < 0)
      return fail("repeats holds a negative value " + std::to_string(repeats[d]));
    r.dims.push_back(data.dims[d] * repeats[d]);
  }
  if (!checkSize(r.dims))
    return false;
  const int64_t count = countOf(r.dims);
  SmallVector<int64_t> outStrides = stridesOf(r.dims), inStrides = stridesOf(data.dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < data.rank(); ++d)
      src += (i / outStrides[d]) % r.dims[d] % data.dims[d] * inStrides[d];
    r.append(data, src);
  }
  return true;
}

bool Folder::expand(HostTensor &r) {
  HostTensor data;
  SmallVector<int64_t> shape;
  if (!input(0, data) || !ints(1, shape))
    return false;
  // NumPy broadcasting of data's shape against `shape`.
  const int64_t rank = std::max<int64_t>(data.rank(), static_cast<int64_t>(shape.size()));
  if (!checkRank(rank))
    return false;
  r.kind = data.kind;
  r.dims.assign(rank, 1);
  SmallVector<int64_t> inDims(rank, 1);
  for (int64_t d = 0; d < data.rank(); ++d)
    inDims[rank - data.rank() + d] = data.dims[d];
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t s = d >= rank - static_cast<int64_t>(shape.size())
                          ? shape[d - (rank - static_cast<int64_t>(shape.size()))]
                          : 1;
    if (s < 0)
      return fail("shape holds a negative dimension " + std::to_string(s));
    if (inDims[d] != 1 && s != 1 && s != inDims[d])
      return fail("cannot broadcast dimension " + std::to_string(d) + " of size " +
                  std::to_string(inDims[d]) + " to " + std::to_string(s));
    r.dims[d] = inDims[d] == 1 ? s : inDims[d];
  }
  if (!checkSize(r.dims))
    return false;
  const int64_t count = countOf(r.dims);
  SmallVector<int64_t> outStrides = stridesOf(r.dims), inStrides = stridesOf(inDims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t c = (i / outStrides[d]) % r.dims[d];
      src += (inDims[d] == 1 ? 0 : c) * inStrides[d];
    }
    r.append(data, src);
  }
  return true;
}

bool Folder::constantOfShape(HostTensor &r) {
  SmallVector<int64_t> shape;
  if (!ints(0, shape))
    return false;
  for (int64_t s : shape)
    if (s < 0)
      return fail("shape holds a negative dimension " + std::to_string(s));
  // The value: one element of any dtype read() takes (BOOL for transformers'
  // masks), FLOAT 0 by default.
  HostTensor value;
  value.kind = Kind::Float;
  value.floats = {0.0f};
  if (const onnx::AttributeProto *a = attr("value")) {
    if (!read(a->t(), "its value", value))
      return false;
    if (value.size() != 1)
      return fail("its value must hold one element, got " + std::to_string(value.size()));
  }
  r.kind = value.kind;
  r.dims = shape;
  if (!checkRank(static_cast<int64_t>(shape.size())) || !checkSize(r.dims))
    return false;
  const int64_t count = countOf(shape);
  for (int64_t i = 0; i < count; ++i)
    r.append(value, 0);
  return true;
}

bool Folder::flatten(HostTensor &r) {
  if (!input(0, r))
    return false;
  int64_t axis = intAttr("axis", 1);
  if (!normalize(axis, r.rank(), "axis", /*inclusive=*/true))
    return false;
  llvm::ArrayRef<int64_t> dims(r.dims);
  r.dims = {countOf(dims.take_front(axis)), countOf(dims.drop_front(axis))};
  return true;
}

bool Folder::slice(HostTensor &r) {
  HostTensor data;
  SmallVector<int64_t> starts, ends, axes, steps;
  if (!input(0, data) || !ints(1, starts) || !ints(2, ends))
    return false;
  if (hasInput(3) && !ints(3, axes))
    return false;
  if (hasInput(4) && !ints(4, steps))
    return false;
  if (!steps.empty() && steps.size() != starts.size())
    return fail("starts and steps must have the same length, got " +
                std::to_string(starts.size()) + " and " + std::to_string(steps.size()));
  // The unit-step bounds (and the checks of axes), then the strided axes.
  SmallVector<int64_t> lo, hi;
  if (std::string problem = sliceBounds(data.dims, starts, ends, axes, {}, lo, hi);
      !problem.empty())
    return fail(problem);
  const int64_t rank = data.rank();
  SmallVector<int64_t> first(lo), step(rank, 1);
  r.kind = data.kind;
  r.dims.resize(rank);
  for (int64_t d = 0; d < rank; ++d)
    r.dims[d] = hi[d] - lo[d];
  for (auto [k, st] : llvm::enumerate(steps)) {
    if (st == 1)
      continue;
    if (st == 0)
      return fail("steps must be non-zero");
    int64_t axis = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (axis < 0)
      axis += rank;
    // ONNX's clamping: [0, dim] going forward, [-1, dim - 1] going backward.
    const int64_t dim = data.dims[axis];
    int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
    int64_t n = 0;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      n = e > s ? (e - s - 1) / st + 1 : 0;
    } else if (dim > 0) {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      n = s > e ? (st == INT64_MIN ? 1 : (s - e - 1) / -st + 1) : 0;
    }
    first[axis] = s;
    step[axis] = st;
    r.dims[axis] = n;
  }
  const int64_t count = countOf(r.dims);
  SmallVector<int64_t> outStrides = stridesOf(r.dims), inStrides = stridesOf(data.dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (first[d] + (i / outStrides[d]) % r.dims[d] * step[d]) * inStrides[d];
    r.append(data, src);
  }
  return true;
}

bool Folder::transpose(HostTensor &r) {
  HostTensor x;
  if (!input(0, x))
    return false;
  const int64_t rank = x.rank();
  SmallVector<int64_t> perm;
  if (const onnx::AttributeProto *a = attr("perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return fail("perm has " + std::to_string(perm.size()) + " entries for rank " +
                std::to_string(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return fail("perm is not a permutation of the " + std::to_string(rank) + " dimensions");
    seen[p] = true;
  }
  r.kind = x.kind;
  r.dims.resize(rank);
  for (int64_t d = 0; d < rank; ++d)
    r.dims[d] = x.dims[perm[d]];
  const int64_t count = countOf(r.dims);
  SmallVector<int64_t> outStrides = stridesOf(r.dims), inStrides = stridesOf(x.dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (i / outStrides[d]) % r.dims[d] * inStrides[perm[d]];
    r.append(x, src);
  }
  return true;
}

bool Folder::int32Result() const {
  const std::string &op = node.op_type();
  if (op == "Cast" || op == "CastLike")
    return castTo == onnx::TensorProto::INT32;
  if (op == "Shape" || op == "Size")
    return false;
  if (op == "ConstantOfShape") {
    const onnx::AttributeProto *value = attr("value");
    return value && value->t().data_type() == onnx::TensorProto::INT32;
  }
  const int data = op == "Where" ? 1 : 0;
  const onnx::TensorProto *c = hasInput(data) ? ctx.constant(node.input(data)) : nullptr;
  return c && c->data_type() == onnx::TensorProto::INT32;
}

FoldResult Folder::run(onnx::TensorProto &out) {
  HostTensor r;
  const std::string &op = node.op_type();
  bool ok;
  if (op == "Shape")
    ok = shape(r);
  else if (op == "Size")
    ok = size(r);
  else if (op == "Gather")
    ok = gather(r);
  else if (op == "Unsqueeze")
    ok = unsqueeze(r);
  else if (op == "Squeeze")
    ok = squeeze(r);
  else if (op == "Concat")
    ok = concat(r);
  else if (op == "Expand")
    ok = expand(r);
  else if (op == "ConstantOfShape")
    ok = constantOfShape(r);
  else if (op == "Flatten")
    ok = flatten(r);
  else if (op == "GatherElements")
    ok = gatherElements(r);
  else if (op == "GatherND")
    ok = gatherND(r);
  else if (op == "CumSum")
    ok = cumSum(r);
  else if (op == "ScatterElements")
    ok = scatterElements(r);
  else if (op == "NonZero")
    ok = nonZero(r);
  else if (op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd")
    ok = reduce(r);
  else if (op == "Slice")
    ok = slice(r);
  else if (op == "Transpose")
    ok = transpose(r);
  else if (llvm::is_contained(kElementwiseOps, op))
    ok = elementwise(r);
  else if (llvm::is_contained(kUnaryOps, op))
    ok = unary(r);
  else if (op == "Cast" || op == "CastLike")
    ok = cast(r);
  else if (op == "Where")
    ok = where(r);
  else if (op == "Range")
    ok = range(r);
  else if (op == "Reshape")
    ok = reshape(r);
  else if (op == "Identity")
    ok = identity(r);
  else if (op == "ScatterND")
    ok = scatterND(r);
  else if (op == "Trilu")
    ok = trilu(r);
  else if (op == "Tile")
    ok = tile(r);
  else if (op == "Clip")
    ok = clip(r);
  else
    ok = fail("not a foldable op");
  if (!ok)
    return error.empty() && notConstant ? FoldResult::NotConstant : FoldResult::Failed;
  out.Clear();
  out.set_name(node.output_size() ? node.output(0) : std::string());
  for (int64_t d : r.dims)
    out.add_dims(d);
  switch (r.kind) {
  case Kind::Float:
    out.set_data_type(onnx::TensorProto::FLOAT);
    out.mutable_float_data()->Add(r.floats.begin(), r.floats.end());
    break;
  case Kind::Int:
    if (int32Result()) {
      out.set_data_type(onnx::TensorProto::INT32);
      for (int64_t v : r.ints)
        out.add_int32_data(static_cast<int32_t>(v));
    } else {
      out.set_data_type(onnx::TensorProto::INT64);
      out.mutable_int64_data()->Add(r.ints.begin(), r.ints.end());
    }
    break;
  case Kind::Bool:
    out.set_data_type(onnx::TensorProto::BOOL);
    out.mutable_int32_data()->Add(r.ints.begin(), r.ints.end());
    break;
  }
  return FoldResult::Folded;
}

} // namespace fold

std::string sliceBounds(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> starts,
                        llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
                        llvm::ArrayRef<int64_t> steps, llvm::SmallVectorImpl<int64_t> &lo,
                        llvm::SmallVectorImpl<int64_t> &hi, llvm::SmallVectorImpl<int64_t> *step) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  llvm::SmallVector<int64_t> axisList(axes);
  if (axes.empty())
    for (int64_t a = 0; a < static_cast<int64_t>(starts.size()); ++a)
      axisList.push_back(a);
  if (starts.size() != ends.size() || starts.size() != axisList.size() ||
      (!steps.empty() && steps.size() != starts.size()))
    return "starts, ends, axes and steps must have the same length, got " +
           std::to_string(starts.size()) + ", " + std::to_string(ends.size()) + ", " +
           std::to_string(axisList.size()) + " and " + std::to_string(steps.size());
  for (int64_t st : steps) {
    if (st == 0)
      return "a step is 0";
    if (st != 1 && !step)
      return "step " + std::to_string(st) + " is not supported: steps of 1 only";
  }
  lo.assign(rank, 0);
  if (step)
    step->assign(rank, 1);
  hi.assign(dims.begin(), dims.end());
  llvm::SmallVector<bool> seen(rank, false);
  for (auto [k, axisIn] : llvm::enumerate(axisList)) {
    int64_t axis = axisIn;
    if (axis < -rank || axis >= rank)
      return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
    if (axis < 0)
      axis += rank;
    if (seen[axis])
      return "axes repeat";
    seen[axis] = true;
    const int64_t dim = dims[axis];
    auto clampIndex = [&](int64_t i) {
      if (i < 0)
        i = i < -dim ? 0 : i + dim;
      return std::min(i, dim);
    };
    if (step && !steps.empty())
      (*step)[axis] = steps[k];
    if (!steps.empty() && steps[k] < 0 && dim == 0) {
      lo[axis] = hi[axis] = 0;
      continue;
    }
    if (!steps.empty() && steps[k] < 0) {
      // Backwards: from start (clamped into [0, dim - 1]) down to just above
      // end (clamped into [-1, dim - 1]).
      auto clampBack = [&](int64_t i, int64_t least) {
        if (i < 0)
          i = i < -dim ? least : i + dim;
        return std::clamp<int64_t>(i, least, dim - 1);
      };
      lo[axis] = clampBack(starts[k], 0);
      hi[axis] = std::min(lo[axis], clampBack(ends[k], -1));
      continue;
    }
    lo[axis] = clampIndex(starts[k]);
    hi[axis] = std::max(lo[axis], clampIndex(ends[k]));
  }
  return "";
}

bool isFoldableOp(llvm::StringRef opType) {
  // clang-format off
  static constexpr llvm::StringLiteral kOps[] = {
      "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Expand", "ConstantOfShape", "Slice",
      "Size", "Cast", "Where", "Range", "Reshape", "Identity", "Transpose", "ScatterND", "Trilu",
      "CastLike", "Flatten", "GatherElements", "GatherND", "CumSum", "Tile", "Clip", "ReduceSum",
      "ReduceMax", "ReduceMin", "ReduceProd", "ScatterElements", "NonZero"};
  // clang-format on
  return llvm::is_contained(kOps, opType) || llvm::is_contained(fold::kElementwiseOps, opType) ||
         llvm::is_contained(fold::kUnaryOps, opType);
}

std::string scalarConstant(const onnx::NodeProto &node, onnx::TensorProto &out) {
  if (node.attribute_size() != 1)
    return "expected exactly one value attribute";
  const onnx::AttributeProto &attr = node.attribute(0);
  out.Clear();
  if (node.output_size())
    out.set_name(node.output(0));
  if (attr.name() == "value_float") {
    out.set_data_type(onnx::TensorProto::FLOAT);
    out.add_float_data(attr.f());
  } else if (attr.name() == "value_floats") {
    out.set_data_type(onnx::TensorProto::FLOAT);
    out.add_dims(attr.floats_size());
    out.mutable_float_data()->CopyFrom(attr.floats());
  } else if (attr.name() == "value_int") {
    out.set_data_type(onnx::TensorProto::INT64);
    out.add_int64_data(attr.i());
  } else if (attr.name() == "value_ints") {
    out.set_data_type(onnx::TensorProto::INT64);
    out.add_dims(attr.ints_size());
    out.mutable_int64_data()->CopyFrom(attr.ints());
  } else {
    return "unsupported attribute '" + attr.name() +
           "'; supported: value, value_float, value_floats, value_int, value_ints";
  }
  return "";
}

FoldResult foldNode(const onnx::NodeProto &node, const FoldContext &ctx, onnx::TensorProto &out,
                    std::string &error) {
  return fold::Folder(node, ctx, error).run(out);
}

} // namespace mgs::onnx_import
