//===- DepthwiseConv.cpp - Depthwise convolutions in blocks of planes -----===//

#include "Kernels/CPU/DepthwiseConv.h"
#include "Kernels/CPU/PlaneBlocks.h"
#include "Kernels/CPU/RoundedOperands.h"
#include "Kernels/CPU/VectorMath.h"
#include "Support/Common.h"

#include <cstdlib>
#include <cstring>
#include <map>

namespace mgs::rt::cpu {

namespace {

using Table = DepthwiseConv::Table;

using Patterns = DepthwiseConv::Patterns;

/// Small planes stack samples up to this many positions a block.
constexpr int64_t kStackedPositions = 512;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Groups of a pattern run this many at a time, each with its own sum: the
/// adds of one sum wait for each other, those of several do not.
constexpr int32_t kTogether = 4;

/// Each group's sum of its entries' products into y ([group][lane]), from
/// the lanes of b: y[g] = b + sum of w[by] * x[at] over group g's entries
/// (w: [k][lane], x: [position][lane]), the entries in order. The forward
/// with byOut, the input's gradient with byIn (x then dy, b zeros).
MGSRT_SIMD_CLONES void blockGather(const Patterns &t, const float *x, const float *w,
                                   const float *b, float *y) {
  // Locals: the stores below could alias t's arrays, for all GCC knows.
  const Patterns::Pattern *patterns = t.patterns.data();
  const Table::Entry *offsets = t.offsets.data(), *members = t.members.data();
  const size_t count = t.patterns.size();
  Floats bias;
  loadLanes(bias, b);
  for (size_t p = 0; p < count; ++p) {
    const Table::Entry *off = offsets + patterns[p].firstEntry;
    const int32_t entries = patterns[p].entries;
    const Table::Entry *m = members + patterns[p].firstGroup;
    const Table::Entry *mEnd = m + patterns[p].groups;
    for (; m + kTogether <= mEnd; m += kTogether) {
      Floats acc0 = bias, acc1 = bias, acc2 = bias, acc3 = bias;
      const float *x0 = x + m[0].at * kLanes, *x1 = x + m[1].at * kLanes,
                  *x2 = x + m[2].at * kLanes, *x3 = x + m[3].at * kLanes;
      for (int32_t e = 0; e < entries; ++e) {
        const int64_t at = off[e].at * kLanes;
        Floats wv, v0, v1, v2, v3;
        loadLanes(wv, w + off[e].by * kLanes);
        loadLanes(v0, x0 + at);
        loadLanes(v1, x1 + at);
        loadLanes(v2, x2 + at);
        loadLanes(v3, x3 + at);
        acc0 += wv * v0;
        acc1 += wv * v1;
        acc2 += wv * v2;
        acc3 += wv * v3;
      }
      storeLanes(y + m[0].by * kLanes, acc0);
      storeLanes(y + m[1].by * kLanes, acc1);
      storeLanes(y + m[2].by * kLanes, acc2);
      storeLanes(y + m[3].by * kLanes, acc3);
    }
    for (; m < mEnd; ++m) {
      Floats acc = bias;
      const float *x0 = x + m->at * kLanes;
      for (int32_t e = 0; e < entries; ++e) {
        Floats wv, v;
        loadLanes(wv, w + off[e].by * kLanes);
        loadLanes(v, x0 + off[e].at * kLanes);
        acc += wv * v;
      }
      storeLanes(y + m->by * kLanes, acc);
    }
  }
}

/// A Table's groups by pattern, each group's base its first entry's
/// position (a group with no entries: a pattern of none, base 0).
Patterns patternsOf(const Table &t) {
  Patterns out;
  std::map<std::vector<std::pair<int32_t, int32_t>>, size_t> index;
  std::vector<std::vector<Table::Entry>> members;
  const int64_t groups = static_cast<int64_t>(t.first.size()) - 1;
  for (int64_t g = 0; g < groups; ++g) {
    const int32_t begin = t.first[static_cast<size_t>(g)],
                  end = t.first[static_cast<size_t>(g) + 1];
    const int32_t base = begin < end ? t.entries[static_cast<size_t>(begin)].at : 0;
    std::vector<std::pair<int32_t, int32_t>> shape;
    for (int32_t e = begin; e < end; ++e)
      shape.emplace_back(t.entries[static_cast<size_t>(e)].at - base,
                         t.entries[static_cast<size_t>(e)].by);
    auto [it, added] = index.try_emplace(shape, out.patterns.size());
    if (added) {
      out.patterns.push_back(
          {static_cast<int32_t>(out.offsets.size()), static_cast<int32_t>(shape.size()), 0, 0});
      for (const auto &[at, by] : shape)
        out.offsets.push_back({at, by});
      members.emplace_back();
    }
    members[it->second].push_back({base, static_cast<int32_t>(g)});
  }
  for (size_t p = 0; p < members.size(); ++p) {
    out.patterns[p].firstGroup = static_cast<int32_t>(out.members.size());
    out.patterns[p].groups = static_cast<int32_t>(members[p].size());
    out.members.insert(out.members.end(), members[p].begin(), members[p].end());
  }
  return out;
}

/// One stack's weight gradient of the block into dw ([k][lane]): each
/// filter tap's sum of dy * x over its (input, output) pairs (byTap), and
/// the bias's, dy's sum, into db (lanes).
MGSRT_SIMD_CLONES void blockWeights(const Table &t, int64_t kernelTaps, int64_t outPlane,
                                    const float *x, const float *dy, float *dw, float *db) {
  const int32_t *first = t.first.data();
  const Table::Entry *entries = t.entries.data();
  for (int64_t k = 0; k < kernelTaps; ++k) {
    // Entries e, e + 1, e + 2, e + 3 into four sums, added at the end.
    Floats acc[kTogether] = {};
    int32_t e = first[k];
    const int32_t end = first[k + 1];
    for (; e + kTogether <= end; e += kTogether)
      for (int32_t j = 0; j < kTogether; ++j) {
        Floats xv, g;
        loadLanes(xv, x + entries[e + j].at * kLanes);
        loadLanes(g, dy + entries[e + j].by * kLanes);
        acc[j] += g * xv;
      }
    for (int32_t j = 0; e < end; ++e, ++j) {
      Floats xv, g;
      loadLanes(xv, x + entries[e].at * kLanes);
      loadLanes(g, dy + entries[e].by * kLanes);
      acc[j] += g * xv;
    }
    storeLanes(dw + k * kLanes, (acc[0] + acc[1]) + (acc[2] + acc[3]));
  }
  Floats bias = {};
  for (int64_t o = 0; o < outPlane; ++o) {
    Floats g;
    loadLanes(g, dy + o * kLanes);
    bias += g;
  }
  storeLanes(db, bias);
}

/// The (group, at, by) triples grouped by group (groups 0..groups-1), each
/// group's in their order.
Table groupBy(const std::vector<int32_t> &group, const std::vector<int32_t> &at,
              const std::vector<int32_t> &by, int64_t groups) {
  Table t;
  t.first.assign(static_cast<size_t>(groups + 1), 0);
  for (int32_t g : group)
    ++t.first[static_cast<size_t>(g) + 1];
  for (int64_t g = 0; g < groups; ++g)
    t.first[static_cast<size_t>(g) + 1] += t.first[static_cast<size_t>(g)];
  t.entries.resize(group.size());
  std::vector<int32_t> next(t.first.begin(), t.first.end() - 1);
  for (size_t i = 0; i < group.size(); ++i)
    t.entries[static_cast<size_t>(next[static_cast<size_t>(group[i])]++)] = {at[i], by[i]};
  return t;
}

/// acc += v, kLanes at a time.
MGSRT_SIMD_CLONES void addLanes(float *acc, const float *v, int64_t count) {
  for (int64_t i = 0; i < count; i += kLanes) {
    Floats a, b;
    loadLanes(a, acc + i);
    loadLanes(b, v + i);
    storeLanes(acc + i, a + b);
  }
}

} // namespace

bool DepthwiseConv::takes(const ConvParams &p) {
  // Read when a call site's kernel is chosen (once a call site), so that a
  // test can switch it.
  const char *choice = std::getenv("MGSRT_CONV_DEPTHWISE");
  const bool onednn = choice && std::strcmp(choice, "onednn") == 0;
  if (onednn || p.g != p.c || p.m != p.c || nativeBf16(p.precision))
    return false;
  const int64_t inPlane = product(p.in.data(), p.s), outPlane = product(p.out.data(), p.s);
  return inPlane <= kMaxPlane && outPlane <= kMaxPlane &&
         outPlane * product(p.kernel.data(), p.s) <= kMaxTaps;
}

DepthwiseConv::DepthwiseConv(const ConvParams &p)
    : n_(p.n), c_(p.c), inPlane_(product(p.in.data(), p.s)), outPlane_(product(p.out.data(), p.s)),
      taps_(product(p.kernel.data(), p.s)) {
  // As 3 spatial dims, with leading unit dims for 1-D and 2-D.
  int64_t in[3], out[3], kernel[3], stride[3], pad[3], dilation[3];
  for (int d = 0; d < 3; ++d) {
    const int64_t i = d - (3 - p.s);
    const bool real = i >= 0;
    in[d] = real ? p.in[i] : 1;
    out[d] = real ? p.out[i] : 1;
    kernel[d] = real ? p.kernel[i] : 1;
    stride[d] = real ? p.strides[i] : 1;
    pad[d] = real ? p.padsBegin[i] : 0;
    dilation[d] = real ? p.dilations[i] : 1;
  }
  // Small planes go several samples to a block (stacked: sample s's
  // positions follow sample s - 1's), so that a pattern has members enough
  // to run kTogether at once: up to kStackedPositions positions, while at
  // least 4 blocks are left for the threads.
  const int64_t plane = std::max<int64_t>({inPlane_, outPlane_, 1});
  stack_ = std::clamp<int64_t>(kStackedPositions / plane, 1, std::max<int64_t>(n_, 1));
  while (stack_ > 1 && ceilDiv(n_, stack_) * blocks() < 4)
    stack_ = (stack_ + 1) / 2;
  // Every in-bounds (output position, input position, filter tap) of the
  // stacked planes, the output positions and each one's taps in row-major
  // order.
  std::vector<int32_t> outs, ins, ks;
  for (int64_t o0 = 0, o = 0; o0 < out[0]; ++o0)
    for (int64_t o1 = 0; o1 < out[1]; ++o1)
      for (int64_t o2 = 0; o2 < out[2]; ++o2, ++o)
        for (int64_t k0 = 0; k0 < kernel[0]; ++k0) {
          const int64_t q0 = o0 * stride[0] - pad[0] + k0 * dilation[0];
          if (q0 < 0 || q0 >= in[0])
            continue;
          for (int64_t k1 = 0; k1 < kernel[1]; ++k1) {
            const int64_t q1 = o1 * stride[1] - pad[1] + k1 * dilation[1];
            if (q1 < 0 || q1 >= in[1])
              continue;
            for (int64_t k2 = 0; k2 < kernel[2]; ++k2) {
              const int64_t q2 = o2 * stride[2] - pad[2] + k2 * dilation[2];
              if (q2 < 0 || q2 >= in[2])
                continue;
              outs.push_back(static_cast<int32_t>(o));
              ins.push_back(static_cast<int32_t>((q0 * in[1] + q1) * in[2] + q2));
              ks.push_back(static_cast<int32_t>((k0 * kernel[1] + k1) * kernel[2] + k2));
            }
          }
        }
  const size_t single = outs.size();
  for (int64_t sample = 1; sample < stack_; ++sample)
    for (size_t i = 0; i < single; ++i) {
      outs.push_back(static_cast<int32_t>(outs[i] + sample * outPlane_));
      ins.push_back(static_cast<int32_t>(ins[i] + sample * inPlane_));
      ks.push_back(ks[i]);
    }
  byOut_ = patternsOf(groupBy(outs, ins, ks, stack_ * outPlane_));
  byIn_ = patternsOf(groupBy(ins, outs, ks, stack_ * inPlane_));
  byTap_ = groupBy(ks, ins, outs, taps_);
  const double work = static_cast<double>(n_ * c_) * static_cast<double>(single);
  parallel_ = work >= static_cast<double>(kParallelGrain);
}

int64_t DepthwiseConv::blocks() const { return (c_ + kLanes - 1) / kLanes; }

void DepthwiseConv::toChannelLanes(const float *v, int64_t perChannel,
                                   std::vector<float> &lanes) const {
  lanes.assign(static_cast<size_t>(blocks() * perChannel * kLanes), 0.0f);
  if (!v)
    return;
  for (int64_t ch = 0; ch < c_; ++ch)
    for (int64_t k = 0; k < perChannel; ++k)
      lanes[static_cast<size_t>(((ch / kLanes) * perChannel + k) * kLanes + ch % kLanes)] =
          v[ch * perChannel + k];
}

DepthwiseConv::Scratch DepthwiseConv::makeScratch() const {
  const size_t planes = static_cast<size_t>(kLanes * stack_ * std::max(inPlane_, outPlane_));
  return Scratch{std::vector<float>(planes), std::vector<float>(planes),
                 std::vector<float>(static_cast<size_t>((taps_ + 1) * kLanes))};
}

void DepthwiseConv::gather(const Patterns &t, const float *src, int64_t srcPlane, float *dst,
                           int64_t dstPlane) const {
  const int64_t blocks = this->blocks();
  forEachWithScratch(
      ceilDiv(n_, stack_) * blocks, parallel_, scratches_, [&] { return makeScratch(); },
      [&](int64_t item, Scratch &s) {
        // A stack's samples past the batch compute on stale scratch, and
        // nothing of theirs is written.
        const Span span = spanOf(item / blocks, item % blocks);
        for (int64_t i = 0; i < span.samples; ++i)
          toLanes(src + ((span.sample + i) * c_ + span.c0) * srcPlane, span.lanes, srcPlane,
                  s.in.data() + i * srcPlane * kLanes);
        blockGather(t, s.in.data(), wLanes_.data() + span.block * taps_ * kLanes,
                    bLanes_.data() + span.block * kLanes, s.out.data());
        for (int64_t i = 0; i < span.samples; ++i)
          fromLanes(s.out.data() + i * dstPlane * kLanes, span.lanes, dstPlane,
                    dst + ((span.sample + i) * c_ + span.c0) * dstPlane);
      });
}

void DepthwiseConv::forward(const float *x, const float *w, const float *b, float *y) const {
  toChannelLanes(w, taps_, wLanes_);
  toChannelLanes(b, 1, bLanes_);
  gather(byOut_, x, inPlane_, y, outPlane_);
}

void DepthwiseConv::backwardData(const float *dy, const float *w, float *dx) const {
  toChannelLanes(w, taps_, wLanes_);
  toChannelLanes(nullptr, 1, bLanes_);
  gather(byIn_, dy, outPlane_, dx, inPlane_);
}

void DepthwiseConv::backwardWeights(const float *x, const float *dy, float *dw, float *db) const {
  // Items: (channel block, chunk of the stacks); the chunk count depends on
  // the shape only (enough items for a few threads where the channels are
  // few), so the sums' order does not depend on the threads: per stack,
  // then over a chunk's stacks in order, then over the chunks in order.
  const int64_t blocks = this->blocks(), stacks = ceilDiv(n_, stack_);
  const int64_t chunks = std::clamp<int64_t>(ceilDiv(16, blocks), 1, std::max<int64_t>(stacks, 1));
  const int64_t perChunk = ceilDiv(stacks, chunks);
  const int64_t width = (taps_ + 1) * kLanes; // a block's weight lanes, then its bias lanes
  sums_.assign(static_cast<size_t>(blocks * chunks * width), 0.0f);
  forEachWithScratch(
      blocks * chunks, parallel_, scratches_, [&] { return makeScratch(); },
      [&](int64_t item, Scratch &s) {
        const int64_t block = item / chunks, chunk = item % chunks;
        float *acc = sums_.data() + item * width;
        for (int64_t stack = chunk * perChunk; stack < std::min(stacks, (chunk + 1) * perChunk);
             ++stack) {
          const Span span = spanOf(stack, block);
          for (int64_t i = 0; i < span.samples; ++i) {
            toLanes(x + ((span.sample + i) * c_ + span.c0) * inPlane_, span.lanes, inPlane_,
                    s.in.data() + i * inPlane_ * kLanes);
            toLanes(dy + ((span.sample + i) * c_ + span.c0) * outPlane_, span.lanes, outPlane_,
                    s.out.data() + i * outPlane_ * kLanes);
          }
          // A stack's samples past the batch add nothing: zeros.
          std::fill(s.in.begin() + span.samples * inPlane_ * kLanes, s.in.end(), 0.0f);
          std::fill(s.out.begin() + span.samples * outPlane_ * kLanes, s.out.end(), 0.0f);
          blockWeights(byTap_, taps_, stack_ * outPlane_, s.in.data(), s.out.data(),
                       s.sample.data(), s.sample.data() + taps_ * kLanes);
          addLanes(acc, s.sample.data(), width);
        }
      });
  for (int64_t block = 0; block < blocks; ++block) {
    float *total = sums_.data() + block * chunks * width;
    for (int64_t chunk = 1; chunk < chunks; ++chunk)
      addLanes(total, total + chunk * width, width);
    const int64_t c0 = block * kLanes, lanes = std::min(kLanes, c_ - c0);
    for (int64_t l = 0; l < lanes; ++l) {
      for (int64_t k = 0; k < taps_; ++k)
        dw[(c0 + l) * taps_ + k] = total[k * kLanes + l];
      if (db)
        db[c0 + l] = total[taps_ * kLanes + l];
    }
  }
}

DepthwiseConv::Span DepthwiseConv::spanOf(int64_t stack, int64_t block) const {
  Span span;
  span.sample = stack * stack_;
  span.samples = std::min(stack_, n_ - span.sample);
  span.block = block;
  span.c0 = block * kLanes;
  span.lanes = std::min(kLanes, c_ - span.c0);
  return span;
}

} // namespace mgs::rt::cpu
