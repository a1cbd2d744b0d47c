//===- Executable.cpp - mgsc's output files: object, weights, link --------===//

#include "Executable.h"

#include "Importer.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"
#include "mgs/Support/OutputFile.h"
#include "mgsrt/contract.h"
#include "mgsrt/driver.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace llvm;

namespace mgsc {

bool emitObject(llvm::Module &module, StringRef path, std::string &error) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  Triple triple(sys::getDefaultTargetTriple());
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  TargetOptions options;
  std::unique_ptr<TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", options, Reloc::PIC_, std::nullopt, CodeGenOptLevel::Default));
  if (!machine) {
    error = "cannot create a target machine for " + triple.str();
    return false;
  }
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  SmallVector<char, 0> object;
  raw_svector_ostream os(object);
  legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  pm.run(module);
  return succeeded(mgs::writeOutputFile(
      path, [&](raw_ostream &out) { out << StringRef(object.data(), object.size()); }, error));
}

namespace {
/// Writes the parameters' initial values (inline ones, or the ONNX
/// initializers) in the runtime's weights format, in parameter order, but
/// the error-feedback residuals and gradient accumulators that start at
/// zero (the driver does).
bool writeWeights(mlir::MLIRContext &context, mlir::ModuleOp module, StringRef path) {
  std::vector<mgs::rt::driver::Tensor> tensors;
  llvm::StringMap<size_t> slot;
  std::vector<std::string> external;
  for (auto p : module.getOps<mgs::train::ParameterOp>()) {
    // An error-feedback residual or accumulator that starts at zero is left
    // out: the driver starts it at zero (matchWeights), and a sparsified
    // model's file is half as large.
    if (mgs::contract::manifest::isWorkerStateName(p.getSymName()))
      if (auto init = p.getInitialValue())
        if (auto dense = dyn_cast<mlir::DenseElementsAttr>(*init);
            dense && dense.getElementType().isF32() && dense.isSplat() &&
            dense.getSplatValue<APFloat>().isPosZero())
          continue;
    mgs::rt::driver::Tensor &t = tensors.emplace_back();
    t.name = p.getSymName().str();
    t.dims.assign(p.getTensorType().getShape().begin(), p.getTensorType().getShape().end());
    slot[t.name] = tensors.size() - 1;
    if (auto init = p.getInitialValue()) {
      auto dense = cast<mlir::DenseElementsAttr>(*init);
      t.data.assign(dense.getValues<float>().begin(), dense.getValues<float>().end());
    } else {
      external.push_back(t.name);
    }
  }
  if (!external.empty()) {
    auto weightsFile = module->getAttrOfType<mlir::StringAttr>(mgs::train::kWeightsFileAttrName);
    if (!weightsFile) {
      errs() << "mgsc: error: parameters without values and no train.weights_file\n";
      return false;
    }
    if (failed(mgs::onnx_import::readInitializers(
            context, weightsFile.getValue(), external,
            [&](StringRef name, ArrayRef<int64_t> shape, ArrayRef<float> values) {
              tensors[slot.lookup(name)].data.assign(values.begin(), values.end());
              return mlir::success();
            })))
      return false;
  }
  if (mgs::rt::Status s = mgs::rt::driver::writeWeights(path.str(), tensors); !s.ok()) {
    errs() << "mgsc: error: " << s.message << "\n";
    return false;
  }
  return true;
}

} // namespace

bool link(StringRef object, StringRef output, std::string &error) {
  auto cxx = sys::findProgramByName("c++");
  if (!cxx) {
    error = "no C++ compiler ('c++') on PATH to link with";
    return false;
  }
  SmallVector<std::string> args{*cxx, object.str(), "-o", output.str()};
  for (StringRef lib : split(StringRef(MGS_RUNTIME_LINK_ARGS), '|'))
    if (!lib.empty())
      args.push_back(lib.str());
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  int rc = sys::ExecuteAndWait(*cxx, argRefs, std::nullopt, {}, 0, 0, &error);
  if (rc != 0) {
    if (error.empty())
      error = "the linker failed (exit status " + std::to_string(rc) + ")";
    return false;
  }
  return true;
}

PendingWeights::~PendingWeights() {
  if (!pending.empty())
    sys::fs::remove(pending);
}

bool PendingWeights::prepare(std::string path, std::string &error) {
  SmallString<256> real;
  if (sys::fs::is_symlink_file(path) && !sys::fs::real_path(path, real))
    path = real.str().str();
  if (sys::fs::exists(path) && !sys::fs::is_regular_file(path)) {
    error = "'" + path + "' is not a regular file: the executable's weights are written there";
    return false;
  }
  target = std::move(path);
  return true;
}

bool PendingWeights::write(mlir::MLIRContext &context, mlir::ModuleOp module) {
  pending = target + ".mgsc-" + std::to_string(sys::Process::getProcessId());
  return writeWeights(context, module, pending);
}

bool PendingWeights::commit(std::string &error) {
  if (std::error_code ec = sys::fs::rename(pending, target)) {
    error = "cannot write '" + target + "': " + ec.message();
    return false;
  }
  pending.clear();
  return true;
}

} // namespace mgsc
