//===- TopKTest.cpp - topk_sparsify and scatter_add against references ----===//
//
// The reference selects with std::partial_sort under the contract's order
// (larger |acc| first, NaN above everything and NaNs tied, ties to the lower
// index). Every comparison is bit for bit. Each case runs under both
// algorithms of the kernel (MGSRT_TOPK_ALGORITHM=sample|radix) and the
// automatic choice.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <climits>
#include <cstdlib>
#include <limits>
#include <numeric>

using namespace mgsrt_test;

namespace {

uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// Sets MGSRT_TOPK_ALGORITHM for a scope ("" leaves it unset).
struct AlgorithmScope {
  explicit AlgorithmScope(const std::string &name) {
    if (name.empty())
      unsetenv("MGSRT_TOPK_ALGORITHM");
    else
      setenv("MGSRT_TOPK_ALGORITHM", name.c_str(), 1);
  }
  ~AlgorithmScope() { unsetenv("MGSRT_TOPK_ALGORITHM"); }
};

const char *const kAlgorithms[] = {"", "sample", "radix"};

struct TopKResult {
  std::vector<float> values;
  std::vector<int32_t> indices;
  std::vector<float> residual;
};

/// The contract's order: does acc[a] rank before acc[b]?
bool ranksBefore(const std::vector<float> &acc, int64_t a, int64_t b) {
  const bool nanA = std::isnan(acc[a]), nanB = std::isnan(acc[b]);
  if (nanA != nanB)
    return nanA;
  if (!nanA) {
    const float ma = std::fabs(acc[a]), mb = std::fabs(acc[b]);
    if (ma != mb)
      return ma > mb;
  }
  return a < b;
}

TopKResult reference(const std::vector<float> &grad, const std::vector<float> &residual,
                     int64_t k) {
  const int64_t n = grad.size();
  std::vector<float> acc(n);
  for (int64_t i = 0; i < n; ++i)
    acc[i] = grad[i] + residual[i];
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t a, int64_t b) { return ranksBefore(acc, a, b); });
  order.resize(k);
  std::sort(order.begin(), order.end());
  TopKResult r;
  r.residual = acc;
  for (int64_t i : order) {
    r.values.push_back(acc[i]);
    r.indices.push_back(static_cast<int32_t>(i));
    r.residual[i] = 0.0f;
  }
  return r;
}

TopKResult runTopK(mgsrt_ctx_t *ctx, const std::vector<float> &grad,
                   const std::vector<float> &residual, int64_t k) {
  TopKResult r;
  r.residual = residual;
  r.values.assign(k, -7.0f);
  r.indices.assign(k, -1);
  const int64_t desc[] = {static_cast<int64_t>(grad.size()), k};
  void *bufs[] = {const_cast<float *>(grad.data()), r.residual.data(), r.values.data(),
                  r.indices.data()};
  EXPECT_OK(ctx, mgsrt_topk_sparsify(ctx, desc, bufs));
  return r;
}

/// Bitwise equality of two float vectors; reports the first few differences.
void expectBitwise(const std::vector<float> &got, const std::vector<float> &want,
                   const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (bitsOf(got[i]) != bitsOf(want[i]) && reported++ < 5)
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << " (0x" << std::hex
                    << bitsOf(got[i]) << "), want " << want[i] << " (0x" << bitsOf(want[i])
                    << std::dec << ")";
}

/// The result against the reference, plus the error-feedback invariant: the
/// values put back at their indices over the new residual give acc exactly.
void checkCase(const std::vector<float> &grad, const std::vector<float> &residual, int64_t k,
               const std::string &what) {
  const TopKResult want = reference(grad, residual, k);
  for (const char *algorithm : kAlgorithms) {
    AlgorithmScope scope(algorithm);
    const std::string tag = what + " algorithm=" + (*algorithm ? algorithm : "auto");
    Ctx ctx;
    const TopKResult got = runTopK(ctx, grad, residual, k);
    EXPECT_EQ(got.indices, want.indices) << tag;
    expectBitwise(got.values, want.values, tag + " values");
    expectBitwise(got.residual, want.residual, tag + " residual");
    std::vector<float> rebuilt = got.residual;
    for (int64_t j = 0; j < k && j < static_cast<int64_t>(got.indices.size()); ++j) {
      const int32_t i = got.indices[j];
      ASSERT_TRUE(i >= 0 && i < static_cast<int32_t>(grad.size())) << tag;
      EXPECT_EQ(bitsOf(got.residual[i]), 0u) << tag << ": residual at a selected index";
      rebuilt[i] = got.values[j];
    }
    std::vector<float> acc(grad.size());
    for (size_t i = 0; i < grad.size(); ++i)
      acc[i] = grad[i] + residual[i];
    expectBitwise(rebuilt, acc, tag + " values scattered back + residual vs grad + residual");
    if (::testing::Test::HasFailure())
      return;
  }
}

enum class Dist { Uniform, SmallIntegers, MostlyZero, Layered, Special };

std::vector<float> generate(Dist dist, int64_t n) {
  std::vector<float> v(n);
  auto &g = rng();
  switch (dist) {
  case Dist::Uniform:
    v = randomVec(n, -1.0f, 1.0f);
    break;
  case Dist::SmallIntegers: { // many ties, zeros, both signs
    std::uniform_int_distribution<int> d(-3, 3);
    for (auto &x : v)
      x = static_cast<float>(d(g));
    break;
  }
  case Dist::MostlyZero: {
    std::bernoulli_distribution nz(0.01);
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (auto &x : v)
      x = nz(g) ? d(g) : (nz(g) ? -0.0f : 0.0f);
    break;
  }
  case Dist::Layered: { // layers of very different scales, like a model's gradient
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::uniform_real_distribution<float> logScale(-6.0f, 1.0f);
    std::uniform_int_distribution<int64_t> layer(1, std::max<int64_t>(1, n / 7));
    int64_t i = 0;
    while (i < n) {
      const int64_t len = std::min(n - i, layer(g));
      const float scale = std::pow(10.0f, logScale(g));
      for (int64_t j = 0; j < len; ++j)
        v[i + j] = scale * d(g);
      i += len;
    }
    break;
  }
  case Dist::Special: { // denormals, infinities, NaNs (several payloads), signed zeros
    const float specials[] = {std::numeric_limits<float>::denorm_min(),
                              -std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              floatOf(0x7fc00000u),
                              floatOf(0xffc00001u),
                              floatOf(0x7f800123u),
                              0.0f,
                              -0.0f,
                              std::numeric_limits<float>::max(),
                              1.0f,
                              -1.0f};
    std::uniform_int_distribution<int> pick(0, 11);
    std::bernoulli_distribution special(0.05);
    v = randomVec(n, -2.0f, 2.0f);
    for (auto &x : v)
      if (special(g))
        x = specials[pick(g)];
    break;
  }
  }
  return v;
}

const char *distName(Dist d) {
  switch (d) {
  case Dist::Uniform:
    return "uniform";
  case Dist::SmallIntegers:
    return "small-integers";
  case Dist::MostlyZero:
    return "mostly-zero";
  case Dist::Layered:
    return "layered";
  case Dist::Special:
    return "special";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// topk_sparsify
//===----------------------------------------------------------------------===//

TEST(TopKTest, MatchesReferenceOnRandomSizes) {
  const Dist dists[] = {Dist::Uniform, Dist::SmallIntegers, Dist::MostlyZero, Dist::Layered,
                        Dist::Special};
  std::uniform_int_distribution<int64_t> smallN(1, 3000);
  for (int iter = 0; iter < 150; ++iter) {
    const int64_t n = smallN(rng());
    int64_t k;
    switch (iter % 5) {
    case 0:
      k = 1;
      break;
    case 1:
      k = n;
      break;
    case 2:
      k = std::max<int64_t>(1, n / 1000);
      break;
    default:
      k = std::uniform_int_distribution<int64_t>(1, n)(rng());
      break;
    }
    const Dist dist = dists[iter % 5 == 4 ? iter / 5 % 5 : (iter / 5 + iter) % 5];
    std::vector<float> grad = generate(dist, n);
    std::vector<float> residual =
        iter % 3 == 0 ? std::vector<float>(n, 0.0f) : generate(Dist::Uniform, n);
    checkCase(grad, residual, k,
              "n=" + std::to_string(n) + " k=" + std::to_string(k) + " " + distName(dist));
    if (HasFailure())
      return;
  }
}

TEST(TopKTest, MatchesReferenceOnLargeSizes) {
  // Sizes where the sample algorithm is the automatic choice, k = 0.1% and
  // 1%, and k = n / 32 (its limit), and sizes around the parallel blocks.
  struct Case {
    int64_t n, k;
    Dist dist;
  };
  const Case cases[] = {
      {(1 << 20) + 17, 1048, Dist::Layered},   {(1 << 20) + 17, 10000, Dist::Uniform},
      {300001, 300001 / 32, Dist::Layered},    {65536, 65, Dist::Uniform},
      {200000, 200, Dist::SmallIntegers},      {200000, 2000, Dist::MostlyZero},
      {250000, 250, Dist::Special},            {131072 * 3 + 5, 393, Dist::Layered},
  };
  for (const Case &c : cases) {
    std::vector<float> grad = generate(c.dist, c.n);
    std::vector<float> residual = generate(Dist::Layered, c.n);
    for (auto &r : residual)
      r *= 0.5f;
    checkCase(grad, residual, c.k,
              "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " " + distName(c.dist));
    if (HasFailure())
      return;
  }
}

// A density warm-up (mgsrt_ctx_set_density): the exchange compiled for k
// sends k_eff = min(k, max(1, floor(rho * n))) entries; the rest of the
// values/indices buffers is left alone, and scatter-add reads P * k_eff.
TEST(TopKTest, DensityWarmUpSendsFewerEntries) {
  Ctx ctx;
  const int64_t n = 1000, k = 100;
  std::vector<float> grad(n), residual(n, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    grad[i] = static_cast<float>((i * 37) % n) - 500.0f; // distinct magnitudes but a tie pair
  std::vector<float> values(k, -7.0f);
  std::vector<int32_t> indices(k, -1);
  mgsrt_ctx_set_density(ctx, 0.01); // k_eff = 10
  const int64_t desc[2] = {n, k};
  void *bufs[4] = {grad.data(), residual.data(), values.data(), indices.data()};
  ASSERT_OK(ctx, mgsrt_topk_sparsify(ctx, desc, bufs));
  // The same 10 as a top-10 compiled for exactly k = 10.
  Ctx plain;
  std::vector<float> residual10(n, 0.0f), values10(10);
  std::vector<int32_t> indices10(10);
  const int64_t desc10[2] = {n, 10};
  void *bufs10[4] = {grad.data(), residual10.data(), values10.data(), indices10.data()};
  ASSERT_OK(plain, mgsrt_topk_sparsify(plain, desc10, bufs10));
  for (int64_t j = 0; j < 10; ++j) {
    EXPECT_EQ(indices[j], indices10[j]) << j;
    EXPECT_EQ(values[j], values10[j]) << j;
  }
  for (int64_t j = 10; j < k; ++j) {
    EXPECT_EQ(indices[j], -1) << j; // untouched
    EXPECT_EQ(values[j], -7.0f) << j;
  }
  EXPECT_EQ(residual, residual10);
  // Scatter-add of two workers' 10 (packed at r * k_eff), as compiled for k = 100.
  std::vector<float> gathered(2 * k, 0.0f);
  std::vector<int32_t> gatheredIdx(2 * k, 0);
  for (int r = 0; r < 2; ++r)
    for (int64_t j = 0; j < 10; ++j) {
      gathered[r * 10 + j] = values[j];
      gatheredIdx[r * 10 + j] = indices[j];
    }
  for (int64_t j = 20; j < 2 * k; ++j)
    gatheredIdx[j] = -5; // out of range: read only if k_eff were ignored
  std::vector<float> out(n);
  const int64_t sdesc[3] = {n, k, 2};
  void *sbufs[3] = {gathered.data(), gatheredIdx.data(), out.data()};
  ASSERT_OK(ctx, mgsrt_scatter_add(ctx, sdesc, sbufs));
  for (int64_t j = 0; j < 10; ++j)
    EXPECT_EQ(out[indices[j]], values[j]) << j;
  // Off again: the compiled k.
  mgsrt_ctx_set_density(ctx, 0);
  std::fill(residual.begin(), residual.end(), 0.0f);
  ASSERT_OK(ctx, mgsrt_topk_sparsify(ctx, desc, bufs));
  EXPECT_NE(indices[k - 1], -1);
}

TEST(TopKTest, TiesGoToTheLowerIndex) {
  // Equal magnitudes everywhere (both signs): the first k indices win. At
  // this size the sample finds every entry a candidate and falls back.
  for (int64_t n : {int64_t(10), int64_t(100000)}) {
    std::vector<float> grad(n), residual(n, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      grad[i] = i % 2 ? -0.5f : 0.5f;
    for (int64_t k : {int64_t(1), n / 40 + 1, n / 2, n}) {
      checkCase(grad, residual, k, "equal n=" + std::to_string(n) + " k=" + std::to_string(k));
      Ctx ctx;
      TopKResult got = runTopK(ctx, grad, residual, k);
      for (int64_t j = 0; j < k; ++j)
        ASSERT_EQ(got.indices[j], j);
    }
  }
  // A tie straddling the threshold: 3 entries above, 5 tied at the k-th value.
  std::vector<float> grad = {0.1f, 2.0f, -1.0f, 0.0f, 1.0f, 3.0f, -1.0f, 1.0f, 4.0f, -1.0f, 0.5f};
  std::vector<float> zero(grad.size(), 0.0f);
  Ctx ctx;
  TopKResult got = runTopK(ctx, grad, zero, 5);
  EXPECT_EQ(got.indices, (std::vector<int32_t>{1, 2, 4, 5, 8}));
  checkCase(grad, zero, 5, "straddling tie");
}

TEST(TopKTest, AllZeroTakesTheFirstIndices) {
  std::vector<float> grad(70000, 0.0f), residual(70000, -0.0f);
  grad[5] = -0.0f;
  checkCase(grad, residual, 100, "all zero");
  Ctx ctx;
  TopKResult got = runTopK(ctx, grad, residual, 100);
  for (int j = 0; j < 100; ++j)
    EXPECT_EQ(got.indices[j], j);
}

TEST(TopKTest, NaNRanksAboveInfinityAndNaNsTie) {
  // The policy: NaN (either sign, any payload) counts as larger than +-inf;
  // NaNs tie with each other (lower index first); values keep their bits.
  const float nanA = floatOf(0x7fc00000u), nanB = floatOf(0xffc01234u);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> grad = {1.0f, nanA, -inf, 2.0f, nanB, 0.0f, inf, nanA};
  std::vector<float> zero(grad.size(), 0.0f);
  Ctx ctx;
  TopKResult got = runTopK(ctx, grad, zero, 3);
  EXPECT_EQ(got.indices, (std::vector<int32_t>{1, 4, 7}));
  EXPECT_EQ(bitsOf(got.values[0]), 0x7fc00000u);
  EXPECT_EQ(bitsOf(got.values[1]), 0xffc01234u);
  TopKResult four = runTopK(ctx, grad, zero, 4);
  EXPECT_EQ(four.indices, (std::vector<int32_t>{1, 2, 4, 7})); // -inf (index 2) before +inf (6)
  checkCase(grad, zero, 4, "nan");
  // A NaN that only appears in grad + residual (inf + -inf).
  std::vector<float> g2 = {1.0f, inf, 3.0f}, r2 = {0.0f, -inf, 0.0f};
  TopKResult got2 = runTopK(ctx, g2, r2, 1);
  EXPECT_EQ(got2.indices, (std::vector<int32_t>{1}));
  EXPECT_TRUE(std::isnan(got2.values[0]));
}

TEST(TopKTest, ErrorFeedbackConservesTheGradientOverSteps) {
  // Small integers keep every sum exact: over several steps, everything sent
  // plus the final residual equals the sum of the gradients.
  const int64_t n = 5000, k = 50;
  std::vector<float> residual(n, 0.0f), sent(n, 0.0f), total(n, 0.0f);
  Ctx ctx;
  for (int step = 0; step < 20; ++step) {
    std::vector<float> grad = generate(Dist::SmallIntegers, n);
    for (int64_t i = 0; i < n; ++i)
      total[i] += grad[i];
    TopKResult r = runTopK(ctx, grad, residual, k);
    residual = r.residual;
    for (int64_t j = 0; j < k; ++j)
      sent[r.indices[j]] += r.values[j];
  }
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(sent[i] + residual[i], total[i]) << i;
}

TEST(TopKTest, OneDescriptorManySizes) {
  // The per-call-site scratch is keyed by the descriptor's address; reusing
  // one descriptor for other sizes must not matter.
  Ctx ctx;
  int64_t desc[2];
  for (int64_t n : {int64_t(100000), int64_t(7), int64_t(300000), int64_t(1)}) {
    std::vector<float> grad = generate(Dist::Layered, n), residual(n, 0.0f);
    const int64_t k = std::max<int64_t>(1, n / 500);
    TopKResult want = reference(grad, residual, k);
    std::vector<float> values(k);
    std::vector<int32_t> indices(k);
    desc[0] = n;
    desc[1] = k;
    void *bufs[] = {grad.data(), residual.data(), values.data(), indices.data()};
    ASSERT_OK(ctx, mgsrt_topk_sparsify(ctx, desc, bufs));
    EXPECT_EQ(indices, want.indices) << n;
    expectBitwise(values, want.values, "values");
    expectBitwise(residual, want.residual, "residual");
  }
}

TEST(TopKTest, RejectsBadDescriptorsAndBuffers) {
  std::vector<float> buf(16, 1.0f);
  std::vector<int32_t> idx(16);
  void *bufs[] = {buf.data(), buf.data() + 4, buf.data() + 8, idx.data()};
  struct Bad {
    std::vector<int64_t> desc;
    const char *message;
  };
  const Bad bad[] = {
      {{4, 0}, "topk_sparsify: k = 0 is outside [1, n = 4]"},
      {{4, 5}, "topk_sparsify: k = 5 is outside [1, n = 4]"},
      {{0, 1}, "topk_sparsify: k = 1 is outside [1, n = 0]"},
      {{-3, 1}, "topk_sparsify: element count -3 is negative"},
      {{int64_t(INT32_MAX) + 1, 1}, "topk_sparsify: element count 2147483648 exceeds the int32 index range"},
  };
  for (const Bad &b : bad) {
    Ctx ctx;
    EXPECT_EQ(mgsrt_topk_sparsify(ctx, b.desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), b.message);
  }
  Ctx ctx;
  const int64_t desc[] = {4, 2};
  void *nullResidual[] = {buf.data(), nullptr, buf.data() + 8, idx.data()};
  EXPECT_EQ(mgsrt_topk_sparsify(ctx, desc, nullResidual), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "topk_sparsify: buffer 1 (residual) is null");
  // Sticky: a failed context leaves the buffers alone.
  std::vector<float> before = buf;
  EXPECT_EQ(mgsrt_topk_sparsify(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(buf, before);
}

//===----------------------------------------------------------------------===//
// scatter_add
//===----------------------------------------------------------------------===//

std::vector<float> scatterReference(int64_t n, int64_t P, const std::vector<float> &values,
                                    const std::vector<int32_t> &indices) {
  std::vector<float> out(n, 0.0f);
  for (size_t j = 0; j < values.size(); ++j)
    out[indices[j]] += values[j];
  for (auto &x : out)
    x /= static_cast<float>(P);
  return out;
}

TEST(TopKTest, ScatterAddMatchesReference) {
  struct Case {
    int64_t n, k, P, indexRange;
  };
  const Case cases[] = {
      {1, 1, 1, 1},       {10, 3, 2, 10},         {100, 10, 3, 20},      {1000, 100, 4, 1000},
      {200000, 200, 16, 200000}, {200000, 5000, 5, 3000}, // heavy collisions across ranks
      {300000, 3000, 7, 300000}, {70000, 0, 4, 1},
  };
  for (const Case &c : cases) {
    const int64_t total = c.P * c.k;
    std::vector<float> values = randomVec(total, -3.0f, 3.0f);
    std::vector<int32_t> indices(total);
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(c.indexRange - 1));
    for (auto &i : indices)
      i = pick(rng());
    std::vector<float> out(c.n, 42.0f);
    const int64_t desc[] = {c.n, c.k, c.P};
    void *bufs[] = {values.data(), indices.data(), out.data()};
    Ctx ctx;
    ASSERT_OK(ctx, mgsrt_scatter_add(ctx, desc, bufs));
    expectBitwise(out, scatterReference(c.n, c.P, values, indices),
                  "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                      " P=" + std::to_string(c.P));
  }
}

TEST(TopKTest, SparsifyGatherScatterRoundTrip) {
  // P workers' top-k results, concatenated as an allgather would, scattered
  // and averaged: with k = n it is the dense average.
  const int64_t n = 1000, P = 3;
  std::vector<float> values, expect(n, 0.0f);
  std::vector<int32_t> indices;
  std::vector<std::vector<float>> grads;
  for (int64_t p = 0; p < P; ++p) {
    grads.push_back(generate(Dist::SmallIntegers, n));
    Ctx ctx;
    TopKResult r = runTopK(ctx, grads.back(), std::vector<float>(n, 0.0f), n);
    values.insert(values.end(), r.values.begin(), r.values.end());
    indices.insert(indices.end(), r.indices.begin(), r.indices.end());
  }
  std::vector<float> out(n);
  const int64_t desc[] = {n, n, P};
  void *bufs[] = {values.data(), indices.data(), out.data()};
  Ctx ctx;
  ASSERT_OK(ctx, mgsrt_scatter_add(ctx, desc, bufs));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], (grads[0][i] + grads[1][i] + grads[2][i]) / 3.0f) << i;
}

TEST(TopKTest, ScatterAddRejectsOutOfRangeIndices) {
  std::vector<float> values = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> out(5, 9.0f);
  for (int32_t badIndex : {5, -1}) {
    std::vector<int32_t> indices = {0, 4, 1, badIndex};
    const int64_t desc[] = {5, 2, 2};
    void *bufs[] = {values.data(), indices.data(), out.data()};
    Ctx ctx;
    EXPECT_EQ(mgsrt_scatter_add(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), "scatter_add: index " + std::to_string(badIndex) +
                                 " at position 3 (rank 1, entry 1) is outside [0, 5)");
    EXPECT_EQ(out, std::vector<float>(5, 9.0f)) << "out must be untouched";
  }
  struct Bad {
    std::vector<int64_t> desc;
    const char *message;
  };
  const Bad bad[] = {
      {{-1, 1, 1}, "scatter_add: element count -1 is negative"},
      {{5, -2, 1}, "scatter_add: k = -2 is negative"},
      {{5, 1, 0}, "scatter_add: rank count 0 is not positive"},
      {{5, INT64_MAX / 2, 3}, "scatter_add: P * k overflows (P = 3, k = 4611686018427387903)"},
  };
  std::vector<int32_t> indices = {0, 1, 2, 3};
  void *bufs[] = {values.data(), indices.data(), out.data()};
  for (const Bad &b : bad) {
    Ctx ctx;
    EXPECT_EQ(mgsrt_scatter_add(ctx, b.desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), b.message);
  }
}

} // namespace
