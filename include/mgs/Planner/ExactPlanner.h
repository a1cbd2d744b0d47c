//===- ExactPlanner.h - The exact optimum over groupings --------*- C++ -*-===//
//
// planOptimal: the grouping of least predict() time, behind the omgs, mgwfbp
// and auto strategies.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_EXACTPLANNER_H
#define MGS_PLANNER_EXACTPLANNER_H

#include "mgs/Planner/CostModel.h"
#include "mgs/Planner/Profile.h"

#include <cstddef>
#include <vector>

namespace mgs::planner {

/// What planOptimal's search did (for benchmarks and tests).
struct OptimalStats {
  size_t maxFrontier = 0; ///< most Pareto labels kept at one boundary
  size_t totalLabels = 0; ///< labels kept over all boundaries
  size_t buckets = 0;     ///< suffix-bound buckets of the run that finished
  size_t attempts = 0;    ///< exact runs (1 + escalations; 0: certified before any)
  /// The exact run lost the heuristics' grouping (only rounding beyond the
  /// prunings' margin may do that), so that grouping was returned: tests
  /// assert it stays false, since a pruning that cuts an optimal plan shows
  /// here even when the heuristics happened to find the optimum.
  bool returnedHeuristic = false;
  /// The result's certified relative gap: 0 when it is the optimum, else the
  /// `relativeGap` it was planned with or, past the last level's budget
  /// (overBudget), the gap its bounds certify (its predicted time is then at
  /// most the optimum / (1 - gap)).
  double gap = 0.0;
  /// The bounds alone showed the heuristics' grouping optimal (or within the
  /// gap): no exact search ran (with attempts == 0, the simple bounds before
  /// any suffix bounds).
  bool certifiedByBounds = false;
  /// The last bucket level ran, with its suffix bounds windowed by a prefix
  /// frontier (OptimalTuning::windowedLastLevel).
  bool windowed = false;
  /// Suffix-bound points that the windowed level dropped because no prefix
  /// corner could be followed by them within the known grouping's cost.
  size_t windowDrops = 0;
  /// Every boundary of the windowed level kept its suffix points themselves
  /// (OptimalTuning::exactFrontierPoints), so its bounds lose nothing.
  bool exactFrontier = false;
  /// The last level's search outgrew OptimalTuning::lastLevelLabelsPerLayer:
  /// the result is the best grouping known, within `gap` of the optimum.
  bool overBudget = false;
};
/// Search effort knobs (the defaults suit real models; tests shrink them to
/// exercise every path). The result is exact (to 2 L 1e-15 relative, the
/// rounding variants of ExactPlanner.cpp) for every setting but relativeGap
/// and lastLevelLabelsPerLayer, which say how far from it it may be.
struct OptimalTuning {
  size_t firstBuckets = 512;       ///< suffix-bound buckets of the first run
  size_t bucketGrowth = 8;         ///< factor per escalation
  size_t lastBuckets = 32768;      ///< the last run (at or past this): see lastLevelLabelsPerLayer
  size_t labelBudgetPerLayer = 16; ///< escalate past this many labels per layer
  /// 0: the optimum. gap in (0, 1): a grouping whose predicted time is at most
  /// the optimum / (1 - gap), certified: the search keeps only the groupings
  /// that would beat the best known one by more than `gap` of its time, and
  /// when none is left the known one is within the gap. It is used only once
  /// the exact search outgrows its first `exactAttempts` label budgets, or
  /// the last level's (profiles where very many groupings tie within the
  /// gap), so typical profiles still get the exact optimum.
  double relativeGap = 0.0;
  /// Bucket levels whose exact search runs before the gap is used (the
  /// search with the gap then starts at the same level).
  size_t exactAttempts = 2;
  /// Stop as soon as the suffix bounds certify the known grouping (tests turn
  /// it off to run the search itself).
  bool certifyByBounds = true;
  /// At the last level (reached after another), span each boundary's suffix
  /// buckets over the A that a coarse prefix frontier leaves possible
  /// instead of over the simple bounds' box: far finer bounds where the box
  /// is wide (ExactBounds.cpp, computeWindows()).
  bool windowedLastLevel = true;
  /// At the windowed level, the boundaries from the last one down keep
  /// their suffix points themselves instead of bucket corners while they
  /// have at most this many (0: never; ExactBounds.cpp,
  /// computeSuffixBounds()).
  size_t exactFrontierPoints = 1024;
  /// Factor of the label budget per escalation (the buckets grow by
  /// bucketGrowth): the searches that outgrow the first level's budget and
  /// need the last level at all stop sooner at the levels between, since the
  /// last level's bounds (windowed, exact where the windows are narrow)
  /// settle them for less (ExactPlanner.cpp, run()).
  size_t budgetGrowth = 2;
  /// Labels the last level's search may keep, in all, per layer (a budget of
  /// this times L; 0: no limit, the exact optimum however long it takes).
  /// Past it the search (with relativeGap, if any, once more) stops and the
  /// best grouping known is returned with the gap its bounds certify
  /// (OptimalStats::gap, overBudget): on profiles of many repeated blocks
  /// (a transformer's) the exact search keeps thousands of labels a
  /// boundary and takes minutes to tell them apart.
  size_t lastLevelLabelsPerLayer = 0;
};
/// The exact optimum of predict() over contiguous groupings whose groups each
/// use one of the allowed collectives (omgs: allgather; mgwfbp: allreduce;
/// gtopk, sparse-allreduce: that one; auto: all four), up to floating-point
/// rounding of the sums (1e-12 relative in the tests against brute force).
/// See ExactPlanner.cpp for the algorithm, the proof and the running time
/// (tens of milliseconds for 500 layers; up to 0.5 s on the rare random
/// profiles where very many groupings tie, and seconds to minutes on a GPT-2
/// large or XL shape, which OptimalTuning::lastLevelLabelsPerLayer bounds), and
/// ExactBounds.cpp for the bounds and what limits them on those profiles.
/// `allowed` must not be empty.
std::vector<Group> planOptimal(const Profile &profile, CollectiveSet allowed,
                               OptimalStats *stats = nullptr, const OptimalTuning &tuning = {});
/// The same over the all-gather (sparse) and the all-reduce (dense).
inline std::vector<Group> planOptimal(const Profile &profile, bool allowSparse, bool allowDense,
                                      OptimalStats *stats = nullptr,
                                      const OptimalTuning &tuning = {}) {
  CollectiveSet allowed;
  if (allowSparse && allowDense)
    allowed = {Collective::AllGather, Collective::AllReduce};
  else
    allowed = {allowSparse ? Collective::AllGather : Collective::AllReduce};
  return planOptimal(profile, allowed, stats, tuning);
}

} // namespace mgs::planner

#endif // MGS_PLANNER_EXACTPLANNER_H
