//===- SparseCollectives.cpp - Global top-k, balanced sparse all-reduce ---===//
//
// The algorithms of SparseCollectives.h over CommBackend::sendRecv. A
// message of entries is [count (int64), values (float x count), indices
// (int32 x count)]; a message of blocks (the all-gather) is [blocks (int64),
// byte length of each (int64 x blocks), their bytes].
//
//===----------------------------------------------------------------------===//

#include "Comm/SparseCollectives.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

namespace mgs::rt {

namespace {

/// TopK.cpp's magnitude key: the bits of |x|, every NaN just above +inf.
uint32_t magnitudeKey(float x) {
  if (std::isnan(x))
    return 0x7f800001u;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits & 0x7fffffffu;
}

Status malformed(const char *what) {
  return Status::error(MGSRT_ERROR_BACKEND,
                       std::string("sparse collective: malformed message (") + what + ")");
}

template <typename T> void put(std::vector<char> &out, const T *data, size_t count) {
  const size_t at = out.size();
  out.resize(at + count * sizeof(T));
  if (count)
    std::memcpy(out.data() + at, data, count * sizeof(T));
}

/// Reads `count` Ts at `at` (advanced); false past the end.
template <typename T>
bool get(const std::vector<char> &in, size_t &at, T *data, size_t count) {
  if (at > in.size() || in.size() - at < count * sizeof(T))
    return false;
  if (count)
    std::memcpy(data, in.data() + at, count * sizeof(T));
  at += count * sizeof(T);
  return true;
}

void packEntries(const float *values, const int32_t *indices, size_t count,
                 std::vector<char> &out) {
  const int64_t n = static_cast<int64_t>(count);
  put(out, &n, 1);
  put(out, values, count);
  put(out, indices, count);
}

void packEntries(const SparseEntries &e, std::vector<char> &out) {
  packEntries(e.values.data(), e.indices.data(), e.size(), out);
}

bool unpackEntries(const std::vector<char> &in, size_t &at, SparseEntries &e) {
  int64_t n = 0;
  if (!get(in, at, &n, 1) || n < 0 || static_cast<uint64_t>(n) > in.size())
    return false;
  e.values.resize(n);
  e.indices.resize(n);
  return get(in, at, e.values.data(), n) && get(in, at, e.indices.data(), n);
}

/// alive[i] stays 1 only where list.indices[i] is in `kept` (both sorted).
void keepAlive(const SparseEntries &list, std::vector<char> &alive, const SparseEntries &kept) {
  size_t j = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    while (j < kept.size() && kept.indices[j] < list.indices[i])
      ++j;
    if (j == kept.size() || kept.indices[j] != list.indices[i])
      alive[i] = 0;
  }
}

/// Every rank's block in blocks[rank] (this rank's filled in): Bruck's
/// all-gather, ceil(log2 P) exchanges. Before the exchange at distance d a
/// rank holds blocks r .. r+d-1 (mod P); it sends the first min(d, P - d) to
/// r - d and receives r+d .. from r + d.
Status allGatherBlocks(CommBackend &comm, std::vector<std::vector<char>> &blocks) {
  const int P = comm.size(), r = comm.rank();
  std::vector<char> msg, in;
  for (int d = 1; d < P; d *= 2) {
    const int count = std::min(d, P - d);
    msg.clear();
    const int64_t c = count;
    put(msg, &c, 1);
    for (int i = 0; i < count; ++i) {
      const int64_t len = static_cast<int64_t>(blocks[(r + i) % P].size());
      put(msg, &len, 1);
    }
    for (int i = 0; i < count; ++i) {
      const std::vector<char> &b = blocks[(r + i) % P];
      put(msg, b.data(), b.size());
    }
    if (Status s = comm.sendRecv((r - d + P) % P, msg, (r + d) % P, in); !s.ok())
      return s;
    size_t at = 0;
    int64_t got = 0;
    if (!get(in, at, &got, 1) || got != count)
      return malformed("block count");
    std::vector<int64_t> lens(count);
    if (!get(in, at, lens.data(), count))
      return malformed("block lengths");
    for (int i = 0; i < count; ++i) {
      std::vector<char> &b = blocks[(r + d + i) % P];
      if (lens[i] < 0 || static_cast<uint64_t>(lens[i]) > in.size())
        return malformed("block length");
      b.resize(lens[i]);
      if (!get(in, at, b.data(), b.size()))
        return malformed("block bytes");
    }
  }
  return Status::success();
}

/// v becomes the elementwise sum over the ranks: the ranks beyond the
/// largest power of two P2 <= P fold in (send to r - P2), recursive doubling
/// among the P2, and the result goes back: floor(log2 P) + 2 messages at most.
Status allReduceSum(CommBackend &comm, std::vector<int64_t> &v, int64_t *received = nullptr) {
  const int P = comm.size(), r = comm.rank();
  int P2 = 1;
  while (P2 * 2 <= P)
    P2 *= 2;
  std::vector<char> msg, in;
  auto add = [&]() -> Status {
    if (received)
      *received += static_cast<int64_t>(in.size());
    if (in.size() != v.size() * sizeof(int64_t))
      return malformed("sum vector");
    std::vector<int64_t> other(v.size());
    size_t at = 0;
    get(in, at, other.data(), other.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] += other[i];
    return Status::success();
  };
  msg.clear();
  put(msg, v.data(), v.size());
  if (r >= P2) {
    if (Status s = comm.sendRecv(r - P2, msg, r - P2, in); !s.ok())
      return s;
    if (received)
      *received += static_cast<int64_t>(in.size());
    size_t at = 0;
    if (in.size() != v.size() * sizeof(int64_t) || !get(in, at, v.data(), v.size()))
      return malformed("sum vector");
    return Status::success();
  }
  if (r + P2 < P) {
    if (Status s = comm.sendRecv(-1, msg, r + P2, in); !s.ok())
      return s;
    if (Status s = add(); !s.ok())
      return s;
  }
  for (int d = 1; d < P2; d *= 2) {
    msg.clear();
    put(msg, v.data(), v.size());
    if (Status s = comm.sendRecv(r ^ d, msg, r ^ d, in); !s.ok())
      return s;
    if (Status s = add(); !s.ok())
      return s;
  }
  if (r + P2 < P) {
    msg.clear();
    put(msg, v.data(), v.size());
    return comm.sendRecv(r + P2, msg, -1, in);
  }
  return Status::success();
}

} // namespace

bool ranksBefore(float va, int32_t ia, float vb, int32_t ib) {
  const uint32_t ka = magnitudeKey(va), kb = magnitudeKey(vb);
  return ka != kb ? ka > kb : ia < ib;
}

SparseEntries mergeTopK(const SparseEntries &a, const SparseEntries &b, int64_t k) {
  SparseEntries u;
  u.values.reserve(a.size() + b.size());
  u.indices.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a.indices[i] < b.indices[j])) {
      u.values.push_back(a.values[i]);
      u.indices.push_back(a.indices[i++]);
    } else if (i == a.size() || b.indices[j] < a.indices[i]) {
      u.values.push_back(b.values[j]);
      u.indices.push_back(b.indices[j++]);
    } else {
      u.values.push_back(a.values[i] + b.values[j]);
      u.indices.push_back(a.indices[i]);
      ++i, ++j;
    }
  }
  if (static_cast<int64_t>(u.size()) <= k)
    return u;
  std::vector<uint32_t> order(u.size());
  std::iota(order.begin(), order.end(), 0u);
  auto before = [&](uint32_t x, uint32_t y) {
    return ranksBefore(u.values[x], u.indices[x], u.values[y], u.indices[y]);
  };
  std::nth_element(order.begin(), order.begin() + k, order.end(), before);
  order.resize(k);
  std::sort(order.begin(), order.end()); // index order: u is sorted by index
  SparseEntries top;
  top.values.reserve(k);
  top.indices.reserve(k);
  for (uint32_t x : order) {
    top.values.push_back(u.values[x]);
    top.indices.push_back(u.indices[x]);
  }
  return top;
}

Status globalTopK(CommBackend &comm, int64_t k, const float *values, const int32_t *indices,
                  int64_t count, GlobalTopKResult &out) {
  const int P = comm.size(), r = comm.rank();
  // This rank's entries by index, repeated indices summed in entry order.
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return indices[x] < indices[y]; });
  SparseEntries own;
  std::vector<int64_t> entryOf(count);
  for (int64_t p : order) {
    if (own.size() && own.indices.back() == indices[p]) {
      own.values.back() += values[p];
    } else {
      own.values.push_back(values[p]);
      own.indices.push_back(indices[p]);
    }
    entryOf[p] = static_cast<int64_t>(own.size()) - 1;
  }
  std::vector<char> mine(own.size(), 1);
  int P2 = 1;
  while (P2 * 2 <= P)
    P2 *= 2;

  SparseEntries cur = own;
  std::vector<char> msg, in;
  if (r >= P2) {
    // Folded in: the partner merges for this rank and answers with the
    // result and which of this rank's entries survived.
    msg.clear();
    packEntries(cur, msg);
    if (Status s = comm.sendRecv(r - P2, msg, r - P2, in); !s.ok())
      return s;
    size_t at = 0;
    if (!unpackEntries(in, at, cur) || !get(in, at, mine.data(), mine.size()))
      return malformed("global top-k result");
  } else {
    const bool partner = r + P2 < P;
    SparseEntries theirs;
    std::vector<char> theirsAlive;
    if (partner) {
      if (Status s = comm.sendRecv(-1, msg, r + P2, in); !s.ok())
        return s;
      size_t at = 0;
      if (!unpackEntries(in, at, theirs))
        return malformed("folded entries");
      theirsAlive.assign(theirs.size(), 1);
      cur = mergeTopK(cur, theirs, k);
      keepAlive(own, mine, cur);
      keepAlive(theirs, theirsAlive, cur);
    }
    for (int d = 1; d < P2; d *= 2) {
      const int peer = r ^ d;
      msg.clear();
      packEntries(cur, msg);
      if (Status s = comm.sendRecv(peer, msg, peer, in); !s.ok())
        return s;
      SparseEntries other;
      size_t at = 0;
      if (!unpackEntries(in, at, other))
        return malformed("round entries");
      cur = r < peer ? mergeTopK(cur, other, k) : mergeTopK(other, cur, k);
      keepAlive(own, mine, cur);
      if (partner)
        keepAlive(theirs, theirsAlive, cur);
    }
    if (partner) {
      msg.clear();
      packEntries(cur, msg);
      put(msg, theirsAlive.data(), theirsAlive.size());
      if (Status s = comm.sendRecv(r + P2, msg, -1, in); !s.ok())
        return s;
    }
  }
  out.global = std::move(cur);
  out.dropped.assign(count, 0);
  for (int64_t p = 0; p < count; ++p)
    out.dropped[p] = !mine[entryOf[p]];
  return Status::success();
}

Status checkSparseIndices(const int32_t *indices, int64_t count, int64_t n) {
  for (int64_t j = 0; j < count; ++j)
    if (indices[j] < 0 || indices[j] >= n)
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           "indices[" + std::to_string(j) + "] = " + std::to_string(indices[j]) +
                               " is outside [0, " + std::to_string(n) + ")");
  return Status::success();
}

void writeGlobalTopK(const GlobalTopKResult &result, int P, int64_t k, float *outValues,
                     int32_t *outIndices) {
  const SparseEntries &g = result.global;
  for (int64_t j = 0; j < k; ++j) {
    const bool real = static_cast<size_t>(j) < g.size();
    outValues[j] = real ? (P > 1 ? g.values[j] / static_cast<float>(P) : g.values[j]) : 0.0f;
    outIndices[j] = real ? g.indices[j] : 0;
  }
}

int64_t droppedEntries(const GlobalTopKResult &result, const float *values,
                       const int32_t *indices, int64_t count, int32_t *droppedIndices,
                       float *droppedValues) {
  std::vector<int64_t> order;
  for (int64_t p = 0; p < count; ++p)
    if (result.dropped[p])
      order.push_back(p);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return indices[x] < indices[y]; });
  for (size_t j = 0; j < order.size(); ++j) {
    droppedIndices[j] = indices[order[j]];
    droppedValues[j] = values[order[j]];
  }
  return static_cast<int64_t>(order.size());
}

namespace {
/// sparseRegions, adding the bytes this rank received to `received`.
Status regionBounds(CommBackend &comm, int64_t n, const int32_t *sortedIndices, int64_t count,
                    bool balanced, std::vector<int64_t> &bounds, int64_t *received) {
  const int P = comm.size();
  bounds.assign(P + 1, 0);
  for (int q = 0; q <= P; ++q)
    bounds[q] = n * q / P;
  if (!balanced || P == 1)
    return Status::success();
  // Each rank's P - 1 local quantiles (equal ranges where it selected
  // nothing); the boundaries are their means over the ranks (integer sums:
  // the same on every rank whatever the order).
  std::vector<int64_t> sum(P - 1);
  for (int q = 1; q < P; ++q)
    sum[q - 1] = count ? sortedIndices[count * q / P] : bounds[q];
  if (Status s = allReduceSum(comm, sum, received); !s.ok())
    return s;
  for (int q = 1; q < P; ++q)
    bounds[q] = std::clamp(sum[q - 1] / P, bounds[q - 1], n);
  return Status::success();
}

/// Appends phases to a CollectivePhase log (none when it is null): each
/// phase from the end of the previous one (or construction) to end().
class PhaseLog {
public:
  explicit PhaseLog(std::vector<CollectivePhase> *log) : log_(log), last_(now()) {
    if (log_)
      log_->clear();
  }
  void end(const char *name, int64_t bytesReceived = 0) {
    if (!log_)
      return;
    const double t = now();
    log_->push_back({name, last_, t, bytesReceived});
    last_ = t;
  }

private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::vector<CollectivePhase> *log_;
  double last_;
};
} // namespace

Status sparseRegions(CommBackend &comm, int64_t n, const int32_t *sortedIndices, int64_t count,
                     bool balanced, std::vector<int64_t> &bounds) {
  return regionBounds(comm, n, sortedIndices, count, balanced, bounds, nullptr);
}

Status sparseAllReduce(CommBackend &comm, int64_t n, const float *values, const int32_t *indices,
                       int64_t count, bool balanced, bool average, float *out,
                       std::vector<CollectivePhase> *phases) {
  const int P = comm.size(), r = comm.rank();
  PhaseLog log(phases);
  // This rank's entries by index; repeated indices keep their entry order.
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return indices[x] < indices[y]; });
  std::vector<float> v(count);
  std::vector<int32_t> idx(count);
  for (int64_t p = 0; p < count; ++p) {
    v[p] = values[order[p]];
    idx[p] = indices[order[p]];
  }
  std::vector<int64_t> bounds;
  int64_t received = 0;
  if (Status s = regionBounds(comm, n, idx.data(), count, balanced, bounds, &received); !s.ok())
    return s;
  log.end("sparse_allreduce regions", received);
  // split[q] .. split[q + 1]: this rank's entries in region q.
  std::vector<size_t> split(P + 1);
  for (int q = 0; q <= P; ++q)
    split[q] = std::lower_bound(idx.begin(), idx.end(), bounds[q]) - idx.begin();
  split[P] = count;

  // Reduce-scatter: pairwise exchanges of each owner's part.
  std::vector<std::vector<char>> parts(P);
  packEntries(v.data() + split[r], idx.data() + split[r], split[r + 1] - split[r], parts[r]);
  std::vector<char> msg;
  for (int step = 1; step < P; ++step) {
    const int dst = (r + step) % P, src = (r - step + P) % P;
    msg.clear();
    packEntries(v.data() + split[dst], idx.data() + split[dst], split[dst + 1] - split[dst], msg);
    if (Status s = comm.sendRecv(dst, msg, src, parts[src]); !s.ok())
      return s;
  }
  received = 0;
  for (int src = 0; src < P; ++src)
    received += src == r ? 0 : static_cast<int64_t>(parts[src].size());
  log.end("sparse_allreduce reduce", received);
  std::fill(out, out + n, 0.0f);
  const int64_t lo = bounds[r], hi = bounds[r + 1];
  std::vector<char> touched(hi - lo, 0);
  std::vector<int32_t> touchedList;
  SparseEntries e;
  for (int src = 0; src < P; ++src) {
    size_t at = 0;
    if (!unpackEntries(parts[src], at, e))
      return malformed("region entries");
    for (size_t j = 0; j < e.size(); ++j) {
      const int32_t i = e.indices[j];
      if (i < lo || i >= hi)
        return malformed("index outside the owner's region");
      out[i] += e.values[j];
      if (!touched[i - lo]) {
        touched[i - lo] = 1;
        touchedList.push_back(i);
      }
    }
  }
  if (average && P > 1)
    for (int32_t i : touchedList)
      out[i] /= static_cast<float>(P);

  // All-gather the reduced regions: [dense (int64 1), the region's floats]
  // or [sparse (int64 0), its touched entries].
  std::vector<std::vector<char>> regions(P);
  std::vector<char> &mineMsg = regions[r];
  const int64_t len = hi - lo;
  const int64_t dense = static_cast<int64_t>(touchedList.size()) * 2 > len ? 1 : 0;
  put(mineMsg, &dense, 1);
  if (dense) {
    put(mineMsg, out + lo, len);
  } else {
    std::sort(touchedList.begin(), touchedList.end());
    std::vector<float> tv(touchedList.size());
    for (size_t j = 0; j < touchedList.size(); ++j)
      tv[j] = out[touchedList[j]];
    packEntries(tv.data(), touchedList.data(), touchedList.size(), mineMsg);
  }
  log.end("sparse_allreduce dense result");
  if (Status s = allGatherBlocks(comm, regions); !s.ok())
    return s;
  received = 0;
  for (int q = 0; q < P; ++q)
    received += q == r ? 0 : static_cast<int64_t>(regions[q].size());
  log.end("sparse_allreduce gather", received);
  for (int q = 0; q < P; ++q) {
    if (q == r)
      continue;
    size_t at = 0;
    int64_t isDense = 0;
    if (!get(regions[q], at, &isDense, 1))
      return malformed("region kind");
    if (isDense) {
      if (!get(regions[q], at, out + bounds[q], bounds[q + 1] - bounds[q]))
        return malformed("dense region");
      continue;
    }
    if (!unpackEntries(regions[q], at, e))
      return malformed("sparse region");
    for (size_t j = 0; j < e.size(); ++j) {
      if (e.indices[j] < bounds[q] || e.indices[j] >= bounds[q + 1])
        return malformed("index outside its region");
      out[e.indices[j]] = e.values[j];
    }
  }
  log.end("sparse_allreduce unpack");
  return Status::success();
}

} // namespace mgs::rt
