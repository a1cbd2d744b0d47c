//===- ConvTest.cpp - GPU convolution (cuDNN) against the CPU (oneDNN) ----===//
//
// Forward, backward data and backward weights (with and without bias) on
// ResNet-20/CIFAR-like shapes and the corner cases of the descriptor:
// grouped and depthwise, asymmetric pads, dilation, 1-D and 3-D, batch 1 and
// 32. FP32 without TF32 on both sides: within 1e-5 of the tensor's scale.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

struct ConvCase {
  const char *name;
  int64_t n, c, m, g;
  std::vector<int64_t> in, kernel, strides, padsBegin, padsEnd, dilations;
  bool bias;

  std::vector<int64_t> out() const {
    std::vector<int64_t> o(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      o[i] = (in[i] + padsBegin[i] + padsEnd[i] - ((kernel[i] - 1) * dilations[i] + 1)) /
                 strides[i] + 1;
    return o;
  }
  std::vector<int64_t> desc() const {
    std::vector<int64_t> d = {static_cast<int64_t>(in.size()), n, c, m, g};
    const auto o = out();
    for (const auto *v : {&in, &kernel, &o, &strides, &padsBegin, &padsEnd, &dilations})
      d.insert(d.end(), v->begin(), v->end());
    d.push_back(MGSRT_PRECISION_F32);
    return d;
  }
  int64_t xSize() const { return n * c * product(in); }
  int64_t wSize() const { return m * (c / g) * product(kernel); }
  int64_t ySize() const { return n * m * product(out()); }
};

std::vector<ConvCase> cases() {
  return {
      // ResNet-20 on CIFAR-10.
      {"stem", 1, 3, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      {"3x3s1_b32", 32, 16, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {"3x3s2_b32", 32, 16, 32, 1, {32, 32}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
      {"1x1s2_b32", 32, 32, 64, 1, {16, 16}, {1, 1}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false},
      {"3x3s1_c64", 8, 64, 64, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      // Groups.
      {"grouped", 2, 8, 12, 4, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      {"depthwise_s2", 2, 8, 8, 8, {10, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
      // Asymmetric pads (cuDNN pads symmetrically: the kernel pads a copy).
      {"asym_pads", 2, 3, 4, 1, {7, 8}, {3, 2}, {2, 1}, {0, 1}, {1, 0}, {1, 1}, true},
      {"asym_pads_wide", 2, 4, 6, 2, {6, 5}, {3, 3}, {1, 2}, {2, 0}, {0, 3}, {1, 1}, true},
      {"same_upper", 1, 2, 3, 1, {6, 6}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
      // Dilation.
      {"dilated", 2, 4, 6, 1, {11, 11}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, true},
      {"dilated_strided", 2, 4, 4, 2, {13, 12}, {3, 2}, {2, 3}, {1, 0}, {2, 1}, {3, 2}, false},
      // 1-D.
      {"conv1d", 4, 3, 5, 1, {20}, {5}, {2}, {1}, {2}, {1}, true},
      {"conv1d_dilated_grouped", 3, 6, 4, 2, {17}, {3}, {1}, {2}, {2}, {2}, false},
      // 3-D.
      {"conv3d", 2, 2, 4, 1, {6, 7, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1},
       true},
      {"conv3d_asym_strided", 2, 3, 4, 1, {7, 6, 5}, {3, 2, 3}, {2, 1, 2}, {1, 0, 1},
       {0, 1, 2}, {1, 1, 1}, false},
  };
}

constexpr double kTol = 1e-5;

/// Forward, backward data and backward weights of one case on both devices.
void checkCase(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, const ConvCase &cc, const int64_t *desc) {
  SCOPED_TRACE(cc.name);
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()),
                     b = cc.bias ? randomVec(cc.m) : std::vector<float>(),
                     dy = randomVec(cc.ySize());

  Buffers in = {x, w, b, std::vector<float>(cc.ySize())};
  Buffers fc = runCpu(cpu, mgsrt_conv_fwd, desc, in);
  Buffers fg = runGpu(gpu, mgsrt_conv_fwd, desc, in);
  EXPECT_LE(relToMax(fg[3], fc[3]), kTol) << "y";

  in = {dy, w, std::vector<float>(cc.xSize())};
  Buffers dc = runCpu(cpu, mgsrt_conv_bwd_data, desc, in);
  Buffers dg = runGpu(gpu, mgsrt_conv_bwd_data, desc, in);
  EXPECT_LE(relToMax(dg[2], dc[2]), kTol) << "dx";

  in = {x, dy, std::vector<float>(cc.wSize()),
        cc.bias ? std::vector<float>(cc.m) : std::vector<float>()};
  Buffers wc = runCpu(cpu, mgsrt_conv_bwd_weights, desc, in);
  Buffers wg = runGpu(gpu, mgsrt_conv_bwd_weights, desc, in);
  EXPECT_LE(relToMax(wg[2], wc[2]), kTol) << "dw";
  if (cc.bias) {
    EXPECT_LE(relToMax(wg[3], wc[3]), kTol) << "db";
  }
}

using GpuConv = GpuTest;

TEST_F(GpuConv, MatchesCpu) {
  for (const ConvCase &cc : cases()) {
    std::vector<int64_t> desc = cc.desc();
    checkCase(cpu, gpu, cc, desc.data());
  }
}

// bfloat16 and half (roundedOperands: the operands rounded, then the
// float32 kernels): the CPU's arithmetic, so the same tolerance.
TEST_F(GpuConv, Bf16MatchesCpu) {
  for (const ConvCase &cc : cases()) {
    std::vector<int64_t> desc = bf16Desc(cc.desc());
    checkCase(cpu, gpu, cc, desc.data());
  }
}

TEST_F(GpuConv, F16MatchesCpu) {
  for (const ConvCase &cc : cases()) {
    std::vector<int64_t> desc = bf16Desc(cc.desc(), MGSRT_PRECISION_F16);
    checkCase(cpu, gpu, cc, desc.data());
  }
}

TEST_F(GpuConv, RepeatedCallsReuseTheCallSite) {
  // The second call at the same descriptor runs on the cached descriptors and
  // algorithms; results must stay the same.
  const ConvCase cc = cases()[2];
  std::vector<int64_t> desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize());
  Buffers in = {x, w, {}, std::vector<float>(cc.ySize())};
  Buffers first = runGpu(gpu, mgsrt_conv_fwd, desc.data(), in);
  Buffers second = runGpu(gpu, mgsrt_conv_fwd, desc.data(), in);
  EXPECT_TRUE(bitsEqual(second[3], first[3]));
}

TEST_F(GpuConv, ReusedDescriptorAddressIsRebuilt) {
  // One descriptor address holding one convolution, then another: the cache
  // must notice the new contents.
  int64_t slot[5 + 7 * 3 + 1] = {}; // S = 3, with the precision
  for (const ConvCase &cc : {cases()[7], cases()[12], cases()[15], cases()[0]}) {
    std::vector<int64_t> d = cc.desc();
    std::copy(d.begin(), d.end(), slot);
    checkCase(cpu, gpu, cc, slot);
  }
}

TEST_F(GpuConv, EmptyBatch) {
  const ConvCase cc{"empty", 0, 2, 3, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true};
  std::vector<int64_t> desc = cc.desc();
  // dw and db of an empty batch are zero; the forward writes nothing.
  Buffers in = {{0.0f}, std::vector<float>(1), std::vector<float>(cc.wSize(), 5.0f),
                std::vector<float>(cc.m, 5.0f)};
  Buffers c = runCpu(cpu, mgsrt_conv_bwd_weights, desc.data(), in);
  Buffers g = runGpu(gpu, mgsrt_conv_bwd_weights, desc.data(), in);
  EXPECT_TRUE(bitsEqual(g[2], c[2]));
  EXPECT_TRUE(bitsEqual(g[3], c[3]));
  DeviceBuffer<float> dummy(gpu, 1);
  void *fwd[] = {dummy.ptr, dummy.ptr, nullptr, dummy.ptr};
  EXPECT_OK(gpu, mgsrt_conv_fwd(gpu, desc.data(), fwd));
  void *bwd[] = {dummy.ptr, dummy.ptr, dummy.ptr};
  EXPECT_OK(gpu, mgsrt_conv_bwd_data(gpu, desc.data(), bwd));
  EXPECT_OK(gpu, mgsrt_synchronize(gpu));
}

TEST_F(GpuConv, ErrorsMatchCpu) {
  const ConvCase ok = cases()[5];
  std::vector<int64_t> good = ok.desc();
  auto with = [&](size_t i, int64_t v) {
    std::vector<int64_t> d = good;
    d[i] = v;
    return d;
  };
  const std::vector<bool> all(4, true);
  struct Bad {
    std::vector<int64_t> desc;
    const char *what;
  };
  const Bad bad[] = {
      {with(0, 4), "spatial rank"},
      {with(1, -1), "negative batch"},
      {with(2, 0), "C = 0"},
      {with(4, 3), "group does not divide"},
      {with(5, 0), "in = 0"},
      {with(5 + 2 * 2, 8), "out does not match"},
      {with(5 + 3 * 2, 0), "stride 0"},
      {with(5 + 4 * 2, -1), "negative pad"},
      {with(5 + 6 * 2 + 1, 0), "dilation 0"},
  };
  for (const Bad &b : bad)
    for (KernelFn fn : {mgsrt_conv_fwd, mgsrt_conv_bwd_data, mgsrt_conv_bwd_weights})
      expectSameError(cpu, gpu, fn, b.desc, all, b.what);
  // Null required buffers, one at a time.
  for (int i : {0, 1, 3})
    expectSameError(cpu, gpu, mgsrt_conv_fwd, good,
                    {i != 0, i != 1, true, i != 3}, "fwd null " + std::to_string(i));
  for (int i : {0, 1, 2}) {
    std::vector<bool> nn = {i != 0, i != 1, i != 2};
    expectSameError(cpu, gpu, mgsrt_conv_bwd_data, good, nn, "bwd_data null " + std::to_string(i));
    nn.push_back(true);
    expectSameError(cpu, gpu, mgsrt_conv_bwd_weights, good, nn,
                    "bwd_weights null " + std::to_string(i));
  }
}

} // namespace
