//===- SampleTest.cpp - What a sample goes through: transforms, images ---===//
//
// --augment's parsing, draws and transforms (Data.cpp) and an image folder's
// pixels as PIL makes them (ImageFolder.cpp).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "mgsrt/driver.h"

#include <set>

using mgs::rt::Status;
using namespace mgs::rt::driver;
using namespace mgs::rt::driver::test;

namespace {

//===--- --augment --------------------------------------------------------===//

TEST(Augment, ParsesItemsAndNamesTheBadOne) {
  Augmentation a;
  ASSERT_TRUE(succeeded(parseAugmentation("crop=4,flip", a)));
  EXPECT_TRUE(a.hflip);
  EXPECT_FALSE(a.vflip);
  EXPECT_EQ(a.cropPadding, 4);
  EXPECT_EQ(describeAugmentation(a),
            "random crop of the image padded by 4, random horizontal flip");
  ASSERT_TRUE(succeeded(parseAugmentation("vflip", a)));
  EXPECT_TRUE(a.vflip && !a.hflip && a.cropPadding == 0);
  const std::pair<const char *, const char *> bad[] = {{"flip,rotate", "unknown item 'rotate'"},
                                                       {"flip,flip", "'flip' is given twice"},
                                                       {"crop=2,crop=3", "'crop' is given twice"},
                                                       {"crop=0", "'crop=0': the padding P"},
                                                       {"crop=-1", "'crop=-1'"},
                                                       {"crop=2x", "'crop=2x'"},
                                                       {"crop=", "'crop='"},
                                                       {"flip,", "an empty item"},
                                                       {"", "an empty item"}};
  for (const auto &[spec, message] : bad) {
    Augmentation kept = a;
    Status s = parseAugmentation(spec, kept);
    EXPECT_FALSE(s.ok()) << spec;
    EXPECT_TRUE(contains(s.message, message)) << spec << ": " << s.message;
    EXPECT_TRUE(kept.vflip && !kept.hflip) << "a failed parse leaves the value as it was";
  }
}

TEST(Augment, DrawsArePureAndCoverTheirRange) {
  Augmentation a;
  ASSERT_TRUE(succeeded(parseAugmentation("crop=2,flip,vflip", a)));
  std::set<int64_t> dys, dxs;
  int hflips = 0, vflips = 0, differ = 0;
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    AugmentDraw d = drawAugmentation(a, 7, 3, i), again = drawAugmentation(a, 7, 3, i);
    EXPECT_EQ(d.dy, again.dy);
    EXPECT_EQ(d.dx, again.dx);
    EXPECT_EQ(d.hflip, again.hflip);
    ASSERT_GE(d.dy, -2);
    ASSERT_LE(d.dy, 2);
    ASSERT_GE(d.dx, -2);
    ASSERT_LE(d.dx, 2);
    dys.insert(d.dy);
    dxs.insert(d.dx);
    hflips += d.hflip;
    vflips += d.vflip;
    AugmentDraw next = drawAugmentation(a, 7, 4, i); // another epoch
    differ += next.dy != d.dy || next.dx != d.dx || next.hflip != d.hflip || next.vflip != d.vflip;
  }
  EXPECT_EQ(dys.size(), 5u);
  EXPECT_EQ(dxs.size(), 5u);
  // Binomial(2000, 1/2): 5 standard deviations are 112.
  EXPECT_NEAR(hflips, n / 2, 112);
  EXPECT_NEAR(vflips, n / 2, 112);
  EXPECT_GT(differ, n / 2); // each epoch draws anew
  // Without crop or a flip, nothing of it is drawn.
  ASSERT_TRUE(succeeded(parseAugmentation("flip", a)));
  for (int i = 0; i < 50; ++i) {
    AugmentDraw d = drawAugmentation(a, 7, 3, i);
    EXPECT_TRUE(d.dy == 0 && d.dx == 0 && !d.vflip);
  }
}

TEST(Augment, MovesEveryPlaneAndFillsWhatItUncovers) {
  // Two planes of 3 x 4; value = 100 * plane + 10 * row + column.
  std::vector<float> v(24);
  for (int p = 0; p < 2; ++p)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        v[p * 12 + y * 4 + x] = static_cast<float>(100 * p + 10 * y + x);
  const std::vector<float> original = v;
  // out(y, x) = in(y + 1, (3 - x) - 1): one row down, mirrored, one column left.
  AugmentDraw d;
  d.dy = 1;
  d.dx = -1;
  d.hflip = true;
  augmentPlanes(v.data(), 2, 3, 4, d, -5.0f);
  for (int p = 0; p < 2; ++p)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) {
        const int fy = y + 1, fx = 3 - x - 1;
        const float want = fy < 3 && fx >= 0 ? static_cast<float>(100 * p + 10 * fy + fx) : -5.0f;
        EXPECT_EQ(v[p * 12 + y * 4 + x], want) << p << " " << y << " " << x;
      }
  // The identity draw leaves the values; a vertical flip twice restores them.
  v = original;
  augmentPlanes(v.data(), 2, 3, 4, AugmentDraw{}, -5.0f);
  EXPECT_EQ(v, original);
  AugmentDraw flip;
  flip.vflip = true;
  augmentPlanes(v.data(), 2, 3, 4, flip, -5.0f);
  EXPECT_EQ(v[0], 20.0f);
  augmentPlanes(v.data(), 2, 3, 4, flip, -5.0f);
  EXPECT_EQ(v, original);
  // Labels: the same geometry, the fill the ignored label.
  std::vector<int64_t> labels = {1, 2, 3, 4, 5, 6};
  AugmentDraw shift;
  shift.dx = 2;
  augmentPlanes(labels.data(), 1, 2, 3, shift, -100);
  EXPECT_EQ(labels, (std::vector<int64_t>{3, -100, -100, 6, -100, -100}));
}

//===--- image folders ----------------------------------------------------===//

TEST(ImageFolder, ResamplesAsPil) {
  // 2 x 2 RGB to 1 x 1: PIL's bilinear over a halving weighs each input pixel
  // 1/2 a pass, rounded to 8 bits after each: rows (10 + 20) / 2 = 15 and
  // (30 + 41) / 2 = 35.5 -> 36, then (15 + 36) / 2 = 25.5 -> 26.
  const unsigned char rgb[] = {10, 0, 255, 20, 0, 255, 30, 0, 255, 41, 0, 255};
  unsigned char out[3];
  imageToSample(rgb, 2, 2, 3, 1, 1, out);
  EXPECT_EQ(out[0], 26);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 255);
  // Gray: PIL's "L" of each pixel (ITU-R 601-2 luma in 16-bit fixed point),
  // no resampling at the same size.
  const unsigned char px[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 7, 7, 7};
  unsigned char gray[4];
  imageToSample(px, 2, 2, 1, 2, 2, gray);
  EXPECT_EQ(gray[0], 76);  // (255 * 19595 + 0x8000) >> 16
  EXPECT_EQ(gray[1], 150); // 255 * 38470
  EXPECT_EQ(gray[2], 29);  // 255 * 7471
  EXPECT_EQ(gray[3], 7);   // a gray pixel keeps its value
  // A 2 x 4 image into 2 x 2: Resize(2) leaves it 2 x 4, CenterCrop takes
  // columns 1 and 2.
  const unsigned char wide[] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4,
                                5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8};
  unsigned char crop[4];
  imageToSample(wide, 2, 4, 1, 2, 2, crop);
  EXPECT_EQ(crop[0], 2);
  EXPECT_EQ(crop[1], 3);
  EXPECT_EQ(crop[2], 6);
  EXPECT_EQ(crop[3], 7);
}

} // namespace
