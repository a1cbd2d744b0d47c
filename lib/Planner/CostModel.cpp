//===- CostModel.cpp - The pipeline model of backprop and collectives -----===//
//
// Groupings and predict(): the compute stream (backward, top-k) and the
// comm stream (one collective per group) of one training iteration.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/CostModel.h"

#include "PlannerSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace mgs::planner {

using namespace detail;

StringRef stringifyCollective(Collective c) {
  switch (c) {
  case Collective::AllGather:
    return "allgather";
  case Collective::AllReduce:
    return "allreduce";
  case Collective::GTopK:
    return "gtopk";
  case Collective::SparseAllReduce:
    return "sparse-allreduce";
  }
  llvm_unreachable("unknown collective");
}

std::optional<Collective> parseCollective(StringRef name) {
  for (Collective c : CollectiveSet::all().members())
    if (name == stringifyCollective(c))
      return c;
  return std::nullopt;
}

Error verifyGroups(const Profile &profile, ArrayRef<Group> groups) {
  int64_t expectedEnd = static_cast<int64_t>(profile.layers.size());
  for (auto [i, g] : enumerate(groups)) {
    if (g.end != expectedEnd || g.begin >= g.end || g.begin < 0)
      return fieldError(formatv("groups[{0}]", i),
                        formatv("layers [{0}, {1}) do not continue the backprop order (expected a "
                                "non-empty range ending at {2})",
                                g.begin, g.end, expectedEnd));
    expectedEnd = g.begin;
  }
  if (expectedEnd != 0)
    return fieldError("groups", formatv("layers [0, {0}) are in no group", expectedEnd));
  return Error::success();
}

double predict(const Profile &profile, ArrayRef<Group> groups, std::vector<GroupTimes> *times) {
  assert(!errorToBool(verifyGroups(profile, groups)) && "invalid grouping");
  BackpropView view(profile);
  if (times)
    times->clear();
  double x = 0.0, y = 0.0;
  for (const Group &g : groups) {
    int64_t i = view.L - g.begin; // boundary after the group
    GroupCost cost =
        groupCost(profile, view.numel(view.L - g.end, i), g.collective, view.backwardAfter(i));
    double prevY = y;
    step(x, y, view.prefixBackward[i], cost);
    if (times) {
      double computeEnd = view.prefixBackward[i] + x;
      times->push_back({computeEnd, std::max(prevY, computeEnd), y});
    }
  }
  return y;
}

} // namespace mgs::planner
