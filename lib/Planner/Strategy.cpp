//===- Strategy.cpp - Merge strategies: names, parsing, planning ----------===//
//
// The strategies' names and parsing, plan() dispatching to the heuristic and
// exact planners, and the Plan JSON output.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/Planner.h"

#include "mgs/Planner/ExactPlanner.h"
#include "mgs/Planner/Heuristics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <string>

using namespace llvm;

namespace mgs::planner {

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

namespace {
/// One row of MGS_STRATEGIES.
struct StrategyInfo {
  StrategyKind kind;
  const char *name;
  bool merged, sparse, perGroup;
  const char *help;
};
constexpr StrategyInfo kStrategies[] = {
#define MGS_STRATEGY_INFO(Kind, Name, Merged, Sparse, PerGroup, Help)                              \
  {StrategyKind::Kind, Name, Merged, Sparse, PerGroup, Help},
    MGS_STRATEGIES(MGS_STRATEGY_INFO)
#undef MGS_STRATEGY_INFO
};

const StrategyInfo &info(StrategyKind kind) {
  for (const StrategyInfo &s : kStrategies)
    if (s.kind == kind)
      return s;
  llvm_unreachable("a strategy kind without a row in MGS_STRATEGIES");
}

/// "threshold:BYTES" for the strategy with a parameter, else its name.
std::string usageName(const StrategyInfo &s) {
  return s.kind == StrategyKind::Threshold ? std::string(s.name) + ":BYTES" : s.name;
}

Expected<Strategy> parseName(StringRef name, bool allowNone) {
  for (const StrategyInfo &s : kStrategies)
    if (s.kind != StrategyKind::Threshold && (allowNone || s.kind != StrategyKind::None) &&
        name == s.name)
      return Strategy{s.kind, 0, CollectiveSet::all()};
  if (name.consume_front("threshold:")) {
    int64_t bytes = 0;
    if (name.empty() || !llvm::all_of(name, isDigit) || name.getAsInteger(10, bytes) || bytes < 1)
      return createStringError(inconvertibleErrorCode(),
                               "strategy 'threshold:" + name +
                                   "': BYTES must be a positive integer (bytes of float32 "
                                   "gradients per bucket)");
    return Strategy{StrategyKind::Threshold, bytes, CollectiveSet::all()};
  }
  return createStringError(inconvertibleErrorCode(),
                           "unknown strategy '" + name + "'; expected one of " +
                               (allowNone ? "none, " : "") + strategyNames());
}
} // namespace

std::string Strategy::name() const {
  if (kind == StrategyKind::Threshold)
    return "threshold:" + std::to_string(thresholdBytes);
  return info(kind).name;
}

bool Strategy::isMerged() const { return info(kind).merged; }
bool Strategy::isSparse() const { return info(kind).sparse; }
bool Strategy::choosesPerGroup() const { return info(kind).perGroup; }

Expected<Strategy> Strategy::parse(StringRef name) { return parseName(name, false); }

Expected<Strategy> Strategy::parseWithNone(StringRef name) { return parseName(name, true); }

std::vector<Strategy> allStrategies() {
  std::vector<Strategy> all;
  for (const StrategyInfo &s : kStrategies)
    if (s.kind != StrategyKind::None)
      all.push_back(
          {s.kind, s.kind == StrategyKind::Threshold ? kDefaultThresholdBytes : int64_t(0),
           CollectiveSet::all()});
  return all;
}

StringRef strategyNames() {
  static const std::string names = [] {
    std::string list;
    for (const StrategyInfo &s : kStrategies)
      if (s.kind != StrategyKind::None)
        list += (list.empty() ? "" : ", ") + usageName(s);
    return list;
  }();
  return names;
}

StringRef strategyHelp() {
  static const std::string help = [] {
    std::string list = "Gradient communication between data-parallel workers: ";
    for (const StrategyInfo &s : kStrategies)
      list += (s.kind == StrategyKind::None ? "" : ", ") + usageName(s) + " (" + s.help + ")";
    return list;
  }();
  return help;
}

Plan plan(const Profile &profile, const Strategy &strategy, const PlanSearch &search) {
  Plan result;
  result.strategy = strategy.name();
  OptimalTuning tuning;
  tuning.relativeGap = search.relativeGap;
  tuning.lastLevelLabelsPerLayer = search.exact ? 0 : PlanSearch::kLabelsPerLayer;
  OptimalStats stats;
  auto optimal = [&](CollectiveSet allowed) {
    std::vector<Group> groups = planOptimal(profile, allowed, &stats, tuning);
    result.gap = stats.gap;
    return groups;
  };
  switch (strategy.kind) {
  case StrategyKind::None:
    llvm_unreachable("'none' has no plan: no gradient is exchanged");
  case StrategyKind::Dense:
    result.groups = planDense(profile);
    break;
  case StrategyKind::MGWFBP:
    result.groups = optimal({Collective::AllReduce});
    break;
  case StrategyKind::Single:
    result.groups = planSingle(profile);
    break;
  case StrategyKind::Layerwise:
    result.groups = planLayerwise(profile);
    break;
  case StrategyKind::Threshold:
    result.groups = planThreshold(profile, strategy.thresholdBytes);
    break;
  case StrategyKind::Greedy:
    result.groups = planGreedy(profile);
    break;
  case StrategyKind::OMGS:
    result.groups = optimal({Collective::AllGather});
    break;
  case StrategyKind::GTopK:
    result.groups = optimal({Collective::GTopK});
    break;
  case StrategyKind::SparseAllReduce:
    result.groups = optimal({Collective::SparseAllReduce});
    break;
  case StrategyKind::Auto:
    result.groups = optimal(strategy.autoCollectives);
    break;
  }
  result.predictedSeconds = predict(profile, result.groups);
  return result;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//
void printPlanJSON(raw_ostream &os, const Profile &profile, const Plan &plan, unsigned indent) {
  std::string pad(indent, ' ');
  os << pad << "{\n";
  os << pad << "  \"strategy\": " << json::Value(plan.strategy) << ",\n";
  os << pad << "  \"predicted_seconds\": " << formatSeconds(plan.predictedSeconds) << ",\n";
  if (plan.gap > 0.0)
    os << pad << "  \"gap\": " << formatSeconds(plan.gap) << ",\n";
  if (profile.stepOffset)
    os << pad << "  \"predicted_step_seconds\": "
       << formatSeconds(plan.predictedSeconds + *profile.stepOffset) << ",\n";
  os << pad << "  \"groups\": [\n";
  for (auto [gi, g] : enumerate(plan.groups)) {
    os << pad << "    {\"layers\": [";
    for (int64_t f = g.begin; f < g.end; ++f)
      os << (f == g.begin ? "" : ", ") << json::Value(profile.layers[f].name);
    os << "], \"collective\": \"" << stringifyCollective(g.collective) << "\"}"
       << (gi + 1 < plan.groups.size() ? "," : "") << "\n";
  }
  os << pad << "  ]\n";
  os << pad << "}";
}

json::Value planToJSON(const Profile &profile, const Plan &plan) {
  json::Array groups;
  for (const Group &g : plan.groups) {
    json::Array names;
    for (int64_t f = g.begin; f < g.end; ++f)
      names.push_back(profile.layers[f].name);
    groups.push_back(json::Object{{"layers", std::move(names)},
                                  {"collective", stringifyCollective(g.collective)}});
  }
  json::Object o{{"strategy", plan.strategy},
                 {"predicted_seconds", plan.predictedSeconds},
                 {"groups", std::move(groups)}};
  if (profile.stepOffset)
    o["predicted_step_seconds"] = plan.predictedSeconds + *profile.stepOffset;
  if (plan.gap > 0.0)
    o["gap"] = plan.gap;
  return o;
}

} // namespace mgs::planner
