//===- LoopbackBackend.cpp - N ranks as threads of one process ------------===//

#include "Comm/Loopback/LoopbackBackend.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace mgs::rt {

namespace {

enum class Kind { AllReduce, AllGather, Broadcast, Barrier };

const char *kindName(Kind k) {
  switch (k) {
  case Kind::AllReduce:
    return "allreduce";
  case Kind::AllGather:
    return "allgather";
  case Kind::Broadcast:
    return "broadcast";
  case Kind::Barrier:
    return "barrier";
  }
  return "?";
}

/// One rank's arguments to a collective.
struct Part {
  Kind kind = Kind::Barrier;
  float *data = nullptr; // allreduce (in/out), broadcast (as bytes)
  size_t count = 0;      // allreduce: elements; allgather, broadcast: bytes
  ReduceOp op = ReduceOp::Sum;
  const void *send = nullptr;
  void *recv = nullptr;
  int root = 0;
};

/// The n-th collective of the group.
struct Op {
  uint64_t seq = 0;
  std::vector<Part> parts;
  int arrived = 0;
  bool running = false; // its last rank performs it, outside the lock
  bool done = false;
  Status status;
};

} // namespace

class LoopbackGroup {
public:
  explicit LoopbackGroup(int size) : size(size) {}
  const int size;
  std::mutex mu;
  std::condition_variable cv;
  /// Collectives some but not all ranks have started, by sequence number.
  std::map<uint64_t, std::shared_ptr<Op>> open;
  /// Point-to-point messages sent and not yet received, by (source, dest).
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> mail;
};

std::shared_ptr<LoopbackGroup> createLoopbackGroup(int size) {
  return std::make_shared<LoopbackGroup>(size);
}

namespace {

Status mismatch(const Op &op, const char *what, int r, const std::string &v0,
                const std::string &vr) {
  std::ostringstream os;
  os << "loopback " << kindName(op.parts[0].kind) << " (collective #" << op.seq
     << "): ranks disagree on the " << what << ": rank 0 has " << v0 << ", rank " << r
     << " has " << vr;
  return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, os.str());
}

/// Performs a collective every rank has started.
Status perform(const Op &op) {
  const int P = static_cast<int>(op.parts.size());
  const Part &p0 = op.parts[0];
  for (int r = 1; r < P; ++r) {
    const Part &pr = op.parts[r];
    if (pr.kind != p0.kind)
      return mismatch(op, "collective", r, kindName(p0.kind), kindName(pr.kind));
    if (pr.count != p0.count)
      return mismatch(op, p0.kind == Kind::AllReduce ? "element count" : "byte count", r,
                      std::to_string(p0.count), std::to_string(pr.count));
    if (p0.kind == Kind::AllReduce && pr.op != p0.op)
      return mismatch(op, "operation", r, p0.op == ReduceOp::Sum ? "sum" : "average",
                      pr.op == ReduceOp::Sum ? "sum" : "average");
    if (p0.kind == Kind::Broadcast && pr.root != p0.root)
      return mismatch(op, "root", r, std::to_string(p0.root), std::to_string(pr.root));
  }
  switch (p0.kind) {
  case Kind::AllReduce: {
    const size_t n = p0.count;
    std::vector<float> sum(p0.data, p0.data + n);
    for (int r = 1; r < P; ++r) {
      const float *x = op.parts[r].data;
      for (size_t i = 0; i < n; ++i)
        sum[i] += x[i];
    }
    if (p0.op == ReduceOp::Average)
      for (float &x : sum)
        x /= static_cast<float>(P);
    for (int r = 0; r < P; ++r)
      if (n)
        std::memcpy(op.parts[r].data, sum.data(), n * sizeof(float));
    return Status::success();
  }
  case Kind::AllGather: {
    const size_t bytes = p0.count;
    if (bytes == 0)
      return Status::success();
    for (int d = 0; d < P; ++d)
      for (int r = 0; r < P; ++r)
        std::memcpy(static_cast<char *>(op.parts[d].recv) + r * bytes, op.parts[r].send, bytes);
    return Status::success();
  }
  case Kind::Broadcast: {
    if (p0.root < 0 || p0.root >= P)
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           "loopback broadcast (collective #" + std::to_string(op.seq) +
                               "): root " + std::to_string(p0.root) + " is outside [0, " +
                               std::to_string(P) + ")");
    for (int r = 0; r < P; ++r)
      if (r != p0.root && p0.count)
        std::memcpy(op.parts[r].data, op.parts[p0.root].data, p0.count);
    return Status::success();
  }
  case Kind::Barrier:
    return Status::success();
  }
  return Status::success();
}

class LoopbackRequest final : public CommRequest {
public:
  LoopbackRequest(std::shared_ptr<LoopbackGroup> group, std::shared_ptr<Op> op,
                  std::chrono::milliseconds timeout)
      : group(std::move(group)), op(std::move(op)), timeout(timeout) {}
  ~LoopbackRequest() override { wait(); }

  Status wait() override {
    std::unique_lock<std::mutex> lock(group->mu);
    if (!group->cv.wait_for(lock, timeout, [&] { return op->done; })) {
      if (!op->running) {
        // Cancel: no rank will perform it now; late starters get this error.
        std::ostringstream os;
        os << "loopback " << kindName(op->parts[0].kind) << " (collective #" << op->seq
           << "): timed out after " << timeout.count() << " ms with " << op->arrived << " of "
           << group->size << " ranks started";
        op->status = Status::error(MGSRT_ERROR_BACKEND, os.str());
        op->done = true;
      } else {
        group->cv.wait(lock, [&] { return op->done; });
      }
    }
    return op->status;
  }

  bool test() override {
    std::lock_guard<std::mutex> lock(group->mu);
    return op->done;
  }

private:
  std::shared_ptr<LoopbackGroup> group;
  std::shared_ptr<Op> op;
  std::chrono::milliseconds timeout;
};

/// A task's request: its future.
class TaskRequest final : public CommRequest {
public:
  explicit TaskRequest(std::shared_future<Status> result) : result(std::move(result)) {}
  ~TaskRequest() override { result.wait(); }
  Status wait() override { return result.get(); }
  bool test() override {
    return result.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

private:
  std::shared_future<Status> result;
};

/// The rank's communication thread: runs the tasks in the order started.
class TaskThread {
public:
  ~TaskThread() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    cv.notify_one();
    if (thread.joinable())
      thread.join();
  }
  CommRequestPtr start(std::function<Status()> task) {
    std::packaged_task<Status()> job([task = std::move(task)] {
      try {
        return task();
      } catch (const std::bad_alloc &) {
        return Status::error(MGSRT_ERROR_OUT_OF_MEMORY, "loopback task: out of memory");
      }
    });
    std::shared_future<Status> result = job.get_future().share();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!thread.joinable())
        thread = std::thread([this] { loop(); });
      queue.push_back(std::move(job));
    }
    cv.notify_one();
    return std::make_unique<TaskRequest>(std::move(result));
  }

private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return; // stopping, every task run
      std::packaged_task<Status()> job = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::packaged_task<Status()>> queue;
  bool stopping = false;
  std::thread thread;
};

class LoopbackBackend final : public CommBackend {
public:
  LoopbackBackend(std::shared_ptr<LoopbackGroup> group, int rank,
                  std::chrono::milliseconds timeout)
      : group(std::move(group)), rank_(rank), timeout(timeout) {}

  std::string_view name() const override { return "loopback"; }
  int rank() const override { return rank_; }
  int size() const override { return group->size; }

  CommRequestPtr iallReduce(float *data, size_t n, ReduceOp op) override {
    Part p;
    p.kind = Kind::AllReduce;
    p.data = data;
    p.count = n;
    p.op = op;
    return start(p);
  }
  CommRequestPtr iallGather(const void *send, size_t bytesPerRank, void *recv) override {
    Part p;
    p.kind = Kind::AllGather;
    p.send = send;
    p.recv = recv;
    p.count = bytesPerRank;
    return start(p);
  }
  CommRequestPtr ibroadcast(void *data, size_t bytes, int root) override {
    Part p;
    p.kind = Kind::Broadcast;
    p.data = static_cast<float *>(data);
    p.count = bytes;
    p.root = root;
    return start(p);
  }
  CommRequestPtr ibarrier() override { return start(Part{}); }

  CommRequestPtr startTask(const char *, std::function<Status()> task) override {
    return tasks.start(std::move(task));
  }

  Status sendRecv(int dest, const std::vector<char> &send, int source,
                  std::vector<char> &recv) override {
    const int P = group->size;
    if (dest >= P || source >= P)
      return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                           "loopback sendRecv: rank " + std::to_string(std::max(dest, source)) +
                               " is outside [0, " + std::to_string(P) + ")");
    std::unique_lock<std::mutex> lock(group->mu);
    if (dest >= 0) {
      group->mail[{rank_, dest}].push_back(send);
      group->cv.notify_all();
    }
    if (source < 0)
      return Status::success();
    std::deque<std::vector<char>> &box = group->mail[{source, rank_}];
    if (!group->cv.wait_for(lock, timeout, [&] { return !box.empty(); }))
      return Status::error(MGSRT_ERROR_BACKEND,
                           "loopback message from rank " + std::to_string(source) + " to rank " +
                               std::to_string(rank_) + ": timed out after " +
                               std::to_string(timeout.count()) + " ms");
    recv = std::move(box.front());
    box.pop_front();
    return Status::success();
  }

private:
  CommRequestPtr start(const Part &part) {
    const uint64_t seq = nextSeq++;
    std::shared_ptr<Op> op;
    {
      std::lock_guard<std::mutex> lock(group->mu);
      std::shared_ptr<Op> &entry = group->open[seq];
      if (!entry) {
        entry = std::make_shared<Op>();
        entry->seq = seq;
        entry->parts.resize(group->size);
      }
      op = entry;
      if (op->done) // cancelled by a rank's timeout
        return completedRequest(op->status);
      op->parts[rank_] = part;
      if (++op->arrived < group->size)
        return std::make_unique<LoopbackRequest>(group, op, timeout);
      group->open.erase(seq);
      op->running = true;
    }
    Status status;
    try {
      status = perform(*op);
    } catch (const std::bad_alloc &) {
      status = Status::error(MGSRT_ERROR_OUT_OF_MEMORY, "loopback: out of memory");
    }
    {
      std::lock_guard<std::mutex> lock(group->mu);
      op->status = std::move(status);
      op->running = false;
      op->done = true;
    }
    group->cv.notify_all();
    return std::make_unique<LoopbackRequest>(group, op, timeout);
  }

  std::shared_ptr<LoopbackGroup> group;
  int rank_;
  std::chrono::milliseconds timeout;
  uint64_t nextSeq = 0;
  // Declared last: joined first, while the members its tasks use exist.
  TaskThread tasks;
};

} // namespace

Status createLoopbackBackend(const CommConfig &config, std::unique_ptr<CommBackend> &out) {
  std::shared_ptr<LoopbackGroup> group =
      config.loopbackGroup ? config.loopbackGroup : createLoopbackGroup(1);
  if (group->size < 1)
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                         "loopback: group size " + std::to_string(group->size) +
                             " is not positive");
  if (config.loopbackRank < 0 || config.loopbackRank >= group->size)
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                         "loopback: rank " + std::to_string(config.loopbackRank) +
                             " is outside [0, " + std::to_string(group->size) + ")");
  out = std::make_unique<LoopbackBackend>(std::move(group), config.loopbackRank,
                                          config.loopbackTimeout);
  return Status::success();
}

} // namespace mgs::rt
