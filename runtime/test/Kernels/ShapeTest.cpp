//===- ShapeTest.cpp - transpose, concat / split, pad ---------------------===//

#include "TestUtil.h"

using namespace mgsrt_test;

namespace {

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

struct TransposeCase {
  std::vector<int64_t> in, perm;
};

class TransposeTest : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeTest, MatchesReference) {
  Ctx ctx;
  const TransposeCase tc = GetParam();
  const int64_t r = tc.in.size();
  std::vector<int64_t> desc = {r};
  desc.insert(desc.end(), tc.in.begin(), tc.in.end());
  desc.insert(desc.end(), tc.perm.begin(), tc.perm.end());
  std::vector<int64_t> out(r);
  for (int64_t i = 0; i < r; ++i)
    out[i] = tc.in[tc.perm[i]];
  std::vector<float> x = randomVec(product(tc.in)), y(x.size(), -99.0f);
  void *bufs[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_transpose(ctx, desc.data(), bufs));
  auto inStrides = stridesOf(tc.in);
  for (int64_t o = 0; o < product(out); ++o) {
    auto idx = unflatten(o, out);
    int64_t src = 0;
    for (int64_t i = 0; i < r; ++i)
      src += idx[i] * inStrides[tc.perm[i]];
    ASSERT_EQ(y[o], x[src]) << "output element " << o;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, TransposeTest,
                         ::testing::Values(TransposeCase{{3, 4}, {1, 0}},
                                           TransposeCase{{70, 45}, {1, 0}}, // partial tiles
                                           TransposeCase{{2, 3, 4, 5}, {0, 2, 3, 1}},
                                           TransposeCase{{2, 3, 4, 5}, {3, 1, 0, 2}},
                                           TransposeCase{{2, 3, 4, 5}, {0, 1, 3, 2}},
                                           TransposeCase{{2, 3, 4, 5}, {1, 0, 2, 3}},
                                           TransposeCase{{2, 3, 4}, {0, 1, 2}},
                                           TransposeCase{{1, 5, 1, 6}, {3, 2, 1, 0}},
                                           TransposeCase{{7}, {0}},
                                           TransposeCase{{}, {}},
                                           TransposeCase{{64, 3, 130}, {2, 1, 0}}));

//===----------------------------------------------------------------------===//
// Concat / split
//===----------------------------------------------------------------------===//

TEST(ConcatTest, ConcatThenSplitRoundTrips) {
  Ctx ctx;
  const int64_t outer = 3, inner = 4;
  const std::vector<int64_t> extents = {2, 0, 5, 1};
  std::vector<int64_t> desc = {outer, inner, static_cast<int64_t>(extents.size())};
  desc.insert(desc.end(), extents.begin(), extents.end());
  std::vector<std::vector<float>> parts;
  for (int64_t e : extents)
    parts.push_back(randomVec(outer * e * inner));
  const int64_t total = 8;
  std::vector<float> out(outer * total * inner);
  std::vector<void *> bufs;
  for (auto &p : parts)
    bufs.push_back(p.data());
  bufs.push_back(out.data());
  ASSERT_OK(ctx, mgsrt_concat(ctx, desc.data(), bufs.data()));
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off = 0;
    for (size_t k = 0; k < extents.size(); ++k) {
      for (int64_t a = 0; a < extents[k]; ++a)
        for (int64_t i = 0; i < inner; ++i)
          ASSERT_EQ(out[(o * total + off + a) * inner + i],
                    parts[k][(o * extents[k] + a) * inner + i]);
      off += extents[k];
    }
  }
  // Split back, skipping part 2.
  std::vector<std::vector<float>> back;
  for (int64_t e : extents)
    back.push_back(std::vector<float>(outer * e * inner, -1.0f));
  std::vector<void *> sb = {out.data()};
  for (size_t k = 0; k < extents.size(); ++k)
    sb.push_back(k == 2 ? nullptr : back[k].data());
  ASSERT_OK(ctx, mgsrt_split(ctx, desc.data(), sb.data()));
  EXPECT_EQ(back[0], parts[0]);
  EXPECT_EQ(back[3], parts[3]);
  EXPECT_EQ(back[2], std::vector<float>(parts[2].size(), -1.0f));
}

TEST(ConcatTest, LargeConcatAlongChannels) {
  Ctx ctx;
  // Two N x C x H x W tensors along C: outer N, inner H*W.
  const int64_t n = 8, h = 32 * 32;
  const int64_t desc[] = {n, h, 2, 16, 32};
  std::vector<float> a = randomVec(n * 16 * h), b = randomVec(n * 32 * h), y(n * 48 * h);
  void *bufs[] = {a.data(), b.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_concat(ctx, desc, bufs));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(y[(i * 48 + 3) * h + 5], a[(i * 16 + 3) * h + 5]);
    ASSERT_EQ(y[(i * 48 + 16 + 31) * h + 7], b[(i * 32 + 31) * h + 7]);
  }
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

struct PadCase {
  std::vector<int64_t> in, pads; // pads: begin[r], end[r]
};

class PadTest : public ::testing::TestWithParam<PadCase> {};

TEST_P(PadTest, ForwardAndBackwardMatchReference) {
  Ctx ctx;
  const PadCase pc = GetParam();
  const int64_t r = pc.in.size();
  const double value = 1.5;
  std::vector<int64_t> desc = {r};
  desc.insert(desc.end(), pc.in.begin(), pc.in.end());
  desc.insert(desc.end(), pc.pads.begin(), pc.pads.end());
  desc.push_back(bits(value));
  std::vector<int64_t> out(r);
  for (int64_t i = 0; i < r; ++i)
    out[i] = pc.in[i] + pc.pads[i] + pc.pads[r + i];
  // (at least one element, so an empty tensor still has a non-null buffer)
  std::vector<float> x = randomVec(product(pc.in)), y(std::max<int64_t>(1, product(out)));
  void *fb[] = {x.data(), y.data()};
  ASSERT_OK(ctx, mgsrt_pad_fwd(ctx, desc.data(), fb));
  auto inStrides = stridesOf(pc.in);
  std::vector<double> wantDx(x.size(), 0.0);
  std::vector<float> dy = randomVec(y.size()); // (y's size, at least 1)
  for (int64_t o = 0; o < product(out); ++o) {
    auto idx = unflatten(o, out);
    int64_t src = 0;
    bool inside = true;
    for (int64_t i = 0; i < r; ++i) {
      int64_t c = idx[i] - pc.pads[i];
      inside &= c >= 0 && c < pc.in[i];
      src += c * inStrides[i];
    }
    ASSERT_EQ(y[o], inside ? x[src] : static_cast<float>(value)) << "output element " << o;
    if (inside)
      wantDx[src] += dy[o];
  }
  std::vector<float> dx(x.size(), 77.0f);
  void *bb[] = {dy.data(), dx.data()};
  ASSERT_OK(ctx, mgsrt_pad_bwd(ctx, desc.data(), bb));
  expectClose(dx, wantDx, 0, 0, "dx");
}

INSTANTIATE_TEST_SUITE_P(Shapes, PadTest,
                         ::testing::Values(PadCase{{3, 4}, {1, 2, 0, 1}},
                                           PadCase{{2, 3, 4, 5}, {0, 0, 1, 1, 0, 0, 1, 1}},
                                           PadCase{{4, 6}, {-1, 2, 1, -3}},  // crop and pad
                                           PadCase{{3, 5}, {-3, 0, 0, 0}},   // crop to empty
                                           PadCase{{5}, {2, 3}},
                                           PadCase{{2, 2, 2}, {1, 0, 0, 0, 1, 2}},
                                           PadCase{{}, {}},
                                           PadCase{{16, 64, 64}, {0, 3, 2, 0, 1, 4}}));

} // namespace
