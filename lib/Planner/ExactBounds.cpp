//===- ExactBounds.cpp - The exact planner's bounds ----------------------===//
//
// The lower bounds that prune planOptimal's label-setting DP: the scalar
// bounds, the coarse suffix and prefix frontiers and the windows of the last
// bucket level, with why they hold and what limits them on the hard profiles.
//
//===----------------------------------------------------------------------===//

#include "ExactPlannerImpl.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace mgs::planner::detail {

// The model, the DP and its proof of exactness are explained in
// ExactPlanner.cpp; what the bounds are and why they hold, at each function
// below. Here: why they stay loose on the hard profiles (ExactPlanner.cpp's
// "Worst case") and what was tried there.
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
//     a boundary: with and without an earlier all-reduce), so the first
//     level's root bound got worse (2.3% below the optimum instead of 0.45%)
//     and the search larger (826 labels a boundary at the last level instead
//     of 366).
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
//   - Where the time goes (session 18, phase timers, thread CPU time at
//     load 3.9-4.3, so ~1.5-2x the unloaded times): before any search the
//     group costs take 9-15 ms, the simple bounds 3-11 ms and the least-Y
//     heuristic 5-10 ms; each level then pays its suffix bounds (512: 16-108
//     ms, 4096: 88-337 ms), the guided heuristic (15-24 ms) and the exact
//     search. 1017: 512 level 68 ms, 4096 level 418 ms (its search stops
//     over budget at 65163 labels of 64000), 32768 level 332 ms (prefix
//     frontier 164, windowed suffix bounds 90, search 59). 1010 alike (prefix
//     160 ms); 1028 spends 227 ms in the 4096 search and 184 ms in the
//     windowed suffix bounds; 1011 and 1018 spend 317-337 ms in the 4096
//     suffix bounds and 8-86 ms searching. So the level-512 profiles near
//     50 ms are bound by the fixed ~25 ms plus the 512 suffix bounds and
//     one guided pass, and the slow ones by the 4096 suffix bounds.
//   - Cheap wins in computeSuffixBounds / computePrefixBounds, same results
//     bit for bit (all 90 --per-profile lines equal): one corner array of
//     (a, f) pairs reset only in the 256-bucket blocks touched (no fill and
//     scan of 32768 buckets a boundary), one bucket update per run of
//     points in the same bucket (the profile showed ~25% of the function on
//     the load of a bucket just stored), early exits before the crossing's
//     search, a signed float-to-index conversion. A traced run showed 1018's
//     suffix bounds at 52 / 203 ms (512 / 4096) against 75-82 / 247-275 ms, but
//     over the 30 profiles (two alternating rounds of --reps 3 at load 3)
//     the sums of per-seed minima were 4544 ms today against 4546 (without
//     the run merging) and 4674 ms (with it), 14 against 15 and 15 under
//     50 ms: within the noise, so not kept.
//     Binary searches made branch-free (conditional moves) were slower:
//     1018's suffix bounds 113 / 494 ms against 82 / 275; the frontiers (10
//     MB of points at 4096 buckets) are not in cache, and a branch-free
//     search waits for each load where a predicted branch runs ahead.
//   - Label budgets of 20, 24, 32 and 48 a layer: 1010 and 1017 still
//     overflow at 4096 (their searches need far more), 1024 finishes at 512
//     from 32 on (30.5 labels a boundary, 162-212 ms: no faster), and 1028
//     keeps 170-395 labels a boundary (0.6 -> 2.4 s at 48).
//   - (Session 20, bench/results/planner-hard-profiles.txt, 6.) A
//     Lagrangian certificate before any level: cost >= lambda T_1 +
//     (1 - lambda) T_G (the first and the last group's terms of the
//     unrolled max), additive per group, so each lambda is one O(L^2) DP;
//     maximised over lambda (3-11 DPs, 2-10 ms). It closes only where the
//     simple root bound max(minComm[0], minRest[0]) already does (7 of the
//     30); elsewhere it stays 7e-4 .. 5e-2 below the optimum (the slow
//     seeds' optima sit in a non-convex dent: the convex-hull bound above).
//     What it showed is kept: those 7 are certified by the simple bounds
//     before any level once the heuristic is guided by them (run()).
//   - The bucket schedules again with the windowed last level (512 ->
//     32768 directly, a 4096 last level, 64 or 4096 first): every one
//     slower on the slow seeds (1017 1.2-2.0 s, 1028 0.56-5.3 s).
//   - Skipping the (j, e, collective) batches of computeSuffixBounds()
//     whose least point is dominated by j's frontier (valid: what they
//     stand for is above a corner): they hold 1-5% of the point shifts
//     (1011 at 512 buckets: 0.99 M of 23.9 M), so it cannot pay.
//   - Windows for every level from Lagrangian prefix lines (Y + mu X of
//     every prefix of [0, j) bounded below by one O(L^2) DP per mu, ten
//     mu from 0 to 64) dropping the suffix corners no prefix can finish
//     with: they drop < 0.1% of the corners on the slow seeds (1017 at 512
//     buckets: none of 57553), and the kept corners already span 1/3 ..
//     1/10 of the box, against the 13-350x narrower windows a prefix
//     frontier gives.
//   - A 1-D view, for whoever tries next: with D = Y - X the cost through
//     a label is X + h_i(D), h_L(D) = D and h_j(D) = min over the first
//     group [j, e) and collective of s + h_e(max(D - s, B(e)) + c): each h
//     non-decreasing with slopes 0 and 1, its breakpoints the suffix
//     frontier. A grid of D loses up to a cell per group along a path just
//     as the buckets of A do, so it is no cheaper for the same precision.
//   - (Session 21, bench/results/planner-hard-profiles.txt, 8; the exact
//     windowed frontiers and the budget growth of 2 were kept from it.)
//     Where computeSuffixBounds() spends its time: ~90% in the loop that
//     shifts points into buckets (1011: 17 M shifts at 512 buckets, 60 M at
//     4096), and 98% of the shifted points are at least another shifted
//     point of the same boundary, so they add nothing. Skipping runs of 8
//     such points (the first's A and the last's F against the least F of the
//     blocks of buckets before) skips half of them at 4096 buckets, and
//     tightens the bounds (1011 certified at 4096, 1017 1.3 labels a
//     boundary instead of 17.6), but the time does not move (the runs must
//     still be loaded to be tested), and a prefix-minimum kept per bucket is
//     far slower (each new least F rewrites the tail). Boundaries in tiles
//     of 4 sharing each suffix[e] while it is in cache: no change either.
//     Exact frontiers after the first level (prefix frontier at 4096
//     buckets, windows, exact suffix points): 1024 (5 points a boundary) and
//     1011 (16) are certified, but the prefix frontier costs 17-216 ms and on
//     1001, 1018 and 1027 the exact frontiers hold 266-3585 points a
//     boundary: a net loss. Exact frontiers with no windows at all (only
//     the caps): 1011, 1017 and 1024 certified at the first level, in 5-78 s.
//     The windowed level (with its exact frontiers) at 4096 buckets as well:
//     1024 112 -> 68 ms and 1011 197 -> 156 ms (both certified), but 1001,
//     1010, 1017, 1018, 1027 and 1028 1.2-2.6x slower (their prefix
//     frontiers at 4096 buckets cost up to 216 ms).
//   - (Session 43, planner_bench --per-profile --reps 1, one run each on a
//     quiet AVX-512 EPYC; auto's slow seeds 1001, 1010, 1011, 1017, 1018,
//     1024, 1027, 1028 at 132, 233, 251, 359, 213, 91, 114, 246 ms as kept.)
//     Windowed levels from the second one on (prefix frontier at the
//     level's own buckets): 126, 560, 131, 470, 346, 62, 173, 332 ms.
//     The same plus a second windowed pass at the same bucket count before
//     escalating (its windows narrowed by the first pass's bounds): 1001
//     and 1024 finish at 512 buckets, but 182, 898, 314, 507, 259, 98, 227,
//     303 ms. That second pass alone, unwindowed: every seed slower. The
//     least-corner test of the windowed level (skip a group that not even
//     (prefixMinX, prefixMinY) can take and finish) at the plain levels:
//     1011 206 -> 186 ms, the others within the noise. Still 22 of 30.

namespace {
/// The Pareto frontier (a ascending, f strictly descending) of points added
/// in any order. Most points added are at least one of the frontier's, which
/// a binary search tells; the rest wait in a small buffer, merged in sorted.
class ParetoPoints {
public:
  void clear() {
    front.clear();
    pending.clear();
  }
  void add(double a, double f) {
    auto it = std::upper_bound(front.begin(), front.end(), a,
                               [](double v, const SuffixPoint &q) { return v < q.a; });
    if (it != front.begin() && std::prev(it)->f <= f)
      return; // a point of the frontier is at most (a, f)
    pending.push_back({a, f});
    if (pending.size() > std::max<size_t>(64, front.size()))
      merge();
  }
  /// The frontier's size before the points not yet merged.
  size_t size() const { return front.size(); }
  const std::vector<SuffixPoint> &points() {
    merge();
    return front;
  }

private:
  void merge() {
    if (pending.empty())
      return;
    auto byA = [](const SuffixPoint &p, const SuffixPoint &q) {
      return p.a < q.a || (p.a == q.a && p.f < q.f);
    };
    std::sort(pending.begin(), pending.end(), byA);
    merged.clear();
    std::merge(front.begin(), front.end(), pending.begin(), pending.end(),
               std::back_inserter(merged), byA);
    pending.clear();
    front.clear();
    for (const SuffixPoint &p : merged)
      if (front.empty() || p.f < front.back().f)
        front.push_back(p);
  }

  std::vector<SuffixPoint> front, pending, merged;
};
} // namespace

void OptimalPlanner::computeSimpleBounds() {
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
/// dropped (see computeWindows() for why that is valid); and the boundaries
/// from L down keep their points themselves instead of corners while they
/// are few (OptimalTuning::exactFrontierPoints; why below).
void OptimalPlanner::computeSuffixBounds(double upper, size_t buckets, bool windowed) {
  int64_t L = view.L;
  const double inf = std::numeric_limits<double>::infinity();
  suffix.assign(L + 1, {});
  suffixComputed = true;
  suffix[L].push_back({0.0, -inf});
  std::vector<double> bucketA(buckets), bucketF(buckets);
  // Windowed: the boundaries from L down keep their points themselves while
  // they are few (see below).
  size_t exactPoints = windowed ? tuning.exactFrontierPoints : 0;
  exactFrontier = exactPoints > 0;
  ParetoPoints exact;
  for (int64_t j = L - 1; j >= 0; --j) {
    SuffixCaps caps;
    if (!suffixCaps(j, upper, windowed, caps))
      continue; // nothing through j finishes within upper
    if (exactFrontier) {
      // The Pareto frontier of j's points instead of its buckets' corners:
      // each corner is at most the points of its bucket, so keeping the
      // points only raises the bounds, and each point is still at most
      // every grouping it stands for (the drops are those below, valid for
      // the same reasons). Where every boundary keeps its points no step of
      // a path loses anything: the bound of boundary 0 is the optimum over
      // the groupings that can finish within upper. Within narrow windows
      // this is also cheaper than the buckets (bench seed 1010: 5 points a
      // boundary against 32768 buckets to fill and scan); once a boundary
      // has more than `exactPoints`, or shifts more than kExactWork points
      // per point it may keep, it and the boundaries before it use buckets.
      size_t shifted = 0, work = kExactWork * exactPoints;
      exact.clear();
      bool few = shiftSuffixes(j, caps, upper, /*windowed=*/true, [&](double a, double f) {
        exact.add(a, f);
        return ++shifted <= work && exact.size() <= exactPoints;
      });
      if (few && exact.points().size() <= exactPoints) {
        for (const SuffixPoint &p : exact.points()) {
          if (!finishesWithPrefix(j, p.a, p.f, upper)) {
            ++windowDrops;
            continue;
          }
          suffix[j].push_back(p);
        }
        continue;
      }
      exactFrontier = false;
    }
    const double lo = caps.lo;
    double scale = caps.hi > lo ? static_cast<double>(buckets) / (caps.hi - lo) : 0.0;
    std::fill(bucketA.begin(), bucketA.end(), inf);
    std::fill(bucketF.begin(), bucketF.end(), inf);
    shiftSuffixes(j, caps, upper, windowed, [&](double a, double f) {
      size_t m = a > lo ? std::min<size_t>(buckets - 1, static_cast<size_t>((a - lo) * scale)) : 0;
      bucketA[m] = std::min(bucketA[m], a);
      bucketF[m] = std::min(bucketF[m], f);
      return true;
    });
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

/// The A range and F cap of boundary j's suffix points: A in [lo, hi]
/// (below lo a point bounds nothing that can finish within upper, above hi
/// nothing can), F <= fCap; windowed, also the least prefix corner. False
/// when nothing through j can finish within upper.
bool OptimalPlanner::suffixCaps(int64_t j, double upper, bool windowed, SuffixCaps &caps) const {
  double slack = kMargin * std::abs(upper);
  caps.lo = minComm[j];
  caps.hi = upper - prefixMinY[j] + slack;
  caps.fCap = upper - prefixMinX[j] + slack;
  caps.least = {0.0, 0.0};
  if (!windowed)
    return true;
  if (prefix[j].empty() || windowLo[j] > windowHi[j])
    return false;
  caps.lo = std::max(caps.lo, windowLo[j]);
  caps.hi = std::min(caps.hi, windowHi[j]);
  // Windowed: the least prefix corner, for the groups no prefix can use.
  caps.least = {prefix[j].front().x, prefix[j].back().y};
  caps.fCap = std::min(caps.fCap, upper - caps.least.x + slack);
  return true;
}

/// Calls emit(a, f) with lower-bound points of every grouping of [j, L)
/// within the caps: suffix[e]'s points through every first group [j, e).
/// Stops, returning false, as soon as emit returns false.
template <typename Emit>
bool OptimalPlanner::shiftSuffixes(int64_t j, const SuffixCaps &caps, double upper, bool windowed,
                                   Emit &&emit) const {
  const double inf = std::numeric_limits<double>::infinity();
  const double lo = caps.lo, hi = caps.hi, fCap = caps.fCap;
  for (int64_t e = j + 1; e <= view.L; ++e) {
    double be = view.prefixBackward[e];
    const std::vector<SuffixPoint> &pts = suffix[e];
    for (const GroupCost &gc : choicesAt(j, e)) {
      const double s = gc.topk, c = gc.comm, base = be + s + c;
      if (windowed) {
        // Every prefix corner is at least `least`: when even that cannot
        // take this group and finish within upper, no prefix can.
        double x = caps.least.x, y = caps.least.y;
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
        if (!emit(lo, s + pts[below - 1].f))
          return false;
        k = below;
      }
      for (; k < end; ++k)
        if (!emit(c + pts[k].a, s + pts[k].f))
          return false;
      if (cross < stop && base + pts[cross].a <= fCap &&
          !emit(std::max(c + pts[cross].a, windowed ? lo : -inf), base + pts[cross].a))
        return false;
    }
  }
  return true;
}

/// Whether some point of the suffix frontier `pts` can follow a prefix at
/// least (x, y) within upper: a <= upper - y and f <= upper - x.
bool OptimalPlanner::finishes(const std::vector<SuffixPoint> &pts, double x, double y,
                              double upper) {
  double slack = kMargin * std::abs(upper);
  size_t k = std::upper_bound(pts.begin(), pts.end(), upper - y + slack,
                              [](double v, const SuffixPoint &p) { return v < p.a; }) -
             pts.begin();
  return k > 0 && pts[k - 1].f <= upper - x + slack;
}

/// Whether some prefix corner of boundary j can be followed by the suffix
/// point (a, f) within upper: y <= upper - a and x <= upper - f.
bool OptimalPlanner::finishesWithPrefix(int64_t j, double a, double f, double upper) const {
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
void OptimalPlanner::computePrefixBounds(double upper, size_t buckets) {
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
void OptimalPlanner::computeWindows(double upper) {
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

} // namespace mgs::planner::detail
