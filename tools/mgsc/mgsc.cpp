//===- mgsc.cpp - The mgs compiler driver: ONNX -> training executable ----===//
//
//   mgsc MODEL.onnx -o train_model [--batch-size N] [--dim NAME=N,...]
//        [--bind-input NAME=VALUE|NAME=INPUT!=VALUE,...] [--inference]
//        [--emit=exe|obj|llvm|mlir] [--freeze NAME|GLOB,...]
//
// Imports the model and runs mgs-train-pipeline (lib/Pipelines) on it: the
// step's passes (train-fuse-batch-norm-relu, on the CPU train-fuse-layer-norm
// and train-fold-transpose-into-matmul, train-build-step and, for
// --strategy, the communication passes), then, once the parameters' initial
// values (the ONNX initializers) are written to OUT.weights, the lowering to
// calls into the runtime (convert-train-to-runtime). Translates to LLVM IR,
// compiles an object file in-process and links it with the runtime into an
// executable. --emit stops early: mlir = the training step in the
// train dialect, llvm = LLVM IR, obj = the object file.
//
//===----------------------------------------------------------------------===//

#include "Executable.h"
#include "Loss.h"
#include "Importer.h"
#include "mgs/Analysis/ModelSummary.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/InitAllDialects.h"
#include "mgs/Pipelines/Pipelines.h"
#include "mgs/Planner/Profile.h"
#include "mgs/Planner/Strategy.h"
#include "mgs/Support/CommandLine.h"
#include "mgs/Support/Diagnostics.h"
#include "mgs/Support/FormatNumber.h"
#include "mgs/Support/OutputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cmath>
#include <cstdio>

using namespace llvm;

namespace {

cl::OptionCategory &category = mgsc::category();

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: the model's name)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<int64_t> batchSize("batch-size",
                           cl::desc("Batch size to compile for (default: the model's own)"),
                           cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<bool> inference("inference",
                        cl::desc("Compile the forward graph alone (inputs in, outputs out)"),
                        cl::cat(category));
cl::opt<bool> evalMode("eval-mode",
                       cl::desc("With --inference: evaluation semantics (BatchNorm with its "
                                "running statistics, dropout the identity) for a graph exported "
                                "in training mode, as the training executable evaluates"),
                       cl::cat(category));
enum class Emit { Exe, Obj, Llvm, Mlir };
cl::opt<Emit>
    emit("emit", cl::desc("Where to stop"), cl::init(Emit::Exe),
         cl::values(clEnumValN(Emit::Exe, "exe", "a linked executable (default)"),
                    clEnumValN(Emit::Obj, "obj", "an object file"),
                    clEnumValN(Emit::Llvm, "llvm", "LLVM IR"),
                    clEnumValN(Emit::Mlir, "mlir", "the training step in the train dialect")),
         cl::cat(category));
cl::opt<bool> quiet("quiet", cl::desc("No progress lines"), cl::cat(category));
enum class Device { Cpu, Cuda };
cl::opt<Device>
    device("target", cl::desc("Where the executable runs its kernels"), cl::init(Device::Cpu),
           cl::values(clEnumValN(Device::Cpu, "cpu", "the CPU (default)"),
                      clEnumValN(Device::Cuda, "cuda", "a GPU: CUDA kernels, cuDNN, cuBLAS, NCCL")),
           cl::cat(category));
cl::opt<std::string> precisionOpt(
    "precision",
    cl::desc("The arithmetic of the GEMMs, matmuls and convolutions: f32 (default), bf16 or "
             "f16 (mixed precision: operands rounded to bfloat16 or IEEE half, float32 "
             "accumulation; weights, gradients, residuals and optimizer state stay float32; "
             "f16 trains with a dynamic loss scale, the executable's --loss-scale; --target "
             "cpu)"),
    cl::value_desc("f32|bf16|f16"), cl::init("f32"), cl::cat(category));
cl::opt<bool> unverifiedGpuPrecision(
    "unverified-gpu-precision",
    cl::desc("Allow --precision bf16 or f16 with --target=cuda before their CUDA kernels have "
             "been verified on a GPU (for bench/gpu_check.sh, which verifies them)"),
    cl::Hidden, cl::cat(category));
cl::list<std::string> dims("dim", cl::desc(mgs::onnx_import::kDimHelp),
           cl::value_desc("NAME=N,..."), cl::CommaSeparated, cl::cat(category));
cl::opt<bool> trainBatchNorm("train-batchnorm", cl::desc(mgs::onnx_import::kTrainBatchNormHelp),
                             cl::cat(category));
cl::list<std::string> bindInputs("bind-input", cl::desc(mgs::onnx_import::kBindInputHelp),
           cl::value_desc("NAME=...,..."), cl::CommaSeparated, cl::cat(category));
cl::list<std::string>
    freeze("freeze",
           cl::desc("Parameters (ONNX initializers) kept at their initial values: never updated, "
                    "never exchanged between workers; names or globs (mask, *.pos_*), e.g. a "
                    "buffer such as a causal mask that an ONNX file cannot tell from a weight"),
           cl::value_desc("name,..."), cl::CommaSeparated, cl::cat(category));
cl::opt<std::string> strategy("strategy", cl::desc(mgs::planner::strategyHelp()),
                              cl::value_desc("S"), cl::init("none"), cl::cat(category));
cl::opt<std::string> profileUse("profile-use",
                                cl::desc("Merge strategies: the calibration profile to plan with "
                                         "(default: an analytic estimate)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<bool> exactPlan("exact-plan",
                        cl::desc("Merge strategies: search the exact optimum however long it "
                                 "takes (default: the search stops once it outgrows its budget, "
                                 "seconds where this takes minutes, with a plan certified within "
                                 "a gap, which a remark gives)"),
                        cl::cat(category));
cl::opt<bool> profileGenerate(
    "profile-generate",
    cl::desc("Build an instrumented executable whose --calibrate run measures this machine "
             "(per-layer backward, top-k, collectives) and writes a profile for --profile-use"),
    cl::cat(category));
cl::opt<double>
    density("density",
            cl::desc("Sparse strategies: fraction of each gradient sent (default 0.001)"),
            cl::value_desc("rho"), cl::init(0.001), cl::cat(category));
cl::list<double> densityWarmup(
    "density-warmup",
    cl::desc("Sparse strategies: densities of the first epochs, one each, before --density "
             "(a warm-up, e.g. 0.25,0.0625,0.015625,0.004); the exchange is sized for the largest"),
    cl::value_desc("rho,..."), cl::CommaSeparated, cl::cat(category));
cl::opt<bool> fp16Values("fp16-values",
                         cl::desc("Sparse strategies: send the top-k values as IEEE half "
                                  "precision (6 bytes per entry instead of 8)"),
                         cl::cat(category));
cl::opt<bool> bf16Values("bf16-values",
                         cl::desc("Sparse strategies: send the top-k values as bfloat16 (6 bytes "
                                  "per entry instead of 8; float32's range, 8 bits of mantissa)"),
                         cl::cat(category));
cl::opt<std::string> sparseCollective(
    "sparse-collective",
    cl::desc("Sparse strategies: how the sparse gradients are exchanged: allgather (the "
             "default; k P entries a worker), gtopk (global top-k, Shi et al.: log2 P rounds "
             "of k entries; what the global top-k drops goes back into the residual) or "
             "sparse-allreduce (balanced sparse all-reduce, Ok-Topk style)"),
    cl::value_desc("name"), cl::init("allgather"), cl::cat(category));
cl::opt<int64_t> workersOpt("workers",
                            cl::desc("Sparse strategies: the number of workers (MPI ranks) the "
                                     "executable will run on (required; it refuses another)"),
                            cl::value_desc("P"), cl::init(0), cl::cat(category));
cl::opt<int64_t> accumulateOpt(
    "accumulate",
    cl::desc("Gradient accumulation: each optimizer step (and gradient exchange) sums the "
             "gradients of N batches, each of the loss divided by N (loss / N with N backward "
             "passes in PyTorch); the executable then takes N batches per worker a step"),
    cl::value_desc("N"), cl::init(1), cl::cat(category));
cl::opt<double> clipGradNorm(
    "clip-grad-norm",
    cl::desc("Clip the global 2-norm of the averaged gradients to MAX before the optimizer's "
             "updates (torch.nn.utils.clip_grad_norm_; after the gradient exchange, the updates "
             "wait for every gradient)"),
    cl::value_desc("MAX"), cl::init(0.0), cl::cat(category));

/// Prints one progress line with the time since the previous one.
class Progress {
public:
  void step(StringRef what) {
    auto now = std::chrono::steady_clock::now();
    if (!quiet)
      errs() << "mgsc: " << what << " ("
             << format("%.2f", std::chrono::duration<double>(now - last).count()) << " s)\n";
    last = now;
  }

private:
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

using mgsc::fail;
using mgsc::warn;

/// Options given that the chosen strategy does not use: a warning each (a
/// user who forgot --strategy should not believe the model is sparse).
/// `sparse`: a sparse or merged strategy (those take --workers, --density).
void warnUnusedOptions(bool sparse, bool merged) {
  auto unused = [&](const cl::Option &option, const char *needs) {
    if (option.getNumOccurrences())
      warn("--" + option.ArgStr + " has no effect with --strategy " + strategy + " (it applies to " +
           needs + ")");
  };
  if (!sparse) {
    unused(workersOpt, "sparse and merged strategies: layerwise, omgs, auto, mgwfbp, ...");
    unused(density, "sparse strategies: layerwise, omgs, auto, ...");
  }
  if (!merged) {
    unused(profileUse, "merge strategies: omgs, auto, mgwfbp, ...");
    unused(exactPlan, "merge strategies: omgs, auto, mgwfbp, ...");
  }
}

/// Whether the graph has a BatchNorm or dropout in training mode.
bool hasTrainingModeOps(mlir::ModuleOp module) {
  return module
      .walk([](mlir::Operation *op) {
        auto bn = dyn_cast<mgs::train::BatchNormOp>(op);
        auto drop = dyn_cast<mgs::train::DropoutOp>(op);
        return (bn && bn.getTraining()) || (drop && drop.getTraining())
                   ? mlir::WalkResult::interrupt()
                   : mlir::WalkResult::advance();
      })
      .wasInterrupted();
}

/// Marks the trainable parameters matched by --freeze's patterns as frozen
/// (not trainable: the step neither updates nor exchanges them) and, unless
/// --quiet, prints which are trainable and which frozen, the export's buffers
/// and the initializers holding infinities among them (frozen at import: a
/// pattern may name them too). A pattern that
/// matches no trainable parameter or buffer is an error naming it.
bool freezeParameters(mlir::ModuleOp module) {
  SmallVector<std::pair<std::string, GlobPattern>> patterns;
  for (const std::string &text : freeze) {
    Expected<GlobPattern> glob = GlobPattern::create(text);
    if (!glob) {
      fail("--freeze '" + text + "': " + toString(glob.takeError()));
      return false;
    }
    patterns.push_back({text, std::move(*glob)});
  }
  SmallVector<bool> used(patterns.size(), false);
  int64_t trainable = 0, trainableValues = 0;
  std::string frozen, buffers, nonFinite;
  auto describe = [](mgs::train::ParameterOp param) {
    return param.getSymName().str() + " (" +
           mgs::withThousandsSeparators(param.getTensorType().getNumElements()) + " values)";
  };
  for (auto param : module.getOps<mgs::train::ParameterOp>()) {
    bool buffer = param->hasAttr(mgs::train::kExportBufferAttrName);
    bool infinite = param->hasAttr(mgs::train::kNonFiniteInitAttrName);
    if (!param.getTrainable() && !buffer && !infinite)
      continue;
    bool match = false;
    for (auto [i, pattern] : llvm::enumerate(patterns))
      if (pattern.second.match(param.getSymName())) {
        used[i] = true;
        match = true;
      }
    if (buffer || infinite) {
      std::string &list = buffer ? buffers : nonFinite;
      list += (list.empty() ? "" : ", ") + describe(param);
      continue;
    }
    if (!match) {
      ++trainable;
      trainableValues += param.getTensorType().getNumElements();
      continue;
    }
    param.setTrainable(false);
    frozen += (frozen.empty() ? "" : ", ") + describe(param);
  }
  for (auto [i, pattern] : llvm::enumerate(patterns))
    if (!used[i]) {
      fail("--freeze '" + pattern.first + "' matches no trainable parameter or buffer of the "
           "model");
      return false;
    }
  if (quiet || (patterns.empty() && ((buffers.empty() && nonFinite.empty()) || inference)))
    return true;
  errs() << "mgsc: " << trainable << " trainable parameters ("
         << mgs::withThousandsSeparators(trainableValues) << " values)";
  if (!patterns.empty())
    errs() << "; frozen (--freeze): " << (frozen.empty() ? "none" : frozen);
  if (!buffers.empty())
    errs() << "; the export's buffers, not trained: " << buffers;
  if (!nonFinite.empty())
    errs() << "; not trained, as their initial values are not all finite (a mask's -inf): "
           << nonFinite;
  errs() << "\n";
  return true;
}

/// The training executable feeds the model's first input from --data and
/// each other one from --input-data NAME=FILE: said when there are several.
/// A model with no input is refused.
bool checkInputs(mlir::ModuleOp module) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward || forward.getNumArguments() == 1)
    return true;
  if (forward.getNumArguments() == 0) {
    fail(Twine("the model has no graph input") +
         (bindInputs.empty() ? "" : " left after --bind-input") +
         "; the training executable feeds one, the samples");
    return false;
  }
  std::string described;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto nameAttr = forward.getArgAttrOfType<mlir::StringAttr>(i, "train.name");
    std::string name = nameAttr ? nameAttr.str() : "#" + std::to_string(i);
    auto type = dyn_cast<mlir::RankedTensorType>(forward.getArgument(i).getType());
    std::string shape;
    if (type) {
      llvm::raw_string_ostream os(shape);
      llvm::interleave(type.getShape(), os, "x");
      if (!type.getElementType().isF32())
        os << ", " << type.getElementType();
    }
    described += (i ? "; '" : "'") + name + "' (" + shape + ")" +
                 (i ? " from --input-data " + name + "=FILE.npy" : " from --data");
  }
  if (!quiet)
    errs() << "mgsc: the model has " << forward.getNumArguments()
           << " inputs; the executable feeds " << described
           << " (or give one its value in the model with --bind-input)\n";
  return true;
}

/// The batch size the step was built for: dimension 0 of forward's input.
int64_t compiledBatchSize(mlir::ModuleOp module) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward || forward.getNumArguments() == 0)
    return 0;
  auto type = dyn_cast<mlir::RankedTensorType>(forward.getArgument(0).getType());
  return type && type.getRank() > 0 ? type.getDimSize(0) : 0;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mgs::showOnlyInHelp(category);
  mgs::addVersionPrinter();
  // mgsc imports the model as mgs-import-onnx does: the same ONNX library.
  cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << mgs::onnx_import::onnxLibraryDescription() << "\n"; });
  if (std::string unknown = mgs::unknownOption(argc, argv, category); !unknown.empty())
    return fail(unknown + " (mgsc --help lists the options)");
  cl::ParseCommandLineOptions(argc, argv,
                              "mgsc: compiles an ONNX model into a training executable\n\n"
                              "  mgsc MODEL.onnx -o OUT [options]; OUT --help lists what the\n"
                              "  executable takes. MLIR's debugging options: --help-hidden.\n");
  if (std::string twice = mgs::optionGivenTwice(category); !twice.empty())
    return fail(twice);
  if (inputFile.empty())
    return fail("no input model; usage: mgsc MODEL.onnx -o OUT [options], see --help");
  auto parsedStrategy = mgs::planner::Strategy::parseWithNone(strategy);
  if (!parsedStrategy)
    return fail("--strategy: " + llvm::toString(parsedStrategy.takeError()));
  bool communicates = parsedStrategy->communicates();
  bool merged = parsedStrategy->isMerged();
  // Sparse or merged: the strategies that take --workers and --density (the
  // top-k exchange's size; the planner's cost model).
  bool sparse = parsedStrategy->isSparse() || merged;
  if (workersOpt.getNumOccurrences() &&
      (workersOpt < 1 || workersOpt > mgs::planner::kMaxWorkers))
    return fail("--workers must be an integer in [1, " +
                std::to_string(mgs::planner::kMaxWorkers) + "] (the number of MPI ranks), got " +
                std::to_string(workersOpt));
  if (sparse && workersOpt < 1)
    return fail("--strategy " + strategy + " needs --workers P (the number of MPI ranks)");
  if (sparse && !(density > 0.0 && density <= 1.0))
    return fail("--density must be in (0, 1], got " + mgs::formatNumber(density));
  if (evalMode && !inference)
    return fail("--eval-mode applies to --inference (a training executable evaluates in "
                "evaluation form already)");
  if (communicates && inference)
    return fail("--strategy applies to training; --inference compiles the forward alone");
  for (double d : densityWarmup)
    if (!(d > 0.0 && d <= 1.0))
      return fail("--density-warmup: each density must be in (0, 1], got " + mgs::formatNumber(d));
  if (fp16Values && bf16Values)
    return fail("--fp16-values and --bf16-values exclude each other");
  for (auto [set, flag] : {std::pair{bool(fp16Values), "--fp16-values"},
                           std::pair{bool(bf16Values), "--bf16-values"}})
    if (set && !sparse)
      return fail(std::string(flag) +
                  " needs a sparse strategy (layerwise, omgs, ...); --strategy is " + strategy);
  if (!densityWarmup.empty() && !sparse)
    return fail("--density-warmup needs a sparse strategy (layerwise, omgs, ...); --strategy is " +
                strategy);
  if (profileGenerate && inference)
    return fail("--profile-generate calibrates training; it cannot be combined with --inference");
  if (profileGenerate && (communicates || !profileUse.empty()))
    return fail("--profile-generate measures the model's own backward and the machine's "
                "collectives; compile it without --strategy and --profile-use");
  if (batchSize.getNumOccurrences() && batchSize < 1)
    return fail("--batch-size must be a positive integer, got " + Twine(batchSize));
  if (batchSize > mgs::onnx_import::kMaxBatchSize)
    return fail("--batch-size " + Twine(batchSize) + " is too large (at most " +
                Twine(mgs::onnx_import::kMaxBatchSize) + ")");
  if (clipGradNorm.getNumOccurrences() && !(clipGradNorm > 0 && std::isfinite(clipGradNorm))) {
    char given[32];
    std::snprintf(given, sizeof given, "%g", clipGradNorm.getValue());
    return fail("--clip-grad-norm must be a positive number, got " + Twine(given));
  }
  if (clipGradNorm.getNumOccurrences() && inference)
    return fail("--clip-grad-norm applies to training; --inference compiles the forward alone");
  mgs::TrainPipelineOptions pipeline;
  if (!mgsc::parseLossOptions(inference, pipeline))
    return 1;
  warnUnusedOptions(sparse, merged);
  // The pipeline mgs-opt --mgs-train-pipeline runs, from the flags.
  pipeline.strategy = strategy;
  if (workersOpt.getNumOccurrences())
    pipeline.workers = workersOpt;
  pipeline.density = density;
  pipeline.densityWarmup = std::vector<double>(densityWarmup.begin(), densityWarmup.end());
  pipeline.fp16Values = fp16Values;
  pipeline.bf16Values = bf16Values;
  pipeline.sparseCollective = sparseCollective;
  pipeline.profile = profileUse;
  pipeline.exactPlan = exactPlan;
  pipeline.inference = inference;
  pipeline.evalMode = evalMode;
  pipeline.target = device == Device::Cuda ? "cuda" : "cpu";
  pipeline.precision = precisionOpt;
  pipeline.unverifiedGpuPrecision = unverifiedGpuPrecision;
  pipeline.instrument = profileGenerate;
  pipeline.clipGradNorm = clipGradNorm;
  pipeline.accumulate = accumulateOpt;
  // Checked before the import: an option's error names the option (the
  // pipeline's own name of each is mgsc's), not a pass, and comes at once.
  if (failed(mgs::verifyTrainPipelineOptions(pipeline, [](const Twine &message) {
        std::string text = message.str();
        StringRef first = StringRef(text).take_until([](char c) { return c == ' ' || c == ':'; });
        if (cl::Option *option = cl::getRegisteredOptions().lookup(first);
            option && is_contained(option->Categories, &category))
          text = "--" + text;
        fail(text);
      })))
    return 1;
  // A merge strategy's --profile-use file is read now too: its errors name
  // it and the field. (Other strategies ignore it, with a warning above.)
  // (Not standard input or a pipe, which the pass's read would find empty.)
  bool readOnce = profileUse == "-" ||
                  (sys::fs::exists(profileUse) && !sys::fs::is_regular_file(profileUse));
  if (merged && !profileUse.empty() && !readOnce)
    if (auto loaded = mgs::planner::loadProfile(profileUse); !loaded)
      return fail("--profile-use '" + profileUse + "': " + toString(loaded.takeError()));
  std::string output = outputFile;
  if (output.empty())
    output = (emit == Emit::Exe ? sys::path::stem(inputFile)
                                : sys::path::stem(inputFile) +
                                      (emit == Emit::Obj    ? ".o"
                                       : emit == Emit::Llvm ? ".ll"
                                                            : ".mlir"))
                 .str();
  if (std::string error; failed(mgs::checkOutputPath(output, error, inputFile)))
    return fail(error);
  if (emit == Emit::Exe && sys::fs::exists(output) && !sys::fs::is_regular_file(output))
    return fail("the output '" + output +
                "' is not a regular file: an executable is written as a file, with its "
                ".weights beside it");

  mlir::DialectRegistry registry;
  mgs::registerAllDialects(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::MLIRContext context(registry);
  // A pass's error on the module would otherwise print the whole module
  // (unless asked for: --mlir-print-op-on-diagnostic).
  if (cl::Option *o = cl::getRegisteredOptions().lookup("mlir-print-op-on-diagnostic");
      !o || !o->getNumOccurrences())
    context.printOpOnDiagnostic(false);
  mgs::PlainDiagnosticHandler diagnostics(&context);
  Progress progress;

  mgs::onnx_import::ImportOptions importOptions;
  if (batchSize.getNumOccurrences())
    importOptions.batchSize = batchSize;
  importOptions.trainBatchNorm = trainBatchNorm;
  importOptions.forInference = inference;
  if (auto error = mgs::onnx_import::parseInputOptions(dims, bindInputs, importOptions))
    return fail(*error);
  auto imported = mgs::onnx_import::importOnnxFile(context, inputFile, importOptions);
  if (failed(imported))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(*imported);
  progress.step("imported " + inputFile);
  if (!inference && !checkInputs(*module))
    return 1;
  if (!mgsc::checkGraphLoss(*module, inference, quiet))
    return 1;
  if (!mgsc::settleLossInGraph(*module, inference, quiet, pipeline))
    return 1;
  mgsc::describeClassAxis(*module, inference, quiet);
  if (!freezeParameters(*module))
    return 1;
  if (inference && !evalMode && hasTrainingModeOps(*module))
    warn("the graph's BatchNorm or Dropout is in training mode (batch statistics, random "
         "masks: ONNX's semantics, followed); --eval-mode evaluates with the running "
         "statistics, as the training executable does");
  if (!inference && !batchSize.getNumOccurrences() && compiledBatchSize(*module) == 1)
    warn("training one sample at a time: the model's own batch size is 1 (exported with one "
         "example?); pass --batch-size N (e.g. 32)");

  pipeline.batchSize = compiledBatchSize(*module);

  mlir::PassManager pm(&context);
  if (failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  mgs::buildTrainStepPipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return 1;

  // The weights: every parameter of the step but the error-feedback residuals
  // the communication passes add (zero at the start: the driver starts them
  // at zero), written before the lowering removes the parameters; they get
  // their name only with the executable (PendingWeights).
  mgsc::PendingWeights weights;
  if (emit == Emit::Exe) {
    if (std::string error; !weights.prepare(output + ".weights", error))
      return fail(error);
    if (!weights.write(context, *module))
      return 1;
    progress.step("wrote " + weights.path());
  }
  if (emit != Emit::Mlir) {
    mlir::PassManager lower(&context);
    if (failed(mlir::applyPassManagerCLOptions(lower)))
      return 1;
    mgs::buildLoweringPipeline(lower, pipeline);
    if (failed(lower.run(*module)))
      return 1;
  }
  progress.step(emit == Emit::Mlir ? "built the training step" : "built and lowered the step");

  if (emit == Emit::Mlir) {
    std::string error;
    if (failed(mgs::writeOutputFile(
            output, [&](raw_ostream &os) { (*module)->print(os); }, error)))
      return fail(error);
    return 0;
  }

  LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, llvmContext, sys::path::stem(inputFile));
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  progress.step("translated to LLVM IR");
  if (emit == Emit::Llvm) {
    std::string error;
    if (failed(mgs::writeOutputFile(
            output, [&](raw_ostream &os) { llvmModule->print(os, nullptr); }, error)))
      return fail(error);
    return 0;
  }

  std::string objectPath = emit == Emit::Obj ? output : output + ".o";
  std::string error;
  if (!mgsc::emitObject(*llvmModule, objectPath, error))
    return fail(error);
  progress.step("compiled " + objectPath);
  if (emit == Emit::Obj)
    return 0;

  if (!mgsc::link(objectPath, output, error)) {
    sys::fs::remove(objectPath);
    return fail(error);
  }
  sys::fs::remove(objectPath);
  if (!weights.commit(error))
    return fail(error);
  progress.step("linked " + output);
  return 0;
}
