//===- DeviceTest.cpp - Attaching a context to a GPU, memory, errors ------===//

#include "GpuTestUtil.h"

#include <cstdint>

using namespace mgsrt_test;

namespace {

TEST(DeviceAttach, NoGpuIsAClearUnavailableError) {
  // On a machine with a GPU this attaches; without one it must say so with
  // MGSRT_ERROR_UNAVAILABLE (never crash), and the context stays on the CPU.
  Ctx ctx;
  mgsrt_status_t s = mgsrt_ctx_set_device(ctx, MGSRT_DEVICE_CUDA, 0);
  if (s == MGSRT_OK) {
    EXPECT_EQ(mgsrt_ctx_device(ctx), MGSRT_DEVICE_CUDA);
    return;
  }
  EXPECT_EQ(s, MGSRT_ERROR_UNAVAILABLE);
  EXPECT_EQ(ctx.message().rfind("no CUDA device is available", 0), 0u) << ctx.message();
  EXPECT_EQ(mgsrt_ctx_device(ctx), MGSRT_DEVICE_CPU);
}

TEST(DeviceAttach, UnknownDeviceIsRejected) {
  Ctx ctx;
  EXPECT_EQ(mgsrt_ctx_set_device(ctx, 7, 0), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("unknown device 7"), std::string::npos) << ctx.message();
}

// A CPU context's host memory is its device memory: aligned, and copied at
// once (runs without a GPU too).
TEST(HostMemory, ACpuContextsIsAlignedAndItsAsyncCopiesCopyAtOnce) {
  Ctx ctx;
  void *host = nullptr, *dev = nullptr;
  const std::vector<float> values = randomVec(1000);
  const size_t bytes = values.size() * sizeof(float);
  ASSERT_EQ(mgsrt_host_alloc(ctx, bytes, &host), MGSRT_OK) << ctx.message();
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
  ASSERT_EQ(mgsrt_alloc(ctx, bytes, &dev), MGSRT_OK) << ctx.message();
  std::memcpy(host, values.data(), bytes);
  ASSERT_EQ(mgsrt_copy_to_device_async(ctx, dev, host, bytes), MGSRT_OK) << ctx.message();
  std::memset(host, 0, bytes); // a CPU context has copied already
  std::vector<float> back(values.size());
  std::memcpy(back.data(), dev, bytes);
  EXPECT_TRUE(bitsEqual(back, values));
  void *none = host;
  EXPECT_EQ(mgsrt_host_alloc(ctx, 0, &none), MGSRT_OK);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(mgsrt_host_alloc(ctx, 8, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mgsrt_copy_to_device_async(ctx, nullptr, host, bytes), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("copy: null pointer"), std::string::npos) << ctx.message();
  mgsrt_host_free(ctx, host);
  mgsrt_free(ctx, dev);
}

using Device = GpuTest;

// Page-locked memory and copies that do not wait, as the training driver
// uses them: two host slots in turn, the next batch written into the other
// slot while the step's copy and kernel may still be queued; each step's
// kernel sees its own batch.
TEST_F(Device, AsyncCopiesFromPageLockedMemoryArriveInOrder) {
  const size_t n = 1 << 20, bytes = n * sizeof(float);
  struct Slots {
    mgsrt_ctx_t *ctx;
    void *ptr[2] = {nullptr, nullptr};
    ~Slots() {
      for (void *p : ptr)
        mgsrt_host_free(ctx, p);
    }
  } slots{gpu};
  for (void *&slot : slots.ptr) {
    ASSERT_EQ(mgsrt_host_alloc(gpu, bytes, &slot), MGSRT_OK) << gpu.message();
    ASSERT_NE(slot, nullptr);
  }
  DeviceBuffer<float> batch(gpu, n), copy(gpu, n);
  std::vector<std::vector<float>> values;
  for (int step = 0; step < 5; ++step)
    values.push_back(randomVec(static_cast<int64_t>(n)));
  std::memcpy(slots.ptr[0], values[0].data(), bytes);
  for (int step = 0; step < 4; ++step) {
    ASSERT_EQ(mgsrt_copy_to_device_async(gpu, batch.ptr, slots.ptr[step % 2], bytes), MGSRT_OK)
        << gpu.message();
    // A kernel queued after the copy reads what it copied.
    int64_t desc[] = {static_cast<int64_t>(n)};
    void *bufs[] = {batch.ptr, copy.ptr};
    ASSERT_EQ(mgsrt_copy(gpu, desc, bufs), MGSRT_OK) << gpu.message();
    // The next batch, into the other slot, before the wait below.
    std::memcpy(slots.ptr[(step + 1) % 2], values[step + 1].data(), bytes);
    EXPECT_TRUE(bitsEqual(copy.download(), values[step])) << "step " << step;
  }
}

TEST_F(Device, MissingOrdinalIsRejected) {
  Ctx other;
  EXPECT_EQ(mgsrt_ctx_set_device(other, MGSRT_DEVICE_CUDA, 4096), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(other.message().find("GPU 4096 does not exist"), std::string::npos)
      << other.message();
}

TEST_F(Device, CopiesRoundTrip) {
  std::vector<float> host = randomVec(1 << 20);
  DeviceBuffer<float> d(gpu, host);
  EXPECT_TRUE(bitsEqual(d.download(), host));
  EXPECT_EQ(mgsrt_synchronize(gpu), MGSRT_OK) << gpu.message();
}

TEST_F(Device, AttachingTwiceIsAnError) {
  EXPECT_EQ(mgsrt_ctx_set_device(gpu, MGSRT_DEVICE_CUDA, 0), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(gpu.message().find("already attached"), std::string::npos) << gpu.message();
}

} // namespace
