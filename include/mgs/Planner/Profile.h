//===- Profile.h - Calibration profiles for the merge planner ---*- C++ -*-===//
//
// A calibration profile (docs/design.md, "Profile (JSON)"): the model's layers
// with their backward times, the top-k timing curve and the collectives'
// alpha-beta costs, as measured by an instrumented executable or estimated.
// Its cost functions are what the planner's pipeline model charges.
//
// Indexing: Profile::layers is in FORWARD order (index 0 = first layer of the
// model); backprop visits them from the last to the first.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_PLANNER_PROFILE_H
#define MGS_PLANNER_PROFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mgs::planner {

/// One trainable tensor: its gradient has `numel` float32 elements and its
/// backward takes `backward` seconds.
struct LayerProfile {
  std::string name;
  int64_t numel = 0;
  double backward = 0.0;
};

/// A collective's cost: alpha + beta * bytes on the comm stream, and
/// cpuPerByte * bytes taken from the compute stream while it runs (the CPU
/// time its copies, reductions and network stack take from backprop on the
/// same cores; profile key "cpu_per_byte", optional, default 0).
struct AlphaBeta {
  double alpha = 0.0;      ///< seconds
  double beta = 0.0;       ///< seconds per byte
  double cpuPerByte = 0.0; ///< compute-stream seconds per byte
  /// The share of the compute stream a running collective takes (profile key
  /// "cpu_fraction", optional): when set, a group's CPU charge is at most
  /// this fraction of the backward still to run beside its collective
  /// (groupCost). Absent: no cap, as every profile before it.
  std::optional<double> cpuFraction;
  /// Sparse all-reduce only (key "per_element" of "sparse_allreduce",
  /// optional, default 0): comm-stream seconds per element of the group, the
  /// dense n-element result every worker zeroes and fills on the
  /// collective's critical path.
  double perElement = 0.0;
};

/// A top-k timing sample: one top-k over `n` elements took `seconds`.
struct TopKPoint {
  int64_t n = 0;
  double seconds = 0.0;
};

/// What the cost functions read of a group of n elements: computed once per
/// group and shared by its collectives' costs (Profile::groupSize; the exact
/// planner builds them incrementally as a group grows, with TopKWalk).
struct GroupSize {
  int64_t n = 0;
  int64_t k = 0;          ///< topkK(n)
  double topk = 0.0;      ///< topkSeconds(n)
  double mergeTopk = 0.0; ///< topkSeconds(2k): one merge of the global top-k
};

/// A calibration profile (docs/design.md "Profile (JSON)").
/// The most data-parallel workers a profile, a plan or a compiled step may
/// name (2^24): every byte count and sum of the model stays far from int64
/// overflow.
inline constexpr int64_t kMaxWorkers = int64_t(1) << 24;

struct Profile {
  int64_t workers = 1;
  double density = 0.001;
  /// Per-worker batch size the layers' backward times were measured at
  /// (key "batch_size", optional, which mgs's calibration writes; 0: not
  /// recorded).
  int64_t batchSize = 0;
  /// Sorted by n, strictly increasing, at least one point.
  std::vector<TopKPoint> topkPoints;
  AlphaBeta allgather;
  AlphaBeta allreduce;
  /// Point-to-point message costs of the global top-k and the balanced sparse
  /// all-reduce (keys "gtopk" and "sparse_allreduce", optional: a message of
  /// m bytes costs alpha + beta * m). Absent: derived from the all-gather's
  /// fit (pointToPoint()).
  std::optional<AlphaBeta> gtopk;
  std::optional<AlphaBeta> sparseAllreduce;
  /// The number of workers the collectives were measured on: the file's
  /// "workers", kept when a tool plans for another P by changing `workers`
  /// (0: the same as `workers`).
  int64_t measuredWorkers = 0;
  /// Forward order.
  std::vector<LayerProfile> layers;
  /// What a training step spends outside the backprop pipeline (forward,
  /// loss, optimizer update, filling the batch), measured on the same ranks
  /// as the backward (key "step_offset", optional, seconds). It is the same
  /// for every plan: plans do not depend on it; mgs-plan adds it to a plan's
  /// predicted time as "predicted_step_seconds".
  std::optional<double> stepOffset;

  /// k = max(1, floor(density * n)), never above n.
  int64_t topkK(int64_t n) const;
  /// Time of one top-k over n elements: linear between points; the first
  /// point's time below the first point; the last segment's line beyond the
  /// last point (a single point: constant). Clamped at 0 (a falling last
  /// segment extrapolated far enough would go negative).
  double topkSeconds(int64_t n) const;
  /// n, topkK(n), topkSeconds(n) and topkSeconds(2 topkK(n)).
  GroupSize groupSize(int64_t n) const;
  /// Sparse collective of a group of n elements: alpha + beta * 8 * k * P
  /// (k float32 values + k int32 indices from each of P workers).
  double allgatherSeconds(int64_t n) const { return allgatherSeconds(groupSize(n)); }
  double allgatherSeconds(const GroupSize &g) const;
  /// Dense collective of a group of n elements: alpha + beta * 4 * n.
  double allreduceSeconds(int64_t n) const;
  /// What those collectives take from the compute stream: cpuPerByte times
  /// the same bytes (8 * k * P, 4 * n).
  double allgatherComputeSeconds(int64_t n) const {
    return allgatherComputeSeconds(groupSize(n));
  }
  double allgatherComputeSeconds(const GroupSize &g) const;
  double allreduceComputeSeconds(int64_t n) const;

  /// The point-to-point message costs of a new collective: `measured` when
  /// the profile has them, else the all-gather's fit read as a ring at the
  /// measured P_c: alpha / (P_c - 1) a message, beta * P_c / (P_c - 1) a byte,
  /// the same cpu_per_byte (P_c = 1: alpha and beta themselves).
  AlphaBeta pointToPoint(const std::optional<AlphaBeta> &measured) const;
  /// Global top-k of a group of n elements (P = workers, a_p, b_p from
  /// pointToPoint(gtopk)): R rounds of one 8k-byte message each, R = log2 P
  /// for P a power of two and floor(log2 P) + 2 otherwise (the workers past
  /// the largest power of two fold into it first and get the result back
  /// last), and M = floor(log2 P) (+1 when folding) merges, each a top-k of
  /// 2k entries, on the collective's critical path:
  ///   R * (a_p + b_p * 8k) + M * topkSeconds(2k).
  double gtopkSeconds(int64_t n) const { return gtopkSeconds(groupSize(n)); }
  double gtopkSeconds(const GroupSize &g) const;
  /// Balanced sparse all-reduce of a group of n elements: the region
  /// boundaries (a sum of the P-1 index quantiles, gtopkRounds(P) messages of
  /// 8(P-1) bytes), then P-1 messages of one region's share of the worker's
  /// selection (8k / P bytes), then the reduced regions gathered (Bruck:
  /// ceil(log2 P) messages, P-1 regions of min(8k, 4n/P) bytes: a region's
  /// union holds at most k entries, and is sent dense once it fills half the
  /// region):
  ///   (R + P - 1 + ceil(log2 P)) * a_p
  ///     + b_p * (8 R (P-1) + (P-1) * (8k / P + min(8k, 4n / P)))
  ///     + per_element * n   (0 unless the profile's sparse_allreduce has it).
  double sparseAllreduceSeconds(int64_t n) const { return sparseAllreduceSeconds(groupSize(n)); }
  double sparseAllreduceSeconds(const GroupSize &g) const;
  /// Their compute-stream share: cpu_per_byte times the bytes each worker
  /// receives (the b_p terms' bytes).
  double gtopkComputeSeconds(int64_t n) const { return gtopkComputeSeconds(groupSize(n)); }
  double gtopkComputeSeconds(const GroupSize &g) const;
  double sparseAllreduceComputeSeconds(int64_t n) const {
    return sparseAllreduceComputeSeconds(groupSize(n));
  }
  double sparseAllreduceComputeSeconds(const GroupSize &g) const;
  /// Rounds and merges of the global top-k on P workers (see gtopkSeconds).
  static int64_t gtopkRounds(int64_t workers);
  static int64_t gtopkMerges(int64_t workers);

  /// Checks every field (what parseProfile checks, for profiles built or
  /// changed in code); the error names the field, e.g.
  /// "layers[3].numel: expected a positive integer, got -5".
  llvm::Error validate() const;
};

/// What the collectives' cost functions read of a profile besides the group:
/// the alpha-beta fits (pointToPoint() for the new collectives), the global
/// top-k's rounds and merges and the sparse all-reduce's message count.
/// Profile's cost functions build one per call; the exact planner builds one
/// per profile for its O(L^2) groups. Both evaluate the same expressions, so
/// their values agree bit for bit.
struct CollectiveConstants {
  explicit CollectiveConstants(const Profile &profile);

  double workers;                   ///< P
  AlphaBeta allgather, allreduce;   ///< the profile's
  AlphaBeta gtopk, sparseAllreduce; ///< Profile::pointToPoint of each
  double gtopkRounds, gtopkMerges;  ///< Profile::gtopkRounds, gtopkMerges of P
  double sparseMessages;            ///< messages a sparse all-reduce sends (alpha terms)
  double boundaryBytes;             ///< its region boundaries' bytes: 8 R (P - 1)
  double perElement;                ///< sparse_allreduce.per_element (0 when absent)

  double allgatherSeconds(const GroupSize &g) const {
    return allgather.alpha + allgather.beta * 8.0 * static_cast<double>(g.k) * workers;
  }
  double allreduceSeconds(int64_t n) const {
    return allreduce.alpha + allreduce.beta * 4.0 * static_cast<double>(n);
  }
  double allgatherComputeSeconds(const GroupSize &g) const {
    return allgather.cpuPerByte * 8.0 * static_cast<double>(g.k) * workers;
  }
  double allreduceComputeSeconds(int64_t n) const {
    return allreduce.cpuPerByte * 4.0 * static_cast<double>(n);
  }
  double gtopkSeconds(const GroupSize &g) const {
    return gtopkRounds * (gtopk.alpha + gtopk.beta * 8.0 * static_cast<double>(g.k)) +
           gtopkMerges * g.mergeTopk;
  }
  double gtopkComputeSeconds(const GroupSize &g) const {
    return gtopk.cpuPerByte * gtopkRounds * 8.0 * static_cast<double>(g.k);
  }
  /// The bytes one worker sends of a sparse all-reduce (see
  /// Profile::sparseAllreduceSeconds).
  double sparseAllreduceBytes(const GroupSize &g) const {
    double entries = 8.0 * static_cast<double>(g.k), dense = 4.0 * static_cast<double>(g.n);
    double reduce = entries / workers;                  // one region's share of the selection
    double gather = std::min(entries, dense / workers); // one reduced region
    return boundaryBytes + (workers - 1.0) * (reduce + gather);
  }
  double sparseAllreduceSeconds(const GroupSize &g) const {
    return sparseMessages * sparseAllreduce.alpha + sparseAllreduceBytes(g) * sparseAllreduce.beta +
           perElement * static_cast<double>(g.n);
  }
  double sparseAllreduceComputeSeconds(const GroupSize &g) const {
    return sparseAllreduce.cpuPerByte * sparseAllreduceBytes(g);
  }
};

/// Profile::topkSeconds over a non-decreasing sequence of n without its
/// binary search: each call moves on from the previous call's segment (the
/// same segment and arithmetic as topkSeconds, so the same value).
class TopKWalk {
public:
  explicit TopKWalk(const Profile &profile) : points(profile.topkPoints) {}
  /// topkSeconds(n); n must not be below the previous call's.
  double operator()(int64_t n);

private:
  llvm::ArrayRef<TopKPoint> points;
  size_t hi = 1; ///< the segment [hi - 1, hi] of the previous n
};

/// Parses and validates a profile. Every error names the field path, e.g.
/// "layers[3].numel: expected a positive integer, got -5",
/// "topk.points: must be sorted by n, strictly increasing (...)",
/// "allgather: missing". Unknown keys are ignored (calibration may add some).
llvm::Expected<Profile> parseProfile(llvm::StringRef json);
/// parseProfile on a file's contents; I/O errors name the file.
llvm::Expected<Profile> loadProfile(llvm::StringRef path);
/// The profile as docs/design.md's JSON (parseProfile reads it back unchanged).
llvm::json::Value profileToJSON(const Profile &profile);

/// A model's trainable parameter as the compiler sees it, forward order.
struct ParameterShape {
  llvm::StringRef name;
  int64_t numel;
};
/// Rejects a profile that does not describe these parameters, naming the
/// field: "layers: the profile has 10 layers, the model has 12 trainable
/// parameters", "layers[3].name: ...", "layers[3].numel: ...".
llvm::Error checkProfileMatchesModel(const Profile &profile,
                                     llvm::ArrayRef<ParameterShape> parameters);

/// The shortest decimal that reads back as the same double ("0.1", "1e-05").
std::string formatSeconds(double value);

} // namespace mgs::planner

#endif // MGS_PLANNER_PROFILE_H
