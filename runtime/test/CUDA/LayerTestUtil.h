//===- LayerTestUtil.h - Helpers of the GPU layer-kernel tests --*- C++ -*-===//
//
// Shared by the GPU kernel tests (Conv, Gemm, Norm, Pool, Elementwise, Shape):
// run one kernel on the CPU context (the oracle) and on the GPU context over
// the same host data, and check that both reject a bad call with the same
// status and message.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_CUDA_LAYERTESTUTIL_H
#define MGSRT_TEST_CUDA_LAYERTESTUTIL_H

#include "GpuTestUtil.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace mgsrt_test::layers {

using KernelFn = mgsrt_status_t (*)(mgsrt_ctx_t *, const int64_t *, void *const *);
/// One host vector per buffer; an empty vector is a null buffer.
using Buffers = std::vector<std::vector<float>>;

/// Runs fn on a CPU context over copies of `host`; returns the buffers after.
inline Buffers runCpu(mgsrt_ctx_t *ctx, KernelFn fn, const int64_t *desc, Buffers host) {
  std::vector<void *> ptrs;
  for (auto &b : host)
    ptrs.push_back(b.empty() ? nullptr : b.data());
  EXPECT_OK(ctx, fn(ctx, desc, ptrs.data()));
  return host;
}

/// The same on the GPU context: uploads, runs, synchronizes, downloads.
inline Buffers runGpu(mgsrt_ctx_t *ctx, KernelFn fn, const int64_t *desc, const Buffers &host) {
  std::vector<std::unique_ptr<DeviceBuffer<float>>> dev;
  std::vector<void *> ptrs;
  for (const auto &b : host) {
    if (b.empty()) {
      dev.push_back(nullptr);
      ptrs.push_back(nullptr);
    } else {
      dev.push_back(std::make_unique<DeviceBuffer<float>>(ctx, b));
      ptrs.push_back(dev.back()->ptr);
    }
  }
  EXPECT_OK(ctx, fn(ctx, desc, ptrs.data()));
  EXPECT_OK(ctx, mgsrt_synchronize(ctx));
  Buffers out(host.size());
  for (size_t i = 0; i < host.size(); ++i)
    if (dev[i])
      out[i] = dev[i]->download();
  return out;
}

/// Largest |a - b| over max(1, largest |b|): the error relative to the
/// tensor's scale (for long float sums, whose order differs by device).
/// Infinite, so that any bound fails, when the lengths differ or either side
/// holds a NaN or an infinity (std::max would drop a NaN: an all-NaN result
/// would score 0).
inline double relToMax(const std::vector<float> &a, const std::vector<float> &b) {
  const double kFail = std::numeric_limits<double>::infinity();
  if (a.size() != b.size()) {
    ADD_FAILURE() << "sizes " << a.size() << " vs " << b.size();
    return kFail;
  }
  double scale = 1.0, worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i]))
      return kFail;
    scale = std::max(scale, std::fabs(double(b[i])));
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
  }
  return worst / scale;
}

/// Both contexts reject the call with the same status and message. The CPU
/// gets host scratch, the GPU device scratch, at the non-null positions.
inline void expectSameError(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, KernelFn fn,
                            const std::vector<int64_t> &desc, const std::vector<bool> &nonNull,
                            const std::string &what) {
  std::vector<float> hostScratch(1 << 14, 0.0f);
  DeviceBuffer<float> devScratch(gpu, hostScratch);
  std::vector<void *> hb, db;
  for (bool b : nonNull) {
    hb.push_back(b ? hostScratch.data() : nullptr);
    db.push_back(b ? devScratch.ptr : nullptr);
  }
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);
  mgsrt_status_t sc = fn(cpu, desc.data(), hb.data());
  mgsrt_status_t sg = fn(gpu, desc.data(), db.data());
  EXPECT_NE(sc, MGSRT_OK) << what;
  EXPECT_EQ(sg, sc) << what;
  EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu))) << what;
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);
  EXPECT_OK(gpu, mgsrt_synchronize(gpu)); // nothing was launched that failed
}

} // namespace mgsrt_test::layers

#endif // MGSRT_TEST_CUDA_LAYERTESTUTIL_H
