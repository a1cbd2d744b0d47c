//===- ModelSummary.cpp - What an imported model holds --------------------===//

#include "mgs/Analysis/ModelSummary.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

using namespace mlir;

namespace mgs {

ModelSummary ModelSummary::compute(ModuleOp module) {
  ModelSummary s;
  module.walk([&](Operation *op) {
    if (auto param = dyn_cast<train::ParameterOp>(op)) {
      int64_t n = param.getTensorType().getNumElements();
      if (param.getTrainable()) {
        ++s.numTrainable;
        s.trainableElements += n;
      } else {
        ++s.numState;
        s.stateElements += n;
      }
      return;
    }
    if (op->getDialect() && op->getDialect()->getNamespace() == "train" &&
        !isa<train::GetParamOp>(op)) {
      ++s.opCounts[op->getName().stripDialect()];
      ++s.numOps;
    }
  });
  return s;
}

void ModelSummary::print(llvm::raw_ostream &os) const {
  os << numOps << " ops (";
  bool first = true;
  for (const auto &[name, count] : opCounts) {
    os << (first ? "" : ", ") << name << " " << count;
    first = false;
  }
  os << "), " << numTrainable << " trainable parameters ("
     << withThousandsSeparators(trainableElements) << " values), " << numState
     << " state buffers (" << withThousandsSeparators(stateElements) << " values)";
}

std::string withThousandsSeparators(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

} // namespace mgs
