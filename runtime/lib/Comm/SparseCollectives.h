//===- SparseCollectives.h - Global top-k, balanced sparse all-reduce -*- C++ -*-===//
//
// Two exchanges of sparse gradients whose traffic does not grow like the
// all-gather's k P entries a worker, built from point-to-point messages
// (CommBackend::sendRecv) and run as one task on the backend's communication
// thread (CommBackend::startTask), so they overlap backprop like the others:
//
//  - global top-k (gTop-k, Shi et al., ICDCS 2019): the ranks beyond the
//    largest power of two P2 <= P first send their k entries to rank
//    r - P2, which merges them into its own; the P2 ranks then run
//    log2(P2) rounds of recursive doubling, each exchanging k entries with
//    rank r ^ d and keeping the top k of the merge; finally rank r sends the
//    result to rank r + P2. Every rank ends with the same k entries.
//  - balanced sparse all-reduce (Ok-Topk / SparCML): the index space is split
//    into P regions, rank q owning region q; every rank sends each owner its
//    entries in the owner's region (P - 1 pairwise steps), the owner sums
//    them (rank order, then entry order: the bits of a serial dense sum),
//    and the reduced regions are all-gathered (Bruck, ceil(log2 P) steps),
//    each sparse or, when more than half of it is touched, dense. Balanced
//    regions: the boundaries are the means over the ranks of each rank's
//    local index quantiles (an all-reduce of P - 1 integers).
//
// Merges are deterministic: an entry ranks above another by larger
// magnitude (TopK.cpp's key: NaN above infinity), then by smaller index; the
// sum at a shared index is a + b with a from the lower ranks (IEEE addition
// is commutative, so both partners of a round compute the same bits).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_SPARSECOLLECTIVES_H
#define MGSRT_COMM_SPARSECOLLECTIVES_H

#include "Comm/CommBackend.h"

#include <cstdint>
#include <vector>

namespace mgs::rt {

/// Sparse entries sorted by index, each index once.
struct SparseEntries {
  std::vector<float> values;
  std::vector<int32_t> indices;
  size_t size() const { return indices.size(); }
};

/// Whether entry (va, ia) ranks before (vb, ib) in a top-k: larger magnitude
/// first (NaN above infinity), then the smaller index.
bool ranksBefore(float va, int32_t ia, float vb, int32_t ib);

/// The union of a and b (the values at an index both have summed, a's + b's)
/// cut to its k entries that rank first (ranksBefore), sorted by index.
SparseEntries mergeTopK(const SparseEntries &a, const SparseEntries &b, int64_t k);

/// What the global top-k leaves on one rank.
struct GlobalTopKResult {
  /// The global top-k, sums over the ranks (not averaged), sorted by index;
  /// the same on every rank.
  SparseEntries global;
  /// Per input entry: 1 when its contribution is not part of `global` (the
  /// merges dropped it on its way; it goes back into the residual).
  std::vector<char> dropped;
};

/// The global top-k of every rank's `count` entries (values, indices; an
/// index may repeat: its values are summed first). Runs inside a task of
/// `comm` (CommBackend::startTask); every rank calls it with the same k.
Status globalTopK(CommBackend &comm, int64_t k, const float *values, const int32_t *indices,
                  int64_t count, GlobalTopKResult &out);

/// Whether every one of `count` indices is in [0, n): else an
/// MGSRT_ERROR_INVALID_ARGUMENT status "indices[j] = v is outside [0, n)"
/// naming the first that is not.
Status checkSparseIndices(const int32_t *indices, int64_t count, int64_t n);

/// What mgsrt_gtopk_start writes (mgsrt.h): the k entries of `result.global`
/// averaged over the P ranks, sorted by index, padded with zeros at index 0
/// where there are fewer than k (only when the ranks' entries repeat indices).
void writeGlobalTopK(const GlobalTopKResult &result, int P, int64_t k, float *outValues,
                     int32_t *outIndices);

/// The error feedback of a global top-k: the input entries it dropped
/// (result.dropped) as `count` = their number of pairs in droppedIndices /
/// droppedValues (room for every input entry), sorted by index, a repeated
/// index's entries in entry order. residual[droppedIndices[j]] +=
/// droppedValues[j] in this order is the residual the CPU path leaves.
int64_t droppedEntries(const GlobalTopKResult &result, const float *values,
                       const int32_t *indices, int64_t count, int32_t *droppedIndices,
                       float *droppedValues);

/// A phase of a collective on the communication thread, for the timeline:
/// when it ran (steady clock, seconds) and the bytes this rank received in it.
struct CollectivePhase {
  const char *name; ///< static
  double start, end;
  int64_t bytesReceived;
};

/// out (n floats) = the sum over the ranks of their sparse vectors (rank
/// order, then entry order), divided by P when `average` (every element
/// once, in float). balanced: region boundaries at the ranks' mean local
/// index quantiles (one all-reduce of P - 1 integers more: recursive
/// doubling, floor(log2 P) + 2 messages at most); else equal ranges. Runs
/// inside a task of `comm`; indices must be in [0, n). `phases`, when given,
/// gets its phases in order: the region boundaries, the reduce (P - 1
/// exchanges), the dense result (zeroing and summing into `out`), the gather
/// (Bruck) and the unpacking of the gathered regions.
Status sparseAllReduce(CommBackend &comm, int64_t n, const float *values, const int32_t *indices,
                       int64_t count, bool balanced, bool average, float *out,
                       std::vector<CollectivePhase> *phases = nullptr);

/// The region boundaries (P + 1 of them, 0 .. n) every rank of `comm` agrees
/// on for the sparse all-reduce (exposed for tests). Runs inside a task.
Status sparseRegions(CommBackend &comm, int64_t n, const int32_t *sortedIndices, int64_t count,
                     bool balanced, std::vector<int64_t> &bounds);

} // namespace mgs::rt

#endif // MGSRT_COMM_SPARSECOLLECTIVES_H
