//===- StagedCommTest.cpp - A GPU context's collectives over a host backend ===//
//
// mgsrt_ctx_set_staged_comm: 2 and 4 ranks (threads of a loopback group,
// the executable's --comm mpi in one process) on one GPU, each its own GPU
// context, their collectives staged through pinned host memory. Results equal
// the host collectives' (the sparse collectives' bit for bit, error feedback
// included); the errors that need a GPU to reach (the choice made too late,
// NCCL asked for more ranks than GPUs). Skips
// without a GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"
#include "../Comm/LoopbackComm.h"
#include "../Comm/SparseTestData.h"

#include "Comm/CommCAPI.h"
#include "Comm/Loopback/LoopbackBackend.h"

#include <cstdlib>
#include <functional>
#include <thread>

using namespace mgsrt_test;
using namespace mgs::rt;

namespace {

/// `body(rank, ctx, comm)` on every rank of a loopback group of `size`, each
/// a thread with its own GPU context on GPU 0, staged over its rank's
/// backend (`comm`, which a CPU context may share for the host's results).
void onGpuRanks(int size,
                const std::function<void(int, mgsrt_ctx_t *, mgsrt_comm_t *)> &body) {
  std::shared_ptr<LoopbackGroup> group = createLoopbackGroup(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      mgsrt_comm_t *comm = mgsrt_comm_test::loopbackComm(group, r, std::chrono::seconds(60));
      ASSERT_NE(comm, nullptr);
      {
        Ctx gpu(7);
        ASSERT_EQ(attachGpu(gpu), "");
        ASSERT_OK(gpu, mgsrt_ctx_set_comm(gpu, comm));
        ASSERT_OK(gpu, mgsrt_ctx_set_staged_comm(gpu, 1));
        body(r, gpu, comm);
      }
      mgsrt_comm_destroy(comm);
    });
  for (auto &t : threads)
    t.join();
}

std::vector<float> rankData(int rank, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = 0.5f * static_cast<float>(rank + 1) - 0.01f * static_cast<float>(i % 101);
  return v;
}

class GpuStagedComm : public GpuTest, public ::testing::WithParamInterface<int> {};

TEST_P(GpuStagedComm, AllReduceAllGatherBroadcast) {
  const int P = GetParam();
  const int64_t n = 100003, k = 1000;
  onGpuRanks(P, [&](int r, mgsrt_ctx_t *gpu, mgsrt_comm_t *) {
    // All-reduce (average), two slots pending at once.
    DeviceBuffer<float> a(gpu, rankData(r, n)), b(gpu, rankData(r + 3, 7));
    int64_t startA[2] = {n, 4}, startB[2] = {7, 9}, waitA[1] = {4}, waitB[1] = {9};
    void *bufsA[1] = {a}, *bufsB[1] = {b};
    ASSERT_OK(gpu, mgsrt_allreduce_start(gpu, startA, bufsA));
    ASSERT_OK(gpu, mgsrt_allreduce_start(gpu, startB, bufsB));
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, waitB, nullptr));
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, waitA, nullptr));
    std::vector<float> want(n, 0.0f);
    for (int q = 0; q < P; ++q) {
      std::vector<float> d = rankData(q, n);
      for (int64_t i = 0; i < n; ++i)
        want[i] += d[i];
    }
    for (float &w : want)
      w /= static_cast<float>(P);
    EXPECT_LE(maxRelDiff(a.download(), want), 1e-6);

    // All-gather with half values; the sent values are overwritten at once.
    std::vector<float> values = rankData(r, k);
    std::vector<int32_t> indices(k);
    for (int64_t j = 0; j < k; ++j)
      indices[j] = static_cast<int32_t>(r * k + j);
    DeviceBuffer<float> v(gpu, values), rv(gpu, P * k);
    DeviceBuffer<int32_t> ix(gpu, indices), ri(gpu, P * k);
    int64_t start[4] = {k, 2, 0, 1}, wait[1] = {2}, zero[1] = {k};
    void *bufs[4] = {v, ix, rv, ri}, *zv[1] = {v};
    ASSERT_OK(gpu, mgsrt_allgather_start(gpu, start, bufs));
    ASSERT_OK(gpu, mgsrt_zero(gpu, zero, zv));
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, wait, nullptr));
    std::vector<float> gotV = rv.download();
    std::vector<int32_t> gotI = ri.download();
    for (int q = 0; q < P; ++q) {
      std::vector<float> sent = rankData(q, k);
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(gotV[q * k + j], static_cast<float>(static_cast<_Float16>(sent[j])));
        ASSERT_EQ(gotI[q * k + j], static_cast<int32_t>(q * k + j));
      }
    }

    // Broadcast from the last rank.
    DeviceBuffer<float> c(gpu, rankData(r, 1000));
    int64_t desc[2] = {1000 * sizeof(float), P - 1};
    void *cb[1] = {c};
    ASSERT_OK(gpu, mgsrt_broadcast(gpu, desc, cb));
    EXPECT_TRUE(bitsEqual(c.download(), rankData(P - 1, 1000)));
  });
}

INSTANTIATE_TEST_SUITE_P(OneGpu, GpuStagedComm, ::testing::Values(2, 4),
                         [](const auto &info) { return std::to_string(info.param) + "ranks"; });

using mgsrt_comm_test::Selection;
using mgsrt_comm_test::selectTopK;
using mgsrt_comm_test::sparseGradient;

class GpuStagedSparse : public GpuTest, public ::testing::WithParamInterface<int> {};

// The global top-k and the balanced sparse all-reduce of a GPU context, staged
// over the host backend, against a CPU context's on the same communicator:
// outputs and the residual (the dropped entries added back on the device,
// a repeated index's in order) bit for bit.
TEST_P(GpuStagedSparse, GlobalTopKAndSparseAllReduceEqualTheCpu) {
  const int64_t n = 100003, k = 1000;
  onGpuRanks(GetParam(), [&](int r, mgsrt_ctx_t *gpu, mgsrt_comm_t *comm) {
    Ctx cpu(7);
    ASSERT_OK(cpu, mgsrt_ctx_set_comm(cpu, comm));
    std::vector<float> residual = sparseGradient(r, 99, n, false),
                       grad = sparseGradient(r, 0, n, false);
    Selection sel = selectTopK(grad, residual, k);
    for (int64_t j = 1; j < 64; j += 2)
      sel.indices[j] = sel.indices[j - 1];

    const mgsrt_comm_test::HostSparseResults want =
        mgsrt_comm_test::hostSparseCollectives(cpu, sel, residual, n);
    const int64_t gStart[] = {k, 3, n}, sStart[] = {k, 5, n, 1}, gWait[] = {3}, sWait[] = {5};

    DeviceBuffer<float> v(gpu, sel.values), res(gpu, residual), ov(gpu, k), dense(gpu, n);
    DeviceBuffer<int32_t> ix(gpu, sel.indices), oi(gpu, k);
    void *gpuG[] = {v, ix, res, ov, oi}, *gpuS[] = {v, ix, dense}, *zv[] = {v};
    const int64_t zero[] = {k};
    ASSERT_OK(gpu, mgsrt_gtopk_start(gpu, gStart, gpuG));
    ASSERT_OK(gpu, mgsrt_sparse_allreduce_start(gpu, sStart, gpuS));
    ASSERT_OK(gpu, mgsrt_zero(gpu, zero, zv)); // the sent values may be reused at once
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, sWait, nullptr));
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, gWait, nullptr));
    EXPECT_TRUE(bitsEqual(ov.download(), want.values));
    EXPECT_EQ(oi.download(), want.indices);
    EXPECT_TRUE(bitsEqual(res.download(), want.residual));
    EXPECT_TRUE(bitsEqual(dense.download(), want.dense));
  });
}

INSTANTIATE_TEST_SUITE_P(OneGpu, GpuStagedSparse, ::testing::Values(2, 3, 4),
                         [](const auto &info) { return std::to_string(info.param) + "ranks"; });

class GpuCommChoice : public GpuTest {
protected:
  mgsrt_comm_t *comm = nullptr;
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped())
      return;
    ASSERT_EQ(mgsrt_comm_create("loopback", &comm, nullptr, 0), MGSRT_OK);
    ASSERT_OK(gpu, mgsrt_ctx_set_comm(gpu, comm));
  }
  void TearDown() override {
    if (comm) {
      mgsrt_ctx_set_comm(gpu, nullptr);
      mgsrt_comm_destroy(comm);
    }
  }
};

TEST_F(GpuCommChoice, ChosenBeforeTheFirstCollective) {
  DeviceBuffer<float> d(gpu, 16);
  int64_t desc[2] = {16 * sizeof(float), 0};
  void *bufs[1] = {d};
  ASSERT_OK(gpu, mgsrt_broadcast(gpu, desc, bufs)); // NCCL, the default
  EXPECT_EQ(mgsrt_ctx_set_staged_comm(gpu, 1), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpu.message(), "ctx_set_staged_comm: the context's collectives have started; "
                           "choose before the first one");
  mgsrt_ctx_clear(gpu);
  EXPECT_EQ(mgsrt_ctx_set_staged_comm(gpu, 0), MGSRT_OK); // the same choice: fine
}

TEST_F(GpuCommChoice, NcclRefusesMoreRanksThanGpus) {
  // As mpirun says for 4096 ranks on this node.
  ASSERT_EQ(setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4096", 1), 0);
  DeviceBuffer<float> d(gpu, 16);
  int64_t start[2] = {16, 0};
  void *bufs[1] = {d};
  EXPECT_EQ(mgsrt_allreduce_start(gpu, start, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(gpu.message().rfind("allreduce_start: 4096 ranks on this node share ", 0), 0u)
      << gpu.message();
  EXPECT_NE(gpu.message().find("--comm mpi"), std::string::npos) << gpu.message();
}

} // namespace
