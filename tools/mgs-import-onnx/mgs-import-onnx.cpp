//===- mgs-import-onnx.cpp - ONNX model -> train dialect ------------------===//
//
//   mgs-import-onnx MODEL.onnx|MODEL.onnxtext [--batch-size N] [-o OUT.mlir]
//                   [--dim NAME=N,...] [--bind-input NAME=VALUE|NAME=INPUT!=VALUE,...]
//                   [--train-batchnorm] [--inference] [--inline-weights] [--summary]
//   mgs-import-onnx --list-supported-ops
//
// Prints the imported module (stdout by default). Exits 1 with a diagnostic
// naming the file or ONNX node on any problem.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "mgs/Analysis/ModelSummary.h"
#include "mgs/InitAllDialects.h"
#include "mgs/Support/CommandLine.h"
#include "mgs/Support/Diagnostics.h"
#include "mgs/Support/OutputFile.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

using namespace llvm;

static cl::OptionCategory category("mgs-import-onnx options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx|model.onnxtext>"),
                                      cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"), cl::cat(category));
static cl::opt<int64_t>
    batchSize("batch-size",
              cl::desc("Set dimension 0 of the graph inputs whose dimension 0 is "
                       "symbolic (of every input if none is)"),
              cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::list<std::string> dims("dim", cl::desc(mgs::onnx_import::kDimHelp),
           cl::value_desc("NAME=N,..."), cl::CommaSeparated, cl::cat(category));
static cl::list<std::string> bindInputs("bind-input", cl::desc(mgs::onnx_import::kBindInputHelp),
           cl::value_desc("NAME=...,..."), cl::CommaSeparated, cl::cat(category));
static cl::opt<bool> trainBatchNorm("train-batchnorm",
                                    cl::desc(mgs::onnx_import::kTrainBatchNormHelp),
                                    cl::cat(category));
static cl::opt<bool> inference("inference", cl::desc(mgs::onnx_import::kInferenceHelp),
                               cl::cat(category));
static cl::opt<bool> inlineWeights("inline-weights",
                                   cl::desc("Print parameter values into the IR (small models)"),
                                   cl::cat(category));
static cl::opt<bool> listSupportedOps("list-supported-ops",
                                      cl::desc("Print the supported ONNX op types, one a line"),
                                      cl::cat(category));
static cl::opt<bool> summary("summary",
                             cl::desc("Print a one-line summary (ops, parameters) to stderr"),
                             cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mgs::showOnlyInHelp(category);
  mgs::addVersionPrinter();
  cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << mgs::onnx_import::onnxLibraryDescription() << "\n"; });
  if (std::string unknown = mgs::unknownOption(argc, argv, category); !unknown.empty()) {
    errs() << "mgs-import-onnx: error: " << unknown
           << " (mgs-import-onnx --help lists the options)\n";
    return 1;
  }
  cl::ParseCommandLineOptions(argc, argv,
                              "mgs ONNX importer: an ONNX model into the mgs dialects\n\n"
                              "  mgs-import-onnx MODEL.onnx [-o OUT.mlir] [options]\n"
                              "  MLIR's printing options: --help-hidden.\n");

  if (std::string twice = mgs::optionGivenTwice(category); !twice.empty()) {
    errs() << "mgs-import-onnx: error: " << twice << "\n";
    return 1;
  }
  if (listSupportedOps) {
    for (StringRef op : mgs::onnx_import::supportedOpTypes())
      outs() << op << "\n";
    return 0;
  }
  if (inputFile.empty()) {
    errs() << "mgs-import-onnx: error: no input file; usage: mgs-import-onnx MODEL.onnx [options], "
              "see --help\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  mgs::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mgs::PlainDiagnosticHandler diagnostics(&context);

  mgs::onnx_import::ImportOptions options;
  if (batchSize.getNumOccurrences()) {
    if (batchSize < 1) {
      errs() << "mgs-import-onnx: error: --batch-size must be a positive integer, got " << batchSize
             << "\n";
      return 1;
    }
    if (batchSize > mgs::onnx_import::kMaxBatchSize) {
      errs() << "mgs-import-onnx: error: --batch-size " << batchSize << " is too large (at most "
             << mgs::onnx_import::kMaxBatchSize << ")\n";
      return 1;
    }
    options.batchSize = batchSize;
  }
  options.inlineWeights = inlineWeights;
  options.trainBatchNorm = trainBatchNorm;
  options.forInference = inference;
  if (auto error = mgs::onnx_import::parseInputOptions(dims, bindInputs, options)) {
    errs() << "mgs-import-onnx: error: " << *error << "\n";
    return 1;
  }

  std::string error;
  if (failed(mgs::checkOutputPath(outputFile, error, inputFile))) {
    errs() << "mgs-import-onnx: error: " << error << "\n";
    return 1;
  }
  auto module = mgs::onnx_import::importOnnxFile(context, inputFile, options);
  if (failed(module))
    return 1;

  if (failed(mgs::writeOutputFile(
          outputFile,
          [&](raw_ostream &os) {
            (*module)->print(os);
            os << "\n";
          },
          error))) {
    errs() << "mgs-import-onnx: error: " << error << "\n";
    return 1;
  }

  if (summary) {
    errs() << "summary: ";
    mgs::ModelSummary::compute(**module).print(errs());
    errs() << "\n";
  }
  return 0;
}
