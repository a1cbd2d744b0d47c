//===- ExactPlanner.cpp - The exact optimum over contiguous groupings -----===//
//
// planOptimal: a label-setting DP over the Pareto frontier of (top-k time,
// end of the last collective), with suffix bounds and wider dominance rules
// as prunings. The algorithm, its proof and its running time are explained
// below.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/ExactPlanner.h"

#include "PlannerSupport.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace llvm;

namespace mgs::planner {

using namespace detail;

//===----------------------------------------------------------------------===//
// The exact planner
//===----------------------------------------------------------------------===//
//
// Model. In backprop order, positions 0..L-1 with backward times b_p and
// boundaries 0..L; a grouping is a path 0 = i_0 < i_1 < ... < i_G = L and
// each group [i_{g-1}, i_g) picks one of the allowed collectives (up to four:
// nothing below depends on how many or which). With the compute-stream time
// s_g of group g (its top-k, none when dense, plus the CPU time its
// collective takes, cpu_per_byte) and its collective time c_g, and B(i) the backward
// time of positions [0, i), the pipeline is the recurrence over (X, Y) =
// (top-k time so far, end of the last collective so far), from (0, 0):
//     X_g = X_{g-1} + s_g,   Y_g = max(Y_{g-1}, B(i_g) + X_g) + c_g,
// and the cost is Y_G. (Unrolled: Y_G = max_g [B(i_g) + X_g + sum_{h>=g} c_h],
// the makespan of a two-machine flow shop whose jobs are the groups.)
//
// Why one number per boundary is not enough. The cost of a grouping splits
// at any boundary into max(Y + A, X + F): (X, Y) from the prefix, A = the
// suffix's total collective time, F = the suffix's max_g [B(i_g) + its own
// top-k time up to g + its collective time from g on]. Two prefixes with
// X1 < X2 and Y1 > Y2 are incomparable: a comm-bound suffix (large A)
// prefers the second, a compute-bound one (large F) the first. So an O(L^2)
// DP keeping the best Y per boundary, or the paper's greedy, is not exact.
// (With no compute-stream time at all -- mgwfbp without cpu_per_byte -- X is
// always 0, F does not depend on the prefix, and the DP below degenerates to
// exactly that O(L^2) DP.)
//
// Algorithm: a label-setting DP over boundaries keeping the Pareto frontier
// of (X, Y). front[0] = {(0, 0)}; front[i] = the non-dominated labels among
// every extension of every label of front[j], j < i, by the group [j, i)
// with every allowed collective.
//
// Exactness. (1) The step (X, Y) -> (X + s, max(Y, B + X + s) + c) is
// non-decreasing in X and in Y, also in floating point (IEEE addition with
// round-to-nearest and max are monotone). So if (X1, Y1) <= (X2, Y2)
// componentwise at boundary i, then for every continuation the final
// Y1' <= Y2': dropping a dominated label never loses the optimum. (2) By
// induction on i, front[i] holds, for every grouping of positions [0, i), a
// label that dominates its (X, Y): the grouping's last group [j, i) extends
// a grouping of [0, j), which some label of front[j] dominates, and that
// label's extension by [j, i) is a candidate of front[i] dominating the
// grouping's (by (1)); filtering keeps a label dominating every candidate.
// Hence min Y over front[L] is the optimum.
//
// Choices. For one group, a collective whose compute-stream and comm-stream
// times are both at most another's makes the other unnecessary (by (1), any
// grouping using the other is matched by the same grouping using it), so only
// the non-dominated collectives of each group are extended (ties: the first).
// Without cpu_per_byte the three sparse collectives share the top-k time, so
// each group keeps at most one of them besides the all-reduce: auto over four
// collectives searches about as much as over two.
//
// Prunings, each keeping some optimal grouping (all but the first hold in
// exact arithmetic and are applied with a 1e-9 relative margin against
// rounding; the unit tests compare with brute force to 1e-12):
//   - Within one (j, collective) batch, front[j] sorted by X ascending has
//     Y descending; once B(i) + X + s >= Y the new Y is B(i) + X + s + c, and
//     every later label (larger X) yields a label it dominates: stop there.
//   - Bounds. Split at boundary i, cost = max(Y + A, X + F). The backward
//     DPs of computeSimpleBounds() give the least A, a lower bound of F and
//     the least and largest F - A over the groupings of [i, L);
//     computeSuffixBounds() gives a coarse lower envelope of the suffix
//     frontier {(A, F)} (buckets of A, each kept as its corner). A label
//     whose lower bound exceeds the cost U of a known grouping (heuristic
//     runs of this DP keeping one label per boundary) is dropped: labels on
//     an optimal path have LB <= OPT <= U.
//   - Wider dominance (dominance(), filterWithinLimit()): if Y - X is below
//     every suffix's F - A, only X matters; and within the groupings that
//     can still finish within U, a label with a larger X but a smaller Y
//     (or the reverse) dominates when the suffixes' F - A (bounded by the
//     coarse envelope) says the difference can never show.
//   - Certification. The suffix bounds of boundary 0 are a lower bound of
//     every grouping (lowerBound() of the empty prefix): when it reaches the
//     known grouping's cost (to 1e-13 relative rounding), that grouping is
//     optimal and no search runs. On the bench's 500-layer profiles this ends
//     most omgs runs at the first bucket level.
//   - Windowed last level (OptimalTuning::windowedLastLevel). The buckets of
//     a boundary span the box [minComm[j], U - prefixMinY[j]] of A, which
//     the least Y and the least X of different prefixes make far wider than
//     the A that can still finish within U. The last level, reached after
//     another, first builds coarse prefix frontiers (computePrefixBounds():
//     the mirror of the suffix ones, pruned by the level before's suffix
//     bounds), from them and that level's suffix frontiers a window of A
//     per boundary (computeWindows(), which proves it), and spans its
//     buckets over the window, dropping the suffix points no prefix corner
//     can be followed by within U and the groups not even the least corner
//     can take. Every point dropped or raised bounds only groupings that
//     cannot finish within U, so the bounds stay valid for every grouping
//     that can. On the bench's three profiles that reach it, 1017 keeps 17
//     labels a boundary instead of 366 (0.5-0.8 s instead of 1.9-2.3 s),
//     1010 1.5 instead of 11 (0.5 s instead of 0.7-1.0 s), and 1028 is
//     certified by the bounds (bench/results/planner-hard-profiles.txt).
//
// A gap (OptimalTuning::relativeGap, mgs-plan --gap): after the exact search
// has outgrown its first levels' budgets, the searches keep only labels whose
// lower bound is below (1 - gap) U, where U is the known grouping's cost.
// Either one survives to L (it is then the optimum: every grouping within
// that limit is dominated by a kept label), or none can beat U by more than
// the gap, and U is returned: U <= OPT / (1 - gap). The certification above
// works the same against (1 - gap) U.
// Measured on the bench's slow auto profiles (the 11 near or over 50 ms;
// bench/results/planner-hard-profiles.txt): a gap of 1e-9 .. 1e-5 changes no
// profile's bucket level, with exactAttempts 2 or 0 (the bounds' losses,
// ~3 / buckets of U, dwarf such a gap): the eight needing 4096 or 32768
// buckets stay at 0.1 - 2 s. At 1e-4 (exactAttempts 0) the bounds certify
// 1011, 1017 and 1024 at their usual level (still 0.1 - 1 s); at 1e-3, 1024
// takes 42 ms, 1017 0.34 s and 1028 0.56 s. The plans returned with a gap
// <= 1e-5 are the optimum but for 1010 (2.9e-7 above it at 1e-6) and 1001
// (1.1e-7 at 1e-5, exactAttempts 0); at 1e-4 up to 5.1e-5, at 1e-3 3.6e-4.
//
// predict() evaluates the same recurrence with the same operations (step()),
// so the returned grouping's predict() is the DP's value bit for bit.
//
// Cost: O(L^2) group costs and bounds, O(L^2 * F) label extensions for
// frontier size F, plus the coarse envelopes: O(L^2) batches over their
// corners (stopping as above). The group costs are computed once per group
// for all collectives, from the profile's CollectiveConstants and the group's
// n, k and top-k times (the top-k curve walked as a group grows); in a batch
// of the envelopes the corners before the crossing are shifted copies, so
// only the crossing and A's cap are searched for. The bucket count starts at
// 512 and grows 8x (to 32768) whenever the exact search keeps more than
// 16 * L labels; the prefix frontiers of the windowed last level cost what
// the suffix ones do. F is small on most model-shaped profiles
// (bench/planner_bench prints it); with one collective and no compute-stream
// time (mgwfbp without cpu_per_byte), F = 1.
//
// Worst case. We know no exact algorithm polynomial on every profile (auto
// holds a per-layer two-way choice trading compute-stream time against comm
// time, much like PARTITION), and profiles whose top-k and collective costs
// trade almost exactly 1:1 have very many groupings within 1e-5 of the
// optimum: there F grows to thousands and planning takes seconds.
//
// What limits the search there (measured on bench/planner_bench's seed 1017,
// auto over four collectives, L = 500). With D = Y - X the cost through a
// label is X + h_i(D), h_i(d) = min over suffixes of max(d + A, F): a
// non-decreasing function with slopes 0 and 1 whose breakpoints are the
// suffix frontier. The labels that survive at a boundary sit in a narrow
// band of D (1e-4..6e-4 wide), differ by 2e-7..1e-5 s in X and their
// lower bounds lie within 3e-6 s (3e-5 relative) of the optimum: telling
// them apart needs h_i to about 1e-7 s, while the bucket corners lose up to
// a bucket's width per group on a path. The frontier is large (thousands of
// points a boundary) and so are the candidates (269 M at 32768 buckets):
// 32768 / 262144 / 2097152 buckets leave 412 / 62 / 1.9 labels a boundary
// but take 1.9 / 5.4 / 17.5 s. A perfect upper bound (the optimum itself)
// prunes no more than the heuristics' one. Tried and measured, not kept:
// windows of A narrowed to the frontier's extent (more points, slower);
// pruning suffix points by a coarse prefix frontier, the mirror of the
// suffix bounds (16x fewer suffix points once both are fine, but computing
// the prefix frontier costs as much as it saves); buckets by the hinge
// F - A with half of them around the D of the heuristics' grouping (a
// corner is exact for every D outside its bucket's hinges: 0.3 instead of
// 11 labels a boundary on seed 1010 at the last level, but the coarse
// levels still overflow their budgets and the finest costs as before);
// other bucket schedules (first level 64..512, growth 2..8: no profile
// fewer over 50 ms); Pareto dominance with a 1e-14 relative tolerance (half
// of seed 1017's labels differ from another by rounding only, but the rest
// still need the 32768-bucket level).
//
// Why the bounds are loose there (seed 1017 again: P = 64, density 0.005).
// The optimum (93.19 ms) has 88 groups, 81 of them global top-k and 7
// all-reduces (two of them 13.8 and 31.7 ms of comm that save 0.7 and
// 1.8 ms of top-k); its comm stream is busy from the first group on (each
// collective but the last starts when the previous one ends) and the last
// one starts as the compute stream ends (1 us apart): the two streams are
// balanced. So along every good path Y >= B + X, the
// labels are plain sums (X, Y) = (sum s, sum c), and the cost is how well
// the two sums balance at the end: a subset-sum over which groups are
// merged (each merge saves an alpha on the comm stream and changes the
// top-k time) and which are all-reduced. Such sums have very many near-ties,
// and the bound of a label is only as good as h_i near its D: each
// bucketing step lowers a corner by up to a bucket's width, and the steps
// add up along the ~88 groups of a path (0.56% / 0.039% / 0.0058% of the
// optimum left at the root at 512 / 4096 / 32768 buckets: about 3 / buckets,
// i.e. a few buckets' widths per path). The loss is in the coarsening alone:
// the split max(Y + A, X + F) itself is exact, and no term of the model is
// relaxed. Coarsening that does not add up along a path (corners kept as
// real points) is no longer a lower bound, so the fix is not a cheap one.
//
// Tried later, measured, not kept (bench/results/planner-hard-profiles.txt
// has the figures; label counts are deterministic, times were taken under
// load):
//   - A convex-hull (Lagrangian) bound: cost >= max(Y + A, X + B(L) + T),
//     T = the suffix's top-k time plus its last collective, bounded through
//     the lower-left convex hull of the suffix points {(A, T)} (a backward
//     DP over hull vertices, no bucketing loss). On seed 1017 its root bound
//     (one group of lookahead) is 7.7e-4 below the optimum: better than 512
//     buckets, worse than 4096, because the all-reduce choices (13.8 and
//     31.7 ms of comm) make the convexification loose; ~100 ms to compute.
//     (The caps cannot be applied to hull vertices: a vertex past a cap
//     still spans points within it.)
//   - Hinge buckets spaced geometrically (8 per octave) around the D of the
//     heuristic's label at each boundary: the labels' D is not near one
//     target (on 1017 the surviving labels' D spreads over 1e-3 .. 3e-2 s at
//     a boundary: with and without an earlier all-reduce), so the first level's root bound got worse (2.3% below
//     the optimum instead of 0.45%) and the search larger (826 labels a
//     boundary at the last level instead of 366).
//   - A tighter least Y of a prefix (the scalar DP Y' = max(Y, B(e) + least
//     X + s) + c, exact for that relaxation): 1017 366 -> 191 labels a
//     boundary, 1028 21.6 -> 12.6, but 1027 4.3 -> 18.8; no profile needs
//     one level fewer.
//   - Recomputing the suffix bounds at the same level once the guided
//     heuristic has improved U (the first U is 4-75% above the optimum on
//     the slow profiles): the root bounds move by < 1e-5 relative, no level
//     saved. The bucket range's width comes from the weak box
//     [minComm[j], U - prefixMinY[j]], not from U.
//   - Label budgets of 64 and 256 a layer: none fewer over 50 ms (1028
//     takes 3.4 and 13.3 s).
//   - The windowed bounds (kept at the last level, see Prunings) at every
//     escalation level: the box is ~0.05 s wide at every boundary of 1017,
//     while the labels that survive need A within 3e-4 .. 3.3e-3 s. (The
//     prefix corners need a real Pareto filter: their X is not monotone
//     across Y buckets, and computePrefixBounds()'s "crossed" stop is unsound
//     without it: a first version returned a worse plan on 1017.) From the
//     4096 level on, 1017 keeps 28 labels a boundary at 32768
//     buckets instead of 366 (1.1 with four prefix + suffix passes a level),
//     1011, 1024 and 1027 are certified by the bounds at 4096, 1001 keeps 3
//     instead of 25. But the prefix frontier and the windowed envelopes cost
//     about what they save (inner-loop work over the 30 profiles 1084 M ->
//     830 M; 1001 and 1017 2x faster, 1018 1.6x slower, no profile newly
//     under 50 ms): inside the windows the envelopes still have thousands of
//     breakpoints a boundary, each shifted through every group that
//     overlaps, >= 1e7 operations at 4096 buckets even if only ten groups a
//     boundary overlapped. An exact method within 50 ms on these profiles
//     needs far fewer (boundary, group) pairs than the envelopes visit, not
//     finer envelopes; but even with the windowed bounds, the groups that
//     some prefix corner can use and still finish within U are 2.5% of all
//     on 1017 (32768 buckets) and 1.8% on 1001, yet 36% on 1018 and 45% on
//     1027 (optimum of 21 groups; the certified bound leaves them in).
namespace {

/// A label of the forward DP: a grouping of the first i positions.
struct Label {
  double x, y;
  int32_t from;    ///< boundary j of the previous label
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
  OptimalPlanner(const Profile &p, CollectiveSet allowed, const OptimalTuning &tuning)
      : view(p), tuning(tuning), collectives(allowed.members()) {
    assert(!collectives.empty());
    int64_t L = view.L;
    size_t K = collectives.size();
    // Groups [j, i), j < i, row by row: row j starts at rowStart[j].
    rowStart.assign(L + 1, 0);
    for (int64_t j = 0; j < L; ++j)
      rowStart[j + 1] = rowStart[j] + static_cast<size_t>(L - j);
    size_t groups = rowStart[L];
    // Each group's non-dominated choices, one after another (usually 2 of 4,
    // sharing a cache line); firstChoice[g]..firstChoice[g + 1] are group g's.
    firstChoice.assign(groups + 1, 0);
    costs.reserve(2 * groups);
    kinds.reserve(2 * groups);
    CollectiveConstants constants(p);
    for (int64_t j = 0; j < L; ++j) {
      // The group [j, i) grows with i, and so do n, k and 2k: walk the top-k
      // curve instead of searching it, once per group for all collectives.
      TopKWalk topkOfN(p), topkOf2K(p);
      for (int64_t i = j + 1; i <= L; ++i) {
        int64_t n = view.numel(j, i), k = p.topkK(n);
        GroupSize size{n, k, topkOfN(n), topkOf2K(2 * k)};
        GroupCost cost[4];
        for (size_t c = 0; c < K; ++c)
          cost[c] = groupCost(constants, size, collectives[c], view.backwardAfter(i));
        // A collective at least as costly as another in both streams is never
        // needed for this group (the step is monotone): drop it (of equal
        // ones, keep the first).
        for (size_t c = 0; c < K; ++c) {
          bool dominated = false;
          for (size_t d = 0; d < K && !dominated; ++d) {
            const GroupCost &a = cost[d], &b = cost[c];
            bool atMost = a.topk <= b.topk && a.comm <= b.comm;
            bool equal = a.topk == b.topk && a.comm == b.comm;
            dominated = d != c && atMost && (!equal || d < c);
          }
          if (!dominated) {
            costs.push_back(cost[c]);
            kinds.push_back(static_cast<uint8_t>(c));
          }
        }
        firstChoice[rowStart[j] + static_cast<size_t>(i - j)] = static_cast<uint32_t>(costs.size());
      }
    }
  }

  std::vector<Group> run() {
    computeSimpleBounds();
    // A cheap feasible grouping bounds the search: one label per boundary,
    // the least Y.
    std::vector<std::vector<Label>> best =
        solve(Mode::KeepLeastY, std::nullopt, std::nullopt).value();
    double upper = bestY(best[view.L]);
    // Finer suffix bounds cost more but prune more: escalate while the exact
    // search outgrows its label budget; the last level has no budget.
    size_t budget = tuning.labelBudgetPerLayer * static_cast<size_t>(view.L);
    size_t growth = std::max<size_t>(tuning.bucketGrowth, 2);
    // With a gap, once `exactAttempts` levels have outgrown their budgets the
    // search keeps only what beats the known grouping by more than the gap.
    const bool gapAllowed = tuning.relativeGap > 0.0 && tuning.relativeGap < 1.0;
    bool withGap = gapAllowed && tuning.exactAttempts == 0;
    attempts = 0;
    for (size_t buckets = std::max<size_t>(tuning.firstBuckets, 1);;
         buckets *= growth, budget *= growth) {
      bool last = buckets >= tuning.lastBuckets;
      usedBuckets = buckets;
      for (;;) {
        ++attempts;
        // Keep what can finish within `limit`: the known grouping plus a
        // rounding margin, or the gap below it.
        auto limitOf = [&](double known) {
          return withGap ? known * (1.0 - tuning.relativeGap) : known + kMargin * std::abs(known);
        };
        double limit = limitOf(upper);
        // The last level windows its buckets by a prefix frontier pruned with
        // the frontier of the level before (see computeWindows()).
        if (last && tuning.windowedLastLevel && suffixComputed) {
          computePrefixBounds(limit, buckets);
          computeWindows(limit);
          computeSuffixBounds(limit, buckets, /*windowed=*/true);
          windowed = true;
        } else {
          computeSuffixBounds(limit, buckets);
        }
        // The suffix bounds guide a second heuristic grouping.
        std::vector<std::vector<Label>> guided =
            solve(Mode::KeepLeastBound, std::nullopt, std::nullopt).value();
        if (bestY(guided[view.L]) < upper) {
          upper = bestY(guided[view.L]);
          best = std::move(guided);
          limit = limitOf(upper);
        }
        // The suffix bounds of boundary 0 bound every grouping within the
        // limit: when they show none can beat the known grouping (exact: by
        // more than rounding; with the gap: by more than the gap), it is the
        // result without a search.
        double certainLimit = withGap ? limit : upper;
        if (tuning.certifyByBounds &&
            rootBound() >= certainLimit - kBoundRounding * std::abs(upper)) {
          gap = withGap ? tuning.relativeGap : 0.0;
          certifiedByBounds = true;
          return reconstruct(best);
        }
        std::optional<std::vector<std::vector<Label>>> front =
            solve(Mode::Exact, limit, last ? std::nullopt : std::optional<size_t>(budget));
        if (front) {
          bool none = (*front)[view.L].empty() || bestY((*front)[view.L]) > upper;
          if (!none)
            return reconstruct(*front); // the optimum
          // Exact: only rounding beyond the margin loses the known grouping,
          // which is then as good. With the gap: nothing beats the known
          // grouping by more than the gap, so it is within it.
          returnedHeuristic = !withGap;
          gap = withGap ? tuning.relativeGap : 0.0;
          return reconstruct(best);
        }
        // Over budget: the gap at this level (once the exact levels are
        // spent), else finer bounds.
        if (withGap || !gapAllowed || attempts < tuning.exactAttempts)
          break;
        withGap = true;
      }
    }
  }

  /// Statistics of the exact run (for the benchmark).
  size_t maxFront = 0, totalLabels = 0, usedBuckets = 0, attempts = 0, windowDrops = 0;
  bool returnedHeuristic = false, certifiedByBounds = false, windowed = false;
  double gap = 0.0;

private:
  enum class Mode { Exact, KeepLeastY, KeepLeastBound };
  /// Relative slack for rounding wherever a bound is compared with a cost.
  static constexpr double kMargin = 1e-9;
  /// Relative rounding allowed when a lower bound certifies a grouping (a
  /// bound is a sum over at most L groups: ~L * 1.1e-16 relative).
  static constexpr double kBoundRounding = 1e-13;

  BackpropView view;
  OptimalTuning tuning;
  SmallVector<Collective, 4> collectives;
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
  ArrayRef<GroupCost> choicesAt(int64_t j, int64_t i) const {
    size_t at = rowStart[j] + static_cast<size_t>(i - j - 1);
    return {&costs[firstChoice[at]], firstChoice[at + 1] - firstChoice[at]};
  }
  /// The collective of choicesAt(j, i)[m].
  Collective collectiveAt(int64_t j, int64_t i, size_t m) const {
    return collectives[kinds[firstChoice[rowStart[j] + static_cast<size_t>(i - j - 1)] + m]];
  }

  void computeSimpleBounds() {
    int64_t L = view.L;
    const double inf = std::numeric_limits<double>::infinity();
    minComm.assign(L + 1, 0.0);
    minRest.assign(L + 1, -inf);
    minSlack.assign(L + 1, -inf);
    maxSlack.assign(L + 1, -inf);
    minCommF.assign(L + 1, -inf);
    for (int64_t j = L - 1; j >= 0; --j) {
      double comm = inf, rest = inf, lowSlack = inf, slack = -inf, commF = inf;
      for (int64_t e = j + 1; e <= L; ++e)
        for (const GroupCost &gc : choicesAt(j, e)) {
          double viaE = gc.comm + minComm[e];
          double fViaE = std::max(view.prefixBackward[e] + gc.topk + viaE, gc.topk + minCommF[e]);
          if (viaE < comm || (viaE == comm && fViaE < commF)) {
            comm = viaE;
            commF = fViaE;
          }
          // F of [j, L) >= the first group's term B(e) + s + c + A(rest);
          // the later groups' terms only grow by this group's top-k.
          rest = std::min(
              rest, std::max(view.prefixBackward[e] + gc.topk + gc.comm + minComm[e], minRest[e]));
          // F - A = max(B(e) + s, s - c + (F - A of the rest)).
          // Non-decreasing in the rest's F - A: its least and largest give
          // the least and largest.
          slack = std::max(
              slack, std::max(view.prefixBackward[e] + gc.topk, gc.topk - gc.comm + maxSlack[e]));
          lowSlack = std::min(lowSlack, std::max(view.prefixBackward[e] + gc.topk,
                                                 gc.topk - gc.comm + minSlack[e]));
        }
      minComm[j] = comm;
      minRest[j] = rest;
      minSlack[j] = lowSlack;
      // Every Pareto-optimal grouping of [j, L) has A >= minComm and so
      // F <= commF (the F of a least-A grouping), so F - A <= commF - minComm.
      maxSlack[j] = std::min(slack, commF - comm);
      minCommF[j] = commF;
    }
    // Every grouping of [0, i) has X >= prefixMinX[i] (the least total top-k
    // time) and Y >= prefixMinY[i] (its collectives all end by Y, and its
    // last one starts after B(i)).
    std::vector<double> commBefore(L + 1, 0.0);
    prefixMinX.assign(L + 1, 0.0);
    prefixMinY.assign(L + 1, 0.0);
    for (int64_t i = 1; i <= L; ++i) {
      double x = inf, comm = inf, last = inf;
      for (int64_t j = 0; j < i; ++j)
        for (const GroupCost &gc : choicesAt(j, i)) {
          x = std::min(x, prefixMinX[j] + gc.topk);
          comm = std::min(comm, commBefore[j] + gc.comm);
          last = std::min(last, gc.comm);
        }
      prefixMinX[i] = x;
      commBefore[i] = comm;
      prefixMinY[i] = std::max(comm, view.prefixBackward[i] + last);
    }
    suffix.assign(L + 1, {});
    suffixComputed = false;
  }

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
  /// dropped (see computeWindows() for why that is valid).
  void computeSuffixBounds(double upper, size_t buckets, bool windowed = false) {
    int64_t L = view.L;
    const double inf = std::numeric_limits<double>::infinity();
    double slack = kMargin * std::abs(upper);
    suffix.assign(L + 1, {});
    suffixComputed = true;
    suffix[L].push_back({0.0, -inf});
    std::vector<double> bucketA(buckets), bucketF(buckets);
    for (int64_t j = L - 1; j >= 0; --j) {
      double lo = minComm[j], hi = upper - prefixMinY[j] + slack;
      double fCap = upper - prefixMinX[j] + slack;
      // Windowed: the least prefix corner, for the groups no prefix can use.
      PrefixPoint least{0.0, 0.0};
      if (windowed) {
        if (prefix[j].empty() || windowLo[j] > windowHi[j])
          continue; // nothing through j finishes within upper
        lo = std::max(lo, windowLo[j]);
        hi = std::min(hi, windowHi[j]);
        least = {prefix[j].front().x, prefix[j].back().y};
        fCap = std::min(fCap, upper - least.x + slack);
      }
      double scale = hi > lo ? static_cast<double>(buckets) / (hi - lo) : 0.0;
      std::fill(bucketA.begin(), bucketA.end(), inf);
      std::fill(bucketF.begin(), bucketF.end(), inf);
      for (int64_t e = j + 1; e <= L; ++e) {
        double be = view.prefixBackward[e];
        const std::vector<SuffixPoint> &pts = suffix[e];
        for (const GroupCost &gc : choicesAt(j, e)) {
          const double s = gc.topk, c = gc.comm, base = be + s + c;
          if (windowed) {
            // Every prefix corner is at least `least`: when even that cannot
            // take this group and finish within upper, no prefix can.
            double x = least.x, y = least.y;
            step(x, y, be, gc);
            if (!finishes(pts, x, y, upper))
              continue;
          }
          // Point (a, f) gives (c + a, max(base + a, s + f)). The points are
          // a ascending, f descending: skip those whose F already exceeds
          // fCap through the later groups; stop past A's cap; and once the
          // first group's term reaches the later ones' (`cross`), every later
          // point gives a point that one dominates.
          auto beforeCross = [&](const SuffixPoint &pt) { return base + pt.a < s + pt.f; };
          size_t k = std::partition_point(pts.begin(), pts.end(),
                                          [&](const SuffixPoint &pt) { return s + pt.f > fCap; }) -
                     pts.begin();
          if (k > 0 && !beforeCross(pts[k - 1]))
            continue; // dominated by a point already past fCap
          auto from = pts.begin() + static_cast<std::ptrdiff_t>(k);
          size_t cross = std::partition_point(from, pts.end(), beforeCross) - pts.begin();
          size_t stop = std::partition_point(from, pts.end(), [&](const SuffixPoint &pt) {
                          return c + pt.a <= hi;
                        }) -
                        pts.begin();
          auto add = [&](double a, double f) {
            size_t m =
                a > lo ? std::min<size_t>(buckets - 1, static_cast<size_t>((a - lo) * scale)) : 0;
            bucketA[m] = std::min(bucketA[m], a);
            bucketF[m] = std::min(bucketF[m], f);
          };
          // Before the crossing F' = s + f (within fCap by the choice of k):
          // the points shifted by (c, s).
          size_t end = std::min(cross, stop);
          if (windowed && k < end && c + pts[k].a < lo) {
            // Below the window A is raised to lo (what such a point bounds
            // that can finish has A >= lo), so of these points only the last
            // (least f) counts.
            size_t below = std::partition_point(pts.begin() + static_cast<std::ptrdiff_t>(k),
                                                pts.begin() + static_cast<std::ptrdiff_t>(end),
                                                [&](const SuffixPoint &pt) { return c + pt.a < lo; }) -
                           pts.begin();
            add(lo, s + pts[below - 1].f);
            k = below;
          }
          for (; k < end; ++k)
            add(c + pts[k].a, s + pts[k].f);
          if (cross < stop && base + pts[cross].a <= fCap)
            add(std::max(c + pts[cross].a, windowed ? lo : -inf), base + pts[cross].a);
        }
      }
      double lastF = inf;
      for (size_t m = 0; m < buckets; ++m)
        if (bucketA[m] < inf && bucketF[m] < lastF) {
          lastF = bucketF[m];
          if (windowed && !finishesWithPrefix(j, bucketA[m], bucketF[m], upper)) {
            ++windowDrops;
            continue;
          }
          suffix[j].push_back({bucketA[m], bucketF[m]});
        }
    }
  }

  /// Whether some point of the suffix frontier `pts` can follow a prefix at
  /// least (x, y) within upper: a <= upper - y and f <= upper - x.
  static bool finishes(const std::vector<SuffixPoint> &pts, double x, double y, double upper) {
    double slack = kMargin * std::abs(upper);
    size_t k = std::upper_bound(pts.begin(), pts.end(), upper - y + slack,
                                [](double v, const SuffixPoint &p) { return v < p.a; }) -
               pts.begin();
    return k > 0 && pts[k - 1].f <= upper - x + slack;
  }

  /// Whether some prefix corner of boundary j can be followed by the suffix
  /// point (a, f) within upper: y <= upper - a and x <= upper - f.
  bool finishesWithPrefix(int64_t j, double a, double f, double upper) const {
    double slack = kMargin * std::abs(upper);
    const std::vector<PrefixPoint> &q = prefix[j];
    // Corners y descending: the first with y <= upper - a has the least x.
    size_t k = std::partition_point(q.begin(), q.end(), [&](const PrefixPoint &c) {
                 return c.y > upper - a + slack;
               }) -
               q.begin();
    return k < q.size() && q[k].x <= upper - f + slack;
  }

  /// The coarse prefix frontiers, the mirror of the suffix ones, forward from
  /// {(0, 0)}: a grouping of [0, i) is a grouping of [0, j) with (X, Y) and a
  /// last group [j, i), giving step(X, Y) (non-decreasing in both). The
  /// points of i are bucketed by Y and each bucket kept as its corner (least
  /// X, least Y); the corners' X is not monotone across buckets, so they are
  /// filtered to a Pareto frontier (X ascending, Y descending), which the
  /// early stops below need. A corner whose lowerBound() through the current
  /// suffix frontier exceeds `upper` is dropped: every grouping it stands for
  /// can only finish later. So every grouping of [0, i) that can finish
  /// within `upper` is at least some corner of i.
  void computePrefixBounds(double upper, size_t buckets) {
    int64_t L = view.L;
    const double inf = std::numeric_limits<double>::infinity();
    double slack = kMargin * std::abs(upper);
    prefix.assign(L + 1, {});
    prefix[0].push_back({0.0, 0.0});
    std::vector<double> bucketX(buckets), bucketY(buckets);
    for (int64_t i = 1; i < L; ++i) {
      double b = view.prefixBackward[i];
      double lo = prefixMinY[i], hi = upper - minComm[i] + slack;
      double xCap = upper - minRest[i] + slack;
      double scale = hi > lo ? static_cast<double>(buckets) / (hi - lo) : 0.0;
      std::fill(bucketX.begin(), bucketX.end(), inf);
      std::fill(bucketY.begin(), bucketY.end(), inf);
      for (int64_t j = 0; j < i; ++j) {
        const std::vector<PrefixPoint> &pts = prefix[j];
        for (const GroupCost &gc : choicesAt(j, i)) {
          // Corners y descending: skip those whose y + c already exceeds hi;
          // stop past X's cap (x ascending) or after the first crossing
          // (every later corner then gives a corner this one dominates, as in
          // solve()).
          auto first = std::partition_point(pts.begin(), pts.end(), [&](const PrefixPoint &p) {
            return p.y + gc.comm > hi;
          });
          for (auto it = first; it != pts.end(); ++it) {
            double x = it->x, y = it->y;
            bool crossed = b + (x + gc.topk) >= y;
            step(x, y, b, gc);
            if (x > xCap)
              break;
            if (y <= hi) {
              size_t m =
                  y > lo ? std::min<size_t>(buckets - 1, static_cast<size_t>((y - lo) * scale)) : 0;
              bucketX[m] = std::min(bucketX[m], x);
              bucketY[m] = std::min(bucketY[m], y);
            }
            if (crossed)
              break;
          }
        }
      }
      // Y ascending: keep the corners whose X is below every X of a lower Y.
      double lastX = inf;
      std::vector<PrefixPoint> &out = prefix[i];
      for (size_t m = 0; m < buckets; ++m)
        if (bucketX[m] < lastX) {
          lastX = bucketX[m];
          if (lowerBound(Label{bucketX[m], bucketY[m], -1, -1, Collective::AllGather}, i, upper) <=
              upper)
            out.push_back({bucketX[m], bucketY[m]});
        }
      std::reverse(out.begin(), out.end());
    }
  }

  /// Windows for the last level's suffix buckets. The bucket range of the
  /// plain frontiers, [minComm[j], upper - prefixMinY[j]], is far wider than
  /// the A of the suffixes that can finish within upper (~0.05 s against
  /// 3e-4 .. 3.3e-3 s on bench seed 1017), because the least Y and the least
  /// X of a prefix belong to different prefixes; the windows below are 13-350x
  /// narrower there past the first 100 boundaries. With the prefix corners
  /// (x_k, y_k) of j and the current suffix frontier of j: a grouping of
  /// [j, L) with (A, F) that finishes within upper after some grouping of
  /// [0, j) has that prefix at least some corner k, so F <= upper - x_k and
  /// A <= upper - y_k; and some point (a', f') of the current frontier is at
  /// most (A, F), so f' <= upper - x_k and A >= a' >= the first a of the
  /// frontier with f <= upper - x_k. Its A lies in the union over k of
  /// [that a, upper - y_k]: the window. What the new frontier's points bound
  /// outside it never finishes within upper, so a point below the window may
  /// be raised to its lower end and one above it, or one no corner can be
  /// followed by, dropped; and a group that not even the least corner
  /// (least x, least y) can take and still finish adds nothing.
  void computeWindows(double upper) {
    int64_t L = view.L;
    const double inf = std::numeric_limits<double>::infinity();
    double slack = kMargin * std::abs(upper);
    windowLo.assign(L + 1, inf);
    windowHi.assign(L + 1, -inf);
    for (int64_t j = 0; j < L; ++j) {
      const std::vector<SuffixPoint> &pts = suffix[j];
      for (const PrefixPoint &q : prefix[j]) {
        size_t k = std::partition_point(pts.begin(), pts.end(), [&](const SuffixPoint &p) {
                     return p.f > upper - q.x + slack;
                   }) -
                   pts.begin();
        if (k == pts.size() || pts[k].a > upper - q.y + slack)
          continue; // nothing finishes after this corner
        windowLo[j] = std::min(windowLo[j], pts[k].a);
        windowHi[j] = std::max(windowHi[j], upper - q.y + slack);
      }
    }
  }

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

  /// The (X, Y) of a label for dominance at boundary i < L: a label whose
  /// Y - X is below every suffix's F - A (e.g. its comm stream is idle by the
  /// end of the next layer's backward) behaves the same whatever its Y.
  std::pair<double, double> dominance(const Label &l, int64_t i) const {
    if (i == view.L)
      return {l.x, l.y};
    double d = l.y - l.x, margin = kMargin * (std::abs(l.y) + std::abs(l.x));
    if (d < minSlack[i] - margin)
      return {l.x, l.x + minSlack[i]};
    return {l.x, l.y};
  }

  /// Dominance within the groupings that can still finish within `limit`
  /// (the cost of a known grouping plus a margin). Label 1 dominates label 2
  /// when, for every grouping S of [i, L) with cost2(S) <= limit (so
  /// A <= limit - Y2 and F <= limit - X2), cost1(S) <= cost2(S):
  ///  - X1 <= X2 and Y1 + A <= X2 + F, i.e. Y1 - X2 <= F - A: true if
  ///    Y1 - X2 <= (least F with A <= limit - Y2) - (limit - Y2);
  ///  - Y1 <= Y2 and X1 + F <= Y2 + A, i.e. F - A <= Y2 - X1: true if
  ///    (limit - X2) - (least A with F <= limit - X2) <= Y2 - X1.
  /// The least F and least A come from the coarse suffix frontier (lower
  /// bounds). If the optimum runs through label 2 then it costs <= limit and
  /// label 1 does as well with the same suffix; the relation is transitive,
  /// so dropping label 2 keeps an optimal grouping. `labels` is the Pareto
  /// frontier (X ascending, Y descending); the survivors keep that order.
  void filterWithinLimit(std::vector<Label> &labels, int64_t i, double limit) const {
    const std::vector<SuffixPoint> &pts = suffix[i];
    if (i == view.L || pts.empty() || labels.size() < 2)
      return;
    const double inf = std::numeric_limits<double>::infinity();
    auto margin = [&](const Label &l) { return kMargin * (std::abs(l.x) + std::abs(l.y) + limit); };
    // Least F over suffixes with A <= cap: the last corner with a <= cap.
    auto leastF = [&](double cap) {
      size_t k = std::upper_bound(pts.begin(), pts.end(), cap,
                                  [](double v, const SuffixPoint &p) { return v < p.a; }) -
                 pts.begin();
      return k == 0 ? inf : pts[k - 1].f;
    };
    // Least A over suffixes with F <= cap: the first corner with f <= cap.
    auto leastA = [&](double cap) {
      size_t k = std::partition_point(pts.begin(), pts.end(),
                                      [&](const SuffixPoint &p) { return p.f > cap; }) -
                 pts.begin();
      return k == pts.size() ? inf : pts[k].a;
    };
    std::vector<char> drop(labels.size(), 0);
    // X ascending: label 1 = the least Y among the labels before.
    double runMinY = inf;
    for (size_t k = 0; k < labels.size(); ++k) {
      const Label &l = labels[k];
      double acap = limit - l.y;
      double bound = std::max(leastF(acap) - acap, minSlack[i]);
      if (runMinY - l.x <= bound - margin(l))
        drop[k] = 1;
      runMinY = std::min(runMinY, l.y);
    }
    // Y ascending (X descending): label 1 = the least X among those before.
    double runMinX = inf;
    for (size_t k = labels.size(); k-- > 0;) {
      const Label &l = labels[k];
      double fcap = limit - l.x;
      double bound = std::min(fcap - leastA(fcap), maxSlack[i]);
      if (bound + margin(l) <= l.y - runMinX)
        drop[k] = 1;
      runMinX = std::min(runMinX, l.x);
    }
    size_t kept = 0;
    for (size_t k = 0; k < labels.size(); ++k)
      if (!drop[k])
        labels[kept++] = labels[k];
    labels.resize(kept);
  }

  static double bestY(const std::vector<Label> &labels) {
    double best = std::numeric_limits<double>::infinity();
    for (const Label &l : labels)
      best = std::min(best, l.y);
    return best;
  }

  /// The forward DP. Mode::Exact keeps every non-dominated label whose lower
  /// bound is within `limit` (nullopt once more than `budget` labels are
  /// kept). The heuristics for an upper bound keep one label
  /// per boundary: the one of least Y, or of least lower bound.
  std::optional<std::vector<std::vector<Label>>> solve(Mode mode, std::optional<double> limit,
                                                       std::optional<size_t> budget) {
    int64_t L = view.L;
    std::vector<std::vector<Label>> front(L + 1);
    front[0].push_back({0.0, 0.0, -1, -1, Collective::AllGather});
    // Mode::Exact: the Pareto frontier of the candidates so far, by
    // dominance X strictly ascending with dominance Y strictly descending.
    struct Keyed {
      double x, y; // dominance keys
      Label label;
    };
    std::vector<Keyed> pareto;
    if (mode == Mode::Exact) {
      maxFront = 0;
      totalLabels = 0;
    }
    for (int64_t i = 1; i <= L; ++i) {
      pareto.clear();
      std::optional<std::pair<double, Label>> best; // the other modes' one label
      double prefixB = view.prefixBackward[i];
      for (int64_t j = 0; j < i; ++j) {
        const std::vector<Label> &from = front[j];
        ArrayRef<GroupCost> choices = choicesAt(j, i);
        for (size_t m = 0; m < choices.size(); ++m) {
          GroupCost gc = choices[m];
          Collective collective = collectiveAt(j, i, m);
          for (size_t k = 0; k < from.size(); ++k) {
            Label l{from[k].x, from[k].y, static_cast<int32_t>(j), static_cast<int32_t>(k),
                    collective};
            bool crossed = prefixB + (l.x + gc.topk) >= l.y;
            step(l.x, l.y, prefixB, gc);
            if (mode != Mode::Exact) {
              double key = mode == Mode::KeepLeastY ? l.y : lowerBound(l, i);
              if (!best || key < best->first || (key == best->first && l.y < best->second.y))
                best = {key, l};
            } else if (!limit || lowerBound(l, i, *limit) <= *limit) {
              auto [dx, dy] = dominance(l, i);
              insertPareto(pareto, {dx, dy, l});
            }
            if (crossed)
              break; // every later label of `from` (larger X) yields a dominated one
          }
        }
      }
      std::vector<Label> &out = front[i];
      if (mode != Mode::Exact) {
        if (best)
          out.push_back(best->second);
        continue;
      }
      for (const Keyed &k : pareto)
        out.push_back(k.label);
      if (limit)
        filterWithinLimit(out, i, *limit);
      maxFront = std::max(maxFront, out.size());
      totalLabels += out.size();
      if (budget && totalLabels > *budget)
        return std::nullopt;
    }
    return front;
  }

  /// Adds a candidate to a Pareto frontier (keys x strictly ascending, y
  /// strictly descending) unless a label there is at least as good; drops
  /// the labels it dominates. The frontier stays small, so a sorted vector
  /// is the fastest structure.
  template <typename Keyed> static void insertPareto(std::vector<Keyed> &pareto, const Keyed &c) {
    auto pos = std::lower_bound(pareto.begin(), pareto.end(), c.x,
                                [](const Keyed &k, double x) { return k.x < x; });
    if (pos != pareto.begin() && std::prev(pos)->y <= c.y)
      return; // a smaller X with no larger Y
    if (pos != pareto.end() && pos->x == c.x && pos->y <= c.y)
      return; // the same X with no larger Y
    auto last = pos;
    while (last != pareto.end() && last->y >= c.y)
      ++last; // X >= c.x, Y >= c.y: dominated
    if (last == pos) {
      pareto.insert(pos, c);
    } else {
      *pos = c;
      pareto.erase(std::next(pos), last);
    }
  }

  std::vector<Group> reconstruct(const std::vector<std::vector<Label>> &front) const {
    const std::vector<Label> &last = front[view.L];
    size_t idx = 0;
    for (size_t k = 1; k < last.size(); ++k)
      if (last[k].y < last[idx].y)
        idx = k;
    std::vector<Group> groups;
    int64_t i = view.L;
    while (i > 0) {
      const Label &l = front[i][idx];
      groups.push_back(view.group(l.from, i, l.collective));
      i = l.from;
      idx = l.fromIdx;
    }
    std::reverse(groups.begin(), groups.end()); // backprop order
    return groups;
  }
};

} // namespace

std::vector<Group> planOptimal(const Profile &profile, CollectiveSet allowed, OptimalStats *stats,
                               const OptimalTuning &tuning) {
  OptimalPlanner planner(profile, allowed, tuning);
  std::vector<Group> groups = planner.run();
  if (stats)
    *stats = {planner.maxFront,          planner.totalLabels, planner.usedBuckets,
              planner.attempts,          planner.returnedHeuristic, planner.gap,
              planner.certifiedByBounds, planner.windowed,    planner.windowDrops};
  return groups;
}

} // namespace mgs::planner
