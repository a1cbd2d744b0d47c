//===- GruTest.cpp - GRU forward and backward through time ----------------===//

#include "TestUtil.h"

#include <algorithm>
#include <cmath>

using namespace mgsrt_test;

namespace {

struct GruCase {
  int64_t t, n, i, h;
  bool linearBeforeReset;
  bool initial = false; ///< a given initial state h0 (else the zero state)
};

struct GruData {
  GruCase c;
  std::vector<float> x, w, r, b, h0;
  explicit GruData(const GruCase &gc)
      : c(gc), x(randomVec(gc.t * gc.n * gc.i)), w(randomVec(3 * gc.h * gc.i, -0.7f, 0.7f)),
        r(randomVec(3 * gc.h * gc.h, -0.7f, 0.7f)), b(randomVec(6 * gc.h, -0.5f, 0.5f)),
        h0(gc.initial ? randomVec(gc.n * gc.h) : std::vector<float>()) {}
  std::vector<int64_t> desc() const { return {c.t, c.n, c.i, c.h, c.linearBeforeReset}; }
  float *h0Buf() { return h0.empty() ? nullptr : h0.data(); } ///< null: the zero state
};

struct GruOut {
  std::vector<float> y, yh, saved;
};

GruOut forward(mgsrt_ctx_t *ctx, GruData &d) {
  const GruCase &c = d.c;
  GruOut o{std::vector<float>(c.t * c.n * c.h), std::vector<float>(c.n * c.h),
           std::vector<float>(c.t * c.n * 4 * c.h)};
  auto desc = d.desc();
  void *bufs[] = {d.x.data(), d.w.data(),  d.r.data(),     d.b.data(),
                  o.y.data(), o.yh.data(), o.saved.data(), d.h0Buf()};
  EXPECT_OK(ctx, mgsrt_gru_fwd(ctx, desc.data(), bufs));
  return o;
}

/// mgsrt_gru_bwd of `d` after its forward `o`, given the results' gradients
/// `dy` (null: zero) and `dh`: {dx, dw, dr, db, dh0}; dx is not asked for
/// (null, and left empty) unless `withDx`, dh0 only with an initial state.
std::vector<std::vector<float>> backward(mgsrt_ctx_t *ctx, GruData &d, GruOut &o, float *dy,
                                         float *dh, bool withDx = true) {
  std::vector<std::vector<float>> g{std::vector<float>(withDx ? d.x.size() : 0),
                                    std::vector<float>(d.w.size()), std::vector<float>(d.r.size()),
                                    std::vector<float>(d.b.size()),
                                    std::vector<float>(d.h0.size())};
  auto desc = d.desc();
  void *bufs[] = {d.x.data(),
                  d.w.data(),
                  d.r.data(),
                  o.y.data(),
                  o.saved.data(),
                  dy,
                  dh,
                  withDx ? g[0].data() : nullptr,
                  g[1].data(),
                  g[2].data(),
                  g[3].data(),
                  d.h0Buf(),
                  d.h0.empty() ? nullptr : g[4].data()};
  EXPECT_OK(ctx, mgsrt_gru_bwd(ctx, desc.data(), bufs));
  return g;
}

/// ONNX's GRU equations in double, gate order z, r, h.
GruOut reference(const GruData &d) {
  const GruCase &c = d.c;
  const int64_t H = c.h, I = c.i;
  std::vector<double> h(c.n * H, 0.0);
  if (c.initial)
    h.assign(d.h0.begin(), d.h0.end());
  GruOut o{std::vector<float>(c.t * c.n * H), std::vector<float>(c.n * H), {}};
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  // Row `row` of x_t W^T (+ Wb) and of v R^T (+ Rb) for a hidden vector v.
  auto inputTerm = [&](int64_t t, int64_t n, int64_t row) {
    double s = d.b[row];
    for (int64_t k = 0; k < I; ++k)
      s += d.x[(t * c.n + n) * I + k] * d.w[row * I + k];
    return s;
  };
  auto recurrentTerm = [&](const double *v, int64_t row) {
    double s = d.b[3 * H + row];
    for (int64_t k = 0; k < H; ++k)
      s += v[k] * d.r[row * H + k];
    return s;
  };
  for (int64_t t = 0; t < c.t; ++t) {
    std::vector<double> hNew(c.n * H);
    for (int64_t n = 0; n < c.n; ++n) {
      const double *hp = h.data() + n * H;
      std::vector<double> rh(H);
      std::vector<double> z(H), rg(H);
      for (int64_t j = 0; j < H; ++j) {
        z[j] = sig(inputTerm(t, n, j) + recurrentTerm(hp, j));
        rg[j] = sig(inputTerm(t, n, H + j) + recurrentTerm(hp, H + j));
        rh[j] = rg[j] * hp[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        const double a = inputTerm(t, n, 2 * H + j) + (c.linearBeforeReset
                                                           ? rg[j] * recurrentTerm(hp, 2 * H + j)
                                                           : recurrentTerm(rh.data(), 2 * H + j));
        hNew[n * H + j] = (1.0 - z[j]) * std::tanh(a) + z[j] * hp[j];
      }
    }
    h = hNew;
    for (int64_t k = 0; k < c.n * H; ++k)
      o.y[t * c.n * H + k] = static_cast<float>(h[k]);
  }
  for (int64_t k = 0; k < c.n * H; ++k)
    o.yh[k] = static_cast<float>(h[k]);
  return o;
}

class GruTest : public ::testing::TestWithParam<GruCase> {};

TEST_P(GruTest, ForwardMatchesTheEquations) {
  Ctx ctx;
  GruData d(GetParam());
  GruOut got = forward(ctx, d), want = reference(d);
  expectClose(got.y, want.y, 1e-5, 1e-6, "y");
  expectClose(got.yh, want.yh, 1e-5, 1e-6, "y_h");
}

TEST_P(GruTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  GruData d(GetParam());
  const GruCase c = d.c;
  // L = <cy, y> + <ch, y_h>: both results' gradients at once.
  std::vector<float> cy = randomVec(c.t * c.n * c.h), ch = randomVec(c.n * c.h);
  std::vector<float> weights = cy;
  weights.insert(weights.end(), ch.begin(), ch.end());
  auto outputs = [&] {
    GruOut o = forward(ctx, d);
    std::vector<float> all = o.y;
    all.insert(all.end(), o.yh.begin(), o.yh.end());
    return all;
  };
  GruOut o = forward(ctx, d);
  auto g = backward(ctx, d, o, cy.data(), ch.data());
  ASSERT_FALSE(HasFailure()) << "gru_bwd failed";
  checkGrad(g[0], d.x, weights, outputs, 1e-2, 1e-2, "dx");
  checkGrad(g[1], d.w, weights, outputs, 1e-2, 1e-2, "dw");
  checkGrad(g[2], d.r, weights, outputs, 1e-2, 1e-2, "dr");
  checkGrad(g[3], d.b, weights, outputs, 1e-2, 1e-2, "db");
  if (c.initial)
    checkGrad(g[4], d.h0, weights, outputs, 1e-2, 1e-2, "dh0");
}

TEST_P(GruTest, AbsentGradientsAreZero) {
  // dy absent (null) gives what a zero-filled one gives; dx may be skipped
  // (null) without changing the weights' gradients.
  Ctx ctx;
  GruData d(GetParam());
  const GruCase c = d.c;
  GruOut o = forward(ctx, d);
  std::vector<float> zy(c.t * c.n * c.h, 0.0f), ch = randomVec(c.n * c.h);
  auto withZeros = backward(ctx, d, o, zy.data(), ch.data());
  auto withNulls = backward(ctx, d, o, nullptr, ch.data(), /*withDx=*/false);
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(withZeros[k], withNulls[k]) << "gradient " << k;
}

// At H = 512 (gates 1536 floats apart) over 2 x 40 steps the recurrent
// weights' gradient GEMMs read their gate gradients through padded copies
// (Gemm.cpp's padStrides), without linear_before_reset 2H and H of every row
// of 3H; each sample alone (39 or 40 rows: 61,440 floats at most)
// is under the size that pads (padStrides' 64 Ki floats; a change there must
// keep this test on both sides of it). The weights' gradients over the batch
// are the sums of each sample's.
TEST(GruWide, WeightGradientsAreTheSamplesSums) {
  Ctx ctx;
  const GruCase c{40, 2, 8, 512, false};
  const int64_t T = c.t, N = c.n, I = c.i, H = c.h;
  GruData d(c);
  d.r = randomVec(3 * H * H, -0.04f, 0.04f); // contracting: no exploding gradients
  std::vector<float> cy = randomVec(T * N * H), ch = randomVec(N * H);
  auto gradients = [&](GruData &data, std::vector<float> &dy, std::vector<float> &dh) {
    GruOut o = forward(ctx, data);
    return backward(ctx, data, o, dy.data(), dh.data());
  };
  auto whole = gradients(d, cy, ch);
  std::vector<std::vector<double>> sums{std::vector<double>(d.w.size()),
                                        std::vector<double>(d.r.size()),
                                        std::vector<double>(d.b.size())};
  for (int64_t n = 0; n < N; ++n) {
    GruData one({T, 1, I, H, false});
    one.w = d.w;
    one.r = d.r;
    one.b = d.b;
    std::vector<float> dy(T * H), dh(ch.begin() + n * H, ch.begin() + (n + 1) * H);
    for (int64_t t = 0; t < T; ++t) {
      std::copy_n(d.x.begin() + (t * N + n) * I, I, one.x.begin() + t * I);
      std::copy_n(cy.begin() + (t * N + n) * H, H, dy.begin() + t * H);
    }
    auto g = gradients(one, dy, dh);
    for (int k = 0; k < 3; ++k)
      for (size_t j = 0; j < sums[k].size(); ++j)
        sums[k][j] += g[k + 1][j];
  }
  expectClose(whole[1], sums[0], 1e-4, 1e-5, "dW");
  expectClose(whole[2], sums[1], 1e-4, 1e-5, "dR");
  expectClose(whole[3], sums[2], 1e-4, 1e-5, "dB");
}

INSTANTIATE_TEST_SUITE_P(Shapes, GruTest,
                         ::testing::Values(GruCase{1, 1, 1, 1, true}, GruCase{3, 2, 3, 4, true},
                                           GruCase{5, 3, 2, 3, true}, GruCase{1, 1, 1, 1, false},
                                           GruCase{3, 2, 3, 4, false}, GruCase{5, 3, 2, 3, false},
                                           GruCase{1, 2, 2, 3, true, true},
                                           GruCase{4, 3, 2, 3, true, true},
                                           GruCase{1, 2, 2, 3, false, true},
                                           GruCase{4, 3, 2, 3, false, true}));

TEST(GruInitialState, AbsentStateGivesTheZeroStatesGradient) {
  // dh0 asked for without h0 (the zero state) equals dh0 with h0 = 0 given.
  for (bool lbr : {true, false}) {
    Ctx ctx;
    GruData d(GruCase{3, 2, 3, 4, lbr, true});
    std::fill(d.h0.begin(), d.h0.end(), 0.0f);
    GruOut o = forward(ctx, d);
    std::vector<float> dy = randomVec(3 * 2 * 4), dh = randomVec(2 * 4);
    auto given = backward(ctx, d, o, dy.data(), dh.data());
    std::vector<float> dw(d.w.size()), dr(d.r.size()), db(d.b.size()), dh0(d.h0.size());
    auto desc = d.desc();
    void *bufs[] = {d.x.data(), d.w.data(), d.r.data(), o.y.data(), o.saved.data(),
                    dy.data(),  dh.data(),  nullptr,    dw.data(),  dr.data(),
                    db.data(),  nullptr,    dh0.data()};
    EXPECT_OK(ctx, mgsrt_gru_bwd(ctx, desc.data(), bufs));
    expectClose(dh0, given[4], 1e-6, 1e-7, lbr ? "dh0 (linear_before_reset)" : "dh0");
  }
}

TEST(GruErrors, BadShapesFlagsAndNullBuffers) {
  Ctx ctx;
  std::vector<float> buf(64);
  void *bufs[13];
  for (void *&p : bufs)
    p = buf.data();
  const int64_t bad[] = {0, 1, 1, 1, 1};
  EXPECT_EQ(mgsrt_gru_fwd(ctx, bad, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "gru_fwd: T=0 N=1 I=1 H=1 must all be positive");

  Ctx ctx1;
  const int64_t badFlag[] = {1, 1, 1, 1, 2};
  EXPECT_EQ(mgsrt_gru_bwd(ctx1, badFlag, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx1.message(), "gru_bwd: linear_before_reset must be 0 or 1, got 2");

  Ctx ctx2;
  const int64_t ok[] = {1, 1, 1, 1, 1};
  bufs[6] = nullptr;
  EXPECT_EQ(mgsrt_gru_fwd(ctx2, ok, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx2.message(), "gru_fwd: buffer 6 (saved) is null");

  Ctx ctx3;
  bufs[6] = buf.data();
  bufs[9] = nullptr;
  EXPECT_EQ(mgsrt_gru_bwd(ctx3, ok, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx3.message(), "gru_bwd: buffer 9 (dr) is null");
}

} // namespace
