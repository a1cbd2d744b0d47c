//===- Pool.cpp - Max / average pooling (ONNX semantics) ------------------===//
//
// 1-D and 2-D pools run as 3-D ones with leading unit dims. Each (n, c)
// plane is independent: the planes are split across threads, and the
// per-dim window ranges are computed once per call. In each row of output
// windows, those wholly in bounds along the last dim (all but a row's first
// and last few) run together, tap by tap with the columns as vector lanes,
// in the per-window loops' order: the same maxima, positions (the first in
// row-major window order), sums and their rounding (a NaN's sign aside).
//
// Small planes (GoogLeNet's 8x8, 4x4 and 2x2 maps) leave those runs a few
// columns long, and the cost is then per window. There the planes go in
// blocks of kLanes instead: a block is transposed so that a position's kLanes
// values lie side by side (oneDNN's nChw16c layout, made per call), and each
// window runs once over its in-bounds taps for the whole block, the planes as
// vector lanes. The taps come in the same order, so the results are the same
// bits as the row path's (the backward too: each input position gets its
// windows' gradients in window order, starting from +0, and adding +0 where
// a window's max is elsewhere changes nothing), up to which NaN comes out
// where NaNs meet (an add's operand order, which also differs by CPU).
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/PoolDesc.h"
#include "Kernels/CPU/PlaneBlocks.h"
#include "Kernels/CPU/VectorMath.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

using namespace mgs::rt;
using namespace mgs::rt::cpu;

namespace {

/// Per dim and output position: the first input position of the window, the
/// in-bounds window taps [lo, hi), and the divisor factor.
struct Windows {
  std::vector<int64_t> start[3], lo[3], hi[3];
  std::vector<double> divisor[3];

  explicit Windows(const PoolParams &p) {
    for (int i = 0; i < 3; ++i) {
      const int64_t n = p.out[i];
      start[i].resize(n);
      lo[i].resize(n);
      hi[i].resize(n);
      divisor[i].resize(n);
      for (int64_t o = 0; o < n; ++o) {
        const PoolWindow w = poolWindow(p, i, o);
        start[i][o] = w.start;
        lo[i][o] = w.lo;
        hi[i][o] = w.hi;
        divisor[i][o] = w.divisor;
      }
    }
  }
};

/// The row-major offset in the plane of the window's max (the first in
/// row-major window order on ties; padding never wins), or -1 for a window
/// with no in-bounds tap.
inline int64_t windowArgMax(const PoolParams &p, const Windows &w, const float *x, int64_t o0,
                            int64_t o1, int64_t o2) {
  const int64_t d0 = p.dilations[0], d1 = p.dilations[1], d2 = p.dilations[2];
  const int64_t s0 = w.start[0][o0], s1 = w.start[1][o1], s2 = w.start[2][o2];
  const int64_t l2 = w.lo[2][o2], h2 = w.hi[2][o2];
  int64_t best = -1;
  float bestV = 0.0f;
  for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
    const int64_t q0 = s0 + k0 * d0;
    for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1) {
      const int64_t row = (q0 * p.in[1] + s1 + k1 * d1) * p.in[2] + s2;
      for (int64_t k2 = l2; k2 < h2; ++k2) {
        const int64_t off = row + k2 * d2;
        const float v = x[off];
        if (best < 0 || v > bestV) {
          best = off;
          bestV = v;
        }
      }
    }
  }
  return best;
}

/// The output columns [first, last) whose windows are wholly in bounds in
/// dim 2 (a contiguous run: a window's start grows with its column).
struct Interior {
  int64_t first = 0, last = 0;
};

Interior interiorColumns(const PoolParams &p, const Windows &w) {
  auto whole = [&](int64_t o) { return w.lo[2][o] == 0 && w.hi[2][o] == p.kernel[2]; };
  Interior in;
  while (in.first < p.out[2] && !whole(in.first))
    ++in.first;
  in.last = in.first;
  while (in.last < p.out[2] && whole(in.last))
    ++in.last;
  return in;
}

/// The plane offsets of output row (o0, o1)'s in-bounds tap rows (dims 0
/// and 1) in row-major tap order, at column 0, into `rows`; returns how many.
int64_t tapRows(const PoolParams &p, const Windows &w, int64_t o0, int64_t o1, int64_t *rows) {
  int64_t n = 0;
  for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
    const int64_t q0 = w.start[0][o0] + k0 * p.dilations[0];
    for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1)
      rows[n++] = (q0 * p.in[1] + w.start[1][o1] + k1 * p.dilations[1]) * p.in[2];
  }
  return n;
}

/// One output row's run of interior columns: `count` windows whose first
/// taps are at x + rows[r] + c0 + j * stride (j the column in the run), each
/// with `taps` taps `dilation` apart along the row.
struct RowRun {
  const int64_t *rows;
  int64_t nRows, taps, dilation, stride, c0, count;
};

/// The run's window maxima into y and, when arg is not null, the offsets in
/// the plane of the first of each window's maxima (row-major tap order, as
/// windowArgMax): every column in step, tap by tap, without branches.
template <int64_t kStride>
inline void runMaxBody(const float *x, const RowRun &r, float *y, int64_t *arg) {
  // Locals: arg's stores could otherwise change r's fields, for all GCC knows.
  const int64_t s = kStride ? kStride : r.stride, count = r.count, nRows = r.nRows,
                taps = r.taps, c0 = r.c0, dilation = r.dilation;
  const int64_t *rows = r.rows;
  const int64_t first = rows[0] + c0;
  for (int64_t j = 0; j < count; ++j)
    y[j] = x[first + j * s];
  // Two loop nests, one per case: with the choice inside, GCC vectorizes
  // neither.
  if (!arg) {
    for (int64_t row = 0; row < nRows; ++row)
      for (int64_t t = row == 0 ? 1 : 0; t < taps; ++t) {
        const float *xs = x + rows[row] + c0 + t * dilation;
        for (int64_t j = 0; j < count; ++j) {
          const float v = xs[j * s], best = y[j];
          y[j] = v > best ? v : best;
        }
      }
    return;
  }
  for (int64_t j = 0; j < count; ++j)
    arg[j] = first + j * s;
  for (int64_t row = 0; row < nRows; ++row)
    for (int64_t t = row == 0 ? 1 : 0; t < taps; ++t) {
      const int64_t off = rows[row] + c0 + t * dilation;
      const float *xs = x + off;
      for (int64_t j = 0; j < count; ++j) {
        const float v = xs[j * s], best = y[j];
        const int64_t at = arg[j];
        const bool greater = v > best;
        y[j] = greater ? v : best;
        arg[j] = greater ? off + j * s : at;
      }
    }
}

/// The run's window sums (in double, taps in row-major order, as the
/// per-window loop adds them) into sums.
template <int64_t kStride>
inline void runSumBody(const float *x, const RowRun &r, double *sums) {
  const int64_t s = kStride ? kStride : r.stride;
  for (int64_t j = 0; j < r.count; ++j)
    sums[j] = 0.0;
  for (int64_t row = 0; row < r.nRows; ++row)
    for (int64_t t = 0; t < r.taps; ++t) {
      const float *xs = x + r.rows[row] + r.c0 + t * r.dilation;
      for (int64_t j = 0; j < r.count; ++j)
        sums[j] += xs[j * s];
    }
}

MGSRT_SIMD_CLONES void runMaxStride1(const float *x, const RowRun &r, float *y, int64_t *arg) {
  runMaxBody<1>(x, r, y, arg);
}
MGSRT_SIMD_CLONES void runMaxStride2(const float *x, const RowRun &r, float *y, int64_t *arg) {
  runMaxBody<2>(x, r, y, arg);
}
MGSRT_SIMD_CLONES void runMaxAnyStride(const float *x, const RowRun &r, float *y, int64_t *arg) {
  runMaxBody<0>(x, r, y, arg);
}
MGSRT_SIMD_CLONES void runSumStride1(const float *x, const RowRun &r, double *sums) {
  runSumBody<1>(x, r, sums);
}
MGSRT_SIMD_CLONES void runSumStride2(const float *x, const RowRun &r, double *sums) {
  runSumBody<2>(x, r, sums);
}
MGSRT_SIMD_CLONES void runSumAnyStride(const float *x, const RowRun &r, double *sums) {
  runSumBody<0>(x, r, sums);
}

void runMax(const float *x, const RowRun &r, float *y, int64_t *arg) {
  (r.stride == 1 ? runMaxStride1 : r.stride == 2 ? runMaxStride2 : runMaxAnyStride)(x, r, y, arg);
}
void runSum(const float *x, const RowRun &r, double *sums) {
  (r.stride == 1 ? runSumStride1 : r.stride == 2 ? runSumStride2 : runSumAnyStride)(x, r, sums);
}

/// A thread's room for one output row: its tap rows (as many as a window
/// has in bounds in dims 0 and 1 at most, never more than the plane's rows),
/// and per column the max's offset, the max and the sum.
struct RowScratch {
  std::vector<int64_t> rows, args;
  std::vector<float> best;
  std::vector<double> sums;
  RowScratch(const PoolParams &p, const Windows &w)
      : rows(static_cast<size_t>(std::max<int64_t>(1, mostTaps(w, 0, p.out[0]) *
                                                          mostTaps(w, 1, p.out[1])))),
        args(static_cast<size_t>(p.out[2])), best(static_cast<size_t>(p.out[2])),
        sums(static_cast<size_t>(p.out[2])) {}

  /// The most in-bounds taps of a window along dim d.
  static int64_t mostTaps(const Windows &w, int d, int64_t out) {
    int64_t most = 0;
    for (int64_t o = 0; o < out; ++o)
      most = std::max(most, w.hi[d][o] - w.lo[d][o]);
    return most;
  }
};

/// Whether a call is big enough to spread over the threads.
bool worthThreads(const PoolParams &p, int64_t items) {
  // In double: the window's taps (padding included) can overflow int64.
  const double work = static_cast<double>(p.n * p.c * p.outPlane) *
                      static_cast<double>(p.kernel[0]) * static_cast<double>(p.kernel[1]) *
                      static_cast<double>(p.kernel[2]);
  return work >= static_cast<double>(kParallelGrain) && items > 1;
}

/// body(plane, scratch) for every (n, c) plane.
template <typename Body> void forEachPlane(const PoolParams &p, const Windows &w, Body &&body) {
  const int64_t planes = p.n * p.c;
  forEachWithScratch(
      planes, worthThreads(p, planes), [&] { return RowScratch(p, w); }, body);
}

/// The interior run of output row (o0, o1), its tap rows in scratch.rows;
/// count 0 when the row has none (every column then goes the per-window way).
RowRun interiorRun(const PoolParams &p, const Windows &w, const Interior &in, int64_t o0,
                   int64_t o1, RowScratch &scratch) {
  RowRun r{scratch.rows.data(), 0, p.kernel[2], p.dilations[2], p.strides[2], 0, 0};
  if (in.last <= in.first)
    return r;
  r.nRows = tapRows(p, w, o0, o1, scratch.rows.data());
  r.c0 = w.start[2][in.first];
  r.count = r.nRows > 0 ? in.last - in.first : 0;
  return r;
}

/// The ONNX index output of a max at plane offset `arg` (-1: none).
int64_t maxIndex(const PoolParams &p, int64_t plane, int64_t arg) {
  if (arg < 0)
    return -1;
  const int64_t q2 = arg % p.in[2], q1 = (arg / p.in[2]) % p.in[1], q0 = arg / (p.in[2] * p.in[1]);
  return plane * p.inPlane + onnxIndex(p, q0, q1, q2);
}

/// The average of window (o0, o1, o2), taps in row-major order.
float windowAverage(const PoolParams &p, const Windows &w, const float *xp, int64_t o0,
                    int64_t o1, int64_t o2) {
  const double div = w.divisor[0][o0] * w.divisor[1][o1] * w.divisor[2][o2];
  double sum = 0.0;
  const int64_t s0 = w.start[0][o0], s1 = w.start[1][o1], s2 = w.start[2][o2];
  for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
    const int64_t q0 = s0 + k0 * p.dilations[0];
    for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1) {
      const float *row = xp + (q0 * p.in[1] + s1 + k1 * p.dilations[1]) * p.in[2] + s2;
      for (int64_t k2 = w.lo[2][o2]; k2 < w.hi[2][o2]; ++k2)
        sum += row[k2 * p.dilations[2]];
    }
  }
  return div > 0.0 ? static_cast<float>(sum / div) : 0.0f;
}

/// Output row (o0, o1)'s maxima into scratch.best and, with `args`, their
/// offsets (windowArgMax's) into scratch.args, through the interior run where
/// there is one.
void rowMax(const PoolParams &p, const Windows &w, const Interior &in, const float *xp,
            int64_t o0, int64_t o1, bool args, RowScratch &scratch) {
  const RowRun r = interiorRun(p, w, in, o0, o1, scratch);
  if (r.count > 0)
    runMax(xp, r, scratch.best.data() + in.first,
           args ? scratch.args.data() + in.first : nullptr);
  for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
    if (r.count > 0 && o2 >= in.first && o2 < in.last)
      continue;
    const int64_t arg = windowArgMax(p, w, xp, o0, o1, o2);
    scratch.args[o2] = arg;
    // A window with no in-bounds tap (pads wider than the window) yields 0
    // and index -1, as ONNX's 2-D reference does.
    scratch.best[o2] = arg >= 0 ? xp[arg] : 0.0f;
  }
}

//===- Blocks of planes ---------------------------------------------------===//

/// The block path takes planes of at most this many positions, in and out (a
/// block's transposed input, output and maxima then fit in 256 KiB each) ...
constexpr int64_t kBlockMaxPlane = 4096;
/// ... and at most this many in-bounds taps over all of a plane's windows.
constexpr int64_t kBlockMaxTaps = 1 << 20;

/// The in-bounds taps of every window of a plane, as plane offsets in
/// row-major window order: window o's are taps[first[o], first[o + 1]).
struct TapTable {
  std::vector<int32_t> first, taps;
  std::vector<double> divisor; // per window (average pools)
};

/// The in-bounds taps over all of a plane's windows (the dims' counts
/// multiply: a window's taps are the product of its per-dim ranges).
int64_t totalTaps(const PoolParams &p, const Windows &w) {
  int64_t total = 1;
  for (int d = 0; d < 3; ++d) {
    int64_t sum = 0;
    for (int64_t o = 0; o < p.out[d]; ++o)
      sum += w.hi[d][o] - w.lo[d][o];
    if (sum == 0)
      return 0;
    if (total > kBlockMaxTaps / sum)
      return kBlockMaxTaps + 1;
    total *= sum;
  }
  return total;
}

/// Whether the block path takes a call. Measured on 2 AVX-512 cores (batch
/// 32): it runs GoogLeNet's max pools 2x to 30x faster than the row path,
/// and 64x64 maps still 1.2x; an average pool's forward sums its lanes in
/// double, twice as wide: it won at rows of 16 windows and lost at 24, so
/// rows of 20 or more stay on the row path.
bool useBlocks(const PoolParams &p, const Windows &w, bool forward) {
  if (p.inPlane > kBlockMaxPlane || p.outPlane > kBlockMaxPlane || totalTaps(p, w) > kBlockMaxTaps)
    return false;
  const Interior in = interiorColumns(p, w);
  return p.kind == MGSRT_POOL_MAX || !forward || in.last - in.first < 20;
}

TapTable tapTable(const PoolParams &p, const Windows &w) {
  TapTable t;
  t.first.reserve(static_cast<size_t>(p.outPlane + 1));
  t.taps.reserve(static_cast<size_t>(totalTaps(p, w)));
  t.divisor.reserve(static_cast<size_t>(p.outPlane));
  // Each output row's tap rows (tapRows, as the row path takes them), then
  // along each of them the window's columns.
  std::vector<int64_t> rows(static_cast<size_t>(std::max<int64_t>(
      1, RowScratch::mostTaps(w, 0, p.out[0]) * RowScratch::mostTaps(w, 1, p.out[1]))));
  for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
      const int64_t nRows = tapRows(p, w, o0, o1, rows.data());
      for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
        t.first.push_back(static_cast<int32_t>(t.taps.size()));
        t.divisor.push_back(w.divisor[0][o0] * w.divisor[1][o1] * w.divisor[2][o2]);
        for (int64_t r = 0; r < nRows; ++r)
          for (int64_t k2 = w.lo[2][o2]; k2 < w.hi[2][o2]; ++k2)
            t.taps.push_back(
                static_cast<int32_t>(rows[r] + w.start[2][o2] + k2 * p.dilations[2]));
      }
    }
  t.first.push_back(static_cast<int32_t>(t.taps.size()));
  return t;
}

/// A thread's room for one block: its input and output transposed (the
/// input's gradient reuses `in`), and the offsets of the maxima.
struct BlockScratch {
  std::vector<float> in, out;
  std::vector<int32_t> arg;
  explicit BlockScratch(const PoolParams &p)
      : in(static_cast<size_t>(kLanes * p.inPlane)), out(static_cast<size_t>(kLanes * p.outPlane)),
        arg(p.kind == MGSRT_POOL_MAX ? static_cast<size_t>(kLanes * p.outPlane) : 0) {}
};

// The maxima's offsets and the average's double sums, beside PlaneBlocks.h's
// Floats.
typedef int32_t Ints __attribute__((vector_size(kLanes * sizeof(int32_t))));
typedef double Doubles __attribute__((vector_size(kLanes * sizeof(double))));

/// Each window's max in every lane into best, and the offset of its first
/// max (row-major window order) into arg; 0 and -1 for a window with no tap.
MGSRT_SIMD_CLONES void blockMax(const TapTable &t, int64_t windows, const float *x, float *best,
                                int32_t *arg) {
  // Locals: the stores below could alias t's arrays, for all GCC knows.
  const int32_t *first = t.first.data(), *taps = t.taps.data();
  for (int64_t o = 0; o < windows; ++o) {
    const int32_t begin = first[o], end = first[o + 1];
    Floats b = {};
    Ints a = Ints{} - 1;
    if (begin < end) {
      loadLanes(b, x + taps[begin] * kLanes);
      a = Ints{} + taps[begin];
    }
    for (int32_t k = begin + 1; k < end; ++k) {
      Floats v;
      loadLanes(v, x + taps[k] * kLanes);
      const Ints greater = v > b;
      b = greater ? v : b;
      a = greater ? Ints{} + taps[k] : a;
    }
    storeLanes(best + o * kLanes, b);
    storeLanes(arg + o * kLanes, a);
  }
}

/// dx (zeroed here) of a max pool: each window's dy added at its max, the
/// windows in order.
MGSRT_SIMD_CLONES void blockMaxGrad(const TapTable &t, int64_t windows, int64_t inPlane,
                                    const int32_t *arg, const float *dy, float *dx) {
  std::fill(dx, dx + inPlane * kLanes, 0.0f);
  const int32_t *first = t.first.data(), *taps = t.taps.data();
  for (int64_t o = 0; o < windows; ++o) {
    Ints a;
    Floats g;
    loadLanes(a, arg + o * kLanes);
    loadLanes(g, dy + o * kLanes);
    for (int32_t k = first[o], end = first[o + 1]; k < end; ++k) {
      float *d = dx + taps[k] * kLanes;
      Floats sum;
      loadLanes(sum, d);
      storeLanes(d, sum + (a == taps[k] ? g : Floats{}));
    }
  }
}

/// Each window's average (its taps summed in double, in order).
MGSRT_SIMD_CLONES void blockAverage(const TapTable &t, int64_t windows, const float *x, float *y) {
  const int32_t *first = t.first.data(), *taps = t.taps.data();
  for (int64_t o = 0; o < windows; ++o) {
    Doubles sum = {};
    for (int32_t k = first[o], end = first[o + 1]; k < end; ++k) {
      Floats v;
      loadLanes(v, x + taps[k] * kLanes);
      sum += __builtin_convertvector(v, Doubles);
    }
    const double div = t.divisor[o];
    const Floats avg = __builtin_convertvector(sum / div, Floats);
    storeLanes(y + o * kLanes, div > 0.0 ? avg : Floats{});
  }
}

/// dx (zeroed here) of an average pool: each window's dy / divisor added at
/// each of its taps, the windows in order.
MGSRT_SIMD_CLONES void blockAverageGrad(const TapTable &t, int64_t windows, int64_t inPlane,
                                        const float *dy, float *dx) {
  std::fill(dx, dx + inPlane * kLanes, 0.0f);
  const int32_t *first = t.first.data(), *taps = t.taps.data();
  for (int64_t o = 0; o < windows; ++o) {
    const double div = t.divisor[o];
    if (div <= 0.0)
      continue;
    Floats dyLanes;
    loadLanes(dyLanes, dy + o * kLanes);
    const Floats g =
        __builtin_convertvector(__builtin_convertvector(dyLanes, Doubles) / div, Floats);
    for (int32_t k = first[o], end = first[o + 1]; k < end; ++k) {
      float *d = dx + taps[k] * kLanes;
      Floats sum;
      loadLanes(sum, d);
      storeLanes(d, sum + g);
    }
  }
}

/// body(first plane, planes, scratch) for every block of planes.
template <typename Body> void forEachBlock(const PoolParams &p, Body &&body) {
  const int64_t planes = p.n * p.c, blocks = (planes + kLanes - 1) / kLanes;
  forEachWithScratch(
      blocks, worthThreads(p, blocks), [&] { return BlockScratch(p); },
      [&](int64_t b, BlockScratch &scratch) {
        body(b * kLanes, std::min(kLanes, planes - b * kLanes), scratch);
      });
}

void blockFwd(const PoolParams &p, const Windows &w, const float *x, float *y, int64_t *indices) {
  const TapTable t = tapTable(p, w);
  forEachBlock(p, [&](int64_t plane0, int64_t lanes, BlockScratch &s) {
    toLanes(x + plane0 * p.inPlane, lanes, p.inPlane, s.in.data());
    if (p.kind == MGSRT_POOL_MAX)
      blockMax(t, p.outPlane, s.in.data(), s.out.data(), s.arg.data());
    else
      blockAverage(t, p.outPlane, s.in.data(), s.out.data());
    fromLanes(s.out.data(), lanes, p.outPlane, y + plane0 * p.outPlane);
    if (indices)
      for (int64_t l = 0; l < lanes; ++l)
        for (int64_t o = 0; o < p.outPlane; ++o)
          indices[(plane0 + l) * p.outPlane + o] = maxIndex(p, plane0 + l, s.arg[o * kLanes + l]);
  });
}

void blockBwd(const PoolParams &p, const Windows &w, const float *x, const float *dy, float *dx) {
  const TapTable t = tapTable(p, w);
  forEachBlock(p, [&](int64_t plane0, int64_t lanes, BlockScratch &s) {
    if (p.kind == MGSRT_POOL_MAX) {
      // The maxima again (their values land in s.out, then dy's lanes do).
      toLanes(x + plane0 * p.inPlane, lanes, p.inPlane, s.in.data());
      blockMax(t, p.outPlane, s.in.data(), s.out.data(), s.arg.data());
      toLanes(dy + plane0 * p.outPlane, lanes, p.outPlane, s.out.data());
      blockMaxGrad(t, p.outPlane, p.inPlane, s.arg.data(), s.out.data(), s.in.data());
    } else {
      toLanes(dy + plane0 * p.outPlane, lanes, p.outPlane, s.out.data());
      blockAverageGrad(t, p.outPlane, p.inPlane, s.out.data(), s.in.data());
    }
    fromLanes(s.in.data(), lanes, p.inPlane, dx + plane0 * p.inPlane);
  });
}

mgsrt_status_t poolFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::pool_fwd);
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkPoolFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  int64_t *indices = p.kind == MGSRT_POOL_MAX ? static_cast<int64_t *>(bufs[2]) : nullptr;
  const Windows w(p);
  if (useBlocks(p, w, true)) {
    blockFwd(p, w, x, y, indices);
    return MGSRT_OK;
  }
  const Interior in = interiorColumns(p, w);
  const bool isMax = p.kind == MGSRT_POOL_MAX;
  forEachPlane(p, w, [&](int64_t plane, RowScratch &scratch) {
    const float *xp = x + plane * p.inPlane;
    for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
        const int64_t rowStart = plane * p.outPlane + (o0 * p.out[1] + o1) * p.out[2];
        float *yr = y + rowStart;
        if (isMax) {
          rowMax(p, w, in, xp, o0, o1, indices != nullptr, scratch);
          std::memcpy(yr, scratch.best.data(), sizeof(float) * p.out[2]);
          if (indices)
            for (int64_t o2 = 0; o2 < p.out[2]; ++o2)
              indices[rowStart + o2] = maxIndex(p, plane, scratch.args[o2]);
          continue;
        }
        const RowRun r = interiorRun(p, w, in, o0, o1, scratch);
        if (r.count > 0) {
          runSum(xp, r, scratch.sums.data());
          for (int64_t j = 0; j < r.count; ++j) {
            const int64_t o2 = in.first + j;
            const double div = w.divisor[0][o0] * w.divisor[1][o1] * w.divisor[2][o2];
            yr[o2] = div > 0.0 ? static_cast<float>(scratch.sums[j] / div) : 0.0f;
          }
        }
        for (int64_t o2 = 0; o2 < p.out[2]; ++o2)
          if (!(r.count > 0 && o2 >= in.first && o2 < in.last))
            yr[o2] = windowAverage(p, w, xp, o0, o1, o2);
      }
  });
  return MGSRT_OK;
}

mgsrt_status_t poolBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::pool_bwd);
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkPoolBwdBufs(ctx, kernel, bufs, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  const Windows w(p);
  if (useBlocks(p, w, false)) {
    blockBwd(p, w, x, dy, dx);
    return MGSRT_OK;
  }
  const Interior in = interiorColumns(p, w);
  const bool isMax = p.kind == MGSRT_POOL_MAX;
  forEachPlane(p, w, [&](int64_t plane, RowScratch &scratch) {
    const float *xp = isMax ? x + plane * p.inPlane : nullptr;
    const float *dyp = dy + plane * p.outPlane;
    float *dxp = dx + plane * p.inPlane;
    std::memset(dxp, 0, sizeof(float) * p.inPlane);
    int64_t oi = 0;
    for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
        if (isMax) {
          // Scattered in column order, as the forward's windows come.
          rowMax(p, w, in, xp, o0, o1, true, scratch);
          for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++oi)
            if (scratch.args[o2] >= 0)
              dxp[scratch.args[o2]] += dyp[oi];
          continue;
        }
        for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++oi) {
          const double div = w.divisor[0][o0] * w.divisor[1][o1] * w.divisor[2][o2];
          if (div <= 0.0)
            continue;
          const float g = static_cast<float>(dyp[oi] / div);
          const int64_t s0 = w.start[0][o0], s1 = w.start[1][o1], s2 = w.start[2][o2];
          for (int64_t k0 = w.lo[0][o0]; k0 < w.hi[0][o0]; ++k0) {
            const int64_t q0 = s0 + k0 * p.dilations[0];
            for (int64_t k1 = w.lo[1][o1]; k1 < w.hi[1][o1]; ++k1) {
              float *row = dxp + (q0 * p.in[1] + s1 + k1 * p.dilations[1]) * p.in[2] + s2;
              for (int64_t k2 = w.lo[2][o2]; k2 < w.hi[2][o2]; ++k2)
                row[k2 * p.dilations[2]] += g;
            }
          }
        }
      }
  });
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t pool_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::pool_fwd), desc, bufs, [&] { return poolFwd(ctx, desc, bufs); });
}
mgsrt_status_t pool_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::pool_bwd), desc, bufs, [&] { return poolBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
