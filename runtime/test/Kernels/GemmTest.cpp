//===- GemmTest.cpp - gemm and batched matmul -----------------------------===//

#include "TestUtil.h"

#include <cfloat>
#include <tuple>

using namespace mgsrt_test;

namespace {

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  double alpha, beta;
  int64_t c0, c1; // 0, 0: no C
};

std::vector<int64_t> gemmDesc(const GemmCase &c) {
  return {c.m, c.n, c.k, c.ta, c.tb, bits(c.alpha), bits(c.beta), c.c0, c.c1,
          MGSRT_PRECISION_F32};
}

std::vector<double> gemmRef(const GemmCase &c, const std::vector<float> &a,
                            const std::vector<float> &b, const std::vector<float> &cm) {
  std::vector<double> y(c.m * c.n);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        double av = c.ta ? a[p * c.m + i] : a[i * c.k + p];
        double bv = c.tb ? b[j * c.k + p] : b[p * c.n + j];
        s += av * bv;
      }
      double cv = 0;
      if (c.c0 || c.c1)
        cv = cm[(c.c0 == 1 ? 0 : i) * c.c1 + (c.c1 == 1 ? 0 : j)];
      y[i * c.n + j] = c.alpha * s + c.beta * cv;
    }
  return y;
}

class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, ForwardMatchesReference) {
  Ctx ctx;
  const GemmCase c = GetParam();
  auto desc = gemmDesc(c);
  std::vector<float> a = randomVec(c.m * c.k), b = randomVec(c.k * c.n),
                     cm = randomVec(std::max<int64_t>(1, c.c0 * c.c1));
  std::vector<float> y(c.m * c.n, std::nanf(""));
  void *bufs[] = {a.data(), b.data(), (c.c0 || c.c1) ? cm.data() : nullptr, y.data()};
  ASSERT_OK(ctx, mgsrt_gemm_fwd(ctx, desc.data(), bufs));
  expectClose(y, gemmRef(c, a, b, cm), 1e-5, 1e-5, "Y");
}

TEST_P(GemmTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  const GemmCase c = GetParam();
  auto desc = gemmDesc(c);
  const bool hasC = c.c0 || c.c1;
  std::vector<float> a = randomVec(c.m * c.k), b = randomVec(c.k * c.n),
                     cm = randomVec(std::max<int64_t>(1, c.c0 * c.c1));
  std::vector<float> dy = randomVec(c.m * c.n);
  std::vector<float> da(a.size()), db(b.size()), dc(cm.size());
  auto fwd = [&] {
    std::vector<float> y(c.m * c.n);
    void *bufs[] = {a.data(), b.data(), hasC ? cm.data() : nullptr, y.data()};
    EXPECT_OK(ctx, mgsrt_gemm_fwd(ctx, desc.data(), bufs));
    return y;
  };
  void *bufs[] = {a.data(), b.data(), dy.data(), da.data(), db.data(),
                  hasC ? dc.data() : nullptr};
  ASSERT_OK(ctx, mgsrt_gemm_bwd(ctx, desc.data(), bufs));
  // Linear in each operand: a large step is exact up to rounding.
  checkGrad(da, a, dy, fwd, 0.5, 1e-3, "dA");
  checkGrad(db, b, dy, fwd, 0.5, 1e-3, "dB");
  if (hasC)
    checkGrad(dc, cm, dy, fwd, 0.5, 1e-3, "dC");
}

// bfloat16 and half: the kernel on x equals the float32 kernel on x rounded
// to bfloat16 / half (products of such values are exact in float32; only the
// order of the float32 sums may differ), and it does round: the float32
// kernel on x itself gives another result.
void expectFloat32OnRoundedOperands(const GemmCase &c, const RoundedPrecision &p) {
  Ctx ctx;
  const auto desc = gemmDesc(c), half = bf16Desc(desc, p.precision);
  const bool hasC = c.c0 || c.c1;
  std::vector<float> a = randomVec(c.m * c.k), b = randomVec(c.k * c.n),
                     cm = randomVec(std::max<int64_t>(1, c.c0 * c.c1)), dy = randomVec(c.m * c.n);
  std::vector<float> ra = p.round(a), rb = p.round(b), rdy = p.round(dy);
  auto fwd = [&](const std::vector<int64_t> &d, std::vector<float> &x, std::vector<float> &w) {
    std::vector<float> y(c.m * c.n, NAN);
    void *bufs[] = {x.data(), w.data(), hasC ? cm.data() : nullptr, y.data()};
    EXPECT_OK(ctx, mgsrt_gemm_fwd(ctx, d.data(), bufs));
    return y;
  };
  const std::vector<float> y = fwd(half, a, b), want = fwd(desc, ra, rb);
  expectClose(y, toDouble(want), 1e-5, 1e-5, "Y");
  EXPECT_GT(maxAbsDiff(y, fwd(desc, a, b)), p.showsRounding) << "no rounding";
  auto bwd = [&](const std::vector<int64_t> &d, std::vector<float> &x, std::vector<float> &w,
                 std::vector<float> &g) {
    std::vector<float> da(a.size(), NAN), db(b.size(), NAN);
    void *bufs[] = {x.data(), w.data(), g.data(), da.data(), db.data(), nullptr};
    EXPECT_OK(ctx, mgsrt_gemm_bwd(ctx, d.data(), bufs));
    return std::pair(da, db);
  };
  auto [da, db] = bwd(half, a, b, dy);
  auto [wantDa, wantDb] = bwd(desc, ra, rb, rdy);
  expectClose(da, toDouble(wantDa), 1e-5, 1e-5, "dA");
  expectClose(db, toDouble(wantDb), 1e-5, 1e-5, "dB");
}

TEST_P(GemmTest, Bf16IsFloat32OnRoundedOperands) {
  expectFloat32OnRoundedOperands(GetParam(), kBf16);
}

TEST_P(GemmTest, F16IsFloat32OnRoundedOperands) {
  expectFloat32OnRoundedOperands(GetParam(), kF16);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmTest,
    ::testing::Values(GemmCase{3, 4, 5, false, false, 1.0, 1.0, 0, 0},
                      GemmCase{3, 4, 5, true, false, 0.5, 2.0, 3, 4},
                      GemmCase{3, 4, 5, false, true, 1.5, -1.0, 1, 4},
                      GemmCase{3, 4, 5, true, true, 1.0, 0.5, 3, 1},
                      GemmCase{7, 2, 3, false, true, 2.0, 1.0, 1, 1},
                      GemmCase{1, 6, 9, true, false, 1.0, 0.0, 1, 6},
                      GemmCase{8, 10, 16, false, true, 1.0, 1.0, 1, 10}));

// A reduced-precision gemm's operands are rounded as `reference` rounds: Y =
// A * 1 shows A as rounded (the same value; a zero's sign aside), on `edges`
// and on 2^20 bit patterns spread over every float. `skip` leaves out the
// values a reference does not speak for.
void expectRoundsAs(int64_t precision, std::vector<float> a, float (*reference)(float),
                    const char *name, bool (*skip)(float) = nullptr) {
  for (uint32_t i = 0; i < (1u << 20); ++i) {
    const uint32_t u = i * 4093u + (i << 12); // every exponent, many fractions
    float x;
    std::memcpy(&x, &u, sizeof x);
    a.push_back(x);
  }
  if (skip)
    a.erase(std::remove_if(a.begin(), a.end(), skip), a.end());
  const int64_t m = static_cast<int64_t>(a.size());
  const int64_t desc[] = {m, 1, 1, 0, 0, bits(1.0), bits(0.0), 0, 0, precision};
  float one = 1.0f;
  std::vector<float> y(a.size());
  void *bufs[] = {a.data(), &one, nullptr, y.data()};
  Ctx ctx;
  ASSERT_OK(ctx, mgsrt_gemm_fwd(ctx, desc, bufs));
  int64_t wrong = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float want = reference(a[i]);
    const bool same = std::isnan(want) ? std::isnan(y[i]) : want == y[i]; // +0 == -0
    if (!same && ++wrong <= 5)
      ADD_FAILURE() << "A = " << a[i] << " (" << std::hexfloat << a[i] << "): got " << y[i]
                    << ", " << name << " " << want << std::defaultfloat;
  }
  EXPECT_EQ(wrong, 0);
}

// Half: to nearest, ties to even, past 65504 to infinity, half's subnormals
// below 2^-14; against the compiler's own conversion.
TEST(GemmTest, F16RoundsOperandsAsIeeeHalf) {
  expectRoundsAs(MGSRT_PRECISION_F16,
                 {0.0f, -0.0f, 1.0f, 65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e30f, INFINITY,
                  -INFINITY, 0x1p-14f, 0x1.ffcp-15f, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f,
                  0x1.8p-24f, 0x1.002p0f, 0x1.006p0f, 0x1.001p0f, 0x1.003p0f, -0x1.7fep-3f,
                  3.14159265f, 1e-8f, -1e-7f, NAN},
                 roundHalf, "IEEE half");
}

/// x rounded to bfloat16 by arithmetic, not by its bits: the nearest multiple
/// of bfloat16's spacing in x's binade (2^-133 below 2^-126), ties to even
/// (nearbyint in the default rounding mode, in double, where x / spacing is
/// exact), past bfloat16's largest finite value (0x1.fep127) to infinity.
float bf16ByArithmetic(float x) {
  if (!std::isfinite(x) || x == 0.0f)
    return x;
  const double spacing = std::ldexp(1.0, std::max(std::ilogb(x), -126) - 7);
  const double r = std::nearbyint(static_cast<double>(x) / spacing) * spacing;
  return std::fabs(r) > 0x1.fep127 ? std::copysign(INFINITY, x) : static_cast<float>(r);
}

// bfloat16: to nearest, ties to even, past 0x1.fep127 to infinity, float's
// subnormals to bfloat16's; NaN stays NaN. Where this CPU has oneDNN's
// bfloat16 kernels, their conversion (AVX-512 BF16's) takes float's
// subnormals as zero, so those are left out there; otherwise (the operands
// rounded for the float32 kernels) every float counts.
TEST(GemmTest, Bf16RoundsOperandsToNearestEven) {
  Ctx ctx;
  const int native = mgsrt_ctx_precision_native(ctx, MGSRT_PRECISION_BF16);
  ASSERT_TRUE(native == 0 || native == 1);
  expectRoundsAs(MGSRT_PRECISION_BF16,
                 {0.0f, -0.0f, 1.0f, 0x1.01p0f, 0x1.03p0f, 0x1.008p0f, 0x1.018p0f,
                  0x1.008002p0f, -0x1.fep127f, 0x1.fefffep127f, 0x1.ffp127f, FLT_MAX, INFINITY,
                  -INFINITY, 0x1p-126f, 0x1.01p-126f, 0x1.008p-127f, 0x1p-133f, 0x1p-134f,
                  0x1.8p-134f, 0x1p-149f, 3.14159265f, 1e-8f, -1e-7f, NAN},
                 bf16ByArithmetic, "bfloat16",
                 native ? +[](float x) { return std::fpclassify(x) == FP_SUBNORMAL; } : nullptr);
}

// Which precisions a CPU context computes in its own arithmetic: float32
// always, half never (no CPU kernels of it), bfloat16 where oneDNN has
// kernels; not a precision: -1.
TEST(GemmTest, PrecisionNativeSaysWhatTheCpuComputesIn) {
  Ctx ctx;
  EXPECT_EQ(mgsrt_ctx_precision_native(ctx, MGSRT_PRECISION_F32), 1);
  EXPECT_EQ(mgsrt_ctx_precision_native(ctx, MGSRT_PRECISION_F16), 0);
  EXPECT_EQ(mgsrt_ctx_precision_native(ctx, 3), -1);
  EXPECT_EQ(mgsrt_ctx_precision_native(nullptr, MGSRT_PRECISION_F32), 1);
}

TEST(GemmTest, LargeProductMatchesReference) {
  Ctx ctx;
  GemmCase c{64, 100, 128, false, true, 1.0, 1.0, 1, 100};
  auto desc = gemmDesc(c);
  std::vector<float> a = randomVec(c.m * c.k), b = randomVec(c.k * c.n), cm = randomVec(c.n);
  std::vector<float> y(c.m * c.n);
  void *bufs[] = {a.data(), b.data(), cm.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_gemm_fwd(ctx, desc.data(), bufs));
  expectClose(y, gemmRef(c, a, b, cm), 1e-4, 1e-4, "Y");
}

// Weight gradients whose operands' rows are a multiple of 2 KB apart
// (and large): cpu::sgemm copies them into padded rows first (Gemm.cpp's
// padStrides). dB = alpha A^T dY (the padded form; dA = alpha dY B^T, checked
// too, is not) against double sums, at a shape with both of dB's operands
// padded (A 512 x 512, dY 512 x 1024) and one with only dY (A 300 x 256), and
// a batched matmul's broadcast weight (its lhs stacked: one 256 x 512 x 256
// GEMM, dOut padded). The sizes are well over padStrides' 64 Ki floats.
TEST(GemmTest, WeightGradientsOfPowerOfTwoStridesMatchDoubleSums) {
  Ctx ctx;
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{512, 512, 1024}, {300, 256, 1024}}) {
    SCOPED_TRACE("M " + std::to_string(m));
    GemmCase c{m, n, k, false, false, 0.5, 0.0, 0, 0};
    auto desc = gemmDesc(c);
    std::vector<float> a = randomVec(m * k), b = randomVec(k * n), dy = randomVec(m * n);
    std::vector<float> da(m * k, NAN), db(k * n, NAN);
    void *bufs[] = {a.data(), b.data(), dy.data(), da.data(), db.data(), nullptr};
    ASSERT_OK(ctx, mgsrt_gemm_bwd(ctx, desc.data(), bufs));
    std::vector<double> wantDb(k * n, 0.0), wantDa(m * k, 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) {
          wantDb[p * n + j] += 0.5 * a[i * k + p] * dy[i * n + j];
          wantDa[i * k + p] += 0.5 * dy[i * n + j] * b[p * n + j];
        }
    expectClose(db, wantDb, 1e-4, 1e-4, "dB");
    expectClose(da, wantDa, 1e-4, 1e-4, "dA");
  }
  // matmul: lhs 2 x 128 x 256 (stacked to 256 x 256), rhs 256 x 512 shared.
  const int64_t desc[] = {1, 2, 2, 1, 128, 256, 512, 0, 0, MGSRT_PRECISION_F32};
  std::vector<float> l = randomVec(2 * 128 * 256), r = randomVec(256 * 512),
                     dout = randomVec(2 * 128 * 512), dr(256 * 512, NAN);
  void *bufs[] = {l.data(), r.data(), dout.data(), nullptr, dr.data()};
  ASSERT_OK(ctx, mgsrt_matmul_bwd(ctx, desc, bufs));
  std::vector<double> want(256 * 512, 0.0);
  for (int64_t i = 0; i < 256; ++i)
    for (int64_t p = 0; p < 256; ++p)
      for (int64_t j = 0; j < 512; ++j)
        want[p * 512 + j] += double(l[i * 256 + p]) * dout[i * 512 + j];
  expectClose(dr, want, 1e-4, 1e-4, "dR");
}

TEST(GemmTest, EmptyInnerDimension) {
  Ctx ctx;
  GemmCase c{2, 3, 0, false, false, 1.0, 2.0, 1, 3};
  auto desc = gemmDesc(c);
  std::vector<float> cm = {1, 2, 3}, y(6, 7.0f), dy = randomVec(6), dc(3);
  float dummy = 0;
  void *bufs[] = {&dummy, &dummy, cm.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_gemm_fwd(ctx, desc.data(), bufs));
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, 2, 4, 6}));
  void *bb[] = {&dummy, &dummy, dy.data(), nullptr, nullptr, dc.data()};
  ASSERT_OK(ctx, mgsrt_gemm_bwd(ctx, desc.data(), bb));
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(dc[j], 2.0 * (dy[j] + dy[3 + j]), 1e-6);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulCase {
  std::vector<int64_t> lhsB, rhsB; // same rank
  int64_t m, k, n;
  bool tl = false, tr = false; // lhs stored k x m, rhs stored n x k
};

std::vector<int64_t> outBatch(const MatmulCase &c) {
  std::vector<int64_t> o(c.lhsB.size());
  for (size_t i = 0; i < o.size(); ++i)
    o[i] = c.lhsB[i] != 1 ? c.lhsB[i] : c.rhsB[i];
  return o;
}

std::vector<int64_t> matmulDesc(const MatmulCase &c) {
  std::vector<int64_t> o = outBatch(c);
  std::vector<int64_t> d = {static_cast<int64_t>(o.size())};
  d.insert(d.end(), o.begin(), o.end());
  d.insert(d.end(), c.lhsB.begin(), c.lhsB.end());
  d.insert(d.end(), c.rhsB.begin(), c.rhsB.end());
  d.insert(d.end(), {c.m, c.k, c.n, c.tl, c.tr, MGSRT_PRECISION_F32});
  return d;
}

int64_t batchIndex(const std::vector<int64_t> &idx, const std::vector<int64_t> &shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    f = f * shape[i] + (shape[i] == 1 ? 0 : idx[i]);
  return f;
}

/// Each test's case, descriptor, output batch and random operands.
class MatmulTest : public ::testing::TestWithParam<MatmulCase> {
protected:
  void SetUp() override {
    c = GetParam();
    desc = matmulDesc(c);
    ob = outBatch(c);
    l = randomVec(product(c.lhsB) * c.m * c.k);
    r = randomVec(product(c.rhsB) * c.k * c.n);
  }
  /// Where op(lhs)[i][p] of lhs batch li is stored.
  int64_t lhsAt(int64_t li, int64_t i, int64_t p) const {
    return c.tl ? (li * c.k + p) * c.m + i : (li * c.m + i) * c.k + p;
  }
  /// Where op(rhs)[p][j] of rhs batch ri is stored.
  int64_t rhsAt(int64_t ri, int64_t p, int64_t j) const {
    return c.tr ? (ri * c.n + j) * c.k + p : (ri * c.k + p) * c.n + j;
  }

  /// As GemmTest's expectFloat32OnRoundedOperands.
  void expectFloat32OnRoundedOperands(const RoundedPrecision &p);

  Ctx ctx;
  MatmulCase c;
  std::vector<int64_t> desc, ob;
  std::vector<float> l, r;
};

TEST_P(MatmulTest, ForwardMatchesReference) {
  std::vector<float> y(product(ob) * c.m * c.n);
  void *bufs[] = {l.data(), r.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_matmul_fwd(ctx, desc.data(), bufs));
  std::vector<double> want(y.size());
  for (int64_t o = 0; o < product(ob); ++o) {
    auto idx = unflatten(o, ob);
    int64_t li = batchIndex(idx, c.lhsB), ri = batchIndex(idx, c.rhsB);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < c.k; ++p)
          s += static_cast<double>(l[lhsAt(li, i, p)]) * r[rhsAt(ri, p, j)];
        want[(o * c.m + i) * c.n + j] = s;
      }
  }
  expectClose(y, want, 1e-5, 1e-5, "out");
}

TEST_P(MatmulTest, BackwardMatchesFiniteDifferences) {
  std::vector<float> dy = randomVec(product(ob) * c.m * c.n), dl(l.size()), dr(r.size());
  auto fwd = [&] {
    std::vector<float> y(dy.size());
    void *bufs[] = {l.data(), r.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_matmul_fwd(ctx, desc.data(), bufs));
    return y;
  };
  void *bufs[] = {l.data(), r.data(), dy.data(), dl.data(), dr.data()};
  ASSERT_OK(ctx, mgsrt_matmul_bwd(ctx, desc.data(), bufs));
  checkGrad(dl, l, dy, fwd, 0.5, 1e-3, "dlhs");
  checkGrad(dr, r, dy, fwd, 0.5, 1e-3, "drhs");
}

// The gradients against a double reference, their buffers filled with NaN
// first: a gradient whose operand does not broadcast is written without
// being read or cleared, one that broadcasts is cleared and accumulated.
TEST_P(MatmulTest, BackwardOverwritesGradients) {
  std::vector<float> dy = randomVec(product(ob) * c.m * c.n);
  std::vector<float> dl(l.size(), NAN), dr(r.size(), NAN);
  void *bufs[] = {l.data(), r.data(), dy.data(), dl.data(), dr.data()};
  ASSERT_OK(ctx, mgsrt_matmul_bwd(ctx, desc.data(), bufs));
  std::vector<double> wantL(l.size()), wantR(r.size());
  for (int64_t o = 0; o < product(ob); ++o) {
    auto idx = unflatten(o, ob);
    const int64_t li = batchIndex(idx, c.lhsB), ri = batchIndex(idx, c.rhsB);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        const double g = dy[(o * c.m + i) * c.n + j];
        for (int64_t p = 0; p < c.k; ++p) {
          wantL[lhsAt(li, i, p)] += g * r[rhsAt(ri, p, j)];
          wantR[rhsAt(ri, p, j)] += g * l[lhsAt(li, i, p)];
        }
      }
  }
  expectClose(dl, wantL, 1e-5, 1e-5, "dlhs");
  expectClose(dr, wantR, 1e-5, 1e-5, "drhs");
}

// bfloat16 and half: as GemmTest.Bf16IsFloat32OnRoundedOperands, through
// broadcast and transposed batches.
void MatmulTest::expectFloat32OnRoundedOperands(const RoundedPrecision &p) {
  const auto half = bf16Desc(desc, p.precision);
  std::vector<float> dy = randomVec(product(ob) * c.m * c.n);
  std::vector<float> rl = p.round(l), rr = p.round(r), rdy = p.round(dy);
  auto fwd = [&](const std::vector<int64_t> &d, std::vector<float> &x, std::vector<float> &w) {
    std::vector<float> y(dy.size(), NAN);
    void *bufs[] = {x.data(), w.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_matmul_fwd(ctx, d.data(), bufs));
    return y;
  };
  const std::vector<float> y = fwd(half, l, r);
  expectClose(y, toDouble(fwd(desc, rl, rr)), 1e-5, 1e-5, "out");
  EXPECT_GT(maxAbsDiff(y, fwd(desc, l, r)), p.showsRounding) << "no rounding";
  auto bwd = [&](const std::vector<int64_t> &d, std::vector<float> &x, std::vector<float> &w,
                 std::vector<float> &g) {
    std::vector<float> dl(l.size(), NAN), dr(r.size(), NAN);
    void *bufs[] = {x.data(), w.data(), g.data(), dl.data(), dr.data()};
    EXPECT_OK(ctx, mgsrt_matmul_bwd(ctx, d.data(), bufs));
    return std::pair(dl, dr);
  };
  auto [dl, dr] = bwd(half, l, r, dy);
  auto [wantDl, wantDr] = bwd(desc, rl, rr, rdy);
  expectClose(dl, toDouble(wantDl), 1e-5, 1e-5, "dlhs");
  expectClose(dr, toDouble(wantDr), 1e-5, 1e-5, "drhs");
}

TEST_P(MatmulTest, Bf16IsFloat32OnRoundedOperands) {
  expectFloat32OnRoundedOperands(kBf16);
}

TEST_P(MatmulTest, F16IsFloat32OnRoundedOperands) { expectFloat32OnRoundedOperands(kF16); }

INSTANTIATE_TEST_SUITE_P(Shapes, MatmulTest,
                         ::testing::Values(MatmulCase{{}, {}, 3, 4, 5},
                                           MatmulCase{{2, 3}, {2, 3}, 2, 3, 4},
                                           MatmulCase{{4}, {1}, 3, 2, 5},   // rhs shared
                                           MatmulCase{{1}, {4}, 3, 2, 5},   // lhs shared
                                           MatmulCase{{2, 1}, {1, 3}, 2, 4, 3}, // both sides
                                           MatmulCase{{3, 2}, {1, 1}, 4, 3, 2},
                                           // attention-like: batches split across threads
                                           MatmulCase{{8}, {8}, 17, 16, 17},
                                           // transposed operands (trans_lhs / trans_rhs)
                                           MatmulCase{{}, {}, 3, 4, 5, true, true},
                                           MatmulCase{{4}, {1}, 3, 2, 5, false, true}, // W^T
                                           MatmulCase{{4}, {1}, 3, 2, 5, true, false},
                                           MatmulCase{{1}, {4}, 3, 2, 5, true, true},
                                           MatmulCase{{2, 1}, {1, 3}, 2, 4, 3, true, false},
                                           MatmulCase{{8}, {8}, 17, 16, 17, false, true}, // K^T
                                           // windowed attention's (SmallGemm.cpp): C's rows
                                           // whole vectors, tails of rows, 32 x 32 x 32
                                           MatmulCase{{16}, {16}, 16, 24, 16, false, true},
                                           MatmulCase{{16}, {16}, 16, 16, 24},
                                           MatmulCase{{5}, {5}, 13, 7, 8, true, true},
                                           MatmulCase{{6}, {6}, 31, 32, 32, true, false},
                                           MatmulCase{{3}, {3}, 32, 32, 32},
                                           // beyond it: oneDNN's sgemm
                                           MatmulCase{{8}, {8}, 40, 33, 48, false, true},
                                           MatmulCase{{4}, {1}, 33, 16, 16}));

TEST(MatmulErrors, PrecisionIsF32Bf16OrF16) {
  Ctx ctx;
  std::vector<float> l(6), r(6), y(4);
  void *bufs[] = {l.data(), r.data(), y.data()};
  const int64_t desc[] = {0, 2, 3, 2, 0, 0, 3};
  EXPECT_EQ(mgsrt_matmul_fwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "matmul_fwd: precision 3 is not 0 (float32), 1 (bfloat16) or 2 (half)");
}

TEST(MatmulErrors, TransFlagsAreZeroOrOne) {
  Ctx ctx;
  std::vector<float> l(6), r(6), y(4);
  void *bufs[] = {l.data(), r.data(), y.data()};
  const int64_t desc[] = {0, 2, 3, 2, 0, 2, MGSRT_PRECISION_F32};
  EXPECT_EQ(mgsrt_matmul_fwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("trans_rhs 2"), std::string::npos) << ctx.message();
}

} // namespace
