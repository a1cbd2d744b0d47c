//===- OptimizerTest.cpp - GPU SGD/AdamW updates and clipping vs the CPU --===//

#include "GpuTestUtil.h"

using namespace mgsrt_test;

namespace {

using SgdGpu = GpuTest;

// Also under a loss scale (the gradients 1024x, the update dividing it out).
TEST_F(SgdGpu, MatchesTheCpuBitForBit) {
  struct Hyper {
    float lr, momentum, wd;
  };
  const Hyper hypers[] = {
      {0.1f, 0.9f, 5e-4f}, {0.01f, 0.0f, 0.0f}, {1.3f, 0.99f, 0.1f}, {3e-4f, 0.5f, 1e-2f}};
  for (float scale : {1.0f, 1024.0f})
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000), int64_t(1 << 20) + 5}) {
      for (mgsrt_ctx_t *c : {cpu, gpu})
        mgsrt_ctx_set_loss_scale(c, scale);
      for (const Hyper &h : hypers) {
        std::vector<float> param = randomVec(n, -2.0f, 2.0f), vel = randomVec(n, -1.0f, 1.0f);
        DeviceBuffer<float> dp(gpu, param), dv(gpu, vel), dg(gpu, n);
        mgsrt_ctx_set_sgd(cpu, h.lr, h.momentum, h.wd);
        mgsrt_ctx_set_sgd(gpu, h.lr, h.momentum, h.wd);
        const int64_t desc[] = {n};
        for (int step = 0; step < 3; ++step) { // velocities and params carried over
          std::vector<float> grad = randomVec(n, -scale, scale);
          dg.upload(grad);
          void *cpuBufs[] = {param.data(), grad.data(), vel.data()};
          void *gpuBufs[] = {dp.ptr, dg.ptr, dv.ptr};
          ASSERT_OK(cpu, mgsrt_sgd_update(cpu, desc, cpuBufs));
          ASSERT_OK(gpu, mgsrt_sgd_update(gpu, desc, gpuBufs));
          const std::string what = "n=" + std::to_string(n) + " lr=" + std::to_string(h.lr) +
                                   " scale=" + std::to_string(scale) +
                                   " step=" + std::to_string(step);
          EXPECT_TRUE(bitsEqual(dp.download(), param)) << what << " (param)";
          EXPECT_TRUE(bitsEqual(dv.download(), vel)) << what << " (velocity)";
        }
      }
    }
}

TEST_F(SgdGpu, EmptyAndInvalid) {
  const int64_t empty[] = {0};
  void *none[] = {nullptr, nullptr, nullptr};
  EXPECT_OK(gpu, mgsrt_sgd_update(gpu, empty, none));
  const int64_t negative[] = {-2};
  std::vector<float> h(4);
  void *cpuBufs[] = {h.data(), h.data(), h.data()};
  DeviceBuffer<float> d(gpu, 4);
  void *gpuBufs[] = {d.ptr, d.ptr, d.ptr};
  EXPECT_EQ(mgsrt_sgd_update(gpu, negative, gpuBufs), mgsrt_sgd_update(cpu, negative, cpuBufs));
  EXPECT_EQ(gpu.message(), cpu.message());
  EXPECT_EQ(mgsrt_ctx_status(gpu), MGSRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(SgdGpu, NullBufferIsRejectedLikeTheCpu) {
  const int64_t desc[] = {4};
  std::vector<float> h(4);
  DeviceBuffer<float> d(gpu, 4);
  void *cpuBufs[] = {h.data(), nullptr, h.data()};
  void *gpuBufs[] = {d.ptr, nullptr, d.ptr};
  EXPECT_EQ(mgsrt_sgd_update(gpu, desc, gpuBufs), mgsrt_sgd_update(cpu, desc, cpuBufs));
  EXPECT_EQ(gpu.message(), cpu.message());
}

// Also under a loss scale (the gradients 1024x, the update dividing it out).
TEST_F(SgdGpu, AdamWWithClippingMatchesTheCpuBitForBit) {
  const std::pair<float, int64_t> cases[] = {
      {1.0f, 7}, {1.0f, (1 << 20) + 5}, {1024.0f, 7}, {1024.0f, (1 << 20) + 5}};
  for (auto [scale, n] : cases) {
    std::vector<float> param = randomVec(n, -2.0f, 2.0f), state(2 * n, 0.0f);
    DeviceBuffer<float> dp(gpu, param), ds(gpu, state), dg(gpu, n);
    for (mgsrt_ctx_t *c : {cpu.ctx, gpu.ctx}) {
      mgsrt_ctx_set_sgd(c, 1e-3f, 0.0f, 0.01f);
      mgsrt_ctx_set_loss_scale(c, scale);
    }
    const int64_t desc[] = {n};
    const int64_t clip[] = {1, bits(0.5), n};
    for (int step = 1; step <= 3; ++step) { // moments and params carried over
      std::vector<float> grad = randomVec(n, -scale, scale);
      dg.upload(grad);
      void *cpuGrad[] = {grad.data()};
      void *gpuGrad[] = {dg.ptr};
      ASSERT_OK(cpu, mgsrt_clip_grad_norm(cpu, clip, cpuGrad));
      ASSERT_OK(gpu, mgsrt_clip_grad_norm(gpu, clip, gpuGrad));
      for (mgsrt_ctx_t *c : {cpu.ctx, gpu.ctx})
        mgsrt_ctx_set_adamw(c, 0.9f, 0.999f, 1e-8f, step);
      void *cpuBufs[] = {param.data(), grad.data(), state.data()};
      void *gpuBufs[] = {dp.ptr, dg.ptr, ds.ptr};
      ASSERT_OK(cpu, mgsrt_sgd_update(cpu, desc, cpuBufs));
      ASSERT_OK(gpu, mgsrt_sgd_update(gpu, desc, gpuBufs));
      const std::string what = "n=" + std::to_string(n) + " step=" + std::to_string(step) +
                               " loss scale " + std::to_string(scale);
      EXPECT_TRUE(bitsEqual(dp.download(), param)) << what << " (param)";
      EXPECT_TRUE(bitsEqual(ds.download(), state)) << what << " (moments)";
    }
  }
}

// As the CPU update (Kernels/ElementwiseTest's NotesNonfiniteGradients): a
// gradient holding NaN or infinity is noted and the first such param named,
// for SGD and AdamW. The flags come back with the next copy to the host (the
// driver's loss) or mgsrt_synchronize.
TEST_F(SgdGpu, NotesNonfiniteGradientsLikeTheCpu) {
  const int64_t n = 100000;
  const int64_t desc[] = {n};
  std::vector<float> g = randomVec(n);
  DeviceBuffer<float> p1(gpu, randomVec(n)), p2(gpu, randomVec(n)), dg(gpu, g),
      state(gpu, std::vector<float>(2 * n, 0.0f));
  mgsrt_ctx_set_sgd(gpu, 0.1f, 0.0f, 0.0f);
  void *finite[] = {p1.ptr, dg.ptr, state.ptr};
  ASSERT_OK(gpu, mgsrt_sgd_update(gpu, desc, finite));
  ASSERT_OK(gpu, mgsrt_synchronize(gpu));
  const void *first = &gpu;
  EXPECT_EQ(mgsrt_ctx_take_nonfinite(gpu, &first), 0);
  EXPECT_EQ(first, nullptr);
  for (bool adamw : {false, true})
    for (bool copyBack : {false, true})
      for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
        if (adamw)
          mgsrt_ctx_set_adamw(gpu, 0.9f, 0.999f, 1e-8f, 1);
        g[n - 3] = bad;
        dg.upload(g);
        void *b1[] = {p1.ptr, dg.ptr, state.ptr};
        void *b2[] = {p2.ptr, dg.ptr, state.ptr};
        ASSERT_OK(gpu, mgsrt_sgd_update(gpu, desc, b2));
        ASSERT_OK(gpu, mgsrt_sgd_update(gpu, desc, b1));
        if (copyBack)
          (void)p1.download(); // the flags come back with it
        else
          ASSERT_OK(gpu, mgsrt_synchronize(gpu));
        const std::string what = std::string(adamw ? "adamw " : "sgd ") +
                                 (copyBack ? "after a copy " : "after a synchronize ") +
                                 std::to_string(bad);
        EXPECT_EQ(mgsrt_ctx_take_nonfinite(gpu, &first), 2) << what;
        EXPECT_EQ(first, p2.ptr) << what;
        EXPECT_EQ(mgsrt_ctx_take_nonfinite(gpu, nullptr), 0) << what; // taken: afresh
      }
}

// More updates between two read-backs than the flags hold (4096): the ones
// beyond are still counted, the first still named.
TEST_F(SgdGpu, NotesNonfiniteGradientsBeyondTheFlagsCapacity) {
  const int64_t n = 3;
  const int64_t desc[] = {n};
  DeviceBuffer<float> p(gpu, randomVec(n)), q(gpu, randomVec(n)), v(gpu, n),
      good(gpu, randomVec(n)), bad(gpu, std::vector<float>{1.0f, std::nanf(""), 2.0f});
  mgsrt_ctx_set_sgd(gpu, 0.1f, 0.0f, 0.0f);
  void *ok[] = {p.ptr, good.ptr, v.ptr};
  void *nan[] = {q.ptr, bad.ptr, v.ptr};
  for (int i = 0; i < 5000; ++i)
    ASSERT_OK(gpu, mgsrt_sgd_update(gpu, desc, i == 4500 || i == 4999 ? nan : ok));
  ASSERT_OK(gpu, mgsrt_synchronize(gpu));
  const void *first = nullptr;
  EXPECT_EQ(mgsrt_ctx_take_nonfinite(gpu, &first), 2);
  EXPECT_EQ(first, q.ptr);
}

} // namespace
