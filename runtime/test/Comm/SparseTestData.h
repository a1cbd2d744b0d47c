//===- SparseTestData.h - Data of the sparse collectives' tests -*- C++ -*-===//
//
// The gradients every rank of a sparse collective's test selects from, and
// the selection itself (mgsrt_topk_sparsify, as the step does), shared by the
// conformance suite (SparseCollectivesConformance.h) and the staged
// collectives' tests (StagedCollectivesTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_COMM_SPARSETESTDATA_H
#define MGSRT_TEST_COMM_SPARSETESTDATA_H

#include "mgsrt/mgsrt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
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

inline uint32_t bitsOf(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

} // namespace mgsrt_comm_test

#endif // MGSRT_TEST_COMM_SPARSETESTDATA_H
