//===- ConvTest.cpp - convolution forward / backward data / weights ------===//

#include "TestUtil.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mgsrt_test;

namespace {

struct ConvCase {
  int64_t n, c, m, g;
  std::vector<int64_t> in, kernel, strides, padsBegin, padsEnd, dilations;
  bool bias;

  int64_t s() const { return static_cast<int64_t>(in.size()); }
  std::vector<int64_t> out() const {
    std::vector<int64_t> o(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      o[i] = (in[i] + padsBegin[i] + padsEnd[i] - ((kernel[i] - 1) * dilations[i] + 1)) /
                 strides[i] + 1;
    return o;
  }
  std::vector<int64_t> desc() const {
    std::vector<int64_t> d = {s(), n, c, m, g};
    for (const auto *v : {&in, &kernel}) d.insert(d.end(), v->begin(), v->end());
    auto o = out();
    d.insert(d.end(), o.begin(), o.end());
    for (const auto *v : {&strides, &padsBegin, &padsEnd, &dilations})
      d.insert(d.end(), v->begin(), v->end());
    d.push_back(MGSRT_PRECISION_F32);
    return d;
  }
  int64_t xSize() const { return n * c * product(in); }
  int64_t wSize() const { return m * (c / g) * product(kernel); }
  int64_t ySize() const { return n * m * product(out()); }
};

/// Calls f(xIndex, wIndex, yIndex) for every in-bounds tap of the
/// convolution (direct loops over the ONNX definition).
template <typename F> void forEachTap(const ConvCase &cc, F f) {
  const auto out = cc.out();
  const int64_t cg = cc.c / cc.g, mg = cc.m / cc.g;
  const int64_t outPlane = product(out), inPlane = product(cc.in), kPlane = product(cc.kernel);
  for (int64_t n = 0; n < cc.n; ++n)
    for (int64_t m = 0; m < cc.m; ++m)
      for (int64_t op = 0; op < outPlane; ++op) {
        auto o = unflatten(op, out);
        const int64_t grp = m / mg;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kp = 0; kp < kPlane; ++kp) {
            auto k = unflatten(kp, cc.kernel);
            int64_t ip = 0;
            bool inside = true;
            for (int64_t d = 0; d < cc.s(); ++d) {
              int64_t pos = o[d] * cc.strides[d] - cc.padsBegin[d] + k[d] * cc.dilations[d];
              inside &= pos >= 0 && pos < cc.in[d];
              ip = ip * cc.in[d] + pos;
            }
            if (!inside)
              continue;
            const int64_t c = grp * cg + ci;
            f((n * cc.c + c) * inPlane + ip, (m * cg + ci) * kPlane + kp,
              (n * cc.m + m) * outPlane + op);
          }
      }
}

std::vector<double> convRef(const ConvCase &cc, const std::vector<float> &x,
                            const std::vector<float> &w, const std::vector<float> &b) {
  std::vector<double> y(cc.ySize(), 0.0);
  const int64_t outPlane = product(cc.out());
  if (cc.bias)
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = b[(i / outPlane) % cc.m];
  forEachTap(cc, [&](int64_t xi, int64_t wi, int64_t yi) {
    y[yi] += static_cast<double>(x[xi]) * w[wi];
  });
  return y;
}

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, ForwardMatchesReference) {
  Ctx ctx;
  const ConvCase cc = GetParam();
  auto desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()), b = randomVec(cc.m);
  std::vector<float> y(cc.ySize());
  void *bufs[] = {x.data(), w.data(), cc.bias ? b.data() : nullptr, y.data()};
  ASSERT_OK(ctx, mgsrt_conv_fwd(ctx, desc.data(), bufs));
  expectClose(y, convRef(cc, x, w, b), 1e-4, 1e-4, "y");
  // The cached primitive runs on new data.
  x = randomVec(cc.xSize());
  w = randomVec(cc.wSize());
  void *again[] = {x.data(), w.data(), cc.bias ? b.data() : nullptr, y.data()};
  ASSERT_OK(ctx, mgsrt_conv_fwd(ctx, desc.data(), again));
  expectClose(y, convRef(cc, x, w, b), 1e-4, 1e-4, "y (second call)");
}

TEST_P(ConvTest, BackwardMatchesReference) {
  Ctx ctx;
  const ConvCase cc = GetParam();
  auto desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()),
                     dy = randomVec(cc.ySize());
  std::vector<float> dx(x.size()), dw(w.size()), db(cc.m);
  void *bd[] = {dy.data(), w.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_conv_bwd_data(ctx, desc.data(), bd));
  void *bw[] = {x.data(), dy.data(), dw.data(), cc.bias ? db.data() : nullptr};
  ASSERT_OK(ctx, mgsrt_conv_bwd_weights(ctx, desc.data(), bw));
  std::vector<double> wantDx(x.size()), wantDw(w.size()), wantDb(cc.m);
  forEachTap(cc, [&](int64_t xi, int64_t wi, int64_t yi) {
    wantDx[xi] += static_cast<double>(w[wi]) * dy[yi];
    wantDw[wi] += static_cast<double>(x[xi]) * dy[yi];
  });
  const int64_t outPlane = product(cc.out());
  for (size_t i = 0; i < dy.size(); ++i)
    wantDb[(i / outPlane) % cc.m] += dy[i];
  expectClose(dx, wantDx, 1e-4, 1e-4, "dx");
  expectClose(dw, wantDw, 1e-4, 1e-4, "dw");
  if (cc.bias)
    expectClose(db, wantDb, 1e-4, 1e-4, "db");
}

TEST_P(ConvTest, BackwardMatchesFiniteDifferences) {
  const ConvCase cc = GetParam();
  Ctx ctx;
  auto desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()), b = randomVec(cc.m),
                     dy = randomVec(cc.ySize());
  auto fwd = [&] {
    std::vector<float> y(cc.ySize());
    void *bufs[] = {x.data(), w.data(), cc.bias ? b.data() : nullptr, y.data()};
    EXPECT_OK(ctx, mgsrt_conv_fwd(ctx, desc.data(), bufs));
    return y;
  };
  std::vector<float> dx(x.size()), dw(w.size()), db(cc.m);
  void *bd[] = {dy.data(), w.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_conv_bwd_data(ctx, desc.data(), bd));
  void *bw[] = {x.data(), dy.data(), dw.data(), cc.bias ? db.data() : nullptr};
  ASSERT_OK(ctx, mgsrt_conv_bwd_weights(ctx, desc.data(), bw));
  // Linear in each argument: a large step is exact up to rounding.
  checkGrad(dx, x, dy, fwd, 0.5, 1e-3, "dx");
  checkGrad(dw, w, dy, fwd, 0.5, 1e-3, "dw");
  if (cc.bias)
    checkGrad(db, b, dy, fwd, 0.5, 1e-3, "db");
}

// bfloat16 and half: each direction equals the float32 one on its operands
// rounded to bfloat16 / half (the bias and what a direction writes stay
// float32), and rounds.
void expectFloat32OnRoundedOperands(const ConvCase &cc, const RoundedPrecision &p) {
  Ctx ctx;
  const auto desc = cc.desc(), half = bf16Desc(desc, p.precision);
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()), b = randomVec(cc.m),
                     dy = randomVec(cc.ySize());
  std::vector<float> rx = p.round(x), rw = p.round(w), rdy = p.round(dy);
  float *bias = cc.bias ? b.data() : nullptr;
  auto fwd = [&](const std::vector<int64_t> &d, std::vector<float> &in, std::vector<float> &k) {
    std::vector<float> y(cc.ySize(), NAN);
    void *bufs[] = {in.data(), k.data(), bias, y.data()};
    EXPECT_OK(ctx, mgsrt_conv_fwd(ctx, d.data(), bufs));
    return y;
  };
  const std::vector<float> y = fwd(half, x, w);
  expectClose(y, toDouble(fwd(desc, rx, rw)), 1e-5, 1e-5, "y");
  EXPECT_GT(maxAbsDiff(y, fwd(desc, x, w)), p.showsRounding) << "no rounding";
  auto bwdData = [&](const std::vector<int64_t> &d, std::vector<float> &g,
                     std::vector<float> &k) {
    std::vector<float> dx(x.size(), NAN);
    void *bufs[] = {g.data(), k.data(), dx.data()};
    EXPECT_OK(ctx, mgsrt_conv_bwd_data(ctx, d.data(), bufs));
    return dx;
  };
  expectClose(bwdData(half, dy, w), toDouble(bwdData(desc, rdy, rw)), 1e-5, 1e-5, "dx");
  auto bwdWeights = [&](const std::vector<int64_t> &d, std::vector<float> &in,
                        std::vector<float> &g) {
    std::vector<float> dw(w.size(), NAN), db(cc.m, NAN);
    void *bufs[] = {in.data(), g.data(), dw.data(), cc.bias ? db.data() : nullptr};
    EXPECT_OK(ctx, mgsrt_conv_bwd_weights(ctx, d.data(), bufs));
    return std::pair(dw, db);
  };
  auto [dw, db] = bwdWeights(half, x, dy);
  auto [wantDw, wantDb] = bwdWeights(desc, rx, rdy);
  expectClose(dw, toDouble(wantDw), 1e-5, 1e-5, "dw");
  if (cc.bias)
    expectClose(db, toDouble(wantDb), 1e-5, 1e-5, "db");
}

TEST_P(ConvTest, Bf16IsFloat32OnRoundedOperands) {
  expectFloat32OnRoundedOperands(GetParam(), kBf16);
}

TEST_P(ConvTest, F16IsFloat32OnRoundedOperands) {
  expectFloat32OnRoundedOperands(GetParam(), kF16);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTest,
    ::testing::Values(
        // n, c, m, g, in, kernel, strides, padsBegin, padsEnd, dilations, bias
        ConvCase{2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
        ConvCase{2, 4, 6, 2, {5, 6}, {3, 2}, {2, 1}, {1, 0}, {0, 1}, {1, 1}, false},
        ConvCase{1, 4, 4, 4, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},  // depthwise
        ConvCase{2, 2, 3, 1, {7, 6}, {3, 3}, {1, 1}, {2, 1}, {2, 0}, {2, 1}, true},  // dilation
        ConvCase{1, 3, 2, 1, {7, 8}, {3, 3}, {2, 2}, {0, 1}, {1, 2}, {1, 1}, true},  // asym pads
        ConvCase{2, 3, 2, 1, {9}, {3}, {2}, {1}, {2}, {2}, true},                   // 1-D
        ConvCase{2, 4, 2, 2, {10}, {2}, {1}, {0}, {1}, {3}, false},                 // 1-D grouped
        ConvCase{1, 2, 3, 1, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {0, 1, 0}, {1, 1, 2},
                 true},                                                             // 3-D
        ConvCase{1, 4, 2, 2, {3, 4, 4}, {1, 2, 3}, {1, 1, 2}, {0, 1, 1}, {0, 0, 1}, {1, 2, 1},
                 false},                                                            // 3-D grouped
        ConvCase{4, 16, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false}, // ResNet
        ConvCase{2, 3, 16, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},   // stem
        ConvCase{2, 16, 32, 1, {8, 8}, {1, 1}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false}, // 1x1 s2
        ConvCase{2, 16, 32, 1, {8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true},  // 3x3 s2
        ConvCase{2, 32, 32, 32, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false}, // dw big
        // Grouped shapes whose weight gradient oneDNN 2.6 runs as im2col + GEMM on AVX2, and
        // which GroupedConvWeights.h therefore computes (test/runtime/conv-grouped-weights.test
        // runs every grouped case here on it)
        ConvCase{2, 16, 16, 16, {8, 8}, {7, 7}, {1, 1}, {3, 3}, {3, 3}, {1, 1}, true}, // ConvNeXt
        ConvCase{2, 24, 24, 24, {6, 6}, {5, 5}, {2, 2}, {2, 2}, {2, 2}, {1, 1}, false}, // 5x5 s2
        ConvCase{3, 16, 16, 16, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},  // dw 2x2
        ConvCase{2, 13, 13, 13, {5, 4}, {5, 3}, {1, 1}, {2, 1}, {2, 1}, {1, 1}, true},  // 13 wide
        ConvCase{2, 8, 16, 8, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},    // 2 per group
        ConvCase{2, 32, 32, 4, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},  // RegNet
        ConvCase{2, 12, 12, 12, {11}, {7}, {1}, {6}, {5}, {2}, true},                   // 1-D dw
        ConvCase{1, 8, 8, 8, {3, 4, 5}, {3, 3, 3}, {2, 1, 1}, {1, 0, 1}, {1, 2, 1}, {1, 1, 2},
                 true},                                                             // 3-D dw
        ConvCase{2, 8, 12, 4, {6, 7}, {3, 2}, {2, 1}, {0, 2}, {1, 0}, {2, 1}, true}, // 2 in, 3 out
        ConvCase{3, 4, 4, 4, {2}, {3}, {1}, {4}, {4}, {1}, true}, // pads beyond the kernel's reach
        ConvCase{1, 17, 17, 17, {70, 66}, {3, 3}, {2, 1}, {1, 1}, {0, 1}, {1, 1}, true} // dw 70x66
        ));

TEST(ConvGroupedWeightsTest, SameBitsWhateverTheThreadCount) {
  // The channels-last weight gradient (forced on: MGSRT_CONV_GROUPED_WEIGHTS
  // is read when a call site's kernel is chosen; MGSRT_CONV_DEPTHWISE keeps
  // the depthwise kernel off) sums each output channel in one order however
  // many threads split the channels: 20 of them on 1, 3 and 7 threads (slices
  // of 20, 8 + 8 + 4, 8 + 8 + 4 with idle threads).
  const ConvCase cc{3, 20, 20, 20, {9, 9}, {7, 7}, {1, 1}, {3, 3}, {3, 3}, {1, 1}, true};
  auto desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), dy = randomVec(cc.ySize());
  ASSERT_EQ(setenv("MGSRT_CONV_GROUPED_WEIGHTS", "direct", 1), 0);
  ASSERT_EQ(setenv("MGSRT_CONV_DEPTHWISE", "onednn", 1), 0);
  const int threads = omp_get_max_threads();
  std::vector<std::vector<float>> dws, dbs;
  for (int t : {1, 3, 7}) {
    omp_set_num_threads(t);
    Ctx ctx;
    std::vector<float> dw(cc.wSize()), db(cc.m);
    void *bw[] = {x.data(), dy.data(), dw.data(), db.data()};
    EXPECT_OK(ctx, mgsrt_conv_bwd_weights(ctx, desc.data(), bw));
    dws.push_back(dw);
    dbs.push_back(db);
  }
  omp_set_num_threads(threads);
  unsetenv("MGSRT_CONV_GROUPED_WEIGHTS");
  unsetenv("MGSRT_CONV_DEPTHWISE");
  for (size_t i = 1; i < dws.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(dws[0].data(), dws[i].data(), sizeof(float) * dws[0].size()));
    EXPECT_EQ(0, std::memcmp(dbs[0].data(), dbs[i].data(), sizeof(float) * dbs[0].size()));
  }
}

TEST(ConvDepthwiseTest, SameBitsWhateverTheThreadCount) {
  // The depthwise kernel in blocks of planes (runtime/lib/Kernels/CPU/
  // DepthwiseConv.h): every direction gives the same bits on 1, 2, 3 and 7
  // threads. 20 channels (a block of 16 and one of 4) over a batch of 9,
  // whose weight gradient is summed in 8 chunks of the batch (2 samples
  // each, the last ones empty) in a fixed order, however the threads take
  // them.
  const ConvCase cc{9, 20, 20, 20, {9, 7}, {5, 3}, {2, 1}, {2, 1}, {1, 1}, {1, 2}, true};
  auto desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()), b = randomVec(cc.m),
                     dy = randomVec(cc.ySize());
  const int threads = omp_get_max_threads();
  std::vector<std::vector<float>> results;
  for (int t : {1, 2, 3, 7}) {
    omp_set_num_threads(t);
    Ctx ctx;
    std::vector<float> y(cc.ySize()), dx(cc.xSize()), dw(cc.wSize()), db(cc.m);
    void *fb[] = {x.data(), w.data(), b.data(), y.data()};
    void *bd[] = {dy.data(), w.data(), dx.data()};
    void *bw[] = {x.data(), dy.data(), dw.data(), db.data()};
    EXPECT_OK(ctx, mgsrt_conv_fwd(ctx, desc.data(), fb));
    EXPECT_OK(ctx, mgsrt_conv_bwd_data(ctx, desc.data(), bd));
    EXPECT_OK(ctx, mgsrt_conv_bwd_weights(ctx, desc.data(), bw));
    std::vector<float> all = y;
    for (const auto *v : {&dx, &dw, &db})
      all.insert(all.end(), v->begin(), v->end());
    results.push_back(all);
  }
  omp_set_num_threads(threads);
  for (size_t i = 1; i < results.size(); ++i)
    EXPECT_EQ(0, std::memcmp(results[0].data(), results[i].data(),
                             sizeof(float) * results[0].size()))
        << "threads run " << i;
}

TEST(ConvCacheTest, DescriptorReusedAtSameAddress) {
  // The cache is keyed by the desc address; new contents there must not run
  // the old primitive.
  Ctx ctx;
  ConvCase a{1, 2, 3, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true};
  ConvCase b{2, 2, 4, 2, {6, 4}, {2, 2}, {2, 1}, {0, 1}, {1, 0}, {1, 1}, true};
  std::vector<int64_t> storage(64, 0);
  for (const ConvCase *cc : {&a, &b, &a}) {
    auto d = cc->desc();
    std::copy(d.begin(), d.end(), storage.begin());
    std::vector<float> x = randomVec(cc->xSize()), w = randomVec(cc->wSize()),
                       bias = randomVec(cc->m), y(cc->ySize());
    void *bufs[] = {x.data(), w.data(), bias.data(), y.data()};
    ASSERT_OK(ctx, mgsrt_conv_fwd(ctx, storage.data(), bufs));
    expectClose(y, convRef(*cc, x, w, bias), 1e-4, 1e-4, "y");
  }
}

TEST(ConvCacheTest, TwoContextsShareNothing) {
  ConvCase cc{2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false};
  auto desc = cc.desc();
  std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize());
  std::vector<float> y1(cc.ySize()), y2(cc.ySize());
  {
    Ctx c1;
    void *bufs[] = {x.data(), w.data(), nullptr, y1.data()};
    ASSERT_OK(c1, mgsrt_conv_fwd(c1, desc.data(), bufs));
  }
  Ctx c2;
  void *bufs[] = {x.data(), w.data(), nullptr, y2.data()};
  ASSERT_OK(c2, mgsrt_conv_fwd(c2, desc.data(), bufs));
  EXPECT_EQ(y1, y2);
}

/// Times ResNet-20's convolutions at batch 32 (run with
/// --gtest_also_run_disabled_tests; MGSRT_CONV_LAYOUT=plain compares layouts).
TEST(ConvBenchmark, DISABLED_ResNet20Shapes) {
  Ctx ctx;
  const ConvCase cases[] = {
      {32, 3, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {32, 16, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {32, 16, 32, 1, {32, 32}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
      {32, 32, 32, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
      {32, 32, 64, 1, {16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
      {32, 64, 64, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false},
  };
  for (const ConvCase &cc : cases) {
    auto desc = cc.desc();
    std::vector<float> x = randomVec(cc.xSize()), w = randomVec(cc.wSize()),
                       y(cc.ySize()), dy = randomVec(cc.ySize()), dx(cc.xSize()),
                       dw(cc.wSize());
    void *fb[] = {x.data(), w.data(), nullptr, y.data()};
    void *bd[] = {dy.data(), w.data(), dx.data()};
    void *bw[] = {x.data(), dy.data(), dw.data(), nullptr};
    double t[3] = {0, 0, 0};
    const int reps = 20;
    for (int r = -2; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      ASSERT_OK(ctx, mgsrt_conv_fwd(ctx, desc.data(), fb));
      auto t1 = std::chrono::steady_clock::now();
      ASSERT_OK(ctx, mgsrt_conv_bwd_data(ctx, desc.data(), bd));
      auto t2 = std::chrono::steady_clock::now();
      ASSERT_OK(ctx, mgsrt_conv_bwd_weights(ctx, desc.data(), bw));
      auto t3 = std::chrono::steady_clock::now();
      if (r < 0)
        continue;
      t[0] += std::chrono::duration<double, std::milli>(t1 - t0).count();
      t[1] += std::chrono::duration<double, std::milli>(t2 - t1).count();
      t[2] += std::chrono::duration<double, std::milli>(t3 - t2).count();
    }
    std::printf("conv N=%lld C=%lld M=%lld %lldx%lld s%lld: fwd %.3f ms, bwd_data %.3f ms, "
                "bwd_weights %.3f ms\n",
                (long long)cc.n, (long long)cc.c, (long long)cc.m, (long long)cc.in[0],
                (long long)cc.in[1], (long long)cc.strides[0], t[0] / reps, t[1] / reps,
                t[2] / reps);
  }
}

} // namespace
