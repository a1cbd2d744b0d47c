//===- Loss.cpp - mgsc's loss options -------------------------------------===//
//
// The options that say which loss the step trains (--loss, the
// cross-entropy's PyTorch options, --class-axis, --reduction), their checks,
// and what mgsc checks and says of the loss once the model is imported.
//
//===----------------------------------------------------------------------===//

#include "Loss.h"

#include "mgs/Dialect/Train/IR/TrainDialect.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

using namespace llvm;

namespace mgsc {

cl::OptionCategory &category() {
  static cl::OptionCategory options("mgsc options");
  return options;
}

int fail(const Twine &message) {
  errs() << "mgsc: error: " << message << "\n";
  return 1;
}

void warn(const Twine &message) { errs() << "mgsc: warning: " << message << "\n"; }

namespace {

/// fail()'s message, as a false.
bool failed(const Twine &message) {
  fail(message);
  return false;
}

cl::opt<std::string> lossOpt(
    "loss",
    cl::desc("The loss of the first output: cross-entropy (the default: logits against integer "
             "class labels), or, against float targets of the output's shape (NumPy --labels), "
             "mse, l1, smooth-l1 or bce-with-logits (torch.nn's MSELoss, L1Loss, SmoothL1Loss, "
             "BCEWithLogitsLoss; the mean over every value), or graph: the first output is a "
             "scalar, the loss the model's graph computes (the default for such a model)"),
    cl::value_desc("name"), cl::init("cross-entropy"), cl::cat(category()));
cl::opt<double> smoothL1Beta("smooth-l1-beta",
                             cl::desc("--loss smooth-l1's beta (default 1, as torch.nn's; 0 is "
                                      "l1)"),
                             cl::value_desc("BETA"), cl::init(1.0), cl::cat(category()));
cl::opt<int64_t> ignoreIndex(
    "ignore-index",
    cl::desc("The label that counts neither in the loss nor in the accuracy: padding "
             "(torch.nn.CrossEntropyLoss's ignore_index, -100 by default as there)"),
    cl::value_desc("LABEL"), cl::init(-100), cl::cat(category()));
cl::opt<double> labelSmoothing(
    "label-smoothing",
    cl::desc("Label smoothing E in [0, 1]: the loss's target is (1 - E) onehot(label) + E / "
             "classes (torch.nn.CrossEntropyLoss's label_smoothing; default 0)"),
    cl::value_desc("E"), cl::init(0.0), cl::cat(category()));
cl::opt<std::string> classWeightsOpt(
    "class-weights",
    cl::desc("One weight >= 0 per class for the cross-entropy (torch.nn.CrossEntropyLoss's "
             "weight=): W0,W1,... or a text file of them (separated by commas or white space); "
             "each class's term weighted, the mean over the labels' weights"),
    cl::value_desc("LIST|FILE"), cl::cat(category()));
cl::opt<std::string> posWeightOpt(
    "pos-weight",
    cl::desc("--loss bce-with-logits: one weight >= 0 per position of the output's last axis "
             "(per label) for its positive targets (torch.nn.BCEWithLogitsLoss's pos_weight): "
             "W0,W1,... or a text file of them"),
    cl::value_desc("LIST|FILE"), cl::cat(category()));
cl::opt<int64_t> classAxisOpt(
    "class-axis",
    cl::desc("The cross-entropy's class axis when the first output has rank >= 3: 1 for "
             "(N, C, d1, ...) (PyTorch's CrossEntropyLoss on the output as it is: per-pixel "
             "scores of a segmentation), -1 for (N, d1, ..., C) (a language model's "
             "(N, L, vocab)); the labels are then (N, d1, ...), one per position"),
    cl::value_desc("AXIS"), cl::init(0), cl::cat(category()));
cl::opt<std::string> reductionOpt(
    "reduction",
    cl::desc("How the loss reduces over the samples (every value, for --loss other than "
             "cross-entropy): mean (the default, PyTorch's) or sum (reduction='sum': the loss "
             "and its gradient not divided by the count)"),
    cl::value_desc("mean|sum"), cl::init("mean"), cl::cat(category()));

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

} // namespace

bool parseLossOptions(bool inference, mgs::TrainPipelineOptions &pipeline) {
  if (!(labelSmoothing >= 0.0 && labelSmoothing <= 1.0)) {
    char given[32];
    std::snprintf(given, sizeof given, "%g", labelSmoothing.getValue());
    return failed("--label-smoothing must be in [0, 1], got " + Twine(given));
  }
  if (classAxisOpt.getNumOccurrences() && classAxisOpt == 0)
    return failed("--class-axis 0 is the batch's; the classes are on another axis of the first "
                  "output (1: classes second; -1: classes last)");
  const bool crossEntropy = lossOpt == "cross-entropy";
  if (!crossEntropy && lossOpt != "mse" && lossOpt != "l1" && lossOpt != "smooth-l1" &&
      lossOpt != "bce-with-logits" && lossOpt != "graph")
    return failed("--loss must be cross-entropy, mse, l1, smooth-l1, bce-with-logits or graph, "
                  "got '" +
                  lossOpt + "'");
  if (!(smoothL1Beta >= 0.0) || std::isinf(static_cast<float>(smoothL1Beta))) { // a float32
    char given[32];
    std::snprintf(given, sizeof given, "%g", smoothL1Beta.getValue());
    return failed("--smooth-l1-beta must be a finite number >= 0, got " + Twine(given));
  }
  if (smoothL1Beta.getNumOccurrences() && lossOpt != "smooth-l1")
    return failed("--smooth-l1-beta is --loss smooth-l1's; the loss is " + lossOpt);
  if (reductionOpt != "mean" && reductionOpt != "sum")
    return failed("--reduction must be mean or sum, got '" + reductionOpt + "'");
  for (cl::Option *option :
       {static_cast<cl::Option *>(&lossOpt), static_cast<cl::Option *>(&reductionOpt),
        static_cast<cl::Option *>(&smoothL1Beta), static_cast<cl::Option *>(&labelSmoothing),
        static_cast<cl::Option *>(&ignoreIndex), static_cast<cl::Option *>(&classWeightsOpt),
        static_cast<cl::Option *>(&classAxisOpt), static_cast<cl::Option *>(&posWeightOpt)}) {
    if (option->getNumOccurrences() && inference)
      return failed("--" + option->ArgStr +
                    " applies to training's loss; --inference compiles the forward alone");
    if (option->getNumOccurrences() && !crossEntropy &&
        (option == &labelSmoothing || option == &ignoreIndex || option == &classWeightsOpt ||
         option == &classAxisOpt))
      return failed("--" + option->ArgStr + " is the cross-entropy's; --loss is " + lossOpt);
    if (option == &posWeightOpt && option->getNumOccurrences() && lossOpt != "bce-with-logits")
      return failed("--pos-weight is --loss bce-with-logits's; the loss is " + lossOpt);
  }
  std::vector<double> classWeights, posWeight;
  for (auto [option, weights, what] : {std::tuple{&classWeightsOpt, &classWeights, "class"},
                                       std::tuple{&posWeightOpt, &posWeight, "position"}}) {
    if (!option->getNumOccurrences())
      continue;
    std::optional<std::vector<double>> parsed = parseWeights(*option, what);
    if (!parsed)
      return false;
    *weights = std::move(*parsed);
  }
  pipeline.loss = lossOpt;
  pipeline.smoothL1Beta = smoothL1Beta;
  pipeline.ignoreIndex = ignoreIndex;
  pipeline.labelSmoothing = labelSmoothing;
  pipeline.classWeights = classWeights;
  pipeline.posWeight = posWeight;
  pipeline.reduction = reductionOpt;
  pipeline.classAxis = classAxisOpt;
  return true;
}

/// A loss the exported graph computed itself (which the importer lifted out:
/// train.graph_loss) is the loss trained: a loss option that could say
/// otherwise is an error (--label-smoothing, which ONNX's loss cannot say,
/// may add to it, except to the negative log-likelihood of other than
/// log-probabilities, which has none). Says which loss is trained, unless
/// --quiet.
bool checkGraphLoss(mlir::ModuleOp module, bool inference, bool quiet) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  auto record = forward
                    ? forward->getAttrOfType<mlir::DictionaryAttr>(mgs::train::kGraphLossAttrName)
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
  const bool logProbabilities = static_cast<bool>(record.get("log_probabilities"));
  if (logProbabilities && labelSmoothing.getNumOccurrences() && labelSmoothing != 0.0) {
    fail("--label-smoothing: the model computes its loss in the graph, " + source +
         ", the negative log-likelihood of its input as it is, which has no label smoothing");
    return false;
  }
  if (!quiet) {
    errs() << "mgsc: training the graph's loss, " << source << ": the "
           << (logProbabilities ? "negative log-likelihood of its input as it is (no softmax)"
                                : "cross-entropy of its scores")
           << " against the labels of input '" << text("labels") << "'";
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

bool settleLossInGraph(mlir::ModuleOp module, bool inference, bool quiet,
                       mgs::TrainPipelineOptions &pipeline) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (inference || !forward || forward.getNumResults() == 0)
    return true;
  auto out = dyn_cast<mlir::RankedTensorType>(forward.getResultTypes()[0]);
  auto nameAttr = forward.getResultAttrOfType<mlir::StringAttr>(0, "train.name");
  const std::string name = nameAttr ? nameAttr.str() : "0";
  if (!out || out.getRank() != 0) {
    // Each sample's cross-entropy (reduction "none"), in the labels' shape or
    // not, is not a loss to train.
    auto ret = cast<mlir::func::ReturnOp>(forward.getBody().back().getTerminator());
    mlir::Value first = ret.getOperand(0);
    if (auto reshape = first.getDefiningOp<mgs::train::ReshapeOp>())
      first = reshape.getInput();
    if (auto ce = first.getDefiningOp<mgs::train::SoftmaxCrossEntropyOp>();
        ce && ce.getPerSample()) {
      fail("the model's first output '" + name +
           "' is each sample's cross-entropy (reduction \"none\"); mgs trains a loss reduced "
           "over the samples: reduce it in the graph (its mean, or a mask's weighted sum), or "
           "export the scores and give --loss (--inference computes it as it is)");
      return false;
    }
    if (lossOpt != "graph")
      return true;
    std::string shape;
    raw_string_ostream os(shape);
    if (out)
      interleave(out.getShape(), os, "x");
    fail("--loss graph trains the first output as the loss the model's graph computes; its first "
         "output '" +
         name + "' (" + shape + ") is not a scalar");
    return false;
  }
  if (lossOpt.getNumOccurrences() && lossOpt != "graph") {
    fail("--loss " + lossOpt + ": the model's first output '" + name +
         "' is a scalar, a loss its graph computes, which mgs trains as it is; drop --loss, or "
         "export the model's outputs without their loss");
    return false;
  }
  for (cl::Option *option :
       {static_cast<cl::Option *>(&ignoreIndex), static_cast<cl::Option *>(&classWeightsOpt),
        static_cast<cl::Option *>(&posWeightOpt), static_cast<cl::Option *>(&smoothL1Beta),
        static_cast<cl::Option *>(&reductionOpt), static_cast<cl::Option *>(&classAxisOpt),
        static_cast<cl::Option *>(&labelSmoothing)})
    if (option->getNumOccurrences()) {
      fail("--" + option->ArgStr +
           ": the model computes its loss in its graph (its first output '" + name +
           "', a scalar), which sets it; drop --" + option->ArgStr);
      return false;
    }
  pipeline.loss = "graph";
  if (!quiet)
    errs() << "mgsc: training the model's first output '" << name
           << "', a scalar, as its loss (computed in its graph: its targets, if any, are inputs)\n";
  return true;
}

/// With --class-axis, says (unless --quiet) what the cross-entropy trains: the
/// first output's rows and classes, and the labels a batch takes. An axis the
/// output does not have is train-build-step's error.
void describeClassAxis(mlir::ModuleOp module, bool inference, bool quiet) {
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

} // namespace mgsc
