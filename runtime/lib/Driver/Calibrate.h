//===- Calibrate.h - Measuring a machine for the planner (internal) -*- C++
//-*-===//
//
// The executable's --calibrate (a model built by mgsc --profile-generate):
// per-layer backward times from the step's marks, top-k times over a range of
// sizes, the start-up and per-byte cost of the allgather and allreduce on the
// workers' communicator, and of one message of the global top-k and the
// balanced sparse all-reduce, written as a profile (docs/design.md's format)
// that mgsc --profile-use and mgs-plan read.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_CALIBRATE_H
#define MGSRT_DRIVER_CALIBRATE_H

#include "mgsrt/driver.h"
#include "mgsrt/mgsrt.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mgs::rt::driver {

struct LinearCost {
  double alpha = 0, beta = 0; // seconds, seconds per byte
  double cpuPerByte = 0;      // compute time taken from a step running beside it
  /// That compute time per second the collective runs (profile key
  /// "cpu_fraction"); unset: not measured.
  std::optional<double> cpuFraction;
  /// The sparse all-reduce's seconds per element of the group (profile key
  /// "per_element"): its dense result, zeroed and filled on its critical path.
  double perElement = 0;
};

struct Calibration {
  int workers = 1;
  int64_t batchSize = 0; // per worker: the layers' backward was timed at it
  double density = 0.001;
  std::vector<std::pair<int64_t, double>> topk; // (n, seconds)
  LinearCost allgather, allreduce;
  /// One message of the global top-k and of the balanced sparse all-reduce
  /// (profile keys "gtopk", "sparse_allreduce"); unset: not measured (one
  /// worker, a GPU), the planner derives them from the allgather.
  std::optional<LinearCost> gtopk, sparseAllreduce;
  struct Layer {
    std::string name;
    int64_t numel = 0;
    double backward = 0; // seconds
  };
  std::vector<Layer> layers; // forward order
  /// A step's time outside backprop (forward, loss, update, batch): the
  /// median step less the summed backward (profile key "step_offset");
  /// unset: not measured (one worker, a GPU).
  std::optional<double> stepOffset;
  std::string source; // what measured it
};

// The measurements return a Status; one whose message is empty means that
// `runStep` failed and reported it already.

/// Per-layer backward times from `steps` runs of the step: `runStep(i)` runs
/// step i with marks recorded (the ctx's). One worker: the median over the
/// steps of the time from the previous mark to each gradient's mark. More
/// workers (every rank must call it): the steps start together (an
/// allreduce before each) and a gradient's collective can start only once
/// the slowest rank has it, so each mark's time from the step's start is
/// taken at its maximum over the ranks (exchanged by an allreduce); a layer's
/// backward is the difference of those maxima's medians over the steps from
/// the previous mark's, the first from the median rank's start of backprop
/// (the ranks' skew by then is the first layer's). `rankBackward`, when not
/// null: the summed backward of the median rank (the per-rank medians'
/// sum, which a step's forward and update are measured against).
Status measureLayers(mgsrt_ctx_t *ctx, const Manifest &m, int steps,
                     const std::function<bool(int)> &runStep, std::vector<Calibration::Layer> &out,
                     int workers = 1, int rank = 0, double *rankBackward = nullptr);

/// Every rank's `mine` (the same length on every rank), rank after rank, into
/// `all`, by an allreduce (in float). Every rank must call it.
Status allGatherValues(mgsrt_ctx_t *ctx, int workers, int rank, const std::vector<double> &mine,
                       std::vector<double> &all);

/// Top-k sparsification times at sizes 16, 64, ... up to `maxN` (rounded up to
/// a power of 4), k = mgs::contract::topkCount(n, density), on the ctx's
/// device. More workers (every rank must call it): the ranks start each size
/// together and a repetition counts at its slowest rank (the collective after
/// a top-k waits for it); the median over the repetitions.
Status measureTopK(mgsrt_ctx_t *ctx, double density, int64_t maxN,
                   std::vector<std::pair<int64_t, double>> &out, int workers = 1, int rank = 0);

/// Allgather (k values and indices per rank: 8 k P bytes) and allreduce
/// (4 n bytes) times over a range of sizes on the ctx's communicator, fitted
/// to alpha + beta * bytes by least squares. The allreduce is also timed at
/// `largestN` elements (the model's largest gradient) when that is beyond the
/// range, and its beta is then the line from the fit's alpha through that
/// time (anchorBeta): a dense group's cost is decided by its largest
/// messages, which the small sizes' fit misses. Every rank must call it.
Status measureCollectives(mgsrt_ctx_t *ctx, int workers, int64_t largestN,
                          LinearCost &allgather, LinearCost &allreduce);

/// `c` with beta replaced by the slope from (0, c.alpha) to (bytes, seconds),
/// kept when that is not positive.
LinearCost anchorBeta(LinearCost c, double bytes, double seconds);

/// The planner's terms for one sparse collective of k entries a worker out of
/// n elements on `workers` workers (docs/design.md): the messages on a
/// worker's critical path, their bytes, and the global top-k's merges (each
/// charged as a top-k of 2k entries). One worker: all zero.
struct MessageShape {
  double messages = 0, bytes = 0, merges = 0;
};
MessageShape gtopkShape(int workers, int64_t k);
MessageShape sparseAllreduceShape(int workers, int64_t k, int64_t n);

/// The top-k time at n from (n, seconds) points sorted by n, as the planner
/// reads them: the first point's below it, linear between points, the last
/// segment's line beyond the last one (at least 0).
double topkSecondsAt(const std::vector<std::pair<int64_t, double>> &topk, int64_t n);

/// One message's cost a_p + b_p * bytes from timed runs of one collective,
/// each (its shape, seconds less its merges): fitted to alpha + b_p * bytes
/// as `measureCollectives` fits, then a_p = alpha / messages (the same count
/// in every run).
LinearCost fitMessages(const std::vector<std::pair<MessageShape, double>> &runs);

/// One phase of a collective as its timeline recorded it: the messages the
/// cost model charges it, the bytes the rank received in it, its seconds.
struct PhaseSample {
  double messages = 0, bytes = 0, seconds = 0;
};

/// One message's cost a_p + b_p * bytes fitted to phases (each
/// messages * a_p + bytes * b_p), least squares in relative error as `fit`;
/// a or b that would come out negative is 0 and the other refitted alone.
LinearCost fitPhases(const std::vector<PhaseSample> &phases);

/// The global top-k's message costs (a_p, b_p), from runs with k = 1 ...
/// 131072 entries of n = 4 k P (this `rank`'s own random entries, one in
/// each stretch of 4 P), less the merges' top-k time read from `topk`. The
/// balanced sparse all-reduce's, at the model's own size (k entries of n:
/// its largest gradient), from its phases as the timeline records them on
/// the communication thread (medians of 7 runs): a_p and b_p fitted
/// (fitPhases) to the boundaries (R messages), the reduce (P - 1) and the
/// gather (ceil(log2 P)) with the bytes each received; per_element, the
/// dense result's time over n. Every rank must call it; workers > 1.
Status measureSparseCollectives(mgsrt_ctx_t *ctx, int workers, int rank,
                                const std::vector<std::pair<int64_t, double>> &topk, int64_t k,
                                int64_t n, LinearCost &gtopk, LinearCost &sparseAllreduce);

/// The compute time each collective takes from a training step running
/// beside it, per byte (the planner's cpu_per_byte): `runStep(i)` runs step
/// i (no collectives of its own) and returns its seconds, or a negative
/// number on failure. For each collective, a size whose fitted time is
/// about half a step is started before a step and waited for after it;
/// (that step's time - an unloaded step's) / bytes, the median of 5 pairs,
/// at least 0. The collective's packing and unpacking on the caller's
/// thread (a copy of the sent and received entries) is left out.
/// cpuFraction: that compute time over the collective's fitted time (the
/// share of the step it took while running). `stepSeconds`: the median of
/// every unloaded step. Every rank must call it; CPU contexts only.
Status measureCollectiveCpu(mgsrt_ctx_t *ctx, int workers,
                            const std::function<double(int)> &runStep, LinearCost &allgather,
                            LinearCost &allreduce, double &stepSeconds);

/// `s` inside a JSON string: quotes and backslashes escaped.
std::string jsonEscape(const std::string &s);

/// The profile as JSON text.
std::string profileJson(const Calibration &c);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_CALIBRATE_H
