//===- PlannerSupport.h - Helpers shared by the planner's sources -*- C++ -*-===//
//
// Private to lib/Planner: errors that name a field, the profile seen in
// backprop order, and the one step of the pipeline recurrence that predict()
// and every planner evaluate (so their predicted times agree bit for bit).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_PLANNER_PLANNERSUPPORT_H
#define MGS_LIB_PLANNER_PLANNERSUPPORT_H

#include "mgs/Planner/CostModel.h"
#include "mgs/Planner/Profile.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mgs::planner::detail {

/// "FIELD: MESSAGE", the form of every profile and grouping error.
inline llvm::Error fieldError(const llvm::Twine &field, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), field + ": " + message);
}

/// The profile seen in backprop order: position p is forward layer L-1-p;
/// boundary i (0..L) separates the first i positions from the rest.
struct BackpropView {
  int64_t L;
  std::vector<int64_t> prefixNumel;   ///< N[i]: elements of positions [0, i)
  std::vector<double> prefixBackward; ///< B[i]: backward of positions [0, i), summed in order

  explicit BackpropView(const Profile &p) : L(static_cast<int64_t>(p.layers.size())) {
    prefixNumel.assign(L + 1, 0);
    prefixBackward.assign(L + 1, 0.0);
    for (int64_t i = 0; i < L; ++i) {
      const LayerProfile &layer = p.layers[L - 1 - i];
      prefixNumel[i + 1] = prefixNumel[i] + layer.numel;
      prefixBackward[i + 1] = prefixBackward[i] + layer.backward;
    }
  }
  int64_t numel(int64_t j, int64_t i) const { return prefixNumel[i] - prefixNumel[j]; }
  /// The backward after boundary i (groupCost's backwardAfter).
  double backwardAfter(int64_t i) const { return prefixBackward[L] - prefixBackward[i]; }
  /// The group of positions [j, i) as forward indices.
  Group group(int64_t j, int64_t i, Collective c) const { return {L - i, L - j, c}; }
};

/// One step of the pipeline recurrence; every planner and predict() use it.
inline void step(double &x, double &y, double prefixBackward, GroupCost cost) {
  x = x + cost.topk;
  double computeEnd = prefixBackward + x;
  y = std::max(y, computeEnd) + cost.comm;
}

} // namespace mgs::planner::detail

#endif // MGS_LIB_PLANNER_PLANNERSUPPORT_H
