//===- OpConverters.h - Per-ONNX-op conversion ------------------*- C++ -*-===//
//
// One converter per ONNX op type, registered in one table. A converter sees
// its node through NodeImporter: inputs as MLIR values (parameters and
// constants are materialized on first use), constant inputs as host values,
// attributes with their ONNX defaults, and result types from ONNX shape
// inference.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_OPCONVERTERS_H
#define MGS_ONNX_IMPORT_OPCONVERTERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <vector>

namespace mgs::onnx_import {

/// The view a converter has of the node being imported.
class NodeImporter {
public:
  virtual ~NodeImporter() = default;

  virtual mlir::OpBuilder &builder() = 0;
  virtual mlir::Location loc() const = 0;
  virtual const onnx::NodeProto &node() const = 0;
  /// The model's opset version of the default ONNX domain.
  virtual int64_t opset() const = 0;
  /// True for models exported by PyTorch (ModelProto.producer_name), whose
  /// BatchNorm running variance is updated with the unbiased batch variance.
  virtual bool producedByPyTorch() const = 0;
  /// True when every BatchNormalization trains with batch statistics
  /// (ImportOptions::trainBatchNorm).
  virtual bool trainBatchNorm() const = 0;
  /// Whether the model is compiled for inference (ImportOptions::forInference).
  virtual bool forInference() const = 0;
  /// A diagnostic at the node's location, prefixed with the node's identity.
  virtual mlir::InFlightDiagnostic emitError() = 0;

  /// True when input `i` is given (ONNX marks omitted optional inputs with "").
  bool hasInput(int i) const { return i < node().input_size() && !node().input(i).empty(); }
  /// True when output `i` is requested.
  bool hasOutput(int i) const { return i < node().output_size() && !node().output(i).empty(); }

  /// Input `i` as a value (materializes parameters and constants).
  virtual mlir::FailureOr<mlir::Value> input(int i) = 0;
  /// Input `i` when it is an INT64 graph input (indices), else nullopt.
  virtual std::optional<mlir::Value> indexInput(int i) = 0;
  /// Input `i` when it is such indices transposed (XLNet's time-major ids):
  /// the indices before the Transpose and its permutation.
  virtual std::optional<std::pair<mlir::Value, llvm::SmallVector<int64_t>>>
  transposedIndexInput(int i) {
    return std::nullopt;
  }
  /// Input `i`, which must be a constant (initializer or Constant node), read
  /// as integers / one float / one bool.
  virtual mlir::FailureOr<llvm::SmallVector<int64_t>> constantInts(int i) = 0;
  virtual mlir::FailureOr<float> constantFloat(int i) = 0;
  /// Input `i`, a FLOAT constant of any shape, as its values.
  virtual mlir::FailureOr<std::vector<float>> constantFloats(int i) = 0;
  virtual mlir::FailureOr<bool> constantBool(int i) = 0;
  /// True when input `i` is a FLOAT initializer (a parameter, trained).
  virtual bool inputIsParameter(int i) const = 0;
  /// Marks the parameter feeding input `i` as state (not trained).
  virtual void markStateParameter(int i) = 0;
  /// True when input `i` is a constant known at import (a Constant node, a
  /// folded node, an initializer other than a FLOAT parameter).
  virtual bool inputIsConstant(int i) const = 0;
  /// The constant tensor feeding input `i` (an error if it is not one).
  virtual mlir::FailureOr<const onnx::TensorProto *> constantInput(int i) = 0;

  /// The static type ONNX shape inference gave output `i`; `elementType` is
  /// the element type the converter produces (checked against ONNX's).
  virtual mlir::FailureOr<mlir::RankedTensorType> outputType(int i, mlir::Type elementType) = 0;
  mlir::FailureOr<mlir::RankedTensorType> outputType(int i) {
    return outputType(i, builder().getF32Type());
  }
  /// Binds output `i` to `value`.
  virtual void setOutput(int i, mlir::Value value) = 0;
  /// Binds output `i` (an integer type) to integers computed at run time,
  /// held as the FLOAT `value`, each in [lo, hi] (|lo|, |hi| <= 2^24);
  /// `origin` says where they come from in errors ("by TopK").
  virtual void setIntegerOutput(int i, mlir::Value value, double lo, double hi,
                                llvm::StringRef origin) = 0;
  /// Makes output `i` an error for whoever uses it, with `reason`.
  virtual void rejectOutput(int i, llvm::StringRef reason) = 0;
  /// Makes output `i` a tensor of zero elements (mgs has none): Concat drops
  /// it, any other use is an error.
  virtual void setEmptyOutput(int i) = 0;
  /// True when input `i` is such an empty tensor.
  virtual bool inputIsEmpty(int i) const = 0;

  // Attributes with their ONNX defaults.
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const;
  float floatAttr(llvm::StringRef name, float dflt) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<llvm::SmallVector<int64_t>> intsAttr(llvm::StringRef name) const;

  /// `axis` of a tensor of `rank` dimensions normalized into [0, rank); out
  /// of range is an error naming the node.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// The integer attribute `name` (default `dflt`) read as an axis of a
  /// tensor of `rank` dimensions, normalized into [0, rank).
  mlir::FailureOr<int64_t> axisAttr(llvm::StringRef name, int64_t dflt, int64_t rank) {
    return normalizeAxis(intAttr(name, dflt), rank);
  }
};

using OpConverter = mlir::LogicalResult (*)(NodeImporter &);

/// Float arithmetic on integers is exact up to here (2^24): the bound of the
/// integers mgs computes at run time in float (positions, position ids).
inline constexpr int64_t kFloatExactIntegers = int64_t{1} << 24;

/// Builds `OpTy` from `args` with the single result type ONNX inferred for
/// output 0, then binds output 0.
template <typename OpTy, typename... Args>
mlir::LogicalResult buildSingle(NodeImporter &n, Args &&...args) {
  auto type = n.outputType(0);
  if (mlir::failed(type))
    return mlir::failure();
  auto op = OpTy::create(n.builder(), n.loc(), *type, std::forward<Args>(args)...);
  n.setOutput(0, op.getResult());
  return mlir::success();
}

/// An op of one input and one output, no attributes.
template <typename OpTy> mlir::LogicalResult convertUnary(NodeImporter &n) {
  auto x = n.input(0);
  if (mlir::failed(x))
    return mlir::failure();
  return buildSingle<OpTy>(n, *x);
}

/// The static shape of a ranked tensor value.
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

/// Values the decomposing converters build, at the node's location: a FLOAT
/// constant of `shape` holding `values` (row-major), a FLOAT scalar (a
/// broadcast operand), and `v` reshaped to `shape` (same element count).
mlir::Value f32Constant(NodeImporter &n, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<float> values);
mlir::Value f32Scalar(NodeImporter &n, float value);
/// train.cumsum of `x` (of `type`) along the node's constant axis (input 1),
/// with its exclusive and reverse attributes: ONNX CumSum.
mlir::FailureOr<mlir::Value> buildCumSum(NodeImporter &n, mlir::Value x, mlir::Type type);
mlir::Value reshapeTo(NodeImporter &n, mlir::Value v, llvm::ArrayRef<int64_t> shape);
/// `v` broadcast to `type` (NumPy's rules) as v plus zeros of `type`: the
/// Add's kernel broadcasts, its gradient sums back (mgs has no broadcast op).
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        mlir::RankedTensorType type);

/// Converters in their own files (converters/), registered in the table.
/// Conv, ConvTranspose, MaxPool and AveragePool (converters/Conv.cpp).
mlir::LogicalResult convertConv(NodeImporter &n);
mlir::LogicalResult convertConvTranspose(NodeImporter &n);
mlir::LogicalResult convertMaxPool(NodeImporter &n);
mlir::LogicalResult convertAveragePool(NodeImporter &n);
/// LSTM, GRU and RNN (converters/Recurrent.cpp).
mlir::LogicalResult convertLSTM(NodeImporter &n);
mlir::LogicalResult convertGRU(NodeImporter &n);
mlir::LogicalResult convertRNN(NodeImporter &n);
/// Resize of computed data by constant scales or sizes (converters/Resize.cpp).
mlir::LogicalResult convertResize(NodeImporter &n);
/// `v` multiplied along `axis` by the constant [out, in] matrix `w` (row-major;
/// in = the axis' extent): one train.matmul, the axis moved last and back
/// unless it is the last or the one before (converters/Resize.cpp).
mlir::Value matrixAlongAxis(NodeImporter &n, mlir::Value v, int64_t axis,
                            llvm::ArrayRef<float> w, int64_t out);
/// TopK of computed data (converters/TopK.cpp).
mlir::LogicalResult convertTopK(NodeImporter &n);
/// DFT of computed data along one axis (converters/DFT.cpp).
mlir::LogicalResult convertDFT(NodeImporter &n);

/// ONNX op type -> converter, for the default domain.
const llvm::StringMap<OpConverter> &opConverters();

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_OPCONVERTERS_H
