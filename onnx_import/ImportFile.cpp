//===- ImportFile.cpp - ONNX model file -> train dialect ------------------===//
//
// The entry points of Importer.h. importOnnxFile reads the model (binary
// protobuf or ONNX text syntax), checks it with ONNX's checker, upgrades old
// opsets with ONNX's version converter, fixes the batch size and runs ONNX
// shape inference (the checks and rewrites of the model around these steps
// are in Prepare.cpp, Einsum.cpp and GraphLoss.cpp), then walks the graph
// (GraphImporter, Importer.cpp).
//
// ONNX and protobuf report errors by throwing; this library is built with
// exceptions and turns every exception into an MLIR diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "Einsum.h"
#include "GraphImporter.h"
#include "GraphLoss.h"
#include "ModelIO.h"
#include "OpConverters.h"
#include "Prepare.h"
#include "TorchExport.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <stdexcept>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

namespace {

LogicalResult readModel(StringRef path, onnx::ModelProto &model, Location loc) {
  std::string error;
  if (!readModelFile(path.str(), model, error))
    return emitError(loc) << error;
  return success();
}

} // namespace

LogicalResult readInitializers(
    MLIRContext &context, StringRef path, ArrayRef<std::string> names,
    function_ref<LogicalResult(StringRef, ArrayRef<int64_t>, ArrayRef<float>)> consume) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  onnx::ModelProto model;
  if (failed(readModel(path, model, fileLoc)))
    return failure();
  try {
    llvm::StringMap<const onnx::TensorProto *> byName;
    for (const auto &init : model.graph().initializer())
      byName[init.name()] = &init;
    for (const std::string &name : names) {
      const onnx::TensorProto *t = byName.lookup(name);
      if (!t)
        return emitError(fileLoc) << "'" << path << "' has no initializer '" << name << "'";
      if (t->data_type() != onnx::TensorProto::FLOAT)
        return emitError(fileLoc) << "initializer '" << name << "' has dtype "
                                  << dtypeName(t->data_type()) << ", expected FLOAT";
      SmallVector<int64_t> shape(t->dims().begin(), t->dims().end());
      std::vector<float> data = onnx::ParseData<float>(t);
      if (static_cast<int64_t>(data.size()) != numElements(shape))
        return emitError(fileLoc) << "initializer '" << name << "' holds " << data.size()
                                  << " values for shape " << shapeToString(shape);
      if (failed(consume(name, shape, data)))
        return failure();
    }
    return success();
  } catch (const std::exception &e) {
    return emitError(fileLoc) << "reading the initializers of '" << path << "': " << e.what();
  }
}

int64_t maxSupportedOpset() {
  const auto &ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  int64_t known = it == ranges.end() ? kMaxOpset : it->second.second;
  return std::min(kMaxOpset, known);
}

std::string onnxLibraryDescription() {
  return std::string("ONNX ") + MGS_ONNX_VERSION + " (opsets " +
         std::to_string(kMinOpset) + "-" + std::to_string(maxSupportedOpset()) + ")";
}

SmallVector<StringRef> supportedOpTypes() {
  // (Einsum is rewritten into MatMul and Transposes before the graph walk,
  // Col2Im into a ConvTranspose, GridSample and DeformConv into Gathers; comparisons and logic of
  // computed data are ComputedTruth.cpp's.)
  SmallVector<StringRef> ops{"Col2Im",      "Constant", "ConstantOfShape",
                             "DeformConv",  "Einsum",   "GridSample",
                             "Expand",      "Shape",    "And",
                             "Equal",       "Greater",  "GreaterOrEqual",
                             "IsInf",       "IsNaN",    "Less",
                             "LessOrEqual", "Not",      "Or",
                             "Sign",        "Xor"};
  for (const auto &entry : opConverters())
    ops.push_back(entry.getKey());
  llvm::sort(ops);
  // Expand is folded or converted: listed once.
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

FailureOr<OwningOpRef<ModuleOp>> importOnnxFile(MLIRContext &context, StringRef path,
                                                const ImportOptions &options) {
  context.loadDialect<TrainDialect, arith::ArithDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  if (options.batchSize && *options.batchSize < 1)
    return emitError(fileLoc) << "batch size must be positive, got " << *options.batchSize;

  onnx::ModelProto model;
  if (failed(readModel(path, model, fileLoc)))
    return failure();

  // The export's batch size and the one set, when they differ. A model
  // exported at a fixed batch keeps that batch where PyTorch computed a shape
  // from it (x.view(x.size(0), -1) traced without a dynamic batch): a shape
  // error after another batch is set says so.
  std::optional<std::pair<int64_t, int64_t>> batchChange;
  ScopedDiagnosticHandler batchNote(&context, [&, noted = false](Diagnostic &diag) mutable {
    if (!batchChange || noted || diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    const std::string text = diag.str();
    if ((text.find("ShapeInferenceError") == std::string::npos &&
         text.find("shapes are inconsistent") == std::string::npos) ||
        text.find("the export fixed its batch size") != std::string::npos)
      return failure();
    noted = true;
    diag.attachNote(fileLoc) << "the export fixed the batch size at " << batchChange->first
                             << " (its input's first dimension is a number, not a symbol) and "
                                "--batch-size is "
                             << batchChange->second
                             << ": a shape PyTorch computed from the batch (x.view(x.size(0), "
                                "-1)) keeps "
                             << batchChange->first
                             << "; export with a dynamic batch dimension (dynamic_axes or "
                                "torch.export's dynamic_shapes), or compile with --batch-size "
                             << batchChange->first;
    return failure(); // (reported as usual, with the note)
  });
  std::string stage = "the ONNX checker";
  try {
    onnx::checker::check_model(model);
    if (failed(checkOutputsProduced(model.graph(), fileLoc)) ||
        failed(checkBeforeShapeInference(model.graph(), fileLoc)) ||
        (!options.forInference && (failed(checkExportedParameters(model.graph(), fileLoc)) ||
                                   failed(checkBufferMutations(model.graph(), fileLoc)) ||
                                   failed(checkEvalModeExport(model, fileLoc)))))
      return failure();

    stage = "reading the opset";
    auto opset = defaultOpset(model, fileLoc);
    if (failed(opset))
      return failure();
    if (*opset > maxSupportedOpset())
      return emitError(fileLoc) << "the model uses opset " << *opset
                                << " of the default domain; mgs supports " << kMinOpset << " to "
                                << maxSupportedOpset() << " (with " << onnxLibraryDescription()
                                << ")";
    if (*opset < kMinOpset) {
      stage = "ONNX's version converter (opset " + std::to_string(*opset) + " -> " +
              std::to_string(kMinOpset) + ")";
      model = onnx::version_conversion::ConvertVersion(model, kMinOpset);
      *opset = kMinOpset;
    }

    stage = "--dim and --bind-input";
    if (failed(setNamedDims(model, options.dims, fileLoc)))
      return failure();
    if (options.batchSize)
      if (std::optional<int64_t> exported = setBatchSize(model, *options.batchSize)) {
        resizeRandomDraws(model, *exported, *options.batchSize);
        if (*exported != *options.batchSize)
          batchChange = std::pair{*exported, *options.batchSize};
      }
    if (failed(bindInputs(model, options.bindings, fileLoc)))
      return failure();
    splitSequences(model, *opset);
    foldSoftplusThreshold(model);
    if (failed(decomposeSoftTargetCrossEntropy(model, *opset, fileLoc)))
      return failure();
    stage = "ONNX shape inference";
    auto inferShapes = [&batchChange](onnx::ModelProto &m) {
      // A ceil-mode pool may be inferred a window too many until it is
      // rewritten (rewriteCeilModePools): the graph outputs' shapes are
      // set aside until then, so as not to conflict with that inference,
      // and checked after.
      const bool ceilPools = hasCeilModePool(m.graph());
      google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> declared;
      auto forgetShapes = [&m] {
        for (onnx::ValueInfoProto &out : *m.mutable_graph()->mutable_output())
          if (out.type().has_tensor_type())
            out.mutable_type()->mutable_tensor_type()->clear_shape();
        m.mutable_graph()->clear_value_info();
      };
      if (ceilPools) {
        declared = m.graph().output();
        forgetShapes();
      }
      {
        // First without data propagation, on a copy whose initializers are
        // graph inputs of their types (no data copied): ONNX 1.12's data
        // propagation crashes (SIGSEGV in Shape's) on shapes it cannot infer,
        // such as a Reshape whose element count does not fit, which the plain
        // pass reports as errors.
        onnx::ModelProto probe = shapeOnlyCopy(m);
        onnx::shape_inference::InferShapes(
            probe, onnx::OpSchemaRegistry::Instance(),
            onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1,
                                        /*enable_data_propagation=*/false));
        if (std::optional<std::string> mismatch =
                reshapeCountMismatch(probe.graph(), batchChange))
          throw std::runtime_error(*mismatch);
      }
      auto infer = [&] {
        auto pass = [&](bool dataPropagation) {
          onnx::shape_inference::InferShapes(
              m, onnx::OpSchemaRegistry::Instance(),
              onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1,
                                          dataPropagation));
        };
        try {
          pass(/*dataPropagation=*/true);
        } catch (const std::exception &) {
          // ONNX's data propagation rejects some models its plain pass
          // accepts (BLOOM's ALiBi by torch.export: a [4, 1, 1] x [16] Mul
          // of constants is "Invalid rank for Mul broadcasting"); the plain
          // pass (above, on the probe) accepted this one. Infer again
          // without it: the folder computes those values at import.
          m.mutable_graph()->clear_value_info();
          pass(/*dataPropagation=*/false);
        }
      };
      infer();
      // ONNX has no shape inference for GroupNormalization-21: its output
      // has its input's type; with it given, inference goes on from there.
      // A ceil-mode pool inferred a window too many is rewritten, and the
      // shapes after it inferred again. (Each round shapes one more
      // GroupNormalization or rewrites one more pool at least.)
      for (int round = 0; round < 2 * m.graph().node_size(); ++round) {
        if (rewriteCeilModePools(m))
          forgetShapes();
        else if (!completeShapeInference(m))
          break;
        infer();
      }
      if (ceilPools) {
        *m.mutable_graph()->mutable_output() = declared;
        infer();
      }
    };
    inferShapes(model);
    foldShapeArithmetic(model, *opset, inferShapes);
    // Einsums become MatMul and Transposes once their operands' ranks are
    // known (often only after folding: attention's head split), Col2Ims
    // ConvTransposes and GridSamples Gathers once their shapes are, and the
    // shapes after them are inferred and folded again.
    // Loops of a known trip count are unrolled likewise and Ifs of a known
    // condition inlined, and the sequences they build replaced by their
    // elements.
    for (bool rewrote = true; rewrote;) {
      bool unrolled = false, inlined = false, folded = false, sampled = false, deformed = false;
      if (failed(lowerEinsums(model, fileLoc, *opset, /*strict=*/false, rewrote)) ||
          failed(lowerCol2Ims(model, fileLoc, /*strict=*/false, folded)) ||
          failed(lowerGridSamples(model, fileLoc, *opset, /*strict=*/false, sampled)) ||
          failed(lowerDeformConvs(model, fileLoc, *opset, /*strict=*/false, deformed)) ||
          failed(unrollLoops(model, fileLoc, *opset, /*strict=*/false, unrolled)) ||
          failed(inlineIfs(model, fileLoc, /*strict=*/false, inlined)))
        return failure();
      // Sequences are resolved whether or not a Loop built them: a
      // position folded this round may be the one a SequenceAt was waiting
      // for.
      rewrote |= unrolled | inlined | folded | sampled | deformed;
      rewrote |= resolveSequences(model, *opset);
      if (rewrote) {
        model.mutable_graph()->clear_value_info();
        inferShapes(model);
        foldShapeArithmetic(model, *opset, inferShapes);
      }
    }
    bool rewrote = false;
    if (failed(lowerEinsums(model, fileLoc, *opset, /*strict=*/true, rewrote)) ||
        failed(lowerCol2Ims(model, fileLoc, /*strict=*/true, rewrote)) ||
        failed(lowerGridSamples(model, fileLoc, *opset, /*strict=*/true, rewrote)) ||
        failed(lowerDeformConvs(model, fileLoc, *opset, /*strict=*/true, rewrote)) ||
        failed(unrollLoops(model, fileLoc, *opset, /*strict=*/true, rewrote)) ||
        failed(inlineIfs(model, fileLoc, /*strict=*/true, rewrote)))
      return failure();
    // An embedding's Gathers at slices of the token ids (EmbeddingBag's
    // bags, once its Loop is unrolled) gather at all of them, then slice.
    if (gatherBeforeSlices(model)) {
      model.mutable_graph()->clear_value_info();
      inferShapes(model);
      foldShapeArithmetic(model, *opset, inferShapes);
    }
    stage = "lifting the graph's loss";
    FailureOr<std::optional<GraphLoss>> graphLoss = liftGraphLoss(model, *opset, fileLoc);
    if (failed(graphLoss))
      return failure();
    if (*graphLoss && (*graphLoss)->flattened) {
      model.mutable_graph()->clear_value_info();
      inferShapes(model);
    }

    stage = "import";
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
    GraphImporter importer(context, *module, fileLoc, options, *opset,
                           model.producer_name() == "pytorch");
    if (failed(importer.importGraph(model.graph())))
      return failure();
    if (*graphLoss)
      recordGraphLoss(module->lookupSymbol<func::FuncOp>(options.functionName), **graphLoss);
    if (!options.inlineWeights && !module->getOps<ParameterOp>().empty()) {
      SmallString<256> absolute(path);
      llvm::sys::fs::make_absolute(absolute);
      (*module)->setAttr(kWeightsFileAttrName, StringAttr::get(&context, absolute));
    }
    if (failed(verify(*module)))
      return emitError(fileLoc) << "the imported module does not verify (an mgs bug)";
    return module;
  } catch (const std::exception &e) {
    return emitError(fileLoc) << stage << " rejected '" << path << "': " << e.what();
  }
}

} // namespace mgs::onnx_import
