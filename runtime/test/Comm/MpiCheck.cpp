//===- MpiCheck.cpp - The comm suite across MPI processes -----------------===//
//
//   mpirun -np 4 mgsrt_mpi_check [--expect-ranks N] [gtest flags]
//       CommConformance.h with every process one rank of the "mpi" backend
//       (made through mgsrt_comm_create, as a training executable does).
//       Ranks other than 0 print only their failures.
//   mpirun -np 2 mgsrt_mpi_check --overlap [--floats N] [--reps R] [--sleep]
//       Measures how much of an allreduce of N floats hides behind compute
//       (sgemm through mgsrt_gemm_fwd, as long as the allreduce takes alone;
//       --sleep: the caller sleeps instead, as if it waited on an accelerator
//       or computed on cores the transfer does not need):
//       overlap = (t_comm + t_compute - t_both) / min(t_comm, t_compute),
//       1 = fully hidden, 0 = serialized.
//
//===----------------------------------------------------------------------===//

#include "CommConformance.h"
#include "SparseCollectivesConformance.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace mgs::rt;
using namespace mgsrt_comm_test;

namespace {

mgsrt_comm_t *gComm = nullptr;
int gExpectRanks = -1;

struct MpiRunner {
  static constexpr bool kDetectsMismatch = false;
  static int expectedSize() { return gExpectRanks; }
  static void runOnAllRanks(const std::function<void(RankEnv &)> &body) {
    RankEnv env{*gComm->backend, gComm, gComm->backend->rank(), gComm->backend->size()};
    body(env);
  }
};

struct MpiNames {
  template <typename T> static std::string GetName(int) { return "mpi"; }
};

/// What ranks other than 0 print: their failures, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit RankFailurePrinter(int rank) : rank(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult &r) override {
    if (r.failed())
      std::printf("[rank %d] %s:%d: failure in %s\n%s\n", rank,
                  r.file_name() ? r.file_name() : "?", r.line_number(), current.c_str(),
                  r.message());
  }
  void OnTestStart(const ::testing::TestInfo &info) override {
    current = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestProgramEnd(const ::testing::UnitTest &unit) override {
    if (unit.failed_test_count())
      std::printf("[rank %d] %d test(s) failed\n", rank, unit.failed_test_count());
    std::fflush(stdout);
  }

private:
  int rank;
  std::string current;
};

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int measureOverlap(int64_t floats, int reps, bool sleep) {
  CommBackend &backend = *gComm->backend;
  const int rank = backend.rank(), size = backend.size();
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  mgsrt_ctx_set_comm(ctx, gComm);
  std::vector<float> data(floats, 1.0f);
  const int64_t start[] = {floats, 0}, wait[] = {0};
  void *commBufs[] = {data.data()};

  const int64_t m = 256;
  std::vector<float> a(m * m, 0.5f), b(m * m, 0.25f), y(m * m);
  const double one = 1.0;
  int64_t oneBits;
  std::memcpy(&oneBits, &one, sizeof one);
  const int64_t gemmDesc[] = {m, m, m, 0, 0, oneBits, 0, 0, 0, MGSRT_PRECISION_F32};
  void *gemmBufs[] = {a.data(), b.data(), nullptr, y.data()};
  double sleepSeconds = 0;
  auto compute = [&](int64_t gemms) {
    if (sleep) {
      std::this_thread::sleep_for(std::chrono::duration<double>(sleepSeconds));
      return;
    }
    for (int64_t i = 0; i < gemms; ++i)
      mgsrt_gemm_fwd(ctx, gemmDesc, gemmBufs);
  };
  auto check = [&] {
    if (mgsrt_ctx_status(ctx) != MGSRT_OK) {
      std::fprintf(stderr, "rank %d: %s\n", rank, mgsrt_ctx_message(ctx));
      std::exit(1);
    }
  };

  // The allreduce alone.
  std::vector<double> tComm, tComp, tBoth;
  for (int r = 0; r < reps + 1; ++r) {
    backend.barrier();
    auto t0 = Clock::now();
    mgsrt_allreduce_start(ctx, start, commBufs);
    mgsrt_comm_wait(ctx, wait, nullptr);
    if (r)
      tComm.push_back(since(t0));
  }
  check();
  // Compute as long as the allreduce (rank 0's calibration, for everyone).
  sleepSeconds = median(tComm);
  backend.broadcast(&sleepSeconds, sizeof sleepSeconds, 0);
  compute(2);
  auto t0 = Clock::now();
  compute(10);
  double perGemm = since(t0) / 10;
  int64_t gemms = std::max<int64_t>(1, static_cast<int64_t>(median(tComm) / perGemm));
  backend.broadcast(&gemms, sizeof gemms, 0);
  for (int r = 0; r < reps; ++r) {
    backend.barrier();
    auto t1 = Clock::now();
    compute(gemms);
    tComp.push_back(since(t1));
  }
  // Both: start, compute, wait.
  for (int r = 0; r < reps; ++r) {
    backend.barrier();
    auto t1 = Clock::now();
    mgsrt_allreduce_start(ctx, start, commBufs);
    compute(gemms);
    mgsrt_comm_wait(ctx, wait, nullptr);
    tBoth.push_back(since(t1));
  }
  check();
  const double c = median(tComm), p = median(tComp), both = median(tBoth);
  const double overlap = (c + p - both) / std::min(c, p);
  if (rank == 0) {
    const char *poll = std::getenv("MGSRT_MPI_POLL_US");
    std::printf("ranks %d floats %lld poll_us %s\n", size, static_cast<long long>(floats),
                poll ? poll : "50(default)");
    std::printf("allreduce alone   %8.2f ms\n", c * 1e3);
    if (sleep)
      std::printf("compute alone     %8.2f ms  (sleeping)\n", p * 1e3);
    else
      std::printf("compute alone     %8.2f ms  (%lld sgemm %lldx%lldx%lld)\n", p * 1e3,
                  static_cast<long long>(gemms), static_cast<long long>(m),
                  static_cast<long long>(m), static_cast<long long>(m));
    std::printf("start+compute+wait%8.2f ms\n", both * 1e3);
    std::printf("overlap           %8.2f  (1 = allreduce fully hidden, 0 = serialized)\n",
                overlap);
  }
  mgsrt_ctx_destroy(ctx);
  return 0;
}

} // namespace

namespace mgsrt_comm_test {
INSTANTIATE_TYPED_TEST_SUITE_P(Mpi, CommConformanceTest, ::testing::Types<MpiRunner>, MpiNames);
INSTANTIATE_TYPED_TEST_SUITE_P(Mpi, SparseCollectiveTest, ::testing::Types<MpiRunner>, MpiNames);
} // namespace mgsrt_comm_test

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  bool overlap = false, sleep = false;
  int64_t floats = 1 << 24;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--overlap")
      overlap = true;
    else if (a == "--sleep")
      sleep = true;
    else if (a == "--floats" && i + 1 < argc)
      floats = std::atoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--expect-ranks" && i + 1 < argc)
      gExpectRanks = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "mgsrt_mpi_check: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  char error[512];
  if (mgsrt_comm_create("mpi", &gComm, error, sizeof error) != MGSRT_OK) {
    std::fprintf(stderr, "mgsrt_mpi_check: %s\n", error);
    return 1;
  }
  int rc;
  if (overlap) {
    rc = measureOverlap(floats, reps, sleep);
  } else {
    if (int rank = gComm->backend->rank(); rank != 0) {
      ::testing::TestEventListeners &listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new RankFailurePrinter(rank));
    }
    rc = RUN_ALL_TESTS();
  }
  mgsrt_comm_destroy(gComm);
  return rc;
}
