//===- StagedCollectivesTest.cpp - Staged device collectives on the CPU ---===//
//
// StagedCollectives (a GPU context's collectives over a host backend) driven
// by a host copy engine (memcpy, with a log and injected failures) over
// loopback groups of 1, 2 and 4 ranks (the sparse collectives 1 to 5):
// results equal the host collective's (the CPU context's, bit for bit),
// the start does not wait for the other ranks (the collective overlaps what
// the rank does before its wait), and failures come back as statuses naming
// the collective. The CUDA copy engine is Kernels/CUDA/StagedComm.cpp.
//
//===----------------------------------------------------------------------===//

#include "SparseTestData.h"

#include "Comm/CommCAPI.h"
#include "Comm/Loopback/LoopbackBackend.h"
#include "Comm/StagedCollectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

using namespace mgs::rt;

namespace {

/// "Device" memory is host memory: copies are memcpy, done when queued.
class HostCopyEngine final : public CopyEngine {
public:
  Status toHost(int tag, const std::vector<StagedCopy> &copies, bool computeWaits) override {
    note("toHost " + std::to_string(tag) + (computeWaits ? " computeWaits" : ""));
    if (failToHost)
      return Status::error(MGSRT_ERROR_BACKEND, "cudaMemcpyAsync failed: injected");
    for (const StagedCopy &c : copies)
      std::memcpy(c.dst, c.src, c.bytes);
    return Status::success();
  }
  Status waitToHost(int tag) override {
    note("waitToHost " + std::to_string(tag));
    return failWait ? Status::error(MGSRT_ERROR_BACKEND, "cudaEventSynchronize failed: injected")
                    : Status::success();
  }
  Status toDevice(int tag, const std::vector<StagedCopy> &copies) override {
    note("toDevice " + std::to_string(tag));
    if (failToDevice)
      return Status::error(MGSRT_ERROR_BACKEND, "cudaMemcpyAsync failed: injected");
    for (const StagedCopy &c : copies)
      std::memcpy(c.dst, c.src, c.bytes);
    return Status::success();
  }
  Status addToDevice(int tag, float *residual, const int32_t *indices, const float *values,
                     size_t count) override {
    note("addToDevice " + std::to_string(tag));
    for (size_t j = 0; j < count; ++j)
      residual[indices[j]] += values[j];
    return Status::success();
  }
  Status synchronize() override { return Status::success(); }
  Status allocHost(size_t bytes, void **out) override {
    *out = std::malloc(bytes ? bytes : 1);
    ++allocations;
    return Status::success();
  }
  void freeHost(void *p) override {
    std::free(p);
    --allocations;
  }

  void note(const std::string &what) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(what);
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }

  bool failToHost = false, failWait = false, failToDevice = false;
  int allocations = 0;

private:
  std::mutex mu;
  std::vector<std::string> log;
};

/// Runs `body(rank, comm)` on every rank of a loopback group of `size`, each
/// on its own thread; `comm` holds the rank's backend.
void onRankComms(int size, const std::function<void(int, mgsrt_comm_t *)> &body) {
  std::shared_ptr<LoopbackGroup> group = createLoopbackGroup(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      CommConfig config;
      config.loopbackGroup = group;
      config.loopbackRank = r;
      config.loopbackTimeout = std::chrono::seconds(30); // a broken test fails, not hangs
      std::unique_ptr<CommBackend> backend;
      Status s = createCommBackend("loopback", config, backend);
      ASSERT_TRUE(s.ok()) << s.message;
      mgsrt_comm_t *comm = wrapCommBackend(std::move(backend));
      body(r, comm);
      mgsrt_comm_destroy(comm);
    });
  for (auto &t : threads)
    t.join();
}

/// `body(rank, backend)` on every rank of a loopback group of `size`.
void onRanks(int size, const std::function<void(int, CommBackend &)> &body) {
  onRankComms(size, [&](int r, mgsrt_comm_t *comm) { body(r, *comm->backend); });
}

std::vector<float> rankData(int rank, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = 0.25f * static_cast<float>(rank + 1) - 0.125f * static_cast<float>(i % 7) + 1e-3f * i;
  return v;
}

class StagedCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(StagedCollectivesTest, AllReduceEqualsTheHostCollective) {
  const int P = GetParam();
  const size_t n = 1000;
  // The host collective's result on the same data, for comparison.
  std::vector<std::vector<float>> want(P);
  onRanks(P, [&](int r, CommBackend &host) {
    want[r] = rankData(r, n);
    ASSERT_TRUE(host.allReduce(want[r].data(), n, ReduceOp::Average).ok());
  });
  onRanks(P, [&](int r, CommBackend &host) {
    HostCopyEngine engine;
    std::vector<float> a = rankData(r, n), b = rankData(r + 5, 3);
    {
      StagedCollectives staged(host, engine);
      // Two slots pending at once, waited for in the other order.
      ASSERT_TRUE(staged.allReduceStart(0, a.data(), n).ok());
      ASSERT_TRUE(staged.allReduceStart(3, b.data(), 3).ok());
      EXPECT_TRUE(staged.pending(0) && staged.pending(3));
      Status s3 = staged.wait(3), s0 = staged.wait(0);
      EXPECT_TRUE(s3.ok()) << s3.message;
      EXPECT_TRUE(s0.ok()) << s0.message;
      EXPECT_FALSE(staged.pending(0));
      // A slot is reused with its buffer, and an empty collective stays in step.
      ASSERT_TRUE(staged.allReduceStart(0, nullptr, 0).ok());
      EXPECT_TRUE(staged.wait(0).ok());
    }
    EXPECT_EQ(a, want[r]); // bit for bit
    EXPECT_EQ(engine.allocations, 0);
  });
}

/// x rounded to 8 significant bits, to nearest even (bfloat16's precision),
/// computed apart from WireValues.h's bit manipulation.
float nearestBf16(float x) {
  int e;
  const double m = std::frexp(static_cast<double>(x), &e); // x = m 2^e, |m| in [0.5, 1)
  return static_cast<float>(std::ldexp(std::nearbyint(m * 256.0) / 256.0, e));
}

TEST_P(StagedCollectivesTest, AllGatherFloatHalfAndBf16Values) {
  const int P = GetParam();
  const size_t k = 5;
  onRanks(P, [&](int r, CommBackend &host) {
    HostCopyEngine engine;
    StagedCollectives staged(host, engine);
    for (WireValues wire : {WireValues::F32, WireValues::F16, WireValues::BF16}) {
      std::vector<float> values = rankData(r, k), gotValues(P * k, -1.0f);
      values[0] = 1.0f / 3.0f; // not a half: rounded
      std::vector<int32_t> indices(k), gotIndices(P * k, -1);
      for (size_t j = 0; j < k; ++j)
        indices[j] = static_cast<int32_t>(100 * r + j);
      ASSERT_TRUE(staged
                      .allGatherStart(1, values.data(), indices.data(), k, wire, gotValues.data(),
                                      gotIndices.data())
                      .ok());
      // The sent buffers may be reused at once.
      std::fill(values.begin(), values.end(), 99.0f);
      std::fill(indices.begin(), indices.end(), 99);
      Status s = staged.wait(1);
      ASSERT_TRUE(s.ok()) << s.message;
      for (int q = 0; q < P; ++q) {
        std::vector<float> sent = rankData(q, k);
        sent[0] = 1.0f / 3.0f;
        for (size_t j = 0; j < k; ++j) {
          const float want =
              wire == WireValues::F16    ? static_cast<float>(static_cast<_Float16>(sent[j]))
              : wire == WireValues::BF16 ? nearestBf16(sent[j])
                                         : sent[j];
          EXPECT_EQ(gotValues[q * k + j], want) << "rank " << q << " entry " << j;
          EXPECT_EQ(gotIndices[q * k + j], static_cast<int32_t>(100 * q + j));
        }
      }
    }
    // The values' copy made the compute stream wait: they could be overwritten.
    std::vector<std::string> log = engine.events();
    EXPECT_EQ(log.front(), "toHost 1 computeWaits");
  });
}

TEST_P(StagedCollectivesTest, BroadcastFromEveryRoot) {
  const int P = GetParam();
  onRanks(P, [&](int r, CommBackend &host) {
    HostCopyEngine engine;
    StagedCollectives staged(host, engine);
    for (int root = 0; root < P; ++root) {
      std::vector<float> data = rankData(r, 17);
      Status s = staged.broadcast(data.data(), data.size() * sizeof(float), root);
      ASSERT_TRUE(s.ok()) << s.message;
      EXPECT_EQ(data, rankData(root, 17));
    }
  });
}

// The start returns before the other ranks have started (the host collective
// runs meanwhile), and the copies come in order: to host, the staging
// thread's wait for them, back to the device at the wait.
TEST(StagedCollectivesOrderTest, StartDoesNotWaitForTheOtherRanks) {
  std::atomic<bool> rank0Started{false};
  std::vector<std::string> log0;
  onRanks(2, [&](int r, CommBackend &host) {
    HostCopyEngine engine;
    StagedCollectives staged(host, engine);
    std::vector<float> data = rankData(r, 8);
    if (r == 1)
      while (!rank0Started)
        std::this_thread::yield();
    ASSERT_TRUE(staged.allReduceStart(2, data.data(), data.size()).ok());
    if (r == 0) {
      engine.note("backprop kernel"); // queued between start and wait
      rank0Started = true;
    }
    ASSERT_TRUE(staged.wait(2).ok());
    if (r == 0)
      log0 = engine.events();
  });
  // "waitToHost" runs on the staging thread, any time after the copy is queued.
  ASSERT_EQ(log0.size(), 4u);
  EXPECT_EQ(log0[0], "toHost 2");
  EXPECT_EQ(log0[3], "toDevice 2");
  EXPECT_TRUE((log0[1] == "backprop kernel" && log0[2] == "waitToHost 2") ||
              (log0[2] == "backprop kernel" && log0[1] == "waitToHost 2"));
}

TEST(StagedCollectivesErrorsTest, FailuresNameTheCollective) {
  onRanks(2, [&](int r, CommBackend &host) {
    HostCopyEngine engine;
    StagedCollectives staged(host, engine);
    float x[4] = {1, 2, 3, 4};
    int32_t idx[1] = {0}, gotIdx[2];
    float gotValues[2];
    // A copy that cannot be queued: refused at the start, nothing started.
    engine.failToHost = r == 0;
    if (r == 0) {
      Status s = staged.allReduceStart(0, x, 4);
      EXPECT_EQ(s.code, MGSRT_ERROR_BACKEND);
      EXPECT_EQ(s.message, "allreduce: cudaMemcpyAsync failed: injected");
      EXPECT_FALSE(staged.pending(0));
    }
    engine.failToHost = false;
    // A copy that failed on the device: its collective still runs (the other
    // rank does not wait forever), and this rank's wait reports it.
    engine.failWait = r == 1;
    ASSERT_TRUE(staged.allGatherStart(0, x, idx, 1, WireValues::F32, gotValues, gotIdx).ok());
    Status g = staged.wait(0);
    if (r == 1) {
      EXPECT_EQ(g.code, MGSRT_ERROR_BACKEND);
      EXPECT_EQ(g.message, "allgather: cudaEventSynchronize failed: injected");
    } else {
      EXPECT_TRUE(g.ok()) << g.message;
    }
    engine.failWait = false;
    // The copy back.
    engine.failToDevice = r == 0;
    ASSERT_TRUE(staged.allReduceStart(1, x, 4).ok());
    Status d = staged.wait(1);
    EXPECT_EQ(d.ok(), r == 1) << d.message;
    if (r == 0) {
      EXPECT_EQ(d.message, "allreduce: cudaMemcpyAsync failed: injected");
    }
    engine.failToDevice = false;
    // The host collective's own error (the ranks disagree on the count).
    ASSERT_TRUE(staged.allReduceStart(2, x, r == 0 ? 4 : 3).ok());
    Status h = staged.wait(2);
    EXPECT_EQ(h.code, MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(h.message.rfind("allreduce: loopback allreduce", 0), 0u) << h.message;
    Status b = staged.broadcast(x, sizeof x, 0);
    EXPECT_TRUE(b.ok()) << b.message; // the group is usable again
  });
}

INSTANTIATE_TEST_SUITE_P(Loopback, StagedCollectivesTest, ::testing::Values(1, 2, 4),
                         [](const auto &info) { return std::to_string(info.param) + "ranks"; });

/// `body(rank, comm, cpu)` on every rank of a loopback group of `size`: the
/// rank's communicator and a CPU context on it, whose collectives are the
/// host collectives the staged ones must match.
void onCommRanks(int size, const std::function<void(int, mgsrt_comm_t *, mgsrt_ctx_t *)> &body) {
  onRankComms(size, [&](int r, mgsrt_comm_t *comm) {
    mgsrt_ctx_t *cpu = mgsrt_ctx_create(1);
    ASSERT_EQ(mgsrt_ctx_set_comm(cpu, comm), MGSRT_OK);
    body(r, comm, cpu);
    mgsrt_ctx_destroy(cpu);
  });
}

using mgsrt_comm_test::bitsOf;
using mgsrt_comm_test::Selection;
using mgsrt_comm_test::selectTopK;
using mgsrt_comm_test::sparseGradient;

/// Where two float vectors first differ in their bits; "" when they do not.
std::string firstBitDifference(const std::vector<float> &got, const std::vector<float> &want) {
  if (got.size() != want.size())
    return "sizes " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (bitsOf(got[i]) != bitsOf(want[i]))
      return "[" + std::to_string(i) + "]: " + std::to_string(got[i]) + " vs " +
             std::to_string(want[i]);
  return "";
}

/// One case: n entries, k selected, exact or arbitrary data; `repeat`: every
/// odd entry's index repeats the one before it (the API allows it; the
/// residual then takes two additions at one index, in entry order).
struct StagedSparseCase {
  int64_t n, k;
  bool exact, repeat;
};

const StagedSparseCase kSparseCases[] = {{1000, 10, true, false}, {1000, 10, false, false},
                                         {64, 16, true, false},   {37, 37, false, false},
                                         {5, 1, true, false},     {2000, 40, false, true},
                                         {64, 16, true, true}};

/// Rank r's entries of a case at `step`, selected from its gradient plus
/// `residual` (updated as the step does).
Selection caseEntries(const StagedSparseCase &c, int r, int step, std::vector<float> &residual) {
  std::vector<float> grad = sparseGradient(r, step, c.n, c.exact);
  Selection sel = selectTopK(grad, residual, c.k);
  if (c.repeat)
    for (int64_t j = 1; j < c.k; j += 2)
      sel.indices[j] = sel.indices[j - 1];
  return sel;
}

class StagedSparseTest : public ::testing::TestWithParam<int> {};

TEST_P(StagedSparseTest, GlobalTopKEqualsTheHostCollectiveBitForBit) {
  onCommRanks(GetParam(), [&](int r, mgsrt_comm_t *comm, mgsrt_ctx_t *cpu) {
    HostCopyEngine engine;
    {
      StagedCollectives staged(*comm->backend, engine);
      for (const StagedSparseCase &c : kSparseCases) {
        SCOPED_TRACE("n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                     (c.exact ? " exact" : " float") + (c.repeat ? " repeated" : "") + " rank " +
                     std::to_string(r));
        // Two steps: the second starts from the residual the first left.
        std::vector<float> residual = sparseGradient(r, 99, c.n, c.exact);
        for (int step = 0; step < 2; ++step) {
          Selection sel = caseEntries(c, r, step, residual);
          // The host collective (a CPU context), then the staged one.
          std::vector<float> wantResidual = residual, wantValues(c.k, -7.0f);
          std::vector<int32_t> wantIndices(c.k, -7);
          const int64_t start[] = {c.k, 3, c.n}, wait[] = {3};
          void *bufs[] = {sel.values.data(), sel.indices.data(), wantResidual.data(),
                          wantValues.data(), wantIndices.data()};
          ASSERT_EQ(mgsrt_gtopk_start(cpu, start, bufs), MGSRT_OK) << mgsrt_ctx_message(cpu);
          ASSERT_EQ(mgsrt_comm_wait(cpu, wait, nullptr), MGSRT_OK) << mgsrt_ctx_message(cpu);

          std::vector<float> values = sel.values, gotValues(c.k, -7.0f);
          std::vector<int32_t> indices = sel.indices, gotIndices(c.k, -7);
          ASSERT_TRUE(staged
                          .gtopkStart(5, values.data(), indices.data(), c.k, c.n,
                                      residual.data(), gotValues.data(), gotIndices.data())
                          .ok());
          // The sent entries may be reused at once.
          std::fill(values.begin(), values.end(), 99.0f);
          std::fill(indices.begin(), indices.end(), 0);
          Status s = staged.wait(5);
          ASSERT_TRUE(s.ok()) << s.message;
          EXPECT_EQ(gotIndices, wantIndices);
          EXPECT_EQ(firstBitDifference(gotValues, wantValues), "");
          EXPECT_EQ(firstBitDifference(residual, wantResidual), "") << "residual";
        }
      }
    }
    EXPECT_EQ(engine.allocations, 0);
    // The entries' copy made the compute stream wait; with several ranks the
    // merges dropped entries, which went back through addToDevice.
    std::vector<std::string> log = engine.events();
    EXPECT_EQ(log.front(), "toHost 5 computeWaits");
    EXPECT_EQ(std::count(log.begin(), log.end(), "addToDevice 5") > 0, GetParam() > 1);
  });
}

TEST_P(StagedSparseTest, SparseAllReduceEqualsTheHostCollectiveBitForBit) {
  onCommRanks(GetParam(), [&](int r, mgsrt_comm_t *comm, mgsrt_ctx_t *cpu) {
    HostCopyEngine engine;
    StagedCollectives staged(*comm->backend, engine);
    for (const StagedSparseCase &c : kSparseCases)
      for (int balanced : {0, 1}) {
        SCOPED_TRACE("n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                     " balanced=" + std::to_string(balanced) + " rank " + std::to_string(r));
        std::vector<float> residual = sparseGradient(r, 50, c.n, c.exact);
        Selection sel = caseEntries(c, r, balanced, residual);
        std::vector<float> want(c.n, -7.0f), got(c.n, -7.0f);
        const int64_t start[] = {c.k, 4, c.n, balanced}, wait[] = {4};
        void *bufs[] = {sel.values.data(), sel.indices.data(), want.data()};
        ASSERT_EQ(mgsrt_sparse_allreduce_start(cpu, start, bufs), MGSRT_OK)
            << mgsrt_ctx_message(cpu);
        ASSERT_EQ(mgsrt_comm_wait(cpu, wait, nullptr), MGSRT_OK) << mgsrt_ctx_message(cpu);
        ASSERT_TRUE(staged
                        .sparseAllReduceStart(6, sel.values.data(), sel.indices.data(), c.k, c.n,
                                              balanced != 0, got.data())
                        .ok());
        Status s = staged.wait(6);
        ASSERT_TRUE(s.ok()) << s.message;
        EXPECT_EQ(firstBitDifference(got, want), "");
      }
  });
}

// An index outside [0, n) reaches the host only with the copy: the wait
// says so, and the rank took part with no entries, so the other ranks
// finish (without its entries) and the group stays usable.
TEST_P(StagedSparseTest, BadIndexIsTheWaitsErrorAndTheOthersFinish) {
  const int P = GetParam();
  onCommRanks(P, [&](int r, mgsrt_comm_t *comm, mgsrt_ctx_t *) {
    HostCopyEngine engine;
    StagedCollectives staged(*comm->backend, engine);
    const int64_t n = 64, k = 2;
    float values[2] = {1.0f + r, 2.0f}, residual[64] = {}, outV[2], dense[64];
    int32_t indices[2] = {3, r == 0 ? 70 : 5}, outI[2];
    ASSERT_TRUE(staged.gtopkStart(0, values, indices, k, n, residual, outV, outI).ok());
    ASSERT_TRUE(staged.sparseAllReduceStart(1, values, indices, k, n, true, dense).ok());
    for (int slot : {0, 1}) {
      Status s = staged.wait(slot);
      if (r == 0) {
        EXPECT_EQ(s.code, MGSRT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(s.message, std::string(slot == 0 ? "gtopk" : "sparse_allreduce") +
                                 ": indices[1] = 70 is outside [0, 64)");
      } else {
        EXPECT_TRUE(s.ok()) << s.message;
      }
    }
    if (r != 0) {
      // Rank 0 sent nothing: index 3 holds the others' values.
      float sum = 0.0f;
      for (int q = 1; q < P; ++q)
        sum += 1.0f + q;
      EXPECT_EQ(dense[3], sum / static_cast<float>(P));
    }
    float x[1] = {1.0f};
    EXPECT_TRUE(staged.allReduceStart(2, x, 1).ok());
    Status a = staged.wait(2);
    EXPECT_TRUE(a.ok()) << a.message;
  });
}

INSTANTIATE_TEST_SUITE_P(Loopback, StagedSparseTest, ::testing::Values(1, 2, 3, 4, 5),
                         [](const auto &info) { return std::to_string(info.param) + "ranks"; });

} // namespace

namespace {

TEST(StagedCommChoiceTest, ACpuContextRefusesStaging) {
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  EXPECT_EQ(mgsrt_ctx_set_staged_comm(ctx, 1), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mgsrt_ctx_message(ctx),
               "ctx_set_staged_comm: a CPU context's collectives run on its communicator's "
               "backend already; staging is for GPU contexts");
  mgsrt_ctx_destroy(ctx);
  EXPECT_EQ(mgsrt_ctx_set_staged_comm(nullptr, 1), MGSRT_ERROR_INVALID_ARGUMENT);
}

} // namespace
