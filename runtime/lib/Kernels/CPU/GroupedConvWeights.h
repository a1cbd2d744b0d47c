//===- GroupedConvWeights.h - Grouped convolutions' weight gradients -*- C++ -*-===//
//
// The weight (and bias) gradient of a grouped convolution computed in
// channels-last order, for the shapes where oneDNN 2.6 has no direct kernel:
// its AVX2 depthwise backward-weights kernel takes only 3x3 windows on inputs
// of 3x3 or more, and every other grouped convolution (ConvNeXt's 7x7
// depthwise, EfficientNet's and MobileNetV3's 5x5, any depthwise one on a 2x2
// map, RegNet's groups of 8 on a 2x2 map) falls back to its im2col + GEMM
// implementation, one small GEMM per group: 10 to 50 times the direct
// kernels' time. Here x and dy are transposed to channels-last (N, spatial,
// C), and each output channel's taps accumulate over the batch with the
// channels as the vector lanes, so every window size, stride, dilation and
// padding runs at the same speed. Each output channel's sums run in one fixed
// order (a sum per sample, then over the samples), whatever the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_GROUPEDCONVWEIGHTS_H
#define MGSRT_KERNELS_CPU_GROUPEDCONVWEIGHTS_H

#include "Descriptors/ConvDesc.h"

#include <vector>

namespace mgs::rt::cpu {

/// The weight gradient of one grouped convolution (its shape fixed at
/// construction) with its channels-last scratch.
class GroupedConvWeights {
public:
  /// The shape as 3 spatial dims (leading unit dims for 1-D and 2-D).
  struct Shape {
    int64_t n, c, m, inGroup, outGroup;
    int64_t in[3], out[3], kernel[3], stride[3], pad[3], dilation[3];
    int64_t inPlane, outPlane, taps;
  };

  explicit GroupedConvWeights(const ConvParams &p);

  /// Floats of the scratch run() needs: x and dy in channels-last order.
  int64_t scratchCount() const { return s_.n * (s_.c * s_.inPlane + s_.m * s_.outPlane); }

  /// dw (M x C/group x kernel, the caller's plain layout) and, when db is not
  /// null, db (M) from x (N x C x in) and dy (N x M x out), with `scratch`
  /// (scratchCount() floats, shared by every call site: Conv.cpp's).
  void run(const float *x, const float *dy, float *dw, float *db, float *scratch);

private:
  Shape s_;
  std::vector<int64_t> xChannel_; // per output channel: its group's first input channel
  std::vector<float> sums_;       // each slice's sums
};

/// Which weight-gradient kernel grouped convolutions use:
/// MGSRT_CONV_GROUPED_WEIGHTS=direct (GroupedConvWeights for every grouped
/// convolution on float32 kernels: the tests' switch; oneDNN's bfloat16
/// kernels, where the CPU has them, stay), =onednn (never), otherwise (the
/// default) GroupedConvWeights where oneDNN's choice is its GEMM or reference
/// one.
enum class GroupedWeightsChoice { Auto, Direct, OneDnn };
GroupedWeightsChoice groupedWeightsChoice();

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_GROUPEDCONVWEIGHTS_H
