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
/// double, as torch.nn.functional.cross_entropy: rows labelled `ignore` are
/// left out of the loss and of the mean, the target is (1 - smoothing)
/// onehot + smoothing / c; with class weights w, PyTorch's weight=: class j's
/// term of a row is weighted by w[j] and the mean divides by the sum of
/// w[label] over the counted rows (0 / 0 taken as 0); `sum`: not divided
/// (reduction "sum").
std::pair<double, std::vector<double>>
crossEntropyRef(const std::vector<float> &logits, const std::vector<int64_t> &labels, int64_t n,
                int64_t c, int64_t ignore = -100, double smoothing = 0.0,
                const std::vector<float> &weight = {}, bool sum = false) {
  auto w = [&](int64_t j) { return weight.empty() ? 1.0 : static_cast<double>(weight[j]); };
  double loss = 0, norm = 0;
  std::vector<double> rowLossGrad(n * c, 0.0);
  for (int64_t i = 0; i < n; ++i)
    if (labels[i] != ignore)
      norm += w(labels[i]);
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] == ignore)
      continue;
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < c; ++j)
      mx = std::max(mx, static_cast<double>(logits[i * c + j]));
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(logits[i * c + j] - mx);
    const double lse = mx + std::log(sum);
    // d(-log p_j)/dx_k = p_k - [j == k], each term j weighted by
    // target_j w[j]: the row's gradient is p sum_j target_j w[j] - target w.
    double scale = 0;
    for (int64_t j = 0; j < c; ++j) {
      const double target = (1.0 - smoothing) * (j == labels[i]) + smoothing / c;
      loss -= target * w(j) * (logits[i * c + j] - lse);
      scale += target * w(j);
    }
    for (int64_t j = 0; j < c; ++j) {
      const double target = (1.0 - smoothing) * (j == labels[i]) + smoothing / c;
      rowLossGrad[i * c + j] = std::exp(logits[i * c + j] - lse) * scale - target * w(j);
    }
  }
  if (sum)
    return {loss, rowLossGrad};
  for (double &g : rowLossGrad)
    g = norm != 0 ? g / norm : 0.0;
  return {norm != 0 ? loss / norm : 0.0, rowLossGrad};
}

TEST(CrossEntropyTest, LossAndGradientMatchReference) {
  Ctx ctx;
  const int64_t n = 6, c = 5;
  const int64_t desc[] = {n, c, -100, 0, 0};
  std::vector<float> logits = randomVec(n * c, -3, 3), dlogits(n * c);
  logits[2] = 500.0f; // stability
  std::vector<int64_t> labels = {0, 4, 2, 2, 1, 3};
  float loss = 0;
  void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
  auto [want, wantD] = crossEntropyRef(logits, labels, n, c);
  EXPECT_NEAR(loss, want, 1e-5 * std::abs(want) + 1e-6);
  expectClose(dlogits, wantD, 1e-5, 1e-6, "dlogits");
  // The loss alone (dlogits null).
  float loss2 = 0;
  void *lossOnly[] = {logits.data(), labels.data(), &loss2, nullptr, nullptr};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, lossOnly));
  EXPECT_EQ(loss2, loss);
}

// Plain, and smoothed with an ignored label (2: its row gets no gradient).
TEST(CrossEntropyTest, GradientMatchesFiniteDifferences) {
  Ctx ctx;
  struct Case {
    int64_t n, c, ignore;
    double smoothing;
    std::vector<int64_t> labels;
  };
  for (const Case &k : {Case{4, 7, -100, 0.0, {6, 0, 3, 3}}, Case{5, 7, 2, 0.2, {6, 2, 3, 0, 2}}}) {
    SCOPED_TRACE("smoothing " + std::to_string(k.smoothing));
    const int64_t desc[] = {k.n, k.c, k.ignore, bits(k.smoothing), 0};
    std::vector<float> logits = randomVec(k.n * k.c, -2, 2), dlogits(k.n * k.c);
    std::vector<int64_t> labels = k.labels;
    auto fwd = [&] {
      float loss = 0;
      void *bufs[] = {logits.data(), labels.data(), &loss, nullptr, nullptr};
      EXPECT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
      return std::vector<float>{loss};
    };
    float loss = 0;
    void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), nullptr};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
    checkGrad(dlogits, logits, {1.0f}, fwd, 1e-2, 5e-3, "dlogits");
  }
}

// A language model's batch (512 tokens of 2,000 classes), split across the
// threads: float exps summed in double stay within a few float ulps of the
// double reference, loss and gradient alike.
TEST(CrossEntropyTest, LargeBatchIsParallelAndMatches) {
  Ctx ctx;
  const int64_t n = 512, c = 2000;
  const int64_t desc[] = {n, c, -100, 0, 0};
  std::vector<float> logits = randomVec(n * c, -8, 8), dlogits(n * c);
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i)
    labels[i] = (i * 613) % c;
  float loss = 0;
  void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
  auto [want, wantD] = crossEntropyRef(logits, labels, n, c);
  EXPECT_NEAR(loss, want, 1e-6 * std::abs(want));
  expectClose(dlogits, wantD, 1e-6, 1e-6 / n, "dlogits");
  double rowSum = 0;
  for (int64_t j = 0; j < c; ++j)
    rowSum += dlogits[j];
  EXPECT_NEAR(rowSum, 0.0, 1e-8); // softmax - onehot sums to zero
}

// torch.nn.functional.cross_entropy(ignore_index=..., label_smoothing=...):
// ignored rows count neither in the loss nor in the mean and get no
// gradient; smoothing spreads e / C of the target over every class.
TEST(CrossEntropyTest, IgnoredLabelsAndSmoothingMatchReference) {
  Ctx ctx;
  const int64_t n = 9, c = 6;
  for (double smoothing : {0.0, 0.1, 0.5, 1.0}) {
    SCOPED_TRACE("smoothing " + std::to_string(smoothing));
    const int64_t desc[] = {n, c, -100, bits(smoothing), 0};
    std::vector<float> logits = randomVec(n * c, -3, 3), dlogits(n * c, -7.0f);
    std::vector<int64_t> labels = {0, -100, 5, 2, -100, 1, 3, 3, -100};
    float loss = 0;
    void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), nullptr};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
    auto [want, wantD] = crossEntropyRef(logits, labels, n, c, -100, smoothing);
    EXPECT_NEAR(loss, want, 1e-5 * std::abs(want) + 1e-6);
    expectClose(dlogits, wantD, 1e-5, 1e-6, "dlogits");
    for (int64_t j = 0; j < c; ++j)
      EXPECT_EQ(dlogits[1 * c + j], 0.0f); // an ignored row
    float loss2 = 0;
    void *lossOnly[] = {logits.data(), labels.data(), &loss2, nullptr, nullptr};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, lossOnly));
    EXPECT_EQ(loss2, loss);
  }
  // Another ignored index: -100 is then a bad label, 7 the ignored one.
  const int64_t other[] = {3, c, 7, 0, 0};
  std::vector<float> logits = randomVec(3 * c, -3, 3);
  std::vector<int64_t> labels = {7, 2, 7};
  float loss = 0;
  void *bufs[] = {logits.data(), labels.data(), &loss, nullptr, nullptr};
  ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, other, bufs));
  EXPECT_NEAR(loss, crossEntropyRef(logits, labels, 3, c, 7).first, 1e-5);
  labels[0] = -100;
  EXPECT_EQ(mgsrt_softmax_cross_entropy(ctx, other, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("label -100 of sample 0 is outside [0, 6) and is not the "
                               "ignored index 7"),
            std::string::npos)
      << ctx.message();
}

// A batch whose labels are all ignored (padding only), or whose counted
// labels all weigh 0: loss 0 and no gradient, where PyTorch's mean over
// nothing is NaN.
TEST(CrossEntropyTest, NothingCountedGivesZero) {
  Ctx ctx;
  const int64_t n = 4, c = 3;
  const int64_t desc[] = {n, c, -100, bits(0.1), 0};
  std::vector<float> zeroForClass1 = {1.0f, 0.0f, 2.0f};
  const std::pair<std::vector<int64_t>, float *> cases[] = {
      {std::vector<int64_t>(n, -100), nullptr}, {{1, -100, 1, 1}, zeroForClass1.data()}};
  for (const auto &[labels, weight] : cases) {
    std::vector<float> logits = randomVec(n * c, -3, 3), dlogits(n * c, -7.0f);
    std::vector<int64_t> l = labels;
    float loss = -1;
    void *bufs[] = {logits.data(), l.data(), &loss, dlogits.data(), weight};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
    EXPECT_EQ(loss, 0.0f);
    for (float d : dlogits)
      EXPECT_EQ(d, 0.0f);
  }
}

// torch.nn.functional.cross_entropy(weight=...): each class's term weighted,
// the mean over the counted labels' weights; with ignored labels and
// smoothing too.
TEST(CrossEntropyTest, ClassWeightsMatchReference) {
  Ctx ctx;
  const int64_t n = 9, c = 6;
  const std::vector<float> weight = {0.5f, 2.0f, 1.0f, 0.0f, 3.5f, 1.25f};
  for (double smoothing : {0.0, 0.1, 1.0}) {
    SCOPED_TRACE("smoothing " + std::to_string(smoothing));
    const int64_t desc[] = {n, c, -100, bits(smoothing), 0};
    std::vector<float> logits = randomVec(n * c, -3, 3), dlogits(n * c, -7.0f);
    std::vector<int64_t> labels = {0, -100, 5, 2, -100, 1, 3, 4, 4};
    std::vector<float> w = weight;
    float loss = 0;
    void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), w.data()};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
    auto [want, wantD] = crossEntropyRef(logits, labels, n, c, -100, smoothing, weight);
    EXPECT_NEAR(loss, want, 1e-5 * std::abs(want) + 1e-6);
    expectClose(dlogits, wantD, 1e-5, 1e-6, "dlogits");
    float loss2 = 0;
    void *lossOnly[] = {logits.data(), labels.data(), &loss2, nullptr, w.data()};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, lossOnly));
    EXPECT_EQ(loss2, loss);
    // Weights of 1 are no weights.
    std::vector<float> ones(c, 1.0f), dOnes(n * c), dNone(n * c);
    float lossOnes = 0, lossNone = 0;
    void *withOnes[] = {logits.data(), labels.data(), &lossOnes, dOnes.data(), ones.data()};
    void *without[] = {logits.data(), labels.data(), &lossNone, dNone.data(), nullptr};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, withOnes));
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, without));
    EXPECT_NEAR(lossOnes, lossNone, 1e-6 * std::abs(lossNone));
    for (int64_t k = 0; k < n * c; ++k)
      EXPECT_NEAR(dOnes[k], dNone[k], 1e-6 * std::abs(dNone[k]) + 1e-8) << k;
  }
}

TEST(CrossEntropyTest, ClassWeightsGradientMatchesFiniteDifferences) {
  Ctx ctx;
  const int64_t n = 5, c = 7;
  std::vector<float> w = {1.0f, 0.25f, 2.0f, 0.5f, 4.0f, 1.5f, 0.75f};
  for (double smoothing : {0.0, 0.2}) {
    SCOPED_TRACE("smoothing " + std::to_string(smoothing));
    const int64_t desc[] = {n, c, 2, bits(smoothing), 0};
    std::vector<float> logits = randomVec(n * c, -2, 2), dlogits(n * c);
    std::vector<int64_t> labels = {6, 2, 3, 0, 4};
    auto fwd = [&] {
      float loss = 0;
      void *bufs[] = {logits.data(), labels.data(), &loss, nullptr, w.data()};
      EXPECT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
      return std::vector<float>{loss};
    };
    float loss = 0;
    void *bufs[] = {logits.data(), labels.data(), &loss, dlogits.data(), w.data()};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
    checkGrad(dlogits, logits, {1.0f}, fwd, 1e-2, 5e-3, "dlogits");
  }
}

// Reduction "sum": the mean's loss and gradient times the counted labels'
// weight (their count without weights); nothing counted is 0 either way.
TEST(CrossEntropyTest, SumIsTheMeanTimesTheCountedWeight) {
  Ctx ctx;
  const int64_t n = 9, c = 6;
  const std::vector<int64_t> labels = {0, -100, 5, 2, -100, 1, 3, 4, 4};
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    std::vector<float> w = {0.5f, 2.0f, 1.0f, 0.0f, 3.5f, 1.25f};
    double counted = 0;
    for (int64_t label : labels)
      if (label != -100)
        counted += weighted ? w[label] : 1.0;
    const int64_t meanDesc[] = {n, c, -100, bits(0.1), 0};
    const int64_t sumDesc[] = {n, c, -100, bits(0.1), 1};
    std::vector<float> logits = randomVec(n * c, -3, 3), dmean(n * c), dsum(n * c);
    std::vector<int64_t> l = labels;
    float mean = -1, sum = -1;
    float *weight = weighted ? w.data() : nullptr;
    void *meanBufs[] = {logits.data(), l.data(), &mean, dmean.data(), weight};
    void *sumBufs[] = {logits.data(), l.data(), &sum, dsum.data(), weight};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, meanDesc, meanBufs));
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, sumDesc, sumBufs));
    EXPECT_NEAR(sum, mean * counted, 1e-5 * std::abs(sum) + 1e-6);
    for (int64_t k = 0; k < n * c; ++k)
      EXPECT_NEAR(dsum[k], dmean[k] * counted, 1e-5 * std::abs(dsum[k]) + 1e-7) << k;
    std::vector<int64_t> none(n, -100);
    void *noneBufs[] = {logits.data(), none.data(), &sum, dsum.data(), weight};
    ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, sumDesc, noneBufs));
    EXPECT_EQ(sum, 0.0f);
    for (float d : dsum)
      EXPECT_EQ(d, 0.0f);
  }
}

// Reduction "none" inside a loss the graph computes (flags kPerSample |
// kUnscaled): loss[i] is row i's own loss (the reference's "sum" over that
// row alone; a class weighing 0 still has its smoothing terms), 0 when
// ignored; dlogits row i that loss's gradient, undivided. The flag only with
// kUnscaled and without kSum.
TEST(CrossEntropyTest, PerSampleIsEachRowsOwnLoss) {
  Ctx ctx;
  const int64_t n = 9, c = 6;
  const std::vector<int64_t> labels = {0, -100, 5, 2, -100, 1, 3, 4, 4};
  for (bool weighted : {false, true})
    for (double smoothing : {0.0, 0.1}) {
      SCOPED_TRACE(std::string(weighted ? "weighted" : "unweighted") + ", smoothing " +
                   std::to_string(smoothing));
      std::vector<float> w = {0.5f, 2.0f, 1.0f, 0.0f, 3.5f, 1.25f};
      const std::vector<float> weight = weighted ? w : std::vector<float>{};
      const int64_t desc[] = {n, c, -100, bits(smoothing), 6};
      std::vector<float> logits = randomVec(n * c, -3, 3), dlogits(n * c, -7.0f), loss(n, -7.0f);
      std::vector<int64_t> l = labels;
      void *bufs[] = {logits.data(), l.data(), loss.data(), dlogits.data(),
                      weighted ? w.data() : nullptr};
      ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
      for (int64_t i = 0; i < n; ++i) {
        SCOPED_TRACE("row " + std::to_string(i));
        if (labels[i] == -100) {
          EXPECT_EQ(loss[i], 0.0f);
          for (int64_t j = 0; j < c; ++j)
            EXPECT_EQ(dlogits[i * c + j], 0.0f);
          continue;
        }
        std::vector<float> row(logits.begin() + i * c, logits.begin() + (i + 1) * c);
        auto [want, grad] = crossEntropyRef(row, {labels[i]}, 1, c, -100, smoothing, weight,
                                            /*sum=*/true);
        EXPECT_NEAR(loss[i], want, 1e-5 * std::abs(want) + 1e-6);
        for (int64_t j = 0; j < c; ++j)
          EXPECT_NEAR(dlogits[i * c + j], grad[j], 1e-5 * std::abs(grad[j]) + 1e-7) << j;
      }
    }
  std::vector<float> logits = randomVec(n * c, -3, 3), loss(n);
  std::vector<int64_t> l = labels;
  void *bufs[] = {logits.data(), l.data(), loss.data(), nullptr, nullptr};
  for (int64_t flags : {4, 5, 7}) {
    const int64_t desc[] = {n, c, -100, 0, flags};
    EXPECT_EQ(mgsrt_softmax_cross_entropy(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(ctx.message().find("must be 0 to 3, or 6 (each sample's loss, inside the graph's "
                                 "loss)"),
              std::string::npos)
        << ctx.message();
  }
}

// Log-probabilities (flag 8, the negative log-likelihood of any input):
// a row's term is -w[label] x[label], its gradient -w[label] / (the counted
// weight) at the label and 0 elsewhere, with every reduction; against a
// float64 reference, and the gradient against finite differences. Label
// smoothing and flags outside the reductions are refused.
TEST(CrossEntropyTest, LogProbabilitiesAreTheNegativeLogLikelihood) {
  Ctx ctx;
  const int64_t n = 7, c = 5;
  const std::vector<int64_t> labels = {4, -100, 0, 2, 2, 1, 3};
  const std::vector<float> w = {0.5f, 2.0f, 1.0f, 0.0f, 3.5f};
  for (bool weighted : {false, true})
    for (int64_t reduction : {0, 1, 2, 3, 6}) {
      SCOPED_TRACE(std::string(weighted ? "weighted" : "unweighted") + ", flags " +
                   std::to_string(reduction | 8));
      const int64_t desc[] = {n, c, -100, 0, reduction | 8};
      const bool perSample = reduction == 6, sum = (reduction & 1) != 0;
      std::vector<float> x = randomVec(n * c, -4, 1), dx(n * c, -7.0f), loss(n, -7.0f);
      std::vector<int64_t> l = labels;
      float *weight = weighted ? const_cast<float *>(w.data()) : nullptr;
      void *bufs[] = {x.data(), l.data(), loss.data(), dx.data(), weight};
      ASSERT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, bufs));
      double counted = 0, total = 0;
      for (int64_t i = 0; i < n; ++i)
        if (labels[i] != -100) {
          const double wi = weighted ? w[labels[i]] : 1.0;
          counted += wi;
          total -= wi * x[i * c + labels[i]];
        }
      const double scale = perSample || sum ? 1.0 : 1.0 / counted;
      if (!perSample)
        EXPECT_NEAR(loss[0], total * scale, 1e-6 * std::abs(total * scale) + 1e-7);
      for (int64_t i = 0; i < n; ++i) {
        const double wi = labels[i] == -100 ? 0.0 : weighted ? w[labels[i]] : 1.0;
        if (perSample)
          EXPECT_NEAR(loss[i], labels[i] == -100 ? 0.0 : -wi * x[i * c + labels[i]], 1e-6) << i;
        for (int64_t j = 0; j < c; ++j)
          EXPECT_NEAR(dx[i * c + j], j == labels[i] ? -wi * scale : 0.0, 1e-7) << i << "," << j;
      }
      if (perSample)
        continue;
      auto fwd = [&] {
        float out = 0;
        void *lossOnly[] = {x.data(), l.data(), &out, nullptr, weight};
        EXPECT_OK(ctx, mgsrt_softmax_cross_entropy(ctx, desc, lossOnly));
        return std::vector<float>{out};
      };
      checkGrad(dx, x, {1.0f}, fwd, 1e-2, 5e-3, "dx");
    }
  std::vector<float> x = randomVec(n * c, -3, 0), loss(n);
  std::vector<int64_t> l = labels;
  void *bufs[] = {x.data(), l.data(), loss.data(), nullptr, nullptr};
  const int64_t smoothed[] = {n, c, -100, bits(0.1), 8};
  EXPECT_EQ(mgsrt_softmax_cross_entropy(ctx, smoothed, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("with log-probabilities (flag 8): the negative log-likelihood "
                               "has none"),
            std::string::npos)
      << ctx.message();
  for (int64_t flags : {12, 13, 15, 16, 24}) {
    Ctx fresh;
    const int64_t desc[] = {n, c, -100, 0, flags};
    EXPECT_EQ(mgsrt_softmax_cross_entropy(fresh, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(fresh.message().find("each maybe plus 8 (log-probabilities)"), std::string::npos)
        << fresh.message();
  }
}

} // namespace
