//===- ReduceTest.cpp - GPU ReduceSum / ReduceMean and gradient vs the CPU ===//
//
// The GPU sums in the CPU's order in double: the results are the CPU's bit
// for bit, forward and backward.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

using namespace mgsrt_test;

namespace {

using GpuReduce = GpuTest;

std::vector<float> runCpu(mgsrt_ctx_t *ctx, bool bwd, const std::vector<int64_t> &desc,
                          std::vector<float> in, size_t n) {
  std::vector<float> out(n);
  void *bufs[] = {in.data(), out.data()};
  EXPECT_OK(ctx, (bwd ? mgsrt_reduce_bwd : mgsrt_reduce_fwd)(ctx, desc.data(), bufs));
  return out;
}

std::vector<float> runGpu(mgsrt_ctx_t *ctx, bool bwd, const std::vector<int64_t> &desc,
                          const std::vector<float> &in, size_t n) {
  DeviceBuffer<float> x(ctx, in);
  DeviceBuffer<float> out(ctx, n);
  void *bufs[] = {x.ptr, out.ptr};
  EXPECT_OK(ctx, (bwd ? mgsrt_reduce_bwd : mgsrt_reduce_fwd)(ctx, desc.data(), bufs));
  EXPECT_OK(ctx, mgsrt_synchronize(ctx));
  return out.download();
}

TEST_F(GpuReduce, ForwardAndBackwardEqualTheCpuBitForBit) {
  struct Case {
    std::vector<int64_t> in, out;
  };
  const Case cases[] = {
      {{4, 8, 5, 5}, {4, 8, 1, 1}},     // x.mean([2, 3]): global average pooling
      {{2, 65, 192}, {2, 65, 1}},       // LayerNorm's mean over the last dim
      {{3, 7, 11}, {1, 7, 1}},          // outer and inner dims reduced, the middle kept
      {{6, 1, 9}, {1, 1, 1}},           // everything (a unit dim in between)
      {{5, 4}, {5, 4}},                 // nothing
      {{1000, 300}, {1, 300}},          // a long reduced dim, many outputs
      {{2, 3, 4, 5, 6}, {2, 1, 4, 1, 6}}, // alternating
  };
  for (const Case &c : cases) {
    for (double scale : {1.0, 0.125}) {
      SCOPED_TRACE(::testing::PrintToString(c.in) + " -> " + ::testing::PrintToString(c.out) +
                   " scale " + std::to_string(scale));
      const std::vector<int64_t> desc = reduceDesc(c.in, c.out, scale);
      const size_t inN = static_cast<size_t>(product(c.in));
      const size_t outN = static_cast<size_t>(product(c.out));
      std::vector<float> x = randomVec(static_cast<int64_t>(inN), -3.0f, 3.0f);
      EXPECT_TRUE(bitsEqual(runGpu(gpu, false, desc, x, outN), runCpu(cpu, false, desc, x, outN)))
          << "forward";
      std::vector<float> dy = randomVec(static_cast<int64_t>(outN));
      EXPECT_TRUE(bitsEqual(runGpu(gpu, true, desc, dy, inN), runCpu(cpu, true, desc, dy, inN)))
          << "backward";
    }
  }
}

TEST_F(GpuReduce, SumOverAnEmptyDimIsZero) {
  const std::vector<int64_t> desc = reduceDesc({3, 0}, {3, 1}, 1.0);
  DeviceBuffer<float> x(gpu, std::vector<float>(1));
  DeviceBuffer<float> y(gpu, std::vector<float>{7.0f, 7.0f, 7.0f});
  void *bufs[] = {x.ptr, y.ptr};
  EXPECT_OK(gpu, mgsrt_reduce_fwd(gpu, desc.data(), bufs));
  EXPECT_OK(gpu, mgsrt_synchronize(gpu));
  EXPECT_TRUE(bitsEqual(y.download(), std::vector<float>(3, 0.0f)));
}

TEST_F(GpuReduce, BadDescriptorIsRefusedAsOnTheCpu) {
  const std::vector<int64_t> desc = reduceDesc({4, 5}, {4, 2}, 1.0);
  DeviceBuffer<float> x(gpu, std::vector<float>(20));
  DeviceBuffer<float> y(gpu, std::vector<float>(8));
  void *bufs[] = {x.ptr, y.ptr};
  EXPECT_EQ(mgsrt_reduce_fwd(gpu, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mgsrt_ctx_message(gpu)).find("is neither the input's (5) nor 1"),
            std::string::npos)
      << mgsrt_ctx_message(gpu);
}

} // namespace
