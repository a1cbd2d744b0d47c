//===- FoldEvaluator.h - The import-time evaluator of ONNX nodes *- C++ -*-===//
//
// The evaluator behind foldNode (ConstantFolding.h), shared by its two
// files: ConstantFolding.cpp evaluates the shape and layout ops (Shape,
// Gather, Concat, Slice, ...), ConstantFoldingArith.cpp the elementwise
// arithmetic, comparisons, Cast, Where, Range and Reshape that exporters
// compute on shapes, ConstantFoldingIndexing.cpp GatherElements, GatherND,
// ScatterElements, NonZero and CumSum.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_FOLDEVALUATOR_H
#define MGS_ONNX_IMPORT_FOLDEVALUATOR_H

#include "ConstantFolding.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mgs::onnx_import::fold {

/// A host tensor's element kind: integers (any ONNX integer dtype, kept as
/// int64), FLOAT (float32 arithmetic, as ONNX computes on FLOAT tensors), or
/// BOOL (kept as 0/1 in `ints`).
enum class Kind { Int, Float, Bool };

/// A scatter's reduction (ScatterND's and ScatterElements' attribute).
enum class Reduction { None, Add, Mul, Max, Min };

/// A constant on the host.
struct HostTensor {
  Kind kind = Kind::Int;
  llvm::SmallVector<int64_t> dims;
  std::vector<int64_t> ints; // Int and Bool
  std::vector<float> floats; // Float

  bool isFloat() const { return kind == Kind::Float; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t size() const {
    return static_cast<int64_t>(isFloat() ? floats.size() : ints.size());
  }
  /// Appends element `i` of `src` (of the same kind).
  void append(const HostTensor &src, int64_t i) {
    if (isFloat())
      floats.push_back(src.floats[i]);
    else
      ints.push_back(src.ints[i]);
  }
  /// Element `at` combined with element `i` of `src` (of the same kind) by
  /// `reduction` (None: replaced by it).
  void combine(Reduction reduction, int64_t at, const HostTensor &src, int64_t i) {
    auto apply = [reduction](auto &out, auto v) {
      out = reduction == Reduction::None  ? v
            : reduction == Reduction::Add ? out + v
            : reduction == Reduction::Mul ? out * v
            : reduction == Reduction::Max ? std::max(out, v)
                                          : std::min(out, v);
    };
    if (isFloat())
      apply(floats[at], src.floats[i]);
    else
      apply(ints[at], src.ints[i]);
  }
};

/// The most values, and dimensions, the folder computes: shape arithmetic
/// is small; anything larger is a model mgs cannot mean to fold.
constexpr int64_t kMaxValues = int64_t(1) << 24;
constexpr int64_t kMaxRank = 64;

/// The elementwise ops of two or more inputs with ONNX's broadcasting, and
/// those of one input, the folder evaluates (ConstantFoldingArith.cpp).
inline constexpr llvm::StringLiteral kElementwiseOps[] = {
    "Add", "Sub",  "Mul",     "Div",  "Mod",            "Min",         "Max",   "Pow",
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
inline constexpr llvm::StringLiteral kUnaryOps[] = {"Neg",  "Abs", "Not", "Sqrt", "Floor",
                                                    "Ceil", "Cos", "Sin", "Reciprocal",
                                                    "Log",  "Exp", "Sign"};

/// The number of elements, saturating at INT64_MAX (dims are non-negative).
int64_t countOf(llvm::ArrayRef<int64_t> dims);
/// Row-major strides of `dims`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims);

/// Evaluates one node; each op's method reads the inputs it needs and
/// fills the result, or returns false with `error` set (malformed node) or
/// with `notConstant` set (an input is computed by the graph).
class Folder {
public:
  Folder(const onnx::NodeProto &node, const FoldContext &ctx, std::string &error)
      : node(node), ctx(ctx), error(error) {}

  FoldResult run(onnx::TensorProto &out);

private:
  bool hasInput(int i) const { return i < node.input_size() && !node.input(i).empty(); }
  /// Input `i` as a host tensor; false (error empty) when it is not a
  /// constant, false with `error` set when it has an unsupported dtype.
  bool input(int i, HostTensor &t);
  /// A constant tensor as a host tensor; false with an error naming `what`
  /// when its dtype is not evaluated or its data does not match its shape.
  bool read(const onnx::TensorProto &p, const std::string &what, HostTensor &t);
  /// Input `i` as integers (a constant of an integer dtype).
  bool ints(int i, llvm::SmallVector<int64_t> &v);
  const onnx::AttributeProto *attr(llvm::StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? a->i() : dflt;
  }
  bool fail(const std::string &message) {
    error = message;
    return false;
  }
  /// `axis` in [-rank, rank) (or [-rank, rank] with `inclusive`), made
  /// non-negative; false with an error otherwise.
  bool normalize(int64_t &axis, int64_t rank, const char *what, bool inclusive = false);
  /// False with an error when a result of `dims` would exceed kMaxValues.
  bool checkSize(llvm::ArrayRef<int64_t> dims);
  /// False with an error when a result would have a rank above kMaxRank.
  bool checkRank(int64_t rank);

  // Shape and layout (ConstantFolding.cpp).
  /// The static shape of input 0 (a constant's, or ONNX shape inference's).
  bool staticDims(llvm::SmallVector<int64_t> &dims);
  bool shape(HostTensor &r);
  bool size(HostTensor &r);
  bool gather(HostTensor &r);
  bool unsqueeze(HostTensor &r);
  bool squeeze(HostTensor &r);
  bool concat(HostTensor &r);
  bool expand(HostTensor &r);
  bool constantOfShape(HostTensor &r);
  /// Slice, with any non-zero steps (ONNX's clamping of starts and ends).
  bool slice(HostTensor &r);
  bool transpose(HostTensor &r);
  bool flatten(HostTensor &r);

  // Indexing and scans (ConstantFoldingIndexing.cpp): what transformers'
  // masking code computes on its constant position ids.
  /// Each element of the indices `idx` (of GatherElements or ScatterElements
  /// along the `axis` attribute) as its place in data of `dims`, row-major;
  /// false with an error naming what is wrong.
  bool elementPlaces(const HostTensor &idx, llvm::ArrayRef<int64_t> dims,
                     llvm::SmallVector<int64_t> &places);
  bool gatherElements(HostTensor &r);
  /// GatherND with batch_dims 0 of any dtype (mgs's GatherND converter
  /// gathers computed FLOAT data).
  bool gatherND(HostTensor &r);
  bool cumSum(HostTensor &r);
  /// ScatterElements of constant updates into a constant at constant
  /// indices, with any of ONNX's reductions (PyG's node degrees: a
  /// scatter-add of ones at a constant edge list).
  bool scatterElements(HostTensor &r);
  /// NonZero of a constant (PyG's self-loop removal selects the edges of a
  /// constant edge list by a mask): its result's shape is then known.
  bool nonZero(HostTensor &r);
  /// The `reduction` attribute; false with an error when it is none of
  /// ONNX's.
  bool scatterReduction(Reduction &reduction);
  /// ReduceSum, ReduceMax, ReduceMin (BEiT's relative_coords.sum(-1) in its
  /// forward) and ReduceProd (torch.var's element count), axes as an input
  /// or (older opsets) an attribute.
  bool reduce(HostTensor &r);

  // Arithmetic (ConstantFoldingArith.cpp).
  /// Add, Sub, Mul, Div, Mod, Min, Max, the comparisons and the logical ops,
  /// with ONNX's multidirectional broadcasting of all inputs.
  bool elementwise(HostTensor &r);
  /// Neg, Abs, Not, Sqrt, Floor, Ceil, Reciprocal.
  bool unary(HostTensor &r);
  bool cast(HostTensor &r);
  bool where(HostTensor &r);
  bool range(HostTensor &r);
  bool reshape(HostTensor &r);
  bool identity(HostTensor &r);
  /// Trilu of a constant (nn.Transformer.generate_square_subsequent_mask's
  /// torch.triu of a filled square).
  bool trilu(HostTensor &r);
  bool tile(HostTensor &r);
  bool clip(HostTensor &r);
  /// ScatterND of constant updates into a constant (Swin's shifted-window
  /// mask), with any of ONNX's reductions.
  bool scatterND(HostTensor &r);
  /// The broadcast shape of `parts` into `dims`; false with an error when
  /// they do not broadcast.
  bool broadcastShape(llvm::ArrayRef<const HostTensor *> parts, llvm::SmallVector<int64_t> &dims);

  const onnx::NodeProto &node;
  const FoldContext &ctx;
  std::string &error;
  bool notConstant = false;
  /// The dtype cast() cast to (Cast's `to`, CastLike's second input's).
  int64_t castTo = -1;
  /// Whether an integer result is INT32 (else INT64): a cast to INT32, or an
  /// op whose data input (Where's branch, ConstantOfShape's value) is INT32.
  bool int32Result() const;
};

} // namespace mgs::onnx_import::fold

#endif // MGS_ONNX_IMPORT_FOLDEVALUATOR_H
