//===- CommTest.cpp - The collectives of a GPU context (NCCL) -------------===//
//
// One GPU, so one rank: NCCL refuses two ranks on one device. What one rank
// can show: the collectives complete with the right data through the
// start/wait slots, the start's copy of the sent values (the caller may
// overwrite them at once), ordering against the compute stream, and the
// errors shared with the CPU collectives. (The sparse collectives' device
// algorithms on several ranks: DeviceSparseTest.cpp.)
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"
#include "../Comm/SparseTestData.h"

#include <limits>

using namespace mgsrt_test;

namespace {

class GpuComm : public GpuTest {
protected:
  mgsrt_comm_t *comm = nullptr;
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped())
      return;
    char message[256] = "";
    ASSERT_EQ(mgsrt_comm_create("loopback", &comm, message, sizeof message), MGSRT_OK) << message;
    ASSERT_OK(gpu, mgsrt_ctx_set_comm(gpu, comm));
  }
  void TearDown() override {
    if (comm) {
      mgsrt_ctx_set_comm(gpu, nullptr);
      mgsrt_comm_destroy(comm);
    }
  }
};

TEST_F(GpuComm, AllReduceOfOneRankKeepsTheData) {
  std::vector<float> host = randomVec(100003);
  DeviceBuffer<float> d(gpu, host);
  int64_t start[2] = {static_cast<int64_t>(host.size()), 3}, wait[1] = {3};
  void *bufs[1] = {d};
  ASSERT_OK(gpu, mgsrt_allreduce_start(gpu, start, bufs));
  ASSERT_OK(gpu, mgsrt_comm_wait(gpu, wait, nullptr));
  EXPECT_TRUE(bitsEqual(d.download(), host));
}

TEST_F(GpuComm, AllGatherSendsWhatWasThereAtTheStart) {
  const int64_t k = 4099;
  std::vector<float> values = randomVec(k);
  std::vector<int32_t> indices(k);
  for (int64_t i = 0; i < k; ++i)
    indices[i] = static_cast<int32_t>(3 * i + 1);
  DeviceBuffer<float> v(gpu, values), rv(gpu, k);
  DeviceBuffer<int32_t> ix(gpu, indices), ri(gpu, k);
  int64_t start[4] = {k, 0, 0, 0}, wait[1] = {0}, zero[1] = {k};
  void *bufs[4] = {v, ix, rv, ri};
  ASSERT_OK(gpu, mgsrt_allgather_start(gpu, start, bufs));
  // The caller may reuse the sent buffers at once: zero them on the compute stream.
  void *zv[1] = {v};
  ASSERT_OK(gpu, mgsrt_zero(gpu, zero, zv));
  ASSERT_OK(gpu, mgsrt_comm_wait(gpu, wait, nullptr));
  EXPECT_TRUE(bitsEqual(rv.download(), values));
  EXPECT_EQ(ri.download(), indices);
}

// mgsrt_comm_abort on the host communicator first aborts the NCCL group made
// over it (ncclCommAbort: what the driver's watchdog relies on to end a
// collective stuck on a stopped peer). Later collectives are refused saying
// so; the context still goes away cleanly (the aborted communicator is not
// destroyed again). Loopback's own abortGroup returns (one process).
TEST_F(GpuComm, AbortEndsTheNcclGroupMadeOverTheCommunicator) {
  std::vector<float> host = randomVec(1000);
  DeviceBuffer<float> d(gpu, host);
  int64_t start[2] = {1000, 0}, wait[1] = {0}, bcast[2] = {16, 0};
  void *bufs[1] = {d};
  ASSERT_OK(gpu, mgsrt_allreduce_start(gpu, start, bufs));
  ASSERT_OK(gpu, mgsrt_comm_wait(gpu, wait, nullptr));
  mgsrt_comm_abort(comm, 1);
  EXPECT_TRUE(bitsEqual(d.download(), host)); // the compute stream still works
  EXPECT_EQ(mgsrt_allreduce_start(gpu, start, bufs), MGSRT_ERROR_BACKEND);
  EXPECT_STREQ(mgsrt_ctx_message(gpu),
               "allreduce_start: the NCCL communicator was aborted (ncclCommAbort): a peer "
               "failed or stopped, or the job is ending");
  mgsrt_ctx_clear(gpu);
  EXPECT_EQ(mgsrt_broadcast(gpu, bcast, bufs), MGSRT_ERROR_BACKEND);
  EXPECT_STREQ(mgsrt_ctx_message(gpu),
               "broadcast: the NCCL communicator was aborted (ncclCommAbort): a peer failed or "
               "stopped, or the job is ending");
}

// The sparse collectives on NCCL with one rank (NCCL's own calls; several
// ranks: DeviceSparseTest.cpp) through the C ABI, against a CPU context's:
// the global top-k of one rank is its entries (a repeated index summed in
// entry order) and drops nothing; the sparse all-reduce is the dense sum.
// The sent buffers may be reused once the start returns.
TEST_F(GpuComm, SparseCollectivesOfOneRankEqualTheCpu) {
  const int64_t n = 5003, k = 300;
  std::vector<float> values = randomVec(k, -3.0f, 3.0f), residual = randomVec(n);
  std::vector<int32_t> indices(k);
  for (int64_t j = 0; j < k; ++j)
    indices[j] = static_cast<int32_t>((j * 7919) % n);
  for (int64_t j = 1; j < 40; j += 3)
    indices[j] = indices[j - 1];
  mgsrt_comm_t *cpuComm = nullptr;
  ASSERT_EQ(mgsrt_comm_create("loopback", &cpuComm, nullptr, 0), MGSRT_OK);
  ASSERT_OK(cpu, mgsrt_ctx_set_comm(cpu, cpuComm));
  for (int balanced : {0, 1}) {
    const mgsrt_comm_test::HostSparseResults want =
        mgsrt_comm_test::hostSparseCollectives(cpu, {values, indices}, residual, n, balanced);
    const int64_t g[] = {k, 3, n}, s[] = {k, 8, n, balanced}, gw[] = {3}, sw[] = {8},
                  zero[] = {k};

    DeviceBuffer<float> v(gpu, values), res(gpu, residual), ov(gpu, k), dense(gpu, n);
    DeviceBuffer<int32_t> ix(gpu, indices), oi(gpu, k);
    void *gg[] = {v, ix, res, ov, oi}, *gs[] = {v, ix, dense}, *zv[] = {v};
    ASSERT_OK(gpu, mgsrt_gtopk_start(gpu, g, gg));
    ASSERT_OK(gpu, mgsrt_sparse_allreduce_start(gpu, s, gs));
    ASSERT_OK(gpu, mgsrt_zero(gpu, zero, zv));
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, sw, nullptr));
    ASSERT_OK(gpu, mgsrt_comm_wait(gpu, gw, nullptr));
    EXPECT_TRUE(bitsEqual(ov.download(), want.values));
    EXPECT_EQ(oi.download(), want.indices);
    EXPECT_TRUE(bitsEqual(res.download(), want.residual));
    EXPECT_TRUE(bitsEqual(dense.download(), want.dense));
  }
  mgsrt_ctx_set_comm(cpu, nullptr);
  mgsrt_comm_destroy(cpuComm);
}

// An index outside [0, n) is the wait's error, naming it, as on the staged
// path; the context's sticky error then holds.
TEST_F(GpuComm, SparseCollectivesReportABadIndexAtTheWait) {
  DeviceBuffer<float> v(gpu, std::vector<float>{1.0f, 2.0f, 3.0f}), res(gpu, 40), ov(gpu, 3),
      dense(gpu, 40);
  DeviceBuffer<int32_t> ix(gpu, std::vector<int32_t>{1, 5, 50}), oi(gpu, 3);
  const int64_t g[] = {3, 0, 40}, s[] = {3, 1, 40, 1}, gw[] = {0}, sw[] = {1};
  void *gg[] = {v, ix, res, ov, oi}, *gs[] = {v, ix, dense};
  ASSERT_OK(gpu, mgsrt_gtopk_start(gpu, g, gg));
  EXPECT_EQ(mgsrt_comm_wait(gpu, gw, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpu.message(), "comm_wait: gtopk: indices[2] = 50 is outside [0, 40)");
  mgsrt_ctx_clear(gpu);
  ASSERT_OK(gpu, mgsrt_sparse_allreduce_start(gpu, s, gs));
  EXPECT_EQ(mgsrt_comm_wait(gpu, sw, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpu.message(), "comm_wait: sparse_allreduce: indices[2] = 50 is outside [0, 40)");
}

/// values gathered from this one rank in the wire format `format` (mgsrt.h's
/// MGSRT_VALUES_*), checked to arrive with their indices; returns them.
std::vector<float> gatherValues(mgsrt_ctx_t *gpu, const std::vector<float> &values,
                                int64_t format) {
  const int64_t k = static_cast<int64_t>(values.size());
  std::vector<int32_t> indices(k, 7);
  DeviceBuffer<float> v(gpu, values), rv(gpu, k);
  DeviceBuffer<int32_t> ix(gpu, indices), ri(gpu, k);
  int64_t start[4] = {k, 2, 0, format}, wait[1] = {2};
  void *bufs[4] = {v, ix, rv, ri};
  EXPECT_EQ(mgsrt_allgather_start(gpu, start, bufs), MGSRT_OK) << mgsrt_ctx_message(gpu);
  EXPECT_EQ(mgsrt_comm_wait(gpu, wait, nullptr), MGSRT_OK) << mgsrt_ctx_message(gpu);
  EXPECT_EQ(ri.download(), indices);
  return rv.download();
}

TEST_F(GpuComm, HalfValuesArriveRoundedToNearestEven) {
  std::vector<float> values = randomVec(1000, -100.0f, 100.0f);
  values[0] = 1.0f / 3.0f;
  values[1] = 65520.0f; // rounds to +inf in half
  std::vector<float> want(values.size());
  for (size_t j = 0; j < values.size(); ++j)
    want[j] = static_cast<float>(static_cast<_Float16>(values[j]));
  EXPECT_TRUE(bitsEqual(gatherValues(gpu, values, MGSRT_VALUES_F16), want));
}

// bfloat16 values (NCCL's ncclBfloat16, narrowed and widened on the device):
// rounded to 8 significant bits, to nearest even, computed here apart.
TEST_F(GpuComm, Bf16ValuesArriveRoundedToNearestEven) {
  std::vector<float> values = randomVec(1000, -100.0f, 100.0f);
  values[0] = 1.0f / 3.0f;
  values[1] = 3.4e38f; // rounds to +inf in bfloat16
  std::vector<float> want(values.size());
  for (size_t j = 0; j < values.size(); ++j) {
    int e;
    const double m = std::frexp(static_cast<double>(values[j]), &e);
    want[j] = static_cast<float>(std::ldexp(std::nearbyint(m * 256.0) / 256.0, e));
  }
  want[1] = std::numeric_limits<float>::infinity(); // 2^128: past float's range
  EXPECT_TRUE(bitsEqual(gatherValues(gpu, values, MGSRT_VALUES_BF16), want));
}

TEST_F(GpuComm, BroadcastFromRootZero) {
  std::vector<float> host = randomVec(1000);
  DeviceBuffer<float> d(gpu, host);
  int64_t desc[2] = {static_cast<int64_t>(host.size() * sizeof(float)), 0};
  void *bufs[1] = {d};
  ASSERT_OK(gpu, mgsrt_broadcast(gpu, desc, bufs));
  EXPECT_TRUE(bitsEqual(d.download(), host));
}

TEST_F(GpuComm, TheCommunicatorNcclWasBuiltOnStays) {
  // A broadcast builds NCCL on the communicator as a start does; after it,
  // another communicator would silently keep the old NCCL group: refused.
  DeviceBuffer<float> d(gpu, 16);
  int64_t desc[2] = {16 * sizeof(float), 0};
  void *bufs[1] = {d};
  ASSERT_OK(gpu, mgsrt_broadcast(gpu, desc, bufs));
  mgsrt_comm_t *other = nullptr;
  char message[256] = "";
  ASSERT_EQ(mgsrt_comm_create("loopback", &other, message, sizeof message), MGSRT_OK) << message;
  EXPECT_EQ(mgsrt_ctx_set_comm(gpu, other), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(gpu.message().find("keeps the communicator"), std::string::npos) << gpu.message();
  mgsrt_ctx_clear(gpu);
  EXPECT_EQ(mgsrt_ctx_set_comm(gpu, comm), MGSRT_OK); // the same one: fine
  mgsrt_comm_destroy(other);
}

TEST_F(GpuComm, SlotErrorsMatchTheCpu) {
  DeviceBuffer<float> d(gpu, 16);
  void *bufs[1] = {d};
  int64_t bad[2] = {16, MGSRT_COMM_MAX_SLOTS};
  EXPECT_EQ(mgsrt_allreduce_start(gpu, bad, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(gpu.message().find("slot 1024 is outside [0, 1024)"), std::string::npos)
      << gpu.message();
  mgsrt_ctx_clear(gpu);
  int64_t wait[1] = {5};
  EXPECT_EQ(mgsrt_comm_wait(gpu, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(gpu.message().find("slot 5 has no pending collective"), std::string::npos)
      << gpu.message();
  mgsrt_ctx_clear(gpu);
  int64_t start[2] = {16, 5};
  ASSERT_OK(gpu, mgsrt_allreduce_start(gpu, start, bufs));
  EXPECT_EQ(mgsrt_allreduce_start(gpu, start, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(gpu.message().find("already has a pending collective"), std::string::npos)
      << gpu.message();
  // A failed context still releases the pending slot.
  EXPECT_EQ(mgsrt_comm_wait(gpu, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
  mgsrt_ctx_clear(gpu);
  EXPECT_EQ(mgsrt_comm_wait(gpu, wait, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
}

TEST_F(GpuTest, CollectiveWithoutACommunicatorIsAnError) {
  DeviceBuffer<float> d(gpu, 16);
  void *bufs[1] = {d};
  int64_t start[2] = {16, 0};
  EXPECT_EQ(mgsrt_allreduce_start(gpu, start, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(gpu.message().find("no communicator"), std::string::npos) << gpu.message();
}

} // namespace
