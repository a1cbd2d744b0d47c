//===- GpuTestUtil.h - Helpers of the GPU kernel tests ----------*- C++ -*-===//
//
// The GPU tests go through the C ABI only (mgsrt.h): a CPU context is the
// oracle, a context attached to the GPU runs the same kernel on the same
// input, and the results are compared. Without a GPU every test skips and
// says why (the only reason a GPU test may skip).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_CUDA_GPUTESTUTIL_H
#define MGSRT_TEST_CUDA_GPUTESTUTIL_H

#include "../Kernels/TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace mgsrt_test {

/// Attaches `ctx` to GPU 0. Returns "" on success, else why not; fails the
/// test for any reason but the absence of a GPU.
inline std::string attachGpu(mgsrt_ctx_t *ctx) {
  mgsrt_status_t s = mgsrt_ctx_set_device(ctx, MGSRT_DEVICE_CUDA, 0);
  if (s == MGSRT_OK)
    return "";
  std::string why = mgsrt_ctx_message(ctx);
  if (s != MGSRT_ERROR_UNAVAILABLE || why.rfind("no CUDA device is available", 0) != 0)
    ADD_FAILURE() << "attaching the GPU failed for a reason other than its absence: " << why;
  return why.empty() ? "?" : why;
}

/// A CPU context (the oracle) and a GPU context; skips when no GPU exists.
class GpuTest : public ::testing::Test {
protected:
  Ctx cpu{7};
  Ctx gpu{7};
  void SetUp() override {
    std::string why = attachGpu(gpu);
    if (!why.empty())
      GTEST_SKIP() << "GPU test skipped: " << why;
  }
};

/// Device memory of the GPU context, freed at scope end.
template <typename T> struct DeviceBuffer {
  mgsrt_ctx_t *ctx = nullptr;
  T *ptr = nullptr;
  size_t count = 0;
  DeviceBuffer(mgsrt_ctx_t *c, size_t n) : ctx(c), count(n) {
    void *p = nullptr;
    EXPECT_EQ(mgsrt_alloc(ctx, n * sizeof(T), &p), MGSRT_OK) << mgsrt_ctx_message(ctx);
    ptr = static_cast<T *>(p);
  }
  DeviceBuffer(mgsrt_ctx_t *c, const std::vector<T> &host) : DeviceBuffer(c, host.size()) {
    upload(host);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { mgsrt_free(ctx, ptr); }
  void upload(const std::vector<T> &host) {
    EXPECT_EQ(mgsrt_copy_to_device(ctx, ptr, host.data(), host.size() * sizeof(T)), MGSRT_OK)
        << mgsrt_ctx_message(ctx);
  }
  std::vector<T> download() const {
    std::vector<T> host(count);
    EXPECT_EQ(mgsrt_copy_to_host(ctx, host.data(), ptr, count * sizeof(T)), MGSRT_OK)
        << mgsrt_ctx_message(ctx);
    return host;
  }
  operator void *() const { return ptr; }
};

/// Bitwise equality of two float vectors, reporting the first difference; any
/// two NaNs are equal (their sign and payload differ between devices: x86 makes
/// a negative default NaN, CUDA a positive one).
inline ::testing::AssertionResult bitsEqual(const std::vector<float> &a,
                                            const std::vector<float> &b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(std::isnan(a[i]) && std::isnan(b[i])))
      return ::testing::AssertionFailure() << "first difference at " << i << ": " << a[i]
                                           << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

/// Largest |a - b| / max(1, |b|) (b is the oracle). Infinite, so that any
/// bound fails, when the lengths differ or a NaN appears on either side (a
/// NaN would otherwise compare as no difference: std::max drops it); equal
/// infinities agree.
inline double maxRelDiff(const std::vector<float> &a, const std::vector<float> &b) {
  const double kFail = std::numeric_limits<double>::infinity();
  if (a.size() != b.size())
    return kFail;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i]))
      return kFail;
    if (a[i] == b[i])
      continue; // equal infinities included
    double d = std::fabs(double(a[i]) - double(b[i])) / std::max(1.0, std::fabs(double(b[i])));
    if (!(d <= worst))
      worst = d; // an infinity against a finite value: infinite
  }
  return worst;
}

} // namespace mgsrt_test

#endif // MGSRT_TEST_CUDA_GPUTESTUTIL_H
