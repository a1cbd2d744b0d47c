//===- LstmTest.cpp - LSTM forward and backward through time -------------===//

#include "TestUtil.h"

#include <algorithm>
#include <cmath>

using namespace mgsrt_test;

namespace {

struct LstmCase {
  int64_t t, n, i, h;
  bool initial = false; ///< given initial states h0, c0 (else the zero state)
};

struct LstmData {
  LstmCase c;
  std::vector<float> x, w, r, b, h0, c0;
  explicit LstmData(const LstmCase &lc)
      : c(lc), x(randomVec(lc.t * lc.n * lc.i)), w(randomVec(4 * lc.h * lc.i, -0.7f, 0.7f)),
        r(randomVec(4 * lc.h * lc.h, -0.7f, 0.7f)), b(randomVec(8 * lc.h, -0.5f, 0.5f)),
        h0(lc.initial ? randomVec(lc.n * lc.h) : std::vector<float>()),
        c0(lc.initial ? randomVec(lc.n * lc.h) : std::vector<float>()) {}
  std::vector<int64_t> desc() const { return {c.t, c.n, c.i, c.h}; }
  /// The initial states' buffers (null: the zero state).
  float *h0Buf() { return h0.empty() ? nullptr : h0.data(); }
  float *c0Buf() { return c0.empty() ? nullptr : c0.data(); }
};

struct LstmOut {
  std::vector<float> y, yh, yc, saved;
};

LstmOut forward(mgsrt_ctx_t *ctx, LstmData &d) {
  const LstmCase &c = d.c;
  LstmOut o{std::vector<float>(c.t * c.n * c.h), std::vector<float>(c.n * c.h),
            std::vector<float>(c.n * c.h), std::vector<float>(c.t * c.n * 5 * c.h)};
  auto desc = d.desc();
  void *bufs[] = {d.x.data(),  d.w.data(),  d.r.data(),     d.b.data(), o.y.data(),
                  o.yh.data(), o.yc.data(), o.saved.data(), d.h0Buf(),  d.c0Buf()};
  EXPECT_OK(ctx, mgsrt_lstm_fwd(ctx, desc.data(), bufs));
  return o;
}

/// ONNX's LSTM equations in double, gate order i, o, f, c.
LstmOut reference(const LstmData &d) {
  const LstmCase &c = d.c;
  const int64_t H = c.h;
  std::vector<double> h(c.n * H, 0.0), cell(c.n * H, 0.0);
  if (c.initial) {
    h.assign(d.h0.begin(), d.h0.end());
    cell.assign(d.c0.begin(), d.c0.end());
  }
  LstmOut o{std::vector<float>(c.t * c.n * H), std::vector<float>(c.n * H),
            std::vector<float>(c.n * H), {}};
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int64_t t = 0; t < c.t; ++t) {
    std::vector<double> hNew(c.n * H), cNew(c.n * H);
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t j = 0; j < H; ++j) {
        double g[4];
        for (int q = 0; q < 4; ++q) {
          const int64_t row = q * H + j;
          double s = d.b[row] + d.b[4 * H + row];
          for (int64_t k = 0; k < c.i; ++k)
            s += d.x[(t * c.n + n) * c.i + k] * d.w[row * c.i + k];
          for (int64_t k = 0; k < H; ++k)
            s += h[n * H + k] * d.r[row * H + k];
          g[q] = s;
        }
        const double i = sig(g[0]), og = sig(g[1]), f = sig(g[2]), cc = std::tanh(g[3]);
        cNew[n * H + j] = f * cell[n * H + j] + i * cc;
        hNew[n * H + j] = og * std::tanh(cNew[n * H + j]);
      }
    h = hNew;
    cell = cNew;
    for (int64_t k = 0; k < c.n * H; ++k)
      o.y[t * c.n * H + k] = static_cast<float>(h[k]);
  }
  for (int64_t k = 0; k < c.n * H; ++k) {
    o.yh[k] = static_cast<float>(h[k]);
    o.yc[k] = static_cast<float>(cell[k]);
  }
  return o;
}

class LstmTest : public ::testing::TestWithParam<LstmCase> {};

TEST_P(LstmTest, ForwardMatchesTheEquations) {
  Ctx ctx;
  LstmData d(GetParam());
  LstmOut got = forward(ctx, d), want = reference(d);
  expectClose(got.y, want.y, 1e-5, 1e-6, "y");
  expectClose(got.yh, want.yh, 1e-5, 1e-6, "y_h");
  expectClose(got.yc, want.yc, 1e-5, 1e-6, "y_c");
}

TEST_P(LstmTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  LstmData d(GetParam());
  const LstmCase c = d.c;
  // L = <cy, y> + <ch, y_h> + <cc, y_c>: every result's gradient at once.
  std::vector<float> cy = randomVec(c.t * c.n * c.h), ch = randomVec(c.n * c.h),
                     cc = randomVec(c.n * c.h);
  std::vector<float> weights = cy;
  weights.insert(weights.end(), ch.begin(), ch.end());
  weights.insert(weights.end(), cc.begin(), cc.end());
  auto outputs = [&] {
    LstmOut o = forward(ctx, d);
    std::vector<float> all = o.y;
    all.insert(all.end(), o.yh.begin(), o.yh.end());
    all.insert(all.end(), o.yc.begin(), o.yc.end());
    return all;
  };
  LstmOut o = forward(ctx, d);
  std::vector<float> dx(d.x.size()), dw(d.w.size()), dr(d.r.size()), db(d.b.size()),
      dh0(d.h0.size()), dc0(d.c0.size());
  auto desc = d.desc();
  void *bufs[] = {d.x.data(),
                  d.w.data(),
                  d.r.data(),
                  o.y.data(),
                  o.saved.data(),
                  cy.data(),
                  ch.data(),
                  cc.data(),
                  dx.data(),
                  dw.data(),
                  dr.data(),
                  db.data(),
                  d.h0Buf(),
                  d.c0Buf(),
                  c.initial ? dh0.data() : nullptr,
                  c.initial ? dc0.data() : nullptr};
  ASSERT_OK(ctx, mgsrt_lstm_bwd(ctx, desc.data(), bufs));
  checkGrad(dx, d.x, weights, outputs, 1e-2, 1e-2, "dx");
  checkGrad(dw, d.w, weights, outputs, 1e-2, 1e-2, "dw");
  checkGrad(dr, d.r, weights, outputs, 1e-2, 1e-2, "dr");
  checkGrad(db, d.b, weights, outputs, 1e-2, 1e-2, "db");
  if (c.initial) {
    checkGrad(dh0, d.h0, weights, outputs, 1e-2, 1e-2, "dh0");
    checkGrad(dc0, d.c0, weights, outputs, 1e-2, 1e-2, "dc0");
  }
}

TEST_P(LstmTest, AbsentGradientsAreZero) {
  // dy and dy_c absent (null) give what zero-filled ones give; dx may be
  // skipped (null) without changing the weights' gradients.
  Ctx ctx;
  LstmData d(GetParam());
  const LstmCase c = d.c;
  LstmOut o = forward(ctx, d);
  std::vector<float> zy(c.t * c.n * c.h, 0.0f), ch = randomVec(c.n * c.h), zc(c.n * c.h, 0.0f);
  auto desc = d.desc();
  auto backward = [&](bool nulls) {
    std::vector<std::vector<float>> g{std::vector<float>(d.x.size()),
                                      std::vector<float>(d.w.size()),
                                      std::vector<float>(d.r.size()),
                                      std::vector<float>(d.b.size())};
    void *bufs[] = {d.x.data(),
                    d.w.data(),
                    d.r.data(),
                    o.y.data(),
                    o.saved.data(),
                    nulls ? nullptr : zy.data(),
                    ch.data(),
                    nulls ? nullptr : zc.data(),
                    nulls ? nullptr : g[0].data(),
                    g[1].data(),
                    g[2].data(),
                    g[3].data(),
                    d.h0Buf(),
                    d.c0Buf(),
                    nullptr,
                    nullptr};
    EXPECT_OK(ctx, mgsrt_lstm_bwd(ctx, desc.data(), bufs));
    return g;
  };
  auto withZeros = backward(false), withNulls = backward(true);
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(withZeros[k], withNulls[k]) << "gradient " << k;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LstmTest,
                         ::testing::Values(LstmCase{1, 1, 1, 1}, LstmCase{3, 2, 3, 4},
                                           LstmCase{5, 3, 2, 3}, LstmCase{1, 2, 2, 3, true},
                                           LstmCase{4, 3, 2, 3, true}));

TEST(LstmInitialStates, ZeroStatesGiveTheZeroStateResults) {
  // h0 = c0 = 0 given as buffers computes what null ones (the zero state) do.
  Ctx ctx;
  LstmData given(LstmCase{3, 2, 3, 4, true}), absent(LstmCase{3, 2, 3, 4});
  std::fill(given.h0.begin(), given.h0.end(), 0.0f);
  std::fill(given.c0.begin(), given.c0.end(), 0.0f);
  absent.x = given.x;
  absent.w = given.w;
  absent.r = given.r;
  absent.b = given.b;
  LstmOut a = forward(ctx, given), b = forward(ctx, absent);
  expectClose(a.y, b.y, 1e-6, 1e-7, "y");
  expectClose(a.yc, b.yc, 1e-6, 1e-7, "y_c");
}

TEST(LstmErrors, BadShapesAndNullBuffers) {
  Ctx ctx;
  std::vector<float> buf(64);
  void *bufs[16];
  for (void *&p : bufs)
    p = buf.data();
  const int64_t bad[] = {0, 1, 1, 1};
  EXPECT_EQ(mgsrt_lstm_fwd(ctx, bad, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "lstm_fwd: T=0 N=1 I=1 H=1 must all be positive");

  Ctx ctx2;
  const int64_t ok[] = {1, 1, 1, 1};
  bufs[7] = nullptr;
  EXPECT_EQ(mgsrt_lstm_fwd(ctx2, ok, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx2.message(), "lstm_fwd: buffer 7 (saved) is null");

  Ctx ctx3;
  bufs[7] = buf.data();
  bufs[10] = nullptr;
  EXPECT_EQ(mgsrt_lstm_bwd(ctx3, ok, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx3.message(), "lstm_bwd: buffer 10 (dr) is null");
}

} // namespace
