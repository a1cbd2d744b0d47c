//===- Strategy.h - The gradient communication strategies -------*- C++ -*-===//
//
// Which neighbouring gradients are merged into one group, and which groups
// are top-k sparsified. The strategies are listed once, in
// MGS_STRATEGIES below, with their names, help texts and traits; every
// listing (the tools' help texts and parse errors, mgs-plan's plans, the
// compiler's pipeline) reads it.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_STRATEGY_H
#define MGS_PLANNER_STRATEGY_H

#include "mgs/Planner/CostModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgs::planner {

/// Every strategy, in the order mgs-plan prints them (`none` first):
///   X(Kind, "name", merged, sparse, perGroup, "help")
/// - merged: the planner groups the gradients (the compiler runs
///   comm-merge-buckets); dense and layerwise keep one group per gradient.
/// - sparse: some gradient may be top-k sparsified and all-gathered.
/// - perGroup: the planner chooses each group's collective (allgather,
///   allreduce, gtopk, sparse-allreduce).
/// `none` (no communication) is the compiler's; the planner plans the others.
/// Threshold takes a parameter: "threshold:BYTES".
#define MGS_STRATEGIES(X)                                                                          \
  X(None, "none", false, false, false, "the default: one process, no communication")               \
  X(Dense, "dense", false, false, false,                                                           \
    "every gradient averaged with its own all-reduce, overlapping backprop")                       \
  X(MGWFBP, "mgwfbp", true, false, false, "dense, merged: the exact optimum over dense groupings") \
  X(Single, "single", true, true, false,                                                           \
    "one sparse group with every gradient, top-k after backprop")                                  \
  X(Layerwise, "layerwise", false, true, false,                                                    \
    "every gradient top-k sparsified and all-gathered")                                            \
  X(Threshold, "threshold", true, true, false,                                                     \
    "sparse buckets of at least BYTES of gradients, like Horovod and DDP")                         \
  X(Greedy, "greedy", true, true, false, "the OMGS paper's greedy merge rule, sparse")             \
  X(OMGS, "omgs", true, true, false, "the exact optimum over sparse groupings")                    \
  X(GTopK, "gtopk", true, true, false,                                                             \
    "the exact optimum over sparse groupings, each exchanged by a global top-k")                   \
  X(SparseAllReduce, "sparse-allreduce", true, true, false,                                        \
    "the exact optimum over sparse groupings, each by a balanced sparse all-reduce")               \
  X(Auto, "auto", true, true, true,                                                                \
    "the exact optimum when each group may use any of the four collectives")

enum class StrategyKind {
#define MGS_STRATEGY_KIND(Kind, Name, Merged, Sparse, PerGroup, Help) Kind,
  MGS_STRATEGIES(MGS_STRATEGY_KIND)
#undef MGS_STRATEGY_KIND
};

/// A strategy and its parameter (the threshold's bytes).
struct Strategy {
  StrategyKind kind = StrategyKind::OMGS;
  /// Threshold only: a bucket closes once its gradients hold this many bytes.
  int64_t thresholdBytes = 0;
  /// Auto only: the collectives each group may use (mgs-plan
  /// --auto-collectives; the compiler uses all four).
  CollectiveSet autoCollectives = CollectiveSet::all();

  /// "none", "dense", ..., "threshold:26214400".
  std::string name() const;
  /// Whether gradients are exchanged at all (all but none).
  bool communicates() const { return kind != StrategyKind::None; }
  /// Whether the planner groups the gradients (see MGS_STRATEGIES).
  bool isMerged() const;
  /// Whether some gradient may be top-k sparsified.
  bool isSparse() const;
  /// Whether the planner chooses each group's collective.
  bool choosesPerGroup() const;

  /// Parses a strategy the planner plans with (not `none`); errors say what is
  /// wrong and list the names.
  static llvm::Expected<Strategy> parse(llvm::StringRef name);
  /// parse(), also accepting `none` (the compiler's strategies).
  static llvm::Expected<Strategy> parseWithNone(llvm::StringRef name);
};

/// The threshold every-strategy listings use: PyTorch DDP's 25 MiB buckets.
constexpr int64_t kDefaultThresholdBytes = 25 * 1024 * 1024;

/// Every strategy the planner plans with, in the order mgs-plan prints them:
/// dense, mgwfbp, single, layerwise, threshold:26214400, greedy, omgs, gtopk,
/// sparse-allreduce, auto.
std::vector<Strategy> allStrategies();

/// The planner's strategy names, comma-separated: "dense, mgwfbp, single,
/// layerwise, threshold:BYTES, greedy, omgs, gtopk, sparse-allreduce, auto".
llvm::StringRef strategyNames();
/// The help text of a --strategy option: "Gradient communication between
/// data-parallel workers: none (the default: one process, no communication), dense (...),
/// ..., auto (...)".
llvm::StringRef strategyHelp();

} // namespace mgs::planner

#endif // MGS_PLANNER_STRATEGY_H
