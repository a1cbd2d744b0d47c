//===- DropoutTest.cpp - GPU dropout: the CPU's mask and stream, bit for bit ===//

#include "GpuTestUtil.h"

using namespace mgsrt_test;

namespace {

using GpuDropout = GpuTest;

struct FwdResult {
  std::vector<float> y;
  std::vector<uint8_t> mask;
};

FwdResult cpuFwd(mgsrt_ctx_t *ctx, const int64_t *desc, const std::vector<float> &x,
                 bool withMask) {
  FwdResult r{std::vector<float>(x.size()), std::vector<uint8_t>(x.size(), 7)};
  void *bufs[] = {const_cast<float *>(x.data()), r.y.data(), withMask ? r.mask.data() : nullptr};
  EXPECT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, bufs));
  return r;
}

FwdResult gpuFwd(mgsrt_ctx_t *ctx, const int64_t *desc, const std::vector<float> &x,
                 bool withMask) {
  DeviceBuffer<float> dx(ctx, x), dy(ctx, x.size());
  DeviceBuffer<uint8_t> dm(ctx, std::vector<uint8_t>(x.size(), 7));
  void *bufs[] = {dx.ptr, dy.ptr, withMask ? dm.ptr : nullptr};
  EXPECT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, bufs));
  EXPECT_OK(ctx, mgsrt_synchronize(ctx));
  return {dy.download(), dm.download()};
}

TEST_F(GpuDropout, MaskOutputAndStreamMatchCpu) {
  for (double ratio : {0.0, 0.5, 0.9, 1.0}) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(1 << 20) + 5}}) {
      for (bool withMask : {true, false}) {
        SCOPED_TRACE("ratio " + std::to_string(ratio) + " n " + std::to_string(n) +
                     (withMask ? " mask" : " no mask"));
        const int64_t desc[] = {n, bits(ratio), 1, 1};
        // Two consecutive calls: the second starts where the first left the stream.
        for (int call = 0; call < 2; ++call) {
          ASSERT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu)) << "call " << call;
          std::vector<float> x = randomVec(n, -3.0f, 3.0f);
          FwdResult c = cpuFwd(cpu, desc, x, withMask);
          FwdResult g = gpuFwd(gpu, desc, x, withMask);
          EXPECT_TRUE(bitsEqual(g.y, c.y)) << "call " << call;
          EXPECT_TRUE(g.mask == c.mask) << "call " << call;
          EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu)) << "call " << call;

          if (!withMask)
            continue;
          // Backward through the mask.
          std::vector<float> dyHost = randomVec(n);
          std::vector<float> dxCpu(n);
          void *cb[] = {dyHost.data(), c.mask.data(), dxCpu.data()};
          EXPECT_OK(cpu, mgsrt_dropout_bwd(cpu, desc, cb));
          DeviceBuffer<float> ddy(gpu, dyHost), ddx(gpu, n);
          DeviceBuffer<uint8_t> dmask(gpu, g.mask);
          void *gb[] = {ddy.ptr, dmask.ptr, ddx.ptr};
          EXPECT_OK(gpu, mgsrt_dropout_bwd(gpu, desc, gb));
          EXPECT_TRUE(bitsEqual(ddx.download(), dxCpu)) << "call " << call;
        }
      }
    }
  }
}

// Stochastic depth's per-sample mask: one entry (one draw) for each block of
// `inner` elements, the CPU's mask, output, stream and backward bit for bit.
TEST_F(GpuDropout, OneMaskEntryPerBlockMatchesCpu) {
  for (int64_t inner : {int64_t{7}, int64_t{4096}}) {
    SCOPED_TRACE("inner " + std::to_string(inner));
    const int64_t samples = 333, n = samples * inner;
    const int64_t desc[] = {n, bits(0.3), 1, inner};
    std::vector<float> x = randomVec(n, -3.0f, 3.0f), dyHost = randomVec(n);
    ASSERT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
    std::vector<float> cy(n), cdx(n);
    std::vector<uint8_t> cmask(samples, 7);
    void *cb[] = {x.data(), cy.data(), cmask.data()};
    EXPECT_OK(cpu, mgsrt_dropout_fwd(cpu, desc, cb));
    DeviceBuffer<float> gx(gpu, x), gy(gpu, n);
    DeviceBuffer<uint8_t> gm(gpu, std::vector<uint8_t>(samples, 7));
    void *gb[] = {gx.ptr, gy.ptr, gm.ptr};
    EXPECT_OK(gpu, mgsrt_dropout_fwd(gpu, desc, gb));
    EXPECT_OK(gpu, mgsrt_synchronize(gpu));
    EXPECT_TRUE(bitsEqual(gy.download(), cy));
    EXPECT_TRUE(gm.download() == cmask);
    EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
    void *cbb[] = {dyHost.data(), cmask.data(), cdx.data()};
    EXPECT_OK(cpu, mgsrt_dropout_bwd(cpu, desc, cbb));
    DeviceBuffer<float> gdy(gpu, dyHost), gdx(gpu, n);
    void *gbb[] = {gdy.ptr, gm.ptr, gdx.ptr};
    EXPECT_OK(gpu, mgsrt_dropout_bwd(gpu, desc, gbb));
    EXPECT_TRUE(bitsEqual(gdx.download(), cdx));
  }
}

TEST_F(GpuDropout, KeptFractionIsAboutOneMinusRatio) {
  const int64_t n = 1 << 20;
  const int64_t desc[] = {n, bits(0.3), 1, 1};
  FwdResult g = gpuFwd(gpu, desc, std::vector<float>(n, 1.0f), true);
  int64_t kept = 0;
  for (uint8_t m : g.mask)
    kept += m;
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.005);
}

TEST_F(GpuDropout, RestoredStateRepeatsTheMask) {
  const int64_t n = 4097;
  const int64_t desc[] = {n, bits(0.5), 1, 1};
  std::vector<float> x = randomVec(n);
  mgsrt_ctx_set_rng_state(gpu, 0x1234567890abcdefull);
  FwdResult first = gpuFwd(gpu, desc, x, true);
  mgsrt_ctx_set_rng_state(gpu, 0x1234567890abcdefull);
  FwdResult again = gpuFwd(gpu, desc, x, true);
  EXPECT_TRUE(first.mask == again.mask);
  mgsrt_ctx_set_rng_state(cpu, 0x1234567890abcdefull);
  FwdResult c = cpuFwd(cpu, desc, x, true);
  EXPECT_TRUE(first.mask == c.mask);
  EXPECT_TRUE(bitsEqual(first.y, c.y));
}

TEST_F(GpuDropout, InferenceCopiesAndKeepsTheStream) {
  const int64_t n = 1000;
  const int64_t desc[] = {n, bits(0.5), 0, 1};
  std::vector<float> x = randomVec(n);
  const uint64_t before = mgsrt_ctx_rng_state(gpu);
  FwdResult g = gpuFwd(gpu, desc, x, true);
  EXPECT_TRUE(bitsEqual(g.y, x));
  EXPECT_TRUE(g.mask == std::vector<uint8_t>(n, 1));
  EXPECT_EQ(mgsrt_ctx_rng_state(gpu), before);
  // Backward in inference: dx = dy (the mask is not read and may be null).
  DeviceBuffer<float> ddy(gpu, x), ddx(gpu, n);
  void *gb[] = {ddy.ptr, nullptr, ddx.ptr};
  EXPECT_OK(gpu, mgsrt_dropout_bwd(gpu, desc, gb));
  EXPECT_TRUE(bitsEqual(ddx.download(), x));
  // In place.
  DeviceBuffer<float> inPlace(gpu, x);
  void *ib[] = {inPlace.ptr, inPlace.ptr, nullptr};
  EXPECT_OK(gpu, mgsrt_dropout_fwd(gpu, desc, ib));
  EXPECT_TRUE(bitsEqual(inPlace.download(), x));
}

TEST_F(GpuDropout, TrainingInPlaceMatchesCpu) {
  const int64_t n = 100003;
  const int64_t desc[] = {n, bits(0.25), 1, 1};
  std::vector<float> x = randomVec(n);
  std::vector<float> cx = x;
  void *cb[] = {cx.data(), cx.data(), nullptr};
  ASSERT_OK(cpu, mgsrt_dropout_fwd(cpu, desc, cb));
  DeviceBuffer<float> gx(gpu, x);
  void *gb[] = {gx.ptr, gx.ptr, nullptr};
  ASSERT_OK(gpu, mgsrt_dropout_fwd(gpu, desc, gb));
  EXPECT_TRUE(bitsEqual(gx.download(), cx));
  EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
}

TEST_F(GpuDropout, ErrorsMatchCpu) {
  std::vector<float> host(64, 0.0f);
  DeviceBuffer<float> dev(gpu, host);
  struct Case {
    bool bwd;
    std::vector<int64_t> desc;
    std::vector<bool> nonNull;
  };
  const Case cases[] = {
      {false, {-1, bits(0.5), 1}, {true, true, true}},
      {false, {4, bits(1.5), 1}, {true, true, true}},
      {false, {4, bits(-0.1), 1}, {true, true, true}},
      {false, {4, bits(std::nan("")), 1}, {true, true, true}},
      {false, {4, bits(0.5), 1}, {true, false, true}},
      {true, {4, bits(0.5), 1}, {true, false, true}}, // training needs the mask
      {true, {4, bits(0.5), 0}, {true, true, false}},
  };
  for (const Case &c : cases) {
    std::vector<void *> hb, db;
    for (bool b : c.nonNull) {
      hb.push_back(b ? host.data() : nullptr);
      db.push_back(b ? dev.ptr : nullptr);
    }
    auto fn = c.bwd ? mgsrt_dropout_bwd : mgsrt_dropout_fwd;
    const uint64_t before = mgsrt_ctx_rng_state(gpu);
    mgsrt_status_t sc = fn(cpu, c.desc.data(), hb.data());
    mgsrt_status_t sg = fn(gpu, c.desc.data(), db.data());
    EXPECT_EQ(sc, MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sg, sc);
    EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)));
    EXPECT_EQ(mgsrt_ctx_rng_state(gpu), before) << "a rejected call draws nothing";
    mgsrt_ctx_clear(cpu);
    mgsrt_ctx_clear(gpu);
  }
}

} // namespace

// random_normal draws from the same stream: the CPU's values (the device's
// double log and cos may differ in their last bit, which rounding to float
// almost always hides: 1e-6 relative) and the same stream state after.
TEST_F(GpuDropout, RandomNormalMatchesCpu) {
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(1 << 20) + 5}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t desc[] = {n, bits(0.25), bits(1.5)};
    for (int call = 0; call < 2; ++call) {
      ASSERT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu)) << "call " << call;
      std::vector<float> c(n);
      void *cb[] = {c.data()};
      EXPECT_OK(cpu, mgsrt_random_normal(cpu, desc, cb));
      DeviceBuffer<float> dy(gpu, n);
      void *gb[] = {dy.ptr};
      EXPECT_OK(gpu, mgsrt_random_normal(gpu, desc, gb));
      EXPECT_OK(gpu, mgsrt_synchronize(gpu));
      std::vector<float> g = dy.download();
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(g[i], c[i], 1e-6f * (1.0f + std::fabs(c[i]))) << i << " call " << call;
      EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu)) << "call " << call;
    }
  }
}

// random_uniform: the CPU's values (the device may contract the double
// scaling into an FMA: 1e-6 relative) and the same stream state after.
TEST_F(GpuDropout, RandomUniformMatchesCpu) {
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(1 << 20) + 5}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t desc[] = {n, bits(-1.0), bits(49.0)};
    ASSERT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
    std::vector<float> c(n);
    void *cb[] = {c.data()};
    EXPECT_OK(cpu, mgsrt_random_uniform(cpu, desc, cb));
    DeviceBuffer<float> dy(gpu, n);
    void *gb[] = {dy.ptr};
    EXPECT_OK(gpu, mgsrt_random_uniform(gpu, desc, gb));
    EXPECT_OK(gpu, mgsrt_synchronize(gpu));
    std::vector<float> g = dy.download();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(g[i], c[i], 1e-6f * (1.0f + std::fabs(c[i]))) << i;
      ASSERT_LT(g[i], 49.0f) << i;
    }
    EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
  }
}
