//===- StagedCommTest.cpp - A GPU context's collectives over a host backend ===//
//
// mgsrt_ctx_set_staged_comm: 2 and 4 ranks (threads of a loopback group,
// the executable's --comm mpi in one process) on one GPU, each its own GPU
// context, their collectives staged through pinned host memory. Results equal
// the host collectives'; the errors that need a GPU to reach (the choice
// made too late, NCCL asked for more ranks than GPUs). Skips without a GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

#include "Comm/CommCAPI.h"
#include "Comm/Loopback/LoopbackBackend.h"

#include <cstdlib>
#include <functional>
#include <thread>

using namespace mgsrt_test;
using namespace mgs::rt;

namespace {

/// `body(rank, ctx)` on every rank of a loopback group of `size`, each a
/// thread with its own GPU context on GPU 0, staged over its rank's backend.
void onGpuRanks(int size, const std::function<void(int, mgsrt_ctx_t *)> &body) {
  std::shared_ptr<LoopbackGroup> group = createLoopbackGroup(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      CommConfig config;
      config.loopbackGroup = group;
      config.loopbackRank = r;
      config.loopbackTimeout = std::chrono::seconds(60);
      std::unique_ptr<CommBackend> backend;
      Status s = createCommBackend("loopback", config, backend);
      ASSERT_TRUE(s.ok()) << s.message;
      mgsrt_comm_t *comm = wrapCommBackend(std::move(backend));
      {
        Ctx gpu(7);
        ASSERT_EQ(attachGpu(gpu), "");
        ASSERT_OK(gpu, mgsrt_ctx_set_comm(gpu, comm));
        ASSERT_OK(gpu, mgsrt_ctx_set_staged_comm(gpu, 1));
        body(r, gpu);
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
  onGpuRanks(P, [&](int r, mgsrt_ctx_t *gpu) {
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
