//===- mgs-plan.cpp - What-if gradient merge planner ----------------------===//
//
//   mgs-plan PROFILE.json [--strategy S[,S...]] [--workers P] [--density RHO]
//            [--allgather-alpha A] [--allgather-beta B]
//            [--allreduce-alpha A] [--allreduce-beta B]
//            [--allgather-cpu-per-byte C] [--allreduce-cpu-per-byte C] [--compare]
//
// Prints each strategy's plan and predicted iteration time in docs/design.md's
// Plan JSON (one object for one strategy, an array for several; every
// strategy without --strategy), or with --compare a table of them. The
// options replace the profile's values. Errors name the file and the field
// and exit 1.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/Planner.h"
#include "mgs/Support/CommandLine.h"

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
static cl::opt<bool> compare("compare",
                             cl::desc("Print a table (groups, predicted time, ratio to the "
                                      "best) instead of JSON"),
                             cl::cat(category));

static constexpr const char *kUsage =
    "usage: mgs-plan PROFILE.json [--strategy S[,S...]] [--workers P] [--density RHO] "
    "[--allgather-alpha A] [--allgather-beta B] [--allreduce-alpha A] [--allreduce-beta B] "
    "[--allgather-cpu-per-byte C] [--allreduce-cpu-per-byte C] [--compare]; see --help";

static int usageError(const Twine &message) {
  errs() << "mgs-plan: " << message << "\n" << kUsage << "\n";
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
  os << format("%-20s %7s %7s %7s %16s %9s\n", "strategy", "groups", "sparse", "dense",
               "predicted (s)", "vs best");
  for (const Plan &p : plans) {
    int64_t sparse = 0, dense = 0;
    for (const Group &g : p.groups)
      (g.collective == Collective::AllGather ? sparse : dense)++;
    os << format("%-20s %7lld %7lld %7lld %16.9f %8.4fx\n", p.strategy.c_str(),
                 static_cast<long long>(p.groups.size()), static_cast<long long>(sparse),
                 static_cast<long long>(dense), p.predictedSeconds,
                 best > 0 ? p.predictedSeconds / best : 1.0);
  }
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mgs::showOnlyInHelp(category);
  mgs::addVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv,
                              "mgs what-if planner: each merge strategy's plan and predicted "
                              "iteration time for a calibration profile\n");

  if (profileFile.empty())
    return usageError("no profile given");

  // Options first: a bad flag is reported before the profile is read.
  std::vector<Strategy> selected;
  for (const std::string &name : strategies) {
    Expected<Strategy> s = Strategy::parse(name);
    if (!s)
      return usageError("--strategy: " + toString(s.takeError()));
    selected.push_back(*s);
  }
  if (selected.empty())
    selected = allStrategies();
  if (workers.getNumOccurrences() && workers < 1)
    return usageError("--workers must be a positive integer, got " + Twine(workers));
  if (density.getNumOccurrences() && !(density > 0.0 && density <= 1.0))
    return usageError("--density must be in (0, 1], got " + formatSeconds(density));
  // The collective-cost options and the profile fields they replace.
  struct CostOption {
    cl::opt<double> &option;
    const char *name;
    double AlphaBeta::*field;
    bool allgather;
  };
  const CostOption costOptions[] = {
      {allgatherAlpha, "allgather-alpha", &AlphaBeta::alpha, true},
      {allgatherBeta, "allgather-beta", &AlphaBeta::beta, true},
      {allgatherCpu, "allgather-cpu-per-byte", &AlphaBeta::cpuPerByte, true},
      {allreduceAlpha, "allreduce-alpha", &AlphaBeta::alpha, false},
      {allreduceBeta, "allreduce-beta", &AlphaBeta::beta, false},
      {allreduceCpu, "allreduce-cpu-per-byte", &AlphaBeta::cpuPerByte, false},
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
      AlphaBeta &ab = o.allgather ? profile.allgather : profile.allreduce;
      ab.*o.field = o.option.getValue();
    }
  if (Error e = profile.validate()) // e.g. --workers above the limit
    return usageError(toString(std::move(e)));

  std::vector<Plan> plans;
  for (const Strategy &s : selected)
    plans.push_back(plan(profile, s));

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
