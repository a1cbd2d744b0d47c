//===- TopK.cpp - Top-k sparsification with error feedback, scatter-add ---===//
//
// mgsrt_topk_sparsify selects exactly the k entries of largest magnitude of
// acc = grad + residual (ties: the lower index wins) near the memory bound.
// Magnitudes are compared as keys: the bits of |x| as an unsigned integer
// (for IEEE floats the order of |x| is the order of those bits), with every
// NaN mapped to one key just above +inf's.
//
// Two algorithms with the same, exact result:
//  - sample (the common case, k <= n / 32 and n >= 2^16): the keys of a
//    stratified sample of 2^15 entries (2048 runs of 16) give a key t0 that,
//    with overwhelming probability, between k and ~2k entries reach (DGC's
//    sampling, made exact). One fused pass stores acc into residual and
//    collects the entries whose key reaches t0 (the candidates, in index
//    order; 16 entries are tested at a time with SSE2). If at least k and not
//    too many were collected, the k-th key among them is the threshold
//    (nth_element) and a scan of the candidates writes the selection.
//    Reading grad and residual once and writing residual once is the least
//    traffic the interface allows; the rest touches O(k) data and is serial.
//  - radix (k > n / 32, small n, and the fallback when the sample misled):
//    radix select over the keys with 11/11/9-bit digits. Per-chunk
//    histograms find the digit of the k-th key round by round (a round
//    stops early once its bucket is taken whole; the first round is fused
//    with storing acc); a last pass writes every entry above the threshold
//    and the first `need` entries equal to it, each chunk at offsets known
//    from its histograms, so the output is in ascending index order.
// The passes over the array run on OpenMP threads over chunks handed out
// dynamically (16 per thread), so a preempted thread delays little.
//
// MGSRT_TOPK_ALGORITHM=radix|sample forces one algorithm (tests, debugging;
// "sample" still falls back to radix when the sample misleads it).
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/TopKDesc.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include <omp.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

using namespace mgs::rt;

namespace {

constexpr uint32_t kAbsMask = 0x7fffffffu;
/// The key of every NaN: above +inf's (0x7f800000), so NaNs rank first and
/// tie with each other.
constexpr uint32_t kNaNKey = 0x7f800001u;

inline uint32_t rawKey(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u & kAbsMask;
}

inline uint32_t keyOf(float x) {
  uint32_t u = rawKey(x);
  return u > kNaNKey ? kNaNKey : u;
}

struct Candidate {
  int32_t index;
  float value;
};

/// Scratch memory kept per call site, so steady-state calls do not allocate.
struct TopKScratch : KernelCache {
  std::vector<std::vector<Candidate>> candidates; // per block, in index order
  std::vector<uint32_t> keys;
  std::vector<uint32_t> hist; // blocks x kSubHists x kBuckets
};

/// Contiguous chunks of [0, n), more than there are threads: every pass
/// uses the same chunks (so per-chunk counts from one pass are valid in the
/// next) and hands them out dynamically, so a thread the OS preempts does not
/// hold up the others for a whole static share.
struct Blocks {
  int count;   // chunks
  int threads; // OpenMP threads working on them
  int64_t n;
  int64_t begin(int b) const { return n * b / count; }
  int64_t end(int b) const { return n * (b + 1) / count; }
};

Blocks makeBlocks(int64_t n) {
  const int64_t threads = std::max<int64_t>(
      1, std::min<int64_t>(omp_get_max_threads(), n / kParallelGrain));
  const int64_t count = threads == 1 ? 1 : std::min<int64_t>(n / kParallelGrain, 16 * threads);
  return {static_cast<int>(count), static_cast<int>(threads), n};
}

int blockCount(int64_t n) { return makeBlocks(n).threads; }

//===----------------------------------------------------------------------===//
// Sample
//===----------------------------------------------------------------------===//

constexpr int64_t kSampleSize = 1 << 15;

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The key that about k + 4 sigma of the n entries reach, estimated from a
/// stratified sample: one run of consecutive entries (16, a cache line, so
/// the sample costs few memory accesses; 1 for small n) from each of equal
/// strata. `expected` gets the number of entries expected to reach it.
uint32_t sampleThreshold(const float *grad, const float *residual, int64_t n, int64_t k,
                         std::vector<uint32_t> &keys, double &expected) {
  const int64_t runLength = n >= (1 << 16) ? 16 : 1;
  const int64_t runs = std::min(kSampleSize, n / 2) / runLength;
  const int64_t stratum = n / runs;
  const uint64_t offsets = static_cast<uint64_t>(stratum - runLength + 1);
  const int64_t s = runs * runLength;
  keys.resize(s);
  uint32_t *sample = keys.data();
  for (int64_t j = 0; j < runs; ++j) {
    const int64_t p = j * stratum + static_cast<int64_t>(((mix64(j + 1) >> 32) * offsets) >> 32);
    for (int64_t q = 0; q < runLength; ++q)
      sample[j * runLength + q] = keyOf(grad[p + q] + residual[p + q]);
  }
  const double e = static_cast<double>(s) * k / n;
  const int64_t m =
      std::min<int64_t>(s, static_cast<int64_t>(std::ceil(e + 4.0 * std::sqrt(e) + 4.0)));
  std::nth_element(keys.begin(), keys.begin() + (m - 1), keys.end(), std::greater<uint32_t>());
  expected = static_cast<double>(m) * n / s;
  return keys[m - 1];
}

/// residual = grad + residual over [begin, end); appends the entries whose
/// key reaches t0 (at most `cap`). Returns false when `out` overflowed (the
/// sum is stored regardless). Chunks of 16 are compared with t0 as floats,
/// !(|a| < t0f), which holds for every key >= t0 and for NaN (and, with
/// denormals flushed, for a superset); a set bit is then checked exactly.
bool addAndCollectRange(const float *__restrict grad, float *__restrict residual, int64_t begin,
                        int64_t end, uint32_t t0, size_t cap, std::vector<Candidate> &out) {
  float t0f;
  std::memcpy(&t0f, &t0, sizeof t0f);
  bool full = false;
  auto take = [&](int64_t i) {
    const float v = residual[i];
    if (keyOf(v) < t0)
      return;
    if (out.size() >= cap) {
      full = true;
      return;
    }
    try {
      out.push_back({static_cast<int32_t>(i), v});
    } catch (...) { // out of memory: the radix path needs none
      full = true;
    }
  };
  int64_t i = begin;
#if defined(__SSE2__)
  const __m128 absMask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  const __m128 threshold = _mm_set1_ps(t0f);
  for (; i + 16 <= end; i += 16) {
    unsigned hits = 0;
    for (int q = 0; q < 4; ++q) {
      __m128 a = _mm_add_ps(_mm_loadu_ps(grad + i + 4 * q), _mm_loadu_ps(residual + i + 4 * q));
      _mm_storeu_ps(residual + i + 4 * q, a);
      hits |= static_cast<unsigned>(
                  _mm_movemask_ps(_mm_cmpnlt_ps(_mm_and_ps(a, absMask), threshold)))
              << (4 * q);
    }
    for (; hits && !full; hits &= hits - 1)
      take(i + __builtin_ctz(hits));
  }
#else
  for (; i + 16 <= end; i += 16) {
    unsigned hits = 0;
    for (int j = 0; j < 16; ++j) {
      float a = grad[i + j] + residual[i + j];
      residual[i + j] = a;
      hits |= static_cast<unsigned>(!(std::fabs(a) < t0f)) << j;
    }
    for (int j = 0; hits && !full; ++j, hits >>= 1)
      if (hits & 1)
        take(i + j);
  }
#endif
  for (; i < end; ++i) {
    residual[i] = grad[i] + residual[i];
    if (!full)
      take(i);
  }
  return !full;
}

/// addAndCollectRange over every block, in parallel.
bool addAndCollect(const float *grad, float *residual, const Blocks &blocks, uint32_t t0,
                   size_t cap, std::vector<std::vector<Candidate>> &candidates) {
  int overflow = 0;
#pragma omp parallel for num_threads(blocks.threads) if (blocks.threads > 1) \
    schedule(dynamic, 1) reduction(| : overflow)
  for (int b = 0; b < blocks.count; ++b) {
    candidates[b].clear();
    if (!addAndCollectRange(grad, residual, blocks.begin(b), blocks.end(b), t0, cap,
                            candidates[b]))
      overflow = 1;
  }
  return overflow == 0;
}

/// Writes the top k of the candidates (all entries whose key reaches some t0,
/// at least k of them) and zeroes them in residual. Serial: it touches O(k)
/// data, and short parallel regions cost more than they save whenever the OS
/// preempts one of their threads.
void selectFromCandidates(const std::vector<std::vector<Candidate>> &candidates, int chunks,
                          int64_t k, float *residual, float *values, int32_t *indices,
                          std::vector<uint32_t> &keys) {
  keys.clear();
  for (int b = 0; b < chunks; ++b)
    for (const Candidate &c : candidates[b])
      keys.push_back(keyOf(c.value));
  std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end(), std::greater<uint32_t>());
  const uint32_t threshold = keys[k - 1];
  int64_t above = 0;
  for (uint32_t u : keys)
    above += u > threshold;
  int64_t needEqual = k - above; // the first ones in index order are taken
  int64_t o = 0;
  for (int b = 0; b < chunks; ++b) {
    for (const Candidate &c : candidates[b]) {
      const uint32_t u = keyOf(c.value);
      if (u < threshold || (u == threshold && needEqual == 0))
        continue;
      if (u == threshold)
        --needEqual;
      values[o] = c.value;
      indices[o] = c.index;
      residual[c.index] = 0.0f;
      ++o;
    }
  }
}

//===----------------------------------------------------------------------===//
// Radix select
//===----------------------------------------------------------------------===//

constexpr int kBuckets = 2048;
/// Interleaved histograms per block, so runs of equal keys do not serialize
/// on one counter.
constexpr int kSubHists = 4;

struct Digit {
  int shift;
  uint32_t mask;
};
/// Keys have 31 significant bits: 11 + 11 + 9.
constexpr Digit kDigits[3] = {{20, 2047}, {9, 2047}, {0, 511}};

/// Bit j of the result is set when the key of p[j] (j < 16), shifted right
/// by `shift`, equals `prefix` (kAtLeast: is at least `prefix`).
template <bool kAtLeast>
inline unsigned prefixMask16(const float *p, int shift, uint32_t prefix) {
  unsigned mask = 0;
#if defined(__SSE2__)
  const __m128i absMask = _mm_set1_epi32(0x7fffffff), nanKey = _mm_set1_epi32(kNaNKey);
  const __m128i pfx = _mm_set1_epi32(static_cast<int>(prefix));
  const __m128i count = _mm_cvtsi32_si128(shift);
  for (int q = 0; q < 4; ++q) {
    // keyOf, four at a time (keys are below 2^31: signed compares work).
    __m128i raw = _mm_and_si128(_mm_castps_si128(_mm_loadu_ps(p + 4 * q)), absMask);
    __m128i isNaN = _mm_cmpgt_epi32(raw, nanKey);
    __m128i key = _mm_or_si128(_mm_andnot_si128(isNaN, raw), _mm_and_si128(isNaN, nanKey));
    __m128i digits = _mm_srl_epi32(key, count);
    unsigned bits;
    if constexpr (kAtLeast)
      bits = ~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(pfx, digits))) & 0xFu;
    else
      bits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(digits, pfx)));
    mask |= bits << (4 * q);
  }
#else
  for (int j = 0; j < 16; ++j) {
    const uint32_t d = keyOf(p[j]) >> shift;
    mask |= static_cast<unsigned>(kAtLeast ? d >= prefix : d == prefix) << j;
  }
#endif
  return mask;
}

/// Selects the top k of acc (in residual; `grad` non-null: acc is
/// grad + residual and is stored first, fused with the first round).
void radixSelect(const float *__restrict grad, float *__restrict residual, const Blocks &blocks,
                 int64_t k, float *values, int32_t *indices, std::vector<uint32_t> &histStore) {
  const int B = blocks.count, T = blocks.threads;
  const size_t perBlock = static_cast<size_t>(kSubHists) * kBuckets;
  histStore.resize(perBlock * B);
  uint32_t *hist = histStore.data();
  std::vector<int64_t> aboveInBlock(B, 0), equalInBlock(B, 0);

  // The entries whose key >> prefixShift equals prefix are still undecided;
  // `need` of them are to be taken.
  uint32_t prefix = 0;
  int prefixShift = 31;
  int64_t need = k;
  for (int round = 0; round < 3; ++round) {
    const Digit d = kDigits[round];
    const uint32_t pfx = prefix;
    const int pshift = prefixShift;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(dynamic, 1)
    for (int b = 0; b < B; ++b) {
      uint32_t *h = hist + perBlock * b;
      std::fill(h, h + perBlock, 0u);
      int64_t i = blocks.begin(b);
      const int64_t end = blocks.end(b);
      if (round == 0 && grad) {
        for (; i + kSubHists <= end; i += kSubHists) {
          for (int s = 0; s < kSubHists; ++s) {
            float a = grad[i + s] + residual[i + s];
            residual[i + s] = a;
            ++h[s * kBuckets + (keyOf(a) >> d.shift)];
          }
        }
        for (; i < end; ++i) {
          float a = grad[i] + residual[i];
          residual[i] = a;
          ++h[keyOf(a) >> d.shift];
        }
      } else if (round == 0) {
        for (; i + kSubHists <= end; i += kSubHists)
          for (int s = 0; s < kSubHists; ++s)
            ++h[s * kBuckets + (keyOf(residual[i + s]) >> d.shift)];
        for (; i < end; ++i)
          ++h[keyOf(residual[i]) >> d.shift];
      } else {
        // Few entries match the prefix: find them 16 at a time.
        for (; i + 16 <= end; i += 16)
          for (unsigned m = prefixMask16<false>(residual + i, pshift, pfx); m; m &= m - 1)
            ++h[(keyOf(residual[i + __builtin_ctz(m)]) >> d.shift) & d.mask];
        for (; i < end; ++i) {
          const uint32_t u = keyOf(residual[i]);
          if ((u >> pshift) == pfx)
            ++h[(u >> d.shift) & d.mask];
        }
      }
      for (int s = 1; s < kSubHists; ++s)
        for (int j = 0; j < kBuckets; ++j)
          h[j] += h[s * kBuckets + j];
    }
    // The bucket holding the need-th largest undecided key.
    int64_t cumulative = 0;
    int bucket = static_cast<int>(d.mask);
    int64_t inBucket = 0;
    for (; bucket >= 0; --bucket) {
      inBucket = 0;
      for (int b = 0; b < B; ++b)
        inBucket += hist[perBlock * b + bucket];
      if (cumulative + inBucket >= need)
        break;
      cumulative += inBucket;
    }
    for (int b = 0; b < B; ++b) {
      const uint32_t *h = hist + perBlock * b;
      for (int j = bucket + 1; j <= static_cast<int>(d.mask); ++j)
        aboveInBlock[b] += h[j];
      equalInBlock[b] = h[bucket];
    }
    need -= cumulative;
    prefix = (prefixShift == 31 ? 0u : prefix << (prefixShift - d.shift)) |
             static_cast<uint32_t>(bucket);
    prefixShift = d.shift;
    if (need == inBucket)
      break; // the whole bucket is taken
  }

  // Output offsets: the entries above, then each block's share of the first
  // `need` entries equal to the threshold prefix.
  std::vector<int64_t> offset(B), quota(B);
  int64_t equalBefore = 0, o = 0;
  for (int b = 0; b < B; ++b) {
    quota[b] = std::clamp<int64_t>(need - equalBefore, 0, equalInBlock[b]);
    equalBefore += equalInBlock[b];
    offset[b] = o;
    o += aboveInBlock[b] + quota[b];
  }
  const uint32_t pfx = prefix;
  const int pshift = prefixShift;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(dynamic, 1)
  for (int b = 0; b < B; ++b) {
    int64_t out = offset[b], left = quota[b];
    auto visit = [&](int64_t i) {
      const uint32_t p = keyOf(residual[i]) >> pshift;
      if (p < pfx || (p == pfx && left == 0))
        return;
      if (p == pfx)
        --left;
      values[out] = residual[i];
      indices[out] = static_cast<int32_t>(i);
      residual[i] = 0.0f;
      ++out;
    };
    int64_t i = blocks.begin(b);
    const int64_t end = blocks.end(b);
    for (; i + 16 <= end; i += 16)
      for (unsigned m = prefixMask16<true>(residual + i, pshift, pfx); m; m &= m - 1)
        visit(i + __builtin_ctz(m));
    for (; i < end; ++i)
      visit(i);
  }
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

mgsrt_status_t topkSparsify(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  if (!checkTopKDesc(ctx, desc, bufs))
    return ctx->status;
  const int64_t n = desc[mgs::contract::TopKDesc::Count], k = desc[mgs::contract::TopKDesc::K];
  const float *grad = static_cast<const float *>(bufs[0]);
  float *residual = static_cast<float *>(bufs[1]);
  float *values = static_cast<float *>(bufs[2]);
  int32_t *indices = static_cast<int32_t *>(bufs[3]);

  enum class Algorithm { Auto, Sample, Radix } algorithm = Algorithm::Auto;
  if (const char *env = std::getenv("MGSRT_TOPK_ALGORITHM")) {
    if (std::strcmp(env, "sample") == 0)
      algorithm = Algorithm::Sample;
    else if (std::strcmp(env, "radix") == 0)
      algorithm = Algorithm::Radix;
  }
  const bool trySample = algorithm == Algorithm::Sample
                             ? n >= 4
                             : algorithm == Algorithm::Auto && n >= (1 << 16) && k * 32 <= n;

  TopKScratch &scratch = getCache<TopKScratch>(ctx, desc);
  const Blocks blocks = makeBlocks(n);
  if (scratch.candidates.size() < static_cast<size_t>(blocks.count))
    scratch.candidates.resize(blocks.count);

  bool accStored = false;
  if (trySample) {
    double expected = 0;
    const uint32_t t0 =
        sampleThreshold(grad, residual, n, k, scratch.keys, expected);
    // t0 == 0 would collect everything; a NaN t0 cannot be compared as a float.
    if (t0 > 0 && t0 <= 0x7f800000u) {
      const size_t cap = static_cast<size_t>(4.0 * expected) + 4096;
      bool complete = addAndCollect(grad, residual, blocks, t0, cap, scratch.candidates);
      accStored = true;
      size_t total = 0;
      for (int b = 0; b < blocks.count; ++b)
        total += scratch.candidates[b].size();
      if (complete && total >= static_cast<size_t>(k)) {
        selectFromCandidates(scratch.candidates, blocks.count, k, residual, values, indices,
                             scratch.keys);
        return MGSRT_OK;
      }
    }
  }
  radixSelect(accStored ? nullptr : grad, residual, blocks, k, values, indices, scratch.hist);
  return MGSRT_OK;
}

struct ScatterScratch : KernelCache {
  std::vector<uint64_t> divided; // one bit per output element
};

mgsrt_status_t scatterAdd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  if (!checkScatterAddDesc(ctx, desc, bufs))
    return ctx->status;
  using F = mgs::contract::ScatterAddDesc;
  const int64_t n = desc[F::Count], k = desc[F::K], P = desc[F::Workers];
  const int64_t total = P * k;
  const float *values = static_cast<const float *>(bufs[0]);
  const int32_t *indices = static_cast<const int32_t *>(bufs[1]);
  float *out = static_cast<float *>(bufs[2]);

  // Check every index before writing anything.
  int64_t bad = total;
#pragma omp parallel for if (total >= kParallelGrain) schedule(static) reduction(min : bad)
  for (int64_t j = 0; j < total; ++j)
    if (indices[j] < 0 || indices[j] >= n)
      bad = std::min(bad, j);
  if (bad < total)
    return scatterAddBadIndex(ctx, n, k, bad, indices[bad]);

#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = 0.0f;
  if (total == 0)
    return MGSRT_OK;

  // Each block owns a range of output elements (a multiple of 64, so bitmap
  // words are not shared) and applies the pairs that land in it in pair
  // order: the sums are those of the serial loop, bit for bit. The divisor
  // is applied once per touched element (untouched ones stay +0).
  ScatterScratch &scratch = getCache<ScatterScratch>(ctx, desc);
  const int64_t words = (n + 63) / 64;
  const bool divide = P > 1;
  if (divide)
    scratch.divided.assign(words, 0);
  uint64_t *divided = scratch.divided.data();
  const float divisor = static_cast<float>(P);
  // One output range per thread (each scans all pairs).
  const int B = total >= 4096 ? blockCount(n) : 1, T = B;
  // The targets are scattered over n: prefetch a few pairs ahead so the
  // cache misses overlap.
  constexpr int64_t kAhead = 32;
#pragma omp parallel for num_threads(T) if (T > 1) schedule(static, 1)
  for (int b = 0; b < B; ++b) {
    const int64_t lo = words * b / B * 64, hi = std::min(n, words * (b + 1) / B * 64);
    for (int64_t j = 0; j < total; ++j) {
      if (j + kAhead < total) {
        const int64_t ahead = indices[j + kAhead];
        if (ahead >= lo && ahead < hi)
          __builtin_prefetch(out + ahead, 1);
      }
      const int64_t i = indices[j];
      if (i >= lo && i < hi)
        out[i] += values[j];
    }
    if (!divide)
      continue;
    for (int64_t j = 0; j < total; ++j) {
      if (j + kAhead < total) {
        const int64_t ahead = indices[j + kAhead];
        if (ahead >= lo && ahead < hi)
          __builtin_prefetch(out + ahead, 1);
      }
      const int64_t i = indices[j];
      if (i < lo || i >= hi)
        continue;
      uint64_t &word = divided[i >> 6];
      const uint64_t bit = uint64_t(1) << (i & 63);
      if (word & bit)
        continue;
      word |= bit;
      out[i] /= divisor;
    }
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t topk_sparsify(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::topk_sparsify), desc, bufs, [&] { return topkSparsify(ctx, desc, bufs); });
}

mgsrt_status_t scatter_add(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::scatter_add), desc, bufs, [&] { return scatterAdd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
