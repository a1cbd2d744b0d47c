//===- GraphImporter.h - The graph walk of the importer ---------*- C++ -*-===//
//
// GraphImporter walks one ONNX graph and builds the forward function: the
// NodeImporter every converter sees (OpConverters.h). Its members are
// defined in Importer.cpp, except the import of masks computed at run time
// from token ids, in RuntimeMask.cpp, and of integers computed from them, in
// RuntimeInts.cpp; random draws that become a dropout
// mask, in RandomMask.cpp. Internal to onnx_import.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_GRAPHIMPORTER_H
#define MGS_ONNX_IMPORT_GRAPHIMPORTER_H

#include "ConstantFolding.h"
#include "Importer.h"
#include "OpConverters.h"

#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <deque>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mgs::onnx_import {

/// An ONNX element type's name ("INT64"), or "dtype N" for an unknown one.
std::string dtypeName(int dtype);

class GraphImporter final : public NodeImporter {
public:
  GraphImporter(mlir::MLIRContext &ctx, mlir::ModuleOp module, mlir::Location fileLoc,
                const ImportOptions &options, int64_t opset, bool fromPyTorch)
      : ctx(ctx), b(&ctx), module(module), fileLoc(fileLoc), curLoc(fileLoc), options(options),
        opsetVersion(opset), fromPyTorch(fromPyTorch) {}

  mlir::LogicalResult importGraph(const onnx::GraphProto &graph);

  // NodeImporter.
  mlir::OpBuilder &builder() override { return b; }
  mlir::Location loc() const override { return curLoc; }
  const onnx::NodeProto &node() const override { return *curNode; }
  int64_t opset() const override { return opsetVersion; }
  bool producedByPyTorch() const override { return fromPyTorch; }
  bool trainBatchNorm() const override { return options.trainBatchNorm; }
  bool forInference() const override { return options.forInference; }
  mlir::InFlightDiagnostic emitError() override {
    mlir::InFlightDiagnostic diag = mlir::emitError(curLoc);
    diag << "node '" << nodeLabel << "' (" << curNode->op_type() << "): ";
    return diag;
  }
  mlir::FailureOr<mlir::Value> input(int i) override;
  std::optional<mlir::Value> indexInput(int i) override {
    if (!hasInput(i))
      return std::nullopt;
    if (auto it = indexValues.find(curNode->input(i)); it != indexValues.end())
      return it->second;
    if (auto it = reshapedIndices.find(curNode->input(i)); it != reshapedIndices.end())
      return it->second;
    if (auto it = computedIndices.find(curNode->input(i)); it != computedIndices.end())
      return it->second;
    return std::nullopt;
  }
  std::optional<std::pair<mlir::Value, llvm::SmallVector<int64_t>>>
  transposedIndexInput(int i) override {
    if (!hasInput(i))
      return std::nullopt;
    auto it = transposedIndices.find(curNode->input(i));
    if (it == transposedIndices.end())
      return std::nullopt;
    return it->second;
  }
  mlir::FailureOr<llvm::SmallVector<int64_t>> constantInts(int i) override;
  mlir::FailureOr<float> constantFloat(int i) override;
  mlir::FailureOr<std::vector<float>> constantFloats(int i) override;
  mlir::FailureOr<bool> constantBool(int i) override;
  void markStateParameter(int i) override;
  bool inputIsConstant(int i) const override;
  mlir::FailureOr<const onnx::TensorProto *> constantInput(int i) override;
  bool inputIsParameter(int i) const override {
    if (!hasInput(i))
      return false;
    auto it = initializers.find(curNode->input(i));
    return it != initializers.end() && it->second->data_type() == onnx::TensorProto::FLOAT &&
           !bufferInitializers.contains(curNode->input(i));
  }
  mlir::FailureOr<mlir::RankedTensorType> outputType(int i, mlir::Type elementType) override;
  void setOutput(int i, mlir::Value value) override { values[curNode->output(i)] = value; }
  void setIntegerOutput(int i, mlir::Value value, double lo, double hi,
                        llvm::StringRef origin) override {
    runtimeInts[curNode->output(i)] = RuntimeInt{value, lo, hi, std::nullopt, origin.str()};
  }
  void rejectOutput(int i, llvm::StringRef reason) override {
    rejected[curNode->output(i)] = reason.str();
  }
  void setEmptyOutput(int i) override {
    rejectOutput(i, "it has zero elements (an empty slice), which mgs has no tensors for; only "
                    "a Concat may take it (it is dropped there)");
    emptyValues.insert(curNode->output(i));
  }
  bool inputIsEmpty(int i) const override {
    return hasInput(i) && emptyValues.contains(curNode->input(i));
  }

private:
  /// The static tensor type of `type`, or an error naming `what`.
  mlir::FailureOr<mlir::RankedTensorType> toTensorType(const onnx::TypeProto &type,
                                                       llvm::StringRef what, mlir::Location loc,
                                                       mlir::Type expected);
  mlir::FailureOr<mlir::RankedTensorType> initializerType(const onnx::TensorProto &t,
                                                          mlir::Location loc);
  mlir::FailureOr<mlir::Value> parameterValue(llvm::StringRef name, const onnx::TensorProto &t);
  mlir::FailureOr<mlir::Value> constantValue(llvm::StringRef name, const onnx::TensorProto &t);
  mlir::LogicalResult recordConstant();
  /// Evaluates a foldable node whose inputs are constants (ConstantFolding.h);
  /// sets `folded` when it did.
  mlir::LogicalResult foldConstant(bool &folded);
  /// What the folder reads: the importer's constants, types and shapes.
  FoldContext foldContext();
  /// The constant `name` the folder may read (a Constant node, a folded
  /// node, a non-FLOAT initializer), or null.
  const onnx::TensorProto *foldableConstant(const std::string &name) const;
  /// The error for a foldable node left with an input computed at run time
  /// where mgs needs a constant: it names the input, by its ONNX schema name,
  /// and where its value comes from.
  mlir::LogicalResult emitNotStatic(bool hasConverter, int outputType);
  /// The ONNX element type of the value `name` (FLOAT when unknown).
  int valueTypeOf(const std::string &name) const;
  /// The dtype the current Cast casts to, or the current CastLike's (its
  /// second input's).
  int castTarget() const {
    return curNode->op_type() == "Cast" ? static_cast<int>(intAttr("to", onnx::TensorProto::FLOAT))
                                        : valueTypeOf(curNode->input(1));
  }
  /// Where the run-time value `name` comes from, for emitNotStatic.
  std::string originOf(const std::string &name);

  /// A BOOL value computed at run time from token ids (an attention
  /// key-padding mask, `tokens == pad`): its value where an id is v is
  /// truth[v] (the ids are bounded by the rows of the embedding that reads
  /// them), laid out in the ids' shape and then reshaped or expanded by
  /// `steps` (each the shape it gives, and whether it is an Expand).
  struct RuntimeMask {
    /// How a step lays the mask out anew: a reshape, a broadcast (Expand),
    /// or a gather of the previous layout's elements at constant flat
    /// positions (`at`: a Gather, GatherND, Transpose, Slice of the mask).
    struct Step {
      enum Kind { Reshape, Expand, Gather } kind;
      llvm::SmallVector<int64_t> shape;
      std::vector<int64_t> at;
    };
    mlir::Value ids;
    std::vector<bool> truth;
    llvm::SmallVector<Step> steps;
    /// And-ed with a constant mask (a causal mask, transformers' all-true
    /// one) in the last step's shape, as 0/1; empty: none.
    std::vector<float> andConstant;
    /// The mask's shape now: the last step's, or the ids'.
    llvm::SmallVector<int64_t> shape() const;
  };
  /// `mask` laid out by the current node, a data-movement op whose input 0
  /// is the mask (its flat positions computed by the folder on an index
  /// tensor standing in for it); fails when the folder cannot.
  mlir::LogicalResult layOutMask(RuntimeMask &mask);
  /// Where(mask, x, y) of one-valued constant branches x and y, exact: the
  /// table of x or y gathered at the ids, and, for a mask And-ed with a
  /// constant, that constant's part (added as 0 / -inf when y is -inf,
  /// else multiplied in). Null after an error.
  mlir::Value selectConstants(const RuntimeMask &mask, float x, float y);
  /// Imports the node when it makes a RuntimeMask (Equal of token ids and a
  /// constant) or reads one (Not, Reshape, Unsqueeze, Squeeze, Identity,
  /// Expand, Cast, Where): sets `handled`. A mask reaching any other op is an
  /// error naming the node.
  mlir::LogicalResult importRuntimeMask(bool &handled);
  /// When the current node is Equal of an embedding's ids (an INT64 graph
  /// input whose rows embeddingRows knows) and one INT64 constant, a padding
  /// mask importRuntimeMask keeps as a table: the ids' input number; else -1.
  int paddingMaskIds();
  /// `table[v]` at each id of `mask`, in the mask's shape: a train.gather of
  /// a constant table (exact, infinities included), reshaped and broadcast.
  mlir::Value gatherMask(const RuntimeMask &mask, llvm::ArrayRef<float> table);
  /// An integer tensor computed at run time from token ids (RoBERTa's
  /// position ids), held as FLOAT values, each in [lo, hi] (|lo|, |hi| <=
  /// 2^24, where float arithmetic on integers is exact). In RuntimeInts.cpp.
  struct RuntimeInt {
    mlir::Value value;
    double lo = 0, hi = 0;
    /// The RuntimeMask these 0/1 values are (a mask cast to an integer
    /// type: Hugging Face's attention_mask), if they are one.
    std::optional<RuntimeMask> mask;
    /// Where they come from, as errors say it ("from token ids", "by TopK").
    std::string origin = "from token ids";
  };
  /// Imports the node when it reads a RuntimeInt (Cast, CumSum, Add, Sub,
  /// Mul, Neg, reshapes; GatherElements of a one-valued constant) and sets
  /// `handled`; a Gather reading one as its indices gets them as int64
  /// (train.to_index, computedIndices) once they are proven inside the
  /// table, and is left to its converter. Any other op reading one is an
  /// error naming the node.
  mlir::LogicalResult importRuntimeInt(bool &handled);
  /// Imports a Cast of FLOAT data computed at run time to an integer type as
  /// a RuntimeInt of no known range (categorical values a model reads from
  /// its float input, `x[:, k].long()`), which only a Gather may read (the
  /// runtime checks each index); sets `handled`.
  mlir::LogicalResult importDataCast(bool &handled);
  /// importRuntimeInt's OneHot of run-time integers `in` (input `at` = 0)
  /// and ScatterElements at them (`at` = 1). Sets `done` when it imported
  /// the node.
  mlir::LogicalResult importRuntimeIndexed(const RuntimeInt &in, int at, bool &done);
  /// Input `i` as integers held in float: a RuntimeInt's value and bounds, or
  /// an integer constant's (null `value` when it is neither); an error naming
  /// the input when a constant is beyond 2^24, `use` saying what that breaks.
  mlir::LogicalResult integerOperand(int i, mlir::Value &value, double &lo, double &hi,
                                     const std::string &use);
  /// Binds output 0 to the RuntimeInt `value` in [lo, hi] computed from
  /// integers of `origin`, or reports bounds beyond 2^24.
  mlir::LogicalResult setRuntimeInt(mlir::Value value, double lo, double hi,
                                    llvm::StringRef origin);
  /// The static shape of the value `name` where it is known (an imported
  /// value, an initializer, ONNX's shape inference).
  std::optional<llvm::SmallVector<int64_t>> knownShape(const std::string &name) const;
  /// A value drawn at run time on its way to a dropout mask: stochastic depth
  /// as PyTorch exports it in training mode (RandomUniformLike, Less, Cast,
  /// Div, Mul; or ONNX's Bernoulli of a constant probability). `stage` says
  /// how far along that chain it is. In RandomMask.cpp.
  struct RandomMask {
    enum Stage { Uniform, Keep, KeepFloat } stage;
    llvm::SmallVector<int64_t> shape;
    double keep = 1.0;  ///< the probability that an element is kept (Keep, KeepFloat)
    double scale = 1.0; ///< the factor the FLOAT mask was multiplied by
    std::string draw;   ///< the node that drew it
    double low = 0.0, high = 1.0; ///< the range of a Uniform draw
    mlir::LocationAttr loc;       ///< the drawing node's
    /// Keep, KeepFloat: the comparison of the uniform draw u that keeps an
    /// element, u < threshold (below, strict), u <= threshold (below), or
    /// u > or u >= threshold.
    bool below = true, strict = true;
    double threshold = 1.0;
  };
  /// Imports the node when it draws random numbers (RandomUniformLike,
  /// RandomUniform, Bernoulli) or reads them on the way to a dropout mask
  /// (a comparison with a constant, Cast, scaling by a constant, and the Mul
  /// with data that becomes a train.dropout with a broadcast mask): sets
  /// `handled`. Uniform numbers read any other way have become values
  /// (importUniformNumbers); a mask's later stages reaching any other op are
  /// an error naming it.
  mlir::LogicalResult importRandomMask(bool &handled);
  /// Before the other patterns: the node's inputs that are uniform draws
  /// (stage Uniform) not starting a dropout mask here become
  /// train.random_uniform values (materializeDraw) the node reads as any
  /// value. Never claims the node.
  mlir::LogicalResult importUniformNumbers(bool &handled);
  /// The uniform draw `name` (stage Uniform) as a train.random_uniform value;
  /// the BOOL mask `name` (stage Keep) as a truth (its comparison of the draw,
  /// 1.0 or 0.0: a Where by it, Gumbel noise as torch.export writes
  /// exponential_); the FLOAT mask `name` (stage KeepFloat) as numbers: its
  /// scale where the comparison holds, else 0. One draw read several of these
  /// ways is one train.random_uniform (drawValues).
  mlir::LogicalResult materializeDraw(const std::string &name);
  /// The other operand of the current binary node (input `at` is one), when
  /// it is one constant FLOAT value.
  std::optional<double> otherScalarOperand(int at);
  /// The graph's values that are token ids, read as an embedding's indices
  /// (a Gather's, RotaryEmbedding's position_ids), directly or through
  /// reshapes and a Transpose; records the embeddings' rows (embeddingRows).
  /// In TokenIds.cpp, as importIndexReshape.
  llvm::StringSet<> findTokenIds(const onnx::GraphProto &graph);
  /// Imports a Reshape, Flatten, Squeeze, Unsqueeze or Identity of token ids
  /// that only an embedding's Gather reads (reshapedIndices), or a Transpose
  /// of them (transposedIndices): sets `handled`.
  mlir::LogicalResult importIndexReshape(bool &handled);
  /// Imports SplitToSequence as a train.split (sequences) and SequenceAt at a
  /// constant position as one of its pieces; sets `handled`. Any other use
  /// of a sequence is an error naming the node. In Sequence.cpp.
  mlir::LogicalResult importSequence(bool &handled);
  /// Imports IsNaN of a computed tensor: all false where it provably is (a
  /// Softmax of scores plus a constant mask that leaves each row a finite
  /// logit: how the TorchScript exporter writes scaled_dot_product_attention
  /// with a BOOL mask, Where(IsNaN(p), 0, p)), else the truth 1 - (p == p).
  /// Sets `handled`. In IsNaN.cpp.
  mlir::LogicalResult importIsNaN(bool &handled);
  /// Imports comparisons of computed FLOAT data, IsInf, Sign, and Not, And,
  /// Or, Xor, Cast and Where of their results (truths: BOOL held as 1.0 /
  /// 0.0); sets `handled`. In ComputedTruth.cpp.
  mlir::LogicalResult importComputedTruth(bool &handled);
  /// Input `i` as a truth: one computed (truths), or a constant BOOL made
  /// 1.0 / 0.0; failure (no error) otherwise.
  mlir::FailureOr<mlir::Value> truthOperand(int i);
  /// Binds output 0 to the truth `v` (of the output's shape, or an error).
  mlir::LogicalResult setTruth(mlir::Value v);
  /// A scalar FLOAT constant at the current node.
  mlir::Value f32Constant(float v);
  /// The truth of ONNX comparison `op` (Equal, Less, LessOrEqual, Greater,
  /// GreaterOrEqual) of FLOAT values `l` and `r`, broadcast.
  mlir::Value compareFloats(llvm::StringRef op, mlir::Value l, mlir::Value r);
  /// Imports a comparison, a Cast to FLOAT or a ScatterElements reading
  /// integers fed as data (token ids, class labels) or computed at run time
  /// as numbers: train.from_index, then truths, data or a scatter at run-time
  /// positions; sets `handled`. In DataIntegers.cpp.
  mlir::LogicalResult importDataIntegers(bool &handled);
  /// Input `i`, integers fed as data (indexInput or a transpose of them), as
  /// FLOAT values of its ONNX shape, checked at run time to lie in [lo, hi].
  mlir::FailureOr<mlir::Value> dataIntegersAsFloat(int i, int64_t lo, int64_t hi);
  /// Binds output 0 to an all-false BOOL constant of its shape; sets `handled`.
  mlir::LogicalResult allFalse(bool &handled);
  /// Verifies the ops after `lastBefore` in `block` (all of them when null):
  /// the ones the current node made. A failure is an error naming the node.
  mlir::LogicalResult verifyNodeOps(mlir::Operation *lastBefore, mlir::Block *block);
  mlir::FailureOr<mlir::Value> lookup(const std::string &name, mlir::Location useLoc, bool forNode);

  mlir::MLIRContext &ctx;
  mlir::OpBuilder b;
  mlir::ModuleOp module;
  mlir::func::FuncOp func;
  mlir::Location fileLoc, curLoc;
  const ImportOptions &options;
  int64_t opsetVersion;
  bool fromPyTorch;
  const onnx::NodeProto *curNode = nullptr;
  std::string nodeLabel;

  llvm::StringMap<mlir::Value> values;
  /// INT64 graph inputs (name, argument number), read only as Gather indices.
  llvm::SmallVector<std::pair<std::string, size_t>> indexArgs;
  llvm::StringMap<mlir::Value> indexValues;
  /// Reshapes of token ids (GPT-2's input_ids.view(-1, T)) on their way to
  /// an embedding's Gather: the ids themselves, which the Gather reads and
  /// then reshapes its rows to ONNX's shape.
  llvm::StringMap<mlir::Value> reshapedIndices;
  /// Token ids transposed on their way to an embedding: the ids, the permutation.
  llvm::StringMap<std::pair<mlir::Value, llvm::SmallVector<int64_t>>> transposedIndices;
  /// SplitToSequence's results: the pieces of the split.
  llvm::StringMap<llvm::SmallVector<mlir::Value>> sequences;
  llvm::StringMap<const onnx::TensorProto *> initializers, constants;
  /// FLOAT initializers used only where no gradient flows (Buffers.h):
  /// constants, not parameters.
  llvm::StringSet<> bufferInitializers;
  /// Initializers the export names as buffers (TorchExport.h): frozen
  /// parameters where a gradient reaches them.
  llvm::StringSet<> exportBuffers;
  std::deque<onnx::TensorProto> ownedConstants;
  llvm::StringMap<const onnx::TypeProto *> valueTypes;
  /// The node that computes each value.
  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<std::string> rejected;
  llvm::StringSet<> emptyValues;
  llvm::StringMap<train::ParameterOp> params;
  /// Token ids -> the rows of the embedding (a Gather of an initializer)
  /// that reads them.
  llvm::StringMap<int64_t> embeddingRows;
  llvm::StringMap<RuntimeMask> runtimeMasks;
  /// Additive biases made from runtime masks (0 where true, -inf elsewhere):
  /// IsNaN of the softmax of scores plus one is all false where a row keeps
  /// a key (IsNaN.cpp).
  llvm::StringSet<> runtimeMaskBiases;
  /// BOOL values computed at run time from FLOAT data, held as 1.0 / 0.0
  /// (ComputedTruth.cpp).
  llvm::StringSet<> truths;
  /// The graph inputs that are not initializers: with more than one, errors
  /// about an integer one suggest --bind-input.
  int dataInputCount = 0;
  llvm::StringMap<RuntimeInt> runtimeInts;
  /// RuntimeInts a Gather reads as indices, made int64 (train.to_index).
  llvm::StringMap<mlir::Value> computedIndices;
  /// dataIntegersAsFloat's train.from_index of ids in [lo, hi], made once.
  llvm::DenseMap<std::tuple<mlir::Value, int64_t, int64_t>, mlir::Value> fromIndexValues;
  llvm::StringMap<RandomMask> randomMasks;
  /// The draws (RandomMask::draw) already turned into a dropout, and those
  /// read as numbers (materializeDraw): one draw cannot be both.
  llvm::StringSet<> usedDraws, materializedDraws;
  /// The train.random_uniform of each draw (its node) read as numbers or truths.
  llvm::StringMap<mlir::Value> drawValues;
};

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_GRAPHIMPORTER_H
