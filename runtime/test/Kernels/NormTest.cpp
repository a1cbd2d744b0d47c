//===- NormTest.cpp - batch normalization ---------------------------------===//

#include "TestUtil.h"

using namespace mgsrt_test;

namespace {

struct BnCase {
  int64_t n, c, d;
  float offset; // added to x: a large mean stresses the variance
};

struct BnData {
  std::vector<float> x, scale, bias, mean, var;
  explicit BnData(const BnCase &bc)
      : x(randomVec(bc.n * bc.c * bc.d, -2, 2)), scale(randomVec(bc.c, 0.5f, 1.5f)),
        bias(randomVec(bc.c)), mean(randomVec(bc.c)), var(randomVec(bc.c, 0.5f, 2.0f)) {
    for (auto &v : x)
      v += bc.offset;
  }
};

std::vector<int64_t> bnDesc(const BnCase &bc, bool training, double eps, double momentum,
                            bool unbiased) {
  return {bc.n, bc.c, bc.d, training, bits(eps), bits(momentum), unbiased, /*relu=*/0};
}

class BatchNormTest : public ::testing::TestWithParam<BnCase> {};

TEST_P(BatchNormTest, TrainingForwardMatchesReference) {
  const BnCase bc = GetParam();
  const double eps = 1e-5, momentum = 0.9;
  for (bool unbiased : {false, true}) {
    Ctx ctx;
    BnData in(bc);
    auto desc = bnDesc(bc, true, eps, momentum, unbiased);
    std::vector<float> y(in.x.size()), rm(bc.c), rv(bc.c), sm(bc.c), si(bc.c);
    void *bufs[] = {in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(), in.var.data(),
                    y.data(),    rm.data(),       rv.data(),      sm.data(),      si.data()};
    ASSERT_OK(ctx, mgsrt_batch_norm_fwd(ctx, desc.data(), bufs));
    std::vector<double> wantY(y.size()), wantRm(bc.c), wantRv(bc.c), wantSm(bc.c), wantSi(bc.c);
    const double count = static_cast<double>(bc.n * bc.d);
    for (int64_t c = 0; c < bc.c; ++c) {
      double s = 0;
      for (int64_t n = 0; n < bc.n; ++n)
        for (int64_t i = 0; i < bc.d; ++i)
          s += in.x[(n * bc.c + c) * bc.d + i];
      const double mean = s / count;
      double sq = 0;
      for (int64_t n = 0; n < bc.n; ++n)
        for (int64_t i = 0; i < bc.d; ++i) {
          double t = in.x[(n * bc.c + c) * bc.d + i] - mean;
          sq += t * t;
        }
      const double var = sq / count, invstd = 1 / std::sqrt(var + eps);
      for (int64_t n = 0; n < bc.n; ++n)
        for (int64_t i = 0; i < bc.d; ++i) {
          int64_t k = (n * bc.c + c) * bc.d + i;
          wantY[k] = (in.x[k] - mean) * invstd * in.scale[c] + in.bias[c];
        }
      const double runVar = unbiased ? sq / (count - 1) : var;
      wantRm[c] = in.mean[c] * momentum + mean * (1 - momentum);
      wantRv[c] = in.var[c] * momentum + runVar * (1 - momentum);
      wantSm[c] = mean;
      wantSi[c] = invstd;
    }
    expectClose(y, wantY, 1e-4, 1e-4, "y");
    expectClose(rm, wantRm, 1e-5, 1e-5, "running_mean");
    expectClose(rv, wantRv, 1e-5, 1e-5, "running_var");
    expectClose(sm, wantSm, 1e-6, 1e-6, "saved_mean");
    expectClose(si, wantSi, 1e-4, 1e-5, "saved_invstd");
  }
}

TEST_P(BatchNormTest, InferenceForwardMatchesReference) {
  Ctx ctx;
  const BnCase bc = GetParam();
  BnData in(bc);
  const double eps = 1e-3;
  auto desc = bnDesc(bc, false, eps, 0.9, true);
  std::vector<float> y(in.x.size()), rm(bc.c), rv(bc.c);
  void *bufs[] = {in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(), in.var.data(),
                  y.data(),    rm.data(),       rv.data(),      nullptr,        nullptr};
  ASSERT_OK(ctx, mgsrt_batch_norm_fwd(ctx, desc.data(), bufs));
  std::vector<double> want(y.size());
  for (size_t k = 0; k < y.size(); ++k) {
    int64_t c = (k / bc.d) % bc.c;
    want[k] = (in.x[k] - in.mean[c]) / std::sqrt(in.var[c] + eps) * in.scale[c] + in.bias[c];
  }
  expectClose(y, want, 1e-4, 1e-4, "y");
  EXPECT_EQ(rm, in.mean);
  EXPECT_EQ(rv, in.var);
}

TEST_P(BatchNormTest, BackwardMatchesFiniteDifferences) {
  const BnCase bc = GetParam();
  Ctx ctx;
  BnData in(bc);
  auto desc = bnDesc(bc, true, 1e-5, 0.9, false);
  std::vector<float> dy = randomVec(in.x.size());
  std::vector<float> sm(bc.c), si(bc.c);
  auto fwd = [&] {
    std::vector<float> y(in.x.size()), rm(bc.c), rv(bc.c);
    void *bufs[] = {in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(), in.var.data(),
                    y.data(),    rm.data(),       rv.data(),      sm.data(),      si.data()};
    EXPECT_OK(ctx, mgsrt_batch_norm_fwd(ctx, desc.data(), bufs));
    return y;
  };
  fwd();
  std::vector<float> dx(in.x.size()), ds(bc.c), db(bc.c);
  void *bufs[] = {in.x.data(), in.scale.data(), sm.data(), si.data(),
                  dy.data(),   dx.data(),       ds.data(), db.data()};
  ASSERT_OK(ctx, mgsrt_batch_norm_bwd(ctx, desc.data(), bufs));
  const double h = bc.offset != 0 ? 3e-2 : 1e-2;
  checkGrad(dx, in.x, dy, fwd, h, 1e-2, "dx");
  checkGrad(ds, in.scale, dy, fwd, 1e-2, 5e-3, "dscale");
  checkGrad(db, in.bias, dy, fwd, 1e-2, 5e-3, "dbias");
}

TEST_P(BatchNormTest, BackwardMatchesClosedForm) {
  Ctx ctx;
  const BnCase bc = GetParam();
  BnData in(bc);
  auto desc = bnDesc(bc, true, 1e-5, 0.9, false);
  std::vector<float> y(in.x.size()), rm(bc.c), rv(bc.c), sm(bc.c), si(bc.c);
  void *fb[] = {in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(), in.var.data(),
                y.data(),    rm.data(),       rv.data(),      sm.data(),      si.data()};
  ASSERT_OK(ctx, mgsrt_batch_norm_fwd(ctx, desc.data(), fb));
  std::vector<float> dy = randomVec(in.x.size()), dx(in.x.size()), ds(bc.c), db(bc.c);
  void *bb[] = {in.x.data(), in.scale.data(), sm.data(), si.data(),
                dy.data(),   dx.data(),       ds.data(), db.data()};
  ASSERT_OK(ctx, mgsrt_batch_norm_bwd(ctx, desc.data(), bb));
  const double count = static_cast<double>(bc.n * bc.d);
  std::vector<double> wantDx(dx.size()), wantDs(bc.c), wantDb(bc.c);
  for (int64_t c = 0; c < bc.c; ++c) {
    double sdy = 0, sdyx = 0;
    for (int64_t n = 0; n < bc.n; ++n)
      for (int64_t i = 0; i < bc.d; ++i) {
        int64_t k = (n * bc.c + c) * bc.d + i;
        double xhat = (in.x[k] - sm[c]) * static_cast<double>(si[c]);
        sdy += dy[k];
        sdyx += dy[k] * xhat;
      }
    wantDb[c] = sdy;
    wantDs[c] = sdyx;
    for (int64_t n = 0; n < bc.n; ++n)
      for (int64_t i = 0; i < bc.d; ++i) {
        int64_t k = (n * bc.c + c) * bc.d + i;
        double xhat = (in.x[k] - sm[c]) * static_cast<double>(si[c]);
        wantDx[k] = in.scale[c] * si[c] * (dy[k] - sdy / count - xhat * sdyx / count);
      }
  }
  expectClose(db, wantDb, 1e-4, 1e-4, "dbias");
  expectClose(ds, wantDs, 1e-4, 1e-4, "dscale");
  expectClose(dx, wantDx, 1e-3, 1e-4, "dx");
}

// A fused ReLU equals BatchNorm followed by ReLU, forward and backward (the
// backward's mask is recomputed from x and must agree with the forward's).
TEST_P(BatchNormTest, FusedReluMatchesBatchNormThenRelu) {
  Ctx ctx;
  const BnCase bc = GetParam();
  BnData in(bc);
  auto plain = bnDesc(bc, true, 1e-5, 0.9, false);
  auto fused = plain;
  fused[7] = 1;
  std::vector<float> y(in.x.size()), yr(in.x.size()), rm(bc.c), rv(bc.c), sm(bc.c), si(bc.c);
  void *fb[] = {in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(), in.var.data(),
                y.data(),    rm.data(),       rv.data(),      sm.data(),      si.data()};
  ASSERT_OK(ctx, mgsrt_batch_norm_fwd(ctx, plain.data(), fb));
  fb[5] = yr.data();
  ASSERT_OK(ctx, mgsrt_batch_norm_fwd(ctx, fused.data(), fb));
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(yr[i], std::max(y[i], 0.0f)) << "at " << i;

  std::vector<float> dy = randomVec(in.x.size()), masked(dy.size());
  for (size_t i = 0; i < dy.size(); ++i)
    masked[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  std::vector<float> dx(dy.size()), ds(bc.c), db(bc.c), dxr(dy.size()), dsr(bc.c), dbr(bc.c);
  void *bb[] = {in.x.data(), in.scale.data(), sm.data(), si.data(),
                masked.data(), dx.data(), ds.data(), db.data()};
  ASSERT_OK(ctx, mgsrt_batch_norm_bwd(ctx, plain.data(), bb));
  void *bbr[] = {in.x.data(), in.scale.data(), sm.data(), si.data(), dy.data(),
                 dxr.data(),  dsr.data(),      dbr.data(), in.bias.data()};
  ASSERT_OK(ctx, mgsrt_batch_norm_bwd(ctx, fused.data(), bbr));
  EXPECT_EQ(dx, dxr);
  EXPECT_EQ(ds, dsr);
  EXPECT_EQ(db, dbr);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchNormTest,
                         ::testing::Values(BnCase{4, 3, 5, 0.0f}, BnCase{6, 5, 1, 0.0f},
                                           BnCase{3, 2, 7, 50.0f}, BnCase{8, 16, 64, 0.0f},
                                           BnCase{32, 16, 1024, 3.0f}));

} // namespace
