//===- Planner.h - Gradient merge planner (OMGS cost model) -----*- C++ -*-===//
//
// The planner decides which neighbouring gradients are merged into one group
// (one top-k and one collective per group) and, for `auto`, which groups stay
// dense. It reads a calibration profile (docs/design.md, "Profile (JSON)"), predicts
// the iteration time of a grouping with the pipeline model of OMGS-SGD, and
// plans with one of the strategies below. It is plain C++ over LLVMSupport (no
// MLIR IR) so the merge pass and the mgs-plan CLI share it.
//
// Indexing: Profile::layers is in FORWARD order (index 0 = first layer of the
// model); backprop visits them from the last to the first. A Plan's groups
// are in BACKPROP order; each group is a contiguous range of forward indices.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ANALYSIS_PLANNER_H
#define MGS_ANALYSIS_PLANNER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mgs::planner {

//===----------------------------------------------------------------------===//
// Profile
//===----------------------------------------------------------------------===//

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
};

/// A top-k timing sample: one top-k over `n` elements took `seconds`.
struct TopKPoint {
  int64_t n = 0;
  double seconds = 0.0;
};

/// A calibration profile (docs/design.md "Profile (JSON)").
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
  /// Forward order.
  std::vector<LayerProfile> layers;

  /// k = max(1, floor(density * n)), never above n.
  int64_t topkK(int64_t n) const;
  /// Time of one top-k over n elements: linear between points; the first
  /// point's time below the first point; the last segment's line beyond the
  /// last point (a single point: constant). Clamped at 0 (a falling last
  /// segment extrapolated far enough would go negative).
  double topkSeconds(int64_t n) const;
  /// Sparse collective of a group of n elements: alpha + beta * 8 * k * P
  /// (k float32 values + k int32 indices from each of P workers).
  double allgatherSeconds(int64_t n) const;
  /// Dense collective of a group of n elements: alpha + beta * 4 * n.
  double allreduceSeconds(int64_t n) const;
  /// What those collectives take from the compute stream: cpuPerByte times
  /// the same bytes (8 * k * P, 4 * n).
  double allgatherComputeSeconds(int64_t n) const;
  double allreduceComputeSeconds(int64_t n) const;

  /// Checks every field (what parseProfile checks, for profiles built or
  /// changed in code); the error names the field, e.g.
  /// "layers[3].numel: expected a positive integer, got -5".
  llvm::Error validate() const;
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

//===----------------------------------------------------------------------===//
// Plans and the cost model
//===----------------------------------------------------------------------===//

enum class Collective {
  AllGather, ///< sparse: top-k, then values + indices gathered from all workers
  AllReduce, ///< dense: no top-k, the whole gradient all-reduced
};
llvm::StringRef stringifyCollective(Collective c); // "allgather" | "allreduce"

/// Layers [begin, end) in forward indices, merged into one gradient buffer.
struct Group {
  int64_t begin = 0;
  int64_t end = 0;
  Collective collective = Collective::AllGather;
};

struct Plan {
  std::string strategy;
  /// Backprop order: groups[0].end == L, groups.back().begin == 0 and
  /// groups[i + 1].end == groups[i].begin.
  std::vector<Group> groups;
  double predictedSeconds = 0.0;
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

/// The pipeline model of docs/design.md. Backprop visits the layers L..1; for
/// each group in backprop order the compute stream runs the backward of its
/// layers then one top-k over its n elements (none for a dense group), and
/// is charged the CPU time its collective takes from it
/// (allgatherComputeSeconds / allreduceComputeSeconds, 0 unless calibrated); its
/// collective starts at max(end of the previous collective, end of that
/// top-k) and lasts allgatherSeconds(n) (allreduceSeconds(n) if dense).
/// Returns the end of the last collective. `groups` must pass verifyGroups.
///
/// Evaluated as X += t_s(group); C = B(i) + X; Y = max(Y, C) + t_c(group),
/// with B(i) the backward time of the first i layers in backprop order
/// summed in that order: the exact planners evaluate the same expressions,
/// so their predicted time equals predict() bit for bit.
double predict(const Profile &profile, llvm::ArrayRef<Group> groups,
               std::vector<GroupTimes> *times = nullptr);

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

enum class StrategyKind {
  Dense,     ///< one allreduce per layer (wait-free backprop)
  MGWFBP,    ///< dense, merged: the exact optimum over dense groupings (not
             ///< MG-WFBP's own greedy rule)
  Single,    ///< one sparse group with every layer (top-k after backprop)
  Layerwise, ///< one sparse group per layer
  Threshold, ///< sparse buckets of >= thresholdBytes, like Horovod/DDP
  Greedy,    ///< the OMGS paper's greedy merge rule (sparse)
  OMGS,      ///< the exact optimum over sparse groupings
  Auto,      ///< the exact optimum when each group may also be dense
};

struct Strategy {
  StrategyKind kind = StrategyKind::OMGS;
  /// Threshold only: a bucket closes once its gradients hold this many bytes.
  int64_t thresholdBytes = 0;

  /// "dense", ..., "threshold:26214400".
  std::string name() const;
  /// Parses a strategy name; errors say what is wrong and list the names.
  static llvm::Expected<Strategy> parse(llvm::StringRef name);
};

/// The threshold every-strategy listings use: PyTorch DDP's 25 MiB buckets.
constexpr int64_t kDefaultThresholdBytes = 25 * 1024 * 1024;

/// Every strategy, in the order mgs-plan prints them: dense, mgwfbp, single,
/// layerwise, threshold:26214400, greedy, omgs, auto.
std::vector<Strategy> allStrategies();

/// Plans with a strategy; the profile must be valid. Plan::predictedSeconds
/// is predict() of the groups.
Plan plan(const Profile &profile, const Strategy &strategy);

/// The groupings behind each strategy, backprop order (see Plan::groups).
std::vector<Group> planDense(const Profile &profile);
std::vector<Group> planSingle(const Profile &profile);
std::vector<Group> planLayerwise(const Profile &profile);
std::vector<Group> planThreshold(const Profile &profile, int64_t bytes);
std::vector<Group> planGreedy(const Profile &profile);
/// What planOptimal's search did (for benchmarks and tests).
struct OptimalStats {
  size_t maxFrontier = 0; ///< most Pareto labels kept at one boundary
  size_t totalLabels = 0; ///< labels kept over all boundaries
  size_t buckets = 0;     ///< suffix-bound buckets of the run that finished
  size_t attempts = 0;    ///< exact runs (1 + escalations)
};
/// Search effort knobs (the defaults suit real models; tests shrink them to
/// exercise every path). The result is exact for every setting.
struct OptimalTuning {
  size_t firstBuckets = 512;       ///< suffix-bound buckets of the first run
  size_t bucketGrowth = 8;         ///< factor per escalation
  size_t lastBuckets = 32768;      ///< the run at or past this has no budget
  size_t labelBudgetPerLayer = 16; ///< escalate past this many labels per layer
};
/// The exact optimum of predict() over contiguous groupings whose groups use
/// one of the allowed collectives (omgs: sparse only; mgwfbp: dense only;
/// auto: both), up to floating-point rounding of the sums (1e-12 relative in
/// the tests against brute force). See Planner.cpp for the algorithm, the
/// proof and the running time (typically milliseconds for 500 layers;
/// seconds on rare profiles where very many groupings tie).
std::vector<Group> planOptimal(const Profile &profile, bool allowSparse, bool allowDense,
                               OptimalStats *stats = nullptr, const OptimalTuning &tuning = {});

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// docs/design.md's Plan JSON, one group a line:
///   {
///     "strategy": "omgs",
///     "predicted_seconds": 0.0123,
///     "groups": [
///       {"layers": ["fc.weight", "fc.bias"], "collective": "allgather"},
///       ...
///     ]
///   }
/// Each group's layers are listed in the profile's (forward) order.
void printPlanJSON(llvm::raw_ostream &os, const Profile &profile, const Plan &plan,
                   unsigned indent = 0);
/// The same as a JSON value.
llvm::json::Value planToJSON(const Profile &profile, const Plan &plan);

/// The shortest decimal that reads back as the same double ("0.1", "1e-05").
std::string formatSeconds(double value);

//===----------------------------------------------------------------------===//
// Synthetic profiles (tests, benchmarks)
//===----------------------------------------------------------------------===//

/// A random CNN-shaped profile with `numTensors` tensors: stages of
/// conv weight + batch-norm weight/bias triples with channels doubling and
/// feature maps halving per stage, a final fc weight + bias; backward times
/// proportional to each tensor's FLOPs; top-k times from s*n*log2(n) plus a
/// launch overhead; network constants, workers and density drawn over wide
/// ranges (1 Gbit/s to 100 Gbit/s, 2-64 workers). Deterministic per seed on
/// every platform.
Profile makeModelShapedProfile(int64_t numTensors, uint64_t seed);

} // namespace mgs::planner

#endif // MGS_ANALYSIS_PLANNER_H
