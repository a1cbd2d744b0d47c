//===- GroupedConvWeights.cpp - Grouped convolutions' weight gradients ----===//

#include "Kernels/CPU/GroupedConvWeights.h"
#include "Kernels/CPU/Transpose.h"
#include "Kernels/CPU/VectorMath.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mgs::rt::cpu {

namespace {

using Shape = GroupedConvWeights::Shape;

/// src (batch x channels x plane) -> dst (batch x plane x channels).
void toChannelsLast(const float *src, float *dst, int64_t batch, int64_t channels, int64_t plane) {
  const int64_t extents[3] = {batch, channels, plane}, perm[3] = {0, 2, 1};
  transpose(src, dst, transposeParams(extents, perm, 3));
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

GroupedConvWeights::GroupedConvWeights(const ConvParams &p) {
  s_.n = p.n;
  s_.c = p.c;
  s_.m = p.m;
  s_.inGroup = p.c / p.g;
  s_.outGroup = p.m / p.g;
  const int64_t lead = 3 - p.s;
  for (int64_t d = 0; d < 3; ++d) {
    const bool unit = d < lead;
    s_.in[d] = unit ? 1 : p.in[d - lead];
    s_.out[d] = unit ? 1 : p.out[d - lead];
    s_.kernel[d] = unit ? 1 : p.kernel[d - lead];
    s_.stride[d] = unit ? 1 : p.strides[d - lead];
    s_.pad[d] = unit ? 0 : p.padsBegin[d - lead];
    s_.dilation[d] = unit ? 1 : p.dilations[d - lead];
  }
  s_.inPlane = s_.in[0] * s_.in[1] * s_.in[2];
  s_.outPlane = s_.out[0] * s_.out[1] * s_.out[2];
  s_.taps = s_.kernel[0] * s_.kernel[1] * s_.kernel[2];
  xChannel_.resize(static_cast<size_t>(s_.m));
  for (int64_t m = 0; m < s_.m; ++m)
    xChannel_[m] = m / s_.outGroup * s_.inGroup;
}

void GroupedConvWeights::run(const float *x, const float *dy, float *dw, float *db,
                             float *scratch) {
  const Shape &s = s_;
  float *xT = scratch, *dyT = scratch + s.n * s.c * s.inPlane;
  toChannelsLast(x, xT, s.n, s.c, s.inPlane);
  toChannelsLast(dy, dyT, s.n, s.m, s.outPlane);

  // Each thread takes a slice of the output channels, a multiple of 8 wide
  // (a vector of lanes) where there are enough of them.
  const int64_t threads = std::max(1, omp_get_max_threads());
  const int64_t width = std::min(s.m, ((s.m + threads - 1) / threads + 7) / 8 * 8);
  const int64_t slices = (s.m + width - 1) / width;
  const int64_t accSize = s.taps * s.inGroup * width;
  sums_.resize(static_cast<size_t>(slices * (2 * accSize + 2 * width)));
#pragma omp parallel for schedule(static)
  for (int64_t slice = 0; slice < slices; ++slice) {
    const int64_t m0 = slice * width, w = std::min(width, s.m - m0);
    float *acc = sums_.data() + slice * (2 * accSize + 2 * width);
    float *accN = acc + accSize, *dbAcc = accN + accSize, *dbN = dbAcc + width;
    accumulate(s, xT, dyT, m0, w, xChannel_.data() + m0, db != nullptr, acc, accN, dbAcc, dbN);
    for (int64_t j = 0; j < w; ++j) {
      const int64_t m = m0 + j;
      for (int64_t i = 0; i < s.inGroup; ++i)
        for (int64_t tap = 0; tap < s.taps; ++tap)
          dw[(m * s.inGroup + i) * s.taps + tap] = acc[(tap * s.inGroup + i) * w + j];
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
