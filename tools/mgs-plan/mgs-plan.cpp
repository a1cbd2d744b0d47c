//===- mgs-plan.cpp - What-if gradient merge planner ----------------------===//
//
//   mgs-plan PROFILE.json [--strategy S[,S...]] [--workers P] [--density RHO]
//            [--allgather-alpha A] [--allgather-beta B]
//            [--allreduce-alpha A] [--allreduce-beta B]
//            [--allgather-cpu-per-byte C] [--allreduce-cpu-per-byte C] [--compare]
//            [--sweep | --sweep-workers P[,P...]]
//
// Prints each strategy's plan and predicted iteration time in docs/design.md's
// Plan JSON (one object for one strategy, an array for several; every
// strategy without --strategy), or with --compare a table of them, or with
// --sweep a table of their predicted times against P. The
// options replace the profile's values. Errors name the file and the field
// and exit 1.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/Planner.h"
#include "mgs/Support/CommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;
using namespace mgs::planner;

static cl::OptionCategory category("mgs-plan options");

/// "Strategies to plan with, comma-separated (default: all): dense, ...".
static StringRef strategyListHelp() {
  static const std::string help =
      "Strategies to plan with, comma-separated (default: all): " + strategyNames().str();
  return help;
}

static cl::opt<std::string> profileFile(cl::Positional, cl::desc("<profile.json>"),
                                        cl::cat(category));
static cl::list<std::string> strategies("strategy", cl::desc(strategyListHelp()),
                                        cl::value_desc("S"), cl::CommaSeparated, cl::cat(category));
static cl::opt<int64_t> workers("workers", cl::desc("Number of workers P"), cl::value_desc("P"),
                                cl::cat(category));
static cl::opt<double> density("density", cl::desc("Top-k density rho, in (0, 1]"),
                               cl::value_desc("rho"), cl::cat(category));
static cl::opt<double> allgatherAlpha("allgather-alpha",
                                      cl::desc("All-gather start-up time (seconds)"),
                                      cl::value_desc("A"), cl::cat(category));
static cl::opt<double> allgatherBeta("allgather-beta",
                                     cl::desc("All-gather time per byte (seconds)"),
                                     cl::value_desc("B"), cl::cat(category));
static cl::opt<double> allreduceAlpha("allreduce-alpha",
                                      cl::desc("All-reduce start-up time (seconds)"),
                                      cl::value_desc("A"), cl::cat(category));
static cl::opt<double> allreduceBeta("allreduce-beta",
                                     cl::desc("All-reduce time per byte (seconds)"),
                                     cl::value_desc("B"), cl::cat(category));
static cl::opt<double> allgatherCpu("allgather-cpu-per-byte",
                                    cl::desc("Compute time an all-gather takes from backprop, "
                                             "per byte (seconds)"),
                                    cl::value_desc("C"), cl::cat(category));
static cl::opt<double> allreduceCpu("allreduce-cpu-per-byte",
                                    cl::desc("Compute time an all-reduce takes from backprop, "
                                             "per byte (seconds)"),
                                    cl::value_desc("C"), cl::cat(category));
static cl::list<int64_t> sweepWorkers(
    "sweep-workers",
    cl::desc("Print a table of every listed strategy's predicted time for each of these P "
             "(comma-separated), and auto's collectives"),
    cl::value_desc("P[,P...]"), cl::CommaSeparated, cl::cat(category));
static cl::opt<bool> sweep("sweep", cl::desc("--sweep-workers 4,8,16,...,4096"),
                           cl::cat(category));
static cl::opt<double> gtopkAlpha("gtopk-alpha",
                                  cl::desc("Global top-k: start-up of one message (seconds)"),
                                  cl::value_desc("A"), cl::cat(category));
static cl::opt<double> gtopkBeta("gtopk-beta",
                                 cl::desc("Global top-k: time per byte of a message (seconds)"),
                                 cl::value_desc("B"), cl::cat(category));
static cl::opt<double> sparseAlpha(
    "sparse-allreduce-alpha",
    cl::desc("Balanced sparse all-reduce: start-up of one message (seconds)"),
    cl::value_desc("A"), cl::cat(category));
static cl::opt<double> sparseBeta(
    "sparse-allreduce-beta",
    cl::desc("Balanced sparse all-reduce: time per byte of a message (seconds)"),
    cl::value_desc("B"), cl::cat(category));
static cl::list<std::string>
    autoCollectives("auto-collectives",
                    cl::desc("The collectives auto chooses from, comma-separated (default: all): "
                             "allgather, allreduce, gtopk, sparse-allreduce"),
                    cl::value_desc("C[,C...]"), cl::CommaSeparated, cl::cat(category));
static cl::opt<double> relativeGap(
    "gap",
    cl::desc("Let the exact strategies stop at a plan certified within this relative gap of "
             "the optimum (e.g. 0.001) where the exact search is long; the plan then "
             "carries \"gap\" (default 0: the optimum)"),
    cl::value_desc("G"), cl::init(0.0), cl::cat(category));
static cl::opt<bool> exactSearch(
    "exact",
    cl::desc("Search the exact optimum however long it takes, unless --gap says otherwise "
             "(default: the exact search stops "
             "once it outgrows its label budget, seconds where this takes minutes, and the plan "
             "then carries the \"gap\" its bounds certify)"),
    cl::cat(category));
static cl::opt<bool> compare("compare",
                             cl::desc("Print a table (groups, predicted time, ratio to the "
                                      "best) instead of JSON"),
                             cl::cat(category));

static constexpr const char *kUsage =
    "usage: mgs-plan PROFILE.json [--strategy S[,S...]] [--workers P] [--density RHO] "
    "[--allgather-alpha A] [--allgather-beta B] [--allreduce-alpha A] [--allreduce-beta B] "
    "[--allgather-cpu-per-byte C] [--allreduce-cpu-per-byte C] [--gtopk-alpha A] "
    "[--gtopk-beta B] [--sparse-allreduce-alpha A] [--sparse-allreduce-beta B] "
    "[--auto-collectives C[,C...]] [--gap G] [--exact] [--compare] "
    "[--sweep | --sweep-workers P[,P...]]";

static int usageError(const Twine &message) {
  errs() << "mgs-plan: error: " << message << "\n(mgs-plan --help lists the options)\n";
  return 1;
}

/// Applies one numeric override, checking it like the profile's own field.
static bool checkNonNegative(const cl::opt<double> &opt, const char *flag) {
  if (!opt.getNumOccurrences())
    return true;
  if (std::isfinite(opt) && opt >= 0.0)
    return true;
  usageError(Twine("--") + flag + " must be a non-negative number, got " + formatSeconds(opt));
  return false;
}

/// "3 gtopk, 1 allreduce": how many groups use each collective.
static std::string collectiveCounts(const Plan &p) {
  std::string out;
  for (Collective c : CollectiveSet::all().members()) {
    size_t n = llvm::count_if(p.groups, [&](const Group &g) { return g.collective == c; });
    if (n)
      out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + stringifyCollective(c).str();
  }
  return out;
}

static void printCompare(raw_ostream &os, const Profile &profile, ArrayRef<Plan> plans) {
  int64_t total = 0;
  for (const LayerProfile &l : profile.layers)
    total += l.numel;
  os << "profile: " << profile.layers.size() << " layers, " << total
     << " elements, P = " << profile.workers << ", rho = " << formatSeconds(profile.density)
     << "\n";
  double best = INFINITY;
  for (const Plan &p : plans)
    best = std::min(best, p.predictedSeconds);
  os << format("%-20s %7s %7s %7s %16s %9s", "strategy", "groups", "sparse", "dense",
               "predicted (s)", "vs best")
     << "  collectives\n";
  for (const Plan &p : plans) {
    int64_t sparse = 0, dense = 0;
    for (const Group &g : p.groups)
      (isSparse(g.collective) ? sparse : dense)++;
    // Nanoseconds in a fixed column; a time past a few months (an absurd
    // profile) in exponent form rather than hundreds of digits.
    os << format("%-20s %7lld %7lld %7lld ", p.strategy.c_str(),
                 static_cast<long long>(p.groups.size()), static_cast<long long>(sparse),
                 static_cast<long long>(dense))
       << format(p.predictedSeconds < 1e7 ? "%16.9f" : "%16.9g", p.predictedSeconds)
       << format(" %8.4fx  ", best > 0 ? p.predictedSeconds / best : 1.0)
       << collectiveCounts(p);
    if (p.gap > 0.0)
      os << " (within " << formatSeconds(p.gap) << " of its optimum)";
    os << "\n";
  }
}

/// One row per P: each plan's predicted seconds, then the last plan's
/// collectives (auto's, when it is listed last as by default).
static void printSweep(raw_ostream &os, Profile profile, ArrayRef<Strategy> selected,
                       ArrayRef<int64_t> ps) {
  os << "profile: " << profile.layers.size() << " layers, rho = "
     << formatSeconds(profile.density) << ", collectives measured on P = "
     << (profile.measuredWorkers ? profile.measuredWorkers : profile.workers)
     << "; predicted seconds\n";
  std::vector<int> widths;
  os << format("%-6s", "P");
  for (const Strategy &s : selected) {
    // A column's values are at most 11 characters ("%.6g": 0.000568768) and
    // always follow a space.
    widths.push_back(std::max<int>(11, static_cast<int>(s.name().size())));
    os << ' ' << format("%*s", widths.back(), s.name().c_str());
  }
  os << "  " << selected.back().name() << "'s groups\n";
  for (int64_t p : ps) {
    profile.workers = p;
    os << format("%-6lld", static_cast<long long>(p));
    Plan last;
    for (auto [i, s] : enumerate(selected)) {
      last = plan(profile, s, {relativeGap, exactSearch});
      os << ' ' << format("%*.6g", widths[i], last.predictedSeconds);
    }
    os << "  " << collectiveCounts(last) << "\n";
  }
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mgs::showOnlyInHelp(category);
  mgs::addVersionPrinter();
  if (std::string unknown = mgs::unknownOption(argc, argv, category); !unknown.empty())
    return usageError(unknown);
  cl::ParseCommandLineOptions(argc, argv,
                              "mgs what-if planner: each merge strategy's plan and predicted "
                              "iteration time for a calibration profile\n");

  if (std::string twice = mgs::optionGivenTwice(category); !twice.empty())
    return usageError(twice);
  if (profileFile.empty())
    return usageError(Twine("no profile given\n") + kUsage);

  // Options first: a bad flag is reported before the profile is read.
  std::vector<Strategy> selected;
  for (const std::string &name : strategies) {
    Expected<Strategy> s = Strategy::parse(name);
    if (!s)
      return usageError("--strategy: " + toString(s.takeError()));
    // A strategy named twice is planned and printed once.
    if (llvm::none_of(selected, [&](const Strategy &t) { return t.name() == s->name(); }))
      selected.push_back(*s);
  }
  if (selected.empty())
    selected = allStrategies();
  if (!(relativeGap >= 0.0 && relativeGap < 1.0)) // NaN too
    return usageError("--gap must be a number in [0, 1), got " + formatSeconds(relativeGap));
  if (!autoCollectives.empty()) {
    CollectiveSet allowed;
    for (const std::string &name : autoCollectives) {
      std::optional<Collective> c = parseCollective(name);
      if (!c)
        return usageError("--auto-collectives: unknown collective '" + name +
                          "'; expected allgather, allreduce, gtopk or sparse-allreduce");
      allowed.insert(*c);
    }
    for (Strategy &s : selected)
      s.autoCollectives = allowed;
  }
  if (workers.getNumOccurrences() && workers < 1)
    return usageError("--workers must be a positive integer, got " + Twine(workers));
  std::vector<int64_t> sweepPs(sweepWorkers.begin(), sweepWorkers.end());
  if (sweep && sweepPs.empty())
    for (int64_t p = 4; p <= 4096; p *= 2)
      sweepPs.push_back(p);
  for (int64_t p : sweepPs)
    if (p < 1)
      return usageError("--sweep-workers must list positive integers, got " + Twine(p));
  if (!sweepPs.empty() && (compare || workers.getNumOccurrences()))
    return usageError("--sweep and --sweep-workers print their own table: not with --compare "
                      "or --workers");
  if (density.getNumOccurrences() && !(density > 0.0 && density <= 1.0))
    return usageError("--density must be in (0, 1], got " + formatSeconds(density));
  // The collective-cost options and the profile fields they replace.
  struct CostOption {
    cl::opt<double> &option;
    const char *name;
    double AlphaBeta::*field;
    std::optional<AlphaBeta> Profile::*derived; ///< the new collectives' costs
    AlphaBeta Profile::*measured;               ///< allgather and allreduce
  };
  const CostOption costOptions[] = {
      {allgatherAlpha, "allgather-alpha", &AlphaBeta::alpha, nullptr, &Profile::allgather},
      {allgatherBeta, "allgather-beta", &AlphaBeta::beta, nullptr, &Profile::allgather},
      {allgatherCpu, "allgather-cpu-per-byte", &AlphaBeta::cpuPerByte, nullptr,
       &Profile::allgather},
      {allreduceAlpha, "allreduce-alpha", &AlphaBeta::alpha, nullptr, &Profile::allreduce},
      {allreduceBeta, "allreduce-beta", &AlphaBeta::beta, nullptr, &Profile::allreduce},
      {allreduceCpu, "allreduce-cpu-per-byte", &AlphaBeta::cpuPerByte, nullptr,
       &Profile::allreduce},
      // After the all-gather's: a cost not given is derived from the all-gather's.
      {gtopkAlpha, "gtopk-alpha", &AlphaBeta::alpha, &Profile::gtopk, nullptr},
      {gtopkBeta, "gtopk-beta", &AlphaBeta::beta, &Profile::gtopk, nullptr},
      {sparseAlpha, "sparse-allreduce-alpha", &AlphaBeta::alpha, &Profile::sparseAllreduce,
       nullptr},
      {sparseBeta, "sparse-allreduce-beta", &AlphaBeta::beta, &Profile::sparseAllreduce, nullptr},
  };
  for (const CostOption &o : costOptions)
    if (!checkNonNegative(o.option, o.name))
      return 1;

  Expected<Profile> loaded = loadProfile(profileFile);
  if (!loaded) {
    errs() << profileFile << ": error: " << toString(loaded.takeError()) << "\n";
    return 1;
  }
  Profile profile = std::move(*loaded);
  if (workers.getNumOccurrences())
    profile.workers = workers;
  if (density.getNumOccurrences())
    profile.density = density;
  for (const CostOption &o : costOptions)
    if (o.option.getNumOccurrences()) {
      if (o.derived) {
        std::optional<AlphaBeta> &costs = profile.*o.derived;
        costs = profile.pointToPoint(costs);
        (*costs).*o.field = o.option.getValue();
      } else {
        (profile.*o.measured).*o.field = o.option.getValue();
      }
    }
  if (Error e = profile.validate()) // e.g. --workers above the limit
    return usageError(toString(std::move(e)));

  if (!sweepPs.empty()) {
    for (int64_t p : sweepPs) { // each P must be a valid profile, e.g. not above the limit
      Profile atP = profile;
      atP.workers = p;
      if (Error e = atP.validate())
        return usageError(toString(std::move(e)));
    }
    printSweep(outs(), profile, selected, sweepPs);
    return 0;
  }
  std::vector<Plan> plans;
  for (const Strategy &s : selected)
    plans.push_back(plan(profile, s, {relativeGap, exactSearch}));

  if (compare) {
    printCompare(outs(), profile, plans);
    return 0;
  }
  if (plans.size() == 1) {
    printPlanJSON(outs(), profile, plans.front());
    outs() << "\n";
    return 0;
  }
  outs() << "[\n";
  for (auto [i, p] : enumerate(plans)) {
    printPlanJSON(outs(), profile, p, /*indent=*/2);
    outs() << (i + 1 < plans.size() ? ",\n" : "\n");
  }
  outs() << "]\n";
  return 0;
}
