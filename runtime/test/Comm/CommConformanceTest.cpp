//===- CommConformanceTest.cpp - The comm suite on loopback groups --------===//
//
// CommConformance.h on loopback groups of 1, 2 and 4 ranks (threads of this
// process) and, where the CUDA kernels are built, on NCCL (one rank on GPU 0;
// skipped, saying why, without a GPU), plus what only loopback and the C
// ABI's creation can check here. The same suite runs across MPI processes in
// mgsrt_mpi_check (MpiCheck.cpp, test/runtime/mpi.test).
//
//===----------------------------------------------------------------------===//

#include "CommConformance.h"
#include "SparseCollectivesConformance.h"
#include "Comm/Loopback/LoopbackBackend.h"
#include "Comm/SparseCollectives.h"

using namespace mgs::rt;
using namespace mgsrt_comm_test;

namespace {

template <int N> struct LoopbackRunner {
  static constexpr bool kDetectsMismatch = true;
  static int expectedSize() { return N; }
  static void runOnAllRanks(const std::function<void(RankEnv &)> &body) {
    std::shared_ptr<LoopbackGroup> group = createLoopbackGroup(N);
    std::vector<std::thread> threads;
    for (int r = 0; r < N; ++r)
      threads.emplace_back([&, r] {
        mgsrt_comm_t *comm = loopbackComm(group, r, std::chrono::seconds(30));
        if (!comm)
          return;
        RankEnv env{*comm->backend, comm, r, N};
        body(env);
        mgsrt_comm_destroy(comm);
      });
    for (auto &t : threads)
      t.join();
  }
};

struct RankCountNames {
  template <typename T> static std::string GetName(int) {
    return std::to_string(T::expectedSize()) + "ranks";
  }
};

using LoopbackRunners = ::testing::Types<LoopbackRunner<1>, LoopbackRunner<2>, LoopbackRunner<4>>;

#ifdef MGSRT_WITH_NCCL
/// One rank of NCCL on GPU 0 (NCCL refuses two ranks on one device), its
/// NCCL id agreed over a loopback group of one. The suite's buffers are host
/// memory, which the backend stages through the GPU. Skips, saying why, when
/// no GPU is present (the only reason it may).
struct NcclRunner {
  static constexpr bool kDetectsMismatch = false;
  static int expectedSize() { return 1; }
  static void runOnAllRanks(const std::function<void(RankEnv &)> &body) {
    std::unique_ptr<CommBackend> host, backend;
    Status s = createCommBackend("loopback", CommConfig{}, host);
    ASSERT_TRUE(s.ok()) << s.message;
    CommConfig config;
    config.ncclBootstrap = host.get();
    config.ncclDevice = 0;
    s = createCommBackend("nccl", config, backend);
    if (s.code == MGSRT_ERROR_UNAVAILABLE && s.message.rfind("no CUDA device is available", 0) == 0)
      GTEST_SKIP() << "NCCL test skipped: " << s.message;
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(backend->name(), "nccl");
    mgsrt_comm_t *comm = wrapCommBackend(std::move(backend));
    RankEnv env{*comm->backend, comm, 0, 1};
    body(env);
    mgsrt_comm_destroy(comm);
  }
};

struct NcclNames {
  template <typename T> static std::string GetName(int) { return "gpu0"; }
};
#endif

} // namespace

namespace mgsrt_comm_test {
INSTANTIATE_TYPED_TEST_SUITE_P(Loopback, CommConformanceTest, LoopbackRunners, RankCountNames);
// The sparse collectives on 1 to 8 ranks, powers of two and not.
using SparseRunners = ::testing::Types<LoopbackRunner<1>, LoopbackRunner<2>, LoopbackRunner<3>,
                                       LoopbackRunner<4>, LoopbackRunner<5>, LoopbackRunner<8>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Loopback, SparseCollectiveTest, SparseRunners, RankCountNames);
#ifdef MGSRT_WITH_NCCL
INSTANTIATE_TYPED_TEST_SUITE_P(Nccl, CommConformanceTest, ::testing::Types<NcclRunner>, NcclNames);
#endif
} // namespace mgsrt_comm_test

namespace {

TEST(CommCreateTest, LoopbackByNameIsOneRank) {
  mgsrt_comm_t *comm = nullptr;
  char error[128] = "junk";
  ASSERT_EQ(mgsrt_comm_create("loopback", &comm, error, sizeof error), MGSRT_OK) << error;
  EXPECT_STREQ(error, "");
  EXPECT_EQ(mgsrt_comm_size(comm), 1);
  EXPECT_EQ(mgsrt_comm_rank(comm), 0);
  // With one rank, the average is the data and the gather a copy.
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  ASSERT_EQ(mgsrt_ctx_set_comm(ctx, comm), MGSRT_OK);
  std::vector<float> data = {1.5f, -2.0f, 3.0f};
  const int64_t start[] = {3, 0}, wait[] = {0};
  void *bufs[] = {data.data()};
  EXPECT_EQ(mgsrt_allreduce_start(ctx, start, bufs), MGSRT_OK);
  EXPECT_EQ(mgsrt_comm_wait(ctx, wait, bufs), MGSRT_OK);
  EXPECT_EQ(data, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  mgsrt_ctx_destroy(ctx);
  mgsrt_comm_destroy(comm);
  mgsrt_comm_destroy(nullptr);
  EXPECT_EQ(mgsrt_comm_size(nullptr), -1);
}

#ifdef MGSRT_WITH_NCCL
const char *const kKnownBackends = "loopback, mpi, nccl";
#else
const char *const kKnownBackends = "loopback, mpi";
#endif

TEST(CommCreateTest, UnknownBackendAndBadArguments) {
  mgsrt_comm_t *comm = reinterpret_cast<mgsrt_comm_t *>(1);
  char error[128];
  EXPECT_EQ(mgsrt_comm_create("gloo", &comm, error, sizeof error), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(std::string(error),
            std::string("unknown communication backend 'gloo' (known: ") + kKnownBackends + ")");
  char small[10];
  EXPECT_EQ(mgsrt_comm_create("x", &comm, small, sizeof small), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(small, "unknown c"); // truncated, terminated
  EXPECT_EQ(mgsrt_comm_create(nullptr, &comm, error, sizeof error), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "mgsrt_comm_create: backend name is null");
  EXPECT_EQ(mgsrt_comm_create("loopback", nullptr, nullptr, 0), MGSRT_ERROR_INVALID_ARGUMENT);
#ifdef MGSRT_WITH_NCCL
  EXPECT_EQ(commBackendNames(), (std::vector<std::string>{"loopback", "mpi", "nccl"}));
  // NCCL agrees on its id over a host communicator, which the C ABI's
  // creation cannot give it (a GPU context's collectives make their own).
  char longError[256];
  EXPECT_EQ(mgsrt_comm_create("nccl", &comm, longError, sizeof longError),
            MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(comm, nullptr);
  EXPECT_STREQ(longError, kNcclNeedsBootstrap);
#else
  EXPECT_EQ(commBackendNames(), (std::vector<std::string>{"loopback", "mpi"}));
  EXPECT_EQ(mgsrt_comm_create("nccl", &comm, error, sizeof error), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "unknown communication backend 'nccl' (known: loopback, mpi)");
#endif

  CommConfig config;
  config.loopbackGroup = createLoopbackGroup(2);
  config.loopbackRank = 2;
  std::unique_ptr<CommBackend> backend;
  Status s = createCommBackend("loopback", config, backend);
  EXPECT_EQ(s.code, MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "loopback: rank 2 is outside [0, 2)");
}

TEST(CommCreateTest, LoopbackWaitTimesOutWhenARankNeverStarts) {
  CommConfig config;
  config.loopbackGroup = createLoopbackGroup(2);
  config.loopbackRank = 0;
  config.loopbackTimeout = std::chrono::milliseconds(50);
  std::unique_ptr<CommBackend> rank0, rank1;
  ASSERT_TRUE(createCommBackend("loopback", config, rank0).ok());
  config.loopbackRank = 1;
  ASSERT_TRUE(createCommBackend("loopback", config, rank1).ok());
  float x = 1.0f, y = 2.0f;
  Status s = rank0->allReduceSum(&x, 1);
  EXPECT_EQ(s.code, MGSRT_ERROR_BACKEND);
  EXPECT_EQ(s.message,
            "loopback allreduce (collective #0): timed out after 50 ms with 1 of 2 ranks started");
  // The late rank gets the same error instead of a hang, and x is untouched.
  EXPECT_EQ(rank1->allReduceSum(&y, 1).message, s.message);
  EXPECT_EQ(x, 1.0f);
  EXPECT_EQ(y, 2.0f);
}

// mgsrt_comm_abort first ends what was made over the communicator (a GPU
// context's NCCL group registers its ncclCommAbort, lib/Comm/NCCL): each
// registered abort runs, a removed one does not, and either side may go first.
TEST(CommAbortTest, RunsTheAbortsOfCommunicatorsMadeOverIt) {
  char message[256] = "";
  mgsrt_comm_t *comm = nullptr;
  ASSERT_EQ(mgsrt_comm_create("loopback", &comm, message, sizeof message), MGSRT_OK) << message;
  std::shared_ptr<AbortHooks> hooks = comm->dependents;
  int a = 0, b = 0;
  hooks->add(&a, [&] { ++a; });
  hooks->add(&b, [&] { ++b; });
  hooks->remove(&b);
  mgsrt_comm_abort(comm, 1); // loopback: a group within one process; it returns
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  mgsrt_comm_destroy(comm);
  hooks->remove(&a); // the hooks outlive the communicator
  hooks->runAll();
  EXPECT_EQ(a, 1);
}

TEST(SparseCollectiveErrorsTest, BadArgumentsAreRefusedAtTheStart) {
  mgsrt_comm_t *comm = nullptr;
  ASSERT_EQ(mgsrt_comm_create("loopback", &comm, nullptr, 0), MGSRT_OK);
  float values[2] = {1.0f, 2.0f}, residual[4] = {}, outV[2], out[4];
  int32_t indices[2] = {1, 4}, outI[2];
  void *gBufs[] = {values, indices, residual, outV, outI};
  void *sBufs[] = {values, indices, out};
  auto expectError = [&](auto start, const int64_t *desc, void *const *bufs, const char *want) {
    CommCtx ctx(comm);
    EXPECT_EQ(start(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), want);
  };
  const int64_t g[] = {2, 0, 4}, s[] = {2, 0, 4, 1};
  expectError(mgsrt_gtopk_start, g, gBufs, "gtopk_start: indices[1] = 4 is outside [0, 4)");
  expectError(mgsrt_sparse_allreduce_start, s, sBufs,
              "sparse_allreduce_start: indices[1] = 4 is outside [0, 4)");
  const int64_t gBig[] = {5, 0, 4}, gSlot[] = {2, MGSRT_COMM_MAX_SLOTS, 4};
  expectError(mgsrt_gtopk_start, gBig, gBufs, "gtopk_start: k = 5 exceeds the element count 4");
  expectError(mgsrt_gtopk_start, gSlot, gBufs, "gtopk_start: slot 1024 is outside [0, 1024)");
  void *noResidual[] = {values, indices, nullptr, outV, outI};
  expectError(mgsrt_gtopk_start, g, noResidual, "gtopk_start: buffer 2 (residual) is null");
  mgsrt_comm_destroy(comm);
}

TEST(AllGatherErrorsTest, ValuesFormatIsF32F16OrBf16) {
  mgsrt_comm_t *comm = nullptr;
  ASSERT_EQ(mgsrt_comm_create("loopback", &comm, nullptr, 0), MGSRT_OK);
  {
    CommCtx ctx(comm);
    float values[1] = {1.0f}, recv[1];
    int32_t indices[1] = {0}, recvIdx[1];
    void *bufs[] = {values, indices, recv, recvIdx};
    const int64_t desc[] = {1, 0, 0, 3};
    EXPECT_EQ(mgsrt_allgather_start(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), "allgather_start: values format 3 is not 0 (float32), 1 (IEEE "
                             "half) or 2 (bfloat16)");
  }
  mgsrt_comm_destroy(comm);
}

/// A backend without point-to-point messages (like nccl) refuses tasks.
TEST(SparseCollectiveErrorsTest, BackendWithoutMessagesSaysSo) {
  struct NoMessages final : CommBackend {
    std::string_view name() const override { return "nomsg"; }
    int rank() const override { return 0; }
    int size() const override { return 1; }
    CommRequestPtr iallReduce(float *, size_t, ReduceOp) override { return nullptr; }
    CommRequestPtr iallGather(const void *, size_t, void *) override { return nullptr; }
    CommRequestPtr ibroadcast(void *, size_t, int) override { return nullptr; }
    CommRequestPtr ibarrier() override { return nullptr; }
  };
  mgsrt_comm_t *comm = wrapCommBackend(std::make_unique<NoMessages>());
  {
    CommCtx ctx(comm);
    float values[1] = {1.0f}, residual[2] = {}, outV[1];
    int32_t indices[1] = {1}, outI[1];
    void *bufs[] = {values, indices, residual, outV, outI};
    const int64_t start[] = {1, 0, 2}, wait[] = {0};
    EXPECT_EQ(mgsrt_gtopk_start(ctx, start, bufs), MGSRT_OK);
    EXPECT_EQ(mgsrt_comm_wait(ctx, wait, nullptr), MGSRT_ERROR_UNAVAILABLE);
    EXPECT_EQ(ctx.message(), "comm_wait: gtopk: the nomsg backend has no point-to-point "
                             "messages (the sparse collectives gtopk and sparse-allreduce run "
                             "on loopback and mpi)");
  }
  mgsrt_comm_destroy(comm);
}

/// Balanced regions follow the selected indices: with every rank's entries in
/// the first eighth of n, the boundaries fall inside it (equal ranges would
/// give rank 0 all of them), and each region holds a quarter of the entries.
TEST(SparseCollectiveRegionsTest, BalancedRegionsFollowTheIndices) {
  LoopbackRunner<4>::runOnAllRanks([](RankEnv &env) {
    const int64_t n = 8000, k = 100;
    std::vector<int32_t> indices(k);
    for (int64_t j = 0; j < k; ++j)
      indices[j] = static_cast<int32_t>(j * 10 + env.rank); // sorted, all below 1000
    std::vector<int64_t> balanced, equal;
    EXPECT_STATUS_OK(env.backend
                         .startTask("regions", [&] {
                           if (Status s = sparseRegions(env.backend, n, indices.data(), k,
                                                        /*balanced=*/true, balanced);
                               !s.ok())
                             return s;
                           return sparseRegions(env.backend, n, indices.data(), k,
                                                /*balanced=*/false, equal);
                         })
                         ->wait());
    EXPECT_EQ(equal, (std::vector<int64_t>{0, 2000, 4000, 6000, 8000}));
    // Local quantiles at entries 25, 50, 75: 250 + r, 500 + r, 750 + r; means
    // 251, 501, 751 (rank numbers 0..3 average to 1.5, floored).
    EXPECT_EQ(balanced, (std::vector<int64_t>{0, 251, 501, 751, 8000}));
  });
}

} // namespace
