//===- DeviceSparseCollectives.cu - gtopk, sparse all-reduce on a GPU -----===//
//
// DeviceSparseCollectives.h. Self-contained (CUDA runtime and CUB only), so
// the GPU tests compile it with their one-process loopback transport.
//
// A block of entries, the unit the global top-k merges and sends, is
// [count (int64)][values (float x k)][indices (int32 x k)][flags (uint8 x k)],
// sorted by index, each index once; a round sends its first 8k + 8 bytes,
// the answer to a folded rank all of it (the flags: which of that rank's
// entries survived).
//
//===----------------------------------------------------------------------===//

#include "Comm/NCCL/DeviceSparseCollectives.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <string>
#include <utility>

namespace mgs::rt::cuda {

namespace {

using u32 = uint32_t;
using u64 = unsigned long long;

/// The report of a bad index: [first bad position, its index]; no bad one
/// leaves the position at kNoBad.
constexpr u32 kNoBad = 0xffffffffu;

Status cudaError(const char *call, cudaError_t e) {
  return Status::error(e == cudaErrorMemoryAllocation ? MGSRT_ERROR_OUT_OF_MEMORY
                                                      : MGSRT_ERROR_BACKEND,
                       std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
                           cudaGetErrorString(e) + ")");
}

#define DSC_TRY(call)                                                                              \
  do {                                                                                             \
    if (cudaError_t dsc_e_ = (call); dsc_e_ != cudaSuccess)                                        \
      return cudaError(#call, dsc_e_);                                                             \
  } while (0)
#define DSC_STATUS(expr)                                                                           \
  do {                                                                                             \
    if (Status dsc_s_ = (expr); !dsc_s_.ok())                                                      \
      return dsc_s_;                                                                               \
  } while (0)

unsigned blocksFor(int64_t n) {
  const int64_t b = std::max<int64_t>(1, (n + 255) / 256);
  return static_cast<unsigned>(std::min<int64_t>(b, 65535 * 8));
}

__device__ inline int64_t first() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// TopK.cpp's magnitude key: the bits of |x|, every NaN just above +inf.
__device__ inline u32 magnitudeKey(float x) {
  return isnan(x) ? 0x7f800001u : (__float_as_uint(x) & 0x7fffffffu);
}

/// The first position of a sorted array whose value is >= x.
template <typename T> __device__ int64_t lowerBound(const T *a, int64_t n, int64_t x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<int64_t>(a[mid]) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

size_t entriesBytes(int64_t k) { return 8 + 8 * static_cast<size_t>(k); }
size_t blockBytes(int64_t k) { return 8 + 9 * static_cast<size_t>(k); }

struct Block {
  char *base;
  int64_t k;
  __device__ int64_t &count() const { return *reinterpret_cast<int64_t *>(base); }
  __host__ __device__ float *values() const { return reinterpret_cast<float *>(base + 8); }
  __host__ __device__ int32_t *indices() const {
    return reinterpret_cast<int32_t *>(base + 8 + 4 * k);
  }
  __host__ __device__ uint8_t *flags() const { return reinterpret_cast<uint8_t *>(base + 8 + 8 * k); }
};

__device__ inline bool isBad(const u32 *report) { return report[0] != kNoBad; }

__global__ void checkIndices(const int32_t *indices, int64_t k, int64_t n, u32 *report) {
  for (int64_t j = first(); j < k; j += stride())
    if (indices[j] < 0 || indices[j] >= n)
      atomicMin(&report[0], static_cast<u32>(j));
}

__global__ void noteBadIndex(const int32_t *indices, u32 *report) {
  if (report[0] != kNoBad)
    report[1] = static_cast<u32>(indices[report[0]]);
}

/// keys = the indices, positions = 0 .. k-1 (the stable sort by index).
__global__ void indexKeys(const int32_t *indices, int64_t k, u32 *keys, int32_t *positions) {
  for (int64_t j = first(); j < k; j += stride()) {
    keys[j] = static_cast<u32>(indices[j]);
    if (positions)
      positions[j] = static_cast<int32_t>(j);
  }
}

/// heads[j] = 1 where a run of equal keys starts.
__global__ void runHeads(const u32 *keys, int64_t count, int32_t *heads) {
  for (int64_t j = first(); j < count; j += stride())
    heads[j] = j == 0 || keys[j] != keys[j - 1];
}

/// The rank's own block: each index once, its entries summed in entry order
/// from the first (globalTopK's `own`); no entries after a bad index.
__global__ void ownEntries(const u32 *keys, const int32_t *positions, const int32_t *runEnd,
                           const float *values, int64_t k, const u32 *report, Block own) {
  for (int64_t j = first(); j < k; j += stride()) {
    if (j == 0)
      own.count() = isBad(report) ? 0 : runEnd[k - 1];
    if (j > 0 && keys[j] == keys[j - 1])
      continue;
    float acc = values[positions[j]];
    for (int64_t m = j + 1; m < k && keys[m] == keys[j]; ++m)
      acc = __fadd_rn(acc, values[positions[m]]);
    const int32_t r = runEnd[j] - 1;
    own.values()[r] = acc;
    own.indices()[r] = static_cast<int32_t>(keys[j]);
  }
}

/// The 2k candidates of mergeTopK(a, b): a's entries (plus b's value at a
/// shared index) and b's entries a lacks, keyed by (magnitude, then the
/// smaller index) so a descending sort ranks them as ranksBefore does; 0
/// marks no candidate (a real key has the high bit of its low word set).
__global__ void mergeCandidates(Block a, Block b, int64_t k, u64 *keys, float *values) {
  const int64_t ca = a.count(), cb = b.count();
  for (int64_t c = first(); c < 2 * k; c += stride()) {
    bool real = false;
    float v = 0.0f;
    int32_t i = 0;
    if (c < k) {
      if (c < ca) {
        i = a.indices()[c];
        v = a.values()[c];
        const int64_t j = lowerBound(b.indices(), cb, i);
        if (j < cb && b.indices()[j] == i)
          v = __fadd_rn(v, b.values()[j]);
        real = true;
      }
    } else if (c - k < cb) {
      i = b.indices()[c - k];
      const int64_t p = lowerBound(a.indices(), ca, i);
      if (!(p < ca && a.indices()[p] == i)) {
        v = b.values()[c - k];
        real = true;
      }
    }
    keys[c] = real ? (static_cast<u64>(magnitudeKey(v)) << 32) |
                         static_cast<u64>(0xffffffffu - static_cast<u32>(i))
                   : 0ull;
    values[c] = v;
  }
}

/// The first k ranked candidates, keyed by index for the sort back into
/// index order (no candidate: after every index); out's count.
__global__ void keepFirstK(const u64 *keys, const float *values, int64_t k, u32 *indexKeys,
                           float *kept, Block out) {
  for (int64_t j = first(); j < k; j += stride()) {
    const bool real = keys[j] != 0;
    indexKeys[j] = real ? 0xffffffffu - static_cast<u32>(keys[j] & 0xffffffffull) : 0xffffffffu;
    kept[j] = values[j];
    if (real && (j + 1 == k || keys[j + 1] == 0))
      out.count() = j + 1;
    if (j == 0 && !real)
      out.count() = 0;
  }
}

/// alive[i] stays 1 only where list's entry i is in `kept` (keepAlive).
__global__ void keepAlive(Block list, uint8_t *alive, Block kept, int64_t k) {
  const int64_t cl = list.count(), ck = kept.count();
  for (int64_t i = first(); i < k && i < cl; i += stride()) {
    const int32_t x = list.indices()[i];
    const int64_t p = lowerBound(kept.indices(), ck, x);
    if (!(p < ck && kept.indices()[p] == x))
      alive[i] = 0;
  }
}

/// writeGlobalTopK: the entries averaged over P, zeros at index 0 after them.
__global__ void writeGlobal(Block g, int64_t k, int P, const u32 *report, float *outValues,
                            int32_t *outIndices) {
  if (isBad(report))
    return;
  const int64_t count = g.count();
  for (int64_t j = first(); j < k; j += stride()) {
    const bool real = j < count;
    const float v = g.values()[j];
    outValues[j] = real ? (P > 1 ? __fdiv_rn(v, static_cast<float>(P)) : v) : 0.0f;
    outIndices[j] = real ? g.indices()[j] : 0;
  }
}

/// The error feedback: each run of the staged entries (sorted by index,
/// entry order kept) whose own entry was dropped is added into the residual.
__global__ void addDropped(const u32 *keys, const int32_t *positions, const int32_t *runEnd,
                           const uint8_t *mine, const float *values, int64_t k,
                           const u32 *report, float *residual) {
  if (isBad(report))
    return;
  for (int64_t j = first(); j < k; j += stride()) {
    if ((j > 0 && keys[j] == keys[j - 1]) || mine[runEnd[j] - 1])
      continue;
    float acc = residual[keys[j]];
    for (int64_t m = j; m < k && keys[m] == keys[j]; ++m)
      acc = __fadd_rn(acc, values[positions[m]]);
    residual[keys[j]] = acc;
  }
}

/// The rank's P - 1 local index quantiles (equal ranges where it has no entries).
__global__ void localQuantiles(const u32 *sortedIndices, int64_t k, int64_t n, int P,
                               const u32 *report, int64_t *quantiles) {
  const int64_t count = isBad(report) ? 0 : k;
  for (int64_t q = first() + 1; q < P; q += stride())
    quantiles[q - 1] = count ? static_cast<int64_t>(sortedIndices[count * q / P]) : n * q / P;
}

/// sums[q - 1] = the sum over the ranks of their quantile q (all: every
/// rank's P - 1 quantiles, rank by rank).
__global__ void sumQuantiles(const int64_t *all, int P, int64_t *sums) {
  for (int64_t q = first() + 1; q < P; q += stride()) {
    int64_t sum = 0;
    for (int s = 0; s < P; ++s)
      sum += all[static_cast<int64_t>(s) * (P - 1) + (q - 1)];
    sums[q - 1] = sum;
  }
}

/// The P + 1 region boundaries: equal ranges, or (sums: the summed
/// quantiles) their means, clamped to be nondecreasing.
__global__ void regionBounds(int64_t n, int P, const int64_t *sums, int64_t *bounds) {
  if (first() != 0)
    return;
  for (int q = 0; q <= P; ++q)
    bounds[q] = n * q / P;
  if (!sums)
    return;
  for (int q = 1; q < P; ++q) {
    const int64_t mean = sums[q - 1] / P;
    bounds[q] = mean < bounds[q - 1] ? bounds[q - 1] : mean > n ? n : mean;
  }
}

/// counts[q] = this rank's entries in region q.
__global__ void regionCounts(const u32 *sortedIndices, int64_t k, int P, const u32 *report,
                             const int64_t *bounds, int64_t *counts) {
  const int64_t count = isBad(report) ? 0 : k;
  for (int64_t q = first(); q < P; q += stride()) {
    const int64_t lo = lowerBound(sortedIndices, count, bounds[q]);
    const int64_t hi = q + 1 == P ? count : lowerBound(sortedIndices, count, bounds[q + 1]);
    counts[q] = hi - lo;
  }
}

/// The owner's reduction: each run of the received entries (sorted by index,
/// rank order then entry order kept) summed from +0, divided by P; written
/// into out and listed (runIndices, runValues); *touched = the runs.
__global__ void reduceRuns(const u32 *keys, const float *values, const int32_t *runEnd,
                           int64_t count, int P, int32_t *runIndices, float *runValues,
                           int64_t *touched, float *out) {
  for (int64_t j = first(); j < count; j += stride()) {
    if (j == 0)
      *touched = runEnd[count - 1];
    if (j > 0 && keys[j] == keys[j - 1])
      continue;
    float acc = 0.0f;
    for (int64_t m = j; m < count && keys[m] == keys[j]; ++m)
      acc = __fadd_rn(acc, values[m]);
    if (P > 1)
      acc = __fdiv_rn(acc, static_cast<float>(P));
    runIndices[runEnd[j] - 1] = static_cast<int32_t>(keys[j]);
    runValues[runEnd[j] - 1] = acc;
    out[keys[j]] = acc;
  }
}

/// This rank's reduced region as a message: [-1][out[lo .. lo+len)] when
/// more than half of it is touched, else [touched][values][indices].
__global__ void packRegion(const int64_t *touched, const int32_t *runIndices,
                           const float *runValues, const float *out, int64_t lo, int64_t len,
                           char *msg) {
  const int64_t t = *touched;
  const bool dense = 2 * t > len;
  if (first() == 0)
    *reinterpret_cast<int64_t *>(msg) = dense ? -1 : t;
  float *v = reinterpret_cast<float *>(msg + 8);
  int32_t *ix = reinterpret_cast<int32_t *>(msg + 8 + 4 * t);
  for (int64_t j = first(); j < (dense ? len : t); j += stride()) {
    if (dense) {
      v[j] = out[lo + j];
    } else {
      v[j] = runValues[j];
      ix[j] = runIndices[j];
    }
  }
}

/// Every other rank's reduced region into out.
__global__ void unpackRegions(const char *msgs, const int64_t *offsets, const int64_t *bounds,
                              int P, int self, float *out) {
  for (int q = blockIdx.y; q < P; q += gridDim.y) {
    if (q == self)
      continue;
    const char *m = msgs + offsets[q];
    const int64_t h = *reinterpret_cast<const int64_t *>(m), lo = bounds[q],
                  len = bounds[q + 1] - lo;
    const float *v = reinterpret_cast<const float *>(m + 8);
    if (h < 0) {
      for (int64_t i = first(); i < len; i += stride())
        out[lo + i] = v[i];
    } else {
      const int32_t *ix = reinterpret_cast<const int32_t *>(m + 8 + 4 * h);
      for (int64_t j = first(); j < h; j += stride())
        out[ix[j]] = v[j];
    }
  }
}

/// Byte offsets of the arrays carved out of one allocation (256-aligned).
struct Carve {
  size_t at = 0;
  size_t take(size_t bytes) {
    const size_t o = at;
    at += (bytes + 255) & ~size_t(255);
    return o;
  }
};

/// CUB's temporary storage for the sorts and scans of up to `count` items.
template <typename Key, typename Value> size_t sortBytes(int64_t count, bool descending = false) {
  size_t bytes = 0;
  if (descending)
    cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, static_cast<const Key *>(nullptr),
                                              static_cast<Key *>(nullptr),
                                              static_cast<const Value *>(nullptr),
                                              static_cast<Value *>(nullptr), count);
  else
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const Key *>(nullptr),
                                    static_cast<Key *>(nullptr),
                                    static_cast<const Value *>(nullptr),
                                    static_cast<Value *>(nullptr), count);
  return bytes;
}

size_t scanBytes(int64_t count) {
  size_t bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const int32_t *>(nullptr),
                                static_cast<int32_t *>(nullptr), count);
  return bytes;
}

/// `bytes` at `send` from every rank into recv (rank q's at q * bytes).
Status allGather(DevicePeers &peers, const void *send, size_t bytes, void *recv,
                 cudaStream_t stream) {
  const int P = peers.size(), r = peers.rank();
  char *out = static_cast<char *>(recv);
  DSC_TRY(cudaMemcpyAsync(out + r * bytes, send, bytes, cudaMemcpyDeviceToDevice, stream));
  std::vector<PeerOp> ops;
  for (int q = 0; q < P; ++q)
    if (q != r) {
      ops.push_back({PeerOp::Kind::Send, q, const_cast<void *>(send), bytes});
      ops.push_back({PeerOp::Kind::Recv, q, out + q * bytes, bytes});
    }
  return ops.empty() || !bytes ? Status::success() : peers.exchange(ops, stream);
}

/// The staged entries' bad-index check, its report in w.work at `report`.
Status checkStaged(SparseWork &w, u32 *report, cudaStream_t stream) {
  const int32_t *indices = w.entries.as<int32_t>(4 * w.k);
  DSC_TRY(cudaMemsetAsync(report, 0xff, 2 * sizeof(u32), stream));
  if (w.k) {
    checkIndices<<<blocksFor(w.k), 256, 0, stream>>>(indices, w.k, w.n, report);
    noteBadIndex<<<1, 1, 0, stream>>>(indices, report);
  }
  DSC_STATUS(w.reserveHost(2 * sizeof(u32)));
  DSC_TRY(cudaMemcpyAsync(w.host, report, 2 * sizeof(u32), cudaMemcpyDeviceToHost, stream));
  w.badChecked = true;
  return Status::success();
}

/// The global top-k's arrays in w.work (their offsets depend on k only, so
/// the error feedback finds them again).
struct GTopKLayout {
  size_t report, keysIn, keys, positionsIn, positions, heads, runEnd, mine, theirsAlive;
  size_t blocks[5]; // own, cur, other, next, theirs
  size_t candKeysIn, candKeys, candValuesIn, candValues, keptKeys, keptValues, total;
  explicit GTopKLayout(int64_t k) {
    const size_t K = static_cast<size_t>(k);
    Carve c;
    report = c.take(2 * sizeof(u32));
    keysIn = c.take(4 * K);
    keys = c.take(4 * K);
    positionsIn = c.take(4 * K);
    positions = c.take(4 * K);
    heads = c.take(4 * K);
    runEnd = c.take(4 * K);
    mine = c.take(K);
    theirsAlive = c.take(K);
    for (size_t &b : blocks)
      b = c.take(blockBytes(k));
    candKeysIn = c.take(16 * K);
    candKeys = c.take(16 * K);
    candValuesIn = c.take(8 * K);
    candValues = c.take(8 * K);
    keptKeys = c.take(4 * K);
    keptValues = c.take(4 * K);
    total = c.at;
  }
};

} // namespace

DeviceScratch::~DeviceScratch() {
  if (data)
    cudaFree(data);
}

Status DeviceScratch::reserve(size_t bytes, const std::function<Status()> &idle) {
  if (have >= bytes && data)
    return Status::success();
  if (data) {
    if (idle)
      DSC_STATUS(idle());
    DSC_TRY(cudaFree(data));
    data = nullptr;
    have = 0;
  }
  DSC_TRY(cudaMalloc(&data, std::max<size_t>(bytes, 256)));
  have = std::max<size_t>(bytes, 256);
  return Status::success();
}

SparseWork::~SparseWork() {
  if (host)
    cudaFreeHost(host);
}

Status SparseWork::reserveHost(size_t bytes) {
  if (hostBytes >= bytes)
    return Status::success();
  if (host) {
    if (idle)
      DSC_STATUS(idle());
    DSC_TRY(cudaFreeHost(host));
    host = nullptr;
    hostBytes = 0;
  }
  DSC_TRY(cudaHostAlloc(&host, bytes, cudaHostAllocDefault));
  hostBytes = bytes;
  return Status::success();
}

Status SparseWork::stageEntries(const float *values, const int32_t *indices, int64_t count,
                                cudaStream_t stream) {
  DSC_STATUS(entries.reserve(8 * static_cast<size_t>(count), idle));
  k = count;
  badChecked = false;
  if (!count)
    return Status::success();
  DSC_TRY(cudaMemcpyAsync(entries.as<float>(), values, 4 * count, cudaMemcpyDeviceToDevice,
                          stream));
  DSC_TRY(cudaMemcpyAsync(entries.as<int32_t>(4 * count), indices, 4 * count,
                          cudaMemcpyDeviceToDevice, stream));
  return Status::success();
}

Status SparseWork::inputStatus() const {
  if (!badChecked)
    return Status::success();
  const u32 *report = static_cast<const u32 *>(host);
  if (report[0] == kNoBad)
    return Status::success();
  return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                       "indices[" + std::to_string(report[0]) + "] = " +
                           std::to_string(static_cast<int32_t>(report[1])) +
                           " is outside [0, " + std::to_string(n) + ")");
}

Status queueGlobalTopK(DevicePeers &peers, SparseWork &w, int64_t n, float *outValues,
                       int32_t *outIndices, cudaStream_t stream) {
  const int64_t k = w.k;
  const int P = peers.size(), r = peers.rank();
  w.n = n;
  const GTopKLayout L(k);
  DSC_STATUS(w.work.reserve(L.total, w.idle));
  const size_t temp = std::max({sortBytes<u32, int32_t>(k), scanBytes(k),
                                sortBytes<u64, float>(2 * k, true), sortBytes<u32, float>(k)});
  DSC_STATUS(w.cubTemp.reserve(temp, w.idle));
  u32 *report = w.work.as<u32>(L.report);
  DSC_STATUS(checkStaged(w, report, stream));
  if (!k)
    return Status::success(); // every rank has k = 0: nothing to exchange

  const float *values = w.entries.as<float>();
  const int32_t *indices = w.entries.as<int32_t>(4 * k);
  u32 *keys = w.work.as<u32>(L.keys);
  int32_t *positions = w.work.as<int32_t>(L.positions), *heads = w.work.as<int32_t>(L.heads),
          *runEnd = w.work.as<int32_t>(L.runEnd);
  uint8_t *mine = w.work.as<uint8_t>(L.mine), *theirsAlive = w.work.as<uint8_t>(L.theirsAlive);
  Block own{w.work.as<char>(L.blocks[0]), k}, cur{w.work.as<char>(L.blocks[1]), k},
      other{w.work.as<char>(L.blocks[2]), k}, next{w.work.as<char>(L.blocks[3]), k},
      theirs{w.work.as<char>(L.blocks[4]), k};
  void *temp_ = w.cubTemp.as<void>();
  size_t tempBytes = temp;
  const unsigned grid = blocksFor(k), grid2 = blocksFor(2 * k);

  // This rank's entries by index, a repeated index's values summed in entry order.
  indexKeys<<<grid, 256, 0, stream>>>(indices, k, w.work.as<u32>(L.keysIn),
                                      w.work.as<int32_t>(L.positionsIn));
  DSC_TRY(cub::DeviceRadixSort::SortPairs(temp_, tempBytes, w.work.as<u32>(L.keysIn), keys,
                                          w.work.as<int32_t>(L.positionsIn), positions, k, 0, 32,
                                          stream));
  runHeads<<<grid, 256, 0, stream>>>(keys, k, heads);
  tempBytes = temp;
  DSC_TRY(cub::DeviceScan::InclusiveSum(temp_, tempBytes, heads, runEnd, k, stream));
  ownEntries<<<grid, 256, 0, stream>>>(keys, positions, runEnd, values, k, report, own);
  DSC_TRY(cudaMemcpyAsync(cur.base, own.base, entriesBytes(k), cudaMemcpyDeviceToDevice, stream));
  DSC_TRY(cudaMemsetAsync(mine, 1, k, stream));

  // next = mergeTopK(a, b, k), then cur and next trade places.
  auto merge = [&](Block a, Block b) -> Status {
    mergeCandidates<<<grid2, 256, 0, stream>>>(a, b, k, w.work.as<u64>(L.candKeysIn),
                                               w.work.as<float>(L.candValuesIn));
    tempBytes = temp;
    DSC_TRY(cub::DeviceRadixSort::SortPairsDescending(
        temp_, tempBytes, w.work.as<u64>(L.candKeysIn), w.work.as<u64>(L.candKeys),
        w.work.as<float>(L.candValuesIn), w.work.as<float>(L.candValues), 2 * k, 0, 64, stream));
    keepFirstK<<<grid, 256, 0, stream>>>(w.work.as<u64>(L.candKeys),
                                         w.work.as<float>(L.candValues), k,
                                         w.work.as<u32>(L.keptKeys),
                                         w.work.as<float>(L.keptValues), next);
    tempBytes = temp;
    DSC_TRY(cub::DeviceRadixSort::SortPairs(
        temp_, tempBytes, w.work.as<u32>(L.keptKeys), reinterpret_cast<u32 *>(next.indices()),
        w.work.as<float>(L.keptValues), next.values(), k, 0, 32, stream));
    std::swap(cur, next);
    return Status::success();
  };
  auto send = [&](Block b, size_t bytes, int peer) {
    return peers.exchange({{PeerOp::Kind::Send, peer, b.base, bytes}}, stream);
  };
  auto recv = [&](Block b, size_t bytes, int peer) {
    return peers.exchange({{PeerOp::Kind::Recv, peer, b.base, bytes}}, stream);
  };

  int P2 = 1;
  while (P2 * 2 <= P)
    P2 *= 2;
  if (r >= P2) {
    // Folded in: the partner merges for this rank and answers with the
    // result and which of this rank's entries survived.
    DSC_STATUS(send(cur, entriesBytes(k), r - P2));
    DSC_STATUS(recv(other, blockBytes(k), r - P2));
    std::swap(cur, other);
    DSC_TRY(cudaMemcpyAsync(mine, cur.flags(), k, cudaMemcpyDeviceToDevice, stream));
  } else {
    const bool partner = r + P2 < P;
    if (partner) {
      DSC_STATUS(recv(theirs, entriesBytes(k), r + P2));
      DSC_TRY(cudaMemsetAsync(theirsAlive, 1, k, stream));
      DSC_STATUS(merge(cur, theirs));
      keepAlive<<<grid, 256, 0, stream>>>(own, mine, cur, k);
      keepAlive<<<grid, 256, 0, stream>>>(theirs, theirsAlive, cur, k);
    }
    for (int d = 1; d < P2; d *= 2) {
      const int peer = r ^ d;
      DSC_STATUS(peers.exchange({{PeerOp::Kind::Send, peer, cur.base, entriesBytes(k)},
                                 {PeerOp::Kind::Recv, peer, other.base, entriesBytes(k)}},
                                stream));
      DSC_STATUS(r < peer ? merge(cur, other) : merge(other, cur));
      keepAlive<<<grid, 256, 0, stream>>>(own, mine, cur, k);
      if (partner)
        keepAlive<<<grid, 256, 0, stream>>>(theirs, theirsAlive, cur, k);
    }
    if (partner) {
      DSC_TRY(cudaMemcpyAsync(cur.flags(), theirsAlive, k, cudaMemcpyDeviceToDevice, stream));
      DSC_STATUS(send(cur, blockBytes(k), r + P2));
    }
  }
  writeGlobal<<<grid, 256, 0, stream>>>(cur, k, P, report, outValues, outIndices);
  DSC_TRY(cudaPeekAtLastError());
  return Status::success();
}

Status queueGlobalTopKFeedback(SparseWork &w, float *residual, cudaStream_t stream) {
  const int64_t k = w.k;
  if (!k)
    return Status::success();
  const GTopKLayout L(k);
  addDropped<<<blocksFor(k), 256, 0, stream>>>(
      w.work.as<u32>(L.keys), w.work.as<int32_t>(L.positions), w.work.as<int32_t>(L.runEnd),
      w.work.as<uint8_t>(L.mine), w.entries.as<float>(), k, w.work.as<u32>(L.report), residual);
  DSC_TRY(cudaPeekAtLastError());
  return Status::success();
}

Status queueSparseAllReduce(DevicePeers &peers, SparseWork &w, int64_t n, bool balanced,
                            float *out, cudaStream_t stream) {
  const int64_t k = w.k;
  const int P = peers.size(), r = peers.rank();
  const size_t Pz = static_cast<size_t>(P);
  w.n = n;
  Carve c;
  const size_t report = c.take(2 * sizeof(u32)), keysIn = c.take(4 * k), sortedIdx = c.take(4 * k),
               sortedVal = c.take(4 * k), quant = c.take(8 * Pz), quantAll = c.take(8 * Pz * Pz),
               bounds = c.take(8 * (Pz + 1)), counts = c.take(8 * Pz),
               matrix = c.take(8 * Pz * Pz), offsets = c.take(8 * Pz);
  DSC_STATUS(w.work.reserve(c.at, w.idle));
  DSC_STATUS(w.cubTemp.reserve(sortBytes<u32, float>(k), w.idle));
  // The host's pinned memory: the report, the count matrix and the bounds
  // (read after the wait), the region offsets (uploaded).
  const size_t hostMatrix = 8, hostBounds = hostMatrix + 8 * Pz * Pz,
               hostOffsets = hostBounds + 8 * (Pz + 1), hostEnd = hostOffsets + 8 * Pz;
  DSC_STATUS(w.reserveHost(hostEnd));
  u32 *rep = w.work.as<u32>(report);
  DSC_STATUS(checkStaged(w, rep, stream));

  // This rank's entries by index (stable: a repeated index keeps entry order).
  u32 *idx = w.work.as<u32>(sortedIdx);
  float *val = w.work.as<float>(sortedVal);
  if (k) {
    indexKeys<<<blocksFor(k), 256, 0, stream>>>(w.entries.as<int32_t>(4 * k), k,
                                                w.work.as<u32>(keysIn), nullptr);
    size_t tempBytes = sortBytes<u32, float>(k);
    DSC_TRY(cub::DeviceRadixSort::SortPairs(w.cubTemp.as<void>(), tempBytes,
                                            w.work.as<u32>(keysIn), idx, w.entries.as<float>(),
                                            val, k, 0, 32, stream));
  }
  // The region boundaries, then how many of this rank's entries fall in each.
  int64_t *b = w.work.as<int64_t>(bounds);
  if (balanced && P > 1) {
    localQuantiles<<<blocksFor(P), 256, 0, stream>>>(idx, k, n, P, rep,
                                                     w.work.as<int64_t>(quant));
    DSC_STATUS(allGather(peers, w.work.as<int64_t>(quant), 8 * (Pz - 1),
                         w.work.as<int64_t>(quantAll), stream));
    sumQuantiles<<<blocksFor(P), 256, 0, stream>>>(w.work.as<int64_t>(quantAll), P,
                                                   w.work.as<int64_t>(quant));
    regionBounds<<<1, 1, 0, stream>>>(n, P, w.work.as<int64_t>(quant), b);
  } else {
    regionBounds<<<1, 1, 0, stream>>>(n, P, nullptr, b);
  }
  regionCounts<<<blocksFor(P), 256, 0, stream>>>(idx, k, P, rep, b, w.work.as<int64_t>(counts));
  DSC_STATUS(allGather(peers, w.work.as<int64_t>(counts), 8 * Pz, w.work.as<int64_t>(matrix),
                       stream));
  char *host = static_cast<char *>(w.host);
  DSC_TRY(cudaMemcpyAsync(host + hostMatrix, w.work.as<int64_t>(matrix), 8 * Pz * Pz,
                          cudaMemcpyDeviceToHost, stream));
  DSC_TRY(cudaMemcpyAsync(host + hostBounds, b, 8 * (Pz + 1), cudaMemcpyDeviceToHost, stream));
  // The one host round trip: ncclSend/ncclRecv need the sizes on the host.
  DSC_STATUS(peers.synchronize(stream));
  const int64_t *M = reinterpret_cast<const int64_t *>(host + hostMatrix); // M[s * P + q]
  const int64_t *B = reinterpret_cast<const int64_t *>(host + hostBounds);
  int64_t *goff = reinterpret_cast<int64_t *>(host + hostOffsets);

  // Where each rank's part lands (rank order), and each reduced region's
  // message size: a bound every rank computes alike.
  std::vector<int64_t> sendOff(Pz + 1, 0), recvOff(Pz + 1, 0), msgBytes(Pz);
  for (int q = 0; q < P; ++q) {
    sendOff[q + 1] = sendOff[q] + M[Pz * r + q];
    recvOff[q + 1] = recvOff[q] + M[Pz * q + r];
  }
  int64_t gathered = 0, maxPayload = 0;
  for (int q = 0; q < P; ++q) {
    int64_t U = 0;
    for (int s = 0; s < P; ++s)
      U += M[Pz * s + q];
    const int64_t len = B[q + 1] - B[q];
    const int64_t payload = 2 * std::min(U, len) > len ? 4 * len : 8 * U;
    msgBytes[q] = (8 + payload + 7) / 8 * 8;
    goff[q] = gathered;
    gathered += msgBytes[q];
    maxPayload = std::max({maxPayload, len, U});
  }
  const int64_t U = recvOff[P];
  Carve x;
  const size_t rIdx = x.take(4 * U), rVal = x.take(4 * U), sIdx = x.take(4 * U),
               sVal = x.take(4 * U), heads = x.take(4 * U), runEnd = x.take(4 * U),
               runIdx = x.take(4 * U), runVal = x.take(4 * U), touched = x.take(8),
               sendMsg = x.take(msgBytes[r]), recvMsgs = x.take(gathered);
  DSC_STATUS(w.exchange.reserve(x.at, w.idle));
  const size_t temp = std::max(sortBytes<u32, float>(U), scanBytes(U));
  DSC_STATUS(w.cubTemp.reserve(temp, w.idle));
  DSC_TRY(cudaMemcpyAsync(w.work.as<int64_t>(offsets), goff, 8 * Pz, cudaMemcpyHostToDevice,
                          stream));

  // Reduce-scatter: each owner gets the entries in its region.
  DSC_TRY(cudaMemcpyAsync(w.exchange.as<float>(rVal) + recvOff[r], val + sendOff[r],
                          4 * M[Pz * r + r], cudaMemcpyDeviceToDevice, stream));
  DSC_TRY(cudaMemcpyAsync(w.exchange.as<u32>(rIdx) + recvOff[r], idx + sendOff[r],
                          4 * M[Pz * r + r], cudaMemcpyDeviceToDevice, stream));
  std::vector<PeerOp> ops;
  for (int q = 0; q < P; ++q) {
    if (q == r)
      continue;
    if (const size_t bytes = 4 * M[Pz * r + q]) {
      ops.push_back({PeerOp::Kind::Send, q, val + sendOff[q], bytes});
      ops.push_back({PeerOp::Kind::Send, q, idx + sendOff[q], bytes});
    }
    if (const size_t bytes = 4 * M[Pz * q + r]) {
      ops.push_back({PeerOp::Kind::Recv, q, w.exchange.as<float>(rVal) + recvOff[q], bytes});
      ops.push_back({PeerOp::Kind::Recv, q, w.exchange.as<u32>(rIdx) + recvOff[q], bytes});
    }
  }
  if (!ops.empty())
    DSC_STATUS(peers.exchange(ops, stream));

  // The owner's sums, straight into out (zero elsewhere), and its message.
  DSC_TRY(cudaMemsetAsync(out, 0, 4 * static_cast<size_t>(n), stream));
  int64_t *t = w.exchange.as<int64_t>(touched);
  DSC_TRY(cudaMemsetAsync(t, 0, 8, stream));
  if (U) {
    size_t tempBytes = temp;
    DSC_TRY(cub::DeviceRadixSort::SortPairs(w.cubTemp.as<void>(), tempBytes,
                                            w.exchange.as<u32>(rIdx), w.exchange.as<u32>(sIdx),
                                            w.exchange.as<float>(rVal),
                                            w.exchange.as<float>(sVal), U, 0, 32, stream));
    runHeads<<<blocksFor(U), 256, 0, stream>>>(w.exchange.as<u32>(sIdx), U,
                                               w.exchange.as<int32_t>(heads));
    tempBytes = temp;
    DSC_TRY(cub::DeviceScan::InclusiveSum(w.cubTemp.as<void>(), tempBytes,
                                          w.exchange.as<int32_t>(heads),
                                          w.exchange.as<int32_t>(runEnd), U, stream));
    reduceRuns<<<blocksFor(U), 256, 0, stream>>>(
        w.exchange.as<u32>(sIdx), w.exchange.as<float>(sVal), w.exchange.as<int32_t>(runEnd), U,
        P, w.exchange.as<int32_t>(runIdx), w.exchange.as<float>(runVal), t, out);
  }
  const int64_t lo = B[r], len = B[r + 1] - B[r];
  packRegion<<<blocksFor(std::max(len, U)), 256, 0, stream>>>(
      t, w.exchange.as<int32_t>(runIdx), w.exchange.as<float>(runVal), out, lo, len,
      w.exchange.as<char>(sendMsg));

  // All-gather the reduced regions.
  ops.clear();
  for (int q = 0; q < P; ++q)
    if (q != r) {
      ops.push_back({PeerOp::Kind::Send, q, w.exchange.as<char>(sendMsg),
                     static_cast<size_t>(msgBytes[r])});
      ops.push_back({PeerOp::Kind::Recv, q, w.exchange.as<char>(recvMsgs) + goff[q],
                     static_cast<size_t>(msgBytes[q])});
    }
  if (!ops.empty()) {
    DSC_STATUS(peers.exchange(ops, stream));
    const dim3 grid(blocksFor(maxPayload), static_cast<unsigned>(std::min(P, 65535)));
    unpackRegions<<<grid, 256, 0, stream>>>(w.exchange.as<char>(recvMsgs),
                                            w.work.as<int64_t>(offsets), b, P, r, out);
  }
  DSC_TRY(cudaPeekAtLastError());
  return Status::success();
}

} // namespace mgs::rt::cuda
