//===- Heuristics.h - The planner's heuristic strategies --------*- C++ -*-===//
//
// Groupings that follow a fixed rule rather than search for the optimum:
// one group per layer, one for all, byte-threshold buckets, and the OMGS
// paper's greedy merge rule.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_HEURISTICS_H
#define MGS_PLANNER_HEURISTICS_H

#include "mgs/Planner/CostModel.h"
#include "mgs/Planner/Profile.h"

#include <cstdint>
#include <vector>

namespace mgs::planner {

/// The groupings behind each strategy, backprop order (see Plan::groups).
std::vector<Group> planDense(const Profile &profile);
std::vector<Group> planSingle(const Profile &profile);
std::vector<Group> planLayerwise(const Profile &profile);
std::vector<Group> planThreshold(const Profile &profile, int64_t bytes);
std::vector<Group> planGreedy(const Profile &profile);

} // namespace mgs::planner

#endif // MGS_PLANNER_HEURISTICS_H
