//===- Strategy.h - The merge strategies of the planner ---------*- C++ -*-===//
//
// Which neighbouring gradients are merged into one group, and which groups
// are top-k sparsified: the strategies the planner plans with.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_STRATEGY_H
#define MGS_PLANNER_STRATEGY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mgs::planner {

enum class StrategyKind {
  Dense,     ///< one allreduce per layer (wait-free backprop)
  MGWFBP,    ///< dense, merged: the exact optimum over dense groupings (not
             ///< MG-WFBP's own greedy rule)
  Single,    ///< one sparse group with every layer (top-k after backprop)
  Layerwise, ///< one sparse group per layer
  Threshold, ///< sparse buckets of >= thresholdBytes, like Horovod/DDP
  Greedy,    ///< the OMGS paper's greedy merge rule (sparse)
  OMGS,      ///< the exact optimum over sparse groupings
  Auto,      ///< the exact optimum when each group may also be dense
};

/// A strategy and its parameter (the threshold's bytes).
struct Strategy {
  StrategyKind kind = StrategyKind::OMGS;
  /// Threshold only: a bucket closes once its gradients hold this many bytes.
  int64_t thresholdBytes = 0;

  /// "dense", ..., "threshold:26214400".
  std::string name() const;
  /// Parses a strategy name; errors say what is wrong and list the names.
  static llvm::Expected<Strategy> parse(llvm::StringRef name);
};

/// The threshold every-strategy listings use: PyTorch DDP's 25 MiB buckets.
constexpr int64_t kDefaultThresholdBytes = 25 * 1024 * 1024;

/// Every strategy, in the order mgs-plan prints them: dense, mgwfbp, single,
/// layerwise, threshold:26214400, greedy, omgs, auto.
std::vector<Strategy> allStrategies();

} // namespace mgs::planner

#endif // MGS_PLANNER_STRATEGY_H
