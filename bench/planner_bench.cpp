//===- planner_bench.cpp - Exact planner speed and greedy gap -------------===//
//
//   planner_bench [--layers L] [--timed T] [--profiles N] [--reps R] [--cpu-per-byte C]
//                 [--workers P] [--cpu-time] [--first-buckets N] [--label-budget N]
//                 [--bucket-growth G] [--budget-growth G] [--last-buckets N] [--gap G]
//                 [--exact-attempts N] [--plain-last-level] [--exact-points N]
//                 [--first-seed S] [--per-profile] [PROFILE.json ...]
//
// 1. Planning time of omgs, auto (all four collectives) and auto2 (allgather
//    and allreduce only) for L = 500 (default) model-shaped
//    layers, the median of R runs on each of T (default 30) random profiles,
//    against the 50 ms goal: the median over profiles, how many
//    profiles meet it, and the slowest. --per-profile also prints each
//    profile's search figures and the plan's predicted time (with --gap, the
//    gap it was certified within when not the optimum).
// 2. predicted(greedy) / predicted(omgs) over N (default 100) random
//    model-shaped profiles with 20-300 tensors: max and mean (>= 1: omgs is
//    the optimum), and the same for the other strategies.
// 3. The same ratios for each PROFILE.json given, and the planning time and
//    search figures of omgs, auto and auto2 on it (with --workers, at that P).
// The exact searches stop past plan()'s label budget at the last level
// (--last-level-budget; 0: exact however long), as for mgs-plan and mgsc;
// "over the last level's budget" counts the profiles where that happened
// (their plan is then within the gap its bounds certify).
// Profiles come from mgs::planner::makeModelShapedProfile (seeded, the same
// on every machine); --cpu-per-byte C gives both collectives of each the
// compute time cpu_per_byte = C (calibration measured 1.7e-9..4.4e-9 on the
// 1 Gbit/s netcluster), and also times mgwfbp, whose exact search is then no
// longer the single-label DP.
//
//===----------------------------------------------------------------------===//

#include "SyntheticProfiles.h"
#include "mgs/Planner/ExactPlanner.h"
#include "mgs/Planner/Heuristics.h"
#include "mgs/Planner/Planner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>

using namespace llvm;
using namespace mgs::planner;

static cl::opt<int64_t> numLayers("layers", cl::desc("Layers of the timed profiles"),
                                  cl::init(500));
static cl::opt<int> numProfiles("profiles", cl::desc("Random profiles for the ratios"),
                                cl::init(100));
static cl::opt<unsigned> firstBuckets("first-buckets",
                                      cl::desc("OptimalTuning::firstBuckets"), cl::init(512));
static cl::opt<unsigned> labelBudget("label-budget",
                                     cl::desc("OptimalTuning::labelBudgetPerLayer"),
                                     cl::init(16));
static cl::opt<unsigned> lastLevelBudget(
    "last-level-budget",
    cl::desc("OptimalTuning::lastLevelLabelsPerLayer (default: plan()'s, 0: exact however long)"),
    cl::init(PlanSearch::kLabelsPerLayer));
static cl::opt<unsigned> bucketGrowth("bucket-growth",
                                      cl::desc("OptimalTuning::bucketGrowth"), cl::init(8));
static cl::opt<unsigned> budgetGrowth("budget-growth",
                                      cl::desc("OptimalTuning::budgetGrowth"), cl::init(2));
static cl::opt<unsigned> lastBuckets("last-buckets",
                                     cl::desc("OptimalTuning::lastBuckets"), cl::init(32768));
static cl::opt<double> relativeGap("gap", cl::desc("OptimalTuning::relativeGap"),
                                   cl::init(0.0));
static cl::opt<bool> plainLastLevel("plain-last-level",
                                    cl::desc("OptimalTuning::windowedLastLevel = false"));
static cl::opt<unsigned> exactAttempts("exact-attempts",
                                       cl::desc("OptimalTuning::exactAttempts"), cl::init(2));
static cl::opt<unsigned> exactPoints("exact-points",
                                     cl::desc("OptimalTuning::exactFrontierPoints"),
                                     cl::init(1024));
static cl::opt<uint64_t> firstSeed("first-seed",
                                   cl::desc("Seed of the first timed profile (then +1 each)"),
                                   cl::init(1000));
static cl::opt<int> reps("reps", cl::desc("Timed runs per profile"), cl::init(3));
static cl::opt<int> timedProfiles("timed", cl::desc("Random profiles timed at --layers"),
                                  cl::init(30));
static cl::opt<double> cpuPerByte("cpu-per-byte",
                                  cl::desc("cpu_per_byte of both collectives in the random "
                                           "profiles (seconds per byte)"),
                                  cl::init(0.0));
static cl::opt<int64_t> workers("workers",
                                 cl::desc("Workers P of the timed profiles (default: each "
                                          "profile's own, 2-64)"),
                                 cl::init(0));
static cl::opt<bool> printEachProfile("per-profile",
                                cl::desc("Also print each timed profile's time, labels and "
                                         "bucket level"));
static cl::list<std::string> files(cl::Positional, cl::desc("[profile.json...]"));

/// A random model-shaped profile, with --cpu-per-byte applied.
static Profile randomProfile(int64_t layers, uint64_t seed) {
  Profile p = makeModelShapedProfile(layers, seed);
  p.allgather.cpuPerByte = p.allreduce.cpuPerByte = cpuPerByte;
  if (workers > 0)
    p.workers = workers;
  return p;
}

static cl::opt<bool> cpuTime("cpu-time",
                            cl::desc("Time planning by the thread's CPU time instead of the "
                                     "wall clock (for a machine other jobs share)"));

static double threadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

static double millisecondsOf(const std::function<void()> &fn) {
  if (cpuTime) {
    double t0 = threadSeconds();
    fn();
    return 1e3 * (threadSeconds() - t0);
  }
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

namespace {
struct Ratio {
  double max = 0.0, sum = 0.0;
  int count = 0, strictlyWorse = 0;
  void add(double r) {
    max = std::max(max, r);
    sum += r;
    ++count;
    strictlyWorse += r > 1.0 + 1e-12;
  }
};
} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "mgs planner benchmark\n");
  constexpr double kGoalMs = 50.0;

  // 1. Planning time at L = 500.
  outs() << "1. exact planning time, " << numLayers << " model-shaped layers, " << timedProfiles
         << " random profiles, median of " << reps << " runs each (goal: < 50 ms)";
  if (cpuPerByte > 0)
    outs() << ", collectives' cpu_per_byte " << cpuPerByte;
  outs() << "\n";
  // omgs, auto (all four collectives), auto over allgather + allreduce only.
  std::vector<std::pair<const char *, CollectiveSet>> kinds = {
      {"omgs", {Collective::AllGather}},
      {"auto", CollectiveSet::all()},
      {"auto2", {Collective::AllGather, Collective::AllReduce}}};
  if (cpuPerByte > 0)
    kinds.push_back({"mgwfbp", {Collective::AllReduce}});
  OptimalTuning tuning;
  tuning.firstBuckets = firstBuckets;
  tuning.labelBudgetPerLayer = labelBudget;
  tuning.lastBuckets = lastBuckets;
  tuning.bucketGrowth = bucketGrowth;
  tuning.budgetGrowth = budgetGrowth;
  tuning.relativeGap = relativeGap;
  tuning.exactAttempts = exactAttempts;
  tuning.windowedLastLevel = !plainLastLevel;
  tuning.exactFrontierPoints = exactPoints;
  tuning.lastLevelLabelsPerLayer = lastLevelBudget;
  // One profile planned `reps` times: the median time, and (`print`) its search figures.
  auto timeOne = [&](const char *kindName, CollectiveSet allowed, const Profile &p,
                     StringRef label, OptimalStats &stats, bool print) {
    std::vector<double> times;
    std::vector<Group> groups;
    for (int r = 0; r < reps; ++r)
      times.push_back(millisecondsOf([&] { groups = planOptimal(p, allowed, &stats, tuning); }));
    double ms = median(times);
    if (print) {
      int64_t L = static_cast<int64_t>(p.layers.size());
      outs() << format("     %-6s %s: %.1f ms, labels per boundary %.1f (max %zu), "
                       "%zu buckets, %zu runs%s%s, predicted %.12f s",
                       kindName, label.str().c_str(), ms, double(stats.totalLabels) / double(L),
                       stats.maxFrontier, stats.buckets, stats.attempts,
                       stats.certifiedByBounds ? ", certified by bounds" : "",
                       stats.exactFrontier ? ", exact frontier" : "", predict(p, groups));
      if (stats.overBudget)
        outs() << ", over the last level's budget";
      if (stats.gap > 0)
        outs() << format(" (within gap %.2g)", stats.gap);
      outs() << "\n";
    }
    return ms;
  };
  for (auto [kindName, allowed] : kinds) {
    std::vector<double> perProfile;
    size_t maxFrontier = 0, escalated = 0, overBudget = 0;
    double labelsPerBoundary = 0;
    uint64_t slowestSeed = 0;
    for (int t = 0; t < timedProfiles; ++t) {
      uint64_t seed = firstSeed + t;
      Profile p = randomProfile(numLayers, seed);
      OptimalStats stats;
      perProfile.push_back(
          timeOne(kindName, allowed, p, formatv("seed {0}", seed).str(), stats, printEachProfile));
      if (perProfile.back() >= *std::max_element(perProfile.begin(), perProfile.end()))
        slowestSeed = seed;
      maxFrontier = std::max(maxFrontier, stats.maxFrontier);
      escalated += stats.attempts > 1;
      overBudget += stats.overBudget;
      labelsPerBoundary += double(stats.totalLabels) / double(numLayers) / timedProfiles;
    }
    if (perProfile.empty())
      continue;
    double worst = *std::max_element(perProfile.begin(), perProfile.end());
    size_t withinGoal = llvm::count_if(perProfile, [&](double ms) { return ms < kGoalMs; });
    outs() << format("   %-6s median %.2f ms = %.3f of the goal; %zu of %zu under it; slowest "
                     "%.1f ms (seed %llu)\n",
                     kindName, median(perProfile), median(perProfile) / kGoalMs,
                     withinGoal, perProfile.size(), worst, (unsigned long long)slowestSeed);
    outs() << format("         Pareto labels per boundary: mean %.1f, max %zu; finer bounds "
                     "needed on %zu profiles; over the last level's budget on %zu\n",
                     labelsPerBoundary, maxFrontier, escalated, overBudget);
  }

  // 2. Ratios to the optimum.
  auto report = [](StringRef what, const std::vector<std::pair<std::string, Ratio>> &ratios) {
    outs() << what;
    for (const auto &[name, r] : ratios)
      outs() << format("   %-20s / omgs: max %.4f, mean %.4f, worse on %d of %d\n", name.c_str(),
                       r.max, r.sum / r.count, r.strictlyWorse, r.count);
  };
  std::vector<Strategy> others;
  for (const Strategy &s : allStrategies())
    if (s.kind != StrategyKind::OMGS)
      others.push_back(s);
  // The optimum (no gap), with the timed runs' last-level budget.
  PlanSearch search{/*relativeGap=*/0.0, /*exact=*/lastLevelBudget == 0};
  auto ratiosOf = [&](const std::vector<Profile> &profiles) {
    std::vector<std::pair<std::string, Ratio>> ratios;
    for (const Strategy &s : others)
      ratios.push_back({s.name(), Ratio()});
    for (const Profile &p : profiles) {
      double opt =
          plan(p, Strategy{StrategyKind::OMGS, 0, CollectiveSet::all()}, search).predictedSeconds;
      for (auto [i, s] : enumerate(others))
        ratios[i].second.add(plan(p, s, search).predictedSeconds / opt);
    }
    return ratios;
  };
  std::vector<Profile> random;
  for (int i = 0; i < numProfiles; ++i) {
    uint64_t seed = 7000 + i;
    int64_t layers = 20 + static_cast<int64_t>((seed * 2654435761u) % 281);
    random.push_back(randomProfile(layers, seed));
  }
  report(formatv("2. predicted time / omgs's over {0} random model-shaped profiles "
                 "(20-300 tensors)\n",
                 numProfiles)
             .str(),
         ratiosOf(random));

  // 3. Given profiles.
  for (const std::string &file : files) {
    Expected<Profile> p = loadProfile(file);
    if (!p) {
      errs() << file << ": error: " << toString(p.takeError()) << "\n";
      return 1;
    }
    if (workers > 0)
      p->workers = workers;
    report(formatv("3. {0} ({1} layers)\n", file, p->layers.size()).str(), ratiosOf({*p}));
    for (auto [kindName, allowed] : kinds) {
      OptimalStats stats;
      timeOne(kindName, allowed, *p, file, stats, /*print=*/true);
    }
  }
  return 0;
}
