//===- Prepare.h - The ONNX model before the graph walk ---------*- C++ -*-===//
//
// What importOnnxFile does to the model between reading it and walking its
// graph: the checks ONNX's own passes need first (its checker lets through
// models that crash its version converter or shape inference), the opset,
// the batch size, and the copy shape inference probes first. Internal to
// onnx_import.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_PREPARE_H
#define MGS_ONNX_IMPORT_PREPARE_H

#include "Importer.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace mgs::onnx_import {

/// How errors name a node: its name, else its op and first output.
std::string labelOf(const onnx::NodeProto &node, int idx);

/// The supported ONNX op types (supportedOpTypes()), comma-separated.
std::string supportedList();

/// What ONNX's shape inference must not see, checked before it runs (both
/// found by fuzzing; ONNX's checker allows them):
///  - window attributes it divides by: a stride, dilation or kernel size of
///    0, or a group of 0 (it died of a division by zero);
///  - subgraphs (If, Loop, Scan: no supported op has one), whose nodes it
///    infers too, window attributes included;
///  - a tensor (initializer, or an attribute's: Constant's value) whose
///    raw_data is not the size its dims and dtype say, or with a negative
///    dimension (its data propagation copied past the end of a short one);
///  - a constant shape of Expand or ConstantOfShape with a dimension above
///    2^31 - 1 (it built one of 2^40 dimension by dimension, without end) and
///    a negative GatherND batch_dims (it read out of bounds): found by
///    scripts/mutate_onnx.py.
mlir::LogicalResult checkBeforeShapeInference(const onnx::GraphProto &graph,
                                              mlir::Location fileLoc);

/// A Reshape whose constant target (positive dimensions only) holds another
/// element count than its input's inferred static shape, as a message naming
/// the node; checked after a plain shape-inference pass and before the one
/// with data propagation, which ONNX's Reshape inference lets it reach and
/// which then builds shapes of that many dimensions (a Reshape of shape values
/// to 2^31 elements hung it: found by scripts/mutate_onnx.py).
/// `batch`: the export's batch size and the one set (--batch-size), when they
/// differ: a target that starts with the export's says the export fixed it.
std::optional<std::string>
reshapeCountMismatch(const onnx::GraphProto &graph,
                     std::optional<std::pair<int64_t, int64_t>> batch = std::nullopt);

/// Gives the output of each GroupNormalization that ONNX's shape inference
/// left without a shape (it has none for GroupNormalization-21) its input's
/// type, where the input has a shape; true when it gave any, and inference
/// is then run again to go on from there.
bool completeShapeInference(onnx::ModelProto &model);

/// Rewrites each MaxPool and AveragePool in ceil mode whose inferred output
/// has a window more than the op defines (ONNX's inference for the versions
/// before 22 keeps a last window that starts in the end padding) into floor
/// mode with the end padding that gives its windows; true when it rewrote
/// any, and inference is then run again. Throws std::runtime_error naming
/// an AveragePool that counts its padding and whose windows would then reach
/// past it.
bool rewriteCeilModePools(onnx::ModelProto &model);

/// Whether the graph has a node `op` of the default domain.
bool hasOp(const onnx::GraphProto &graph, llvm::StringRef op);

/// Rebuilds the graph's node list (Loops.cpp): each node `op` of the default
/// domain is given to `rewrite` with its label (labelOf) and the graph's
/// constants, which appends what replaces it and returns true, returns false
/// to keep it, or fails. `changed`: whether any was replaced.
mlir::LogicalResult rewriteEach(
    onnx::ModelProto &model, llvm::StringRef op, bool &changed,
    llvm::function_ref<mlir::FailureOr<bool>(onnx::NodeProto &, const std::string &,
                                             const llvm::StringMap<const onnx::TensorProto *> &)>
        rewrite);

/// Lowers each Col2Im (PyTorch's F.fold) whose input shape, image_shape and
/// block_shape are known into a Reshape to the grid of blocks and a
/// ConvTranspose grouped by channel whose constant kernels are one-hot
/// (Col2Im.cpp); one not known yet is kept, or with `strict` an error naming
/// the node. Returns whether any was lowered in `changed`.
mlir::LogicalResult lowerCol2Ims(onnx::ModelProto &model, mlir::Location fileLoc, bool strict,
                                 bool &changed);

/// Lowers each GridSample (PyTorch's F.grid_sample) whose image and grid
/// shapes are known into the pixel coordinates its grid gives, Gathers of the
/// image's rows at the pixels around them and their bilinear (or nearest)
/// weights (GridSample.cpp); one not known yet is kept, or with `strict` an
/// error naming the node, as is a mode or padding mgs does not sample.
/// Returns whether any was lowered in `changed`.
mlir::LogicalResult lowerGridSamples(onnx::ModelProto &model, mlir::Location fileLoc, int64_t opset,
                                     bool strict, bool &changed);

/// Lowers each 2-D DeformConv (torchvision's deform_conv2d, as torch.export
/// writes it) whose input shapes are known into bilinear samples of the image
/// at each tap's place plus its offset (Gathers of the image's rows, as
/// GridSample's), times the mask, and a Gemm of those columns with each
/// group's weights (GridSample.cpp); one not known yet is kept, or with
/// `strict` an error naming the node.
mlir::LogicalResult lowerDeformConvs(onnx::ModelProto &model, mlir::Location fileLoc, int64_t opset,
                                     bool strict, bool &changed);

/// Unrolls each Loop whose trip count is a constant (at most 4096) and
/// whose condition stays true, or a while loop whose condition counts a
/// carried index from a constant up to a constant (torch.export's
/// EmbeddingBag), into copies of its body, the subgraphs its nodes hold
/// renamed in each (Loops.cpp); a Loop whose trip count is not known yet is
/// kept, or with `strict` an error naming the node, as is another while loop.
/// Returns whether any was unrolled in `changed`.
mlir::LogicalResult unrollLoops(onnx::ModelProto &model, mlir::Location fileLoc, int64_t opset,
                                bool strict, bool &changed);

/// Replaces each If whose condition is a constant by the nodes of the branch
/// it takes (Loops.cpp); one whose condition is not known yet is kept, or
/// with `strict` an error naming the node. Returns whether any was replaced
/// in `changed`.
mlir::LogicalResult inlineIfs(onnx::ModelProto &model, mlir::Location fileLoc, bool strict,
                              bool &changed);

/// Rewrites each Gather at a Slice (constant starts, ends, axes, steps) of
/// token ids (an INT64 graph input, through reshapes) into a Slice of the
/// Gather at all the ids, one Gather per table and ids (SlicedIds.cpp):
/// nn.EmbeddingBag's bags as the TorchScript exporter's Loop slices them.
/// Returns whether it rewrote any.
bool gatherBeforeSlices(onnx::ModelProto &model);

/// Replaces the sequences built by SequenceConstruct, SequenceEmpty and
/// SequenceInsert (at constant positions) by their elements: SequenceAt at
/// a constant position becomes an Identity, ConcatFromSequence a Concat,
/// SequenceLength a constant. Leaves the graph as it was when a sequence is
/// read otherwise. Returns whether it replaced any.
bool resolveSequences(onnx::ModelProto &model, int64_t opset);

/// Whether the graph has a MaxPool or AveragePool in ceil mode.
bool hasCeilModePool(const onnx::GraphProto &graph);

/// `model` without its FLOAT initializers' data: each becomes a graph input
/// of its dtype and shape (what shape inference reads of it); integer ones
/// (shapes, axes: small) are kept, since data propagation reads their values.
onnx::ModelProto shapeOnlyCopy(onnx::ModelProto &model);

/// The default-domain opset the model imports, or an error.
mlir::FailureOr<int64_t> defaultOpset(const onnx::ModelProto &model, mlir::Location loc);

/// Every graph output must be a graph input, an initializer or some node's
/// output. ONNX's checker (1.12) does not check it, and its version converter
/// dereferences the missing producer (found by fuzzing).
mlir::LogicalResult checkOutputsProduced(const onnx::GraphProto &graph, mlir::Location loc);

/// Sets the graph inputs' symbolic dimensions named in `dims` (--dim),
/// before setBatchSize; a name no input has is an error listing theirs.
mlir::LogicalResult setNamedDims(onnx::ModelProto &model,
                                 llvm::ArrayRef<std::pair<std::string, int64_t>> dims,
                                 mlir::Location loc);

/// Replaces the graph inputs named in `bindings` (--bind-input) by nodes,
/// first in the graph, that compute their values: a ConstantOfShape, or
/// Equal (then Not, for !=) of another input and a constant, cast to the
/// input's dtype. Their shapes must be static (after setNamedDims and
/// setBatchSize); errors say which binding and why.
mlir::LogicalResult bindInputs(onnx::ModelProto &model, llvm::ArrayRef<InputBinding> bindings,
                               mlir::Location loc);

/// Rewrites SplitToSequence by a constant list of sizes, read only by
/// SequenceAt at constant positions (torch.split(x, [a, b, c]) by the
/// torch.export-based exporter: Mamba's, LeViT's), into Split and Identity
/// nodes, so that ONNX's shape inference sees the pieces' shapes (it leaves
/// SequenceAt's unknown). Other sequences are left to Sequence.cpp.
void splitSequences(onnx::ModelProto &model, int64_t opset);

/// torch.export writes F.softplus(x, beta, threshold) as Where(x * beta >
/// threshold, x, Softplus(x * beta) / beta), a comparison of run-time data;
/// with a threshold of 15 or more both branches agree to float32's precision
/// where the condition holds, and the Where becomes its third input (the
/// comparison, read by nothing else, is dropped). Mamba's time steps.
void foldSoftplusThreshold(onnx::ModelProto &model);

/// Sets the batch dimension (dimension 0) of the graph inputs that are not
/// initializers and forgets the shapes shape inference must recompute. When
/// some inputs have a symbolic dimension 0, only those are batch inputs (the
/// others, e.g. weights passed as inputs, keep their shape); otherwise every
/// input is (torch exports fix the batch at the example's size). Returns the
/// batch size the export fixed (the static dimension 0 replaced), if any.
std::optional<int64_t> setBatchSize(onnx::ModelProto &model, int64_t batch);

/// A model exported with a fixed batch `exported` draws its per-sample random
/// numbers (stochastic depth: RandomUniformLike of a constant shaped
/// [exported, 1, ...], RandomUniform's `shape`, Bernoulli of a constant
/// probability, also [exported, d, ...]: torch.bernoulli(torch.full_like(x,
/// p)) folded; RandomNormal's `shape` whose first dimension is `exported`:
/// torch.randn(x.shape[0], ...)) for that many samples; they are redrawn for
/// `batch`. With an exported batch of 1 only a draw of one element per
/// dimension is taken as per sample: it cannot be told from a draw for the
/// whole batch (torchvision's mode "batch"), and every torchvision model uses
/// "row"; a draw of (1, d, ...) stays one for the whole batch. (A draw whose
/// first dimension is the exported batch but means something else, torch.rand(2,
/// d) in a model exported at batch 2, is resized too, as RandomNormal's always
/// were: export at another batch size to tell them apart.) Uniform numbers
/// of a constant's shape compared with a constant of that shape holding one
/// value (torch.bernoulli(torch.full_like(x, p)) as PyTorch 1.13 writes it)
/// are compared with that value as a scalar instead, whatever the batch.
void resizeRandomDraws(onnx::ModelProto &model, int64_t exported, int64_t batch);

/// Folds the shape arithmetic of the graph (ConstantFolding.h) into
/// Constant nodes, in graph order, then re-runs `inferShapes` so that the
/// nodes whose output shapes depended on it (a Reshape to a computed shape)
/// get static ones, and folds again, until a pass folds nothing: ONNX's data
/// propagation alone stops at the first op it does not propagate through.
/// Nodes that do not fold are left for the graph walk, which folds them or
/// reports why it cannot.
void foldShapeArithmetic(onnx::ModelProto &model, int64_t opset,
                         llvm::function_ref<void(onnx::ModelProto &)> inferShapes);

/// The shapes ONNX's shape inference gave the graph's values (its inputs,
/// value_info and outputs; -1: a dimension it did not know), the
/// initializers' and the Constant nodes' values'.
llvm::StringMap<llvm::SmallVector<int64_t>> knownShapes(const onnx::GraphProto &graph);

/// Initializers and Constant nodes' values by name; a Constant given by
/// value_float, value_ints, ... becomes a tensor in `owned`.
llvm::StringMap<const onnx::TensorProto *>
constantTensors(const onnx::GraphProto &graph, std::deque<onnx::TensorProto> &owned);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_PREPARE_H
