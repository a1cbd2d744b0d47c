//===- CalibrateSupport.h - What the calibration's files share (internal) -===//
//
// The timing helpers and the collective the calibration times, shared by
// Calibrate.cpp (layers, top-k, collectives, --calibrate) and
// CalibratePhases.cpp (the sparse collectives' message costs).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_CALIBRATESUPPORT_H
#define MGSRT_DRIVER_CALIBRATESUPPORT_H

#include "Calibrate.h"

#include "mgsrt/contract.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace mgs::rt::driver::calibration {

/// Seconds on the steady clock.
double now();

/// The median of `v` (0 when empty).
double median(std::vector<double> v);

/// Memory on the context's device, freed at scope end.
class DeviceMemory {
public:
  DeviceMemory(mgsrt_ctx_t *ctx, size_t bytes) : ctx_(ctx) { mgsrt_alloc(ctx, bytes, &ptr_); }
  ~DeviceMemory() { mgsrt_free(ctx_, ptr_); }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  void *get() const { return ptr_; }

private:
  mgsrt_ctx_t *ctx_;
  void *ptr_ = nullptr;
};

/// One collective the calibration times: its buffers on the context's
/// device, its descriptor and the bytes the cost model counts. Allgather: k
/// values and k indices sent, k * P of each received (8 k P bytes); allreduce:
/// n floats (4 n bytes); the global top-k and the balanced sparse all-reduce:
/// the bytes of the planner's messages (MessageShape), with this rank's k
/// entries spread over n (one random index in each n/k stretch, random values).
class CalibrationCollective {
public:
  enum class Kind { AllGather, AllReduce, GTopK, SparseAllReduce };
  static CalibrationCollective allgather(mgsrt_ctx_t *ctx, int64_t k, int workers) {
    CalibrationCollective c(ctx, Kind::AllGather, 8.0 * static_cast<double>(k) * workers);
    c.desc_[mgs::contract::AllGatherDesc::K] = k;
    for (int64_t count : {k, k, k * workers, k * workers})
      c.add(count);
    return c;
  }
  static CalibrationCollective allreduce(mgsrt_ctx_t *ctx, int64_t n) {
    CalibrationCollective c(ctx, Kind::AllReduce, 4.0 * static_cast<double>(n));
    c.desc_[mgs::contract::AllReduceDesc::Count] = n;
    c.add(n);
    return c;
  }
  static CalibrationCollective gtopk(mgsrt_ctx_t *ctx, int64_t k, int64_t n, int workers,
                                     int rank) {
    CalibrationCollective c(ctx, Kind::GTopK, gtopkShape(workers, k).bytes);
    c.desc_[mgs::contract::GTopKDesc::K] = k;
    c.desc_[mgs::contract::GTopKDesc::Count] = n;
    c.addEntries(k, n, rank);
    for (int64_t count : {n, k, k})
      c.add(count);
    return c;
  }
  static CalibrationCollective sparseAllreduce(mgsrt_ctx_t *ctx, int64_t k, int64_t n, int workers,
                                               int rank) {
    CalibrationCollective c(ctx, Kind::SparseAllReduce, sparseAllreduceShape(workers, k, n).bytes);
    c.desc_[mgs::contract::SparseAllReduceDesc::K] = k;
    c.desc_[mgs::contract::SparseAllReduceDesc::Count] = n;
    c.desc_[mgs::contract::SparseAllReduceDesc::Balanced] = 1;
    c.addEntries(k, n, rank);
    c.add(n);
    return c;
  }
  /// Whether every buffer was allocated and initialized.
  bool ok() const { return ok_; }
  double bytes() const { return bytes_; }
  /// Starts it in slot 0 (mgsrt_comm_wait with slot 0 completes it).
  mgsrt_status_t start() {
    switch (kind_) {
    case Kind::AllGather:
      return mgsrt_allgather_start(ctx_, desc_, bufs_);
    case Kind::AllReduce:
      return mgsrt_allreduce_start(ctx_, desc_, bufs_);
    case Kind::GTopK:
      return mgsrt_gtopk_start(ctx_, desc_, bufs_);
    case Kind::SparseAllReduce:
      return mgsrt_sparse_allreduce_start(ctx_, desc_, bufs_);
    }
    return MGSRT_ERROR_INVALID_ARGUMENT;
  }

private:
  CalibrationCollective(mgsrt_ctx_t *ctx, Kind kind, double bytes)
      : ctx_(ctx), kind_(kind), bytes_(bytes) {}
  /// A buffer of `floats` 4-byte elements holding `data` (zeros when null).
  void add(int64_t floats, const void *data = nullptr) {
    mem_.push_back(std::make_unique<DeviceMemory>(ctx_, floats * 4));
    void *p = mem_.back()->get();
    std::vector<float> zeros(data ? 0 : floats, 0.0f);
    ok_ = ok_ && p &&
          mgsrt_copy_to_device(ctx_, p, data ? data : zeros.data(), floats * 4) == MGSRT_OK;
    bufs_[mem_.size() - 1] = p;
  }
  /// k values and k distinct int32 indices of n: one in each stretch of
  /// n / k, drawn with this rank's seed.
  void addEntries(int64_t k, int64_t n, int rank) {
    std::mt19937 rng(1000 + rank);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    const int64_t stretch = n / k;
    std::vector<float> values(k);
    std::vector<int32_t> indices(k);
    for (int64_t j = 0; j < k; ++j) {
      values[j] = value(rng);
      indices[j] = static_cast<int32_t>(j * stretch + static_cast<int64_t>(rng() % stretch));
    }
    add(k, values.data());
    add(k, indices.data());
  }

  mgsrt_ctx_t *ctx_;
  Kind kind_;
  double bytes_;
  bool ok_ = true;
  std::vector<std::unique_ptr<DeviceMemory>> mem_;
  /// The descriptor (slot 0, no warm-up source, full precision): the largest
  /// one's size, zeros but the counts.
  int64_t desc_[mgs::contract::AllGatherDesc::Size + mgs::contract::SparseAllReduceDesc::Size] = {};
  void *bufs_[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
};

/// Times `reps` runs of `c` after a warm-up one, into `t`; false on failure.
bool timeCollective(mgsrt_ctx_t *ctx, CalibrationCollective &c, int reps, std::vector<double> &t);

/// The ctx's sticky failure, its message prefixed by `what`.
Status ctxError(mgsrt_ctx_t *ctx, const std::string &what);

/// Least squares fit of t = alpha + beta * x in relative error (each point
/// weighted 1 / t^2), clamped to non-negative costs.
LinearCost fit(const std::vector<std::pair<double, double>> &points);

/// floor(log2(p)) for p >= 1.
int64_t floorLog2(int64_t p);

} // namespace mgs::rt::driver::calibration

#endif // MGSRT_DRIVER_CALIBRATESUPPORT_H
