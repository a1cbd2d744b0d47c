//===- ElementwiseTest.cpp - unary, clip, binary, dropout, copies, SGD ----===//

#include "TestUtil.h"

#include <array>
#include <limits>
#include <cmath>
#include <cstring>

#include <omp.h>

using namespace mgsrt_test;

namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

double unaryRef(int op, double x, double alpha) {
  switch (op) {
  case MGSRT_UNARY_RELU: return x > 0 ? x : 0;
  case MGSRT_UNARY_LEAKY_RELU: return x >= 0 ? x : alpha * x;
  case MGSRT_UNARY_SIGMOID: return 1 / (1 + std::exp(-x));
  default: return std::tanh(x);
  }
}

class UnaryTest : public ::testing::TestWithParam<int> {};

TEST_P(UnaryTest, ForwardMatchesReference) {
  Ctx ctx;
  const int op = GetParam();
  const int64_t n = 100000; // large enough for the parallel path
  const double alpha = 0.15;
  std::vector<float> x = randomVec(n, -4, 4), y(n);
  x[0] = 0.0f;
  x[1] = -30.0f;
  x[2] = 30.0f;
  const int64_t desc[] = {op, n, bits(alpha)};
  void *bufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, desc, bufs));
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = unaryRef(op, x[i], alpha);
  expectClose(y, want, 1e-5, 1e-6, "y");
}

TEST_P(UnaryTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  const int op = GetParam();
  const int64_t n = 64;
  const double alpha = 0.15;
  std::vector<float> x = awayFromZero(n, 0.1f), y(n), dy = randomVec(n), dx(n);
  const int64_t desc[] = {op, n, bits(alpha)};
  auto fwd = [&] {
    std::vector<float> out(n);
    void *bufs[] = {x.data(), out.data()};
    EXPECT_OK(ctx, mgsrt_unary_fwd(ctx, desc, bufs));
    return out;
  };
  y = fwd();
  void *bufs[] = {x.data(), y.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, desc, bufs));
  checkGrad(dx, x, dy, fwd, 1e-2, 2e-3, "dx");
}

INSTANTIATE_TEST_SUITE_P(Ops, UnaryTest,
                         ::testing::Values(MGSRT_UNARY_RELU, MGSRT_UNARY_LEAKY_RELU,
                                           MGSRT_UNARY_SIGMOID, MGSRT_UNARY_TANH));

TEST(UnaryTest, ReluBackwardUsesOnlyX) {
  // relu/leaky read x, not y: y may be null.
  Ctx ctx;
  std::vector<float> x = {-1, 0, 2}, dy = {5, 6, 7}, dx(3);
  const int64_t desc[] = {MGSRT_UNARY_LEAKY_RELU, 3, bits(0.5)};
  void *bufs[] = {x.data(), nullptr, dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, desc, bufs));
  EXPECT_EQ(dx, (std::vector<float>{2.5f, 3.0f, 7.0f}));
}

//===----------------------------------------------------------------------===//
// HardSigmoid, HardSwish
//===----------------------------------------------------------------------===//

/// PyTorch's hardsigmoid and hardswish (ONNX's alpha 1/6, beta 1/2), in double.
double hardRef(int op, double x) {
  const double h = std::min(1.0, std::max(0.0, x / 6 + 0.5));
  return op == MGSRT_UNARY_HARD_SIGMOID ? h : x * h;
}

/// The descriptor of `op` on n elements with PyTorch's alpha and beta.
std::array<int64_t, 4> hardDesc(int op, int64_t n) { return {op, n, bits(1.0f / 6.0f), bits(0.5)}; }

class HardUnaryTest : public ::testing::TestWithParam<int> {};

TEST_P(HardUnaryTest, ForwardMatchesReference) {
  Ctx ctx;
  const int op = GetParam();
  const int64_t n = 100000; // large enough for the parallel path
  std::vector<float> x = randomVec(n, -5, 5), y(n);
  x[0] = -3.0f; // the kinks, and beyond them
  x[1] = 3.0f;
  x[2] = -30.0f;
  x[3] = 30.0f;
  const auto d = hardDesc(op, n);
  void *bufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, d.data(), bufs));
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = hardRef(op, x[i]);
  expectClose(y, want, 1e-6, 1e-7, "y");
}

TEST_P(HardUnaryTest, BackwardMatchesFiniteDifferences) {
  // Points at least 0.1 from the kinks at -3 and 3 (and in every piece).
  Ctx ctx;
  const int64_t n = 64;
  std::vector<float> x = randomVec(n, 0.1f, 2.9f), y(n), dy = randomVec(n), dx(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = i % 4 == 0 ? -x[i] : i % 4 == 1 ? x[i] + 3.2f : i % 4 == 2 ? -x[i] - 3.2f : x[i];
  const auto d = hardDesc(GetParam(), n);
  auto fwd = [&] {
    std::vector<float> out(n);
    void *bufs[] = {x.data(), out.data()};
    EXPECT_OK(ctx, mgsrt_unary_fwd(ctx, d.data(), bufs));
    return out;
  };
  y = fwd();
  void *bufs[] = {x.data(), y.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, d.data(), bufs));
  checkGrad(dx, x, dy, fwd, 1e-2, 2e-3, "dx");
}

INSTANTIATE_TEST_SUITE_P(Ops, HardUnaryTest,
                         ::testing::Values(MGSRT_UNARY_HARD_SIGMOID, MGSRT_UNARY_HARD_SWISH));

TEST(UnaryTest, ExpAndSigmoidOfNaNAreNaN) {
  // The exp of VectorMath.h takes a NaN through its range reduction (an
  // int32 conversion and a shift, undefined for a NaN: the sanitizer job
  // checks that none is left); finite inputs beside it keep std::exp's
  // value to float rounding.
  Ctx ctx;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, -nan, 0.0f, 1.5f, -20.0f, 30.0f, nan, 2.0f};
  for (int op : {MGSRT_UNARY_EXP, MGSRT_UNARY_SIGMOID}) {
    SCOPED_TRACE(op == MGSRT_UNARY_EXP ? "exp" : "sigmoid");
    std::vector<float> y(x.size());
    const std::array<int64_t, 4> d = {op, static_cast<int64_t>(x.size()), 0, 0};
    void *bufs[] = {x.data(), y.data()};
    ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, d.data(), bufs));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << "y[" << i << "] = " << y[i];
        continue;
      }
      const double e = std::exp(static_cast<double>(x[i]));
      const double want = op == MGSRT_UNARY_EXP ? e : e / (1.0 + e);
      EXPECT_NEAR(y[i], want, 1e-6 * std::abs(want)) << "x = " << x[i];
    }
  }
}

TEST(HardUnaryTest, GradientAtTheKinksIsPyTorchs) {
  // PyTorch: hardsigmoid's gradient is 1/6 strictly inside (-3, 3), else 0;
  // hardswish's is x / 3 + 1/2 on [-3, 3] (-1/2 at -3, 3/2 at 3), 0 below
  // and 1 above. y is not read: it may be null.
  Ctx ctx;
  std::vector<float> x = {-3.0f, 3.0f, -3.5f, 3.5f, 0.0f}, dy = {2, 2, 2, 2, 2}, dx(5);
  void *bufs[] = {x.data(), nullptr, dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, hardDesc(MGSRT_UNARY_HARD_SIGMOID, 5).data(), bufs));
  EXPECT_EQ(dx, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 2.0f / 6.0f}));
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, hardDesc(MGSRT_UNARY_HARD_SWISH, 5).data(), bufs));
  EXPECT_EQ(dx, (std::vector<float>{-1.0f, 3.0f, 0.0f, 2.0f, 1.0f}));
}

TEST(HardUnaryTest, AlphaAndBetaAreRead) {
  // ONNX HardSigmoid's defaults: alpha 0.2, beta 0.5.
  Ctx ctx;
  std::vector<float> x = {-3.0f, 0.0f, 1.0f, 3.0f}, y(4);
  const int64_t d[] = {MGSRT_UNARY_HARD_SIGMOID, 4, bits(0.2f), bits(0.5f)};
  void *bufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, d, bufs));
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.5f, 0.2f * 1.0f + 0.5f, 1.0f}));
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

TEST(ClipTest, ForwardAndBackward) {
  Ctx ctx;
  const int64_t n = 200;
  std::vector<float> x = randomVec(n, -2, 2), y(n), dy = randomVec(n), dx(n);
  x[0] = -0.5f; // exactly on the bounds: inside
  x[1] = 0.75f;
  float lo = -0.5f, hi = 0.75f;
  const int64_t desc[] = {n};
  void *fb[] = {x.data(), &lo, &hi, y.data()};
  ASSERT_OK(ctx, mgsrt_clip_fwd(ctx, desc, fb));
  void *bb[] = {x.data(), &lo, &hi, dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_clip_bwd(ctx, desc, bb));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(y[i], std::min(std::max(x[i], lo), hi)) << i;
    EXPECT_EQ(dx[i], (x[i] >= lo && x[i] <= hi) ? dy[i] : 0.0f) << i;
  }
}

TEST(ClipTest, BackwardMatchesFiniteDifferences) {
  Ctx ctx;
  const int64_t n = 50;
  std::vector<float> x = randomVec(n, -2, 2), dy = randomVec(n), dx(n);
  float lo = -0.5f, hi = 0.75f;
  for (auto &v : x) // keep away from the kinks
    if (std::abs(v - lo) < 0.05f || std::abs(v - hi) < 0.05f)
      v += 0.1f;
  const int64_t desc[] = {n};
  auto fwd = [&] {
    std::vector<float> y(n);
    void *b[] = {x.data(), &lo, &hi, y.data()};
    EXPECT_OK(ctx, mgsrt_clip_fwd(ctx, desc, b));
    return y;
  };
  void *bb[] = {x.data(), &lo, &hi, dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_clip_bwd(ctx, desc, bb));
  checkGrad(dx, x, dy, fwd, 1e-2, 1e-3, "dx");
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

struct BinaryCase {
  std::vector<int64_t> lhs, rhs; // already left-padded to the same rank
};

std::vector<int64_t> broadcastShape(const BinaryCase &c) {
  std::vector<int64_t> out(c.lhs.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = c.lhs[i] != 1 ? c.lhs[i] : c.rhs[i];
  return out;
}

std::vector<int64_t> binaryDesc(int op, const BinaryCase &c) {
  std::vector<int64_t> out = broadcastShape(c);
  std::vector<int64_t> d = {op, static_cast<int64_t>(out.size())};
  d.insert(d.end(), out.begin(), out.end());
  d.insert(d.end(), c.lhs.begin(), c.lhs.end());
  d.insert(d.end(), c.rhs.begin(), c.rhs.end());
  return d;
}

int64_t broadcastIndex(const std::vector<int64_t> &idx, const std::vector<int64_t> &shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + (shape[i] == 1 ? 0 : idx[i]);
  return flat;
}

double binaryRef(int op, double a, double b) {
  switch (op) {
  case MGSRT_BINARY_ADD: return a + b;
  case MGSRT_BINARY_SUB: return a - b;
  case MGSRT_BINARY_MUL: return a * b;
  case MGSRT_BINARY_GREATER:
    return a > b;
  case MGSRT_BINARY_GREATER_EQUAL:
    return a >= b;
  case MGSRT_BINARY_EQUAL:
    return a == b;
  case MGSRT_BINARY_KEEP_WHERE:
    return b != 0 ? a : 0;
  default: return a / b;
  }
}

/// The operands of `op`'s tests: for the comparisons and keep_where,
/// multiples of 0.5 in [-1, 1], so that ties and zeros occur; else random,
/// rhs away from 0 (a divisor).
std::pair<std::vector<float>, std::vector<float>> binaryOperands(int op, const BinaryCase &c) {
  std::vector<float> a = randomVec(product(c.lhs)), b = randomVec(product(c.rhs), 0.5f, 2.0f);
  if (op >= MGSRT_BINARY_GREATER) {
    b = randomVec(product(c.rhs));
    for (auto *v : {&a, &b})
      for (float &x : *v)
        x = std::round(x * 2.0f) / 2.0f;
  }
  return {a, b};
}

const std::vector<BinaryCase> &binaryCases() {
  static const std::vector<BinaryCase> cases = {
      {{2, 3, 4}, {2, 3, 4}},          // same shape
      {{2, 3, 4}, {1, 3, 1}},          // rhs broadcast in the outer and inner dims
      {{2, 1, 4}, {1, 3, 1}},          // both sides broadcast
      {{1, 1, 5}, {4, 3, 1}},          // lhs innermost kept, rhs innermost reduced
      {{}, {}},                        // rank 0
      {{1, 1}, {3, 7}},                // lhs scalar
      {{6, 5, 1, 3}, {1, 5, 2, 1}},
      {{2, 3, 5, 7}, {2, 1, 5, 1}},
      {{64, 33, 17}, {1, 33, 1}},      // large: parallel paths
      {{8, 1, 64}, {1, 80, 64}},       // large, both innermost kept: row sums
      {{40, 30, 48}, {1, 1, 48}},      // a bias: one row, its 1200 positions in blocks
      {{100, 3, 120}, {1, 3, 1}},      // few rows, the innermost reduced: 2 blocks
  };
  return cases;
}

class BinaryTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BinaryTest, ForwardMatchesReference) {
  Ctx ctx;
  auto [op, caseIdx] = GetParam();
  const BinaryCase &c = binaryCases()[caseIdx];
  std::vector<int64_t> out = broadcastShape(c), desc = binaryDesc(op, c);
  auto [a, b] = binaryOperands(op, c);
  std::vector<float> y(product(out));
  void *bufs[] = {a.data(), b.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_binary_fwd(ctx, desc.data(), bufs));
  std::vector<double> want(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    auto idx = unflatten(i, out);
    want[i] = binaryRef(op, a[broadcastIndex(idx, c.lhs)], b[broadcastIndex(idx, c.rhs)]);
  }
  expectClose(y, want, 1e-6, 1e-7, "out");
}

TEST_P(BinaryTest, BackwardMatchesReference) {
  Ctx ctx;
  auto [op, caseIdx] = GetParam();
  const BinaryCase &c = binaryCases()[caseIdx];
  std::vector<int64_t> out = broadcastShape(c), desc = binaryDesc(op, c);
  auto [a, b] = binaryOperands(op, c);
  std::vector<float> g = randomVec(product(out));
  std::vector<float> da(a.size(), 99.0f), db(b.size(), 99.0f);
  void *bufs[] = {a.data(), b.data(), g.data(), da.data(), db.data()};
  ASSERT_OK(ctx, mgsrt_binary_bwd(ctx, desc.data(), bufs));
  std::vector<double> wa(a.size()), wb(b.size());
  for (size_t i = 0; i < g.size(); ++i) {
    auto idx = unflatten(i, out);
    int64_t ia = broadcastIndex(idx, c.lhs), ib = broadcastIndex(idx, c.rhs);
    double x = a[ia], z = b[ib], d = g[i];
    switch (op) {
    case MGSRT_BINARY_ADD: wa[ia] += d; wb[ib] += d; break;
    case MGSRT_BINARY_SUB: wa[ia] += d; wb[ib] -= d; break;
    case MGSRT_BINARY_MUL: wa[ia] += d * z; wb[ib] += d * x; break;
    case MGSRT_BINARY_DIV:
      wa[ia] += d / z;
      wb[ib] -= d * x / (z * z);
      break;
    case MGSRT_BINARY_KEEP_WHERE:
      wa[ia] += z != 0 ? d : 0;
      break;
    default:
      break; // the comparisons: no gradient
    }
  }
  expectClose(da, wa, 1e-5, 1e-5, "dlhs");
  expectClose(db, wb, 1e-5, 1e-5, "drhs");

  // One side only: the other stays untouched.
  std::vector<float> db2(b.size(), 42.0f);
  void *only[] = {a.data(), b.data(), g.data(), nullptr, db2.data()};
  ASSERT_OK(ctx, mgsrt_binary_bwd(ctx, desc.data(), only));
  expectClose(db2, wb, 1e-5, 1e-5, "drhs alone");
}

INSTANTIATE_TEST_SUITE_P(
    OpsAndShapes, BinaryTest,
    ::testing::Combine(::testing::Values(MGSRT_BINARY_ADD, MGSRT_BINARY_SUB, MGSRT_BINARY_MUL,
                                         MGSRT_BINARY_DIV, MGSRT_BINARY_GREATER,
                                         MGSRT_BINARY_GREATER_EQUAL, MGSRT_BINARY_EQUAL,
                                         MGSRT_BINARY_KEEP_WHERE),
                       ::testing::Range(0, 12)));

TEST(UnaryTest, RoundHalvesToEvenAndHasNoGradient) {
  Ctx ctx;
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, std::nanf("")};
  std::vector<float> y(x.size()), dy(x.size(), 1.0f), dx(x.size(), 7.0f);
  const int64_t desc[] = {MGSRT_UNARY_ROUND, static_cast<int64_t>(x.size()), 0};
  void *fwd[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, desc, fwd));
  const std::vector<float> want = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -3.0f};
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(y[i], want[i]) << "at " << i;
  EXPECT_TRUE(std::isnan(y.back()));
  void *bwd[] = {x.data(), y.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, desc, bwd));
  EXPECT_EQ(dx, std::vector<float>(x.size(), 0.0f));
}

TEST(UnaryTest, FloorAndCeilHaveNoGradient) {
  Ctx ctx;
  std::vector<float> x = {0.5f, -0.5f, 2.0f, -2.0f, 1e9f, -3.25f, 7.999f};
  for (auto [op, want] : {std::pair<int64_t, std::vector<float>>{
                              MGSRT_UNARY_FLOOR, {0.0f, -1.0f, 2.0f, -2.0f, 1e9f, -4.0f, 7.0f}},
                          {MGSRT_UNARY_CEIL, {1.0f, -0.0f, 2.0f, -2.0f, 1e9f, -3.0f, 8.0f}}}) {
    std::vector<float> y(x.size()), dy(x.size(), 1.0f), dx(x.size(), 7.0f);
    const int64_t desc[] = {op, static_cast<int64_t>(x.size()), 0};
    void *fwd[] = {x.data(), y.data()};
    ASSERT_OK(ctx, mgsrt_unary_fwd(ctx, desc, fwd));
    EXPECT_EQ(y, want) << "op " << op;
    void *bwd[] = {x.data(), y.data(), dy.data(), dx.data()};
    ASSERT_OK(ctx, mgsrt_unary_bwd(ctx, desc, bwd));
    EXPECT_EQ(dx, std::vector<float>(x.size(), 0.0f)) << "op " << op;
  }
}

TEST(BinaryTest, ComparisonsAndKeepWhereOnNaNAndInfinities) {
  // A comparison with NaN is false; keep_where gives 0 where the condition
  // is 0 whatever lhs holds (NaN, infinities), and lhs itself elsewhere.
  Ctx ctx;
  const float nan = std::nanf(""), inf = INFINITY;
  std::vector<float> a = {nan, inf, -inf, 1.0f, nan, -inf}, b = {0.0f, 0.0f, 0.0f, nan, 1.0f, -inf};
  BinaryCase c{{6}, {6}};
  auto run = [&](int op) {
    std::vector<int64_t> desc = binaryDesc(op, c);
    std::vector<float> y(6, 7.0f);
    void *bufs[] = {a.data(), b.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_binary_fwd(ctx, desc.data(), bufs));
    return y;
  };
  EXPECT_EQ(run(MGSRT_BINARY_GREATER), (std::vector<float>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(run(MGSRT_BINARY_GREATER_EQUAL), (std::vector<float>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(run(MGSRT_BINARY_EQUAL), (std::vector<float>{0, 0, 0, 0, 0, 1}));
  std::vector<float> kept = run(MGSRT_BINARY_KEEP_WHERE);
  EXPECT_EQ(kept[0], 0.0f);
  EXPECT_EQ(kept[1], 0.0f);
  EXPECT_EQ(kept[2], 0.0f);
  EXPECT_EQ(kept[3], 1.0f); // a NaN condition is not 0
  EXPECT_TRUE(std::isnan(kept[4]));
  EXPECT_EQ(kept[5], -inf);
}

TEST(BinaryTest, ReductionsHaveTheSameBitsWhateverTheThreadCount) {
  // A target of few rows sums blocks of its reduced positions apart, on
  // whichever threads, then adds the blocks in order: 1, 2, 3 and 7 threads
  // give the same bits.
  const int threads = omp_get_max_threads();
  for (int caseIdx : {10, 11}) {
    const BinaryCase &c = binaryCases()[caseIdx];
    std::vector<int64_t> desc = binaryDesc(MGSRT_BINARY_MUL, c);
    std::vector<float> a = randomVec(product(c.lhs)), b = randomVec(product(c.rhs));
    std::vector<float> g = randomVec(product(broadcastShape(c)));
    std::vector<std::vector<float>> dbs;
    for (int t : {1, 2, 3, 7}) {
      omp_set_num_threads(t);
      Ctx ctx;
      std::vector<float> db(b.size());
      void *bufs[] = {a.data(), b.data(), g.data(), nullptr, db.data()};
      EXPECT_OK(ctx, mgsrt_binary_bwd(ctx, desc.data(), bufs));
      dbs.push_back(db);
    }
    omp_set_num_threads(threads);
    for (size_t i = 1; i < dbs.size(); ++i)
      EXPECT_EQ(0, std::memcmp(dbs[0].data(), dbs[i].data(), dbs[0].size() * sizeof(float)))
          << "case " << caseIdx << ", thread count #" << i;
  }
}

TEST(BinaryTest, DivBackwardMatchesFiniteDifferences) {
  Ctx ctx;
  BinaryCase c{{2, 1, 4}, {1, 3, 1}};
  std::vector<int64_t> out = broadcastShape(c), desc = binaryDesc(MGSRT_BINARY_DIV, c);
  std::vector<float> a = randomVec(product(c.lhs)), b = randomVec(product(c.rhs), 0.5f, 2.0f);
  std::vector<float> g = randomVec(product(out)), da(a.size()), db(b.size());
  auto fwd = [&] {
    std::vector<float> y(product(out));
    void *bufs[] = {a.data(), b.data(), y.data()};
    EXPECT_OK(ctx, mgsrt_binary_fwd(ctx, desc.data(), bufs));
    return y;
  };
  void *bufs[] = {a.data(), b.data(), g.data(), da.data(), db.data()};
  ASSERT_OK(ctx, mgsrt_binary_bwd(ctx, desc.data(), bufs));
  checkGrad(da, a, g, fwd, 1e-2, 2e-3, "dlhs");
  checkGrad(db, b, g, fwd, 1e-2, 2e-3, "drhs");
}

TEST(BinaryTest, ZeroSizedOutput) {
  Ctx ctx;
  // out [0, 3] from lhs [0, 1] and rhs [1, 3]: drhs is all zeros.
  const int64_t desc[] = {MGSRT_BINARY_MUL, 2, 0, 3, 0, 1, 1, 3};
  float a = 0, b[3] = {1, 2, 3}, g = 0, y = 0, db[3] = {7, 7, 7};
  void *fb[] = {&a, b, &y};
  ASSERT_OK(ctx, mgsrt_binary_fwd(ctx, desc, fb));
  void *bb[] = {&a, b, &g, nullptr, db};
  ASSERT_OK(ctx, mgsrt_binary_bwd(ctx, desc, bb));
  EXPECT_EQ(db[0], 0.0f);
  EXPECT_EQ(db[2], 0.0f);
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

TEST(DropoutTest, MaskFollowsTheSplitmixStream) {
  Ctx ctx(777);
  const int64_t n = 50000;
  const double ratio = 0.3;
  std::vector<float> x = randomVec(n), y(n);
  std::vector<uint8_t> mask(n);
  const int64_t desc[] = {n, bits(ratio), 1, 1};
  void *bufs[] = {x.data(), y.data(), mask.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, bufs));
  uint64_t state = 777;
  int64_t kept = 0;
  const float scale = static_cast<float>(1.0 / (1.0 - ratio));
  for (int64_t i = 0; i < n; ++i) {
    float u = static_cast<float>(splitmix64(state) >> 40) * (1.0f / 16777216.0f);
    bool keep = u >= ratio;
    ASSERT_EQ(mask[i], keep ? 1 : 0) << i;
    ASSERT_EQ(y[i], keep ? x[i] * scale : 0.0f) << i;
    kept += keep;
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, 1.0 - ratio, 0.01);
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), state); // advanced by n draws
}

TEST(DropoutTest, SameStateSameMask) {
  Ctx ctx(5);
  const int64_t n = 1000;
  std::vector<float> x = randomVec(n), y1(n), y2(n), y3(n);
  std::vector<uint8_t> m1(n), m2(n), m3(n);
  const int64_t desc[] = {n, bits(0.5), 1, 1};
  const uint64_t start = mgsrt_ctx_rng_state(ctx);
  void *b1[] = {x.data(), y1.data(), m1.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, b1));
  void *b2[] = {x.data(), y2.data(), m2.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, b2));
  EXPECT_NE(m1, m2); // the stream moved on
  mgsrt_ctx_set_rng_state(ctx, start);
  void *b3[] = {x.data(), y3.data(), m3.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, b3));
  EXPECT_EQ(m1, m3);
  EXPECT_EQ(y1, y3);
  // Another context with the same seed draws the same mask.
  Ctx other(5);
  std::vector<float> y4(n);
  std::vector<uint8_t> m4(n);
  void *b4[] = {x.data(), y4.data(), nullptr};
  ASSERT_OK(other, mgsrt_dropout_fwd(other, desc, b4));
  EXPECT_EQ(y1, y4);
}

TEST(DropoutTest, InferenceAndEdgeRatios) {
  Ctx ctx(9);
  const int64_t n = 100;
  std::vector<float> x = randomVec(n), y(n);
  std::vector<uint8_t> mask(n, 0);
  const uint64_t start = mgsrt_ctx_rng_state(ctx);
  const int64_t inference[] = {n, bits(0.5), 0, 1};
  void *bufs[] = {x.data(), y.data(), mask.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, inference, bufs));
  EXPECT_EQ(y, x);
  EXPECT_EQ(mask, std::vector<uint8_t>(n, 1));
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), start);

  const int64_t keepAll[] = {n, bits(0.0), 1, 1};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, keepAll, bufs));
  EXPECT_EQ(y, x);
  const int64_t dropAll[] = {n, bits(1.0), 1, 1};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, dropAll, bufs));
  EXPECT_EQ(y, std::vector<float>(n, 0.0f));
  EXPECT_EQ(mask, std::vector<uint8_t>(n, 0));
  std::vector<float> dy = randomVec(n), dx(n, 1.0f);
  void *bb[] = {dy.data(), mask.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_dropout_bwd(ctx, dropAll, bb));
  EXPECT_EQ(dx, std::vector<float>(n, 0.0f)); // no 0 * inf
}

TEST(DropoutTest, BackwardScalesByMask) {
  Ctx ctx(3);
  const int64_t n = 300;
  const double ratio = 0.25;
  std::vector<float> x = randomVec(n), y(n), dy = randomVec(n), dx(n);
  std::vector<uint8_t> mask(n);
  const int64_t desc[] = {n, bits(ratio), 1, 1};
  void *fb[] = {x.data(), y.data(), mask.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, fb));
  void *bb[] = {dy.data(), mask.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_dropout_bwd(ctx, desc, bb));
  const float scale = static_cast<float>(1.0 / (1.0 - ratio));
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(dx[i], mask[i] ? dy[i] * scale : 0.0f);
}

// Stochastic depth: one draw a sample, kept or dropped whole; the stream
// advances by one draw a sample; backward follows the same mask.
TEST(DropoutTest, OneMaskEntryPerBlock) {
  Ctx ctx(41);
  const int64_t samples = 64, inner = 3 * 5;
  const int64_t n = samples * inner;
  const double ratio = 0.4;
  std::vector<float> x = randomVec(n), y(n), dy = randomVec(n), dx(n);
  std::vector<uint8_t> mask(samples, 7);
  const int64_t desc[] = {n, bits(ratio), 1, inner};
  void *fb[] = {x.data(), y.data(), mask.data()};
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, desc, fb));
  uint64_t state = 41;
  const float scale = static_cast<float>(1.0 / (1.0 - ratio));
  int64_t kept = 0;
  for (int64_t m = 0; m < samples; ++m) {
    float u = static_cast<float>(splitmix64(state) >> 40) * (1.0f / 16777216.0f);
    bool keep = u >= ratio;
    ASSERT_EQ(mask[m], keep ? 1 : 0) << m;
    for (int64_t j = m * inner; j < (m + 1) * inner; ++j)
      ASSERT_EQ(y[j], keep ? x[j] * scale : 0.0f) << j;
    kept += keep;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, samples);
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), state); // advanced by one draw a sample
  void *bb[] = {dy.data(), mask.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_dropout_bwd(ctx, desc, bb));
  for (int64_t j = 0; j < n; ++j)
    ASSERT_EQ(dx[j], mask[j / inner] ? dy[j] * scale : 0.0f) << j;
  // Inference: the input, a mask of ones, the stream untouched.
  const int64_t inference[] = {n, bits(ratio), 0, inner};
  std::fill(mask.begin(), mask.end(), 0);
  ASSERT_OK(ctx, mgsrt_dropout_fwd(ctx, inference, fb));
  EXPECT_EQ(y, x);
  EXPECT_EQ(mask, std::vector<uint8_t>(samples, 1));
  EXPECT_EQ(mgsrt_ctx_rng_state(ctx), state);
}

//===----------------------------------------------------------------------===//
// Copy, zero, accumulate
//===----------------------------------------------------------------------===//

TEST(CopyTest, CopyZeroAccumulate) {
  Ctx ctx;
  for (int64_t n : {int64_t{0}, int64_t{7}, int64_t{3000000}}) {
    std::vector<float> x = randomVec(n), y(n, 5.0f), z = randomVec(n);
    const int64_t desc[] = {n};
    void *cb[] = {x.data(), y.data()};
    ASSERT_OK(ctx, mgsrt_copy(ctx, desc, cb));
    EXPECT_EQ(y, x);
    void *zb[] = {y.data()};
    ASSERT_OK(ctx, mgsrt_zero(ctx, desc, zb));
    EXPECT_EQ(y, std::vector<float>(n, 0.0f));
    std::vector<float> sum(n);
    void *ab[] = {x.data(), z.data(), sum.data()};
    ASSERT_OK(ctx, mgsrt_accumulate(ctx, desc, ab));
    for (int64_t i = 0; i < std::min<int64_t>(n, 1000); ++i)
      ASSERT_EQ(sum[i], x[i] + z[i]);
    // In place: y aliases a.
    void *inplace[] = {x.data(), z.data(), x.data()};
    ASSERT_OK(ctx, mgsrt_accumulate(ctx, desc, inplace));
    EXPECT_EQ(x, sum);
  }
}

//===----------------------------------------------------------------------===//
// SGD
//===----------------------------------------------------------------------===//

TEST(SgdTest, MatchesTorchOptimSgd) {
  // torch.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01), three
  // steps with the gradients below; expected values computed by hand:
  //   step 1: d = g + 0.01 p; buf = d;            p -= 0.1 buf
  //   step k: d = g + 0.01 p; buf = 0.9 buf + d;  p -= 0.1 buf
  Ctx ctx;
  mgsrt_ctx_set_sgd(ctx, 0.1f, 0.9f, 0.01f);
  std::vector<float> p = {1.0f, -2.0f}, v = {0.0f, 0.0f};
  const float grads[3][2] = {{0.5f, -1.0f}, {0.25f, 0.5f}, {-1.0f, 2.0f}};
  const int64_t desc[] = {2};
  // p0 = 1:  d = 0.51,   buf = 0.51,     p = 0.949
  //          d = 0.25949, buf = 0.71849, p = 0.877151
  //          d = -0.99122849, buf = -0.34458749, p = 0.911609749
  // p1 = -2: d = -1.02,  buf = -1.02,    p = -1.898
  //          d = 0.48102, buf = -0.43698, p = -1.854302
  //          d = 1.98145698, buf = 1.58817498, p = -2.013119498
  const double want[3][2] = {{0.949, -1.898},
                             {0.877151, -1.854302},
                             {0.911609749, -2.013119498}};
  const double wantV[3][2] = {{0.51, -1.02}, {0.71849, -0.43698}, {-0.34458749, 1.58817498}};
  for (int step = 0; step < 3; ++step) {
    std::vector<float> g = {grads[step][0], grads[step][1]};
    void *bufs[] = {p.data(), g.data(), v.data()};
    ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, bufs));
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(p[i], want[step][i], 1e-6) << "step " << step << " p[" << i << "]";
      EXPECT_NEAR(v[i], wantV[step][i], 1e-6) << "step " << step << " v[" << i << "]";
    }
  }
}

TEST(SgdTest, PlainSgdWithoutMomentum) {
  Ctx ctx;
  mgsrt_ctx_set_sgd(ctx, 0.5f, 0.0f, 0.0f);
  const int64_t n = 100000;
  std::vector<float> p = randomVec(n), g = randomVec(n), v(n, 0.0f), p0 = p;
  const int64_t desc[] = {n};
  void *bufs[] = {p.data(), g.data(), v.data()};
  ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, bufs));
  for (int64_t i = 0; i < n; i += 997)
    ASSERT_FLOAT_EQ(p[i], p0[i] - 0.5f * g[i]);
}

// The update notes a gradient holding NaN or infinity (large ones are read
// in parallel) and names the first param; finite gradients leave no note.
TEST(SgdTest, NotesNonfiniteGradients) {
  Ctx ctx;
  mgsrt_ctx_set_sgd(ctx, 0.1f, 0.0f, 0.0f);
  const int64_t n = 100000;
  std::vector<float> p1 = randomVec(n), p2 = randomVec(n), g = randomVec(n), v(n, 0.0f);
  const int64_t desc[] = {n};
  void *finite[] = {p1.data(), g.data(), v.data()};
  ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, finite));
  const void *first = &ctx;
  EXPECT_EQ(mgsrt_ctx_take_nonfinite(ctx, &first), 0);
  EXPECT_EQ(first, nullptr);
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    g[n - 3] = bad;
    void *b1[] = {p1.data(), g.data(), v.data()};
    void *b2[] = {p2.data(), g.data(), v.data()};
    ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, b2));
    ASSERT_OK(ctx, mgsrt_sgd_update(ctx, desc, b1));
    EXPECT_EQ(mgsrt_ctx_take_nonfinite(ctx, &first), 2) << bad;
    EXPECT_EQ(first, p2.data()) << bad;
    EXPECT_EQ(mgsrt_ctx_take_nonfinite(ctx, nullptr), 0) << bad; // taken: counting afresh
  }
}

} // namespace
