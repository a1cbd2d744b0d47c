//===- GeluTest.cpp - GPU GELU against the CPU ----------------------------===//
//
// Both devices compile Kernels/GeluMath.h (the GPU's steps as _rn
// intrinsics, the CPU's unfused), so the results must be the CPU's bit for
// bit: both forms, forward and backward, one element to a million, large
// inputs; NaN stays NaN; the descriptor and buffer errors in the CPU's words.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include "mgsrt/contract.h"

#include <cmath>
#include <limits>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

using GpuGelu = GpuTest;

TEST_F(GpuGelu, MatchesCpuBitForBit) {
  for (int64_t approximate : {int64_t{MGSRT_GELU_NONE}, int64_t{MGSRT_GELU_TANH}})
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(1 << 20) + 7}}) {
      SCOPED_TRACE("approximate " + std::to_string(approximate) + " n " + std::to_string(n));
      const std::vector<int64_t> desc = geluDesc(n, approximate);
      std::vector<float> x = randomVec(n, -12.0f, 12.0f);
      const float specials[] = {0.0f, -0.0f, 1e30f, -1e30f, 10.0f, -10.0f, 14.2f, -14.2f};
      for (size_t i = 0; i < sizeof specials / sizeof specials[0] && i < x.size(); ++i)
        x[i * 97 % x.size()] = specials[i];
      const Buffers fc = runCpu(cpu, mgsrt_gelu_fwd, desc.data(), {x, std::vector<float>(n)});
      const Buffers fg = runGpu(gpu, mgsrt_gelu_fwd, desc.data(), {x, std::vector<float>(n)});
      EXPECT_TRUE(bitsEqual(fg[1], fc[1])) << "y";
      const Buffers in = {x, randomVec(n, -2.0f, 2.0f), std::vector<float>(n)};
      const Buffers bc = runCpu(cpu, mgsrt_gelu_bwd, desc.data(), in);
      const Buffers bg = runGpu(gpu, mgsrt_gelu_bwd, desc.data(), in);
      EXPECT_TRUE(bitsEqual(bg[2], bc[2])) << "dx";
    }
}

TEST_F(GpuGelu, NaNStaysNaNAndEmptyIsANoOp) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t approximate : {int64_t{MGSRT_GELU_NONE}, int64_t{MGSRT_GELU_TANH}}) {
    const std::vector<int64_t> desc = geluDesc(2, approximate);
    const Buffers f = runGpu(gpu, mgsrt_gelu_fwd, desc.data(), {{nan, 1.0f}, {0.0f, 0.0f}});
    EXPECT_TRUE(std::isnan(f[1][0]));
    const Buffers b = runGpu(gpu, mgsrt_gelu_bwd, desc.data(), {{nan, 1.0f}, {1.0f, 1.0f}, {0, 0}});
    EXPECT_TRUE(std::isnan(b[2][0]));
    const std::vector<int64_t> none = geluDesc(0, approximate);
    void *empty[] = {nullptr, nullptr, nullptr};
    EXPECT_OK(gpu, mgsrt_gelu_fwd(gpu, none.data(), empty));
    EXPECT_OK(gpu, mgsrt_gelu_bwd(gpu, none.data(), empty));
  }
}

TEST_F(GpuGelu, BadCallsAreRefusedAsOnTheCpu) {
  expectSameError(cpu, gpu, mgsrt_gelu_fwd, geluDesc(4, 2), {true, true}, "approximate 2");
  expectSameError(cpu, gpu, mgsrt_gelu_bwd, geluDesc(-1, MGSRT_GELU_NONE), {true, true, true},
                  "negative count");
  expectSameError(cpu, gpu, mgsrt_gelu_fwd, geluDesc(4, MGSRT_GELU_TANH), {true, false}, "no y");
  expectSameError(cpu, gpu, mgsrt_gelu_bwd, geluDesc(4, MGSRT_GELU_NONE), {true, false, true},
                  "no dy");
}

} // namespace
