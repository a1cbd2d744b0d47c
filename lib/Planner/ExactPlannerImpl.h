//===- ExactPlannerImpl.h - The exact planner's search state --*- C++ -*-===//
//
// Private to lib/Planner: the state of one planOptimal() run, shared by the
// label-setting DP (ExactPlanner.cpp) and its bounds (ExactBounds.cpp). The
// algorithm and its proof are explained in ExactPlanner.cpp; the bounds, the
// windows and what limits the search on the hard profiles in ExactBounds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_PLANNER_EXACTPLANNERIMPL_H
#define MGS_LIB_PLANNER_EXACTPLANNERIMPL_H

#include "mgs/Planner/ExactPlanner.h"

#include "PlannerSupport.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace mgs::planner::detail {

/// A label of the forward DP: a grouping of the first i positions.
struct Label {
  double x, y;
  int32_t from;          ///< boundary j of the previous label
  int32_t fromIdx;       ///< its index in front[j]
  Collective collective; ///< of the group [j, i)
};

/// A lower-bound point of a boundary's suffix frontier: every grouping of
/// [i, L) it stands for has total collective time >= a and F >= f.
struct SuffixPoint {
  double a, f;
};

/// A lower-bound point of a boundary's prefix frontier: every grouping of
/// [0, i) it stands for has top-k time >= x and its collectives end >= y.
struct PrefixPoint {
  double x, y;
};

class OptimalPlanner {
public:
  OptimalPlanner(const Profile &p, CollectiveSet allowed, const OptimalTuning &tuning);

  /// The optimal grouping (ExactPlanner.cpp).
  std::vector<Group> run();

  /// Statistics of the exact run (for the benchmark).
  size_t maxFront = 0, totalLabels = 0, usedBuckets = 0, attempts = 0, windowDrops = 0;
  bool returnedHeuristic = false, certifiedByBounds = false, windowed = false,
       exactFrontier = false, overBudget = false;
  double gap = 0.0;

private:
  enum class Mode { Exact, KeepLeastBound };
  /// Relative slack for rounding wherever a bound is compared with a cost.
  static constexpr double kMargin = 1e-9;
  /// Relative rounding allowed when a lower bound certifies a grouping (a
  /// bound is a sum over at most L groups: ~L * 1.1e-16 relative).
  static constexpr double kBoundRounding = 1e-13;
  /// Relative tolerance of the forward DP's dominance (insertPareto): a
  /// label within kTie * (|X| + |Y|) of a kept one in both keys is a
  /// rounding variant of it (the same costs summed in another order).
  static constexpr double kTie = 1e-15;
  /// A windowed boundary keeps its suffix points themselves while it shifts
  /// at most this many points per point kept (computeSuffixBounds()).
  static constexpr size_t kExactWork = 64;

  BackpropView view;
  OptimalTuning tuning;
  llvm::SmallVector<Collective, 4> collectives;
  /// rowStart[j] + (i - j - 1): the index of the group [j, i).
  std::vector<size_t> rowStart;
  /// Per group [j, i) (index g above): its non-dominated choices' costs and
  /// their collectives (indices into `collectives`), entries
  /// [firstChoice[g], firstChoice[g + 1]).
  std::vector<GroupCost> costs;
  std::vector<uint8_t> kinds;
  std::vector<uint32_t> firstChoice;
  /// minComm[i]: least total collective time of a grouping of [i, L).
  /// minRest[i]: a lower bound of F over the groupings of [i, L).
  std::vector<double> minComm, minRest;
  /// minSlack[i], maxSlack[i]: the least and largest F - A over the
  /// groupings of [i, L) (see dominance()).
  std::vector<double> minSlack, maxSlack;
  /// minCommF[i]: F of a grouping of [i, L) with the least A (the least F
  /// among those).
  std::vector<double> minCommF;
  /// Least X and least Y of any grouping of [0, i).
  std::vector<double> prefixMinX, prefixMinY;
  /// Coarse suffix frontiers: a ascending, f strictly descending.
  std::vector<std::vector<SuffixPoint>> suffix;
  /// Whether `suffix` has been computed (an empty frontier then means that
  /// nothing through the boundary finishes within the limit).
  bool suffixComputed = false;
  /// Coarse prefix frontiers (computePrefixBounds): x ascending, y strictly
  /// descending.
  std::vector<std::vector<PrefixPoint>> prefix;
  /// Per boundary, the A range of the suffix points that can finish within
  /// the limit with some prefix corner (computeWindows).
  std::vector<double> windowLo, windowHi;

  /// The costs of the collectives worth trying for the group [j, i).
  llvm::ArrayRef<GroupCost> choicesAt(int64_t j, int64_t i) const {
    size_t at = rowStart[j] + static_cast<size_t>(i - j - 1);
    return {&costs[firstChoice[at]], firstChoice[at + 1] - firstChoice[at]};
  }
  /// The collective of choicesAt(j, i)[m].
  Collective collectiveAt(int64_t j, int64_t i, size_t m) const {
    return collectives[kinds[firstChoice[rowStart[j] + static_cast<size_t>(i - j - 1)] + m]];
  }

  // The bounds (ExactBounds.cpp).
  /// minComm, minRest, minSlack, maxSlack, minCommF, prefixMinX and
  /// prefixMinY by backward and forward scalar DPs.
  void computeSimpleBounds();
  /// The coarse suffix frontiers, backward from {(0, -inf)} at L: a grouping
  /// of [j, L) is a first group [j, e) (top-k s, collective c) and a
  /// grouping of [e, L) with (A, F), giving A' = c + A and
  /// F' = max(B(e) + s + c + A, s + F). Both are non-decreasing in (A, F),
  /// so lower-bound points at e give lower-bound points at j. The points of
  /// j are bucketed by A and each bucket kept as its corner (least A, least
  /// F): a lower bound of every point in it. Points that cannot finish within
  /// `upper` (A > upper - the least Y of a prefix; F > upper - the least X)
  /// are dropped. `windowed` (after computeWindows()): the buckets of j span
  /// its window instead, and what no prefix corner can finish with is
  /// dropped (see computeWindows() for why that is valid); and the
  /// boundaries from L down keep their points themselves instead of corners
  /// while they are few (exactFrontier says whether all did).
  void computeSuffixBounds(double upper, size_t buckets, bool windowed = false);
  /// The A range [lo, hi] and the F cap of a boundary's suffix points, and
  /// (windowed) the least prefix corner.
  struct SuffixCaps {
    double lo, hi, fCap;
    PrefixPoint least;
  };
  /// Boundary j's caps; false when nothing through j finishes within upper.
  bool suffixCaps(int64_t j, double upper, bool windowed, SuffixCaps &caps) const;
  /// Calls emit(a, f) with lower-bound points of every grouping of [j, L)
  /// within the caps (from the frontiers of the boundaries after j); stops,
  /// returning false, as soon as emit returns false.
  template <typename Emit>
  bool shiftSuffixes(int64_t j, const SuffixCaps &caps, double upper, bool windowed,
                     Emit &&emit) const;
  /// Whether some point of the suffix frontier `pts` can follow a prefix at
  /// least (x, y) within upper: a <= upper - y and f <= upper - x.
  static bool finishes(const std::vector<SuffixPoint> &pts, double x, double y, double upper);
  /// Whether some prefix corner of boundary j can be followed by the suffix
  /// point (a, f) within upper: y <= upper - a and x <= upper - f.
  bool finishesWithPrefix(int64_t j, double a, double f, double upper) const;
  /// The coarse prefix frontiers, the mirror of the suffix ones (every
  /// grouping of [0, i) that can finish within `upper` is at least some
  /// corner of i).
  void computePrefixBounds(double upper, size_t buckets);
  /// Per boundary, the window of A for the last level's suffix buckets (the
  /// proof is at the definition).
  void computeWindows(double upper);

  /// A lower bound of every grouping that can finish within the limit the
  /// suffix bounds were computed for (+inf when there is none).
  double rootBound() const {
    if (suffix[0].empty())
      return std::numeric_limits<double>::infinity();
    return lowerBound(Label{0.0, 0.0, -1, -1, Collective::AllGather}, 0);
  }

  /// No grouping of [i, L) after the label ends below this.
  /// (Above `cutoff` the exact value does not matter: returns early.)
  double lowerBound(const Label &l, int64_t i,
                    double cutoff = std::numeric_limits<double>::infinity()) const {
    if (i == view.L)
      return l.y;
    double bound = std::max(l.y + minComm[i], l.x + minRest[i]);
    const std::vector<SuffixPoint> &pts = suffix[i];
    if (pts.empty() && suffixComputed) // nothing through i finishes within the limit
      return std::numeric_limits<double>::infinity();
    if (pts.empty() || bound > cutoff) // before computeSuffixBounds, or pruned anyway
      return bound;
    // min_k max(y + a_k, x + f_k): y + a_k rises and x + f_k falls with k;
    // the minimum is next to the first k where the first reaches the second.
    size_t k = std::partition_point(pts.begin(), pts.end(),
                                    [&](const SuffixPoint &p) { return l.y + p.a < l.x + p.f; }) -
               pts.begin();
    double coarse = std::numeric_limits<double>::infinity();
    if (k < pts.size())
      coarse = l.y + pts[k].a;
    if (k > 0)
      coarse = std::min(coarse, l.x + pts[k - 1].f);
    return std::max(bound, coarse);
  }

  // The label-setting DP (ExactPlanner.cpp).
  /// The (X, Y) of a label for dominance at boundary i < L: a label whose
  /// Y - X is below every suffix's F - A (e.g. its comm stream is idle by the
  /// end of the next layer's backward) behaves the same whatever its Y.
  std::pair<double, double> dominance(const Label &l, int64_t i) const;
  /// Drops the labels that another dominates within the groupings that can
  /// still finish within `limit` (the proof is at the definition).
  void filterWithinLimit(std::vector<Label> &labels, int64_t i, double limit) const;
  static double bestY(const std::vector<Label> &labels);
  /// The forward DP. Mode::Exact keeps every non-dominated label whose lower
  /// bound is within `limit` (nullopt once more than `budget` labels are
  /// kept). Mode::KeepLeastBound, the heuristic for an upper bound, keeps one
  /// label per boundary: the one of least lower bound.
  std::optional<std::vector<std::vector<Label>>> solve(Mode mode, std::optional<double> limit,
                                                       std::optional<size_t> budget);
  template <typename Keyed> static void insertPareto(std::vector<Keyed> &pareto, const Keyed &c);
  /// The grouping of the least-Y label at L.
  std::vector<Group> reconstruct(const std::vector<std::vector<Label>> &front) const;
};

} // namespace mgs::planner::detail

#endif // MGS_LIB_PLANNER_EXACTPLANNERIMPL_H
