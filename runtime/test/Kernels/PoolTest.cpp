//===- PoolTest.cpp - max / average pooling (ONNX semantics) -------------===//

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

using namespace mgsrt_test;

namespace {

constexpr int64_t kMax = MGSRT_POOL_MAX, kAvg = MGSRT_POOL_AVG;

struct PoolCase {
  int64_t kind, n, c;
  std::vector<int64_t> in, kernel, strides, padsBegin, padsEnd, dilations;
  bool ceil, includePad;
  int64_t storageOrder;

  int64_t s() const { return static_cast<int64_t>(in.size()); }
  std::vector<int64_t> out() const {
    std::vector<int64_t> o(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t span = in[i] + padsBegin[i] + padsEnd[i] - ((kernel[i] - 1) * dilations[i] + 1);
      o[i] = (ceil ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
    }
    return o;
  }
  std::vector<int64_t> desc() const {
    std::vector<int64_t> d = {kind, s(), n, c};
    for (const auto *v : {&in, &kernel}) d.insert(d.end(), v->begin(), v->end());
    auto o = out();
    d.insert(d.end(), o.begin(), o.end());
    for (const auto *v : {&strides, &padsBegin, &padsEnd, &dilations})
      d.insert(d.end(), v->begin(), v->end());
    d.push_back(includePad);
    d.push_back(storageOrder);
    return d;
  }
  int64_t xSize() const { return n * c * product(in); }
  int64_t ySize() const { return n * c * product(out()); }
};

struct PoolRef {
  std::vector<double> y;
  std::vector<int64_t> indices;   // ONNX indices (max)
  std::vector<int64_t> argOffset; // flat row-major input offset of the max, -1 if none
  std::vector<double> divisor;    // average
  std::vector<std::vector<int64_t>> taps; // each window's in-bounds plane offsets, in order
};

/// Straight from the ONNX definition: enumerate every tap of every window.
PoolRef poolRef(const PoolCase &pc, const std::vector<float> &x) {
  const auto out = pc.out();
  const int64_t outPlane = product(out), inPlane = product(pc.in), kPlane = product(pc.kernel);
  PoolRef r;
  r.y.assign(pc.ySize(), 0.0);
  r.indices.assign(pc.ySize(), -1);
  r.argOffset.assign(pc.ySize(), -1);
  r.divisor.assign(pc.ySize(), 0.0);
  r.taps.resize(pc.ySize());
  for (int64_t plane = 0; plane < pc.n * pc.c; ++plane)
    for (int64_t op = 0; op < outPlane; ++op) {
      auto o = unflatten(op, out);
      const int64_t yi = plane * outPlane + op;
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t bestOff = -1, bestCol = -1, inCount = 0, padCount = 0;
      for (int64_t kp = 0; kp < kPlane; ++kp) {
        auto k = unflatten(kp, pc.kernel);
        bool inside = true, insidePadded = true;
        int64_t rowMajor = 0, colMajor = 0, colStride = 1;
        for (int64_t d = 0; d < pc.s(); ++d) {
          int64_t pos = o[d] * pc.strides[d] - pc.padsBegin[d] + k[d] * pc.dilations[d];
          inside &= pos >= 0 && pos < pc.in[d];
          insidePadded &= pos < pc.in[d] + pc.padsEnd[d];
          rowMajor = rowMajor * pc.in[d] + pos;
          colMajor += pos * colStride;
          colStride *= pc.in[d];
        }
        padCount += insidePadded;
        if (!inside)
          continue;
        ++inCount;
        r.taps[yi].push_back(rowMajor);
        double v = x[plane * inPlane + rowMajor];
        sum += v;
        if (bestOff < 0 || v > best) {
          best = v;
          bestOff = rowMajor;
          bestCol = colMajor;
        }
      }
      if (pc.kind == MGSRT_POOL_MAX) {
        r.y[yi] = bestOff >= 0 ? best : 0.0; // an empty window yields 0
        if (bestOff >= 0) {
          r.argOffset[yi] = plane * inPlane + bestOff;
          r.indices[yi] = plane * inPlane + (pc.storageOrder ? bestCol : bestOff);
        }
      } else {
        double div = pc.includePad ? padCount : inCount;
        r.divisor[yi] = div;
        r.y[yi] = div > 0 ? sum / div : 0.0;
      }
    }
  return r;
}

/// dx as the kernels add it up: each window's share in float, the windows in
/// order (plane by plane, row-major), from +0.
std::vector<float> orderedGrad(const PoolCase &pc, const PoolRef &r, const std::vector<float> &dy) {
  std::vector<float> dx(pc.xSize(), 0.0f);
  const int64_t inPlane = product(pc.in), outPlane = product(pc.out());
  for (int64_t i = 0; i < pc.ySize(); ++i) {
    if (pc.kind == kMax) {
      if (r.argOffset[i] >= 0)
        dx[r.argOffset[i]] += dy[i];
    } else if (r.divisor[i] > 0) {
      const float g = static_cast<float>(dy[i] / r.divisor[i]);
      for (int64_t off : r.taps[i])
        dx[(i / outPlane) * inPlane + off] += g;
    }
  }
  return dx;
}

/// Whether got holds want's bits (+0 and -0 differ; NaNs must be the same NaN).
::testing::AssertionResult sameBits(const std::vector<float> &got, const std::vector<float> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values against " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "value " << i << ": " << got[i] << " against "
                                           << want[i] << " (bits differ)";
  return ::testing::AssertionSuccess();
}

/// pc with its first spatial dim grown so that a plane has over 4096
/// positions (the kernel then goes a row at a time, not in blocks of planes).
PoolCase withLargePlanes(PoolCase pc) {
  pc.in[0] *= 4097 / product(pc.in) + 1;
  return pc;
}

/// Values of -1, -0, +0 and 1: ties, and zeros whose sign shows which won.
std::vector<float> signedZeroTies(int64_t n) {
  std::vector<float> x = randomVec(n, -1.5f, 1.5f);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::round(x[i]);
    if (x[i] == 0.0f && i % 2)
      x[i] = -0.0f;
  }
  return x;
}

/// Values of 0, 1 and 2 (the ties a ReLU leaves) with a NaN every 37.
std::vector<float> nanTies(int64_t n) {
  std::vector<float> x = randomVec(n, 0.0f, 3.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = i % 37 == 5 ? std::numeric_limits<float>::quiet_NaN() : std::floor(x[i]);
  return x;
}

/// Runs pc's forward (a max pool's with its indices and without: the kernel
/// then tracks no positions) and backward on x against the reference: each
/// max the bits of the input it picked (which of tied zeros, which NaN),
/// indices and averages exactly, and the gradient bit for bit as adding each
/// window's share in window order gives it.
void expectReferenceBits(const PoolCase &pc, std::vector<float> x) {
  Ctx ctx;
  auto desc = pc.desc();
  const PoolRef ref = poolRef(pc, x);
  std::vector<float> want(pc.ySize());
  for (int64_t i = 0; i < pc.ySize(); ++i)
    want[i] = pc.kind == kMax && ref.argOffset[i] >= 0 ? x[ref.argOffset[i]]
                                                       : static_cast<float>(ref.y[i]);
  for (bool withIndices : {true, false}) {
    if (withIndices && pc.kind != kMax)
      continue;
    std::vector<float> y(pc.ySize());
    std::vector<int64_t> indices(pc.ySize());
    void *fwd[] = {x.data(), y.data(), withIndices ? indices.data() : nullptr};
    ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), fwd));
    EXPECT_TRUE(sameBits(y, want)) << (withIndices ? "with" : "without") << " the indices";
    if (withIndices) {
      EXPECT_EQ(indices, ref.indices);
    }
  }
  std::vector<float> dy = randomVec(pc.ySize()), dx(pc.xSize(), 123.0f);
  void *bwd[] = {x.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_pool_bwd(ctx, desc.data(), bwd));
  EXPECT_TRUE(sameBits(dx, orderedGrad(pc, ref, dy)));
}

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, ForwardMatchesReference) {
  Ctx ctx;
  const PoolCase pc = GetParam();
  auto desc = pc.desc();
  std::vector<float> x = randomVec(pc.xSize()), y(pc.ySize());
  std::vector<int64_t> indices(pc.ySize(), -7);
  void *bufs[] = {x.data(), y.data(), pc.kind == MGSRT_POOL_MAX ? indices.data() : nullptr};
  ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), bufs));
  PoolRef ref = poolRef(pc, x);
  expectClose(y, ref.y, 1e-6, 1e-6, "y");
  if (pc.kind == MGSRT_POOL_MAX) {
    EXPECT_EQ(indices, ref.indices);
  }
  // Without the optional indices.
  std::vector<float> y2(pc.ySize());
  void *noIdx[] = {x.data(), y2.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), noIdx));
  EXPECT_EQ(y2, y);
}

TEST_P(PoolTest, BackwardMatchesReference) {
  Ctx ctx;
  const PoolCase pc = GetParam();
  auto desc = pc.desc();
  std::vector<float> x = distinctVec(pc.xSize(), 0.01f), dy = randomVec(pc.ySize());
  std::vector<float> dx(pc.xSize(), 123.0f);
  void *bufs[] = {x.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_pool_bwd(ctx, desc.data(), bufs));
  PoolRef ref = poolRef(pc, x);
  const auto out = pc.out();
  const int64_t outPlane = product(out), inPlane = product(pc.in);
  std::vector<double> want(pc.xSize(), 0.0);
  for (int64_t yi = 0; yi < pc.ySize(); ++yi) {
    if (pc.kind == MGSRT_POOL_MAX) {
      if (ref.argOffset[yi] >= 0)
        want[ref.argOffset[yi]] += dy[yi];
      continue;
    }
    if (ref.divisor[yi] <= 0)
      continue;
    // Spread over the in-bounds taps.
    const int64_t plane = yi / outPlane;
    auto o = unflatten(yi % outPlane, out);
    for (int64_t kp = 0; kp < product(pc.kernel); ++kp) {
      auto k = unflatten(kp, pc.kernel);
      bool inside = true;
      int64_t off = 0;
      for (int64_t d = 0; d < pc.s(); ++d) {
        int64_t pos = o[d] * pc.strides[d] - pc.padsBegin[d] + k[d] * pc.dilations[d];
        inside &= pos >= 0 && pos < pc.in[d];
        off = off * pc.in[d] + pos;
      }
      if (inside)
        want[plane * inPlane + off] += dy[yi] / ref.divisor[yi];
    }
  }
  expectClose(dx, want, 1e-5, 1e-6, "dx");
}

TEST_P(PoolTest, BlocksAndRowRunsGiveTheOrderedBits) {
  // Each case as it is (planes of up to 4096 positions go in blocks of 16
  // planes) and with planes past that (a row at a time): the reference's
  // maxima (which of two tied zeros included), indices and averages, and
  // the gradient as adding each window's share in window order gives it,
  // bit for bit.
  for (bool large : {false, true}) {
    const PoolCase pc = large ? withLargePlanes(GetParam()) : GetParam();
    SCOPED_TRACE(large ? "planes of over 4096 positions" : "the case's own planes");
    expectReferenceBits(pc, signedZeroTies(pc.xSize()));
  }
}

TEST_P(PoolTest, BackwardMatchesFiniteDifferences) {
  const PoolCase pc = GetParam();
  Ctx ctx;
  auto desc = pc.desc();
  // Distinct values keep max windows away from ties under the step; averages
  // take small values so rounding stays below the step's effect.
  std::vector<float> x = pc.kind == MGSRT_POOL_MAX ? distinctVec(pc.xSize(), 0.05f)
                                                   : randomVec(pc.xSize()),
                     dy = randomVec(pc.ySize()), dx(pc.xSize());
  auto fwd = [&] {
    std::vector<float> y(pc.ySize());
    void *bufs[] = {x.data(), y.data(), nullptr};
    EXPECT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), bufs));
    return y;
  };
  void *bufs[] = {x.data(), dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_pool_bwd(ctx, desc.data(), bufs));
  checkGrad(dx, x, dy, fwd, 0.01, 2e-3, "dx");
}


INSTANTIATE_TEST_SUITE_P(
    Shapes, PoolTest,
    ::testing::Values(
        // kind, n, c, in, kernel, strides, padsBegin, padsEnd, dilations, ceil, incl, order
        PoolCase{kMax, 2, 3, {7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, 0},
        PoolCase{kMax, 1, 2, {6, 6}, {3, 3}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, true, false, 0},
        PoolCase{kMax, 1, 2, {7, 8}, {2, 3}, {1, 2}, {1, 0}, {0, 1}, {2, 1}, false, false, 0},
        PoolCase{kMax, 2, 2, {5, 4}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, false, false, 1},
        PoolCase{kMax, 1, 2, {6, 5}, {3, 2}, {2, 2}, {1, 0}, {1, 1}, {1, 1}, true, false, 1},
        PoolCase{kMax, 2, 3, {9}, {3}, {2}, {1}, {1}, {1}, true, false, 0},
        PoolCase{kMax, 1, 2, {4, 5, 3}, {2, 2, 2}, {1, 2, 1}, {1, 0, 0}, {0, 1, 1}, {1, 1, 2},
                 false, false, 1},
        PoolCase{kMax, 1, 1, {4, 4, 4}, {3, 2, 2}, {2, 2, 2}, {1, 0, 1}, {1, 0, 0}, {1, 1, 1},
                 true, false, 0},
        PoolCase{kMax, 4, 16, {16, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, false, 0},
        // pads wider than the window: the first windows see only padding
        PoolCase{kMax, 1, 2, {2}, {2}, {1}, {3}, {0}, {1}, false, false, 0},
        PoolCase{kAvg, 1, 2, {2}, {2}, {1}, {3}, {0}, {1}, false, false, 0},
        PoolCase{kAvg, 2, 3, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, 0},
        PoolCase{kAvg, 2, 3, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, true, 0},
        PoolCase{kAvg, 1, 2, {7, 5}, {3, 2}, {2, 1}, {0, 1}, {2, 0}, {1, 2}, false, true, 0},
        PoolCase{kAvg, 1, 2, {7, 5}, {3, 2}, {2, 1}, {0, 1}, {2, 0}, {1, 2}, false, false, 0},
        PoolCase{kAvg, 2, 2, {10}, {4}, {3}, {2}, {0}, {1}, true, true, 0},
        PoolCase{kAvg, 2, 2, {10}, {4}, {3}, {2}, {0}, {1}, true, false, 0},
        PoolCase{kAvg, 1, 2, {4, 3, 5}, {2, 2, 3}, {2, 1, 2}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1},
                 true, true, 0},
        PoolCase{kAvg, 4, 64, {8, 8}, {8, 8}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, false, false,
                 0} // global average
        ));

TEST(PoolTest, TiesPickTheFirstInBoundsElement) {
  Ctx ctx;
  // 1 x 1 x 4 x 4 of equal values, 3x3 windows, stride 2, pad 1: each
  // window's first in-bounds element (row-major) wins.
  PoolCase pc{kMax, 1, 1, {4, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, 0};
  auto desc = pc.desc();
  std::vector<float> x(16, 2.5f), y(pc.ySize());
  std::vector<int64_t> idx(pc.ySize());
  void *bufs[] = {x.data(), y.data(), idx.data()};
  ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), bufs));
  EXPECT_EQ(idx, (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(y, std::vector<float>(4, 2.5f));
}

TEST(PoolTest, TiesAndNaNsInWideRowsMatchTheReference) {
  // Rows wide enough that most windows are wholly in bounds (in planes of
  // over 4096 positions the kernel runs those a row at a time), values of
  // three levels (the ties a ReLU leaves) and NaNs: each max, its index and
  // where the backward puts its gradient are the first maximum in row-major
  // window order, as the reference's, and the gradient's sums are the bits
  // of adding in window order.
  const std::vector<PoolCase> cases = {
      {kMax, 2, 3, {13, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, 0},
      {kMax, 2, 3, {13, 21}, {3, 3}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, true, false, 0},
      {kMax, 2, 3, {13, 21}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, false, 0},
      {kMax, 2, 3, {13, 21}, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, true, false, 1},
      {kMax, 2, 3, {13, 21}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, false, 0},
      {kMax, 2, 3, {13, 21}, {1, 3}, {1, 3}, {0, 0}, {0, 0}, {1, 1}, false, false, 0},
      {kMax, 2, 3, {40}, {4}, {2}, {1}, {1}, {1}, false, false, 0},
      {kMax, 1, 2, {5, 6, 19}, {2, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, true, false,
       0},
      // Stride 3 with dilation 2 along the row, ceil mode (the any-stride loop).
      {kMax, 2, 2, {7, 29}, {2, 3}, {1, 3}, {0, 1}, {1, 2}, {1, 2}, true, false, 0},
      // Windows wholly in padding along dims 0 and 1 beside in-bounds columns.
      {kMax, 1, 2, {2, 2, 30}, {3, 3, 3}, {1, 1, 1}, {4, 4, 1}, {4, 4, 1}, {2, 2, 1}, false, false,
       0}};
  // Each case as it is (planes of up to 4096 positions go in blocks of 16)
  // and with its first dim grown past that (a row at a time).
  for (const PoolCase &small : cases)
    for (bool big : {false, true}) {
      const PoolCase pc = big ? withLargePlanes(small) : small;
      SCOPED_TRACE("kernel " + std::to_string(pc.kernel.back()) + " stride " +
                   std::to_string(pc.strides.back()) + " rank " + std::to_string(pc.s()) +
                   " plane " + std::to_string(product(pc.in)));
      expectReferenceBits(pc, nanTies(pc.xSize()));
    }
}

TEST(PoolTest, BlocksAndRowRunsGiveTheReferenceBits) {
  // Planes of up to 4096 positions go in blocks of 16, transposed so that
  // the planes are vector lanes; larger ones, and an average pool's forward
  // over rows of 20 windows or more, go a row at a time. Either way: the
  // reference's maxima, indices and averages exactly, and the gradient bit
  // for bit as adding each window's share in window order gives it. 6
  // planes (one part-filled block) and 36 (two blocks and a tail of 4);
  // values of three levels (ties) and NaNs for the max pools.
  struct Window {
    std::vector<int64_t> kernel, strides, pads;
    bool ceil;
  };
  const std::vector<Window> windows = {{{3, 3}, {1, 1}, {1, 1}, false},
                                       {{3, 3}, {2, 2}, {0, 0}, true},
                                       {{2, 2}, {2, 2}, {0, 0}, false},
                                       {{3, 2}, {2, 1}, {1, 0}, true}};
  const std::vector<std::vector<int64_t>> maps = {{2, 2}, {4, 4}, {9, 11}, {8, 44}, {70, 66}};
  for (int64_t kind : {kMax, kAvg})
    for (const Window &win : windows)
      for (const std::vector<int64_t> &in : maps)
        for (int64_t c : {3, 9}) {
          const int64_t n = c == 3 ? 2 : 4;
          // count_include_pad on the 9-channel runs only.
          PoolCase pc{kind, n, c, in, win.kernel, win.strides, win.pads, win.pads, {1, 1},
                      win.ceil, c == 9, 0};
          if (in[0] + 2 * win.pads[0] < win.kernel[0] || in[1] + 2 * win.pads[1] < win.kernel[1])
            continue; // a window wider than the padded map
          SCOPED_TRACE((kind == kMax ? "max " : "average ") + std::to_string(in[0]) + "x" +
                       std::to_string(in[1]) + " kernel " + std::to_string(win.kernel[0]) +
                       " stride " + std::to_string(win.strides[0]) + " planes " +
                       std::to_string(pc.n * c));
          expectReferenceBits(pc, kind == kMax ? nanTies(pc.xSize())
                                               : randomVec(pc.xSize(), 0.0f, 3.0f));
        }
}

TEST(PoolTest, HugeWindowsOverOnePositionNeedNoRoomForTheirPadding) {
  // A 30001 x 30001 window, all but its centre padding, over a 1 x 1 x 1
  // map: the kernel's room follows the taps in bounds (one), not the
  // window's size (9e8), on every thread; y = x, the gradient goes through.
  const int64_t k = 30001, pad = (k - 1) / 2;
  for (int64_t kind : {kMax, kAvg}) {
    PoolCase pc{kind, 2, 16, {1, 1, 1}, {k, k, 1}, {1, 1, 1}, {pad, pad, 0}, {pad, pad, 0},
                {1, 1, 1}, false, false, 0};
    Ctx ctx;
    auto desc = pc.desc();
    std::vector<float> x = randomVec(pc.xSize()), y(pc.ySize()), dy = randomVec(pc.ySize()),
                       dx(pc.xSize());
    std::vector<int64_t> idx(pc.ySize());
    void *fwd[] = {x.data(), y.data(), kind == kMax ? idx.data() : nullptr};
    ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), fwd));
    EXPECT_EQ(y, x);
    void *bwd[] = {x.data(), dy.data(), dx.data()};
    ASSERT_OK(ctx, mgsrt_pool_bwd(ctx, desc.data(), bwd));
    EXPECT_EQ(dx, dy);
  }
}

TEST(PoolTest, SizesPastInt64AreRefused) {
  // 2^22 x 2^22 x 2^22 positions a plane: the descriptor is refused, naming
  // the sizes, before any buffer is touched.
  const int64_t big = int64_t{1} << 22;
  PoolCase pc{kMax, 1, 1, {big, big, big}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0},
              {1, 1, 1}, false, false, 0};
  Ctx ctx;
  auto desc = pc.desc();
  float dummy = 0.0f;
  void *bufs[] = {&dummy, &dummy, nullptr};
  EXPECT_EQ(mgsrt_pool_fwd(ctx, desc.data(), bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("more elements than int64 counts"), std::string::npos)
      << ctx.message();
}

TEST(PoolTest, PaddingNeverWins) {
  Ctx ctx;
  // All inputs negative: padding (implicitly -inf) must not produce 0.
  PoolCase pc{kMax, 1, 1, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, 0};
  auto desc = pc.desc();
  std::vector<float> x = randomVec(9, -2.0f, -1.0f), y(pc.ySize());
  void *bufs[] = {x.data(), y.data(), nullptr};
  ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), bufs));
  for (float v : y)
    EXPECT_LT(v, -0.9f);
}

TEST(PoolTest, StorageOrderColumnMajorIndex) {
  Ctx ctx;
  // N=1, C=2, 2 x 3 input, a 2x3 window covering everything; the max sits at
  // (h=1, w=0) of channel 1: row-major 6 + 3, column-major 6 + 1.
  for (int64_t order : {0, 1}) {
    PoolCase pc{kMax, 1, 2, {2, 3}, {2, 3}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, false, false, order};
    auto desc = pc.desc();
    std::vector<float> x = {0, 0, 0, 0, 0, 0, /*c1*/ 0, 0, 0, 9, 0, 0}, y(2);
    std::vector<int64_t> idx(2);
    void *bufs[] = {x.data(), y.data(), idx.data()};
    ASSERT_OK(ctx, mgsrt_pool_fwd(ctx, desc.data(), bufs));
    EXPECT_EQ(idx[1], order == 0 ? 9 : 7);
    EXPECT_EQ(idx[0], 0);
  }
}

} // namespace
