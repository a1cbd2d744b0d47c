//===- DepthwiseConv.h - Depthwise convolutions in blocks of planes -*- C++ -*-===//
//
// Convolutions with one filter per channel (group = C = M: MobileNet's,
// EfficientNet's, ConvNeXt's depthwise ones), forward and both backward
// directions, on the caller's NCHW buffers. oneDNN runs them fast only on its
// blocked layouts, and Conv.cpp's reorders of whole activations to and from
// those cost up to twice the convolution itself
// (bench/results/conv-layout-cpu.txt). Here the planes go in blocks of kLanes
// channels, each transposed in a thread's scratch where it stays in cache
// (PlaneBlocks.h, as the pools do), and each output position runs its
// in-bounds taps with the block's channels as the vector lanes: any window,
// stride, dilation and padding, 1-D to 3-D. The taps are grouped by window
// shape (interior, each edge, each corner: Patterns), so that four outputs of
// one shape run at once, each with its own sum; the input's gradient is the
// same gather over the transposed taps (sums in registers, no adds to
// memory); small planes stack several samples into a block so that every
// shape has members enough. Measured against the oneDNN path: MobileNets',
// EfficientNet's and ConvNeXt's training steps 0.87-0.97x
// (bench/results/zoo-step-cpu.txt, 7).
//
// The weight gradient sums each channel in one fixed order whatever the
// thread count: per stack of samples, then over the stacks in fixed chunks of
// the batch, the chunks in order (the chunking depends on the shape only).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_DEPTHWISECONV_H
#define MGSRT_KERNELS_CPU_DEPTHWISECONV_H

#include "Descriptors/ConvDesc.h"

#include <cstdint>
#include <vector>

namespace mgs::rt::cpu {

/// One depthwise convolution (its shape fixed at construction).
class DepthwiseConv {
public:
  /// Whether a convolution runs here: depthwise with one filter per channel,
  /// planes of at most kMaxPlane positions (in and out) and at most kMaxTaps
  /// taps over a plane's outputs (the tables' size), float32 or rounded
  /// operands (oneDNN's bfloat16 kernels stay: their operands are half the
  /// bytes), and MGSRT_CONV_DEPTHWISE not "onednn" (the tests' and the
  /// benchmarks' switch back to oneDNN, read here).
  static bool takes(const ConvParams &p);

  explicit DepthwiseConv(const ConvParams &p);

  /// y (N x C x out) from x (N x C x in), w (C x kernel) and b (C, or null).
  void forward(const float *x, const float *w, const float *b, float *y) const;
  /// dx (N x C x in) from dy (N x C x out) and w.
  void backwardData(const float *dy, const float *w, float *dx) const;
  /// dw (C x kernel) and, when db is not null, db (C) from x and dy.
  void backwardWeights(const float *x, const float *dy, float *dw, float *db) const;

  /// Planes of more positions than this stay on oneDNN (measured faster
  /// than oneDNN up to 224 x 224 maps, bench/results/conv-layout-cpu.txt;
  /// a block's scratch is then 3 MiB a buffer).
  static constexpr int64_t kMaxPlane = 65536;
  /// Nor do convolutions of more in-bounds taps than this over a plane's
  /// outputs (each of the three tables holds that many entries).
  static constexpr int64_t kMaxTaps = int64_t(1) << 20;

  /// In-bounds taps grouped by what they sum into: group g's entries are
  /// entries[first[g], first[g + 1]), each naming the position it reads
  /// (`at`) and what multiplies it (`by`).
  struct Table {
    struct Entry {
      int32_t at, by;
    };
    std::vector<int32_t> first;
    std::vector<Entry> entries;
  };
  /// A Table's groups by the shape of their entries: the groups of a
  /// pattern read the same `by`s at the same offsets from their own base
  /// position (an interior output's 3 x 3 window, a left edge's 3 x 2, ...),
  /// so that several of them run at once, each in its own registers.
  struct Patterns {
    struct Pattern {
      int32_t firstEntry, entries; // offsets[firstEntry, + entries)
      int32_t firstGroup, groups;  // members[firstGroup, + groups)
    };
    std::vector<Pattern> patterns;
    std::vector<Table::Entry> offsets; // (position - base, by)
    std::vector<Table::Entry> members; // (base, group)
  };

  /// A thread's room for one block: what it reads and what it writes,
  /// transposed, and one stack's weight and bias gradient lanes.
  struct Scratch {
    std::vector<float> in, out, sample;
  };

private:
  int64_t n_, c_, inPlane_, outPlane_, taps_;
  // Each output position's taps (input position, filter tap: the forward),
  // each input position's (output position, filter tap: the input's
  // gradient, a sum in registers rather than adds to memory), and each
  // filter tap's (input position, output position: the weights' gradient).
  Patterns byOut_, byIn_;
  Table byTap_;
  int64_t stack_; // samples a block holds (small planes stacked)
  bool parallel_;
  // Kept from call to call (a context runs one kernel at a time): the
  // threads' scratch, the weights' and bias's lanes, the weight gradient's
  // partial sums.
  mutable std::vector<Scratch> scratches_;
  mutable std::vector<float> wLanes_, bLanes_, sums_;

  /// v's values per channel (perChannel each) into `lanes` as
  /// [channel block][k][lane] (zeros for a null v and past the channels).
  void toChannelLanes(const float *v, int64_t perChannel, std::vector<float> &lanes) const;
  int64_t blocks() const;
  Scratch makeScratch() const;
  /// What a stack of samples and a block of channels cover: samples
  /// [sample, sample + samples), channels [c0, c0 + lanes).
  struct Span {
    int64_t sample, samples, block, c0, lanes;
  };
  Span spanOf(int64_t stack, int64_t block) const;
  /// dst (N x C x dstPlane) = blockGather over t of src (N x C x srcPlane)
  /// with wLanes_ and bLanes_: the forward (byOut_) and the input's gradient
  /// (byIn_).
  void gather(const Patterns &t, const float *src, int64_t srcPlane, float *dst,
              int64_t dstPlane) const;
};

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_DEPTHWISECONV_H
