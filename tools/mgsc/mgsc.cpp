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

cl::OptionCategory category("mgsc options");

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

cl::opt<std::string> lossOpt(
    "loss",
    cl::desc("The loss of the first output: cross-entropy (the default: logits against integer "
             "class labels), or, against float targets of the output's shape (NumPy --labels), "
             "mse, l1, smooth-l1 or bce-with-logits (torch.nn's MSELoss, L1Loss, SmoothL1Loss, "
             "BCEWithLogitsLoss; the mean over every value)"),
    cl::value_desc("name"), cl::init("cross-entropy"), cl::cat(category));
cl::opt<double> smoothL1Beta("smooth-l1-beta",
                             cl::desc("--loss smooth-l1's beta (default 1, as torch.nn's; 0 is "
                                      "l1)"),
                             cl::value_desc("BETA"), cl::init(1.0), cl::cat(category));
cl::opt<int64_t> ignoreIndex(
    "ignore-index",
    cl::desc("The label that counts neither in the loss nor in the accuracy: padding "
             "(torch.nn.CrossEntropyLoss's ignore_index, -100 by default as there)"),
    cl::value_desc("LABEL"), cl::init(-100), cl::cat(category));
cl::opt<double> labelSmoothing(
    "label-smoothing",
    cl::desc("Label smoothing E in [0, 1]: the loss's target is (1 - E) onehot(label) + E / "
             "classes (torch.nn.CrossEntropyLoss's label_smoothing; default 0)"),
    cl::value_desc("E"), cl::init(0.0), cl::cat(category));
cl::opt<std::string> classWeightsOpt(
    "class-weights",
    cl::desc("One weight >= 0 per class for the cross-entropy (torch.nn.CrossEntropyLoss's "
             "weight=): W0,W1,... or a text file of them (separated by commas or white space); "
             "each class's term weighted, the mean over the labels' weights"),
    cl::value_desc("LIST|FILE"), cl::cat(category));
cl::opt<std::string> posWeightOpt(
    "pos-weight",
    cl::desc("--loss bce-with-logits: one weight >= 0 per position of the output's last axis "
             "(per label) for its positive targets (torch.nn.BCEWithLogitsLoss's pos_weight): "
             "W0,W1,... or a text file of them"),
    cl::value_desc("LIST|FILE"), cl::cat(category));
cl::opt<int64_t> classAxisOpt(
    "class-axis",
    cl::desc("The cross-entropy's class axis when the first output has rank >= 3: 1 for "
             "(N, C, d1, ...) (PyTorch's CrossEntropyLoss on the output as it is: per-pixel "
             "scores of a segmentation), -1 for (N, d1, ..., C) (a language model's "
             "(N, L, vocab)); the labels are then (N, d1, ...), one per position"),
    cl::value_desc("AXIS"), cl::init(0), cl::cat(category));
cl::opt<std::string> reductionOpt(
    "reduction",
    cl::desc("How the loss reduces over the samples (every value, for --loss other than "
             "cross-entropy): mean (the default, PyTorch's) or sum (reduction='sum': the loss "
             "and its gradient not divided by the count)"),
    cl::value_desc("mean|sum"), cl::init("mean"), cl::cat(category));

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

int fail(const Twine &message) {
  errs() << "mgsc: error: " << message << "\n";
  return 1;
}

void warn(const Twine &message) { errs() << "mgsc: warning: " << message << "\n"; }

/// --class-weights or --pos-weight (`option`): a comma-separated list, or a
/// file of numbers separated by commas or white space. Every weight finite
/// and >= 0 (the count is checked against the output when the step is
/// built); `what` names what each weighs.
std::optional<std::vector<double>> parseWeights(const cl::opt<std::string> &option,
                                                StringRef what) {
  StringRef spec = option.getValue();
  const std::string flag = ("--" + option.ArgStr).str();
  std::string text = spec.str();
  std::string source = flag;
  if (sys::fs::exists(spec) && !sys::fs::is_directory(spec)) { // a file, a pipe, /dev/stdin
    ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(spec);
    if (!file) {
      fail(flag + ": cannot read '" + spec + "': " + file.getError().message());
      return std::nullopt;
    }
    text = (*file)->getBuffer().str();
    source = flag + " file '" + spec.str() + "'";
  }
  std::replace_if(
      text.begin(), text.end(),
      [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }, ',');
  std::vector<double> weights;
  SmallVector<StringRef> words;
  StringRef(text).split(words, ',', -1, /*KeepEmpty=*/false);
  for (StringRef word : words) {
    double w;
    if (word.getAsDouble(w)) {
      if (source == flag && !spec.contains(','))
        fail(flag + ": '" + spec + "' is neither a file nor a list of numbers (W0,W1,...)");
      else
        fail(source + ": '" + word + "' (weight " + Twine(weights.size()) + ") is not a number");
      return std::nullopt;
    }
    if (!(w >= 0.0) || std::isinf(static_cast<float>(w))) { // a float32
      char given[32];
      std::snprintf(given, sizeof given, "%g", w);
      fail(source + ": the weight of " + what + " " + Twine(weights.size()) +
           " must be a finite number >= 0, got " + given);
      return std::nullopt;
    }
    weights.push_back(w);
  }
  if (weights.empty()) {
    fail(source + " gives no weights");
    return std::nullopt;
  }
  return weights;
}

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

/// The training executable feeds one input, the samples: the model's others
/// need --bind-input.
bool checkOneInput(mlir::ModuleOp module) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward || forward.getNumArguments() == 1)
    return true;
  if (forward.getNumArguments() == 0) {
    fail(Twine("the model has no graph input") +
         (bindInputs.empty() ? "" : " left after --bind-input") +
         "; the training executable feeds one, the samples");
    return false;
  }
  std::string names;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (auto name = forward.getArgAttrOfType<mlir::StringAttr>(i, "train.name"))
      names += (names.empty() ? "'" : ", '") + name.str() + "'";
  auto first = forward.getNumResults() ? dyn_cast<mlir::RankedTensorType>(
                                            forward.getFunctionType().getResult(0))
                                      : nullptr;
  if (first && first.getRank() == 0) {
    fail("the model has " + Twine(forward.getNumArguments()) + " graph inputs (" + names +
         ") and outputs a scalar: a loss computed in the graph? mgs takes a graph's "
         "SoftmaxCrossEntropyLoss (or NegativeLogLikelihoodLoss) as its loss; for another, "
         "export the model's output without the loss and give mgsc --loss (mse, l1, smooth-l1, "
         "bce-with-logits)");
    return false;
  }
  fail("the model has " + Twine(forward.getNumArguments()) + " graph inputs (" + names +
       "); the training executable feeds one, the samples: give the others their values with "
       "--bind-input NAME=VALUE or NAME=INPUT!=VALUE");
  return false;
}

/// A loss the exported graph computed itself (which the importer lifted out:
/// train.graph_loss) is the loss trained: a loss option that could say
/// otherwise is an error (--label-smoothing, which ONNX's loss cannot say,
/// may add to it). Says which loss is trained, unless --quiet.
bool checkGraphLoss(mlir::ModuleOp module) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  auto record = forward ? forward->getAttrOfType<mlir::DictionaryAttr>(
                              mgs::train::kGraphLossAttrName)
                        : nullptr;
  if (!record)
    return true;
  auto text = [&](StringRef key) {
    auto value = record.getAs<mlir::StringAttr>(key);
    return value ? value.str() : std::string("?");
  };
  std::string source = "node '" + text("node") + "' (" + text("op") + ")";
  if (inference) {
    if (!quiet)
      errs() << "mgsc: the graph's loss, " << source << ", is left out: --inference computes "
             << "its scores, without the labels input '" << text("labels") << "'\n";
    return true;
  }
  for (cl::Option *option :
       {static_cast<cl::Option *>(&lossOpt), static_cast<cl::Option *>(&ignoreIndex),
        static_cast<cl::Option *>(&classWeightsOpt), static_cast<cl::Option *>(&posWeightOpt),
        static_cast<cl::Option *>(&smoothL1Beta), static_cast<cl::Option *>(&reductionOpt),
        static_cast<cl::Option *>(&classAxisOpt)})
    if (option->getNumOccurrences()) {
      fail("--" + option->ArgStr + ": the model computes its loss in the graph, " + source +
           ", which sets it; drop --" + option->ArgStr +
           ", or export the model's scores without the loss");
      return false;
    }
  if (!quiet) {
    errs() << "mgsc: training the graph's loss, " << source << ": the cross-entropy of its scores "
           << "against the labels of input '" << text("labels") << "'";
    if (text("reduction") == "sum")
      errs() << ", summed";
    if (auto ignore = record.getAs<mlir::IntegerAttr>("ignore_index"))
      errs() << ", ignoring label " << ignore.getInt();
    if (auto weight = record.getAs<mlir::DenseElementsAttr>("weight"))
      errs() << ", " << weight.getNumElements() << " class weights";
    errs() << "\n";
  }
  if (auto dropped = record.getAs<mlir::FloatAttr>("dropped_label_smoothing");
      dropped && !labelSmoothing.getNumOccurrences()) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", dropped.getValueAsDouble());
    warn("the model's F.cross_entropy had label_smoothing " + Twine(value) +
         ", which PyTorch's exporter left out of " + source +
         " (ONNX's loss has none; the node's metadata shows it): pass --label-smoothing " +
         value + " to train it");
  }
  return true;
}

/// With --class-axis, says (unless --quiet) what the cross-entropy trains: the
/// first output's rows and classes, and the labels a batch takes. An axis the
/// output does not have is train-build-step's error.
void describeClassAxis(mlir::ModuleOp module) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (quiet || inference || !classAxisOpt.getNumOccurrences() || !forward ||
      forward.getNumResults() == 0)
    return;
  auto out = dyn_cast<mlir::RankedTensorType>(forward.getResultTypes()[0]);
  if (!out || !out.hasStaticShape() || out.getRank() < 3)
    return;
  const int64_t rank = out.getRank(), axis = classAxisOpt < 0 ? classAxisOpt + rank : classAxisOpt;
  if (axis < 1 || axis >= rank || out.getDimSize(axis) == 0)
    return;
  std::string labels;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      labels += (labels.empty() ? "" : ", ") + std::to_string(out.getDimSize(d));
  auto name = forward.getResultAttrOfType<mlir::StringAttr>(0, "train.name");
  errs() << "mgsc: the cross-entropy over axis " << axis << " of the first output '"
         << (name ? name.getValue() : "0") << "' (";
  llvm::interleave(out.getShape(), errs(), "x");
  errs() << "): " << out.getNumElements() / out.getDimSize(axis) << " rows of "
         << out.getDimSize(axis) << " classes, against labels (" << labels << ") a batch\n";
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
  if (!(labelSmoothing >= 0.0 && labelSmoothing <= 1.0)) {
    char given[32];
    std::snprintf(given, sizeof given, "%g", labelSmoothing.getValue());
    return fail("--label-smoothing must be in [0, 1], got " + Twine(given));
  }
  if (classAxisOpt.getNumOccurrences() && classAxisOpt == 0)
    return fail("--class-axis 0 is the batch's; the classes are on another axis of the first "
                "output (1: classes second; -1: classes last)");
  const bool crossEntropy = lossOpt == "cross-entropy";
  if (!crossEntropy && lossOpt != "mse" && lossOpt != "l1" && lossOpt != "smooth-l1" &&
      lossOpt != "bce-with-logits")
    return fail("--loss must be cross-entropy, mse, l1, smooth-l1 or bce-with-logits, got '" +
                lossOpt + "'");
  if (!(smoothL1Beta >= 0.0) || std::isinf(static_cast<float>(smoothL1Beta))) { // a float32
    char given[32];
    std::snprintf(given, sizeof given, "%g", smoothL1Beta.getValue());
    return fail("--smooth-l1-beta must be a finite number >= 0, got " + Twine(given));
  }
  if (smoothL1Beta.getNumOccurrences() && lossOpt != "smooth-l1")
    return fail("--smooth-l1-beta is --loss smooth-l1's; the loss is " + lossOpt);
  if (reductionOpt != "mean" && reductionOpt != "sum")
    return fail("--reduction must be mean or sum, got '" + reductionOpt + "'");
  for (cl::Option *option :
       {static_cast<cl::Option *>(&lossOpt), static_cast<cl::Option *>(&reductionOpt),
        static_cast<cl::Option *>(&smoothL1Beta), static_cast<cl::Option *>(&labelSmoothing),
        static_cast<cl::Option *>(&ignoreIndex), static_cast<cl::Option *>(&classWeightsOpt),
        static_cast<cl::Option *>(&classAxisOpt), static_cast<cl::Option *>(&posWeightOpt)}) {
    if (option->getNumOccurrences() && inference)
      return fail("--" + option->ArgStr +
                  " applies to training's loss; --inference compiles the forward alone");
    if (option->getNumOccurrences() && !crossEntropy &&
        (option == &labelSmoothing || option == &ignoreIndex || option == &classWeightsOpt ||
         option == &classAxisOpt))
      return fail("--" + option->ArgStr + " is the cross-entropy's; --loss is " + lossOpt);
    if (option == &posWeightOpt && option->getNumOccurrences() && lossOpt != "bce-with-logits")
      return fail("--pos-weight is --loss bce-with-logits's; the loss is " + lossOpt);
  }
  std::vector<double> classWeights, posWeight;
  for (auto [option, weights, what] :
       {std::tuple{&classWeightsOpt, &classWeights, "class"},
        std::tuple{&posWeightOpt, &posWeight, "position"}}) {
    if (!option->getNumOccurrences())
      continue;
    std::optional<std::vector<double>> parsed = parseWeights(*option, what);
    if (!parsed)
      return 1;
    *weights = std::move(*parsed);
  }
  warnUnusedOptions(sparse, merged);
  mgs::TrainPipelineOptions pipeline;
  // The pipeline mgs-opt --mgs-train-pipeline runs, from the flags.
  pipeline.strategy = strategy;
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
  pipeline.loss = lossOpt;
  pipeline.smoothL1Beta = smoothL1Beta;
  pipeline.ignoreIndex = ignoreIndex;
  pipeline.labelSmoothing = labelSmoothing;
  pipeline.classWeights = classWeights;
  pipeline.posWeight = posWeight;
  pipeline.reduction = reductionOpt;
  pipeline.classAxis = classAxisOpt;
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
  if (!inference && !checkOneInput(*module))
    return 1;
  if (!checkGraphLoss(*module))
    return 1;
  describeClassAxis(*module);
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
