//===- TopKDevice.cuh - Device helpers of the top-k kernels -----*- CUDA -*-===//
//
// What TopK.cu's kernels share (keys, block scans, the scratch layout and
// the tuning constants) and ScatterAdd.cu uses (the host's addition).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CUDA_TOPKDEVICE_CUH
#define MGSRT_KERNELS_CUDA_TOPKDEVICE_CUH

#include "Device.h"

#include <cstddef>
#include <cstdint>

namespace mgs::rt::cuda::topk {

using u32 = uint32_t;
using u64 = unsigned long long;

constexpr u32 kAbsMask = 0x7fffffffu;
constexpr u32 kNaNKey = 0x7f800001u;
/// A t0 no key reaches (keys are at most kNaNKey): no candidates.
constexpr u32 kNoCandidates = 0xffffffffu;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ u32 keyOfBits(u32 bits) { return min(bits & kAbsMask, kNaNKey); }

/// a + b with x86 SSE's NaN results (see TopK.cu's file comment).
__device__ __forceinline__ float addLikeHost(float a, float b) {
  float r = __fadd_rn(a, b);
  if (r != r) {
    const u32 ua = __float_as_uint(a), ub = __float_as_uint(b);
    r = __uint_as_float(a != a ? (ua | 0x00400000u) : b != b ? (ub | 0x00400000u) : 0xffc00000u);
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Block and warp helpers
//===----------------------------------------------------------------------===//

/// Exclusive prefix sum over the block of one 64-bit value per thread (also
/// used on packed fields that cannot carry into each other). `scratch`: 32
/// shared words. Every thread must call it.
__device__ inline u64 blockExclusiveScan(u64 v, u64 &total, u64 *scratch) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  u64 x = v;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    u64 y = __shfl_up_sync(kFullMask, x, off);
    if (lane >= static_cast<unsigned>(off))
      x += y;
  }
  if (lane == 31)
    scratch[warp] = x;
  __syncthreads();
  if (warp == 0) {
    u64 w = lane < warps ? scratch[lane] : 0;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      u64 y = __shfl_up_sync(kFullMask, w, off);
      if (lane >= static_cast<unsigned>(off))
        w += y;
    }
    if (lane < warps)
      scratch[lane] = w;
  }
  __syncthreads();
  const u64 before = warp ? scratch[warp - 1] : 0;
  total = scratch[warps - 1];
  __syncthreads(); // scratch may be reused at once
  return before + x - v;
}

struct Found {
  u32 bucket;   // the bucket holding the need-th largest key
  u32 above;    // keys in the buckets above it
  u32 inBucket; // keys in it
};

/// Called by every thread of the block: the bucket of the shared-memory
/// histogram h (nb bins) holding the need-th largest key, counting from the
/// top bin (1 <= need <= the histogram's total). Thread t sums its own
/// contiguous bins; one block scan gives each thread the count above its
/// bins, and the one thread whose bins hold the need-th walks them down.
/// `out` and `scratch` (32 words): shared memory.
__device__ inline Found findBucket(const u32 *h, int nb, u32 need, Found &out, u64 *scratch) {
  const int per = (nb + static_cast<int>(blockDim.x) - 1) / static_cast<int>(blockDim.x);
  const int lo = min(nb, static_cast<int>(threadIdx.x) * per), hi = min(nb, lo + per);
  u32 sum = 0;
  for (int i = lo; i < hi; ++i)
    sum += h[i];
  if (threadIdx.x == 0)
    out = {0, 0, 0};
  u64 total = 0;
  const u32 below = static_cast<u32>(blockExclusiveScan(sum, total, scratch));
  const u32 above = static_cast<u32>(total) - below - sum; // keys in the bins above mine
  if (sum && above < need && above + sum >= need) {
    u32 cum = above;
    for (int b = hi - 1; b >= lo; --b) {
      const u32 hb = h[b];
      if (cum + hb >= need) {
        out = {static_cast<u32>(b), cum, hb};
        break;
      }
      cum += hb;
    }
  }
  __syncthreads();
  const Found f = out;
  __syncthreads(); // out may be written again at once
  return f;
}

//===----------------------------------------------------------------------===//
// Scratch layout
//===----------------------------------------------------------------------===//

/// Control words in the workspace, reset by the prepare kernel.
struct TopKCtrl {
  u32 tileCounter;  // the fused pass's tile tickets
  u32 t0;           // the candidates' key threshold
  u32 total;        // candidates found (stored: at most cap of them)
  u32 barrierCount; // the select kernel's grid barrier
  u32 barrierGen;
  u32 pad[11];
};

constexpr int kFusedThreads = 256;
constexpr int kTile = kFusedThreads * 16; // 4 float4 per thread
constexpr int kSelectThreads = 512;
constexpr int kMaxSelectBlocks = kSelectThreads; // block offsets: one scan of the block
constexpr int kEmitItems = 8;
/// The candidate path's share of a select block: more blocks make each
/// block's passes shorter, at the price of wider grid barriers (measured
/// on an H200: 512 and 256 equal, 2048 ~6 us slower at n = 25.6M, k = n/1000).
constexpr u32 kCandPerBlock = 512;
constexpr int kSampleRuns = 2048, kSampleRun = 16, kSampleSize = kSampleRuns * kSampleRun;
/// The sample is spread over kPrepareBlocks blocks (one block's loads are
/// bound by the requests one multiprocessor keeps in flight).
constexpr int kPrepareBlocks = 64, kPrepareThreads = 256;
constexpr int kSamplePerThread = kSampleSize / (kPrepareBlocks * kPrepareThreads);
static_assert(kSamplePerThread * kPrepareBlocks * kPrepareThreads == kSampleSize, "");
constexpr int kHistBins = 2048;
/// The candidate path's digits, of rel = key - t0: rel >> 11 (clamped to
/// kRelBins - 1), counted by the fused pass as it finds the candidates, then
/// rel's low 11 bits. Two digits settle every rel below (kRelBins - 1) << 11
/// (keys less than about a binade above t0); a k-th largest key in the
/// clamped bin goes the absolute 11/11/9-bit way.
constexpr int kRelShift = 11;
constexpr u32 kRelBins = 4096;

/// Tile status words of the look-back: flag (high half) and count (low half).
constexpr u64 kFlagAggregate = 1ull << 32, kFlagPrefix = 2ull << 32;

struct Digit {
  int shift;
  u32 mask;
};

inline size_t alignUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

} // namespace mgs::rt::cuda::topk

#endif // MGSRT_KERNELS_CUDA_TOPKDEVICE_CUH
