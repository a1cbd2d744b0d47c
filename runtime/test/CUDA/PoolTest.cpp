//===- PoolTest.cpp - GPU max / average pooling against the CPU -----------===//
//
// ONNX MaxPool / AveragePool / GlobalAveragePool: padding, ceil mode and its
// overhang rule, count_include_pad, dilation, 1-D to 3-D, ties, windows
// wholly in the padding, int64 indices in both storage orders. The GPU
// kernels sum in the CPU's order and precision, so every output, index and
// gradient must be equal bit for bit.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

struct PoolCase {
  const char *name;
  int64_t kind, n, c;
  std::vector<int64_t> in, kernel, strides, padsBegin, padsEnd, dilations;
  bool ceil, includePad;
  int64_t storageOrder;
  bool ties; // inputs from {-1, 0, 1}: many equal maxima

  std::vector<int64_t> out() const {
    std::vector<int64_t> o(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t span = in[i] + padsBegin[i] + padsEnd[i] - ((kernel[i] - 1) * dilations[i] + 1);
      o[i] = (ceil ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
    }
    return o;
  }
  std::vector<int64_t> desc() const {
    std::vector<int64_t> d = {kind, static_cast<int64_t>(in.size()), n, c};
    const auto o = out();
    for (const auto *v : {&in, &kernel, &o, &strides, &padsBegin, &padsEnd, &dilations})
      d.insert(d.end(), v->begin(), v->end());
    d.push_back(includePad);
    d.push_back(storageOrder);
    return d;
  }
  int64_t xSize() const { return n * c * product(in); }
  int64_t ySize() const { return n * c * product(out()); }
};

constexpr int64_t kMax = MGSRT_POOL_MAX, kAvg = MGSRT_POOL_AVG;

std::vector<PoolCase> cases() {
  return {
      {"max_3x3s2_p1", kMax, 2, 3, {9, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1},
       false, false, 0, false},
      {"max_resnet_b32", kMax, 32, 16, {32, 32}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1},
       false, false, 0, false},
      {"max_2x2s2_ceil_colmajor", kMax, 2, 2, {7, 7}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1},
       true, false, 1, false},
      {"max_1d_dilated_ceil", kMax, 3, 2, {15}, {3}, {2}, {1}, {2}, {2}, true, false, 0, false},
      {"max_3d_ceil_colmajor", kMax, 2, 2, {5, 6, 7}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0},
       {0, 0, 0}, {1, 1, 1}, true, false, 1, false},
      {"max_all_padding_windows", kMax, 1, 2, {2}, {2}, {1}, {2}, {2}, {1}, false, false, 0,
       false},
      {"max_ties", kMax, 2, 3, {8, 9}, {3, 3}, {1, 2}, {1, 0}, {1, 2}, {1, 1}, true, false, 0,
       true},
      {"avg_3x3s1_p1_excl", kAvg, 2, 3, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
       false, false, 0, false},
      {"avg_3x3s1_p1_incl", kAvg, 2, 3, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
       false, true, 0, false},
      {"avg_ceil_overhang_incl", kAvg, 2, 2, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1},
       true, true, 0, false},
      {"avg_ceil_overhang_excl", kAvg, 2, 2, {6, 7}, {3, 2}, {2, 2}, {1, 0}, {0, 1}, {1, 1},
       true, false, 0, false},
      {"global_avg_b32", kAvg, 32, 64, {8, 8}, {8, 8}, {1, 1}, {0, 0}, {0, 0}, {1, 1},
       false, false, 0, false},
      {"avg_3d_dilated", kAvg, 2, 2, {7, 6, 5}, {2, 3, 2}, {1, 2, 1}, {1, 0, 0}, {0, 1, 1},
       {2, 1, 2}, false, true, 0, false},
      {"avg_1d_all_padding_excl", kAvg, 1, 2, {2}, {2}, {1}, {2}, {2}, {1}, false, false, 0,
       false},
      {"avg_1d_all_padding_incl", kAvg, 1, 2, {2}, {2}, {1}, {2}, {2}, {1}, true, true, 0,
       false},
  };
}

std::vector<float> input(const PoolCase &pc) {
  if (!pc.ties)
    return randomVec(pc.xSize());
  std::vector<float> x = randomVec(pc.xSize());
  for (float &v : x)
    v = v < -0.33f ? -1.0f : v > 0.33f ? 1.0f : 0.0f;
  return x;
}

using GpuPool = GpuTest;

TEST_F(GpuPool, ForwardAndBackwardMatchCpuExactly) {
  for (const PoolCase &pc : cases()) {
    SCOPED_TRACE(pc.name);
    const std::vector<int64_t> desc = pc.desc();
    const bool isMax = pc.kind == kMax;
    std::vector<float> x = input(pc), dy = randomVec(pc.ySize());

    // Forward with indices (max): the CPU directly, the GPU through device buffers.
    std::vector<float> yc(pc.ySize(), 7.0f);
    std::vector<int64_t> ic(pc.ySize(), 7);
    void *cb[] = {x.data(), yc.data(), isMax ? ic.data() : nullptr};
    EXPECT_OK(cpu, mgsrt_pool_fwd(cpu, desc.data(), cb));
    DeviceBuffer<float> dx(gpu, x), dyv(gpu, std::vector<float>(pc.ySize(), 7.0f));
    DeviceBuffer<int64_t> di(gpu, std::vector<int64_t>(pc.ySize(), 7));
    void *gb[] = {dx.ptr, dyv.ptr, isMax ? di.ptr : nullptr};
    EXPECT_OK(gpu, mgsrt_pool_fwd(gpu, desc.data(), gb));
    EXPECT_OK(gpu, mgsrt_synchronize(gpu));
    std::vector<float> yg = dyv.download();
    EXPECT_TRUE(bitsEqual(yg, yc)) << "y, max rel diff " << maxRelDiff(yg, yc);
    if (isMax) {
      EXPECT_EQ(di.download(), ic) << "indices";
      // Without indices: the same values.
      Buffers g = runGpu(gpu, mgsrt_pool_fwd, desc.data(),
                         {x, std::vector<float>(pc.ySize()), {}});
      EXPECT_TRUE(bitsEqual(g[1], yc)) << "y without indices";
    }

    Buffers in = {x, dy, std::vector<float>(pc.xSize(), 7.0f)};
    Buffers bc = runCpu(cpu, mgsrt_pool_bwd, desc.data(), in);
    Buffers bg = runGpu(gpu, mgsrt_pool_bwd, desc.data(), in);
    EXPECT_TRUE(bitsEqual(bg[2], bc[2])) << "dx, max rel diff " << maxRelDiff(bg[2], bc[2]);
  }
}

TEST_F(GpuPool, AverageBackwardNeedsNoX) {
  const PoolCase pc = cases()[9];
  const std::vector<int64_t> desc = pc.desc();
  Buffers in = {{}, randomVec(pc.ySize()), std::vector<float>(pc.xSize())};
  Buffers c = runCpu(cpu, mgsrt_pool_bwd, desc.data(), in);
  Buffers g = runGpu(gpu, mgsrt_pool_bwd, desc.data(), in);
  EXPECT_TRUE(bitsEqual(g[2], c[2]));
}

TEST_F(GpuPool, EmptyBatchIsANoOp) {
  PoolCase pc = cases()[0];
  pc.n = 0;
  const std::vector<int64_t> desc = pc.desc();
  DeviceBuffer<float> one(gpu, 1);
  void *bufs[] = {one.ptr, one.ptr, nullptr};
  EXPECT_OK(gpu, mgsrt_pool_fwd(gpu, desc.data(), bufs));
  void *bwd[] = {one.ptr, one.ptr, one.ptr};
  EXPECT_OK(gpu, mgsrt_pool_bwd(gpu, desc.data(), bwd));
  EXPECT_OK(gpu, mgsrt_synchronize(gpu));
}

TEST_F(GpuPool, ErrorsMatchCpu) {
  const std::vector<int64_t> good = cases()[0].desc(); // S = 2
  auto with = [&](size_t i, int64_t v) {
    std::vector<int64_t> d = good;
    d[i] = v;
    return d;
  };
  const std::vector<bool> all(3, true);
  struct Bad {
    std::vector<int64_t> desc;
    const char *what;
  };
  const Bad bad[] = {
      {with(0, 2), "kind 2"},
      {with(1, 0), "spatial rank 0"},
      {with(2, -1), "negative N"},
      {with(4, 0), "in = 0"},
      {with(4 + 2 * 2, 9), "out beyond the ceil extent"},
      {with(4 + 2 * 2, 1), "out below the floor extent"},
      {with(4 + 3 * 2, 0), "stride 0"},
      {with(4 + 4 * 2 + 1, -1), "negative pad"},
      {with(4 + 6 * 2, 0), "dilation 0"},
      {with(4 + 7 * 2, 2), "count_include_pad 2"},
      {with(4 + 7 * 2 + 1, 3), "storage_order 3"},
  };
  for (const Bad &b : bad)
    for (KernelFn fn : {mgsrt_pool_fwd, mgsrt_pool_bwd})
      expectSameError(cpu, gpu, fn, b.desc, all, b.what);
  expectSameError(cpu, gpu, mgsrt_pool_fwd, good, {false, true, true}, "null x");
  expectSameError(cpu, gpu, mgsrt_pool_fwd, good, {true, false, true}, "null y");
  expectSameError(cpu, gpu, mgsrt_pool_bwd, good, {false, true, true}, "max bwd null x");
  expectSameError(cpu, gpu, mgsrt_pool_bwd, good, {true, false, true}, "null dy");
  expectSameError(cpu, gpu, mgsrt_pool_bwd, good, {true, true, false}, "null dx");
}

} // namespace
