//===- TopK.cu - Top-k sparsification on a GPU ---------------------------===//
//
// topk_sparsify: the CPU kernel's contract (CPU/TopK.cpp), exactly. Entries
// are ranked by a 31-bit magnitude key: the bits of |x| (their integer order
// is the order of |x|), every NaN mapped to one key just above +inf's; ties
// go to the lower index.
//
// Three launches on the context's stream, no host synchronization:
//  1. prepare (64 blocks; they also zero the scratch): the keys of a
//     stratified sample of 2^15 entries of grad + residual (2048 runs of 16
//     consecutive ones) are counted into histograms of their top 8 and 16
//     bits (the call site's own device memory), and the last block to
//     finish takes t0 = the least key of the 16-bit bin holding the
//     sample's m-th largest, m chosen so that with overwhelming
//     probability between k and ~2k entries of the whole array reach it
//     (as the CPU's sample path). Used only when n >= 2^16 and k <= n / 32;
//     otherwise t0 admits nothing.
//  2. fused pass (one 4096-entry tile per block): acc = grad + residual is
//     stored into residual, and the entries whose key reaches t0 (the
//     candidates) are appended, as (index, bits), in index order: the
//     tiles' output offsets come from a single-pass scan with decoupled
//     look-back (tiles numbered by an atomic ticket, so a tile only waits
//     for tiles that have started). Each candidate is also counted by
//     (key - t0) >> 11, the select's first digit. Reading grad and residual
//     and writing residual once (12 bytes an entry) is the least traffic
//     the interface allows; the candidates add ~8 bytes and one atomic
//     each, and a call that sampled clears the sample's 256 KB histogram.
//  3. select (a cooperative launch, a grid-wide barrier between rounds):
//     when the candidates are at least k and all were stored, a radix
//     select over them on one block per 512 of them (the other blocks
//     return at once): every block finds the first digit's bucket in the
//     fused pass's counts, then one pass counts the low 11 bits of
//     key - t0 (two digits settle keys less than a binade above t0; beyond
//     that, the absolute 11/11/9-bit digits of the key). Otherwise (the
//     sample misled, or the fast path was not tried) the absolute radix
//     select over the whole of acc in residual (the always-correct path:
//     up to 4 more reads of n floats). Each block owns a contiguous range;
//     per-block counts above the threshold and equal to it give every
//     block its output offset and its share of the ties (the first in
//     index order), so the output is in ascending index order and the
//     same every run. Selected entries are written bit for bit and zeroed
//     (+0) in residual.
//
// acc is formed with x86 SSE's NaN rules (the CPU kernel's, the oracle):
// a NaN operand is returned quieted (the first one if both are), inf - inf
// gives the default NaN 0xffc00000, where a GPU would return 0x7fffffff.
//
// MGSRT_TOPK_PHASES=1 times the three launches with CUDA events and prints
// one line to stderr after every call (it synchronizes: diagnosis only).
//
// The helpers, constants and scratch layout the kernels share are in
// TopKDevice.cuh; scatter_add, the exchange's other half, is ScatterAdd.cu.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "TopKDevice.cuh"

#include "Descriptors/TopKDesc.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <cstring>

using namespace mgs::rt;
using namespace mgs::rt::cuda;
using namespace mgs::rt::cuda::topk;

namespace {

/// 31 significant key bits: 11 + 11 + 9 (as the CPU's radix select).
__constant__ Digit kDigits[3] = {{20, 2047}, {9, 2047}, {0, 511}};
__constant__ Digit kRelLowDigit[1] = {{0, (1u << kRelShift) - 1}};

//===----------------------------------------------------------------------===//
// 1. Prepare: reset the scratch, sample a threshold
//===----------------------------------------------------------------------===//

__device__ __forceinline__ u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The sample's histograms, in the call site's own device memory, zero
/// when a call starts: the last prepare block zeroes `arrived` and
/// `coarse`, the fused pass `fine`.
struct TopKSite {
  u32 arrived; // prepare blocks done
  u32 pad[63];
  u32 coarse[256];    // key >> 23 (the exponent)
  u32 fine[1 << 16];  // key >> 15 (the exponent and 8 bits below it)
};

/// Every block samples its share of the runs into the histograms; the last
/// one to finish finds the m-th largest key to 16 bits: t0 is the least key
/// of that fine bin, at most 1/256 below the sample's m-th largest (for
/// normal numbers; a fine bin of 0 means no threshold, the radix path).
__device__ void sampleThreshold(const float *grad, const float *residual, int64_t stratum,
                                u64 offsets, u32 m, TopKSite *sh, TopKCtrl *ctrl) {
  __shared__ u32 hist[256];
  __shared__ Found found;
  __shared__ u64 scratch[32];
  __shared__ bool last;
  hist[threadIdx.x] = 0;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kSamplePerThread; ++i) {
    const int slot = (blockIdx.x * kSamplePerThread + i) * kPrepareThreads + threadIdx.x;
    const u64 run = slot / kSampleRun;
    const int64_t p = static_cast<int64_t>(run) * stratum +
                      static_cast<int64_t>(((mix64(run + 1) >> 32) * offsets) >> 32) +
                      slot % kSampleRun;
    const u32 key = keyOfBits(__float_as_uint(__fadd_rn(grad[p], residual[p])));
    atomicAdd(&hist[key >> 23], 1u); // a few exponents take most keys: counted here first
    atomicAdd(&sh->fine[key >> 15], 1u);
  }
  __syncthreads();
  if (hist[threadIdx.x])
    atomicAdd(&sh->coarse[threadIdx.x], hist[threadIdx.x]);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(&sh->arrived, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last)
    return;
  __threadfence();
  hist[threadIdx.x] = __ldcg(&sh->coarse[threadIdx.x]);
  sh->coarse[threadIdx.x] = 0; // for the next call
  __syncthreads();
  const Found e = findBucket(hist, 256, m, found, scratch);
  hist[threadIdx.x] = __ldcg(&sh->fine[e.bucket * 256 + threadIdx.x]);
  __syncthreads();
  const Found f = findBucket(hist, 256, m - e.above, found, scratch);
  if (threadIdx.x == 0) {
    const u32 t0 = ((e.bucket << 8) | f.bucket) << 15;
    ctrl->t0 = t0 ? t0 : kNoCandidates; // 0: every entry would qualify, the radix path is cheaper
    sh->arrived = 0;
  }
}

__global__ void __launch_bounds__(kPrepareThreads)
    topkPrepare(const float *grad, const float *residual, TopKCtrl *ctrl, uint4 *zero,
                size_t zeroCount, int sample, int64_t stratum, u64 offsets, u32 m,
                TopKSite *sh) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < zeroCount;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    zero[i] = make_uint4(0, 0, 0, 0);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ctrl->tileCounter = 0;
    ctrl->total = 0;
    ctrl->barrierCount = 0;
    if (!sample)
      ctrl->t0 = kNoCandidates;
  }
  if (sample)
    sampleThreshold(grad, residual, stratum, offsets, m, sh, ctrl);
}

//===----------------------------------------------------------------------===//
// 2. Fused pass: acc into residual, candidates compacted in index order
//===----------------------------------------------------------------------===//

/// Warp 0 of a tile: publishes the tile's count and returns the count of
/// all tiles before it (decoupled look-back).
__device__ u32 lookBack(u64 *status, u32 tile, u32 aggregate) {
  const int lane = threadIdx.x & 31;
  if (tile == 0) {
    if (lane == 0)
      atomicExch(&status[0], kFlagPrefix | aggregate);
    return 0;
  }
  if (lane == 0)
    atomicExch(&status[tile], kFlagAggregate | aggregate);
  u32 exclusive = 0;
  int64_t pred = static_cast<int64_t>(tile) - 1;
  while (true) {
    const int64_t at = pred - lane;
    u64 s = kFlagPrefix; // before tile 0: nothing
    if (at >= 0)
      s = *reinterpret_cast<volatile u64 *>(&status[at]);
    const u64 flag = s & ~0xffffffffull;
    if (__any_sync(kFullMask, flag == 0)) {
      __nanosleep(32); // a predecessor has not published yet
      continue;
    }
    const unsigned prefixLanes = __ballot_sync(kFullMask, flag == kFlagPrefix);
    u32 v = static_cast<u32>(s);
    if (prefixLanes) {
      const int first = __ffs(prefixLanes) - 1; // the nearest tile with a full prefix
      v = lane <= first ? v : 0;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      v += __shfl_xor_sync(kFullMask, v, off);
    exclusive += v;
    if (prefixLanes)
      break;
    pred -= 32;
  }
  if (lane == 0)
    atomicExch(&status[tile], kFlagPrefix | (exclusive + aggregate));
  return exclusive;
}

template <bool kVector>
__global__ void __launch_bounds__(kFusedThreads)
    topkFused(const float *__restrict__ grad, float *__restrict__ residual, int64_t n,
              TopKCtrl *ctrl, u64 *status, uint2 *cand, u32 cap, u32 tiles, u32 *relHist,
              TopKSite *site, int sampled) {
  __shared__ u32 sTile, sExclusive;
  __shared__ u64 scratch[32];
  if (threadIdx.x == 0)
    sTile = atomicAdd(&ctrl->tileCounter, 1u);
  const u32 t0 = ctrl->t0;
  __syncthreads();
  const u32 tile = sTile;
  const int64_t base = static_cast<int64_t>(tile) * kTile;

  // Thread t holds entries base + (j * 256 + t) * 4 + q, j, q < 4: coalesced
  // float4 accesses, and (j, t, q) order is index order.
  float g[16], r[16];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int64_t e = base + (static_cast<int64_t>(j) * kFusedThreads + threadIdx.x) * 4;
    if (kVector && e + 3 < n) {
      const float4 gv = __ldcs(reinterpret_cast<const float4 *>(grad + e));
      const float4 rv = __ldcs(reinterpret_cast<const float4 *>(residual + e));
      g[4 * j] = gv.x, g[4 * j + 1] = gv.y, g[4 * j + 2] = gv.z, g[4 * j + 3] = gv.w;
      r[4 * j] = rv.x, r[4 * j + 1] = rv.y, r[4 * j + 2] = rv.z, r[4 * j + 3] = rv.w;
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        g[4 * j + q] = e + q < n ? grad[e + q] : 0.0f;
        r[4 * j + q] = e + q < n ? residual[e + q] : 0.0f;
      }
    }
  }
  // The sample's fine histogram, read by now, zeroed for the next call
  // (untouched, so still zero, when this call did not sample).
  uint4 *fine = reinterpret_cast<uint4 *>(site->fine);
  if (sampled)
    for (u32 i = tile * kFusedThreads + threadIdx.x; i < sizeof(TopKSite::fine) / sizeof(uint4);
         i += tiles * kFusedThreads)
      fine[i] = make_uint4(0, 0, 0, 0);
  unsigned mask = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int64_t e = base + (static_cast<int64_t>(j) * kFusedThreads + threadIdx.x) * 4;
    float a[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      a[q] = addLikeHost(g[4 * j + q], r[4 * j + q]);
      r[4 * j + q] = a[q];
      if (e + q < n && keyOfBits(__float_as_uint(a[q])) >= t0)
        mask |= 1u << (4 * j + q);
    }
    if (kVector && e + 3 < n) {
      __stcs(reinterpret_cast<float4 *>(residual + e), make_float4(a[0], a[1], a[2], a[3]));
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (e + q < n)
          residual[e + q] = a[q];
    }
  }

  // The tile's candidates: per-thread counts for each j in 16-bit fields
  // (at most 4 * 256 per field), scanned at once.
  u64 packed = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j)
    packed |= static_cast<u64>(__popc((mask >> (4 * j)) & 0xfu)) << (16 * j);
  if (!__syncthreads_or(mask != 0)) {
    if (threadIdx.x < 32) {
      const u32 before = lookBack(status, tile, 0);
      if (threadIdx.x == 0 && tile == tiles - 1)
        ctrl->total = before;
    }
    return;
  }
  u64 total = 0;
  const u64 exclusive = blockExclusiveScan(packed, total, scratch);
  u32 fieldTotal[4], aggregate = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    fieldTotal[j] = static_cast<u32>((total >> (16 * j)) & 0xffffu);
    aggregate += fieldTotal[j];
  }
  if (threadIdx.x < 32) {
    const u32 before = lookBack(status, tile, aggregate);
    if (threadIdx.x == 0) {
      sExclusive = before;
      if (tile == tiles - 1)
        ctrl->total = before + aggregate;
    }
  }
  __syncthreads();
  if (!mask)
    return;
  u32 offset = sExclusive;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    u32 pos = offset + static_cast<u32>((exclusive >> (16 * j)) & 0xffffu);
    const int64_t e = base + (static_cast<int64_t>(j) * kFusedThreads + threadIdx.x) * 4;
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (mask & (1u << (4 * j + q))) {
        const u32 bits = __float_as_uint(r[4 * j + q]);
        if (pos < cap)
          cand[pos] = make_uint2(static_cast<u32>(e + q), bits);
        ++pos;
        atomicAdd(&relHist[min((keyOfBits(bits) - t0) >> kRelShift, kRelBins - 1)], 1u);
      }
    offset += fieldTotal[j];
  }
}

//===----------------------------------------------------------------------===//
// 3. Select: radix select over the candidates or over all of acc
//===----------------------------------------------------------------------===//

/// A barrier over the G blocks taking part (blocks 0 .. G-1 of the
/// cooperatively launched, so co-resident, grid; the others have returned).
__device__ void gridSync(TopKCtrl *ctrl, int G) {
  __syncthreads();
  if (G == 1)
    return;
  if (threadIdx.x == 0) {
    volatile u32 *gen = &ctrl->barrierGen;
    const u32 mine = *gen;
    __threadfence();
    if (atomicAdd(&ctrl->barrierCount, 1u) == static_cast<u32>(G) - 1) {
      atomicExch(&ctrl->barrierCount, 0u);
      __threadfence();
      atomicAdd(&ctrl->barrierGen, 1u);
    } else {
      while (*gen == mine)
        __nanosleep(64);
    }
    __threadfence();
  }
  __syncthreads();
}

/// The candidates (index, bits), in index order.
struct CandidateSource {
  const uint2 *cand;
  __device__ void get(int64_t i, u32 &index, u32 &bits) const {
    const uint2 c = cand[i];
    index = c.x;
    bits = c.y;
  }
};

/// acc itself, stored in residual by the fused pass.
struct ArraySource {
  const u32 *acc;
  __device__ void get(int64_t i, u32 &index, u32 &bits) const {
    index = static_cast<u32>(i);
    bits = acc[i];
  }
};

struct SelectArgs {
  TopKCtrl *ctrl;
  const uint2 *cand;
  u32 cap;
  u32 *residual; // acc, as bits
  int64_t n;
  u32 k;
  u32 *ghist;      // 3 x kHistBins, zeroed by prepare
  const u32 *relHist; // kRelBins: the fused pass's counts of rel >> kRelShift
  u32 *blockAbove; // kMaxSelectBlocks
  u32 *blockEqual; // kMaxSelectBlocks
  u32 *values;
  int32_t *indices;
};

/// The select kernel's shared memory (one copy for both sources).
struct SelectShared {
  u32 hist[kHistBins];
  u32 merged[kRelBins]; // a grid-wide histogram, copied from global memory
  Found found;
  u32 above, offset, quota;
  u64 scratch[32];
};

/// Where a radix select stands: the entries whose rel = key - base has
/// rel >> pshift == prefix are undecided, and `need` of them are to be
/// taken; those above are taken. `digits`: the rounds still to run.
struct Radix {
  u32 base;
  u32 prefix;
  int pshift;
  u32 need;
  const Digit *digits;
  int rounds;
};

template <typename Source>
__device__ void selectFrom(const SelectArgs &a, Source src, int64_t count, int G, Radix rx,
                           SelectShared &sh) {
  u32 *hist = sh.hist;
  u32 &sAbove = sh.above, &sOffset = sh.offset, &sQuota = sh.quota;
  u64 *scratch = sh.scratch;
  const int b = blockIdx.x;
  const int64_t lo = count * b / G, hi = count * (b + 1) / G;

  u32 prefix = rx.prefix, need = rx.need, aboveInBlock = 0, equalInBlock = 0;
  int pshift = rx.pshift;
  for (int round = 0; round < rx.rounds; ++round) {
    const Digit d = rx.digits[round];
    const int bins = static_cast<int>(d.mask) + 1;
    for (int i = threadIdx.x; i < bins; i += blockDim.x)
      hist[i] = 0;
    if (threadIdx.x == 0)
      sAbove = 0;
    __syncthreads();
    u32 mineAbove = 0; // this thread's entries above the undecided ones
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      u32 index, bits;
      src.get(i, index, bits);
      const u32 rel = keyOfBits(bits) - rx.base;
      const u32 p = rel >> pshift;
      if (p > prefix)
        ++mineAbove;
      else if (p == prefix)
        atomicAdd(&hist[(rel >> d.shift) & d.mask], 1u);
    }
    __syncthreads();
    u32 *global = a.ghist + round * kHistBins;
    if (G > 1) {
      for (int i = threadIdx.x; i < bins; i += blockDim.x)
        if (hist[i])
          atomicAdd(&global[i], hist[i]);
      gridSync(a.ctrl, G);
      // One coalesced copy into shared memory (written by other blocks'
      // atomics: read from L2), so the bucket search below does not wait on
      // L2 latency bin after bin.
      for (int i = threadIdx.x; i < bins; i += blockDim.x)
        sh.merged[i] = __ldcg(&global[i]);
      __syncthreads();
    }
    const Found f = findBucket(G > 1 ? sh.merged : hist, bins, need, sh.found, scratch);
    for (int i = threadIdx.x; i < bins; i += blockDim.x)
      if (static_cast<u32>(i) > f.bucket)
        mineAbove += hist[i];
    if (mineAbove)
      atomicAdd(&sAbove, mineAbove);
    __syncthreads();
    aboveInBlock = sAbove;
    equalInBlock = hist[f.bucket];
    need -= f.above;
    prefix = (pshift == 31 ? 0u : prefix << (pshift - d.shift)) | f.bucket;
    pshift = d.shift;
    __syncthreads(); // hist and sAbove are reused
    if (need == f.inBucket)
      break; // the whole bucket is taken (the same decision in every block)
  }

  // This block's output offset and its share of the entries equal to the
  // threshold (the first `need` of them in index order are taken).
  if (G > 1) {
    if (threadIdx.x == 0) {
      __stcg(&a.blockAbove[b], aboveInBlock);
      __stcg(&a.blockEqual[b], equalInBlock);
    }
    gridSync(a.ctrl, G);
    const int t = threadIdx.x;
    const u32 above = t < G ? __ldcg(&a.blockAbove[t]) : 0;
    const u32 equal = t < G ? __ldcg(&a.blockEqual[t]) : 0;
    u64 total;
    const u32 equalBefore = static_cast<u32>(blockExclusiveScan(equal, total, scratch));
    const u32 quota = need > equalBefore ? min(need - equalBefore, equal) : 0;
    const u32 selectedBefore =
        static_cast<u32>(blockExclusiveScan(above + quota, total, scratch));
    if (t == b) {
      sOffset = selectedBefore;
      sQuota = quota;
    }
    __syncthreads();
  } else if (threadIdx.x == 0) {
    sOffset = 0;
    sQuota = need;
  }
  __syncthreads();
  const u32 quota = sQuota;
  u32 out0 = sOffset;

  // Ordered compaction of the block's range, kEmitItems consecutive entries
  // a thread: taken = above the threshold, or equal to it and among the
  // first `quota` equal ones of the block.
  u32 equalSeen = 0;
  for (int64_t start = lo; start < hi; start += static_cast<int64_t>(blockDim.x) * kEmitItems) {
    const int64_t first = start + static_cast<int64_t>(threadIdx.x) * kEmitItems;
    u32 idx[kEmitItems], bits[kEmitItems], kind = 0; // 2 bits an item: 1 above, 2 equal
    u32 nAbove = 0, nEqual = 0;
#pragma unroll
    for (int q = 0; q < kEmitItems; ++q) {
      idx[q] = 0;
      bits[q] = 0;
      if (first + q < hi) {
        src.get(first + q, idx[q], bits[q]);
        const u32 p = (keyOfBits(bits[q]) - rx.base) >> pshift;
        if (p > prefix) {
          kind |= 1u << (2 * q);
          ++nAbove;
        } else if (p == prefix) {
          kind |= 2u << (2 * q);
          ++nEqual;
        }
      }
    }
    if (!__syncthreads_or(kind != 0))
      continue;
    u64 total;
    const u64 before = blockExclusiveScan(nAbove | static_cast<u64>(nEqual) << 32, total, scratch);
    const u32 aboveBefore = static_cast<u32>(before), equalBefore = static_cast<u32>(before >> 32);
    const u32 quotaLeft = quota > equalSeen ? quota - equalSeen : 0;
    u32 out = out0 + aboveBefore + min(equalBefore, quotaLeft);
    u32 equalOrdinal = equalSeen + equalBefore;
#pragma unroll
    for (int q = 0; q < kEmitItems; ++q) {
      const u32 kq = (kind >> (2 * q)) & 3u;
      bool take = kq == 1;
      if (kq == 2)
        take = equalOrdinal++ < quota;
      if (take && out < a.k) { // (out < k always holds; a guard against overruns)
        a.values[out] = bits[q];
        a.indices[out] = static_cast<int32_t>(idx[q]);
        a.residual[idx[q]] = 0u; // +0
        ++out;
      }
    }
    const u32 totalAbove = static_cast<u32>(total), totalEqual = static_cast<u32>(total >> 32);
    out0 += totalAbove + min(totalEqual, quotaLeft);
    equalSeen += totalEqual;
  }
}

/// The candidate path's blocks: one per kCandPerBlock candidates (at most
/// the grid), the rest return.
__device__ __forceinline__ int candidateBlocks(u32 found) {
  return static_cast<int>(
      min(static_cast<u32>(gridDim.x), max(1u, (found + kCandPerBlock - 1) / kCandPerBlock)));
}

__global__ void __launch_bounds__(kSelectThreads) topkSelect(SelectArgs a) {
  __shared__ SelectShared sh;
  const u32 found = __ldcg(&a.ctrl->total); // the same in every block
  const Radix absolute{0, 0, 31, a.k, kDigits, 3};
  if (found < a.k || found > a.cap) {
    selectFrom(a, ArraySource{a.residual}, a.n, static_cast<int>(gridDim.x), absolute, sh);
    return;
  }
  const int G = candidateBlocks(found);
  if (static_cast<int>(blockIdx.x) >= G)
    return;
  // The first digit of rel = key - t0 was counted by the fused pass: every
  // block finds its bucket alone (the same one), no barrier needed.
  for (u32 i = threadIdx.x; i < kRelBins; i += blockDim.x)
    sh.merged[i] = __ldcg(&a.relHist[i]);
  __syncthreads();
  const Found f = findBucket(sh.merged, kRelBins, a.k, sh.found, sh.scratch);
  if (f.bucket == kRelBins - 1) { // the clamped bin: rel may span any range
    selectFrom(a, CandidateSource{a.cand}, found, G, absolute, sh);
    return;
  }
  const Radix relative{__ldcg(&a.ctrl->t0), f.bucket, kRelShift, a.k - f.above, kRelLowDigit, 1};
  selectFrom(a, CandidateSource{a.cand}, found, G, relative, sh);
}

/// Per-call-site state: the select kernel's co-resident grid size, the
/// sample's histograms on the device, and the phase timer's events
/// (MGSRT_TOPK_PHASES=1 only).
struct TopKCache : KernelCache {
  int selectBlocks = 0;
  TopKSite *site = nullptr; // zeroed at allocation
  cudaEvent_t events[4] = {};
  ~TopKCache() override {
    if (site)
      cudaFree(site);
    for (cudaEvent_t e : events)
      if (e)
        cudaEventDestroy(e);
  }
};

/// MGSRT_TOPK_PHASES=1 (read once): time each launch with CUDA events and,
/// after every call, synchronize and print one line to stderr.
bool phaseTiming() {
  static const bool on = [] {
    const char *v = std::getenv("MGSRT_TOPK_PHASES");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

mgsrt_status_t topkSparsify(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::topk_sparsify);
  if (!checkTopKDesc(ctx, desc, bufs))
    return ctx->status;
  const int64_t n = desc[mgs::contract::TopKDesc::Count], k = desc[mgs::contract::TopKDesc::K];
  const float *grad = static_cast<const float *>(bufs[0]);
  float *residual = static_cast<float *>(bufs[1]);
  CudaState &st = state(ctx);
  cudaStream_t stream = st.stream;

  TopKCache &cache = getCache<TopKCache>(ctx, desc);
  if (cache.selectBlocks == 0) {
    int perSM = 0, sms = 0, coop = 0;
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, st.ordinal));
    if (!coop)
      return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                       strCat(kernel, ": the GPU does not support cooperative launches"));
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, st.ordinal));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                      &perSM, topkSelect, kSelectThreads, 0));
    cache.selectBlocks = std::max(1, std::min(perSM * sms, kMaxSelectBlocks));
  }
  if (!cache.site) {
    if (refuseInCapture(ctx, kernel, "allocates its first call's memory"))
      return ctx->status;
    TopKSite *site = nullptr;
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&site, sizeof(TopKSite)));
    if (cudaError_t err = cudaMemsetAsync(site, 0, sizeof(TopKSite), stream); err != cudaSuccess) {
      cudaFree(site);
      return cudaFailure(ctx, kernel, "cudaMemsetAsync", err);
    }
    cache.site = site; // kept only once zeroed
  }

  // The sample path (as the CPU's): the candidates' expected count and the
  // buffer for four times as many.
  const bool sample = n >= (1 << 16) && k * 32 <= n;
  int64_t stratum = 0;
  u64 offsets = 0;
  u32 m = 0;
  int64_t cap = 0;
  if (sample) {
    stratum = n / kSampleRuns;
    offsets = static_cast<u64>(stratum - kSampleRun + 1);
    const double e = static_cast<double>(kSampleSize) * k / n;
    m = static_cast<u32>(std::min<double>(kSampleSize, std::ceil(e + 4.0 * std::sqrt(e) + 4.0)));
    const double expected = static_cast<double>(m) * n / kSampleSize;
    cap = std::min<int64_t>(n, static_cast<int64_t>(4.0 * expected) + 4096);
  }

  const u32 tiles = static_cast<u32>((n + kTile - 1) / kTile);
  const size_t ctrlBytes = 256, histBytes = (3 * kHistBins + kRelBins) * sizeof(u32),
               blockBytes = 2 * kMaxSelectBlocks * sizeof(u32),
               statusBytes = alignUp(tiles * sizeof(u64), 256),
               candBytes = alignUp(static_cast<size_t>(cap) * sizeof(uint2), 256);
  void *ws = nullptr;
  if (mgsrt_status_t s =
          workspace(ctx, kernel, ctrlBytes + histBytes + blockBytes + statusBytes + candBytes, &ws))
    return s;
  char *p = static_cast<char *>(ws);
  TopKCtrl *ctrl = reinterpret_cast<TopKCtrl *>(p);
  u32 *ghist = reinterpret_cast<u32 *>(p + ctrlBytes);
  u32 *relHist = ghist + 3 * kHistBins;
  u32 *blockAbove = reinterpret_cast<u32 *>(p + ctrlBytes + histBytes);
  u32 *blockEqual = blockAbove + kMaxSelectBlocks;
  u64 *status = reinterpret_cast<u64 *>(p + ctrlBytes + histBytes + blockBytes);
  uint2 *cand = reinterpret_cast<uint2 *>(p + ctrlBytes + histBytes + blockBytes + statusBytes);

  const bool phases = phaseTiming();
  if (phases && refuseInCapture(ctx, kernel, "times its phases (MGSRT_TOPK_PHASES)"))
    return ctx->status;
  if (phases) {
    for (cudaEvent_t &e : cache.events)
      if (!e)
        MGSRT_CUDA_CHECK(ctx, kernel, cudaEventCreate(&e));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(cache.events[0], stream));
  }
  // 1. Zero the histograms, block counts and tile status words; sample t0.
  const size_t zeroCount = (histBytes + blockBytes + statusBytes) / sizeof(uint4);
  topkPrepare<<<kPrepareBlocks, kPrepareThreads, 0, stream>>>(
      grad, residual, ctrl, reinterpret_cast<uint4 *>(ghist), zeroCount, sample ? 1 : 0,
      stratum, offsets, m, cache.site);
  if (phases)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(cache.events[1], stream));
  // 2. acc into residual, candidates out.
  const bool vector = (reinterpret_cast<uintptr_t>(grad) | reinterpret_cast<uintptr_t>(residual)) %
                          16 == 0;
  if (vector)
    topkFused<true><<<tiles, kFusedThreads, 0, stream>>>(
        grad, residual, n, ctrl, status, cand, static_cast<u32>(cap), tiles, relHist, cache.site,
        sample ? 1 : 0);
  else
    topkFused<false><<<tiles, kFusedThreads, 0, stream>>>(
        grad, residual, n, ctrl, status, cand, static_cast<u32>(cap), tiles, relHist, cache.site,
        sample ? 1 : 0);
  MGSRT_CUDA_CHECK(ctx, kernel, cudaPeekAtLastError());
  if (phases)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(cache.events[2], stream));
  // 3. Select (blocks: enough for the array, at most what fits at once).
  const int blocks = static_cast<int>(std::min<int64_t>(
      cache.selectBlocks, std::max<int64_t>(1, (n + kSelectThreads * 32 - 1) /
                                                   (kSelectThreads * 32))));
  SelectArgs args{ctrl,
                  cand,
                  static_cast<u32>(cap),
                  reinterpret_cast<u32 *>(residual),
                  n,
                  static_cast<u32>(k),
                  ghist,
                  relHist,
                  blockAbove,
                  blockEqual,
                  static_cast<u32 *>(bufs[2]),
                  static_cast<int32_t *>(bufs[3])};
  void *params[] = {&args};
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(topkSelect),
                                               dim3(blocks), dim3(kSelectThreads), params, 0,
                                               stream));
  if (phases) {
    MGSRT_CUDA_CHECK(ctx, kernel, cudaEventRecord(cache.events[3], stream));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaEventSynchronize(cache.events[3]));
    float ms[3] = {};
    for (int i = 0; i < 3; ++i)
      MGSRT_CUDA_CHECK(ctx, kernel,
                       cudaEventElapsedTime(&ms[i], cache.events[i], cache.events[i + 1]));
    u32 found = 0;
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaMemcpy(&found, &ctrl->total, sizeof found, cudaMemcpyDeviceToHost));
    const bool fast = found >= static_cast<u64>(k) && found <= static_cast<u64>(cap);
    const u64 per = kCandPerBlock;
    const u64 used = fast ? std::min<u64>(static_cast<u64>(blocks),
                                          std::max<u64>(1, (found + per - 1) / per))
                          : static_cast<u64>(blocks);
    std::fprintf(stderr,
                 "topk phases: prepare %.4f ms, fused %.4f ms, select %.4f ms, total %.4f ms "
                 "(candidates %u, cap %lld, k %lld, fallback %s, select blocks %llu of %d, "
                 "fused tiles %u, sample %s)\n",
                 ms[0], ms[1], ms[2], ms[0] + ms[1] + ms[2], found, static_cast<long long>(cap),
                 static_cast<long long>(k),
                 fast ? "no" : found < static_cast<u64>(k) ? "yes (too few)" : "yes (too many)",
                 used, blocks, tiles, sample ? "yes" : "no");
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t topk_sparsify(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::topk_sparsify), desc, bufs,
                       [&] { return topkSparsify(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
