//===- ExactPlanner.cpp - The exact optimum over contiguous groupings -----===//
//
// planOptimal: a label-setting DP over the Pareto frontier of (top-k time,
// end of the last collective), with suffix bounds and wider dominance rules
// as prunings. The algorithm, its proof and its running time are explained
// below.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/ExactPlanner.h"

#include "ExactPlannerImpl.h"

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
//   - Rounding variants. A candidate within kTie (1e-15) * (|X| + |Y|) of a
//     kept label in both keys is dropped as if dominated: on profiles of
//     repeated blocks (a transformer's layers) the same costs summed in
//     another order give labels that differ in the last bits only. The
//     step is monotone and moves both keys by at most what its inputs
//     differ by, so a kept label ends at most that much above the dropped
//     one's path: at most 2 L kTie relative over a path of L groups
//     (1e-12 at L = 500). On a GPT-2-large-shaped profile (436 tensors,
//     bench/model_profiles.py gpt2-large 1, P = 4) the labels a boundary fall
//     from 3487 to 2119 and planning takes half the time; on the bench's
//     random profiles omgs's seed 1004 keeps 10.5 labels a boundary instead
//     of 13.2 (bench/results/planner-hard-profiles.txt, 9).
//   - Within one (j, collective) batch, front[j] sorted by X ascending has
//     Y descending; once B(i) + X + s >= Y the new Y is B(i) + X + s + c, and
//     every later label (larger X) yields a label it dominates: stop there.
//   - Bounds. Split at boundary i, cost = max(Y + A, X + F). The backward
//     DPs of computeSimpleBounds() give the least A, a lower bound of F and
//     the least and largest F - A over the groupings of [i, L);
//     computeSuffixBounds() gives a coarse lower envelope of the suffix
//     frontier {(A, F)} (buckets of A, each kept as its corner). A label
//     whose lower bound exceeds the cost U of a known grouping (heuristic
//     runs of this DP keeping one label per boundary, the one of least lower
//     bound: first by the simple bounds alone, then by each level's suffix
//     bounds) is dropped: labels on an optimal path have LB <= OPT <= U.
//   - Wider dominance (dominance(), filterWithinLimit()): if Y - X is below
//     every suffix's F - A, only X matters; and within the groupings that
//     can still finish within U, a label with a larger X but a smaller Y
//     (or the reverse) dominates when the suffixes' F - A (bounded by the
//     coarse envelope) says the difference can never show.
//   - Certification. The suffix bounds of boundary 0 are a lower bound of
//     every grouping (lowerBound() of the empty prefix): when it reaches the
//     known grouping's cost (to 1e-13 relative rounding), that grouping is
//     optimal and no search runs. On the bench's 500-layer profiles this ends
//     most omgs runs at the first bucket level. It is tried first with the
//     simple bounds alone, max(minComm[0], minRest[0]), before any bucket
//     level: on comm-bound profiles that is the optimum, and the heuristic
//     guided by the simple bounds finds it (7 of the bench's 30 auto
//     profiles: 8-11 ms instead of 13-36 ms; that heuristic replaced one
//     keeping the least Y, whose U was up to 74% above the optimum where
//     this one's is up to 16%; bench/results/planner-hard-profiles.txt, 6).
//     At each level the certificate is tried again before the guided
//     heuristic, which runs only when it fails (6 more of the 30 then take
//     9-13 ms instead of 15-23 ms).
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
//   - Exact frontiers in the windows (OptimalTuning::exactFrontierPoints).
//     At that level the boundaries from L down keep the Pareto frontier of
//     their suffix points themselves instead of bucket corners while it has
//     at most 1024 points (computeSuffixBounds() proves it valid): a corner
//     is at most the points of its bucket, so the points only raise the
//     bounds. Where every boundary keeps its points, no step of a path
//     loses anything and the bound of boundary 0 is the optimum itself
//     among the groupings that finish within U: the guided heuristic then
//     finds it (each label it keeps has the least bound, the optimum) and
//     the bounds certify it. The windows make these frontiers
//     small (seed 1010: 5 points a boundary; certified with no search and
//     for less than the 32768 buckets cost); on 1017 the boundaries near L
//     stay exact, and its search keeps 2.7 labels a boundary instead of
//     17.6. With no windows the exact frontiers certify the slow seeds
//     too (1011, 1017, 1024 tried), but hold thousands of points a boundary
//     (5-78 s).
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
// 512 and grows 8x (to 32768) whenever the exact search keeps more than its
// label budget, 16 * L labels at the first level and twice as many at each
// next (OptimalTuning::budgetGrowth): the searches that outgrow 32 * L at
// 4096 buckets (seeds 1010, 1017, 1028: 65000 labels and 70-160 ms before
// they stopped at the former 128 * L) are settled for less by the windowed
// level, while those that finish at 4096 keep at most 28 a boundary (1001).
// The prefix frontiers of the windowed last level cost what the suffix ones
// do. F is small on most model-shaped profiles
// (bench/planner_bench prints it); with one collective and no compute-stream
// time (mgwfbp without cpu_per_byte), F = 1.
//
// Worst case. We know no exact algorithm polynomial on every profile (auto
// holds a per-layer two-way choice trading compute-stream time against comm
// time, much like PARTITION), and profiles whose top-k and collective costs
// trade almost exactly 1:1 have very many groupings within 1e-5 of the
// optimum: there F grows to thousands and planning takes seconds. Real
// transformers are such profiles: on GPT-2 large and XL shapes (36 and 48
// identical blocks) auto's optimum all-reduces some big tensors densely while
// the network would idle, a knapsack over which tensor of which block, and
// the exact search keeps thousands of labels a boundary (1.4-8 s at 1 Gbit/s,
// 179 s at 10 Gbit/s). So the last level's search may have a budget
// (OptimalTuning::lastLevelLabelsPerLayer, which plan() sets unless asked
// for the exact optimum): past it run() returns the best grouping known with
// the gap the bounds certify, min(rootBound(), limit) against its cost
// (every grouping that finishes within the limit is at least the root
// bound, the others cost more than the limit). auto there: 1.1-7 s, within
// 1.7e-6 .. 1e-4 (bench/results/planner-hard-profiles.txt, 9).
//
// The bounds, the windows of the last level, and what limits the search on
// the hard profiles (with what was tried there and not kept) are explained
// in ExactBounds.cpp.

OptimalPlanner::OptimalPlanner(const Profile &p, CollectiveSet allowed,
                               const OptimalTuning &tuning)
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

std::vector<Group> OptimalPlanner::run() {
  computeSimpleBounds();
  // A cheap feasible grouping bounds the search: one label per boundary, the
  // least lowerBound() by the simple bounds alone (no suffix frontier yet).
  std::vector<std::vector<Label>> best =
      solve(Mode::KeepLeastBound, std::nullopt, std::nullopt).value();
  double upper = bestY(best[view.L]);
  // Certification by the simple bounds: the empty prefix's lowerBound() is
  // then max(minComm[0], minRest[0]), a lower bound of every grouping. When
  // it reaches the known grouping's cost, no bucket level is needed.
  if (tuning.certifyByBounds &&
      lowerBound(Label{0.0, 0.0, -1, -1, Collective::AllGather}, 0) >=
          upper - kBoundRounding * std::abs(upper)) {
    certifiedByBounds = true;
    return reconstruct(best);
  }
  // Finer suffix bounds cost more but prune more: escalate while the exact
  // search outgrows its label budget; the last level's budget, if any
  // (OptimalTuning::lastLevelLabelsPerLayer), ends the search instead.
  size_t budget = tuning.labelBudgetPerLayer * static_cast<size_t>(view.L);
  size_t growth = std::max<size_t>(tuning.bucketGrowth, 2);
  size_t budgetGrowth = std::max<size_t>(tuning.budgetGrowth, 1);
  // With a gap, once `exactAttempts` levels have outgrown their budgets the
  // search keeps only what beats the known grouping by more than the gap.
  const bool gapAllowed = tuning.relativeGap > 0.0 && tuning.relativeGap < 1.0;
  bool withGap = gapAllowed && tuning.exactAttempts == 0;
  attempts = 0;
  for (size_t buckets = std::max<size_t>(tuning.firstBuckets, 1);;
       buckets *= growth, budget *= budgetGrowth) {
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
      // The suffix bounds of boundary 0 bound every grouping within the
      // limit: when they show none can beat the known grouping (exact: by
      // more than rounding; with the gap: by more than the gap), it is the
      // result without a search.
      auto certified = [&] {
        double certainLimit = withGap ? limit : upper;
        return tuning.certifyByBounds &&
               rootBound() >= certainLimit - kBoundRounding * std::abs(upper);
      };
      // Unless they already do, the suffix bounds guide a second heuristic
      // grouping.
      if (!certified()) {
        std::vector<std::vector<Label>> guided =
            solve(Mode::KeepLeastBound, std::nullopt, std::nullopt).value();
        if (bestY(guided[view.L]) < upper) {
          upper = bestY(guided[view.L]);
          best = std::move(guided);
          limit = limitOf(upper);
        }
      }
      if (certified()) {
        gap = withGap ? tuning.relativeGap : 0.0;
        certifiedByBounds = true;
        return reconstruct(best);
      }
      std::optional<size_t> levelBudget = budget;
      if (last)
        levelBudget = tuning.lastLevelLabelsPerLayer == 0
                          ? std::nullopt
                          : std::optional<size_t>(tuning.lastLevelLabelsPerLayer *
                                                  static_cast<size_t>(view.L));
      std::optional<std::vector<std::vector<Label>>> front =
          solve(Mode::Exact, limit, levelBudget);
      if (front) {
        double found = (*front)[view.L].empty() ? std::numeric_limits<double>::infinity()
                                                : bestY((*front)[view.L]);
        if (found <= upper)
          return reconstruct(*front); // the optimum
        // Rounding variants dropped along the way (kTie) cost at most
        // 2 L kTie of the optimum: the known grouping is then as good.
        if (found <= upper + 2.0 * kTie * static_cast<double>(view.L) * std::abs(upper))
          return reconstruct(best);
        // Exact: only rounding beyond the margin loses the known grouping,
        // which is then as good. With the gap: nothing beats the known
        // grouping by more than the gap, so it is within it.
        returnedHeuristic = !withGap;
        gap = withGap ? tuning.relativeGap : 0.0;
        return reconstruct(best);
      }
      if (last) {
        // Over the last level's budget: the gap, if allowed and not yet
        // tried; else the known grouping with the gap the bounds certify.
        // The suffix bounds hold for every grouping that finishes within
        // `limit`, and the others cost more than it.
        if (gapAllowed && !withGap) {
          withGap = true;
          continue;
        }
        double bound = std::min(rootBound(), limit);
        if (!(bound < upper)) { // the bounds show it optimal after all
          certifiedByBounds = true;
          return reconstruct(best);
        }
        gap = 1.0 - bound / upper;
        overBudget = true;
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

/// The (X, Y) of a label for dominance at boundary i < L: a label whose
/// Y - X is below every suffix's F - A (e.g. its comm stream is idle by the
/// end of the next layer's backward) behaves the same whatever its Y.
std::pair<double, double> OptimalPlanner::dominance(const Label &l, int64_t i) const {
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
void OptimalPlanner::filterWithinLimit(std::vector<Label> &labels, int64_t i,
                                       double limit) const {
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

double OptimalPlanner::bestY(const std::vector<Label> &labels) {
  double best = std::numeric_limits<double>::infinity();
  for (const Label &l : labels)
    best = std::min(best, l.y);
  return best;
}

/// The forward DP. Mode::Exact keeps every non-dominated label whose lower
/// bound is within `limit` (nullopt once more than `budget` labels are
/// kept). Mode::KeepLeastBound, the heuristic for an upper bound, keeps one
/// label per boundary: the one of least lower bound (by the simple bounds
/// before computeSuffixBounds(), by the suffix frontiers after).
std::optional<std::vector<std::vector<Label>>>
OptimalPlanner::solve(Mode mode, std::optional<double> limit, std::optional<size_t> budget) {
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
            double key = lowerBound(l, i);
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
template <typename Keyed>
void OptimalPlanner::insertPareto(std::vector<Keyed> &pareto, const Keyed &c) {
  // Of the labels with X <= c.x + tie, the last has the least Y: when that Y
  // is at most c.y + tie, c is dominated or a rounding variant (kTie).
  double tie = kTie * (std::abs(c.x) + std::abs(c.y));
  auto within = std::upper_bound(pareto.begin(), pareto.end(), c.x + tie,
                                 [](double x, const Keyed &k) { return x < k.x; });
  if (within != pareto.begin() && std::prev(within)->y <= c.y + tie)
    return;
  auto pos = std::lower_bound(pareto.begin(), pareto.end(), c.x,
                              [](const Keyed &k, double x) { return k.x < x; });
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

std::vector<Group>
OptimalPlanner::reconstruct(const std::vector<std::vector<Label>> &front) const {
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

std::vector<Group> planOptimal(const Profile &profile, CollectiveSet allowed, OptimalStats *stats,
                               const OptimalTuning &tuning) {
  OptimalPlanner planner(profile, allowed, tuning);
  std::vector<Group> groups = planner.run();
  if (stats)
    *stats = {planner.maxFront,          planner.totalLabels, planner.usedBuckets,
              planner.attempts,          planner.returnedHeuristic, planner.gap,
              planner.certifiedByBounds, planner.windowed,    planner.windowDrops,
              planner.exactFrontier,     planner.overBudget};
  return groups;
}

} // namespace mgs::planner
