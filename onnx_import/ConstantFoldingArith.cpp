//===- ConstantFoldingArith.cpp - Arithmetic on shapes at import ----------===//
//
// What exporters compute on shape values besides gathering and concatenating
// them: PyTorch's MultiheadAttention divides the embedding width by the head
// count, ShuffleNet's chunk halves a channel count, a causal mask compares
// two Ranges, the attention scale is 1/sqrt of a Cast head width. ONNX
// semantics throughout: multidirectional broadcasting, integer Div
// truncating toward zero, Mod with the sign of the divisor unless fmod = 1;
// an integer overflow or division by zero is an error, not a wrapped value.
//
//===----------------------------------------------------------------------===//

#include "FoldEvaluator.h"
#include "OnnxNodes.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace mgs::onnx_import::fold {

using llvm::SmallVector;

namespace {

const char *kindName(Kind k) {
  switch (k) {
  case Kind::Int:
    return "an integer";
  case Kind::Float:
    return "a FLOAT";
  case Kind::Bool:
    return "a BOOL";
  }
  return "";
}

/// Visits every element of the broadcast result `dims`, with the offset of
/// the element it reads in each of `parts` (broadcast to `dims`).
template <typename Fn>
void forEachBroadcast(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<const HostTensor *> parts,
                      Fn fn) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  // Per part, the stride of each result dimension (0 where it broadcasts).
  SmallVector<SmallVector<int64_t>> strides;
  for (const HostTensor *p : parts) {
    SmallVector<int64_t> own = stridesOf(p->dims), s(rank, 0);
    for (int64_t d = 0; d < p->rank(); ++d)
      if (p->dims[d] != 1)
        s[rank - p->rank() + d] = own[d];
    strides.push_back(std::move(s));
  }
  const int64_t count = countOf(dims);
  SmallVector<int64_t> index(rank, 0), offsets(parts.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    fn(i, llvm::ArrayRef<int64_t>(offsets));
    // Advance the multi-index, last dimension fastest.
    for (int64_t d = rank - 1; d >= 0; --d) {
      for (size_t k = 0; k < parts.size(); ++k)
        offsets[k] += strides[k][d];
      if (++index[d] < dims[d])
        break;
      for (size_t k = 0; k < parts.size(); ++k)
        offsets[k] -= strides[k][d] * dims[d];
      index[d] = 0;
    }
  }
}

/// Integer `a op b`; false (with `why`) on overflow or division by zero.
bool intArith(llvm::StringRef op, int64_t a, int64_t b, bool fmod, int64_t &r, std::string &why) {
  bool overflow = false;
  if (op == "Add")
    overflow = __builtin_add_overflow(a, b, &r);
  else if (op == "Sub")
    overflow = __builtin_sub_overflow(a, b, &r);
  else if (op == "Mul")
    overflow = __builtin_mul_overflow(a, b, &r);
  else if (op == "Min")
    r = std::min(a, b);
  else if (op == "Max")
    r = std::max(a, b);
  else { // Div, Mod
    if (b == 0) {
      why = "division by zero (" + std::to_string(a) + " " + op.str() + " 0)";
      return false;
    }
    if (b == -1) { // INT64_MIN / -1 overflows; anything % -1 is 0
      overflow = op == "Div" && a == std::numeric_limits<int64_t>::min();
      r = op == "Div" && !overflow ? -a : 0;
    } else if (op == "Div") {
      r = a / b; // truncates toward zero, as ONNX's integer Div
    } else {
      r = a % b; // the sign of the dividend (fmod = 1)
      if (!fmod && r != 0 && (r < 0) != (b < 0))
        r += b; // the sign of the divisor (fmod = 0)
    }
  }
  if (overflow)
    why = "integer overflow in " + std::to_string(a) + " " + op.str() + " " + std::to_string(b);
  return !overflow;
}

float floatArith(llvm::StringRef op, float a, float b) {
  if (op == "Add")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (op == "Div")
    return a / b;
  if (op == "Mod")
    return std::fmod(a, b);
  if (op == "Pow")
    return std::pow(a, b);
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<float>::quiet_NaN();
  return op == "Min" ? std::min(a, b) : std::max(a, b);
}

/// The comparison `op` of two values of one kind.
template <typename T> bool compare(llvm::StringRef op, T a, T b) {
  if (op == "Equal")
    return a == b;
  if (op == "Less")
    return a < b;
  if (op == "Greater")
    return a > b;
  if (op == "LessOrEqual")
    return a <= b;
  return a >= b; // GreaterOrEqual
}

} // namespace

bool Folder::broadcastShape(llvm::ArrayRef<const HostTensor *> parts, SmallVector<int64_t> &dims) {
  int64_t rank = 0;
  for (const HostTensor *p : parts)
    rank = std::max(rank, p->rank());
  if (!checkRank(rank))
    return false;
  dims.assign(rank, 1);
  for (auto [k, p] : llvm::enumerate(parts))
    for (int64_t d = 0; d < p->rank(); ++d) {
      int64_t &out = dims[rank - p->rank() + d];
      const int64_t in = p->dims[d];
      if (in != 1 && out != 1 && in != out)
        return fail("input " + std::to_string(k) + "'s dimension " + std::to_string(d) +
                    " of size " + std::to_string(in) + " does not broadcast to " +
                    std::to_string(out));
      if (in != 1)
        out = in;
    }
  return checkSize(dims);
}

bool Folder::elementwise(HostTensor &r) {
  const std::string &op = node.op_type();
  const bool variadic = op == "Min" || op == "Max";
  const int count = node.input_size();
  if (variadic ? count < 1 : count != 2)
    return fail(op + " takes " + (variadic ? "one or more inputs" : "two inputs") + ", got " +
                std::to_string(count));
  SmallVector<HostTensor> in(count);
  SmallVector<const HostTensor *> parts;
  for (int i = 0; i < count; ++i) {
    if (!input(i, in[i]))
      return false;
    if (op == "Pow" && i == 1 && in[0].isFloat() && in[1].kind == Kind::Int) {
      // A FLOAT base to integer powers (BLOOM's ALiBi slopes): in float.
      in[1].kind = Kind::Float;
      in[1].floats.assign(in[1].ints.begin(), in[1].ints.end());
      in[1].ints.clear();
    }
    if (op == "Pow" && !in[0].isFloat())
      return fail("Pow of an integer base is not evaluated at import; mgs folds a FLOAT base");
    if (in[i].kind != in[0].kind)
      return fail("input " + std::to_string(i) + " is " + kindName(in[i].kind) +
                  " tensor, input 0 " + kindName(in[0].kind) + " one");
    parts.push_back(&in[i]);
  }
  const Kind kind = in[0].kind;
  const bool logical = op == "And" || op == "Or" || op == "Xor";
  static constexpr llvm::StringLiteral kComparisons[] = {"Equal", "Less", "Greater",
                                                         "LessOrEqual", "GreaterOrEqual"};
  const bool comparison = llvm::is_contained(kComparisons, op);
  if (logical != (kind == Kind::Bool) && !(op == "Equal" && kind == Kind::Bool))
    return fail(op + (logical ? " needs BOOL inputs" : " does not take BOOL inputs"));
  const bool fmod = intAttr("fmod", 0) != 0;
  if (op == "Mod" && kind == Kind::Float && !fmod)
    return fail("Mod of FLOAT inputs needs fmod = 1, as ONNX requires");
  if (!broadcastShape(parts, r.dims))
    return false;
  r.kind = comparison || logical ? Kind::Bool : kind;
  const int64_t n = countOf(r.dims);
  if (r.isFloat())
    r.floats.resize(n);
  else
    r.ints.resize(n);
  bool ok = true;
  forEachBroadcast(r.dims, parts, [&](int64_t i, llvm::ArrayRef<int64_t> at) {
    if (!ok)
      return;
    if (comparison) {
      r.ints[i] = kind == Kind::Float ? compare(op, in[0].floats[at[0]], in[1].floats[at[1]])
                                      : compare(op, in[0].ints[at[0]], in[1].ints[at[1]]);
    } else if (logical) {
      const bool a = in[0].ints[at[0]], b = in[1].ints[at[1]];
      r.ints[i] = op == "And" ? a && b : op == "Or" ? a || b : a != b;
    } else if (kind == Kind::Float) {
      float v = in[0].floats[at[0]];
      for (int k = 1; k < count; ++k)
        v = floatArith(op, v, in[k].floats[at[k]]);
      r.floats[i] = v;
    } else {
      int64_t v = in[0].ints[at[0]];
      for (int k = 1; ok && k < count; ++k)
        ok = intArith(op, v, in[k].ints[at[k]], fmod, v, error);
      r.ints[i] = v;
    }
  });
  return ok;
}

bool Folder::unary(HostTensor &r) {
  const std::string &op = node.op_type();
  if (!input(0, r))
    return false;
  if ((op == "Not") != (r.kind == Kind::Bool))
    return fail(op + (op == "Not" ? " needs a BOOL input" : " does not take a BOOL input"));
  if (r.kind == Kind::Int) {
    if (op == "Sign") { // DeBERTa's relative positions
      for (int64_t &v : r.ints)
        v = (v > 0) - (v < 0);
      return true;
    }
    if (op != "Neg" && op != "Abs")
      return fail(op + " needs a FLOAT input, got an integer one");
    for (int64_t &v : r.ints) {
      if (v == std::numeric_limits<int64_t>::min())
        return fail("integer overflow in " + op + " of " + std::to_string(v));
      v = op == "Neg" ? -v : std::abs(v);
    }
    return true;
  }
  if (r.kind == Kind::Bool) {
    for (int64_t &v : r.ints)
      v = !v;
    return true;
  }
  for (float &v : r.floats)
    v = op == "Neg"     ? -v
        : op == "Abs"   ? std::fabs(v)
        : op == "Sqrt"  ? std::sqrt(v)
        : op == "Floor" ? std::floor(v)
        : op == "Ceil"  ? std::ceil(v)
        : op == "Cos"   ? std::cos(v)
        : op == "Sin"   ? std::sin(v)
        : op == "Log"   ? std::log(v) // T5's relative position buckets
        : op == "Exp"   ? std::exp(v)
        : op == "Sign"  ? (std::isnan(v) ? v : float((v > 0.0f) - (v < 0.0f)))
                        : 1.0f / v; // Reciprocal
  return true;
}

bool Folder::clip(HostTensor &r) {
  if (!input(0, r))
    return false;
  if (r.kind == Kind::Bool)
    return fail("Clip does not take a BOOL input");
  // The bounds: inputs 1 and 2 (opset 11+, either may be absent), or the
  // min and max attributes (FLOAT, before opset 11).
  HostTensor bound[2];
  bool has[2] = {false, false};
  for (int i = 0; i < 2; ++i) {
    if (hasInput(i + 1)) {
      if (!input(i + 1, bound[i]))
        return false;
      if (bound[i].kind != r.kind || bound[i].size() != 1)
        return fail(std::string(i ? "max" : "min") +
                    " must be one value of the input's type");
      has[i] = true;
    } else if (const onnx::AttributeProto *a = attr(i ? "max" : "min")) {
      if (r.kind != Kind::Float)
        return fail("Clip's min and max attributes bound FLOAT inputs only");
      bound[i].kind = Kind::Float;
      bound[i].floats = {a->f()};
      has[i] = true;
    }
  }
  if (r.kind == Kind::Int) {
    for (int64_t &v : r.ints) {
      if (has[0])
        v = std::max(v, bound[0].ints[0]);
      if (has[1])
        v = std::min(v, bound[1].ints[0]);
    }
    return true;
  }
  for (float &v : r.floats) {
    if (has[0] && v < bound[0].floats[0])
      v = bound[0].floats[0];
    if (has[1] && v > bound[1].floats[0])
      v = bound[1].floats[0];
  }
  return true;
}

bool Folder::cast(HostTensor &r) {
  HostTensor x;
  if (!input(0, x))
    return false;
  // Cast's `to`, or CastLike's: the type of its second input (PyTorch 2.x's type_as).
  int64_t to;
  if (node.op_type() == "CastLike") {
    HostTensor like;
    if (hasInput(1) && !ctx.constant(node.input(1)) && ctx.elementType) {
      to = ctx.elementType(node.input(1)); // a computed tensor's type (a shape cast like it)
    } else {
      if (!input(1, like))
        return false;
      to = like.isFloat()              ? onnx::TensorProto::FLOAT
           : like.kind == Kind::Bool ? onnx::TensorProto::BOOL
                                     : onnx::TensorProto::INT64;
    }
  } else {
    const onnx::AttributeProto *attribute = attr("to");
    if (!attribute)
      return fail("attribute 'to' is required");
    to = attribute->i();
  }
  castTo = to;
  r.dims = x.dims;
  switch (to) {
  case onnx::TensorProto::FLOAT:
    r.kind = Kind::Float;
    if (x.isFloat())
      r.floats = x.floats;
    else
      for (int64_t v : x.ints)
        r.floats.push_back(static_cast<float>(v));
    return true;
  case onnx::TensorProto::BOOL:
    r.kind = Kind::Bool;
    if (x.isFloat())
      for (float v : x.floats)
        r.ints.push_back(v != 0.0f);
    else
      for (int64_t v : x.ints)
        r.ints.push_back(v != 0);
    return true;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32: {
    r.kind = Kind::Int;
    const bool narrow = to == onnx::TensorProto::INT32;
    const double lo = narrow ? -2147483648.0 : -9223372036854775808.0;
    if (!x.isFloat()) {
      r.ints = x.ints;
    } else {
      // Truncation toward zero. ONNX leaves a value out of range (an
      // infinity, NaN) undefined; it becomes the type's least value, as
      // PyTorch and NumPy compute it on x86 (T5's log(0) buckets, which a
      // Where discards). Used as an index, it is then out of range there.
      for (float v : x.floats)
        r.ints.push_back(v >= lo && v < -lo ? static_cast<int64_t>(v) : int64_t(lo));
      if (narrow)
        return true;
    }
    if (narrow)
      for (int64_t v : r.ints)
        if (v < INT32_MIN || v > INT32_MAX)
          return fail("cannot cast " + std::to_string(v) + " to INT32: out of range");
    return true;
  }
  default: {
    // The narrow integers PyTorch 2.x's exporter writes on the way (torch.eye
    // of a uint8 arange): kept as integers, wrapped into the type's range as
    // a C cast does (a float truncated first; out of int64's range it is
    // undefined in ONNX: an error here).
    std::optional<NarrowInt> narrow = narrowIntType(to);
    if (!narrow)
      return fail("cast to dtype " + std::to_string(to) +
                  ", which mgs does not evaluate at import (FLOAT, BOOL and the integer types "
                  "only)");
    r.kind = Kind::Int;
    const int bits = narrow->bits;
    const bool isSigned = narrow->isSigned;
    std::vector<int64_t> values = x.ints;
    if (x.isFloat()) {
      values.clear();
      for (float v : x.floats) {
        if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f))
          return fail("cannot cast " + std::to_string(v) + " to dtype " + std::to_string(to) +
                      ": out of range");
        values.push_back(static_cast<int64_t>(v));
      }
    }
    for (int64_t v : values) {
      if (bits == 64) {
        if (v < 0)
          return fail("cannot cast " + std::to_string(v) + " to UINT64: mgs keeps integers as "
                                                           "INT64");
        r.ints.push_back(v);
        continue;
      }
      const uint64_t mask = (uint64_t(1) << bits) - 1;
      uint64_t u = static_cast<uint64_t>(v) & mask;
      if (isSigned && (u >> (bits - 1)))
        r.ints.push_back(static_cast<int64_t>(u) - (int64_t(1) << bits));
      else
        r.ints.push_back(static_cast<int64_t>(u));
    }
    return true;
  }
  }
}

bool Folder::where(HostTensor &r) {
  HostTensor c, x, y;
  if (!input(0, c) || !input(1, x) || !input(2, y))
    return false;
  if (c.kind != Kind::Bool)
    return fail("its condition must be BOOL");
  if (x.kind != y.kind)
    return fail("its inputs 1 and 2 differ in dtype");
  const HostTensor *parts[] = {&c, &x, &y};
  if (!broadcastShape(parts, r.dims))
    return false;
  r.kind = x.kind;
  forEachBroadcast(r.dims, parts, [&](int64_t, llvm::ArrayRef<int64_t> at) {
    r.append(c.ints[at[0]] ? x : y, c.ints[at[0]] ? at[1] : at[2]);
  });
  return true;
}

bool Folder::range(HostTensor &r) {
  HostTensor start, limit, delta;
  if (!input(0, start) || !input(1, limit) || !input(2, delta))
    return false;
  for (const HostTensor *t : {&start, &limit, &delta})
    if (t->size() != 1 || t->kind != start.kind || t->kind == Kind::Bool)
      return fail("start, limit and delta must be scalars of one integer or FLOAT dtype");
  r.kind = start.kind;
  int64_t n;
  if (start.isFloat()) {
    const float s = start.floats[0], l = limit.floats[0], d = delta.floats[0];
    if (d == 0.0f || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      return fail("start, limit and delta must be finite and delta non-zero");
    const double steps = std::ceil((static_cast<double>(l) - s) / d);
    n = steps > static_cast<double>(kMaxValues) ? kMaxValues + 1
        : steps > 0                              ? static_cast<int64_t>(steps)
                                                 : 0;
    r.dims = {n};
    if (!checkSize(r.dims))
      return false;
    float v = s; // accumulated, as ONNX's function body does
    for (int64_t i = 0; i < n; ++i, v += d)
      r.floats.push_back(v);
    return true;
  }
  const int64_t s = start.ints[0], l = limit.ints[0], d = delta.ints[0];
  if (d == 0)
    return fail("delta must be non-zero");
  int64_t diff;
  if (__builtin_sub_overflow(l, s, &diff))
    return fail("integer overflow in limit - start");
  // ceil(diff / d), then at least 0.
  n = diff / d + (diff % d != 0 && (diff > 0) == (d > 0));
  r.dims = {std::max<int64_t>(0, n)};
  if (!checkSize(r.dims))
    return false;
  for (int64_t i = 0; i < r.dims[0]; ++i)
    r.ints.push_back(s + i * d);
  return true;
}

bool Folder::reshape(HostTensor &r) {
  SmallVector<int64_t> shape;
  if (!input(0, r) || !ints(1, shape))
    return false;
  if (!checkRank(static_cast<int64_t>(shape.size())))
    return false;
  const bool allowZero = intAttr("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    int64_t &s = shape[d];
    if (s == 0 && !allowZero) {
      if (static_cast<int64_t>(d) >= r.rank())
        return fail("shape copies dimension " + std::to_string(d) + " (0) of a rank " +
                    std::to_string(r.rank()) + " input");
      s = r.dims[d];
    }
    if (s == -1) {
      if (inferred >= 0)
        return fail("shape holds more than one -1");
      inferred = d;
    } else if (s < 0) {
      return fail("shape holds a negative dimension " + std::to_string(s));
    } else if (__builtin_mul_overflow(known, s, &known)) {
      return fail("the shape's element count overflows");
    }
  }
  const int64_t count = r.size();
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return fail("cannot infer the -1 of the shape for " + std::to_string(count) + " values");
    shape[inferred] = count / known;
  } else if (known != count) {
    return fail("cannot reshape " + std::to_string(count) + " values to " +
                std::to_string(known));
  }
  r.dims = shape;
  return true;
}

bool Folder::identity(HostTensor &r) { return input(0, r); }

bool Folder::trilu(HostTensor &r) {
  if (!input(0, r))
    return false;
  if (r.rank() < 2)
    return fail("input 0 must have rank 2 or more, got rank " + std::to_string(r.rank()));
  int64_t k = 0;
  if (hasInput(1)) {
    HostTensor kt;
    if (!input(1, kt))
      return false;
    if (kt.kind != Kind::Int || kt.size() != 1)
      return fail("k must be an integer scalar");
    k = kt.ints[0];
  }
  // Element (i, j) of each matrix is kept where j - i >= k (upper) or
  // j - i <= k (lower), else zeroed.
  const bool upper = intAttr("upper", 1) != 0;
  const int64_t rows = r.dims[r.rank() - 2], cols = r.dims.back();
  for (int64_t at = 0, n = r.size(); at < n; ++at) {
    const int64_t j = at % cols, i = at / cols % rows;
    if (upper ? j - i >= k : j - i <= k)
      continue;
    if (r.isFloat())
      r.floats[at] = 0.0f;
    else
      r.ints[at] = 0;
  }
  return true;
}

bool Folder::scatterND(HostTensor &r) {
  HostTensor indices, updates;
  if (!input(0, r) || !input(1, indices) || !input(2, updates))
    return false;
  Reduction reduction;
  if (!scatterReduction(reduction))
    return false;
  if (indices.kind != Kind::Int || updates.kind != r.kind)
    return fail("indices must be integers and updates of the data's dtype");
  const int64_t k = indices.rank() ? indices.dims.back() : -1;
  if (k < 1 || k > r.rank())
    return fail("the indices' last dimension must be in [1, " + std::to_string(r.rank()) + "]");
  // updates: indices.shape[:-1] + data.shape[k:].
  SmallVector<int64_t> want(indices.dims.begin(), indices.dims.end() - 1);
  want.append(r.dims.begin() + k, r.dims.end());
  if (llvm::ArrayRef<int64_t>(want) != llvm::ArrayRef<int64_t>(updates.dims))
    return fail("updates do not have the shape indices.shape[:-1] + data.shape[k:]");
  const int64_t slice = countOf(llvm::ArrayRef<int64_t>(r.dims).drop_front(k));
  SmallVector<int64_t> strides = stridesOf(r.dims);
  const int64_t tuples = countOf(llvm::ArrayRef<int64_t>(indices.dims).drop_back());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = indices.ints[t * k + d];
      if (i < -r.dims[d] || i >= r.dims[d])
        return fail("index " + std::to_string(i) + " is out of range for dimension " +
                    std::to_string(d) + " of size " + std::to_string(r.dims[d]));
      at += (i < 0 ? i + r.dims[d] : i) * strides[d];
    }
    for (int64_t e = 0; e < slice; ++e)
      r.combine(reduction, at + e, updates, t * slice + e);
  }
  return true;
}

} // namespace mgs::onnx_import::fold
