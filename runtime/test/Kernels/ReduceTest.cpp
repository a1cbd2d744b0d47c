//===- ReduceTest.cpp - reduce, and the sqrt / erf / pow unary ops --------===//
//
// The kernels a LayerNorm + GELU network runs besides the others: sums and
// means over any axes against a naive reference and their gradient against
// finite differences, and the unary op codes sqrt, erf and pow.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "mgsrt/contract.h"

using namespace mgsrt_test;
using mgs::contract::ReduceDesc;

namespace {

//===----------------------------------------------------------------------===//
// Unary: sqrt, erf, pow
//===----------------------------------------------------------------------===//

struct UnaryCase {
  int op;
  double alpha;
};

double unaryRef(const UnaryCase &c, double x) {
  switch (c.op) {
  case MGSRT_UNARY_SQRT: return std::sqrt(x);
  case MGSRT_UNARY_ERF: return std::erf(x);
  case MGSRT_UNARY_EXP: return std::exp(x);
  case MGSRT_UNARY_COS: return std::cos(x);
  case MGSRT_UNARY_SIN: return std::sin(x);
  default: return std::pow(x, c.alpha);
  }
}

class NewUnaryTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(NewUnaryTest, ForwardMatchesReferenceAndBackwardFiniteDifferences) {
  Ctx ctx;
  const UnaryCase c = GetParam();
  const int64_t n = 100000; // the parallel path
  // Positive inputs: sqrt and fractional powers are real there.
  std::vector<float> x = randomVec(n, 0.2f, 3.0f), y(n);
  const int64_t desc[] = {c.op, n, bits(c.alpha)};
  void *fwdBufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, desc, fwdBufs));
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = unaryRef(c, x[i]);
  expectClose(y, want, 1e-6, 1e-7, "y");

  const int64_t m = 64;
  std::vector<float> xs = randomVec(m, 0.3f, 2.0f), ys(m), dy = randomVec(m), dx(m);
  const int64_t d[] = {c.op, m, bits(c.alpha)};
  auto fwd = [&] {
    std::vector<float> out(m);
    void *bufs[] = {xs.data(), out.data()};
    EXPECT_OK(ctx, mgsrt_unary_fwd(ctx, d, bufs));
    return out;
  };
  ys = fwd();
  void *bufs[] = {xs.data(), ys.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, d, bufs));
  checkGrad(dx, xs, dy, fwd, 1e-2, 2e-3, "dx");
}

INSTANTIATE_TEST_SUITE_P(Ops, NewUnaryTest,
                         ::testing::Values(UnaryCase{MGSRT_UNARY_SQRT, 0},
                                           UnaryCase{MGSRT_UNARY_ERF, 0},
                                           UnaryCase{MGSRT_UNARY_EXP, 0},
                                           UnaryCase{MGSRT_UNARY_COS, 0},
                                           UnaryCase{MGSRT_UNARY_SIN, 0},
                                           UnaryCase{MGSRT_UNARY_POW, 2.0},
                                           UnaryCase{MGSRT_UNARY_POW, 3.0},
                                           UnaryCase{MGSRT_UNARY_POW, 0.5},
                                           UnaryCase{MGSRT_UNARY_POW, 1.7}));

TEST(NewUnaryTest, ErfAndPowBackwardReadOnlyX) {
  // erf and pow read x, sqrt reads y: the other may be null.
  Ctx ctx;
  std::vector<float> x = {0.0f, 1.0f, 2.0f}, dy = {1, 1, 1}, dx(3);
  const int64_t pow2[] = {MGSRT_UNARY_POW, 3, bits(2.0)};
  void *bufs[] = {x.data(), nullptr, dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, pow2, bufs));
  EXPECT_EQ(dx, (std::vector<float>{0.0f, 2.0f, 4.0f}));
  const int64_t sqrt[] = {MGSRT_UNARY_SQRT, 3, 0};
  std::vector<float> y = {1.0f, 2.0f, 4.0f};
  void *sqrtBufs[] = {nullptr, y.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, sqrt, sqrtBufs));
  EXPECT_EQ(dx, (std::vector<float>{0.5f, 0.25f, 0.125f}));
  // exp reads y (its own derivative).
  const int64_t exp[] = {MGSRT_UNARY_EXP, 3, 0};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, exp, sqrtBufs));
  EXPECT_EQ(dx, (std::vector<float>{1.0f, 2.0f, 4.0f}));
  // cos and sin read x: -sin(x) dy and cos(x) dy.
  const int64_t cos[] = {MGSRT_UNARY_COS, 3, 0}, sin[] = {MGSRT_UNARY_SIN, 3, 0};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, cos, bufs));
  EXPECT_EQ(dx, (std::vector<float>{-0.0f, -std::sin(1.0f), -std::sin(2.0f)}));
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, sin, bufs));
  EXPECT_EQ(dx, (std::vector<float>{1.0f, std::cos(1.0f), std::cos(2.0f)}));
}

TEST(NewUnaryTest, OpOutOfRange) {
  Ctx ctx;
  float x = 1, y = 0;
  const int64_t desc[] = {MGSRT_UNARY_CEIL + 1, 1, 0};
  void *bufs[] = {&x, &y};
  EXPECT_EQ(mgsrt_unary_fwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("op 22 is out of range [0, 21]"), std::string::npos)
      << ctx.message();
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

struct ReduceCase {
  std::vector<int64_t> in, out;
};

class ReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceTest, ForwardMatchesReferenceAndBackwardFiniteDifferences) {
  Ctx ctx;
  const ReduceCase c = GetParam();
  int64_t inTotal = 1, outTotal = 1;
  for (size_t i = 0; i < c.in.size(); ++i) {
    inTotal *= c.in[i];
    outTotal *= c.out[i];
  }
  const double scale = static_cast<double>(outTotal) / static_cast<double>(inTotal); // a mean
  const std::vector<int64_t> desc = reduceDesc(c.in, c.out, scale);
  std::vector<float> x = randomVec(inTotal);
  auto fwd = [&] {
    std::vector<float> y(outTotal);
    void *bufs[] = {x.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_reduce_fwd(ctx, desc.data(), bufs));
    return y;
  };
  const std::vector<float> y = fwd();
  // Naive: each input element adds into the output element it maps to.
  std::vector<double> want(outTotal, 0.0);
  const std::vector<int64_t> outStrides = stridesOf(c.out);
  for (int64_t i = 0; i < inTotal; ++i) {
    std::vector<int64_t> idx = unflatten(i, c.in);
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      o += (c.out[d] == 1 ? 0 : idx[d]) * outStrides[d];
    want[o] += scale * x[i];
  }
  expectClose(y, want, 1e-5, 1e-6, "y");

  std::vector<float> dy = randomVec(outTotal), dx(inTotal);
  void *bufs[] = {dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_reduce_bwd(ctx, desc.data(), bufs));
  checkGrad(dx, x, dy, fwd, 1e-2, 2e-3, "dx");
}

INSTANTIATE_TEST_SUITE_P(
    Axes, ReduceTest,
    ::testing::Values(ReduceCase{{8, 128}, {8, 1}},            // LayerNorm's last axis
                      ReduceCase{{8, 16}, {1, 16}},            // the leading axis
                      ReduceCase{{3, 4, 5}, {3, 1, 1}},        // trailing axes
                      ReduceCase{{3, 4, 5}, {1, 4, 1}},        // both ends
                      ReduceCase{{2, 3, 4, 5}, {2, 1, 4, 1}},  // alternating
                      ReduceCase{{4, 1, 6}, {1, 1, 1}},        // every axis
                      ReduceCase{{5, 7}, {5, 7}},              // none
                      ReduceCase{{300, 400}, {300, 1}}));      // the parallel path

TEST(ReduceTest, SumOfLargeRowIsAccumulatedInDouble) {
  Ctx ctx;
  const int64_t n = 1 << 20;
  std::vector<float> x(n, 0.1f);
  float y = 0;
  const std::vector<int64_t> desc = reduceDesc({n}, {1}, 1.0);
  void *bufs[] = {x.data(), &y};
  ASSERT_OK(ctx, mgsrt_reduce_fwd(ctx, desc.data(), bufs));
  EXPECT_FLOAT_EQ(y, static_cast<float>(static_cast<double>(0.1f) * n));
}

TEST(ReduceTest, Errors) {
  Ctx ctx;
  float x[6] = {}, y[2] = {};
  void *bufs[] = {x, y};
  const std::vector<int64_t> badOut = reduceDesc({2, 3}, {2, 2}, 1.0);
  EXPECT_EQ(mgsrt_reduce_fwd(ctx, badOut.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("output extent 2 of dim 1 is neither the input's (3) nor 1"),
            std::string::npos)
      << ctx.message();
  mgsrt_ctx_clear(ctx);
  const std::vector<int64_t> ok = reduceDesc({2, 3}, {2, 1}, 1.0);
  void *noY[] = {x, nullptr};
  EXPECT_EQ(mgsrt_reduce_fwd(ctx, ok.data(), noY), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("reduce_fwd"), std::string::npos) << ctx.message();
  mgsrt_ctx_clear(ctx);
  std::vector<int64_t> badRank = ok;
  badRank[ReduceDesc::Rank] = -1;
  EXPECT_EQ(mgsrt_reduce_bwd(ctx, badRank.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("rank -1 is out of range"), std::string::npos) << ctx.message();
}

} // namespace
