//===- InitAllPasses.h - Every pass mgs tools register ----------*- C++ -*-===//

#ifndef MGS_INITALLPASSES_H
#define MGS_INITALLPASSES_H

#include "mgs/Conversion/Passes.h"
#include "mgs/Dialect/Comm/Transforms/Passes.h"
#include "mgs/Dialect/Train/Transforms/Passes.h"
#include "mgs/Pipelines/Pipelines.h"
#include "mlir/Transforms/Passes.h"

namespace mgs {

/// Registers the mgs passes, the mgs pipelines and the upstream passes used
/// with them.
inline void registerAllPasses() {
  mgs::train::registerTrainPasses();
  mgs::comm::registerCommPasses();
  mgs::registerConversionPasses();
  mgs::registerTrainPipeline();     // mgs-train-pipeline: mgsc's passes
  mlir::registerTransformsPasses(); // canonicalize, cse, symbol-dce, ...
}

} // namespace mgs

#endif // MGS_INITALLPASSES_H
