//===- SoftmaxTest.cpp - softmax, log-softmax, cross-entropy --------------===//

#include "TestUtil.h"

using namespace mgsrt_test;

namespace {

struct SoftmaxCase {
  int64_t outer, axis, inner;
  bool log;
};

std::vector<double> softmaxRef(const SoftmaxCase &sc, const std::vector<float> &x) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < sc.outer; ++o)
    for (int64_t i = 0; i < sc.inner; ++i) {
      auto at = [&](int64_t a) { return (o * sc.axis + a) * sc.inner + i; };
      double mx = -INFINITY;
      for (int64_t a = 0; a < sc.axis; ++a)
        mx = std::max(mx, static_cast<double>(x[at(a)]));
      double sum = 0;
      for (int64_t a = 0; a < sc.axis; ++a)
        sum += std::exp(x[at(a)] - mx);
      for (int64_t a = 0; a < sc.axis; ++a)
        y[at(a)] = sc.log ? x[at(a)] - mx - std::log(sum) : std::exp(x[at(a)] - mx) / sum;
    }
  return y;
}

class SoftmaxTest : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxTest, ForwardMatchesReference) {
  Ctx ctx;
  const SoftmaxCase sc = GetParam();
  const int64_t desc[] = {sc.outer, sc.axis, sc.inner, sc.log};
  std::vector<float> x = randomVec(sc.outer * sc.axis * sc.inner, -5, 5), y(x.size());
  x[0] = 80.0f; // exp would overflow without the max shift
  void *bufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_softmax_fwd(ctx, desc, bufs));
  expectClose(y, softmaxRef(sc, x), 1e-5, 1e-6, "y");
}

TEST_P(SoftmaxTest, BackwardMatchesFiniteDifferences) {
  const SoftmaxCase sc = GetParam();
  const int64_t size = sc.outer * sc.axis * sc.inner;
  Ctx ctx;
  const int64_t desc[] = {sc.outer, sc.axis, sc.inner, sc.log};
  std::vector<float> x = randomVec(size, -2, 2), dy = randomVec(size), dx(size);
  auto fwd = [&] {
    std::vector<float> y(size);
    void *bufs[] = {x.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_softmax_fwd(ctx, desc, bufs));
    return y;
  };
  std::vector<float> y = fwd();
  void *bufs[] = {y.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_softmax_bwd(ctx, desc, bufs));
  checkGrad(dx, x, dy, fwd, 1e-2, 5e-3, "dx");
}

TEST_P(SoftmaxTest, BackwardMatchesReference) {
  Ctx ctx;
  const SoftmaxCase sc = GetParam();
  const int64_t desc[] = {sc.outer, sc.axis, sc.inner, sc.log};
  const int64_t size = sc.outer * sc.axis * sc.inner;
  std::vector<float> x = randomVec(size, -3, 3), y(size), dy = randomVec(size), dx(size);
  void *fb[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_softmax_fwd(ctx, desc, fb));
  void *bb[] = {y.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_softmax_bwd(ctx, desc, bb));
  std::vector<double> want(size);
  for (int64_t o = 0; o < sc.outer; ++o)
    for (int64_t i = 0; i < sc.inner; ++i) {
      auto at = [&](int64_t a) { return (o * sc.axis + a) * sc.inner + i; };
      double s = 0;
      for (int64_t a = 0; a < sc.axis; ++a)
        s += sc.log ? dy[at(a)] : static_cast<double>(dy[at(a)]) * y[at(a)];
      for (int64_t a = 0; a < sc.axis; ++a)
        want[at(a)] = sc.log ? dy[at(a)] - std::exp(static_cast<double>(y[at(a)])) * s
                             : y[at(a)] * (dy[at(a)] - s);
    }
  expectClose(dx, want, 1e-4, 1e-5, "dx");
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxTest,
                         ::testing::Values(SoftmaxCase{4, 10, 1, false},
                                           SoftmaxCase{4, 10, 1, true},
                                           SoftmaxCase{3, 5, 4, false},
                                           SoftmaxCase{3, 5, 4, true},
                                           SoftmaxCase{1, 7, 1, false},
                                           SoftmaxCase{2, 3, 300, false}, // inner chunks
                                           SoftmaxCase{2, 3, 300, true},
                                           SoftmaxCase{512, 100, 1, true}));

// Attention's rows: 128 scores under a causal mask (-inf above the diagonal,
// as the GPT export's frozen mask adds), plus a row length that is no
// multiple of any vector width. A masked score's probability and gradient are
// exactly 0; the rest match a double reference to a few float ulps.
TEST(SoftmaxRows, CausalMaskGivesExactZeros) {
  for (const int64_t t : {128, 37}) {
    Ctx ctx;
    const int64_t desc[] = {t, t, 1, 0};
    std::vector<float> x = randomVec(t * t, -6, 6), y(x.size()), dy = randomVec(x.size()),
                       dx(x.size());
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = i + 1; j < t; ++j)
        x[i * t + j] = -INFINITY;
    void *fb[] = {x.data(), y.data()};
    ASSERT_OK(ctx, mgsrt_softmax_fwd(ctx, desc, fb));
    void *bb[] = {y.data(), dy.data(), dx.data()};
    ASSERT_OK(ctx, mgsrt_softmax_bwd(ctx, desc, bb));
    std::vector<double> want = softmaxRef({t, t, 1, false}, x);
    expectClose(y, want, 1e-6, 1e-9, "y");
    for (int64_t i = 0; i < t; ++i) {
      double s = 0;
      for (int64_t j = 0; j <= i; ++j)
        s += static_cast<double>(dy[i * t + j]) * y[i * t + j];
      for (int64_t j = 0; j < t; ++j) {
        if (j > i) {
          EXPECT_EQ(y[i * t + j], 0.0f) << "t=" << t << " row " << i << " col " << j;
          EXPECT_EQ(dx[i * t + j], 0.0f) << "t=" << t << " row " << i << " col " << j;
        } else {
          EXPECT_NEAR(dx[i * t + j], y[i * t + j] * (dy[i * t + j] - s),
                      1e-6 * std::abs(y[i * t + j]) + 1e-7)
              << "t=" << t << " row " << i << " col " << j;
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Softmax cross-entropy
//===----------------------------------------------------------------------===//

/// The mean softmax cross-entropy of n rows of c logits and its gradient, in
/// double.
std::pair<double, std::vector<double>> crossEntropyRef(const std::vector<float> &logits,
                                                       const std::vector<int64_t> &labels,
                                                       int64_t n, int64_t c) {
  double loss = 0;
  std::vector<double> grad(n * c);
  for (int64_t i = 0; i < n; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < c; ++j)
      mx = std::max(mx, static_cast<double>(logits[i * c + j]));
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(logits[i * c + j] - mx);
    const double lse = mx + std::log(sum);
    loss += lse - logits[i * c + labels[i]];
    for (int64_t j = 0; j < c; ++j)
      grad[i * c + j] = (std::exp(logits[i * c + j] - lse) - (j == labels[i])) / n;
  }
  return {loss / n, grad};
}

TEST(CrossEntropyTest, LossAndGradientMatchReference) {
  Ctx ctx;
  const int64_t n = 6, c = 5;
  const int64_t desc[] = {n, c};
  std::vector<float> logits = randomVec(n * c, -3, 3), dlogits(n * c);
  logits[2] = 500.0f; // stability
  std::vector<int64_t> labels = {0, 4, 2, 2, 1, 3};
  float loss = 0;
  void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data()};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
  auto [want, wantD] = crossEntropyRef(logits, labels, n, c);
  EXPECT_NEAR(loss, want, 1e-5 * std::abs(want) + 1e-6);
  expectClose(dlogits, wantD, 1e-5, 1e-6, "dlogits");
  // The loss alone (dlogits null).
  float loss2 = 0;
  void *lossOnly[] = {logits.data(), labels.data(), &loss2, nullptr};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, lossOnly));
  EXPECT_EQ(loss2, loss);
}

TEST(CrossEntropyTest, GradientMatchesFiniteDifferences) {
  Ctx ctx;
  const int64_t n = 4, c = 7;
  const int64_t desc[] = {n, c};
  std::vector<float> logits = randomVec(n * c, -2, 2), dlogits(n * c);
  std::vector<int64_t> labels = {6, 0, 3, 3};
  auto fwd = [&] {
    float loss = 0;
    void *bufs[] = {logits.data(), labels.data(), &loss, nullptr};
    EXPECT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
    return std::vector<float>{loss};
  };
  float loss = 0;
  void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data()};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
  checkGrad(dlogits, logits, {1.0f}, fwd, 1e-2, 5e-3, "dlogits");
}

// A language model's batch (512 tokens of 2,000 classes), split across the
// threads: float exps summed in double stay within a few float ulps of the
// double reference, loss and gradient alike.
TEST(CrossEntropyTest, LargeBatchIsParallelAndMatches) {
  Ctx ctx;
  const int64_t n = 512, c = 2000;
  const int64_t desc[] = {n, c};
  std::vector<float> logits = randomVec(n * c, -8, 8), dlogits(n * c);
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i)
    labels[i] = (i * 613) % c;
  float loss = 0;
  void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data()};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
  auto [want, wantD] = crossEntropyRef(logits, labels, n, c);
  EXPECT_NEAR(loss, want, 1e-6 * std::abs(want));
  expectClose(dlogits, wantD, 1e-6, 1e-6 / n, "dlogits");
  double rowSum = 0;
  for (int64_t j = 0; j < c; ++j)
    rowSum += dlogits[j];
  EXPECT_NEAR(rowSum, 0.0, 1e-8); // softmax - onehot sums to zero
}

} // namespace
