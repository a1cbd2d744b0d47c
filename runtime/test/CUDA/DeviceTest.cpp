//===- DeviceTest.cpp - Attaching a context to a GPU, memory, errors ------===//

#include "GpuTestUtil.h"

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

using Device = GpuTest;

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
