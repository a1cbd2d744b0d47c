//===- OptimizerTest.cpp - AdamW and gradient-norm clipping kernels --------===//
//
// mgsrt_sgd_update in AdamW mode against torch.optim.AdamW's formulas in
// double, and mgsrt_clip_grad_norm against clip_grad_norm_'s.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace mgsrt_test;

namespace {

TEST(AdamWTest, ThreeStepsMatchTorchsFormulas) {
  const int64_t n = 50000;
  const double lr = 0.01, wd = 0.05, b1 = 0.8, b2 = 0.99, eps = 1e-6;
  Ctx ctx;
  mgsrt_ctx_set_sgd(ctx, static_cast<float>(lr), 0.0f, static_cast<float>(wd));
  std::vector<float> p = randomVec(n), state(2 * n, 0.0f);
  std::vector<double> pd(p.begin(), p.end()), m(n, 0.0), v(n, 0.0);
  const int64_t desc[] = {n};
  for (int step = 1; step <= 3; ++step) {
    std::vector<float> g = randomVec(n, -2, 2);
    mgsrt_ctx_set_adamw(ctx, static_cast<float>(b1), static_cast<float>(b2),
                        static_cast<float>(eps), step);
    void *bufs[] = {p.data(), g.data(), state.data()};
    ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, bufs));
    // The betas the kernel saw are float's.
    const double fb1 = static_cast<float>(b1), fb2 = static_cast<float>(b2);
    const double bc1 = 1 - std::pow(fb1, step), bc2 = 1 - std::pow(fb2, step);
    for (int64_t i = 0; i < n; ++i) {
      pd[i] *= 1 - lr * wd;
      m[i] = fb1 * m[i] + (1 - fb1) * g[i];
      v[i] = fb2 * v[i] + (1 - fb2) * g[i] * g[i];
      pd[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
    }
    for (int64_t i = 0; i < n; i += 101) {
      ASSERT_NEAR(p[i], pd[i], 1e-6) << "step " << step << " p[" << i << "]";
      ASSERT_NEAR(state[i], m[i], 1e-6) << "step " << step << " exp_avg[" << i << "]";
      ASSERT_NEAR(state[n + i], v[i], 1e-6) << "step " << step << " exp_avg_sq[" << i << "]";
    }
  }
}

// The update's vector loop (AVX-512 or AVX2 clones, blocks split across the
// threads) rounds as the float formula written out one operation at a time:
// equal bits on every element, tails of the vector width and of a block
// included, so the CUDA kernel, which repeats these operations unfused, can
// match it bit for bit. A non-finite gradient in the last block is noticed.
TEST(AdamWTest, VectorLoopRoundsAsTheScalarFormula) {
  const int64_t n = 3 * 16384 + 37;
  const float lr = 0.003f, wd = 0.1f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  const int64_t step = 5;
  Ctx ctx;
  mgsrt_ctx_set_sgd(ctx, lr, 0.0f, wd);
  mgsrt_ctx_set_adamw(ctx, b1, b2, eps, step);
  std::vector<float> p = randomVec(n), g = randomVec(n, -2, 2), state(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    state[i] = 0.1f * g[(i * 7) % n];
    state[n + i] = 0.01f * g[(i * 13) % n] * g[(i * 13) % n];
  }
  std::vector<float> wantP = p, wantM(state.begin(), state.begin() + n),
                     wantV(state.begin() + n, state.end());
  const double bc1 = 1.0 - std::pow(static_cast<double>(b1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(b2), static_cast<double>(step));
  const float decay = static_cast<float>(1.0 - static_cast<double>(lr) * wd);
  const float stepSize = static_cast<float>(lr / bc1), bc2Sqrt = static_cast<float>(std::sqrt(bc2));
  const float omb1 = static_cast<float>(1.0 - b1), omb2 = static_cast<float>(1.0 - b2);
  for (int64_t i = 0; i < n; ++i) {
    volatile float t; // one rounding per operation, as written
    t = b1 * wantM[i];
    const float mi = t + omb1 * g[i];
    t = g[i] * g[i];
    t = omb2 * t;
    const float vi = b2 * wantV[i] + t;
    wantM[i] = mi;
    wantV[i] = vi;
    t = std::sqrt(vi);
    const float denom = t / bc2Sqrt + eps;
    t = mi / denom;
    t = stepSize * t;
    const float pd = wantP[i] * decay;
    wantP[i] = pd - t;
  }
  const int64_t desc[] = {n};
  void *bufs[] = {p.data(), g.data(), state.data()};
  ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, bufs));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(p[i], wantP[i]) << "p[" << i << "]";
    ASSERT_EQ(state[i], wantM[i]) << "exp_avg[" << i << "]";
    ASSERT_EQ(state[n + i], wantV[i]) << "exp_avg_sq[" << i << "]";
  }
  const void *param = nullptr;
  EXPECT_EQ(mgsrt_ctx_take_nonfinite(ctx, &param), 0);
  g[n - 2] = INFINITY;
  ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, bufs));
  EXPECT_EQ(mgsrt_ctx_take_nonfinite(ctx, &param), 1);
  EXPECT_EQ(param, p.data());
}

TEST(ClipGradNormTest, ScalesTheNextUpdatesAsClipGradNorm) {
  // Two gradients of global norm sqrt(3^2 + 4^2 + 12^2) = 13.
  std::vector<float> g0 = {3.0f, 4.0f}, g1 = {12.0f};
  const int64_t desc[] = {2, bits(6.5), 2, 1};
  void *bufs[] = {g0.data(), g1.data()};
  Ctx ctx;
  ASSERT_OK(ctx, mgsrt_clip_grad_norm(ctx, desc, bufs));
  // p -= lr * g * 6.5 / (13 + 1e-6), plain SGD with lr 1.
  mgsrt_ctx_set_sgd(ctx, 1.0f, 0.0f, 0.0f);
  std::vector<float> p = {0.0f, 0.0f}, vel = {0.0f, 0.0f};
  const int64_t update[] = {2};
  void *ubufs[] = {p.data(), g0.data(), vel.data()};
  ASSERT_OK(ctx, mgsrt_sgd_update(ctx, update, ubufs));
  const double scale = 6.5 / (13 + 1e-6);
  EXPECT_FLOAT_EQ(p[0], static_cast<float>(-3 * scale));
  EXPECT_FLOAT_EQ(p[1], static_cast<float>(-4 * scale));
  EXPECT_EQ(g0[0], 3.0f) << "the gradients themselves are not changed";

  // Below the limit: a factor of exactly 1, the update bit-identical to none.
  const int64_t loose[] = {2, bits(100.0), 2, 1};
  ASSERT_OK(ctx, mgsrt_clip_grad_norm(ctx, loose, bufs));
  std::vector<float> q = {0.5f, -0.25f}, qv = {0.0f, 0.0f};
  void *qbufs[] = {q.data(), g0.data(), qv.data()};
  ASSERT_OK(ctx, mgsrt_sgd_update(ctx, update, qbufs));
  EXPECT_EQ(q[0], 0.5f - 3.0f);
  EXPECT_EQ(q[1], -0.25f - 4.0f);
}

TEST(ClipGradNormTest, NormDoesNotDependOnTheThreads) {
  // A gradient large enough to be summed in parallel chunks: the same scale
  // bit for bit whatever the chunks' completion order.
  const int64_t n = 3 * (1 << 16) + 17;
  std::vector<float> g = randomVec(n);
  const int64_t desc[] = {1, bits(1.0), n};
  void *bufs[] = {g.data()};
  double sum = 0;
  for (float x : g)
    sum += static_cast<double>(x) * x;
  std::vector<float> seen;
  for (int run = 0; run < 3; ++run) {
    Ctx ctx;
    ASSERT_OK(ctx, mgsrt_clip_grad_norm(ctx, desc, bufs));
    mgsrt_ctx_set_sgd(ctx, 1.0f, 0.0f, 0.0f);
    std::vector<float> p = {0.0f}, vel = {0.0f}, one = {1.0f};
    const int64_t update[] = {1};
    void *ubufs[] = {p.data(), one.data(), vel.data()};
    ASSERT_OK(ctx, mgsrt_sgd_update(ctx, update, ubufs));
    seen.push_back(-p[0]);
  }
  EXPECT_NEAR(seen[0], 1.0 / (std::sqrt(sum) + 1e-6), 1e-7);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
}

} // namespace

// Loss scaling: the cross-entropy's gradient is the loss scale times the
// unscaled one (a power of two: exactly), the loss itself is not scaled, and
// the SGD, AdamW and clipped updates divide the scale out: on those scaled
// gradients they end bit for bit where the unscaled ones do.
TEST(LossScaleTest, LossGradientScaledUpdatesUnscaled) {
  const int64_t n = 4, c = 3;
  std::vector<float> logits = randomVec(n * c, -2, 2);
  std::vector<int64_t> labels = {0, 2, 1, 2};
  const int64_t ce[] = {n, c, -100, bits(0.0), 0};
  auto crossEntropy = [&](float scale, std::vector<float> &dlogits) {
    Ctx ctx;
    mgsrt_ctx_set_loss_scale(ctx, scale);
    float loss = NAN;
    void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), nullptr};
    EXPECT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, ce, bufs));
    return loss;
  };
  std::vector<float> g(n * c), gs(n * c);
  const float loss = crossEntropy(1.0f, g), lossScaled = crossEntropy(1024.0f, gs);
  EXPECT_EQ(loss, lossScaled);
  for (int64_t i = 0; i < n * c; ++i)
    ASSERT_EQ(gs[i], 1024.0f * g[i]) << i;

  for (bool adamw : {false, true})
    for (bool clip : {false, true}) {
      auto update = [&](float scale, std::vector<float> &grad) {
        Ctx ctx;
        mgsrt_ctx_set_loss_scale(ctx, scale);
        mgsrt_ctx_set_sgd(ctx, 0.1f, 0.9f, 0.01f);
        if (adamw)
          mgsrt_ctx_set_adamw(ctx, 0.9f, 0.999f, 1e-8f, 1);
        const int64_t m = static_cast<int64_t>(grad.size());
        if (clip) { // a max norm the gradient exceeds: the clipping scales it
          const int64_t desc[] = {1, bits(0.05), m};
          void *bufs[] = {grad.data()};
          EXPECT_OK(ctx, mgsrt_clip_grad_norm(ctx, desc, bufs));
        }
        std::vector<float> p(logits), state(2 * m, 0.0f);
        const int64_t desc[] = {m};
        void *bufs[] = {p.data(), grad.data(), state.data()};
        EXPECT_OK(ctx, mgsrt_sgd_update(ctx, desc, bufs));
        return p;
      };
      EXPECT_EQ(update(1024.0f, gs), update(1.0f, g))
          << (adamw ? "adamw" : "sgd") << (clip ? ", clipped" : "");
    }
  // A scale that is not a positive finite number is ignored.
  Ctx ctx;
  mgsrt_ctx_set_loss_scale(ctx, 8.0f);
  for (float bad : {0.0f, -1.0f, INFINITY, NAN})
    mgsrt_ctx_set_loss_scale(ctx, bad);
  EXPECT_EQ(mgsrt_ctx_loss_scale(ctx), 8.0f);
}
