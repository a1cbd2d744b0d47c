//===- Loss.h - mgsc's loss options -----------------------------*- C++ -*-===//
//
// Which loss mgsc's step trains: the loss options (Loss.cpp), checked before
// the import, and the checks of the loss once the model is imported. Also
// mgsc's option category and its error and warning lines, which both files
// use.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_TOOLS_MGSC_LOSS_H
#define MGS_TOOLS_MGSC_LOSS_H

#include "mgs/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"

namespace mgsc {

/// mgsc's own options (--help lists these).
llvm::cl::OptionCategory &category();
/// "mgsc: error: MESSAGE"; returns 1, mgsc's exit status.
int fail(const llvm::Twine &message);
/// "mgsc: warning: MESSAGE".
void warn(const llvm::Twine &message);

/// Checks the loss options (each error names its option) and sets the
/// pipeline's loss fields. False after an error.
bool parseLossOptions(bool inference, mgs::TrainPipelineOptions &pipeline);

/// A loss the exported graph computed itself (which the importer lifted out:
/// train.graph_loss) is the loss trained: a loss option that could say
/// otherwise is an error. Says which loss is trained, unless `quiet`.
bool checkGraphLoss(mlir::ModuleOp module, bool inference, bool quiet);
/// A model whose first output is a float32 scalar computes its loss in its
/// graph: trained as it is (`pipeline`'s loss becomes "graph"; said unless
/// `quiet`); a loss option that could say otherwise is an error, and so is
/// --loss graph on a model whose first output is not a scalar.
bool settleLossInGraph(mlir::ModuleOp module, bool inference, bool quiet,
                       mgs::TrainPipelineOptions &pipeline);

/// With --class-axis, says (unless `quiet`) what the cross-entropy trains:
/// the first output's rows and classes, and the labels a batch takes.
void describeClassAxis(mlir::ModuleOp module, bool inference, bool quiet);

} // namespace mgsc

#endif // MGS_TOOLS_MGSC_LOSS_H
