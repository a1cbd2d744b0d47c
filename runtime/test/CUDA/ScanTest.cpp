//===- ScanTest.cpp - GPU cumsum and to_index against the CPU -------------===//
//
// Each line is summed in order on both devices, so cumsum's results are the
// CPU's bit for bit (every axis position, inclusive and exclusive, forward
// and reverse); to_index gives the CPU's indices and refuses a NaN with the
// CPU's words, from_index the CPU's floats and refuses a value outside its
// range with them; the descriptor and buffer errors in the CPU's words.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include "mgsrt/contract.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

using GpuScan = GpuTest;

TEST_F(GpuScan, CumSumMatchesCpuBitForBit) {
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1})
      for (auto [outer, len, inner] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                                       {3, 7, 1}, {2, 5, 4}, {64, 512, 1}, {5, 33, 300}}) {
        SCOPED_TRACE("exclusive " + std::to_string(exclusive) + " reverse " +
                     std::to_string(reverse) + " " + std::to_string(outer) + "x" +
                     std::to_string(len) + "x" + std::to_string(inner));
        const std::vector<int64_t> desc = cumSumDesc(outer, len, inner, exclusive, reverse);
        const int64_t n = outer * len * inner;
        const Buffers in = {randomVec(n, -3.0f, 3.0f), std::vector<float>(n)};
        const Buffers c = runCpu(cpu, mgsrt_cumsum, desc.data(), in);
        const Buffers g = runGpu(gpu, mgsrt_cumsum, desc.data(), in);
        EXPECT_TRUE(bitsEqual(g[1], c[1])) << "y";
      }
}

TEST_F(GpuScan, ToIndexMatchesCpuAndRefusesNaN) {
  // y is int64: two floats of storage an index.
  std::vector<float> x = {0.0f, 1.0f, 2.75f, -2.75f, 16777216.0f, 513.0f};
  const std::vector<int64_t> desc = {static_cast<int64_t>(x.size())};
  const Buffers c = runCpu(cpu, mgsrt_to_index, desc.data(), {x, std::vector<float>(2 * x.size())});
  const Buffers g = runGpu(gpu, mgsrt_to_index, desc.data(), {x, std::vector<float>(2 * x.size())});
  EXPECT_TRUE(bitsEqual(g[1], c[1]));
  int64_t first = -1;
  std::memcpy(&first, c[1].data() + 2 * 4, sizeof first); // y[4], two floats an index
  EXPECT_EQ(first, 16777216);

  x[3] = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<float> dx(gpu, x), dy(gpu, std::vector<float>(2 * x.size()));
  std::vector<float> hy(2 * x.size());
  void *hb[] = {x.data(), hy.data()}, *db[] = {dx.ptr, dy.ptr};
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);
  EXPECT_EQ(mgsrt_to_index(cpu, desc.data(), hb), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mgsrt_to_index(gpu, desc.data(), db), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)));
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);
}

TEST_F(GpuScan, FromIndexMatchesCpuAndRefusesOutOfRange) {
  // x is int64: two floats of storage a value.
  const std::vector<int64_t> ints = {0, 1, -1, 9, 16777216, -16777216, 513};
  std::vector<float> x(2 * ints.size());
  std::memcpy(x.data(), ints.data(), ints.size() * sizeof(int64_t));
  const std::vector<int64_t> desc = {static_cast<int64_t>(ints.size()), -16777216, 16777216};
  const Buffers c =
      runCpu(cpu, mgsrt_from_index, desc.data(), {x, std::vector<float>(ints.size())});
  const Buffers g =
      runGpu(gpu, mgsrt_from_index, desc.data(), {x, std::vector<float>(ints.size())});
  EXPECT_TRUE(bitsEqual(g[1], c[1]));
  EXPECT_EQ(c[1][4], 16777216.0f);

  const std::vector<int64_t> narrow = {static_cast<int64_t>(ints.size()), 0, 9}; // -1 at 2
  DeviceBuffer<float> dx(gpu, x), dy(gpu, std::vector<float>(ints.size()));
  std::vector<float> hy(ints.size());
  void *hb[] = {x.data(), hy.data()}, *db[] = {dx.ptr, dy.ptr};
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);
  EXPECT_EQ(mgsrt_from_index(cpu, narrow.data(), hb), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mgsrt_from_index(gpu, narrow.data(), db), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)));
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);
}

TEST_F(GpuScan, BadCallsAreRefusedAsOnTheCpu) {
  expectSameError(cpu, gpu, mgsrt_cumsum, cumSumDesc(1, -4, 1, 0, 0), {true, true}, "negative len");
  expectSameError(cpu, gpu, mgsrt_cumsum, cumSumDesc(1, 4, 1, 2, 0), {true, true}, "exclusive 2");
  expectSameError(cpu, gpu, mgsrt_cumsum, cumSumDesc(1, 4, 1, 0, 0), {true, false}, "no y");
  expectSameError(cpu, gpu, mgsrt_to_index, {-3}, {true, true}, "negative count");
  expectSameError(cpu, gpu, mgsrt_to_index, {4}, {false, true}, "no x");
  expectSameError(cpu, gpu, mgsrt_from_index, {4, 9, 0}, {true, true}, "empty range");
  expectSameError(cpu, gpu, mgsrt_from_index, {4, 0, 9}, {true, false}, "no y");
}

} // namespace
