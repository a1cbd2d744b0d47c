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
  std::string source;        // what measured it
};

// The measurements return a Status; one whose message is empty means that
// `runStep` failed and reported it already.

/// Per-layer backward times from `steps` runs of the step: `runStep(i)` runs
/// step i with marks recorded (the ctx's). Median over the steps of the time
/// from the previous mark to each gradient's mark.
Status measureLayers(mgsrt_ctx_t *ctx, const Manifest &m, int steps,
                     const std::function<bool(int)> &runStep, std::vector<Calibration::Layer> &out);

/// Top-k sparsification times at sizes 16, 64, ... up to `maxN` (rounded up to
/// a power of 4), k = mgs::contract::topkCount(n, density), on the ctx's
/// device.
Status measureTopK(mgsrt_ctx_t *ctx, double density, int64_t maxN,
                   std::vector<std::pair<int64_t, double>> &out);

/// Allgather (k values and indices per rank: 8 k P bytes) and allreduce
/// (4 n bytes) times over a range of sizes on the ctx's communicator, fitted
/// to alpha + beta * bytes by least squares. Every rank must call it.
Status measureCollectives(mgsrt_ctx_t *ctx, int workers, LinearCost &allgather,
                          LinearCost &allreduce);

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

/// The global top-k's and the balanced sparse all-reduce's message costs
/// (a_p, b_p), from runs of each with k = 1 ... 131072 entries of n = 4 k P
/// (this `rank`'s own random entries, one in each stretch of 4 P; regions
/// stay sparse), less the merges' top-k time read from `topk`. Every rank
/// must call it; workers > 1.
Status measureSparseCollectives(mgsrt_ctx_t *ctx, int workers, int rank,
                                const std::vector<std::pair<int64_t, double>> &topk,
                                LinearCost &gtopk, LinearCost &sparseAllreduce);

/// The compute time each collective takes from a training step running
/// beside it, per byte (the planner's cpu_per_byte): `runStep(i)` runs step
/// i (no collectives of its own) and returns its seconds, or a negative
/// number on failure. For each collective, a size whose fitted time is
/// about half a step is started before a step and waited for after it;
/// (that step's time - an unloaded step's) / bytes, the median of 5 pairs,
/// at least 0. The collective's packing and unpacking on the caller's
/// thread (a copy of the sent and received entries) is left out. Every rank
/// must call it; CPU contexts only.
Status measureCollectiveCpu(mgsrt_ctx_t *ctx, int workers,
                            const std::function<double(int)> &runStep, LinearCost &allgather,
                            LinearCost &allreduce);

/// `s` inside a JSON string: quotes and backslashes escaped.
std::string jsonEscape(const std::string &s);

/// The profile as JSON text.
std::string profileJson(const Calibration &c);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_CALIBRATE_H
