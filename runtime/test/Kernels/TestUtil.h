//===- TestUtil.h - Helpers of the kernel tests ----------------*- C++ -*-===//

#ifndef MGSRT_TEST_KERNELS_TESTUTIL_H
#define MGSRT_TEST_KERNELS_TESTUTIL_H

#include "mgsrt/contract.h"
#include "mgsrt/mgsrt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mgsrt_test {

inline int64_t bits(double d) {
  int64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

/// A context that is destroyed at scope end; fails the test on a non-OK
/// status unless told otherwise.
struct Ctx {
  mgsrt_ctx_t *ctx;
  explicit Ctx(uint64_t seed = 1) : ctx(mgsrt_ctx_create(seed)) {}
  ~Ctx() { mgsrt_ctx_destroy(ctx); }
  operator mgsrt_ctx_t *() const { return ctx; }
  std::string message() const { return mgsrt_ctx_message(ctx); }
};

#define EXPECT_OK(ctx, call)                                                             \
  do {                                                                                   \
    mgsrt_status_t st_ = (call);                                                         \
    EXPECT_EQ(st_, MGSRT_OK) << mgsrt_ctx_message(ctx);                                  \
  } while (0)

#define ASSERT_OK(ctx, call)                                                             \
  do {                                                                                   \
    mgsrt_status_t st_ = (call);                                                         \
    ASSERT_EQ(st_, MGSRT_OK) << mgsrt_ctx_message(ctx);                                  \
  } while (0)

/// x rounded to the nearest bfloat16 (ties to even), as a float (finite x).
inline float roundBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
inline std::vector<float> roundBf16(std::vector<float> v) {
  for (float &x : v)
    x = roundBf16(x);
  return v;
}

/// x rounded to the nearest IEEE half (ties to even), as a float: the
/// compiler's own conversion (F16C or libgcc's), not the runtime's.
inline float roundHalf(float x) { return static_cast<float>(static_cast<_Float16>(x)); }
inline std::vector<float> roundHalf(std::vector<float> v) {
  for (float &x : v)
    x = roundHalf(x);
  return v;
}

/// A reduced precision of the tests: its descriptor value, the rounding of
/// an operand (the reference), and a difference that shows it was applied.
struct RoundedPrecision {
  int64_t precision;
  std::vector<float> (*round)(std::vector<float>);
  double showsRounding;
};
inline const RoundedPrecision kBf16{MGSRT_PRECISION_BF16, roundBf16, 1e-4};
inline const RoundedPrecision kF16{MGSRT_PRECISION_F16, roundHalf, 1e-5};

/// A gemm, matmul or conv descriptor (whose last field is the precision) in
/// `precision` (bfloat16 by default).
inline std::vector<int64_t> bf16Desc(std::vector<int64_t> desc,
                                     int64_t precision = MGSRT_PRECISION_BF16) {
  desc.back() = precision;
  return desc;
}

/// The largest |a_i - b_i|.
inline double maxAbsDiff(const std::vector<float> &a, const std::vector<float> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

inline std::mt19937_64 &rng() {
  static std::mt19937_64 gen(12345);
  return gen;
}

inline std::vector<float> randomVec(int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = dist(rng());
  return v;
}

/// Values that are pairwise at least `gap` apart (shuffled multiples), so
/// max-style kernels have no near-ties under finite differences.
inline std::vector<float> distinctVec(int64_t n, float gap = 0.05f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = (static_cast<float>(i) - n / 2.0f) * gap;
  std::shuffle(v.begin(), v.end(), rng());
  return v;
}

/// Values in [-1, 1] at least `margin` away from zero (for relu-like kinks).
inline std::vector<float> awayFromZero(int64_t n, float margin = 0.1f) {
  std::vector<float> v = randomVec(n, margin, 1.0f);
  std::bernoulli_distribution sign(0.5);
  for (auto &x : v)
    if (sign(rng()))
      x = -x;
  return v;
}

inline int64_t product(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// A reduce_fwd / reduce_bwd descriptor: input and output extents, scale.
inline std::vector<int64_t> reduceDesc(const std::vector<int64_t> &in,
                                       const std::vector<int64_t> &out, double scale) {
  using F = mgs::contract::ReduceDesc;
  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> d(F::size(r));
  d[F::Rank] = r;
  d[F::ScaleBits] = bits(scale);
  for (int64_t i = 0; i < r; ++i) {
    d[F::at(F::In, r) + i] = in[i];
    d[F::at(F::Out, r) + i] = out[i];
  }
  return d;
}

/// A gelu_fwd / gelu_bwd descriptor: n elements, MGSRT_GELU_NONE or _TANH.
inline std::vector<int64_t> geluDesc(int64_t n, int64_t approximate) {
  using F = mgs::contract::GeluDesc;
  std::vector<int64_t> d(F::Size);
  d[F::Count] = n;
  d[F::Approximate] = approximate;
  return d;
}

/// A cumsum descriptor: outer x len x inner, exclusive and reverse 0 or 1.
inline std::vector<int64_t> cumSumDesc(int64_t outer, int64_t len, int64_t inner,
                                       int64_t exclusive, int64_t reverse) {
  using F = mgs::contract::CumSumDesc;
  std::vector<int64_t> d(F::Size);
  d[F::Outer] = outer;
  d[F::Len] = len;
  d[F::Inner] = inner;
  d[F::Exclusive] = exclusive;
  d[F::Reverse] = reverse;
  return d;
}

inline std::vector<int64_t> topKPositionsDesc(int64_t rows, int64_t len, int64_t k, int64_t largest) {
  using F = mgs::contract::TopKPositionsDesc;
  std::vector<int64_t> d(F::Size);
  d[F::Rows] = rows;
  d[F::Len] = len;
  d[F::K] = k;
  d[F::Largest] = largest;
  return d;
}

/// |got - want| <= atol + rtol * |want|, elementwise.
template <typename A, typename B>
void expectClose(const A &got, const B &want, double rtol, double atol,
                 const std::string &what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok = std::abs(g - w) <= atol + rtol * std::abs(w) || (std::isnan(g) && std::isnan(w));
    if (!ok && reported++ < 8)
      ADD_FAILURE() << what << " [" << i << "]: got " << g << ", want " << w;
  }
}

/// Central finite differences of L(x) = sum_i w_i * f()_i with respect to
/// every element of `x` (f reads `x`). Steps are measured on the floats
/// actually stored.
inline std::vector<double> numericGrad(std::vector<float> &x, const std::vector<float> &w,
                                       const std::function<std::vector<float>()> &f,
                                       double h) {
  auto loss = [&] {
    std::vector<float> y = f();
    double l = 0.0;
    for (size_t i = 0; i < y.size(); ++i)
      l += static_cast<double>(w[i]) * y[i];
    return l;
  };
  std::vector<double> g(x.size());
  for (size_t j = 0; j < x.size(); ++j) {
    const float orig = x[j];
    const float xp = static_cast<float>(orig + h), xm = static_cast<float>(orig - h);
    x[j] = xp;
    double lp = loss();
    x[j] = xm;
    double lm = loss();
    x[j] = orig;
    g[j] = (lp - lm) / (static_cast<double>(xp) - static_cast<double>(xm));
  }
  return g;
}

/// Checks an analytic gradient against finite differences, relative to the
/// largest gradient magnitude.
template <typename A>
void expectGradClose(const A &analytic, const std::vector<double> &numeric, double rtol,
                     const std::string &what) {
  double scale = 1e-3;
  for (double v : numeric)
    scale = std::max(scale, std::abs(v));
  expectClose(analytic, numeric, rtol, rtol * scale, what);
}

/// Checks `analytic` (the gradient of sum_i w_i * f()_i with respect to x)
/// against central differences with step h at up to `maxPoints` elements of
/// x (evenly spread when x is larger), relative to the largest magnitude.
template <typename A>
void checkGrad(const A &analytic, std::vector<float> &x, const std::vector<float> &w,
               const std::function<std::vector<float>()> &f, double h, double rtol,
               const std::string &what, size_t maxPoints = 48) {
  ASSERT_EQ(analytic.size(), x.size()) << what;
  std::vector<size_t> points;
  if (x.size() <= maxPoints) {
    for (size_t j = 0; j < x.size(); ++j)
      points.push_back(j);
  } else {
    for (size_t k = 0; k < maxPoints; ++k)
      points.push_back(k * (x.size() - 1) / (maxPoints - 1));
  }
  std::vector<double> numeric;
  std::vector<double> got;
  double scale = 1e-3;
  for (size_t i = 0; i < analytic.size(); ++i)
    scale = std::max(scale, std::abs(static_cast<double>(analytic[i])));
  auto loss = [&] {
    std::vector<float> y = f();
    double l = 0.0;
    for (size_t i = 0; i < y.size(); ++i)
      l += static_cast<double>(w[i]) * y[i];
    return l;
  };
  for (size_t j : points) {
    const float orig = x[j];
    const float xp = static_cast<float>(orig + h), xm = static_cast<float>(orig - h);
    x[j] = xp;
    double lp = loss();
    x[j] = xm;
    double lm = loss();
    x[j] = orig;
    numeric.push_back((lp - lm) / (static_cast<double>(xp) - static_cast<double>(xm)));
    got.push_back(analytic[j]);
  }
  expectClose(got, numeric, rtol, rtol * scale, what + " (finite differences)");
}

/// Row-major strides of a shape.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims) {
  std::vector<int64_t> s(dims.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

/// Decomposes a flat index into a multi-index.
inline std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &dims) {
  std::vector<int64_t> idx(dims.size());
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    idx[i] = dims[i] ? flat % dims[i] : 0;
    flat = dims[i] ? flat / dims[i] : 0;
  }
  return idx;
}

inline std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// splitmix64, as the contract specifies for the dropout stream.
inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

} // namespace mgsrt_test

#endif // MGSRT_TEST_KERNELS_TESTUTIL_H
