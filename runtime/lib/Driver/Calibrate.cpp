//===- Calibrate.cpp - Measuring a machine for the planner ----------------===//
//
// The measurements Calibrate.h declares (but the sparse collectives', in
// CalibratePhases.cpp), and the executable's --calibrate
// (Driver::runCalibration), which runs them on the model and writes the
// profile.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "CalibrateSupport.h"
#include "Driver.h"
#include "FileIO.h"

#include "mgsrt/contract.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <sstream>

namespace mgs::rt::driver {

namespace calibration {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool timeCollective(mgsrt_ctx_t *ctx, CalibrationCollective &c, int reps, std::vector<double> &t) {
  int64_t wait[1] = {0};
  for (int r = 0; r <= reps; ++r) {
    if (mgsrt_synchronize(ctx) != MGSRT_OK)
      return false;
    double t0 = now();
    if (c.start() != MGSRT_OK || mgsrt_comm_wait(ctx, wait, nullptr) != MGSRT_OK ||
        mgsrt_synchronize(ctx) != MGSRT_OK)
      return false;
    if (r > 0)
      t.push_back(now() - t0);
  }
  return true;
}

Status ctxError(mgsrt_ctx_t *ctx, const std::string &what) {
  const mgsrt_status_t code = mgsrt_ctx_status(ctx);
  return Status::error(code != MGSRT_OK ? code : MGSRT_ERROR_BACKEND,
                       what + ": " + mgsrt_ctx_message(ctx));
}

/// Least squares fit of t = alpha + beta * x in relative error (each point
/// weighted 1 / t^2): plain least squares over sizes spanning five orders of
/// magnitude is decided by the largest ones, and its start-up cost came out
/// negative on a real 1 Gbit/s network. Clamped to non-negative costs.
LinearCost fit(const std::vector<std::pair<double, double>> &points) {
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : points) {
    const double w = 1.0 / std::max(y * y, 1e-24);
    s += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  LinearCost c;
  const double den = s * sxx - sx * sx;
  c.beta = den > 0 ? (s * sxy - sx * sy) / den : 0;
  if (c.beta < 0)
    c.beta = 0;
  c.alpha = s > 0 ? (sy - c.beta * sx) / s : 0;
  if (c.alpha < 0) {
    // Refit the slope alone through the origin.
    c.alpha = 0;
    c.beta = sxx > 0 ? sxy / sxx : 0;
  }
  return c;
}

int64_t floorLog2(int64_t p) {
  int64_t r = 0;
  while ((int64_t(1) << (r + 1)) <= p)
    ++r;
  return r;
}

} // namespace calibration

using namespace calibration;

namespace {

/// A failure `runStep` reported already: an empty message.
Status reported(mgsrt_ctx_t *ctx) {
  const mgsrt_status_t code = mgsrt_ctx_status(ctx);
  return Status::error(code != MGSRT_OK ? code : MGSRT_ERROR_BACKEND, "");
}

} // namespace

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    out += ch;
  }
  return out;
}

Status allGatherValues(mgsrt_ctx_t *ctx, int workers, int rank, const std::vector<double> &mine,
                       std::vector<double> &all) {
  const size_t m = mine.size();
  std::vector<float> host(m * workers, 0.0f);
  for (size_t j = 0; j < m; ++j)
    host[rank * m + j] = static_cast<float>(mine[j]);
  DeviceMemory buf(ctx, std::max<size_t>(4, host.size() * 4));
  int64_t desc[mgs::contract::AllReduceDesc::Size] = {}; // slot 0
  desc[mgs::contract::AllReduceDesc::Count] = static_cast<int64_t>(host.size());
  void *bufs[1] = {buf.get()};
  int64_t wait[1] = {0};
  if (!buf.get() ||
      mgsrt_copy_to_device(ctx, buf.get(), host.data(), host.size() * 4) != MGSRT_OK ||
      mgsrt_allreduce_start(ctx, desc, bufs) != MGSRT_OK ||
      mgsrt_comm_wait(ctx, wait, nullptr) != MGSRT_OK ||
      mgsrt_copy_to_host(ctx, host.data(), buf.get(), host.size() * 4) != MGSRT_OK)
    return ctxError(ctx, "exchanging the ranks' times");
  // The allreduce averages: a sum of one rank's value and zeros, over P.
  all.resize(host.size());
  for (size_t i = 0; i < host.size(); ++i)
    all[i] = static_cast<double>(host[i]) * workers;
  return Status::success();
}

Status measureLayers(mgsrt_ctx_t *ctx, const Manifest &m, int steps,
                     const std::function<bool(int)> &runStep, std::vector<Calibration::Layer> &out,
                     int workers, int rank, double *rankBackward) {
  std::map<int64_t, std::string> nameOf(m.marks.begin(), m.marks.end());
  std::map<std::string, int64_t> numelOf;
  for (const TensorSpec &p : m.params)
    numelOf[p.name] = p.numElements();
  std::map<int64_t, std::vector<double>> times; // backprop index -> per-step seconds
  std::vector<int64_t> ids, order;              // order: the first step's mark ids
  std::vector<double> secs, fromStart;          // fromStart: per step, per mark
  for (int s = 0; s < steps; ++s) {
    std::vector<double> ignored;
    if (workers > 1)
      if (Status st = allGatherValues(ctx, workers, rank, {0.0}, ignored); !st.ok())
        return st;
    const double start = now();
    mgsrt_ctx_record_marks(ctx, 1);
    if (!runStep(s))
      return reported(ctx);
    int64_t n = mgsrt_ctx_marks(ctx, nullptr, nullptr, 0);
    ids.resize(n);
    secs.resize(n);
    mgsrt_ctx_marks(ctx, ids.data(), secs.data(), n);
    mgsrt_ctx_record_marks(ctx, 0);
    if (n == 0 || ids[0] != -1)
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           "the step recorded no start-of-backprop mark (was it built with mgsc "
                           "--profile-generate?)");
    if (s == 0)
      order = ids;
    if (ids != order)
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           "the steps recorded their marks in different orders");
    for (int64_t i = 1; i < n; ++i)
      times[ids[i]].push_back(secs[i] - secs[i - 1]);
    for (int64_t i = 0; i < n; ++i)
      fromStart.push_back(secs[i] - start);
  }
  out.clear();
  // Forward order: the reverse of backprop order.
  for (auto it = nameOf.rbegin(); it != nameOf.rend(); ++it) {
    auto t = times.find(it->first);
    if (t == times.end())
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           "no mark was recorded for the gradient of '" + it->second + "'");
    out.push_back({it->second, numelOf[it->second], median(t->second)});
  }
  double summed = 0;
  for (const Calibration::Layer &l : out)
    summed += l.backward;
  if (rankBackward)
    *rankBackward = summed;
  if (workers <= 1)
    return Status::success();

  // The slowest rank's marks: per step and mark, the maximum over the ranks
  // of the time from the step's start; the first mark (backprop starts) is
  // taken at the median rank.
  std::vector<double> all;
  if (Status st = allGatherValues(ctx, workers, rank, fromStart, all); !st.ok())
    return st;
  const size_t marks = order.size(), per = fromStart.size();
  std::vector<double> edge(marks);
  for (size_t i = 0; i < marks; ++i) {
    std::vector<double> perStep;
    for (int s = 0; s < steps; ++s) {
      std::vector<double> ranks;
      for (int r = 0; r < workers; ++r)
        ranks.push_back(all[r * per + s * marks + i]);
      perStep.push_back(i == 0 ? median(ranks) : *std::max_element(ranks.begin(), ranks.end()));
    }
    edge[i] = median(perStep);
  }
  std::map<int64_t, double> slowest; // mark id -> its backward
  for (size_t i = 1; i < marks; ++i)
    slowest[order[i]] = std::max(0.0, edge[i] - std::max(edge[i - 1], edge[0]));
  for (auto [i, it] = std::pair{size_t(0), nameOf.rbegin()}; it != nameOf.rend(); ++it, ++i)
    out[i].backward = slowest[it->first];
  return Status::success();
}

Status measureTopK(mgsrt_ctx_t *ctx, double density, int64_t maxN,
                   std::vector<std::pair<int64_t, double>> &out, int workers, int rank) {
  out.clear();
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  for (int64_t n = 16;; n *= 4) {
    const int64_t k = mgs::contract::topkCount(n, density);
    std::vector<float> host(n);
    for (float &x : host)
      x = dist(rng);
    std::vector<float> zeros(n, 0.0f);
    DeviceMemory grad(ctx, n * 4), residual(ctx, n * 4), values(ctx, k * 4), indices(ctx, k * 4);
    if (!grad.get() || !residual.get() || !values.get() || !indices.get() ||
        mgsrt_copy_to_device(ctx, grad.get(), host.data(), n * 4) != MGSRT_OK)
      return ctxError(ctx, "calibrating top-k");
    int64_t desc[mgs::contract::TopKDesc::Size] = {};
    desc[mgs::contract::TopKDesc::Count] = n;
    desc[mgs::contract::TopKDesc::K] = k;
    void *bufs[4] = {grad.get(), residual.get(), values.get(), indices.get()};
    // Repetitions: enough for ~0.2 s at the largest sizes, at least 5.
    const int reps = n >= (1 << 22) ? 5 : n >= (1 << 16) ? 11 : 31;
    std::vector<double> t;
    if (workers > 1) // the ranks start each size together
      if (Status st = allGatherValues(ctx, workers, rank, {0.0}, t); !st.ok())
        return st;
    t.clear();
    for (int r = 0; r <= reps; ++r) {
      if (mgsrt_copy_to_device(ctx, residual.get(), zeros.data(), n * 4) != MGSRT_OK ||
          mgsrt_synchronize(ctx) != MGSRT_OK)
        return ctxError(ctx, "calibrating top-k");
      double t0 = now();
      if (mgsrt_topk_sparsify(ctx, desc, bufs) != MGSRT_OK || mgsrt_synchronize(ctx) != MGSRT_OK)
        return ctxError(ctx, "calibrating top-k");
      if (r > 0) // the first is a warm-up
        t.push_back(now() - t0);
    }
    if (workers > 1) {
      // Each repetition at its slowest rank.
      std::vector<double> all;
      if (Status st = allGatherValues(ctx, workers, rank, t, all); !st.ok())
        return st;
      for (size_t r = 0; r < t.size(); ++r)
        for (int q = 0; q < workers; ++q)
          t[r] = std::max(t[r], all[q * t.size() + r]);
    }
    out.emplace_back(n, median(t));
    if (n >= maxN)
      break;
  }
  return Status::success();
}

LinearCost anchorBeta(LinearCost c, double bytes, double seconds) {
  const double slope = bytes > 0 ? (seconds - c.alpha) / bytes : 0;
  if (slope > 0)
    c.beta = slope;
  return c;
}

Status measureCollectives(mgsrt_ctx_t *ctx, int workers, int64_t largestN,
                          LinearCost &allgather, LinearCost &allreduce) {
  const int reps = 7;
  std::vector<std::pair<double, double>> gather, reduce;
  for (int64_t k : {1, 64, 1024, 16384, 131072}) {
    CalibrationCollective c = CalibrationCollective::allgather(ctx, k, workers);
    std::vector<double> t;
    if (!c.ok() || !timeCollective(ctx, c, reps, t))
      return ctxError(ctx, "calibrating the allgather");
    gather.emplace_back(c.bytes(), median(t));
  }
  const int64_t largestFitted = 1048576;
  std::vector<int64_t> sizes = {1, 256, 4096, 65536, largestFitted};
  if (largestN > largestFitted)
    sizes.push_back(largestN);
  for (int64_t n : sizes) {
    CalibrationCollective c = CalibrationCollective::allreduce(ctx, n);
    std::vector<double> t;
    // The model's largest gradient: 3 runs (it may take seconds on a slow link).
    if (!c.ok() || !timeCollective(ctx, c, n > largestFitted ? 3 : reps, t))
      return ctxError(ctx, "calibrating the allreduce");
    reduce.emplace_back(c.bytes(), median(t));
  }
  allgather = fit(gather);
  if (largestN > largestFitted) {
    auto [bytes, seconds] = reduce.back();
    reduce.pop_back();
    allreduce = anchorBeta(fit(reduce), bytes, seconds);
  } else {
    allreduce = fit(reduce);
  }
  return Status::success();
}

MessageShape gtopkShape(int workers, int64_t k) {
  if (workers <= 1)
    return {};
  const bool pow2 = (workers & (workers - 1)) == 0;
  const double rounds = static_cast<double>(floorLog2(workers) + (pow2 ? 0 : 2));
  return {rounds, rounds * 8.0 * static_cast<double>(k),
          static_cast<double>(floorLog2(workers) + (pow2 ? 0 : 1))};
}

MessageShape sparseAllreduceShape(int workers, int64_t k, int64_t n) {
  if (workers <= 1)
    return {};
  const double p = workers, rounds = gtopkShape(workers, k).messages;
  const double gatherRounds = static_cast<double>(floorLog2(workers - 1) + 1);
  const double entries = 8.0 * static_cast<double>(k), dense = 4.0 * static_cast<double>(n);
  return {rounds + (p - 1.0) + gatherRounds,
          rounds * 8.0 * (p - 1.0) + (p - 1.0) * (entries / p + std::min(entries, dense / p)), 0};
}

Status measureCollectiveCpu(mgsrt_ctx_t *ctx, int workers,
                            const std::function<double(int)> &runStep, LinearCost &allgather,
                            LinearCost &allreduce, double &stepSeconds) {
  int stepIndex = 0;
  std::vector<double> alone, unloadedSteps;
  for (int r = 0; r < 3; ++r) {
    double t = runStep(stepIndex++);
    if (t < 0)
      return reported(ctx);
    alone.push_back(t);
  }
  const double step = median(alone);
  unloadedSteps = alone;
  // Bytes whose fitted time is half a step: the collective's CPU work then
  // falls inside the step it runs beside.
  auto bytesFor = [&](const LinearCost &c) {
    double b = c.beta > 0 ? (0.5 * step - c.alpha) / c.beta : 0;
    return std::clamp(b, double(1 << 16), double(1 << 26));
  };
  auto measure = [&](const char *what, CalibrationCollective c, LinearCost &cost) {
    const std::string failure = std::string("calibrating the ") + what + "'s compute time";
    if (!c.ok())
      return ctxError(ctx, failure);
    std::vector<double> stolen;
    int64_t wait[1] = {0};
    for (int r = 0; r < 5; ++r) {
      const double unloaded = runStep(stepIndex++);
      if (unloaded < 0)
        return reported(ctx);
      unloadedSteps.push_back(unloaded);
      if (c.start() != MGSRT_OK)
        return ctxError(ctx, failure);
      const double loaded = runStep(stepIndex++);
      if (loaded < 0)
        return reported(ctx);
      if (mgsrt_comm_wait(ctx, wait, nullptr) != MGSRT_OK || mgsrt_synchronize(ctx) != MGSRT_OK)
        return ctxError(ctx, failure);
      stolen.push_back(loaded - unloaded);
    }
    cost.cpuPerByte = std::max(0.0, median(stolen)) / c.bytes();
    const double running = cost.alpha + cost.beta * c.bytes();
    cost.cpuFraction = running > 0 ? cost.cpuPerByte * c.bytes() / running : 0.0;
    return Status::success();
  };

  // The sizes must be the same on every rank (each rank's fit and step time
  // differ a little): rank 0's, broadcast. A CPU context: host memory.
  int64_t sizes[2] = {
      std::max<int64_t>(1, static_cast<int64_t>(bytesFor(allgather) / (8.0 * workers))),
      std::max<int64_t>(1, static_cast<int64_t>(bytesFor(allreduce) / 4.0))};
  {
    int64_t desc[mgs::contract::BroadcastDesc::Size] = {};
    desc[mgs::contract::BroadcastDesc::Bytes] = sizeof sizes; // root: rank 0
    void *bufs[1] = {sizes};
    if (mgsrt_broadcast(ctx, desc, bufs) != MGSRT_OK)
      return ctxError(ctx, "calibrating the collectives' compute time");
  }
  if (Status s =
          measure("allgather", CalibrationCollective::allgather(ctx, sizes[0], workers), allgather);
      !s.ok())
    return s;
  if (Status s = measure("allreduce", CalibrationCollective::allreduce(ctx, sizes[1]), allreduce);
      !s.ok())
    return s;
  stepSeconds = median(unloadedSteps);
  return Status::success();
}

std::string profileJson(const Calibration &c) {
  std::ostringstream os;
  os.precision(9);
  os << "{\n \"source\": \"" << jsonEscape(c.source) << "\",\n";
  os << " \"workers\": " << c.workers << ",\n \"batch_size\": " << c.batchSize
     << ",\n \"density\": " << c.density << ",\n";
  os << " \"topk\": {\"points\": [";
  for (size_t i = 0; i < c.topk.size(); ++i)
    os << (i ? ", " : "") << "[" << c.topk[i].first << ", " << c.topk[i].second << "]";
  os << "]},\n";
  for (auto [key, cost] : {std::pair<const char *, const LinearCost *>{"allgather", &c.allgather},
                           {"allreduce", &c.allreduce},
                           {"gtopk", c.gtopk ? &*c.gtopk : nullptr},
                           {"sparse_allreduce", c.sparseAllreduce ? &*c.sparseAllreduce : nullptr}})
    if (cost) {
      os << " \"" << key << "\": {\"alpha\": " << cost->alpha << ", \"beta\": " << cost->beta
         << ", \"cpu_per_byte\": " << cost->cpuPerByte;
      if (cost->cpuFraction)
        os << ", \"cpu_fraction\": " << *cost->cpuFraction;
      if (cost->perElement != 0)
        os << ", \"per_element\": " << cost->perElement;
      os << "},\n";
    }
  if (c.stepOffset)
    os << " \"step_offset\": " << *c.stepOffset << ",\n";
  os << " \"layers\": [\n";
  for (size_t i = 0; i < c.layers.size(); ++i)
    os << "  {\"name\": \"" << jsonEscape(c.layers[i].name)
       << "\", \"numel\": " << c.layers[i].numel << ", \"backward\": " << c.layers[i].backward
       << "}" << (i + 1 < c.layers.size() ? ",\n" : "\n");
  os << " ]\n}\n";
  return os.str();
}

//===--- The executable's --calibrate -------------------------------------===//

// --calibrate: measures this machine for the planner and writes the profile.
int Driver::runCalibration() {
  if (!m.instrumented)
    return error("--calibrate needs a calibration build of the model: compile "
                 "it with mgsc "
                 "--profile-generate");
  const int warmup = 3, steps = 10;
  std::printf("calibrating on %d worker(s): %d steps of backprop (after %d "
              "warm-up steps), "
              "top-k, collectives\n",
              workers, steps, warmup);
  std::fflush(stdout);
  std::vector<int64_t> order = trainSet;
  shuffleForEpoch(order, o.seed, 0);
  auto runStep = [&](int s) {
    int64_t it = s % itersPerEpoch;
    fillBatch(data, batchIndices(order, it), m.batchSize);
    if (std::any_of(inputs.begin(), inputs.end(), [&](Buffer &b) { return toDevice(b) != 0; }) ||
        toDevice(labels))
      return false;
    // The parameters change as in training (lr from --lr): the times do not
    // depend on the values.
    mgsrt_ctx_set_sgd(ctx, static_cast<float>(o.lr), static_cast<float>(o.momentum),
                      static_cast<float>(o.weightDecay));
    if (mgs_train_step(ctx, trainIo.data()) != MGSRT_OK || mgsrt_synchronize(ctx) != MGSRT_OK) {
      error("mgs_train_step failed while calibrating: %s", mgsrt_ctx_message(ctx));
      return false;
    }
    return true;
  };
  for (int s = 0; s < warmup; ++s)
    if (!runStep(s))
      return 1;
  Calibration c;
  double rankBackward = 0;
  Status st = measureLayers(
      ctx, m, steps, [&](int s) { return runStep(warmup + s); }, c.layers, workers, rank,
      &rankBackward);
  if (!st.ok())
    return st.message.empty() ? 1 : error("--calibrate: %s", st.message.c_str());
  int64_t total = 0, largest = 0;
  for (const Calibration::Layer &l : c.layers) {
    total += l.numel;
    largest = std::max(largest, l.numel);
  }
  c.workers = workers;
  c.batchSize = m.batchSize;
  c.density = o.calibrateDensity;
  st = measureTopK(ctx, o.calibrateDensity, total, c.topk, workers, rank);
  if (st.ok())
    st = measureCollectives(ctx, workers, largest, c.allgather, c.allreduce);
  if (!st.ok())
    return error("--calibrate: %s", st.message.c_str());
  // What the collectives take from backprop on the same cores (on a GPU the
  // step does not run on them: left at 0).
  if (workers > 1 && !m.cuda) {
    auto timedStep = [&](int s) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!runStep(warmup + steps + s))
        return -1.0;
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double step = 0;
    st = measureCollectiveCpu(ctx, workers, timedStep, c.allgather, c.allreduce, step);
    if (!st.ok())
      return st.message.empty() ? 1 : error("--calibrate: %s", st.message.c_str());
    // Against the median rank's backward: the ranks' skew is the pipeline's.
    c.stepOffset = std::max(0.0, step - rankBackward);
    // The global top-k's and the sparse all-reduce's messages (the CPU
    // runtime has them; a GPU profile leaves them out: the planner derives
    // them from the allgather). Their compute per byte is the allgather's.
    c.gtopk.emplace();
    c.sparseAllreduce.emplace();
    // The sparse all-reduce at the model's largest gradient and its k: the
    // size of the messages training sends.
    st = measureSparseCollectives(ctx, workers, rank, c.topk,
                                  mgs::contract::topkCount(largest, o.calibrateDensity), largest,
                                  *c.gtopk, *c.sparseAllreduce);
    if (!st.ok())
      return error("--calibrate: %s", st.message.c_str());
    c.gtopk->cpuPerByte = c.sparseAllreduce->cpuPerByte = c.allgather.cpuPerByte;
    c.gtopk->cpuFraction = c.sparseAllreduce->cpuFraction = c.allgather.cpuFraction;
  }
  c.source = "mgs --calibrate: " + o.program + " on " + std::to_string(workers) + " worker(s)" +
             (m.cuda ? " (GPU)" : " (CPU)") + ", batch " + std::to_string(m.batchSize) +
             ", median of " + std::to_string(steps) + " steps";
  double backward = 0;
  for (const Calibration::Layer &l : c.layers)
    backward += l.backward;
  std::printf("backward: %.3f ms over %zu layers; top-k at n = %lld: %.3f ms; "
              "allgather "
              "alpha %.3g s beta %.3g s/B cpu %.3g s/B; allreduce alpha %.3g s "
              "beta %.3g s/B "
              "cpu %.3g s/B",
              backward * 1e3, c.layers.size(), static_cast<long long>(c.topk.back().first),
              c.topk.back().second * 1e3, c.allgather.alpha, c.allgather.beta,
              c.allgather.cpuPerByte, c.allreduce.alpha, c.allreduce.beta, c.allreduce.cpuPerByte);
  if (c.gtopk && c.sparseAllreduce)
    std::printf("; a message of the gtopk alpha %.3g s beta %.3g s/B, of the "
                "sparse_allreduce "
                "alpha %.3g s beta %.3g s/B",
                c.gtopk->alpha, c.gtopk->beta, c.sparseAllreduce->alpha, c.sparseAllreduce->beta);
  if (c.stepOffset)
    std::printf("; cpu fraction: allgather %.3g, allreduce %.3g; step offset %.3f ms; "
                "sparse_allreduce per element %.3g s",
                c.allgather.cpuFraction.value_or(0), c.allreduce.cpuFraction.value_or(0),
                *c.stepOffset * 1e3, c.sparseAllreduce ? c.sparseAllreduce->perElement : 0.0);
  std::printf("\n");
  if (rank != 0)
    return 0;
  AtomicWriter w;
  std::string json = profileJson(c);
  w.open(o.calibrate);
  w.write(json.data(), json.size());
  if (Status s = w.commit(); !s.ok())
    return error(s);
  std::printf("wrote the profile %s (use it with mgsc --profile-use)\n", o.calibrate.c_str());
  std::fflush(stdout);
  return 0;
}

} // namespace mgs::rt::driver
