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
struct StrategyName {
  const char *name;
  StrategyKind kind;
};
constexpr StrategyName kStrategyNames[] = {
    {"dense", StrategyKind::Dense},   {"mgwfbp", StrategyKind::MGWFBP},
    {"single", StrategyKind::Single}, {"layerwise", StrategyKind::Layerwise},
    {"greedy", StrategyKind::Greedy}, {"omgs", StrategyKind::OMGS},
    {"auto", StrategyKind::Auto},
};
constexpr const char *kStrategyList =
    "dense, mgwfbp, single, layerwise, threshold:BYTES, greedy, omgs, auto";
} // namespace

std::string Strategy::name() const {
  if (kind == StrategyKind::Threshold)
    return "threshold:" + std::to_string(thresholdBytes);
  for (const StrategyName &n : kStrategyNames)
    if (n.kind == kind)
      return n.name;
  llvm_unreachable("unnamed strategy kind");
}

Expected<Strategy> Strategy::parse(StringRef name) {
  for (const StrategyName &n : kStrategyNames)
    if (name == n.name)
      return Strategy{n.kind, 0};
  if (name.consume_front("threshold:")) {
    int64_t bytes = 0;
    if (name.empty() || !llvm::all_of(name, isDigit) || name.getAsInteger(10, bytes) || bytes < 1)
      return createStringError(inconvertibleErrorCode(),
                               "strategy 'threshold:" + name +
                                   "': BYTES must be a positive integer (bytes of float32 "
                                   "gradients per bucket)");
    return Strategy{StrategyKind::Threshold, bytes};
  }
  return createStringError(inconvertibleErrorCode(),
                           "unknown strategy '" + name + "'; expected one of " + kStrategyList);
}

std::vector<Strategy> allStrategies() {
  return {{StrategyKind::Dense, 0},
          {StrategyKind::MGWFBP, 0},
          {StrategyKind::Single, 0},
          {StrategyKind::Layerwise, 0},
          {StrategyKind::Threshold, kDefaultThresholdBytes},
          {StrategyKind::Greedy, 0},
          {StrategyKind::OMGS, 0},
          {StrategyKind::Auto, 0}};
}

Plan plan(const Profile &profile, const Strategy &strategy) {
  Plan result;
  result.strategy = strategy.name();
  switch (strategy.kind) {
  case StrategyKind::Dense:
    result.groups = planDense(profile);
    break;
  case StrategyKind::MGWFBP:
    result.groups = planOptimal(profile, /*allowSparse=*/false, /*allowDense=*/true);
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
    result.groups = planOptimal(profile, /*allowSparse=*/true, /*allowDense=*/false);
    break;
  case StrategyKind::Auto:
    result.groups = planOptimal(profile, /*allowSparse=*/true, /*allowDense=*/true);
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
  return json::Object{{"strategy", plan.strategy},
                      {"predicted_seconds", plan.predictedSeconds},
                      {"groups", std::move(groups)}};
}

} // namespace mgs::planner
