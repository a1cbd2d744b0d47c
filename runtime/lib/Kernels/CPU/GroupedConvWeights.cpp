//===- GroupedConvWeights.cpp - Grouped convolutions' weight gradients ----===//

#include "Kernels/CPU/GroupedConvWeights.h"
#include "Kernels/CPU/VectorMath.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mgs::rt::cpu {

namespace {

/// The convolution's shape as the accumulation loops read it.
struct Shape {
  int64_t n, c, m, inGroup, outGroup;
  const int64_t *in, *out, *kernel, *stride, *pad, *dilation;
  int64_t inPlane, outPlane, taps;
};

/// src (count planes of `plane` values) -> dst (plane rows of count values).
MGSRT_SIMD_CLONES
void toChannelsLast(const float *src, float *dst, int64_t batch, int64_t channels, int64_t plane) {
  constexpr int64_t kBlock = 32;
  const int64_t blocks = (plane + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t p0 = blk * kBlock, p1 = std::min(plane, p0 + kBlock);
      const float *s = src + b * channels * plane;
      float *d = dst + b * channels * plane;
      for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t p = p0; p < p1; ++p)
          d[p * channels + ch] = s[ch * plane + p];
    }
}

/// The taps' sums of output channels [m0, m0 + width) over the batch into
/// acc (taps x inGroup x width) and the bias's into db (width): per sample
/// into accN and dbN first, then those into acc and db. xChannel[j]: the
/// first input channel of channel m0 + j's group.
MGSRT_SIMD_CLONES
void accumulate(const Shape &s, const float *xT, const float *dyT, int64_t m0, int64_t width,
                const int64_t *xChannel, bool bias, float *acc, float *accN, float *db,
                float *dbN) {
  const int64_t accSize = s.taps * s.inGroup * width;
  const bool depthwise = s.inGroup == 1 && s.outGroup == 1;
  std::fill(acc, acc + accSize, 0.0f);
  std::fill(db, db + width, 0.0f);
  for (int64_t b = 0; b < s.n; ++b) {
    std::fill(accN, accN + accSize, 0.0f);
    std::fill(dbN, dbN + width, 0.0f);
    int64_t op = 0;
    for (int64_t o0 = 0; o0 < s.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < s.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < s.out[2]; ++o2, ++op) {
          const float *dyv = dyT + (b * s.outPlane + op) * s.m + m0;
          if (bias)
            for (int64_t j = 0; j < width; ++j)
              dbN[j] += dyv[j];
          for (int64_t t0 = 0; t0 < s.kernel[0]; ++t0) {
            const int64_t q0 = o0 * s.stride[0] - s.pad[0] + t0 * s.dilation[0];
            if (q0 < 0 || q0 >= s.in[0])
              continue;
            for (int64_t t1 = 0; t1 < s.kernel[1]; ++t1) {
              const int64_t q1 = o1 * s.stride[1] - s.pad[1] + t1 * s.dilation[1];
              if (q1 < 0 || q1 >= s.in[1])
                continue;
              for (int64_t t2 = 0; t2 < s.kernel[2]; ++t2) {
                const int64_t q2 = o2 * s.stride[2] - s.pad[2] + t2 * s.dilation[2];
                if (q2 < 0 || q2 >= s.in[2])
                  continue;
                const int64_t tap = (t0 * s.kernel[1] + t1) * s.kernel[2] + t2;
                const float *xv = xT + (b * s.inPlane + (q0 * s.in[1] + q1) * s.in[2] + q2) * s.c;
                float *a = accN + tap * s.inGroup * width;
                if (depthwise) {
                  const float *xs = xv + m0;
                  for (int64_t j = 0; j < width; ++j)
                    a[j] += dyv[j] * xs[j];
                  continue;
                }
                for (int64_t i = 0; i < s.inGroup; ++i, a += width)
                  for (int64_t j = 0; j < width; ++j)
                    a[j] += dyv[j] * xv[xChannel[j] + i];
              }
            }
          }
        }
    for (int64_t j = 0; j < accSize; ++j)
      acc[j] += accN[j];
    for (int64_t j = 0; j < width; ++j)
      db[j] += dbN[j];
  }
}

} // namespace

GroupedConvWeights::GroupedConvWeights(const ConvParams &p)
    : n_(p.n), c_(p.c), m_(p.m), inGroup_(p.c / p.g), outGroup_(p.m / p.g) {
  const int64_t lead = 3 - p.s;
  for (int64_t d = 0; d < 3; ++d) {
    const bool unit = d < lead;
    in_[d] = unit ? 1 : p.in[d - lead];
    out_[d] = unit ? 1 : p.out[d - lead];
    kernel_[d] = unit ? 1 : p.kernel[d - lead];
    stride_[d] = unit ? 1 : p.strides[d - lead];
    pad_[d] = unit ? 0 : p.padsBegin[d - lead];
    dilation_[d] = unit ? 1 : p.dilations[d - lead];
  }
  inPlane_ = in_[0] * in_[1] * in_[2];
  outPlane_ = out_[0] * out_[1] * out_[2];
  taps_ = kernel_[0] * kernel_[1] * kernel_[2];
}

void GroupedConvWeights::run(const float *x, const float *dy, float *dw, float *db,
                             float *scratch) {
  float *xT = scratch, *dyT = scratch + n_ * c_ * inPlane_;
  toChannelsLast(x, xT, n_, c_, inPlane_);
  toChannelsLast(dy, dyT, n_, m_, outPlane_);
  const Shape s{n_,      c_,      m_,   inGroup_,  outGroup_, in_,       out_,
                kernel_, stride_, pad_, dilation_, inPlane_,  outPlane_, taps_};

  // Each thread takes a slice of the output channels, a multiple of 8 wide
  // (a vector of lanes) where there are enough of them.
  const int64_t threads = std::max(1, omp_get_max_threads());
  const int64_t width = std::min(m_, ((m_ + threads - 1) / threads + 7) / 8 * 8);
  const int64_t slices = (m_ + width - 1) / width;
  const int64_t accSize = taps_ * inGroup_ * width;
  sums_.resize(static_cast<size_t>(slices * (2 * accSize + 2 * width)));
  xChannel_.resize(static_cast<size_t>(m_));
  for (int64_t m = 0; m < m_; ++m)
    xChannel_[m] = m / outGroup_ * inGroup_;
#pragma omp parallel for schedule(static)
  for (int64_t slice = 0; slice < slices; ++slice) {
    const int64_t m0 = slice * width, w = std::min(width, m_ - m0);
    float *acc = sums_.data() + slice * (2 * accSize + 2 * width);
    float *accN = acc + accSize, *dbAcc = accN + accSize, *dbN = dbAcc + width;
    accumulate(s, xT, dyT, m0, w, xChannel_.data() + m0, db != nullptr, acc, accN, dbAcc, dbN);
    for (int64_t j = 0; j < w; ++j) {
      const int64_t m = m0 + j;
      for (int64_t i = 0; i < inGroup_; ++i)
        for (int64_t tap = 0; tap < taps_; ++tap)
          dw[(m * inGroup_ + i) * taps_ + tap] = acc[(tap * inGroup_ + i) * w + j];
      if (db)
        db[m] = dbAcc[j];
    }
  }
}

GroupedWeightsChoice groupedWeightsChoice() {
  // Read when a call site's kernel is chosen (once per call site), not once
  // per process: a test can set it around the calls it makes.
  const char *v = std::getenv("MGSRT_CONV_GROUPED_WEIGHTS");
  if (v && std::strcmp(v, "direct") == 0)
    return GroupedWeightsChoice::Direct;
  if (v && std::strcmp(v, "onednn") == 0)
    return GroupedWeightsChoice::OneDnn;
  return GroupedWeightsChoice::Auto;
}

} // namespace mgs::rt::cpu
