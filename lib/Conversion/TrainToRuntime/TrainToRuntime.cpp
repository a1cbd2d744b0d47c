//===- TrainToRuntime.cpp - train steps -> LLVM calls into mgsrt ----------===//
//
// Three phases per step function:
//  1. describe (KernelCalls.cpp): every op becomes a kernel call (entry
//     point, constant descriptor, buffer list) or an alias (reshape, flatten,
//     gradient tag);
//  2. plan (StepLowering.cpp): every value gets storage: an io slot
//     (parameters, velocities, inputs, labels, loss, outputs), a constant
//     global, or an arena offset placed by liveness (BufferPlan);
//  3. emit (StepLowering.cpp): an LLVM function that fills a pointer array
//     per call and calls the kernel, then returns the context's sticky status.
// This file: the pass, the manifest and the model's other symbols. Entry
// points, descriptor fields and manifest keys are those of
// runtime/include/mgsrt/contract.h.
//
//===----------------------------------------------------------------------===//

#include "mgs/Conversion/Passes.h"
#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Support/FormatNumber.h"

#include "StepLowering.h"

#include "mgsrt/contract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include <cstdio>

namespace mgs {

#define GEN_PASS_DEF_CONVERTTRAINTORUNTIME
#include "mgs/Conversion/Passes.h.inc"

namespace {

using namespace mlir;
using namespace mgs::train;
using namespace mgs::lowering;
namespace manifest = contract::manifest;
namespace symbols = contract::symbols;

/// A manifest line's key: "\nKEY" (its values follow, each after a space).
std::string item(std::string_view key) { return "\n" + std::string(key); }

void appendShape(std::string &out, Type type) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
  out += " " + std::to_string(shape.size());
  for (int64_t d : shape)
    out += " " + std::to_string(d);
}

struct ConvertTrainToRuntime : impl::ConvertTrainToRuntimeBase<ConvertTrainToRuntime> {
  using ConvertTrainToRuntimeBase::ConvertTrainToRuntimeBase;

  /// What the lowering and the driver rely on, as train-build-step builds
  /// it: @eval_step(inputs...) -> (outputs...), all ranked tensors, the first
  /// input's dimension 0 the batch; @train_step(inputs..., labels) -> (loss,
  /// the first output, ...), the loss a float32 scalar. A step built or
  /// edited otherwise is an error here, not a crash in the lowering.
  static LogicalResult checkStepSignatures(func::FuncOp eval, func::FuncOp train) {
    auto ranked = [](Type t) { return isa<RankedTensorType>(t); };
    auto io = [](func::FuncOp f, bool arg, unsigned i) {
      auto name = arg ? f.getArgAttrOfType<StringAttr>(i, "train.name")
                      : f.getResultAttrOfType<StringAttr>(i, "train.name");
      return (arg ? "input " : "output ") + std::to_string(i) +
             (name ? " ('" + name.getValue().str() + "')" : std::string());
    };
    FunctionType e = eval.getFunctionType();
    for (auto [i, t] : llvm::enumerate(e.getInputs()))
      if (!ranked(t))
        return eval.emitError() << "@eval_step's " << io(eval, true, i) << " is " << t
                                << "; the runtime takes ranked tensors";
    for (auto [i, t] : llvm::enumerate(e.getResults()))
      if (!ranked(t))
        return eval.emitError() << "@eval_step's " << io(eval, false, i) << " is " << t
                                << "; the runtime takes ranked tensors";
    if (e.getNumInputs() && cast<RankedTensorType>(e.getInput(0)).getRank() == 0)
      return eval.emitError() << "the model's " << io(eval, true, 0) << " is a scalar ("
                              << e.getInput(0)
                              << "): a compiled model takes a batch of samples along its "
                                 "first input's dimension 0; export the model with a batch "
                                 "dimension";
    if (e.getNumInputs() && cast<RankedTensorType>(e.getInput(0)).getDimSize(0) < 1)
      return eval.emitError() << "the model's " << io(eval, true, 0) << " is " << e.getInput(0)
                              << ": a compiled model needs a static, positive batch size "
                                 "(mgsc --batch-size)";
    if (!train)
      return success();
    FunctionType t = train.getFunctionType();
    if (t.getNumInputs() < 1 || t.getNumResults() < 2 || !llvm::all_of(t.getInputs(), ranked) ||
        !llvm::all_of(t.getResults(), ranked))
      return train.emitError() << "@train_step must take the inputs and the labels last and "
                                  "return the loss and the model's first output, all ranked "
                                  "tensors (as train-build-step builds it); it is "
                               << t;
    auto loss = cast<RankedTensorType>(t.getResult(0));
    if (loss.getRank() != 0 || !loss.getElementType().isF32())
      return train.emitError() << "@train_step's first result must be the loss, a tensor<f32>; "
                                  "it is "
                               << loss;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    auto accum = module.lookupSymbol<func::FuncOp>("accum_step");
    if (!eval) {
      module.emitError() << "convert-train-to-runtime: no @eval_step (run train-build-step first)";
      return signalPassFailure();
    }
    for (double d : densitySchedule)
      if (!(d > 0.0 && d <= 1.0)) {
        module.emitError() << "convert-train-to-runtime: density-schedule: each density must be "
                              "in (0, 1], got "
                           << formatNumber(d);
        return signalPassFailure();
      }
    if (failed(checkStepSignatures(eval, train)))
      return signalPassFailure();
    int64_t accumulate = 1;
    if (accum) {
      auto steps = accum->getAttrOfType<IntegerAttr>(kAccumulateAttrName);
      if (!train || accum.getFunctionType() != train.getFunctionType() || !steps ||
          steps.getInt() < 2) {
        accum.emitError() << "@accum_step must have @train_step's type and a "
                          << kAccumulateAttrName
                          << " of 2 or more (as train-accumulate-gradients builds it)";
        return signalPassFailure();
      }
      accumulate = steps.getInt();
    }
    // A density warm-up changes k at run time in the top-k, the gather and
    // the scatter-add alike: the gather must know the gradient's size.
    if (!densitySchedule.empty()) {
      WalkResult walk = module.walk([&](comm::AllGatherStartOp gather) {
        if (gather.getValues().getDefiningOp<comm::TopKSparsifyOp>())
          return WalkResult::advance();
        gather.emitOpError() << "gathers values that no comm.topk_sparsify produced directly; "
                                "a density schedule cannot size it";
        return WalkResult::interrupt();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
    }
    // The sparse collectives a GPU step runs: the manifest names them (for
    // the record; NCCL and the staged MPI path both run them).
    bool gtopk = false, sparseAllReduce = false;
    if (target == "cuda")
      module.walk([&](Operation *op) {
        gtopk |= isa<comm::GTopKStartOp>(op);
        sparseAllReduce |= isa<comm::SparseAllReduceStartOp>(op);
      });
    if (target != "cpu" && target != "cuda") {
      module.emitError() << "convert-train-to-runtime: unknown target '" << target
                         << "' (expected cpu or cuda)";
      return signalPassFailure();
    }
    if (precision != "f32" && precision != "bf16" && precision != "f16") {
      module.emitError() << "convert-train-to-runtime: unknown precision '" << precision
                         << "' (expected f32, bf16 or f16)";
      return signalPassFailure();
    }
    if (precision != "f32" && target == "cuda" && !unverifiedGpuPrecision) {
      module.emitError() << "convert-train-to-runtime: precision " << precision
                         << " is not enabled for target cuda yet (its CUDA kernels have not "
                            "run on a GPU)";
      return signalPassFailure();
    }

    llvm::StringMap<int64_t> paramIndex, velocityIndex;
    std::string manifest = std::string(manifest::kHeader) + " " +
                           std::to_string(manifest::kVersion) + item(manifest::kMode) + " " +
                           std::string(train ? manifest::kModeTrain : manifest::kModeInference);
    std::string params;
    for (auto param : module.getOps<ParameterOp>()) {
      StringRef name = param.getSymName();
      if (name.find_first_of(" \t\n") != StringRef::npos) {
        param.emitError() << "parameter name '" << name
                          << "' contains whitespace, which the runtime manifest cannot hold";
        return signalPassFailure();
      }
      paramIndex[name] = paramIndex.size();
      if (param.getTrainable())
        velocityIndex[name] = velocityIndex.size();
      params += item(manifest::kParam) + " " + name.str() + " " +
                std::string(param.getTrainable() ? manifest::kTrainable : manifest::kState);
      appendShape(params, param.getType());
    }

    // Each int64 input's bound, read before the lowering replaces the
    // gathers: the fewest rows of a table it is gathered from directly
    // (manifest index_rows; the driver checks the data against it).
    SmallVector<std::pair<int64_t, std::string>> indexRows(eval.getNumArguments());
    for (auto [i, arg] : llvm::enumerate(eval.getArguments()))
      for (Operation *user : arg.getUsers()) {
        auto gather = dyn_cast<GatherOp>(user);
        if (!gather || gather.getIndices() != arg)
          continue;
        int64_t rows = cast<RankedTensorType>(gather.getTable().getType()).getDimSize(0);
        if (indexRows[i].first && indexRows[i].first <= rows)
          continue;
        auto param = gather.getTable().getDefiningOp<GetParamOp>();
        indexRows[i] = {rows, param ? param.getName().str() : "-"};
      }

    // Each int64 input read as numbers: the narrowest range of its
    // from_index reads (manifest index_range).
    SmallVector<std::optional<std::pair<int64_t, int64_t>>> indexRanges(eval.getNumArguments());
    for (auto [i, arg] : llvm::enumerate(eval.getArguments()))
      for (Operation *user : arg.getUsers())
        if (auto from = dyn_cast<FromIndexOp>(user)) {
          auto lo = static_cast<int64_t>(from.getLo()), hi = static_cast<int64_t>(from.getHi());
          if (indexRanges[i])
            indexRanges[i] = {std::max(lo, indexRanges[i]->first),
                              std::min(hi, indexRanges[i]->second)};
          else
            indexRanges[i] = {lo, hi};
        }

    Globals globals;
    int64_t arena = 0, collectives = 0, compiledWorkers = 0;
    for (auto [func, isTrain, name] :
         {std::tuple{train, true, symbols::kTrainStep}, std::tuple{eval, false, symbols::kEvalStep},
          std::tuple{accum, true, symbols::kAccumStep}}) {
      if (!func)
        continue;
      StepLowering lowering(module, paramIndex, velocityIndex, paramIndex.size(),
                            velocityIndex.size(), globals);
      lowering.instrument = instrument;
      lowering.deviceConstants = target == "cuda";
      lowering.precision = precision == "bf16"  ? MGSRT_PRECISION_BF16
                           : precision == "f16" ? MGSRT_PRECISION_F16
                                                : MGSRT_PRECISION_F32;
      if (failed(lowering.lower(func, isTrain, name)))
        return signalPassFailure();
      arena = std::max(arena, lowering.arenaBytes);
      if (lowering.compiledWorkers && compiledWorkers &&
          lowering.compiledWorkers != compiledWorkers) {
        module.emitError() << "convert-train-to-runtime: the steps' exchanges are compiled for "
                           << compiledWorkers << " and " << lowering.compiledWorkers
                           << " workers; the module runs on one number of workers";
        return signalPassFailure();
      }
      if (func == train) {
        collectives = lowering.numCollectives;
        compiledWorkers = lowering.compiledWorkers;
      }
      unplannedBytes = std::max<uint64_t>(unplannedBytes, lowering.unplannedBytes);
      numKernelCalls += lowering.numCalls;
      copyFreeBuckets += lowering.numCopyFreeBuckets;
      copyFreeSplits += lowering.numCopyFreeSplits;
    }
    arenaBytes = arena;
    emitConstantTable(module, globals, target == "cuda");

    FunctionType evalType = eval.getFunctionType();
    // The driver reads and writes float32 files for graph inputs and outputs.
    for (auto [i, type] : llvm::enumerate(evalType.getResults()))
      if (!cast<RankedTensorType>(type).getElementType().isF32()) {
        eval.emitError() << "graph output " << i << " has element type "
                         << cast<RankedTensorType>(type).getElementType()
                         << "; compiled models can only output float32 tensors";
        return signalPassFailure();
      }
    int64_t batch = evalType.getNumInputs()
                        ? cast<RankedTensorType>(evalType.getInput(0)).getDimSize(0)
                        : 1;
    manifest += item(manifest::kBatchSize) + " " + std::to_string(batch);
    manifest += item(manifest::kArenaBytes) + " " + std::to_string(arena);
    manifest += params;
    auto ioName = [&](func::FuncOp f, bool arg, unsigned i) -> std::string {
      auto attr = arg ? f.getArgAttrOfType<StringAttr>(i, "train.name")
                      : f.getResultAttrOfType<StringAttr>(i, "train.name");
      return attr ? attr.getValue().str() : (arg ? "input" : "output") + std::to_string(i);
    };
    for (unsigned i = 0; i < evalType.getNumInputs(); ++i) {
      // An integer input holds indices (token ids, int64).
      bool indices = cast<ShapedType>(evalType.getInput(i)).getElementType().isInteger(64);
      std::string name = ioName(eval, true, i);
      manifest += item(indices ? manifest::kIndexInput : manifest::kInput) + " " + name;
      appendShape(manifest, evalType.getInput(i));
      if (indices && indexRows[i].first > 0)
        manifest += item(manifest::kIndexRows) + " " + name + " " +
                    std::to_string(indexRows[i].first) + " " + indexRows[i].second;
      if (indices && indexRanges[i])
        manifest += item(manifest::kIndexRange) + " " + name + " " +
                    std::to_string(indexRanges[i]->first) + " " +
                    std::to_string(indexRanges[i]->second);
    }
    for (unsigned i = 0; i < evalType.getNumResults(); ++i) {
      manifest += item(manifest::kOutput) + " " + ioName(eval, false, i);
      appendShape(manifest, evalType.getResult(i));
    }
    if (train) {
      FunctionType t = train.getFunctionType();
      manifest += item(manifest::kLabels);
      appendShape(manifest, t.getInput(t.getNumInputs() - 1));
      if (auto shape = train.getArgAttrOfType<DenseI64ArrayAttr>(t.getNumInputs() - 1,
                                                                 kLabelShapeAttrName)) {
        manifest += item(manifest::kLabelShape) + " " + std::to_string(shape.size());
        for (int64_t d : shape.asArrayRef())
          manifest += " " + std::to_string(d);
      }
      // A regression or multi-label loss names itself (float targets, no
      // classes); the cross-entropy's classes are its logits' columns.
      ElementwiseLossOp elementwise;
      train.walk([&](ElementwiseLossOp l) { elementwise = l; });
      if (elementwise) {
        manifest += item(manifest::kLoss) + " " + elementwise.getKind().str();
        if (elementwise.getKind() == "smooth_l1") {
          char beta[32];
          std::snprintf(beta, sizeof beta, " %.17g", elementwise.getBeta().convertToDouble());
          manifest += beta;
        }
        // The evaluation's loss weighs the positive targets as training's.
        if (Value posWeight = elementwise.getPosWeight()) {
          auto constant = posWeight.getDefiningOp<arith::ConstantOp>();
          auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
          if (!values) {
            elementwise.emitOpError() << "pos_weight must be a constant to be lowered";
            return signalPassFailure();
          }
          manifest += item(manifest::kPosWeight);
          for (float w : values.getValues<float>()) {
            char text[32];
            std::snprintf(text, sizeof text, " %.9g", w);
            manifest += text;
          }
        }
      }
      else if (auto logits = cast<RankedTensorType>(t.getResult(1)); logits.getRank() < 2) {
        train.emitError() << "@train_step's second result (the scores the cross-entropy "
                             "evaluates) must hold the classes on dimension 1; it is "
                          << logits;
        return signalPassFailure();
      } else
        manifest += item(manifest::kClasses) + " " + std::to_string(logits.getDimSize(1));
      // The labels the loss ignores are data the driver must accept (the
      // key is left out at its default).
      train.walk([&](SoftmaxCrossEntropyOp loss) {
        if (loss.getInGraph()) // (inside the graph's loss: not the labels' loss)
          return;
        auto ignored = static_cast<int64_t>(loss.getIgnoreIndex());
        if (ignored != manifest::kDefaultIgnoreIndex)
          manifest += item(manifest::kIgnoreIndex) + " " + std::to_string(ignored);
      });
    }
    if (collectives > 0)
      manifest += item(manifest::kCollectives) + " " + std::to_string(collectives);
    if (compiledWorkers > 0)
      manifest += item(manifest::kWorkers) + " " + std::to_string(compiledWorkers);
    if (target == "cuda")
      manifest += item(manifest::kTarget) + " " + std::string(manifest::kTargetCuda);
    if (precision != "f32")
      manifest += item(manifest::kPrecision) + " " +
                  std::string(precision == "bf16" ? manifest::kPrecisionBf16
                                                  : manifest::kPrecisionF16);
    if (gtopk || sparseAllReduce)
      manifest += item(manifest::kSparseCollectives) +
                  (gtopk ? " " + std::string(manifest::kGTopK) : "") +
                  (sparseAllReduce ? " " + std::string(manifest::kSparseAllReduce) : "");
    if (!densitySchedule.empty() && train) {
      manifest += item(manifest::kDensitySchedule);
      for (double d : densitySchedule) {
        char text[32];
        std::snprintf(text, sizeof text, " %.17g", d);
        manifest += text;
      }
    }
    if (accumulate > 1)
      manifest += item(manifest::kAccumulate) + " " + std::to_string(accumulate);
    if (instrument && train) {
      manifest += item(manifest::kInstrumented) + " 1";
      // Which parameter each gradient mark stands for.
      for (auto g : train.getOps<GradientOp>())
        manifest += item(manifest::kMark) + " " + std::to_string(g.getBackpropIndex()) + " " +
                    g.getParam().str();
    }
    if (auto source = module->getAttrOfType<StringAttr>(kWeightsFileAttrName))
      if (!source.getValue().contains('\n'))
        manifest += item(manifest::kSource) + " " + source.getValue().str();
    manifest += "\n";
    // Last, the checksum of all the above (the runtime refuses a patched one).
    char sum[17];
    std::snprintf(sum, sizeof sum, "%016llx",
                  static_cast<unsigned long long>(manifest::checksum(manifest)));
    manifest += std::string(manifest::kChecksum) + " " + sum + "\n";
    emitManifest(module, manifest);
    if (!train)
      emitFailingStep(module, symbols::kTrainStep,
                      "this model was compiled with --inference: it has no training step");
    if (!accum)
      emitFailingStep(module, symbols::kAccumStep,
                      "this model was compiled without --accumulate: it has no accumulation step");

    // Only the LLVM dialect remains.
    for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (isa<func::FuncOp, ParameterOp>(op))
        op.erase();
    module->removeAttr(kWeightsFileAttrName);
  }

  /// A step the model does not have is still defined (the driver links
  /// against every step, mgsrt.h): `symbol` fails with `why`.
  void emitFailingStep(ModuleOp module, StringRef symbol, StringRef why) {
    OpBuilder b(module.getContext());
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    std::string message = why.str();
    message.push_back('\0');
    b.setInsertionPointToStart(module.getBody());
    auto text = LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), message.size()),
                                       /*isConstant=*/true, LLVM::Linkage::Internal,
                                       ("__mgs_no_" + symbol).str(), b.getStringAttr(message));
    auto failFn = module.lookupSymbol<LLVM::LLVMFuncOp>(symbols::kCtxFail);
    if (!failFn)
      failFn = LLVM::LLVMFuncOp::create(
          b, loc, symbols::kCtxFail,
          LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, b.getI32Type(), ptr}));
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(b, loc, symbol,
                                       LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, ptr}));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value code = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                          b.getI32IntegerAttr(MGSRT_ERROR_INVALID_ARGUMENT));
    Value addr = LLVM::AddressOfOp::create(b, loc, text);
    Value status =
        LLVM::CallOp::create(b, loc, failFn, ValueRange{entry->getArgument(0), code, addr})
            .getResult();
    LLVM::ReturnOp::create(b, loc, status);
  }

  /// mgs_model_constants (mgsrt.h): for a GPU model, the table its steps read
  /// their constants through (initially their host addresses, which the
  /// driver replaces with device copies) and the constants' sizes; a CPU
  /// model's steps address their constants directly, and it returns 0.
  void emitConstantTable(ModuleOp module, const Globals &globals, bool device) {
    OpBuilder b(module.getContext());
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    const int64_t n = device ? static_cast<int64_t>(globals.constants.size()) : 0;
    LLVM::GlobalOp table, sizes;
    if (n > 0) {
      b.setInsertionPointToStart(module.getBody());
      auto tableType = LLVM::LLVMArrayType::get(ptr, n);
      table = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/false,
                                     LLVM::Linkage::Internal, kConstantTable, Attribute());
      Block *init = b.createBlock(&table.getInitializerRegion());
      b.setInsertionPointToStart(init);
      Value value = LLVM::UndefOp::create(b, loc, tableType);
      for (auto [i, global] : llvm::enumerate(globals.constants))
        value = LLVM::InsertValueOp::create(b, loc, value,
                                            LLVM::AddressOfOp::create(b, loc, global),
                                            ArrayRef<int64_t>{static_cast<int64_t>(i)});
      LLVM::ReturnOp::create(b, loc, value);
      b.setInsertionPointToStart(module.getBody());
      SmallVector<int64_t> bytes;
      for (LLVM::GlobalOp global : globals.constants) {
        auto array = cast<LLVM::LLVMArrayType>(global.getType());
        bytes.push_back(static_cast<int64_t>(array.getNumElements()) *
                        array.getElementType().getIntOrFloatBitWidth() / 8);
      }
      auto sizesType = RankedTensorType::get({n}, b.getI64Type());
      sizes = LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI64Type(), n),
                                     /*isConstant=*/true, LLVM::Linkage::Internal,
                                     "__mgs_const_bytes",
                                     DenseElementsAttr::get(sizesType, ArrayRef<int64_t>(bytes)));
    }
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(b, loc, symbols::kModelConstants,
                                       LLVM::LLVMFunctionType::get(b.getI64Type(), {ptr, ptr}));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value tableAddr = table ? Value(LLVM::AddressOfOp::create(b, loc, table))
                            : Value(LLVM::ZeroOp::create(b, loc, ptr));
    Value sizesAddr = sizes ? Value(LLVM::AddressOfOp::create(b, loc, sizes))
                            : Value(LLVM::ZeroOp::create(b, loc, ptr));
    LLVM::StoreOp::create(b, loc, tableAddr, entry->getArgument(0));
    LLVM::StoreOp::create(b, loc, sizesAddr, entry->getArgument(1));
    LLVM::ReturnOp::create(b, loc,
                           LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(n)));
  }

  void emitManifest(ModuleOp module, StringRef text) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    std::string data = text.str();
    data.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
    auto global = LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                         LLVM::Linkage::Internal, "__mgs_manifest",
                                         b.getStringAttr(data));
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(b, module.getLoc(), symbols::kModelManifest,
                                       LLVM::LLVMFunctionType::get(ptr, {}));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value addr = LLVM::AddressOfOp::create(b, module.getLoc(), global);
    LLVM::ReturnOp::create(b, module.getLoc(), addr);
  }
};

} // namespace
} // namespace mgs
