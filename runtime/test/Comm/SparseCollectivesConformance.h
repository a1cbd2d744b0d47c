//===- SparseCollectivesConformance.h - gtopk, sparse all-reduce -*- C++ -*-===//
//
// A typed suite for the sparse collectives (mgsrt_gtopk_start,
// mgsrt_sparse_allreduce_start), run like CommConformance.h on every rank of
// a group: loopback groups of 1, 2, 3, 4, 5 and 8 threads
// (CommConformanceTest.cpp) and MPI processes (MpiCheck.cpp, mpi.test).
//
// Every rank knows every rank's gradients (they are generated from the rank
// number), selects each rank's top-k with mgsrt_topk_sparsify as the step
// does, and computes the reference in one process with code independent of
// the runtime's (SparseTestData.h: refGlobalTopK, refDenseAverage). Results must match bit for bit, and on every
// rank the entries that made it into the global top-k plus the residual must
// be the accumulated gradient (grad + residual before), over two steps.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_COMM_SPARSECOLLECTIVESCONFORMANCE_H
#define MGSRT_TEST_COMM_SPARSECOLLECTIVESCONFORMANCE_H

#include "CommConformance.h"
#include "SparseTestData.h"

namespace mgsrt_comm_test {

template <typename Runner> class SparseCollectiveTest : public ::testing::Test {};
TYPED_TEST_SUITE_P(SparseCollectiveTest);

TYPED_TEST_P(SparseCollectiveTest, GlobalTopKIsTheReferenceAndErrorFeedbackIsExact) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    const int P = env.size;
    using C = SparseCase;
    for (C c : {C{1000, 10, true}, C{1000, 10, false}, C{64, 16, true}, C{37, 37, false},
                C{5, 1, true}, C{2000, 3, false}}) {
      SCOPED_TRACE(c.describe(env.rank));
      CommCtx ctx(env.comm);
      // Every rank's residual, simulated; this rank's is also the real one.
      std::vector<std::vector<float>> residual(P);
      for (int q = 0; q < P; ++q)
        residual[q] = sparseGradient(q, 99, c.n, c.exact);
      std::vector<float> mine = residual[env.rank];
      for (int step = 0; step < 2; ++step) {
        std::vector<Selection> sel(P);
        std::vector<float> acc;
        for (int q = 0; q < P; ++q) {
          std::vector<float> grad = sparseGradient(q, step, c.n, c.exact);
          if (q == env.rank) {
            acc.resize(c.n);
            for (int64_t i = 0; i < c.n; ++i)
              acc[i] = grad[i] + mine[i];
            sel[q] = selectTopK(grad, mine, c.k);
            std::vector<float> again = residual[q];
            EXPECT_EQ(selectTopK(grad, again, c.k).indices, sel[q].indices);
            residual[q] = again;
          } else {
            sel[q] = selectTopK(grad, residual[q], c.k);
          }
        }
        RefGTopK ref = refGlobalTopK(sel, c.k);
        for (int q = 0; q < P; ++q)
          for (size_t j = 0; j < sel[q].indices.size(); ++j)
            if (!ref.alive[q].count(sel[q].indices[j]))
              residual[q][sel[q].indices[j]] += sel[q].values[j];

        std::vector<float> outValues(c.k, -7.0f);
        std::vector<int32_t> outIndices(c.k, -7);
        const int64_t start[] = {c.k, 3, c.n}, wait[] = {3};
        void *bufs[] = {sel[env.rank].values.data(), sel[env.rank].indices.data(), mine.data(),
                        outValues.data(), outIndices.data()};
        EXPECT_RT_OK(ctx, mgsrt_gtopk_start(ctx, start, bufs));
        EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));

        // The same global top-k as the one-process reference, averaged.
        EXPECT_EQ(static_cast<int64_t>(ref.global.size()), c.k);
        int64_t j = 0, bad = 0;
        for (const auto &[i, v] : ref.global) {
          if (j >= c.k)
            break;
          const float want = v / static_cast<float>(P);
          if (bad < 5 && (outIndices[j] != i || bitsOf(outValues[j]) != bitsOf(want))) {
            ++bad;
            ADD_FAILURE() << "step " << step << " entry " << j << ": got (" << outIndices[j]
                          << ", " << outValues[j] << "), want (" << i << ", " << want << ")";
          }
          ++j;
        }
        // sent + residual == acc, entry by entry, and the residual is the
        // simulated one bit for bit.
        std::vector<float> sent(c.n, 0.0f);
        for (size_t e = 0; e < sel[env.rank].indices.size(); ++e)
          if (ref.alive[env.rank].count(sel[env.rank].indices[e]))
            sent[sel[env.rank].indices[e]] = sel[env.rank].values[e];
        for (int64_t i = 0; i < c.n && bad < 5; ++i) {
          if (sent[i] + mine[i] != acc[i] || bitsOf(mine[i]) != bitsOf(residual[env.rank][i])) {
            ++bad;
            ADD_FAILURE() << "step " << step << " index " << i << ": sent " << sent[i]
                          << " + residual " << mine[i] << " != acc " << acc[i];
          }
        }
      }
    }
  });
}

TYPED_TEST_P(SparseCollectiveTest, SparseAllReduceIsTheDenseSum) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    const int P = env.size;
    using C = SparseCase;
    // 64/32: regions fill up and go dense; 7/3: with 8 ranks some regions
    // are empty.
    for (C c : {C{1000, 10, true}, C{1000, 10, false}, C{64, 32, false}, C{7, 3, true},
                C{100, 100, true}, C{5000, 50, false}}) {
      for (int balanced : {0, 1}) {
        SCOPED_TRACE(c.describe(env.rank) + " balanced=" + std::to_string(balanced));
        CommCtx ctx(env.comm);
        std::vector<Selection> sel(P);
        std::vector<float> acc, residual;
        for (int q = 0; q < P; ++q) {
          std::vector<float> grad = sparseGradient(q, balanced, c.n, c.exact),
                             res = sparseGradient(q, 50 + balanced, c.n, c.exact);
          if (q == env.rank) {
            acc.resize(c.n);
            for (int64_t i = 0; i < c.n; ++i)
              acc[i] = grad[i] + res[i];
          }
          sel[q] = selectTopK(grad, res, c.k);
          if (q == env.rank)
            residual = res;
        }
        const std::vector<float> want = refDenseAverage(sel, c.n);

        std::vector<float> out(c.n, -7.0f);
        const int64_t start[] = {c.k, 4, c.n, balanced}, wait[] = {4};
        void *bufs[] = {sel[env.rank].values.data(), sel[env.rank].indices.data(), out.data()};
        EXPECT_RT_OK(ctx, mgsrt_sparse_allreduce_start(ctx, start, bufs));
        EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
        int bad = 0;
        for (int64_t i = 0; i < c.n && bad < 5; ++i)
          if (bitsOf(out[i]) != bitsOf(want[i])) {
            ++bad;
            ADD_FAILURE() << "out[" << i << "] = " << out[i] << ", want " << want[i];
          }
        // Everything selected is sent: sent + residual == acc.
        std::vector<float> sent(c.n, 0.0f);
        for (int64_t j = 0; j < c.k; ++j)
          sent[sel[env.rank].indices[j]] = sel[env.rank].values[j];
        for (int64_t i = 0; i < c.n && bad < 5; ++i)
          if (sent[i] + residual[i] != acc[i]) {
            ++bad;
            ADD_FAILURE() << "index " << i << ": sent + residual != acc";
          }
      }
    }
  });
}

TYPED_TEST_P(SparseCollectiveTest, PendingBesideOtherCollectives) {
  // A global top-k and a sparse all-reduce in flight with an allreduce and an
  // allgather, waited out of order: each still gets its own result.
  TypeParam::runOnAllRanks([](RankEnv &env) {
    const int P = env.size;
    const int64_t n = 256, k = 8;
    CommCtx ctx(env.comm);
    std::vector<Selection> sel(P);
    for (int q = 0; q < P; ++q) {
      std::vector<float> grad = sparseGradient(q, 7, n, true), res(n, 0.0f);
      sel[q] = selectTopK(grad, res, k);
    }
    std::vector<float> residual(n, 0.0f), outV(k), dense(n), data(16, 1.0f + env.rank);
    std::vector<int32_t> outI(k);
    std::vector<float> gv(k * P);
    std::vector<int32_t> gi(k * P);
    const int64_t gStart[] = {k, 1, n}, sStart[] = {k, 2, n, 1}, aStart[] = {16, 3},
                  agStart[] = {k, 4, 0, 0};
    void *gBufs[] = {sel[env.rank].values.data(), sel[env.rank].indices.data(), residual.data(),
                     outV.data(), outI.data()};
    void *sBufs[] = {sel[env.rank].values.data(), sel[env.rank].indices.data(), dense.data()};
    void *aBufs[] = {data.data()};
    void *agBufs[] = {sel[env.rank].values.data(), sel[env.rank].indices.data(), gv.data(),
                      gi.data()};
    EXPECT_RT_OK(ctx, mgsrt_gtopk_start(ctx, gStart, gBufs));
    EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, aStart, aBufs));
    EXPECT_RT_OK(ctx, mgsrt_sparse_allreduce_start(ctx, sStart, sBufs));
    EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, agStart, agBufs));
    for (int64_t slot : {4, 2, 1, 3}) {
      const int64_t wait[] = {slot};
      EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
    }
    RefGTopK ref = refGlobalTopK(sel, k);
    int64_t j = 0;
    for (const auto &[i, v] : ref.global) {
      EXPECT_EQ(outI[j], i);
      EXPECT_EQ(outV[j], v / static_cast<float>(P));
      ++j;
    }
    float mean = 0;
    for (int q = 0; q < P; ++q)
      mean += 1.0f + q;
    EXPECT_EQ(data[0], mean / static_cast<float>(P));
    for (int q = 0; q < P; ++q)
      EXPECT_EQ(gi[q * k], sel[q].indices[0]);
  });
}

REGISTER_TYPED_TEST_SUITE_P(SparseCollectiveTest, GlobalTopKIsTheReferenceAndErrorFeedbackIsExact,
                            SparseAllReduceIsTheDenseSum, PendingBesideOtherCollectives);

} // namespace mgsrt_comm_test

#endif // MGSRT_TEST_COMM_SPARSECOLLECTIVESCONFORMANCE_H
