//===- LossTest.cpp - elementwise_loss ------------------------------------===//
//
// elementwise_loss against torch.nn's formulas written out in double (mse,
// l1, smooth_l1 with beta 1, 0.5 and 0, bce_with_logits on large logits and
// with a pos_weight; value, the graph's own loss: x, its gradient 1 times
// the loss scale);
// the gradient against finite differences; the loss alone; enough elements
// for the OpenMP threads.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mgsrt_test;

namespace {

/// torch.nn's loss of one element, as its documentation writes it (pw:
/// BCEWithLogitsLoss's pos_weight of the element's position).
double reference(int kind, double x, double t, double beta, double pw = 1.0) {
  const double d = x - t;
  switch (kind) {
  case MGSRT_LOSS_MSE:
    return d * d;
  case MGSRT_LOSS_L1:
    return std::fabs(d);
  case MGSRT_LOSS_SMOOTH_L1:
    return std::fabs(d) < beta ? 0.5 * d * d / beta : std::fabs(d) - 0.5 * beta;
  case MGSRT_LOSS_VALUE: // the graph's own loss: x itself, t unread
    return x;
  default: {
    const double p = 1.0 / (1.0 + std::exp(-x));
    // -(pw t log p + (1 - t) log(1 - p)), with log(1 - p) = -x + log p.
    return -(pw * t * std::log(p) + (1.0 - t) * (std::log(p) - x));
  }
  }
}

struct Case {
  int kind;
  double beta;
  const char *name;
  bool posWeight = false;
};
const Case kCases[] = {{MGSRT_LOSS_MSE, 1.0, "mse"},
                       {MGSRT_LOSS_L1, 1.0, "l1"},
                       {MGSRT_LOSS_SMOOTH_L1, 1.0, "smooth_l1 beta 1"},
                       {MGSRT_LOSS_SMOOTH_L1, 0.5, "smooth_l1 beta 0.5"},
                       {MGSRT_LOSS_SMOOTH_L1, 0.0, "smooth_l1 beta 0 (l1)"},
                       {MGSRT_LOSS_BCE_WITH_LOGITS, 1.0, "bce_with_logits"},
                       {MGSRT_LOSS_BCE_WITH_LOGITS, 1.0, "bce_with_logits pos_weight", true},
                       {MGSRT_LOSS_VALUE, 1.0, "value (a loss the graph computes)"}};

/// A pos_weight per position of a last axis of 3 (0 included).
std::vector<float> posWeights() { return {0.5f, 3.0f, 0.0f}; }

TEST(LossTest, MatchesTheReferenceFormulas) {
  Ctx ctx;
  const int64_t n = 39, last = 3;
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    std::vector<float> x = randomVec(n, -3, 3), t = randomVec(n, -2, 2), dx(n, -7.0f);
    std::vector<float> pw = posWeights();
    if (c.kind == MGSRT_LOSS_BCE_WITH_LOGITS)
      t = randomVec(n, 0, 1); // probabilities
    const int64_t desc[] = {c.kind, n, bits(c.beta), last, 0};
    float *posWeight = c.posWeight ? pw.data() : nullptr;
    float loss = -1;
    void *bufs[] = {x.data(), t.data(), &loss, dx.data(), posWeight};
    ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
    double want = 0;
    for (int64_t i = 0; i < n; ++i)
      want += reference(c.kind, x[i], t[i], c.beta, c.posWeight ? pw[i % last] : 1.0);
    want /= n;
    EXPECT_NEAR(loss, want, 1e-6 * std::abs(want) + 1e-7);
    float lossOnly = -1;
    void *noGrad[] = {x.data(), t.data(), &lossOnly, nullptr, posWeight};
    ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, noGrad));
    EXPECT_EQ(lossOnly, loss);
  }
}

// Logits far past float32's exp range: BCE stays finite and exact
// (max(x, 0) - x t + log1p(exp(-|x|))).
TEST(LossTest, BceWithLogitsIsStableForLargeLogits) {
  Ctx ctx;
  std::vector<float> x = {200.0f, -200.0f, 90.0f, -90.0f}, t = {1.0f, 0.0f, 0.0f, 1.0f};
  std::vector<float> dx(4);
  const int64_t desc[] = {MGSRT_LOSS_BCE_WITH_LOGITS, 4, bits(1.0), 2, 0};
  float loss = -1;
  void *bufs[] = {x.data(), t.data(), &loss, dx.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
  EXPECT_NEAR(loss, (0.0 + 0.0 + 90.0 + 90.0) / 4, 1e-5);
  EXPECT_NEAR(dx[0], 0.0f, 1e-7);
  EXPECT_NEAR(dx[2], 0.25f, 1e-7); // (sigmoid(90) - 0) / 4
  EXPECT_NEAR(dx[3], -0.25f, 1e-7);
  // With pos_weight 2 on the second position: the positive at x = -90
  // costs twice as much.
  std::vector<float> pw = {1.0f, 2.0f};
  bufs[4] = pw.data();
  ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
  EXPECT_NEAR(loss, (0.0 + 0.0 + 90.0 + 2 * 90.0) / 4, 1e-5);
  EXPECT_NEAR(dx[3], -0.5f, 1e-7);
}

TEST(LossTest, GradientMatchesFiniteDifferences) {
  Ctx ctx;
  const int64_t n = 12;
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    std::vector<float> x = randomVec(n, -3, 3), t = randomVec(n, -2, 2), dx(n);
    std::vector<float> pw = posWeights();
    float *posWeight = c.posWeight ? pw.data() : nullptr;
    if (c.kind == MGSRT_LOSS_BCE_WITH_LOGITS)
      t = randomVec(n, 0, 1);
    // Away from the kinks of l1 and smooth_l1 (|x - t| = 0 and beta).
    for (int64_t i = 0; i < n; ++i) {
      const double d = std::fabs(double(x[i]) - t[i]);
      if (d < 0.05 || std::fabs(d - c.beta) < 0.05)
        x[i] += 0.2f;
    }
    const int64_t desc[] = {c.kind, n, bits(c.beta), 3, 0};
    auto fwd = [&] {
      float loss = 0;
      void *bufs[] = {x.data(), t.data(), &loss, nullptr, posWeight};
      EXPECT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
      return std::vector<float>{loss};
    };
    float loss = 0;
    void *bufs[] = {x.data(), t.data(), &loss, dx.data(), posWeight};
    ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
    checkGrad(dx, x, {1.0f}, fwd, 1e-2, 5e-3, "dx");
  }
}

// Enough elements for the threads: the sum in double is within float
// rounding of the reference.
TEST(LossTest, LargeCountIsParallelAndMatches) {
  Ctx ctx;
  const int64_t n = 1 << 20;
  std::vector<float> x = randomVec(n, -1, 1), t = randomVec(n, -1, 1), dx(n);
  const int64_t desc[] = {MGSRT_LOSS_MSE, n, bits(1.0), 1, 0};
  float loss = 0;
  void *bufs[] = {x.data(), t.data(), &loss, dx.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
  double want = 0;
  for (int64_t i = 0; i < n; ++i)
    want += (double(x[i]) - t[i]) * (double(x[i]) - t[i]);
  EXPECT_NEAR(loss, want / n, 1e-6 * want / n);
  EXPECT_FLOAT_EQ(dx[5], static_cast<float>(2.0 * (double(x[5]) - t[5]) / n));
}

// pos_weight is BCE's; the last axis must divide the count.
TEST(LossTest, PosWeightAndLastAxisErrors) {
  Ctx ctx;
  std::vector<float> x(6), t(6), pw(3, 1.0f);
  float loss = -1;
  void *bufs[] = {x.data(), t.data(), &loss, nullptr, pw.data()};
  const int64_t mse[] = {MGSRT_LOSS_MSE, 6, bits(1.0), 3, 0};
  EXPECT_EQ(mgsrt_elementwise_loss(ctx, mse, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("pos_weight is bce_with_logits's, not loss kind 0"),
            std::string::npos)
      << ctx.message();
  mgsrt_ctx_clear(ctx);
  const int64_t badLast[] = {MGSRT_LOSS_BCE_WITH_LOGITS, 6, bits(1.0), 4, 0};
  EXPECT_EQ(mgsrt_elementwise_loss(ctx, badLast, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("last axis 4 must be positive and divide count=6"),
            std::string::npos)
      << ctx.message();
  EXPECT_EQ(loss, -1.0f);
}

// Reduction "sum": the loss and the gradient are the mean's times the count.
TEST(LossTest, SumIsTheMeanTimesTheCount) {
  Ctx ctx;
  const int64_t n = 12, last = 3;
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    std::vector<float> x = randomVec(n, -3, 3), t = randomVec(n, 0, 1), pw = posWeights();
    float *posWeight = c.posWeight ? pw.data() : nullptr;
    float mean = -1, sum = -1;
    std::vector<float> dmean(n), dsum(n);
    const int64_t meanDesc[] = {c.kind, n, bits(c.beta), last, 0};
    const int64_t sumDesc[] = {c.kind, n, bits(c.beta), last, 1};
    void *meanBufs[] = {x.data(), t.data(), &mean, dmean.data(), posWeight};
    void *sumBufs[] = {x.data(), t.data(), &sum, dsum.data(), posWeight};
    ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, meanDesc, meanBufs));
    ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, sumDesc, sumBufs));
    EXPECT_NEAR(sum, mean * n, 1e-6 * std::abs(sum) + 1e-6);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(dsum[i], dmean[i] * n, 1e-6 * std::abs(dsum[i]) + 1e-7) << i;
  }
}

// The graph's own loss (a scalar): the loss is the value, its gradient the
// loss scale (f16's dynamic scaling multiplies it as every loss's), the
// target unread.
TEST(LossTest, ValueSeedsBackpropWithTheLossScale) {
  Ctx ctx;
  float x = 2.5f, t = NAN, loss = -1, dx = -1;
  void *bufs[] = {&x, &t, &loss, &dx, nullptr};
  const int64_t desc[] = {MGSRT_LOSS_VALUE, 1, bits(1.0), 1, 0};
  ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
  EXPECT_EQ(loss, 2.5f);
  EXPECT_EQ(dx, 1.0f);
  mgsrt_ctx_set_loss_scale(ctx, 1024.0f);
  ASSERT_OK(ctx, mgsrt_elementwise_loss(ctx, desc, bufs));
  EXPECT_EQ(loss, 2.5f);
  EXPECT_EQ(dx, 1024.0f);
}

} // namespace
