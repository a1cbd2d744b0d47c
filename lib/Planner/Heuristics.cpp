//===- Heuristics.cpp - The planner's heuristic strategies ----------------===//
//
// Groupings of fixed shape (dense, single, layerwise), byte-threshold
// buckets like Horovod's and DDP's, and the OMGS paper's greedy merge rule.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/Heuristics.h"

#include "PlannerSupport.h"

#include <algorithm>

namespace mgs::planner {

using namespace detail;

std::vector<Group> planDense(const Profile &profile) {
  std::vector<Group> groups;
  for (int64_t f = static_cast<int64_t>(profile.layers.size()) - 1; f >= 0; --f)
    groups.push_back({f, f + 1, Collective::AllReduce});
  return groups;
}

std::vector<Group> planSingle(const Profile &profile) {
  return {{0, static_cast<int64_t>(profile.layers.size()), Collective::AllGather}};
}

std::vector<Group> planLayerwise(const Profile &profile) {
  std::vector<Group> groups = planDense(profile);
  for (Group &g : groups)
    g.collective = Collective::AllGather;
  return groups;
}

std::vector<Group> planThreshold(const Profile &profile, int64_t bytes) {
  // Buckets fill in backprop order (like Horovod's fusion buffer and DDP's
  // buckets) and close as soon as they hold `bytes` of float32 gradients.
  std::vector<Group> groups;
  int64_t end = static_cast<int64_t>(profile.layers.size());
  int64_t filled = 0;
  for (int64_t f = end - 1; f >= 0; --f) {
    filled += 4 * profile.layers[f].numel;
    if (filled >= bytes || f == 0) {
      groups.push_back({f, end, Collective::AllGather});
      end = f;
      filled = 0;
    }
  }
  return groups;
}

// The greedy rule of the OMGS paper, as the authors' code applies it
// (HKBU-HPML/OMGS-SGD, _generate_groups_mgs): walk the layers in backprop
// order with a current group G; for the next layer l, merging l into G
//   - saves tsave = t_c(G) + t_c(l) - t_c(G + l) on the comm stream (one
//     start-up fewer), and
//   - costs tw = t_b(l) + t_s(G + l) - t_s(G) - t_s(l) - slack(G) of waiting,
//     where slack(G) is how long G's collective would wait for the comm
//     stream after G's top-k anyway (G's comm start minus its top-k end,
//     given the groups closed so far);
// merge when tw < tsave, otherwise close G and start a new group with l.
// One difference: the authors' loop never tests the first pair (the first two
// layers in backprop order are always merged); here every pair is tested.
std::vector<Group> planGreedy(const Profile &profile) {
  BackpropView view(profile);
  std::vector<Group> groups;
  auto ts = [&](int64_t n) { return profile.topkSeconds(n); };
  auto tc = [&](int64_t n) { return profile.allgatherSeconds(n); };
  double x = 0.0, y = 0.0; // state after the closed groups
  int64_t start = 0;       // current group: positions [start, next)
  for (int64_t next = 1; next <= view.L; ++next) {
    int64_t nG = view.numel(start, next);
    if (next < view.L) {
      int64_t nl = view.numel(next, next + 1);
      double topkEnd = view.prefixBackward[next] + x + ts(nG);
      double slack = std::max(0.0, y - topkEnd);
      double backward = profile.layers[view.L - 1 - next].backward;
      double tw = backward + ts(nG + nl) - ts(nG) - ts(nl) - slack;
      double tsave = tc(nG) + tc(nl) - tc(nG + nl);
      if (tw < tsave)
        continue; // merge l into G
    }
    step(x, y, view.prefixBackward[next],
         groupCost(profile, nG, Collective::AllGather, view.backwardAfter(next)));
    groups.push_back(view.group(start, next, Collective::AllGather));
    start = next;
  }
  return groups;
}

} // namespace mgs::planner
