//===- CommConformance.h - One test suite for every comm backend -*- C++ -*-===//
//
// A typed GoogleTest suite (IREE's cts/ idea): every test body runs on every
// rank of a group, through the C++ interface (CommBackend) and the C ABI
// (mgsrt_allreduce_start & co.). A runner type says how ranks are made:
//
//   struct Runner {
//     static constexpr bool kDetectsMismatch;  // ranks disagreeing on sizes
//     static int expectedSize();               // -1: any
//     static void runOnAllRanks(const std::function<void(RankEnv &)> &body);
//   };
//
// CommConformanceTest.cpp instantiates it for loopback groups of 1, 2 and 4
// threads and for NCCL on a GPU; MpiCheck.cpp (mgsrt_mpi_check, run under
// mpirun) for MPI ranks.
// Bodies use EXPECT (not ASSERT) around collectives, so a failing rank still
// takes part in the rest and the others do not hang.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_COMM_COMMCONFORMANCE_H
#define MGSRT_TEST_COMM_COMMCONFORMANCE_H

#include "Comm/CommBackend.h"
#include "Comm/CommCAPI.h"
#include "LoopbackComm.h"
#include "mgsrt/mgsrt.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace mgsrt_comm_test {

using mgs::rt::CommBackend;
using mgs::rt::CommRequestPtr;
using mgs::rt::ReduceOp;
using mgs::rt::Status;

/// What a test body gets on each rank.
struct RankEnv {
  CommBackend &backend;
  mgsrt_comm_t *comm; // the same rank as a C handle
  int rank;
  int size;
};

/// A context with the rank's communicator; destroyed at scope end.
struct CommCtx {
  mgsrt_ctx_t *ctx;
  explicit CommCtx(mgsrt_comm_t *comm) : ctx(mgsrt_ctx_create(1)) {
    EXPECT_EQ(mgsrt_ctx_set_comm(ctx, comm), MGSRT_OK);
  }
  ~CommCtx() { mgsrt_ctx_destroy(ctx); }
  operator mgsrt_ctx_t *() const { return ctx; }
  std::string message() const { return mgsrt_ctx_message(ctx); }
};

#define EXPECT_RT_OK(ctx, call)                                                          \
  do {                                                                                   \
    mgsrt_status_t st_ = (call);                                                         \
    EXPECT_EQ(st_, MGSRT_OK) << mgsrt_ctx_message(ctx);                                  \
  } while (0)

#define EXPECT_STATUS_OK(expr)                                                           \
  do {                                                                                   \
    Status s_ = (expr);                                                                  \
    EXPECT_TRUE(s_.ok()) << s_.message;                                                  \
  } while (0)

/// Integer-valued data (exact sums in any order): rank r, element i.
inline float valueAt(int rank, int64_t i, int salt = 0) {
  return static_cast<float>((rank + 1) * 1000 + (i * 7 + salt) % 997);
}

inline std::vector<float> rankData(int rank, int64_t n, int salt = 0) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = valueAt(rank, i, salt);
  return v;
}

/// The sum over ranks of valueAt(r, i, salt).
inline float sumAt(int size, int64_t i, int salt = 0) {
  float s = 0;
  for (int r = 0; r < size; ++r)
    s += valueAt(r, i, salt);
  return s;
}

template <typename Runner> class CommConformanceTest : public ::testing::Test {};
TYPED_TEST_SUITE_P(CommConformanceTest);

TYPED_TEST_P(CommConformanceTest, RankAndSize) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    if (TypeParam::expectedSize() > 0) {
      EXPECT_EQ(env.size, TypeParam::expectedSize());
    }
    EXPECT_EQ(mgsrt_comm_size(env.comm), env.size);
    EXPECT_EQ(mgsrt_comm_rank(env.comm), env.rank);
    EXPECT_TRUE(env.rank >= 0 && env.rank < env.size);
    // Every rank distinct: gather them.
    std::vector<int> ranks(env.size, -1);
    EXPECT_STATUS_OK(env.backend.allGather(&env.rank, sizeof(int), ranks.data()));
    for (int r = 0; r < env.size; ++r)
      EXPECT_EQ(ranks[r], r);
  });
}

TYPED_TEST_P(CommConformanceTest, AllReduceSumAndAverage) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(1000), int64_t(1) << 20}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " rank " + std::to_string(env.rank));
      std::vector<float> sum = rankData(env.rank, n, 1), avg = rankData(env.rank, n, 2);
      EXPECT_STATUS_OK(env.backend.allReduceSum(sum.data(), n));
      EXPECT_STATUS_OK(env.backend.allReduce(avg.data(), n, ReduceOp::Average));
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 5; ++i) {
        if (sum[i] != sumAt(env.size, i, 1)) {
          ++bad;
          ADD_FAILURE() << "sum[" << i << "] = " << sum[i] << ", want " << sumAt(env.size, i, 1);
        }
        if (avg[i] != sumAt(env.size, i, 2) / static_cast<float>(env.size)) {
          ++bad;
          ADD_FAILURE() << "avg[" << i << "] = " << avg[i];
        }
      }
      // The C ABI: allreduce_start averages.
      std::vector<float> data = rankData(env.rank, n, 3);
      CommCtx ctx(env.comm);
      const int64_t start[] = {n, 5}, wait[] = {5};
      void *bufs[] = {data.data()};
      EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, start, bufs));
      EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
      for (int64_t i = 0; i < n && bad < 5; ++i)
        if (data[i] != sumAt(env.size, i, 3) / static_cast<float>(env.size)) {
          ++bad;
          ADD_FAILURE() << "C ABI average [" << i << "] = " << data[i];
        }
    }
  });
}

TYPED_TEST_P(CommConformanceTest, AllGather) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    for (size_t bytes : {size_t(0), size_t(1), size_t(13), size_t(1) << 16}) {
      SCOPED_TRACE("bytes=" + std::to_string(bytes) + " rank " + std::to_string(env.rank));
      std::vector<unsigned char> send(bytes), recv(bytes * env.size, 0xEE);
      for (size_t i = 0; i < bytes; ++i)
        send[i] = static_cast<unsigned char>(env.rank * 31 + i);
      EXPECT_STATUS_OK(env.backend.allGather(send.data(), bytes, recv.data()));
      int bad = 0;
      for (int r = 0; r < env.size; ++r)
        for (size_t i = 0; i < bytes && bad < 5; ++i)
          if (recv[r * bytes + i] != static_cast<unsigned char>(r * 31 + i)) {
            ++bad;
            ADD_FAILURE() << "recv from rank " << r << " [" << i << "]";
          }
    }
    // The C ABI: values and indices of k entries per rank; values as float,
    // IEEE half or bfloat16 (rounded to nearest even, widened back on
    // arrival; bfloat16's rounding computed here apart, to 8 significant bits).
    auto wired = [](int64_t format, float x) {
      if (format == MGSRT_VALUES_F16)
        return static_cast<float>(static_cast<_Float16>(x));
      if (format == MGSRT_VALUES_F32)
        return x;
      int e;
      const double m = std::frexp(static_cast<double>(x), &e);
      return static_cast<float>(std::ldexp(std::nearbyint(m * 256.0) / 256.0, e));
    };
    for (int64_t half : {int64_t(MGSRT_VALUES_F32), int64_t(MGSRT_VALUES_F16),
                         int64_t(MGSRT_VALUES_BF16)})
    for (int64_t k : {int64_t(0), int64_t(1), int64_t(25557)}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " values=" + std::to_string(half) + " rank " +
                   std::to_string(env.rank));
      std::vector<float> values = rankData(env.rank, k, 4);
      std::vector<int32_t> indices(k);
      for (int64_t j = 0; j < k; ++j)
        indices[j] = static_cast<int32_t>(env.rank * 100000 + j);
      std::vector<float> recvValues(env.size * k, -1.0f);
      std::vector<int32_t> recvIndices(env.size * k, -1);
      CommCtx ctx(env.comm);
      const int64_t start[] = {k, 0, 0, half}, wait[] = {0};
      void *bufs[] = {values.data(), indices.data(), recvValues.data(), recvIndices.data()};
      EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, start, bufs));
      // The inputs are copied by the start: overwriting them now is allowed.
      std::fill(values.begin(), values.end(), 0.0f);
      std::fill(indices.begin(), indices.end(), 0);
      EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
      int bad = 0;
      for (int r = 0; r < env.size; ++r)
        for (int64_t j = 0; j < k && bad < 5; ++j)
          if (recvValues[r * k + j] != wired(half, valueAt(r, j, 4)) ||
              recvIndices[r * k + j] != r * 100000 + j) {
            ++bad;
            ADD_FAILURE() << "rank " << r << " entry " << j << ": " << recvValues[r * k + j]
                          << ", " << recvIndices[r * k + j];
          }
    }
    // A density warm-up: compiled for k = 100 of n = 200 entries, density
    // 0.25 sends the first 50 of each rank, packed at r * 50.
    {
      SCOPED_TRACE("density warm-up, rank " + std::to_string(env.rank));
      const int64_t k = 100;
      std::vector<float> values = rankData(env.rank, k, 4);
      std::vector<int32_t> indices(k, env.rank);
      std::vector<float> recvValues(env.size * k, -1.0f);
      std::vector<int32_t> recvIndices(env.size * k, -1);
      CommCtx ctx(env.comm);
      mgsrt_ctx_set_density(ctx, 0.25);
      const int64_t start[] = {k, 0, 200, 0}, wait[] = {0};
      void *bufs[] = {values.data(), indices.data(), recvValues.data(), recvIndices.data()};
      EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, start, bufs));
      EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
      for (int r = 0; r < env.size; ++r)
        for (int64_t j = 0; j < 50; ++j) {
          EXPECT_EQ(recvValues[r * 50 + j], valueAt(r, j, 4)) << r << " " << j;
          EXPECT_EQ(recvIndices[r * 50 + j], r) << r << " " << j;
        }
      for (int64_t j = env.size * 50; j < env.size * k; ++j)
        EXPECT_EQ(recvIndices[j], -1) << "written past P * k_eff at " << j;
    }
  });
}

TYPED_TEST_P(CommConformanceTest, BroadcastFromEveryRoot) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    for (int root = 0; root < env.size; ++root) {
      SCOPED_TRACE("root " + std::to_string(root) + " rank " + std::to_string(env.rank));
      std::vector<float> data = rankData(env.rank, 4099, 5);
      EXPECT_STATUS_OK(env.backend.broadcast(data.data(), data.size() * 4, root));
      EXPECT_EQ(data, rankData(root, 4099, 5));
      // The C ABI form.
      std::vector<double> d(17, env.rank + 0.5);
      CommCtx ctx(env.comm);
      const int64_t desc[] = {static_cast<int64_t>(d.size() * sizeof(double)), root};
      void *bufs[] = {d.data()};
      EXPECT_RT_OK(ctx, mgsrt_broadcast(ctx, desc, bufs));
      EXPECT_EQ(d, std::vector<double>(17, root + 0.5));
    }
    EXPECT_STATUS_OK(env.backend.barrier());
  });
}

TYPED_TEST_P(CommConformanceTest, StartReturnsBeforeTheOtherRanksArrive) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    using Clock = std::chrono::steady_clock;
    // The last rank starts 300 ms late; everyone else's start returns at once
    // and their wait completes once it has started.
    const bool late = env.rank == env.size - 1;
    if (late)
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<float> data = rankData(env.rank, 100000, 6);
    CommCtx ctx(env.comm);
    const int64_t start[] = {100000, 3}, wait[] = {3};
    void *bufs[] = {data.data()};
    const auto t0 = Clock::now();
    EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, start, bufs));
    const auto t1 = Clock::now();
    EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
    const double startMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (!late) {
      EXPECT_LT(startMs, 100.0) << "a start waited for the other ranks";
    }
    for (int64_t i = 0; i < 100000; i += 997)
      EXPECT_EQ(data[i], sumAt(env.size, i, 6) / static_cast<float>(env.size)) << i;
  });
}

TYPED_TEST_P(CommConformanceTest, ManyPendingWaitedOutOfOrder) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    // C++ interface: two requests, the second waited first.
    std::vector<float> a = rankData(env.rank, 5000, 7), b = rankData(env.rank, 3000, 8);
    CommRequestPtr ra = env.backend.iallReduce(a.data(), a.size(), ReduceOp::Sum);
    CommRequestPtr rb = env.backend.iallReduce(b.data(), b.size(), ReduceOp::Sum);
    EXPECT_STATUS_OK(rb->wait());
    EXPECT_TRUE(rb->test());
    EXPECT_STATUS_OK(ra->wait());
    EXPECT_STATUS_OK(ra->wait()); // waiting again returns the same status
    EXPECT_EQ(a[4999], sumAt(env.size, 4999, 7));
    EXPECT_EQ(b[2999], sumAt(env.size, 2999, 8));

    // C ABI: every slot pending at once (allreduces and allgathers
    // alternating), waited in reverse order.
    constexpr int S = MGSRT_COMM_MAX_SLOTS;
    const int64_t n = 257, k = 3;
    std::vector<std::vector<float>> data(S), recvValues(S);
    std::vector<std::vector<int32_t>> indices(S), recvIndices(S);
    std::vector<std::array<int64_t, 4>> descs(S);
    std::vector<std::array<int64_t, 1>> waits(S);
    CommCtx ctx(env.comm);
    for (int s = 0; s < S; ++s) {
      waits[s] = {s};
      if (s % 2 == 0) {
        data[s] = rankData(env.rank, n, s);
        descs[s] = {n, s, 0, 0};
        void *bufs[] = {data[s].data()};
        EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, descs[s].data(), bufs));
      } else {
        data[s] = rankData(env.rank, k, s);
        indices[s] = {env.rank, s, -env.rank};
        recvValues[s].resize(k * env.size);
        recvIndices[s].resize(k * env.size);
        descs[s] = {k, s, 0, 0};
        void *bufs[] = {data[s].data(), indices[s].data(), recvValues[s].data(),
                        recvIndices[s].data()};
        EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, descs[s].data(), bufs));
      }
    }
    for (int s = S - 1; s >= 0; --s)
      EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, waits[s].data(), nullptr));
    for (int s = 0; s < S; ++s) {
      if (s % 2 == 0) {
        EXPECT_EQ(data[s][n - 1], sumAt(env.size, n - 1, s) / static_cast<float>(env.size))
            << "slot " << s;
      } else {
        for (int r = 0; r < env.size; ++r) {
          EXPECT_EQ(recvValues[s][r * k + 2], valueAt(r, 2, s)) << "slot " << s;
          EXPECT_EQ(recvIndices[s][r * k + 0], r) << "slot " << s;
          EXPECT_EQ(recvIndices[s][r * k + 1], s) << "slot " << s;
        }
      }
    }
  });
}

TYPED_TEST_P(CommConformanceTest, ComputeWhileCollectivesArePending) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    // A large allreduce and a sparse allgather in flight while this rank runs
    // top-k kernels on other buffers; both results are exact at the wait.
    const int64_t n = 1 << 21, m = 1 << 18, k = 256;
    std::vector<float> dense = rankData(env.rank, n, 9);
    std::vector<float> values(k), recvValues(k * env.size);
    std::vector<int32_t> indices(k), recvIndices(k * env.size);
    for (int64_t j = 0; j < k; ++j) {
      values[j] = valueAt(env.rank, j, 10);
      indices[j] = static_cast<int32_t>(j * env.size + env.rank);
    }
    CommCtx ctx(env.comm);
    const int64_t denseStart[] = {n, 0}, denseWait[] = {0};
    const int64_t sparseStart[] = {k, 1, 0, 0}, sparseWait[] = {1};
    void *denseBufs[] = {dense.data()};
    void *sparseBufs[] = {values.data(), indices.data(), recvValues.data(), recvIndices.data()};
    EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, denseStart, denseBufs));
    EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, sparseStart, sparseBufs));
    std::vector<float> grad(m), residual(m, 0.0f), topValues(m / 1000);
    std::vector<int32_t> topIndices(m / 1000);
    std::mt19937 gen(env.rank);
    std::normal_distribution<float> normal;
    for (auto &g : grad)
      g = normal(gen);
    const int64_t topkDesc[] = {m, m / 1000};
    void *topkBufs[] = {grad.data(), residual.data(), topValues.data(), topIndices.data()};
    for (int i = 0; i < 10; ++i)
      EXPECT_RT_OK(ctx, mgsrt_topk_sparsify(ctx, topkDesc, topkBufs));
    EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, sparseWait, nullptr));
    EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, denseWait, nullptr));
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i)
      if (dense[i] != sumAt(env.size, i, 9) / static_cast<float>(env.size)) {
        ++bad;
        ADD_FAILURE() << "dense[" << i << "] = " << dense[i];
      }
    // Scatter-add the gathered entries (indices are distinct across ranks
    // here): every rank's value lands at its index, divided by P.
    std::vector<float> out(k * env.size);
    const int64_t scatterDesc[] = {k * env.size, k, env.size};
    void *scatterBufs[] = {recvValues.data(), recvIndices.data(), out.data()};
    EXPECT_RT_OK(ctx, mgsrt_scatter_add(ctx, scatterDesc, scatterBufs));
    for (int r = 0; r < env.size; ++r)
      for (int64_t j = 0; j < k; j += 17)
        EXPECT_EQ(out[j * env.size + r], valueAt(r, j, 10) / static_cast<float>(env.size));
  });
}

TYPED_TEST_P(CommConformanceTest, SparseStepMatchesDenseAverage) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    // One OMGS-SGD exchange: top-k with error feedback, allgather, scatter-add
    // and average, against the average of the ranks' sparsified gradients
    // computed densely with an allreduce. Integer data keeps both exact.
    const int64_t n = 100000, k = 100;
    std::vector<float> grad(n), residual(n, 0.0f), values(k), recvValues(k * env.size);
    std::vector<int32_t> indices(k), recvIndices(k * env.size);
    std::mt19937 gen(100 + env.rank);
    std::uniform_int_distribution<int> d(-50, 50);
    for (auto &g : grad)
      g = static_cast<float>(d(gen));
    CommCtx ctx(env.comm);
    const int64_t topkDesc[] = {n, k};
    void *topkBufs[] = {grad.data(), residual.data(), values.data(), indices.data()};
    EXPECT_RT_OK(ctx, mgsrt_topk_sparsify(ctx, topkDesc, topkBufs));
    const int64_t start[] = {k, 7, 0, 0}, wait[] = {7};
    void *gatherBufs[] = {values.data(), indices.data(), recvValues.data(), recvIndices.data()};
    EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, start, gatherBufs));
    EXPECT_RT_OK(ctx, mgsrt_comm_wait(ctx, wait, nullptr));
    std::vector<float> sparseAvg(n);
    const int64_t scatterDesc[] = {n, k, env.size};
    void *scatterBufs[] = {recvValues.data(), recvIndices.data(), sparseAvg.data()};
    EXPECT_RT_OK(ctx, mgsrt_scatter_add(ctx, scatterDesc, scatterBufs));

    std::vector<float> dense(n, 0.0f);
    for (int64_t j = 0; j < k; ++j)
      dense[indices[j]] = values[j];
    EXPECT_STATUS_OK(env.backend.allReduce(dense.data(), n, ReduceOp::Average));
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i)
      if (sparseAvg[i] != dense[i]) {
        ++bad;
        ADD_FAILURE() << "[" << i << "] sparse " << sparseAvg[i] << ", dense " << dense[i];
      }
  });
}

TYPED_TEST_P(CommConformanceTest, SlotAndCommunicatorErrors) {
  TypeParam::runOnAllRanks([](RankEnv &env) {
    float x = 1.0f;
    void *bufs[] = {&x};
    {
      CommCtx ctx(env.comm);
      const int64_t desc[] = {1, MGSRT_COMM_MAX_SLOTS};
      EXPECT_EQ(mgsrt_allreduce_start(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
      const std::string max = std::to_string(MGSRT_COMM_MAX_SLOTS);
      EXPECT_EQ(ctx.message(), "allreduce_start: slot " + max + " is outside [0, " + max + ")");
    }
    {
      CommCtx ctx(env.comm);
      const int64_t desc[] = {-1};
      EXPECT_EQ(mgsrt_comm_wait(ctx, desc, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(ctx.message(),
                "comm_wait: slot -1 is outside [0, " + std::to_string(MGSRT_COMM_MAX_SLOTS) + ")");
    }
    {
      CommCtx ctx(env.comm);
      const int64_t desc[] = {2};
      EXPECT_EQ(mgsrt_comm_wait(ctx, desc, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(ctx.message(), "comm_wait: slot 2 has no pending collective (a wait without a start)");
    }
    {
      mgsrt_ctx_t *bare = mgsrt_ctx_create(1);
      const int64_t desc[] = {1, 0};
      EXPECT_EQ(mgsrt_allreduce_start(bare, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_STREQ(mgsrt_ctx_message(bare),
                   "allreduce_start: the context has no communicator (mgsrt_ctx_set_comm)");
      mgsrt_ctx_destroy(bare);
    }
    {
      // A second start on a pending slot fails (sticky); the wait on the
      // failed context still completes the first collective and frees the
      // slot. Every rank does the same, so the collectives still match.
      std::vector<float> data = rankData(env.rank, 64, 11);
      CommCtx ctx(env.comm);
      const int64_t desc[] = {64, 9}, wait[] = {9};
      void *dataBufs[] = {data.data()};
      EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, desc, dataBufs));
      EXPECT_EQ(mgsrt_allreduce_start(ctx, desc, dataBufs), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(ctx.message(), "allreduce_start: slot 9 already has a pending collective "
                               "(started again before mgsrt_comm_wait)");
      EXPECT_EQ(mgsrt_ctx_set_comm(ctx, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(mgsrt_comm_wait(ctx, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(data[63], sumAt(env.size, 63, 11) / static_cast<float>(env.size));
      mgsrt_ctx_clear(ctx);
      EXPECT_EQ(mgsrt_comm_wait(ctx, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT)
          << "the slot must be free after the wait on the failed context";
      mgsrt_ctx_clear(ctx);
      EXPECT_EQ(mgsrt_ctx_set_comm(ctx, nullptr), MGSRT_OK);
    }
    {
      // A context destroyed with a collective pending waits for it.
      std::vector<float> data = rankData(env.rank, 1000, 12);
      {
        CommCtx ctx(env.comm);
        const int64_t desc[] = {1000, 4};
        void *dataBufs[] = {data.data()};
        EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, desc, dataBufs));
      }
      EXPECT_EQ(data[999], sumAt(env.size, 999, 12) / static_cast<float>(env.size));
    }
    {
      // Broadcast from a root that does not exist.
      CommCtx ctx(env.comm);
      const int64_t desc[] = {4, env.size};
      EXPECT_EQ(mgsrt_broadcast(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(ctx.message(), "broadcast: root " + std::to_string(env.size) + " is outside [0, " +
                                   std::to_string(env.size) + ")");
    }
  });
}

TYPED_TEST_P(CommConformanceTest, SizeMismatchIsReportedOnEveryRank) {
  if (!TypeParam::kDetectsMismatch)
    GTEST_SKIP() << "this backend (MPI, NCCL) does not detect ranks disagreeing on sizes (an "
                    "erroneous program)";
  TypeParam::runOnAllRanks([](RankEnv &env) {
    if (env.size < 2)
      return;
    {
      std::vector<float> data(10 + env.rank, 1.0f);
      CommCtx ctx(env.comm);
      const int64_t desc[] = {static_cast<int64_t>(data.size()), 0}, wait[] = {0};
      void *bufs[] = {data.data()};
      EXPECT_RT_OK(ctx, mgsrt_allreduce_start(ctx, desc, bufs));
      EXPECT_EQ(mgsrt_comm_wait(ctx, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(ctx.message().find("ranks disagree on the element count: rank 0 has 10, rank 1 "
                                   "has 11"),
                std::string::npos)
          << ctx.message();
    }
    {
      std::vector<float> values(3 + env.rank), recv(16 * env.size);
      std::vector<int32_t> indices(3 + env.rank), recvIdx(16 * env.size);
      CommCtx ctx(env.comm);
      const int64_t desc[] = {static_cast<int64_t>(values.size()), 1, 0, 0}, wait[] = {1};
      void *bufs[] = {values.data(), indices.data(), recv.data(), recvIdx.data()};
      EXPECT_RT_OK(ctx, mgsrt_allgather_start(ctx, desc, bufs));
      EXPECT_EQ(mgsrt_comm_wait(ctx, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(ctx.message().find("allgather"), std::string::npos) << ctx.message();
      EXPECT_NE(ctx.message().find("byte count: rank 0 has 24, rank 1 has 32"), std::string::npos)
          << ctx.message();
    }
    {
      // Different collectives at the same position.
      float x = 1.0f;
      Status s = env.rank == 0 ? env.backend.allReduceSum(&x, 1) : env.backend.barrier();
      EXPECT_EQ(s.code, MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(s.message.find("rank 0 has allreduce, rank 1 has barrier"), std::string::npos)
          << s.message;
    }
    // The group still works afterwards.
    float y = 1.0f;
    EXPECT_STATUS_OK(env.backend.allReduceSum(&y, 1));
    EXPECT_EQ(y, static_cast<float>(env.size));
  });
}

REGISTER_TYPED_TEST_SUITE_P(CommConformanceTest, RankAndSize, AllReduceSumAndAverage, AllGather,
                            BroadcastFromEveryRoot, StartReturnsBeforeTheOtherRanksArrive,
                            ManyPendingWaitedOutOfOrder, ComputeWhileCollectivesArePending,
                            SparseStepMatchesDenseAverage, SlotAndCommunicatorErrors,
                            SizeMismatchIsReportedOnEveryRank);

} // namespace mgsrt_comm_test

#endif // MGSRT_TEST_COMM_COMMCONFORMANCE_H
