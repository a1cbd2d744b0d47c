//===- CalibratePhases.cpp - The sparse collectives' message costs --------===//
//
// The calibration of the global top-k (whole runs over a range of k, fitted
// per message: fitMessages) and of the balanced sparse all-reduce at the
// model's own size, from the phases its timeline records on the
// communication thread (fitPhases): measureSparseCollectives (Calibrate.h).
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "CalibrateSupport.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mgs::rt::driver {

using namespace calibration;

double topkSecondsAt(const std::vector<std::pair<int64_t, double>> &topk, int64_t n) {
  if (topk.empty())
    return 0;
  if (n <= topk.front().first || topk.size() == 1)
    return topk.front().second;
  size_t hi = 1;
  while (hi + 1 < topk.size() && topk[hi].first < n)
    ++hi;
  const auto &[an, at] = topk[hi - 1];
  const auto &[bn, bt] = topk[hi];
  const double v = at + static_cast<double>(n - an) / static_cast<double>(bn - an) * (bt - at);
  return std::max(0.0, v);
}

LinearCost fitMessages(const std::vector<std::pair<MessageShape, double>> &runs) {
  std::vector<std::pair<double, double>> points;
  for (const auto &[shape, seconds] : runs)
    points.emplace_back(shape.bytes, seconds);
  LinearCost c = fit(points);
  const double messages = runs.empty() ? 0 : runs.front().first.messages;
  c.alpha = messages > 0 ? c.alpha / messages : 0;
  return c;
}

LinearCost fitPhases(const std::vector<PhaseSample> &phases) {
  double aa = 0, ab = 0, bb = 0, at = 0, bt = 0;
  for (const PhaseSample &p : phases) {
    const double w = 1.0 / std::max(p.seconds * p.seconds, 1e-24);
    aa += w * p.messages * p.messages;
    ab += w * p.messages * p.bytes;
    bb += w * p.bytes * p.bytes;
    at += w * p.messages * p.seconds;
    bt += w * p.bytes * p.seconds;
  }
  LinearCost c;
  const double det = aa * bb - ab * ab;
  if (det > 0) {
    c.alpha = (at * bb - bt * ab) / det;
    c.beta = (aa * bt - ab * at) / det;
  }
  if (det <= 0 || c.alpha < 0) {
    c.alpha = 0;
    c.beta = bb > 0 ? std::max(0.0, bt / bb) : 0;
  }
  if (c.beta < 0) {
    c.beta = 0;
    c.alpha = aa > 0 ? std::max(0.0, at / aa) : 0;
  }
  return c;
}

namespace {
/// The phase `name` of the one sparse all-reduce in the context's timeline
/// (seconds, bytes received); false when it is not there.
bool tracedPhase(mgsrt_ctx_t *ctx, const char *name, double &seconds, double &bytes) {
  const mgsrt_trace_event_t *ev = nullptr;
  const int64_t n = mgsrt_ctx_trace(ctx, &ev);
  for (int64_t i = 0; i < n; ++i)
    if (ev[i].kind == MGSRT_TRACE_PHASE && std::strcmp(ev[i].name, name) == 0) {
      seconds = ev[i].end - ev[i].start;
      bytes = static_cast<double>(ev[i].arg);
      return true;
    }
  return false;
}

/// The sparse all-reduce of k entries of n, `reps` runs after a warm-up one,
/// its phases from the timeline: their medians, the message counts the cost
/// model charges them, and the dense result's median seconds.
Status timeSparseAllreducePhases(mgsrt_ctx_t *ctx, int workers, int rank, int64_t k, int64_t n,
                                 int reps, std::vector<PhaseSample> &phases, double &dense) {
  const std::string failure = "calibrating the sparse all-reduce";
  CalibrationCollective c = CalibrationCollective::sparseAllreduce(ctx, k, n, workers, rank);
  if (!c.ok())
    return ctxError(ctx, failure);
  const char *names[] = {"sparse_allreduce regions", "sparse_allreduce reduce",
                         "sparse_allreduce gather", "sparse_allreduce dense result"};
  const int64_t gatherRounds = workers > 1 ? floorLog2(workers - 1) + 1 : 0;
  const double messages[] = {gtopkShape(workers, k).messages, static_cast<double>(workers - 1),
                             static_cast<double>(gatherRounds), 0};
  std::vector<double> seconds[4], bytes[4];
  int64_t wait[1] = {0};
  for (int r = 0; r <= reps; ++r) {
    mgsrt_ctx_record_trace(ctx, 1);
    if (c.start() != MGSRT_OK || mgsrt_comm_wait(ctx, wait, nullptr) != MGSRT_OK ||
        mgsrt_synchronize(ctx) != MGSRT_OK)
      return ctxError(ctx, failure);
    for (int i = 0; i < 4; ++i) {
      double t = 0, b = 0;
      if (!tracedPhase(ctx, names[i], t, b)) {
        mgsrt_ctx_record_trace(ctx, 0);
        return Status::error(MGSRT_ERROR_BACKEND,
                             failure + ": the timeline has no phase '" + names[i] + "'");
      }
      if (r > 0) { // the first is a warm-up
        seconds[i].push_back(t);
        bytes[i].push_back(b);
      }
    }
    mgsrt_ctx_record_trace(ctx, 0);
  }
  phases.clear();
  for (int i = 0; i < 3; ++i)
    phases.push_back({messages[i], median(bytes[i]), median(seconds[i])});
  dense = median(seconds[3]);
  return Status::success();
}
} // namespace

Status measureSparseCollectives(mgsrt_ctx_t *ctx, int workers, int rank,
                                const std::vector<std::pair<int64_t, double>> &topk, int64_t k,
                                int64_t n, LinearCost &gtopk, LinearCost &sparseAllreduce) {
  const int reps = 7;
  std::vector<std::pair<MessageShape, double>> g;
  for (int64_t kg : {1, 64, 1024, 16384, 131072}) {
    CalibrationCollective c = CalibrationCollective::gtopk(ctx, kg, 4 * workers * kg, workers,
                                                           rank);
    std::vector<double> t;
    if (!c.ok() || !timeCollective(ctx, c, reps, t))
      return ctxError(ctx, "calibrating the global top-k");
    const MessageShape shape = gtopkShape(workers, kg);
    // The planner charges the merges as top-k of 2k entries: the rest is
    // messages.
    g.emplace_back(shape, median(t) - shape.merges * topkSecondsAt(topk, 2 * kg));
  }
  gtopk = fitMessages(g);
  std::vector<PhaseSample> phases;
  double dense = 0;
  if (Status st = timeSparseAllreducePhases(ctx, workers, rank, k, n, reps, phases, dense);
      !st.ok())
    return st;
  sparseAllreduce = fitPhases(phases);
  sparseAllreduce.perElement = dense / static_cast<double>(n);
  return Status::success();
}

} // namespace mgs::rt::driver
