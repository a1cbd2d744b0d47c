//===- DeviceSparseTest.cpp - The NCCL forms of the sparse collectives ----===//
//
// DeviceSparseCollectives.h (a GPU context's gtopk_start and
// sparse_allreduce_start on NCCL) on 1, 2, 3, 4, 5 and 8 ranks on one GPU.
// NCCL refuses two ranks on one device, so the ranks are threads of this
// process, each with its own stream, and their messages go through
// LoopbackPeers: a message is a copy queued on the receiver's stream after
// the sender's stream reached the send, and the sender's stream waits for
// that copy, as ncclSend/ncclRecv order them. Everything but NCCL's own
// calls runs: the kernels, the CUB sorts, the rounds, the host wait for the
// sizes. Results are checked bit for bit against the one-process references
// of the conformance suite (SparseTestData.h: the same global top-k over
// std::map, the dense sum in rank order), against the CPU
// context's collectives on a loopback group where a rank repeats indices,
// and sent + residual = the accumulated gradient on every rank. Skips,
// saying so, without a GPU.
//
//===----------------------------------------------------------------------===//

#include "../Comm/LoopbackComm.h"
#include "../Comm/SparseTestData.h"

#include "Comm/CommCAPI.h"
#include "Comm/Loopback/LoopbackBackend.h"
#include "Comm/NCCL/DeviceSparseCollectives.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

using namespace mgs::rt;
using namespace mgs::rt::cuda;
using namespace mgsrt_comm_test;

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call
#define STATUS_OK(expr)                                                                            \
  do {                                                                                             \
    Status st_ = (expr);                                                                           \
    ASSERT_TRUE(st_.ok()) << #expr << ": " << st_.message;                                         \
  } while (0)

/// The mailboxes of P ranks in one process.
class LoopbackHub {
public:
  struct Message {
    const void *data;
    size_t bytes;
    cudaEvent_t ready; // recorded on the sender's stream at the send
    std::promise<cudaEvent_t> copied;
  };
  void post(int from, int to, std::shared_ptr<Message> m) {
    {
      std::lock_guard<std::mutex> lock(mu);
      boxes[{from, to}].push_back(std::move(m));
    }
    cv.notify_all();
  }
  std::shared_ptr<Message> take(int from, int to) {
    std::unique_lock<std::mutex> lock(mu);
    auto &box = boxes[{from, to}];
    if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return !box.empty(); }))
      return nullptr;
    std::shared_ptr<Message> m = std::move(box.front());
    box.pop_front();
    return m;
  }

private:
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<int, int>, std::deque<std::shared_ptr<Message>>> boxes;
};

Status cudaFailed(const char *call, cudaError_t e) {
  return Status::error(MGSRT_ERROR_BACKEND, std::string(call) + ": " + cudaGetErrorString(e));
}

class LoopbackPeers final : public DevicePeers {
public:
  LoopbackPeers(LoopbackHub &hub, int rank, int size) : hub(hub), r(rank), P(size) {}
  int rank() const override { return r; }
  int size() const override { return P; }

  Status exchange(const std::vector<PeerOp> &ops, cudaStream_t stream) override {
    cudaEvent_t ready;
    if (cudaError_t e = cudaEventCreateWithFlags(&ready, cudaEventDisableTiming); e)
      return cudaFailed("cudaEventCreate", e);
    cudaEventRecord(ready, stream);
    std::vector<std::future<cudaEvent_t>> sent;
    for (const PeerOp &op : ops) {
      if (op.peer == r || op.peer < 0 || op.peer >= P)
        return Status::error(MGSRT_ERROR_BACKEND, "an op to rank " + std::to_string(op.peer));
      if (op.kind != PeerOp::Kind::Send)
        continue;
      auto m = std::make_shared<LoopbackHub::Message>();
      m->data = op.data;
      m->bytes = op.bytes;
      m->ready = ready;
      sent.push_back(m->copied.get_future());
      hub.post(r, op.peer, std::move(m));
    }
    Status result;
    for (const PeerOp &op : ops) {
      if (op.kind != PeerOp::Kind::Recv)
        continue;
      std::shared_ptr<LoopbackHub::Message> m = hub.take(op.peer, r);
      if (!m)
        return Status::error(MGSRT_ERROR_BACKEND, "rank " + std::to_string(r) +
                                                      ": nothing arrived from rank " +
                                                      std::to_string(op.peer));
      cudaEvent_t copied = nullptr;
      if (m->bytes != op.bytes) {
        result = Status::error(MGSRT_ERROR_BACKEND,
                               "rank " + std::to_string(r) + " expected " +
                                   std::to_string(op.bytes) + " bytes from rank " +
                                   std::to_string(op.peer) + ", which sent " +
                                   std::to_string(m->bytes));
      } else {
        cudaStreamWaitEvent(stream, m->ready, 0);
        cudaMemcpyAsync(op.data, m->data, op.bytes, cudaMemcpyDeviceToDevice, stream);
        cudaEventCreateWithFlags(&copied, cudaEventDisableTiming);
        cudaEventRecord(copied, stream);
      }
      m->copied.set_value(copied);
    }
    for (std::future<cudaEvent_t> &f : sent) {
      if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
        return Status::error(MGSRT_ERROR_BACKEND,
                             "rank " + std::to_string(r) + ": a send was never received");
      if (cudaEvent_t copied = f.get()) {
        cudaStreamWaitEvent(stream, copied, 0);
        cudaEventDestroy(copied);
      } else if (result.ok()) {
        result = Status::error(MGSRT_ERROR_BACKEND, "a receiver refused a message's size");
      }
    }
    cudaEventDestroy(ready);
    if (cudaError_t e = cudaGetLastError(); e)
      return cudaFailed("exchange", e);
    return result;
  }

  Status synchronize(cudaStream_t stream) override {
    if (cudaError_t e = cudaStreamSynchronize(stream); e)
      return cudaFailed("cudaStreamSynchronize", e);
    return Status::success();
  }

private:
  LoopbackHub &hub;
  int r, P;
};

template <typename T> struct Device {
  T *ptr = nullptr;
  size_t n = 0;
  explicit Device(const std::vector<T> &host) : n(host.size()) {
    EXPECT_EQ(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Device() { cudaFree(ptr); }
  std::vector<T> get() const {
    std::vector<T> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

/// One rank's thread: its stream, its device peers and its loopback
/// communicator (for a CPU context's collectives, the host algorithm).
struct Rank {
  int rank, size;
  cudaStream_t stream;
  DevicePeers &peers;
  mgsrt_comm_t *comm;
};

void onRanks(int P, const std::function<void(Rank &)> &body) {
  LoopbackHub hub;
  std::shared_ptr<LoopbackGroup> group = createLoopbackGroup(P);
  std::vector<std::thread> threads;
  for (int r = 0; r < P; ++r)
    threads.emplace_back([&, r] {
      CUDA_OK(cudaSetDevice(0));
      cudaStream_t stream;
      CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      mgsrt_comm_t *comm = loopbackComm(group, r, std::chrono::seconds(60));
      ASSERT_NE(comm, nullptr);
      LoopbackPeers peers(hub, r, P);
      Rank rank{r, P, stream, peers, comm};
      body(rank);
      mgsrt_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  for (auto &t : threads)
    t.join();
}

/// The device global top-k of one rank's selection: out values, indices and
/// the residual after the error feedback; the bad-index status.
struct GTopKRun {
  std::vector<float> values, residual;
  std::vector<int32_t> indices;
  Status input;
};

GTopKRun deviceGlobalTopK(Rank &rk, SparseWork &w, const Selection &sel, int64_t n,
                          const std::vector<float> &residual) {
  const int64_t k = static_cast<int64_t>(sel.indices.size());
  Device<float> v(sel.values), res(residual), ov(std::vector<float>(k, -7.0f));
  Device<int32_t> ix(sel.indices), oi(std::vector<int32_t>(k, -7));
  GTopKRun run;
  auto step = [&]() -> Status {
    if (Status s = w.stageEntries(v.ptr, ix.ptr, k, rk.stream); !s.ok())
      return s;
    // The caller's buffers may be overwritten once the start is queued.
    cudaMemsetAsync(v.ptr, 0, k * sizeof(float), rk.stream);
    if (Status s = queueGlobalTopK(rk.peers, w, n, ov.ptr, oi.ptr, rk.stream); !s.ok())
      return s;
    if (Status s = rk.peers.synchronize(rk.stream); !s.ok())
      return s;
    run.input = w.inputStatus();
    if (run.input.ok())
      if (Status s = queueGlobalTopKFeedback(w, res.ptr, rk.stream); !s.ok())
        return s;
    return rk.peers.synchronize(rk.stream);
  };
  Status s = step();
  EXPECT_TRUE(s.ok()) << s.message;
  run.values = ov.get();
  run.indices = oi.get();
  run.residual = res.get();
  return run;
}

std::vector<float> deviceSparseAllReduce(Rank &rk, SparseWork &w, const Selection &sel,
                                         int64_t n, bool balanced, Status *input = nullptr) {
  const int64_t k = static_cast<int64_t>(sel.indices.size());
  Device<float> v(sel.values), out(std::vector<float>(n, -7.0f));
  Device<int32_t> ix(sel.indices);
  Status s = w.stageEntries(v.ptr, ix.ptr, k, rk.stream);
  if (s.ok())
    s = queueSparseAllReduce(rk.peers, w, n, balanced, out.ptr, rk.stream);
  if (s.ok())
    s = rk.peers.synchronize(rk.stream);
  EXPECT_TRUE(s.ok()) << s.message;
  if (input)
    *input = w.inputStatus();
  else
    EXPECT_TRUE(w.inputStatus().ok()) << w.inputStatus().message;
  return out.get();
}

/// got == want bit for bit, else the first five differences.
::testing::AssertionResult sameBits(const char *what, const std::vector<float> &got,
                                    const std::vector<float> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << what << ": " << got.size() << " values, want "
                                         << want.size();
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i)
    if (bitsOf(got[i]) != bitsOf(want[i])) {
      ++bad;
      r << what << "[" << i << "] = " << got[i] << ", want " << want[i] << "; ";
    }
  return bad ? r : ::testing::AssertionSuccess();
}

std::string noGpu() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return std::string("no GPU (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  return count ? "" : "no GPU (no CUDA device)";
}

class GpuDeviceSparse : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    if (std::string why = noGpu(); !why.empty())
      GTEST_SKIP() << "GPU test skipped: " << why;
  }
};

/// The conformance suite's global top-k test on the device: every rank's
/// result is the one-process reference bit for bit, and its residual after
/// the feedback is the simulated one (sent + residual = acc), over two steps
/// (the slot's buffers reused).
TEST_P(GpuDeviceSparse, GlobalTopKIsTheReferenceAndErrorFeedbackIsExact) {
  onRanks(GetParam(), [](Rank &rk) {
    const int P = rk.size;
    SparseWork w;
    w.idle = [&] { return rk.peers.synchronize(rk.stream); };
    using C = SparseCase;
    for (C c : {C{1000, 10, true}, C{1000, 10, false}, C{64, 16, true}, C{37, 37, false},
                C{5, 1, true}, C{2000, 3, false}, C{100003, 1000, true},
                C{100003, 1000, false}}) {
      SCOPED_TRACE(c.describe(rk.rank));
      std::vector<std::vector<float>> residual(P);
      for (int q = 0; q < P; ++q)
        residual[q] = sparseGradient(q, 99, c.n, c.exact);
      std::vector<float> mine = residual[rk.rank];
      for (int step = 0; step < 2; ++step) {
        std::vector<Selection> sel(P);
        std::vector<float> acc(c.n);
        for (int q = 0; q < P; ++q) {
          std::vector<float> grad = sparseGradient(q, step, c.n, c.exact);
          if (q == rk.rank)
            for (int64_t i = 0; i < c.n; ++i)
              acc[i] = grad[i] + residual[q][i];
          sel[q] = selectTopK(grad, residual[q], c.k);
        }
        mine = residual[rk.rank]; // the residual after the selection, before the feedback
        RefGTopK ref = refGlobalTopK(sel, c.k);
        for (int q = 0; q < P; ++q)
          for (size_t j = 0; j < sel[q].indices.size(); ++j)
            if (!ref.alive[q].count(sel[q].indices[j]))
              residual[q][sel[q].indices[j]] += sel[q].values[j];

        GTopKRun got = deviceGlobalTopK(rk, w, sel[rk.rank], c.n, mine);
        ASSERT_TRUE(got.input.ok()) << got.input.message;
        ASSERT_EQ(static_cast<int64_t>(ref.global.size()), c.k);
        int64_t j = 0, bad = 0;
        for (const auto &[i, v] : ref.global) {
          const float want = v / static_cast<float>(P);
          if (bad < 5 && (got.indices[j] != i || bitsOf(got.values[j]) != bitsOf(want))) {
            ++bad;
            ADD_FAILURE() << "step " << step << " entry " << j << ": got (" << got.indices[j]
                          << ", " << got.values[j] << "), want (" << i << ", " << want << ")";
          }
          ++j;
        }
        std::vector<float> sent(c.n, 0.0f);
        for (size_t e = 0; e < sel[rk.rank].indices.size(); ++e)
          if (ref.alive[rk.rank].count(sel[rk.rank].indices[e]))
            sent[sel[rk.rank].indices[e]] = sel[rk.rank].values[e];
        for (int64_t i = 0; i < c.n && bad < 5; ++i)
          if (sent[i] + got.residual[i] != acc[i] ||
              bitsOf(got.residual[i]) != bitsOf(residual[rk.rank][i])) {
            ++bad;
            ADD_FAILURE() << "step " << step << " index " << i << ": sent " << sent[i]
                          << " + residual " << got.residual[i] << " != acc " << acc[i]
                          << " (want residual " << residual[rk.rank][i] << ")";
          }
      }
    }
  });
}

/// Every value of equal magnitude: which entries survive is decided by the
/// index alone (the smaller first), on every rank alike; with the sums at
/// shared indices (0.5 + 0.5, 0.5 - 0.5) some ties are broken among sums.
TEST_P(GpuDeviceSparse, GlobalTopKTiesGoToTheSmallerIndex) {
  onRanks(GetParam(), [](Rank &rk) {
    const int P = rk.size;
    const int64_t n = 64, k = 8;
    std::vector<Selection> sel(P);
    for (int q = 0; q < P; ++q)
      for (int64_t j = 0; j < k; ++j) {
        sel[q].indices.push_back(static_cast<int32_t>((3 * q + 5 * j) % n));
        sel[q].values.push_back((q + j) % 3 ? 0.5f : -0.5f);
      }
    for (Selection &s : sel) { // sorted by index, as topk_sparsify leaves them
      std::vector<std::pair<int32_t, float>> e;
      for (size_t j = 0; j < s.indices.size(); ++j)
        e.push_back({s.indices[j], s.values[j]});
      std::sort(e.begin(), e.end());
      for (size_t j = 0; j < e.size(); ++j)
        std::tie(s.indices[j], s.values[j]) = e[j];
    }
    SparseWork w;
    w.idle = [&] { return rk.peers.synchronize(rk.stream); };
    RefGTopK ref = refGlobalTopK(sel, k);
    GTopKRun got = deviceGlobalTopK(rk, w, sel[rk.rank], n, std::vector<float>(n, 0.0f));
    int64_t j = 0;
    for (const auto &[i, v] : ref.global) {
      EXPECT_EQ(got.indices[j], i) << "entry " << j;
      EXPECT_EQ(bitsOf(got.values[j]), bitsOf(v / static_cast<float>(P))) << "entry " << j;
      ++j;
    }
    for (int64_t e = j; e < k; ++e) // fewer than k distinct: zeros at index 0
      EXPECT_TRUE(got.indices[e] == 0 && got.values[e] == 0.0f) << "entry " << e;
    // sent + residual = the selection (the residual was zero).
    std::vector<float> acc(n, 0.0f), sent(n, 0.0f);
    for (int64_t e = 0; e < k; ++e) {
      acc[sel[rk.rank].indices[e]] = sel[rk.rank].values[e];
      if (ref.alive[rk.rank].count(sel[rk.rank].indices[e]))
        sent[sel[rk.rank].indices[e]] = sel[rk.rank].values[e];
    }
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(sent[i] + got.residual[i], acc[i]) << "index " << i;
  });
}

/// A rank that repeats indices (its entries at an index summed in entry
/// order first; the feedback adds them back one by one): the device results
/// equal the CPU context's host algorithm on the same loopback group, bit
/// for bit, both collectives.
TEST_P(GpuDeviceSparse, RepeatedIndicesEqualTheCpu) {
  onRanks(GetParam(), [](Rank &rk) {
    const int64_t n = 100003, k = 1000;
    mgsrt_ctx_t *cpu = mgsrt_ctx_create(1);
    ASSERT_EQ(mgsrt_ctx_set_comm(cpu, rk.comm), MGSRT_OK);
    std::vector<float> residual = sparseGradient(rk.rank, 99, n, false),
                       grad = sparseGradient(rk.rank, 0, n, false);
    Selection sel = selectTopK(grad, residual, k);
    for (int64_t j = 1; j < 64; j += 2)
      sel.indices[j] = sel.indices[j - 1];
    const HostSparseResults want = hostSparseCollectives(cpu, sel, residual, n);
    mgsrt_ctx_destroy(cpu);

    SparseWork w;
    w.idle = [&] { return rk.peers.synchronize(rk.stream); };
    GTopKRun got = deviceGlobalTopK(rk, w, sel, n, residual);
    EXPECT_TRUE(got.input.ok()) << got.input.message;
    EXPECT_EQ(got.indices, want.indices);
    EXPECT_TRUE(sameBits("values", got.values, want.values));
    EXPECT_TRUE(sameBits("residual", got.residual, want.residual));
    EXPECT_TRUE(sameBits("out", deviceSparseAllReduce(rk, w, sel, n, true), want.dense));
  });
}

/// The conformance suite's sparse all-reduce test on the device: the dense
/// sum of every rank's sparse vector in rank order, divided by P, bit for
/// bit, with equal and balanced regions (some sparse, some dense, some empty).
TEST_P(GpuDeviceSparse, SparseAllReduceIsTheDenseSum) {
  onRanks(GetParam(), [](Rank &rk) {
    const int P = rk.size;
    SparseWork w;
    w.idle = [&] { return rk.peers.synchronize(rk.stream); };
    using C = SparseCase;
    for (C c : {C{1000, 10, true}, C{1000, 10, false}, C{64, 32, false}, C{7, 3, true},
                C{100, 100, true}, C{5000, 50, false}, C{100003, 2000, false}}) {
      for (int balanced : {0, 1}) {
        SCOPED_TRACE(c.describe(rk.rank) + " balanced=" + std::to_string(balanced));
        std::vector<Selection> sel(P);
        for (int q = 0; q < P; ++q) {
          std::vector<float> grad = sparseGradient(q, balanced, c.n, c.exact),
                             res = sparseGradient(q, 50 + balanced, c.n, c.exact);
          sel[q] = selectTopK(grad, res, c.k);
        }
        EXPECT_TRUE(sameBits("out", deviceSparseAllReduce(rk, w, sel[rk.rank], c.n, balanced),
                             refDenseAverage(sel, c.n)));
      }
    }
  });
}

/// An index outside [0, n) on the last rank: that rank takes part with no
/// entries (the others finish, with the others' result) and says which.
TEST_P(GpuDeviceSparse, ABadIndexIsReportedAndTheOthersFinish) {
  onRanks(GetParam(), [](Rank &rk) {
    const int P = rk.size;
    const int64_t n = 40, k = 4;
    std::vector<Selection> sel(P);
    for (int q = 0; q < P; ++q)
      for (int64_t j = 0; j < k; ++j) {
        sel[q].indices.push_back(static_cast<int32_t>(q + 9 * j));
        sel[q].values.push_back(static_cast<float>(j + 1) * (q % 2 ? -1.0f : 1.0f));
      }
    const bool liar = rk.rank == P - 1;
    Selection mine = sel[rk.rank];
    if (liar)
      mine.indices[2] = 50;
    SparseWork w;
    w.idle = [&] { return rk.peers.synchronize(rk.stream); };
    GTopKRun got = deviceGlobalTopK(rk, w, mine, n, std::vector<float>(n, 0.0f));
    Status input;
    std::vector<float> dense = deviceSparseAllReduce(rk, w, mine, n, true, &input);
    if (liar) {
      EXPECT_EQ(got.input.message, "indices[2] = 50 is outside [0, 40)");
      EXPECT_EQ(got.input.code, MGSRT_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(input.message, "indices[2] = 50 is outside [0, 40)");
      return;
    }
    EXPECT_TRUE(got.input.ok()) << got.input.message;
    EXPECT_TRUE(input.ok()) << input.message;
    sel[P - 1].indices.clear(); // what the others see of the liar: nothing
    sel[P - 1].values.clear();
    RefGTopK ref = refGlobalTopK(sel, k);
    int64_t j = 0;
    for (const auto &[i, v] : ref.global) {
      EXPECT_EQ(got.indices[j], i);
      EXPECT_EQ(bitsOf(got.values[j]), bitsOf(v / static_cast<float>(P)));
      ++j;
    }
    EXPECT_TRUE(sameBits("out", dense, refDenseAverage(sel, n)));
  });
}

INSTANTIATE_TEST_SUITE_P(OneGpu, GpuDeviceSparse, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto &info) { return std::to_string(info.param) + "ranks"; });

} // namespace
