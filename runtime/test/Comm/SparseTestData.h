//===- SparseTestData.h - Data of the sparse collectives' tests -*- C++ -*-===//
//
// The gradients every rank of a sparse collective's test selects from, the
// selection itself (mgsrt_topk_sparsify, as the step does) and the
// one-process references, shared by the conformance suite
// (SparseCollectivesConformance.h), the staged collectives' tests
// (StagedCollectivesTest.cpp) and the GPU tests.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_COMM_SPARSETESTDATA_H
#define MGSRT_TEST_COMM_SPARSETESTDATA_H

#include "mgsrt/mgsrt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace mgsrt_comm_test {

/// Rank `rank`'s gradient at `step`: exact = multiples of 1/4 (exact sums,
/// many ties of magnitude), else arbitrary floats (sums depend on order).
/// The first eighth of the indices is larger on every rank, so the ranks'
/// selections collide there.
inline std::vector<float> sparseGradient(int rank, int step, int64_t n, bool exact) {
  std::mt19937 gen(static_cast<uint32_t>(7919 * rank + 104729 * step + n));
  std::uniform_int_distribution<int> small(-4, 4), big(-40, 40);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::vector<float> g(n);
  for (int64_t i = 0; i < n; ++i) {
    const bool hot = i < std::max<int64_t>(1, n / 8);
    g[i] = exact ? static_cast<float>(hot ? big(gen) : small(gen)) * 0.25f
                 : real(gen) * (hot ? 10.0f : 1.0f);
  }
  return g;
}

/// One rank's top-k selection of grad + residual (residual updated).
struct Selection {
  std::vector<float> values;
  std::vector<int32_t> indices;
};

inline Selection selectTopK(std::vector<float> &grad, std::vector<float> &residual, int64_t k) {
  const int64_t n = static_cast<int64_t>(grad.size());
  Selection s;
  s.values.resize(k);
  s.indices.resize(k);
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  const int64_t desc[] = {n, k};
  void *bufs[] = {grad.data(), residual.data(), s.values.data(), s.indices.data()};
  EXPECT_EQ(mgsrt_topk_sparsify(ctx, desc, bufs), MGSRT_OK) << mgsrt_ctx_message(ctx);
  mgsrt_ctx_destroy(ctx);
  return s;
}

/// What a CPU context's global top-k (slot 3) and balanced sparse all-reduce
/// (slot 5) of one rank's selection leave on its communicator: the host
/// algorithms, the reference of the GPU forms' tests.
struct HostSparseResults {
  std::vector<float> values, residual, dense;
  std::vector<int32_t> indices;
};

inline HostSparseResults hostSparseCollectives(mgsrt_ctx_t *cpu, Selection sel,
                                               std::vector<float> residual, int64_t n,
                                               int64_t balanced = 1) {
  const int64_t k = static_cast<int64_t>(sel.indices.size());
  HostSparseResults out{std::vector<float>(k), std::move(residual), std::vector<float>(n),
                        std::vector<int32_t>(k)};
  const int64_t g[] = {k, 3, n}, s[] = {k, 5, n, balanced}, gWait[] = {3}, sWait[] = {5};
  void *gBufs[] = {sel.values.data(), sel.indices.data(), out.residual.data(), out.values.data(),
                   out.indices.data()};
  void *sBufs[] = {sel.values.data(), sel.indices.data(), out.dense.data()};
  EXPECT_EQ(mgsrt_gtopk_start(cpu, g, gBufs), MGSRT_OK) << mgsrt_ctx_message(cpu);
  EXPECT_EQ(mgsrt_comm_wait(cpu, gWait, nullptr), MGSRT_OK) << mgsrt_ctx_message(cpu);
  EXPECT_EQ(mgsrt_sparse_allreduce_start(cpu, s, sBufs), MGSRT_OK) << mgsrt_ctx_message(cpu);
  EXPECT_EQ(mgsrt_comm_wait(cpu, sWait, nullptr), MGSRT_OK) << mgsrt_ctx_message(cpu);
  return out;
}

inline uint32_t bitsOf(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// The references, computed in one process with code independent of the
// runtime's: the global top-k by the same merge tree (the ranks beyond the
// largest power of two folded in first, then recursive doubling) over
// std::map, and the balanced all-reduce as the dense sum of every rank's
// sparse vector in rank order.

using RefSet = std::map<int32_t, float>;

/// The union (a's value + b's at a shared index) cut to the k entries of
/// largest magnitude, ties to the smaller index.
inline RefSet refMerge(const RefSet &a, const RefSet &b, int64_t k) {
  RefSet u = a;
  for (const auto &[i, v] : b) {
    auto it = u.find(i);
    if (it == u.end())
      u[i] = v;
    else
      it->second = it->second + v;
  }
  if (static_cast<int64_t>(u.size()) <= k)
    return u;
  std::vector<std::pair<int32_t, float>> all(u.begin(), u.end());
  std::sort(all.begin(), all.end(), [](const auto &x, const auto &y) {
    const float ax = std::fabs(x.second), ay = std::fabs(y.second);
    return ax != ay ? ax > ay : x.first < y.first;
  });
  all.resize(k);
  return RefSet(all.begin(), all.end());
}

/// The global top-k of the ranks' selections computed in one process, and
/// per rank the indices whose contribution it keeps.
struct RefGTopK {
  RefSet global;
  std::vector<std::set<int32_t>> alive;
};

inline RefGTopK refGlobalTopK(const std::vector<Selection> &sel, int64_t k) {
  const int P = static_cast<int>(sel.size());
  int P2 = 1;
  while (P2 * 2 <= P)
    P2 *= 2;
  std::vector<RefSet> sets(P);
  RefGTopK ref;
  ref.alive.resize(P);
  for (int r = 0; r < P; ++r)
    for (size_t j = 0; j < sel[r].indices.size(); ++j) {
      sets[r][sel[r].indices[j]] += sel[r].values[j];
      ref.alive[r].insert(sel[r].indices[j]);
    }
  auto prune = [&] {
    for (int q = 0; q < P; ++q) {
      const RefSet &held = sets[q < P2 ? q : q - P2];
      for (auto it = ref.alive[q].begin(); it != ref.alive[q].end();)
        it = held.count(*it) ? std::next(it) : ref.alive[q].erase(it);
    }
  };
  for (int e = P2; e < P; ++e)
    sets[e - P2] = refMerge(sets[e - P2], sets[e], k);
  prune();
  for (int d = 1; d < P2; d *= 2) {
    std::vector<RefSet> next(P2);
    for (int r = 0; r < P2; ++r)
      next[r] = refMerge(sets[std::min(r, r ^ d)], sets[std::max(r, r ^ d)], k);
    std::copy(next.begin(), next.end(), sets.begin());
    prune();
  }
  ref.global = sets[0];
  return ref;
}

/// The sparse all-reduce's reference: every rank's sparse vector summed
/// densely, in rank order, then each touched element divided by P once.
inline std::vector<float> refDenseAverage(const std::vector<Selection> &sel, int64_t n) {
  const int P = static_cast<int>(sel.size());
  std::vector<float> want(n, 0.0f);
  std::vector<char> touched(n, 0);
  for (const Selection &s : sel)
    for (size_t j = 0; j < s.indices.size(); ++j) {
      want[s.indices[j]] += s.values[j];
      touched[s.indices[j]] = 1;
    }
  for (int64_t i = 0; i < n; ++i)
    if (touched[i])
      want[i] /= static_cast<float>(P);
  return want;
}

/// One size of the tests: n entries, k selected, exact or arbitrary data.
struct SparseCase {
  int64_t n, k;
  bool exact;
  std::string describe(int rank) const {
    return "n=" + std::to_string(n) + " k=" + std::to_string(k) + (exact ? " exact" : " float") +
           " rank " + std::to_string(rank);
  }
};

} // namespace mgsrt_comm_test

#endif // MGSRT_TEST_COMM_SPARSETESTDATA_H
