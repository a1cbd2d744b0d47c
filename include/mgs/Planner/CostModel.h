//===- CostModel.h - The OMGS pipeline cost model ---------------*- C++ -*-===//
//
// Groupings of a profile's layers (each group merged into one buffer with one
// collective) and predict(), the iteration time the pipeline model of
// OMGS-SGD gives a grouping.
//
// A grouping's groups are in BACKPROP order; each group is a contiguous range
// of forward indices of Profile::layers.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_COSTMODEL_H
#define MGS_PLANNER_COSTMODEL_H

#include "mgs/Planner/Profile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace mgs::planner {

/// How a group's gradients are exchanged (docs/design.md, "The cost model").
enum class Collective {
  AllGather,       ///< sparse: top-k, then values + indices gathered from all workers
  AllReduce,       ///< dense: no top-k, the whole gradient all-reduced
  GTopK,           ///< sparse: top-k, then the global top-k by pairwise exchanges
  SparseAllReduce, ///< sparse: top-k, reduced by index region at its owner, regions gathered
};
/// "allgather" | "allreduce" | "gtopk" | "sparse-allreduce" (the plan JSON's
/// "collective", the comm.collective attribute's value).
llvm::StringRef stringifyCollective(Collective c);
/// The collective named by stringifyCollective's spelling; none if unknown.
std::optional<Collective> parseCollective(llvm::StringRef name);
/// Whether the group is top-k sparsified (all but AllReduce).
inline bool isSparse(Collective c) { return c != Collective::AllReduce; }

/// A set of collectives a planner may choose from for each group.
class CollectiveSet {
public:
  constexpr CollectiveSet() = default;
  constexpr CollectiveSet(std::initializer_list<Collective> cs) {
    for (Collective c : cs)
      bits |= bit(c);
  }
  /// All four.
  static constexpr CollectiveSet all() {
    return {Collective::AllGather, Collective::AllReduce, Collective::GTopK,
            Collective::SparseAllReduce};
  }
  constexpr bool contains(Collective c) const { return bits & bit(c); }
  constexpr void insert(Collective c) { bits |= bit(c); }
  constexpr bool empty() const { return bits == 0; }
  /// The members in enum order.
  llvm::SmallVector<Collective, 4> members() const {
    llvm::SmallVector<Collective, 4> out;
    for (Collective c : {Collective::AllGather, Collective::AllReduce, Collective::GTopK,
                         Collective::SparseAllReduce})
      if (contains(c))
        out.push_back(c);
    return out;
  }

private:
  static constexpr unsigned bit(Collective c) { return 1u << static_cast<unsigned>(c); }
  unsigned bits = 0;
};

/// Layers [begin, end) in forward indices, merged into one gradient buffer.
struct Group {
  int64_t begin = 0;
  int64_t end = 0;
  Collective collective = Collective::AllGather;
};

/// Checks that `groups` cover the profile's layers contiguously in backprop
/// order (see Plan::groups).
llvm::Error verifyGroups(const Profile &profile, llvm::ArrayRef<Group> groups);

/// When each group's work happens in the pipeline model.
struct GroupTimes {
  double topkEnd;   ///< end of the group's top-k (dense: of its backward)
  double commStart; ///< max(end of the previous collective, topkEnd)
  double commEnd;
};

/// Compute-stream and comm-stream time of one group.
struct GroupCost {
  double topk; ///< on the compute stream: top-k (none when dense) + the collective's CPU time
  double comm; ///< on the comm stream: the collective
};

/// A collective's CPU charge `share` on the compute stream, capped at its
/// cpu_fraction of `backwardAfter` (the backward still to run once the group's
/// gradients are complete: all the compute its collective can slow) when the
/// profile gives a cpu_fraction.
inline double cappedCpu(double share, const AlphaBeta &ab, double backwardAfter) {
  return ab.cpuFraction ? std::min(share, *ab.cpuFraction * backwardAfter) : share;
}

/// A group exchanged with c, with `backwardAfter` seconds of backward after
/// it in backprop order: what predict() charges it.
inline GroupCost groupCost(const CollectiveConstants &k, const GroupSize &g, Collective c,
                           double backwardAfter) {
  switch (c) {
  case Collective::AllReduce:
    return {cappedCpu(k.allreduceComputeSeconds(g.n), k.allreduce, backwardAfter),
            k.allreduceSeconds(g.n)};
  case Collective::AllGather:
    return {g.topk + cappedCpu(k.allgatherComputeSeconds(g), k.allgather, backwardAfter),
            k.allgatherSeconds(g)};
  case Collective::GTopK:
    return {g.topk + cappedCpu(k.gtopkComputeSeconds(g), k.gtopk, backwardAfter),
            k.gtopkSeconds(g)};
  case Collective::SparseAllReduce:
    return {g.topk +
                cappedCpu(k.sparseAllreduceComputeSeconds(g), k.sparseAllreduce, backwardAfter),
            k.sparseAllreduceSeconds(g)};
  }
  return {0.0, 0.0};
}
inline GroupCost groupCost(const Profile &p, const GroupSize &g, Collective c,
                           double backwardAfter) {
  return groupCost(CollectiveConstants(p), g, c, backwardAfter);
}
/// The same for a group of n elements.
inline GroupCost groupCost(const Profile &p, int64_t n, Collective c, double backwardAfter) {
  return groupCost(p, p.groupSize(n), c, backwardAfter);
}

/// The pipeline model of docs/design.md. Backprop visits the layers L..1; for
/// each group in backprop order the compute stream runs the backward of its
/// layers then one top-k over its n elements (none for a dense group), and
/// is charged the CPU time its collective takes from it
/// (allgatherComputeSeconds / allreduceComputeSeconds, 0 unless calibrated); its
/// collective starts at max(end of the previous collective, end of that
/// top-k) and lasts allgatherSeconds(n) (allreduceSeconds(n) if dense;
/// gtopkSeconds(n), sparseAllreduceSeconds(n) for the other two, whose
/// compute-stream share is gtopkComputeSeconds / sparseAllreduceComputeSeconds;
/// each share capped by the collective's cpu_fraction of the backward after
/// the group, where the profile gives one). Returns the end of the last collective. `groups` must pass verifyGroups.
///
/// Evaluated as X += t_s(group); C = B(i) + X; Y = max(Y, C) + t_c(group),
/// with B(i) the backward time of the first i layers in backprop order
/// summed in that order: the exact planners evaluate the same expressions,
/// so their predicted time equals predict() bit for bit.
double predict(const Profile &profile, llvm::ArrayRef<Group> groups,
               std::vector<GroupTimes> *times = nullptr);

} // namespace mgs::planner

#endif // MGS_PLANNER_COSTMODEL_H
