//===- Planner.h - Gradient merge planner (OMGS cost model) -----*- C++ -*-===//
//
// The planner decides which neighbouring gradients are merged into one group
// (one top-k and one collective per group) and, for `auto`, which groups stay
// dense. It reads a calibration profile (Profile.h), predicts the iteration
// time of a grouping with the pipeline model of OMGS-SGD (CostModel.h), and
// plans with one of the strategies of Strategy.h (Heuristics.h,
// ExactPlanner.h). It is plain C++ over LLVMSupport (no MLIR IR) so the merge
// pass and the mgs-plan CLI share it.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_PLANNER_H
#define MGS_PLANNER_PLANNER_H

#include "mgs/Planner/CostModel.h"
#include "mgs/Planner/Profile.h"
#include "mgs/Planner/Strategy.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mgs::planner {

/// A strategy's grouping and its predicted iteration time.
struct Plan {
  std::string strategy;
  /// Backprop order: groups[0].end == L, groups.back().begin == 0 and
  /// groups[i + 1].end == groups[i].begin.
  std::vector<Group> groups;
  double predictedSeconds = 0.0;
  /// The exact planner's certified gap: predictedSeconds <= the strategy's
  /// optimum / (1 - gap); 0 when the plan is optimal (or the strategy is a
  /// rule, not an optimum).
  double gap = 0.0;
};

/// How far the exact strategies search.
struct PlanSearch {
  /// In [0, 1): stop at a grouping certified within this relative gap of the
  /// optimum where the exact search is long (OptimalTuning::relativeGap).
  double relativeGap = 0.0;
  /// The optimum however long its search takes. Otherwise the finest level's
  /// search keeps at most kLabelsPerLayer * L labels in all and, past them,
  /// returns the best grouping known with the gap its bounds certify
  /// (OptimalTuning::lastLevelLabelsPerLayer; Plan::gap): seconds where the
  /// exact search of a transformer's profile takes minutes.
  bool exact = false;
  static constexpr size_t kLabelsPerLayer = 256;
};

/// Plans with a strategy; the profile must be valid. Plan::predictedSeconds
/// is predict() of the groups.
Plan plan(const Profile &profile, const Strategy &strategy, const PlanSearch &search = {});

/// docs/design.md's Plan JSON, one group a line:
///   {
///     "strategy": "omgs",
///     "predicted_seconds": 0.0123,
///     "groups": [
///       {"layers": ["fc.weight", "fc.bias"], "collective": "allgather"},
///       ...
///     ]
///   }
/// Each group's layers are listed in the profile's (forward) order.
void printPlanJSON(llvm::raw_ostream &os, const Profile &profile, const Plan &plan,
                   unsigned indent = 0);
/// The same as a JSON value.
llvm::json::Value planToJSON(const Profile &profile, const Plan &plan);

} // namespace mgs::planner

#endif // MGS_PLANNER_PLANNER_H
