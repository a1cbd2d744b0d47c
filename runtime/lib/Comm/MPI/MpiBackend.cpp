//===- MpiBackend.cpp - Collectives over MPI on a communication thread ----===//
//
// Why a thread: MPI's nonblocking collectives advance only inside MPI calls
// (OpenMPI's libnbc schedules, TCP fragments), and the compute kernels make
// none for milliseconds at a time. The engine thread makes every MPI call of
// the process: it starts what it is handed, tests what is pending every poll
// interval (a few microseconds of CPU each time) and sleeps when nothing is
// pending. Callers hand it work and wait on a condition variable. This is
// PyTorch's ProcessGroupMPI and Horovod's background thread, with polling
// instead of a blocking MPI_Wait so that no core spins while the compute
// needs it.
//
//===----------------------------------------------------------------------===//

#include "Comm/MPI/MpiBackend.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace mgs::rt {

namespace {

std::string mpiErrorString(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    return "MPI error code " + std::to_string(rc);
  return std::string(text, len);
}

Status mpiError(const char *call, int rc) {
  return Status::error(MGSRT_ERROR_BACKEND, std::string(call) + " failed: " + mpiErrorString(rc));
}

const char *threadLevelName(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  case MPI_THREAD_MULTIPLE:
    return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown level";
}

/// One unit of work of the engine thread: `start` makes the MPI call (a
/// nonblocking one sets `request`; others leave it MPI_REQUEST_NULL), the
/// engine tests the request until it completes, then runs `finish`.
struct MpiOp {
  const char *what = "";
  std::function<Status(MPI_Request *)> start;
  std::function<void()> finish;
  MPI_Request request = MPI_REQUEST_NULL;
  Status status; // written by the engine before `done`
  double doneAt = -1.0; // steady_clock seconds the engine saw it complete; likewise
  bool done = false; // guarded by the engine's mutex
};

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The liveness heartbeat (started by the first setProgress): every
/// kBeatSeconds the engine thread sends every other rank this rank's progress
/// on a communicator of its own, and keeps a receive posted from each. A
/// stopped process (SIGSTOP, a hung driver call) stops beating, so the others
/// can tell "stopped" from "slow" (beating, but behind).
struct Heartbeat {
  static constexpr double kBeatSeconds = 0.25;
  static constexpr double kTickSeconds = 0.05; ///< receives tested this often
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 0;
  double nextBeat = 0;
  std::vector<int64_t> sendBuf, recvBuf;
  std::vector<MPI_Request> sends, recvs;
  // Guarded by the engine's mutex: what the caller set and what was heard.
  int64_t progress = 0;
  std::vector<int64_t> peerProgress;
  std::vector<double> heardAt; // steady seconds; < 0: never
};

class MpiEngine {
public:
  /// The process's engine, started on first use; its thread stops (and
  /// finalizes MPI if it initialized it) at exit.
  static MpiEngine &get() {
    static MpiEngine *engine = [] {
      auto *e = new MpiEngine();
      std::atexit([] { get().shutdown(); });
      return e;
    }();
    return *engine;
  }

  /// Whether MPI is usable (waits for the initialization).
  Status ready() {
    std::unique_lock<std::mutex> lock(mu);
    doneCv.wait(lock, [&] { return initialized; });
    return initStatus;
  }

  std::shared_ptr<MpiOp> submit(const char *what, std::function<Status(MPI_Request *)> start,
                                std::function<void()> finish = {}) {
    auto op = std::make_shared<MpiOp>();
    op->what = what;
    op->start = std::move(start);
    op->finish = std::move(finish);
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) {
        op->status = Status::error(MGSRT_ERROR_BACKEND,
                                   std::string(what) + ": MPI has been shut down (process exit)");
        op->done = true;
        return op;
      }
      queue.push_back(op);
    }
    wakeCv.notify_one();
    return op;
  }

  Status wait(MpiOp &op) {
    std::unique_lock<std::mutex> lock(mu);
    doneCv.wait(lock, [&] { return op.done; });
    return op.status;
  }

  bool test(MpiOp &op) {
    std::lock_guard<std::mutex> lock(mu);
    return op.done;
  }

  /// Runs `fn` on the engine thread and waits for it.
  Status run(const char *what, std::function<Status()> fn) {
    std::shared_ptr<MpiOp> op = submit(what, [fn = std::move(fn)](MPI_Request *) { return fn(); });
    return wait(*op);
  }

  bool isStopping() {
    std::lock_guard<std::mutex> lock(mu);
    return stopping;
  }

  /// How long the engine sleeps between tests (also while a task waits for a
  /// message).
  std::chrono::microseconds pollInterval() const { return poll; }

  /// Sets the progress the heartbeat sends; the first call starts it on a
  /// duplicate of `comm` (made on the engine thread).
  void setProgress(MPI_Comm comm, int64_t progress) {
    bool start = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (beat) {
        beat->progress = progress;
        return;
      }
      start = !beatStarting;
      beatStarting = true;
    }
    if (!start)
      return;
    run("heartbeat setup", [this, comm, progress]() -> Status {
      auto b = std::make_unique<Heartbeat>();
      int rc = MPI_Comm_dup(comm, &b->comm);
      if (rc != MPI_SUCCESS)
        return mpiError("MPI_Comm_dup", rc);
      MPI_Comm_set_errhandler(b->comm, MPI_ERRORS_RETURN);
      MPI_Comm_rank(b->comm, &b->rank);
      MPI_Comm_size(b->comm, &b->size);
      b->sendBuf.assign(b->size, 0);
      b->recvBuf.assign(b->size, 0);
      b->sends.assign(b->size, MPI_REQUEST_NULL);
      b->recvs.assign(b->size, MPI_REQUEST_NULL);
      b->peerProgress.assign(b->size, 0);
      b->heardAt.assign(b->size, -1.0);
      b->progress = progress;
      for (int p = 0; p < b->size; ++p)
        if (p != b->rank)
          MPI_Irecv(&b->recvBuf[p], 1, MPI_INT64_T, p, 0, b->comm, &b->recvs[p]);
      std::lock_guard<std::mutex> lock(mu);
      beat = std::move(b);
      return Status::success();
    });
  }

  /// What the heartbeat last heard from `peer`; false if nothing yet.
  bool peerStatus(int peer, int64_t &progress, double &secondsAgo) {
    std::lock_guard<std::mutex> lock(mu);
    if (!beat || peer < 0 || peer >= beat->size || beat->heardAt[peer] < 0)
      return false;
    progress = beat->peerProgress[peer];
    secondsAgo = steadySeconds() - beat->heardAt[peer];
    return true;
  }

private:
  MpiEngine() {
    if (const char *env = std::getenv("MGSRT_MPI_POLL_US"); env && *env)
      poll = std::chrono::microseconds(std::max(0L, std::strtol(env, nullptr, 10)));
    thread = std::thread([this] { loop(); });
  }

  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping)
        return;
      stopping = true;
    }
    wakeCv.notify_one();
    if (thread.joinable())
      thread.join();
  }

  Status initialize() {
    int finalized = 0, initializedAlready = 0;
    MPI_Finalized(&finalized);
    if (finalized)
      return Status::error(MGSRT_ERROR_BACKEND, "mpi: MPI has already been finalized");
    MPI_Initialized(&initializedAlready);
    if (!initializedAlready) {
      int provided = 0;
      int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (rc != MPI_SUCCESS)
        return mpiError("MPI_Init_thread", rc);
      weInitialized = true;
      return Status::success();
    }
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED)
      return Status::error(
          MGSRT_ERROR_BACKEND,
          std::string("mpi: the application initialized MPI with ") + threadLevelName(provided) +
              "; mgsrt makes its MPI calls on its own communication thread, which needs "
              "MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (or leave MPI's initialization "
              "to mgsrt)");
    return Status::success();
  }

  void loop() {
#ifdef __linux__
    // Sleep for the poll interval, not the default 50 us of timer slack more.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
    Status init = initialize();
    {
      std::lock_guard<std::mutex> lock(mu);
      initStatus = init;
      initialized = true;
    }
    doneCv.notify_all();

    std::vector<std::shared_ptr<MpiOp>> active, finished;
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      // The heartbeat's own MPI calls every 50 ms, not every poll (50 us):
      // the collectives' polling stays as cheap as without it.
      if (beat && steadySeconds() >= nextTick) {
        tickHeartbeat(lock);
        nextTick = steadySeconds() + Heartbeat::kTickSeconds;
      }
      if (queue.empty() && active.empty()) {
        if (stopping)
          break;
        if (beat)
          wakeCv.wait_for(lock, std::chrono::milliseconds(50),
                          [&] { return stopping || !queue.empty(); });
        else
          wakeCv.wait(lock, [&] { return stopping || !queue.empty(); });
        continue;
      }
      std::deque<std::shared_ptr<MpiOp>> fresh;
      fresh.swap(queue);
      lock.unlock();

      for (auto &op : fresh) {
        Status s = init.ok() ? op->start(&op->request) : init;
        if (s.ok()) {
          active.push_back(op);
        } else {
          op->status = std::move(s);
          finished.push_back(op);
        }
      }
      for (size_t i = 0; i < active.size();) {
        MpiOp &op = *active[i];
        int flag = 0;
        int rc = MPI_Test(&op.request, &flag, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !flag) {
          ++i;
          continue;
        }
        if (rc != MPI_SUCCESS)
          op.status = mpiError(op.what, rc);
        else if (op.finish)
          op.finish();
        op.doneAt = std::chrono::duration<double>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
        finished.push_back(std::move(active[i]));
        active.erase(active.begin() + i);
      }

      lock.lock();
      if (!finished.empty()) {
        for (auto &op : finished)
          op->done = true;
        finished.clear();
        doneCv.notify_all();
      }
      if (!active.empty() && queue.empty() && poll.count() > 0)
        wakeCv.wait_for(lock, poll, [&] { return !queue.empty(); });
    }
    lock.unlock();
    stopHeartbeat();
    if (weInitialized) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Finalize();
    }
  }

  // Engine thread, `lock` held on entry and exit (released around MPI calls).
  void tickHeartbeat(std::unique_lock<std::mutex> &lock) {
    Heartbeat &b = *beat;
    const double now = steadySeconds();
    const int64_t progress = b.progress;
    lock.unlock();
    std::vector<std::pair<int, int64_t>> heard;
    for (int p = 0; p < b.size; ++p) {
      int flag = 0;
      if (p == b.rank || b.recvs[p] == MPI_REQUEST_NULL ||
          MPI_Test(&b.recvs[p], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
        continue;
      heard.emplace_back(p, b.recvBuf[p]);
      MPI_Irecv(&b.recvBuf[p], 1, MPI_INT64_T, p, 0, b.comm, &b.recvs[p]);
    }
    const bool beatNow = now >= b.nextBeat;
    if (beatNow) {
      b.nextBeat = now + Heartbeat::kBeatSeconds;
      for (int p = 0; p < b.size; ++p) {
        int flag = 1;
        if (p == b.rank)
          continue;
        if (b.sends[p] != MPI_REQUEST_NULL)
          MPI_Test(&b.sends[p], &flag, MPI_STATUS_IGNORE);
        if (!flag)
          continue; // the last beat to p has not left (p stopped reading)
        b.sendBuf[p] = progress;
        MPI_Isend(&b.sendBuf[p], 1, MPI_INT64_T, p, 0, b.comm, &b.sends[p]);
      }
    }
    lock.lock();
    for (auto [p, value] : heard) {
      b.peerProgress[p] = value;
      b.heardAt[p] = now;
    }
  }

  // Engine thread, at exit: nothing left pending before MPI_Finalize.
  void stopHeartbeat() {
    std::unique_ptr<Heartbeat> b;
    {
      std::lock_guard<std::mutex> lock(mu);
      b = std::move(beat);
    }
    if (!b)
      return;
    for (std::vector<MPI_Request> *reqs : {&b->recvs, &b->sends})
      for (MPI_Request &r : *reqs)
        if (r != MPI_REQUEST_NULL) {
          MPI_Cancel(&r);
          MPI_Request_free(&r);
        }
    MPI_Comm_free(&b->comm);
  }

  std::unique_ptr<Heartbeat> beat; // guarded by mu; its MPI state: the engine thread's
  bool beatStarting = false;
  double nextTick = 0; // the engine thread's
  std::mutex mu;
  std::condition_variable wakeCv, doneCv;
  std::deque<std::shared_ptr<MpiOp>> queue;
  bool stopping = false;
  bool initialized = false;
  Status initStatus;
  bool weInitialized = false; // only the engine thread touches it
  std::chrono::microseconds poll{50};
  std::thread thread;
};

class MpiRequest final : public CommRequest {
public:
  explicit MpiRequest(std::shared_ptr<MpiOp> op) : op(std::move(op)) {}
  ~MpiRequest() override { wait(); }
  Status wait() override { return MpiEngine::get().wait(*op); }
  bool test() override { return MpiEngine::get().test(*op); }
  double completedAt() const override { return op->doneAt; }

private:
  std::shared_ptr<MpiOp> op;
};

Status tooLarge(const char *what, size_t count) {
  return Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                       std::string("mpi ") + what + ": count " + std::to_string(count) +
                           " exceeds MPI's int range");
}

class MpiBackend final : public CommBackend {
public:
  MpiBackend(MPI_Comm comm, int rank, int size) : comm(comm), rank_(rank), size_(size) {}

  ~MpiBackend() override {
    MpiEngine &engine = MpiEngine::get();
    if (engine.isStopping())
      return; // MPI is finalized (or about to be) at exit; nothing to free
    MPI_Comm c = comm;
    engine.run("MPI_Comm_free", [c]() mutable {
      int rc = MPI_Comm_free(&c);
      return rc == MPI_SUCCESS ? Status::success() : mpiError("MPI_Comm_free", rc);
    });
  }

  std::string_view name() const override { return "mpi"; }
  // From the failing thread, not the engine's: the engine may be the one
  // stuck. MPI_Abort is the last call this process makes.
  void abortGroup(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void setProgress(int64_t progress) override {
    MpiEngine::get().setProgress(comm, progress);
  }
  bool peerStatus(int peer, int64_t &progress, double &secondsAgo) const override {
    return MpiEngine::get().peerStatus(peer, progress, secondsAgo);
  }

  CommRequestPtr iallReduce(float *data, size_t n, ReduceOp op) override {
    if (n > static_cast<size_t>(INT_MAX))
      return completedRequest(tooLarge("allreduce", n));
    MPI_Comm c = comm;
    std::function<void()> finish;
    if (op == ReduceOp::Average && size_ > 1)
      finish = [data, n, p = static_cast<float>(size_)] {
        for (size_t i = 0; i < n; ++i)
          data[i] /= p;
      };
    return wrap(MpiEngine::get().submit(
        "MPI_Iallreduce",
        [=](MPI_Request *request) {
          int rc = MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, c,
                                  request);
          return rc == MPI_SUCCESS ? Status::success() : mpiError("MPI_Iallreduce", rc);
        },
        std::move(finish)));
  }

  CommRequestPtr iallGather(const void *send, size_t bytesPerRank, void *recv) override {
    if (bytesPerRank > static_cast<size_t>(INT_MAX))
      return completedRequest(tooLarge("allgather", bytesPerRank));
    MPI_Comm c = comm;
    return wrap(MpiEngine::get().submit("MPI_Iallgather", [=](MPI_Request *request) {
      const int count = static_cast<int>(bytesPerRank);
      int rc = MPI_Iallgather(send, count, MPI_BYTE, recv, count, MPI_BYTE, c, request);
      return rc == MPI_SUCCESS ? Status::success() : mpiError("MPI_Iallgather", rc);
    }));
  }

  CommRequestPtr ibroadcast(void *data, size_t bytes, int root) override {
    if (bytes > static_cast<size_t>(INT_MAX))
      return completedRequest(tooLarge("broadcast", bytes));
    if (root < 0 || root >= size_)
      return completedRequest(Status::error(
          MGSRT_ERROR_INVALID_ARGUMENT, "mpi broadcast: root " + std::to_string(root) +
                                            " is outside [0, " + std::to_string(size_) + ")"));
    MPI_Comm c = comm;
    return wrap(MpiEngine::get().submit("MPI_Ibcast", [=](MPI_Request *request) {
      int rc = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, c, request);
      return rc == MPI_SUCCESS ? Status::success() : mpiError("MPI_Ibcast", rc);
    }));
  }

  CommRequestPtr ibarrier() override {
    MPI_Comm c = comm;
    return wrap(MpiEngine::get().submit("MPI_Ibarrier", [=](MPI_Request *request) {
      int rc = MPI_Ibarrier(c, request);
      return rc == MPI_SUCCESS ? Status::success() : mpiError("MPI_Ibarrier", rc);
    }));
  }

  /// The task runs on the engine thread, in submission order; its
  /// blocking waits poll (sendRecv), so it holds up the engine's other
  /// requests no longer than it runs.
  CommRequestPtr startTask(const char *what, std::function<Status()> task) override {
    return wrap(MpiEngine::get().submit(what, [task = std::move(task)](MPI_Request *) {
      try {
        return task();
      } catch (const std::bad_alloc &) {
        return Status::error(MGSRT_ERROR_OUT_OF_MEMORY, "mpi task: out of memory");
      }
    }));
  }

  /// On the engine thread (a task): MPI_Isend, then MPI_Iprobe until the
  /// message from `source` is there, MPI_Recv, and MPI_Test until the send
  /// is done, sleeping the poll interval between tries so that no core spins.
  Status sendRecv(int dest, const std::vector<char> &send, int source,
                  std::vector<char> &recv) override {
    if (send.size() > static_cast<size_t>(INT_MAX))
      return tooLarge("sendRecv", send.size());
    const std::chrono::microseconds poll = MpiEngine::get().pollInterval();
    auto pause = [&] {
      if (poll.count() > 0)
        std::this_thread::sleep_for(poll);
    };
    MPI_Request sent = MPI_REQUEST_NULL;
    int rc;
    if (dest >= 0 && (rc = MPI_Isend(send.data(), static_cast<int>(send.size()), MPI_BYTE, dest,
                                     kMessageTag, comm, &sent)) != MPI_SUCCESS)
      return mpiError("MPI_Isend", rc);
    if (source >= 0) {
      MPI_Status status;
      int flag = 0;
      for (;;) {
        if ((rc = MPI_Iprobe(source, kMessageTag, comm, &flag, &status)) != MPI_SUCCESS)
          return mpiError("MPI_Iprobe", rc);
        if (flag)
          break;
        pause();
      }
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      recv.resize(bytes);
      if ((rc = MPI_Recv(recv.data(), bytes, MPI_BYTE, source, kMessageTag, comm,
                         MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return mpiError("MPI_Recv", rc);
    }
    for (int done = 0; !done;) {
      if ((rc = MPI_Test(&sent, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return mpiError("MPI_Test", rc);
      if (!done)
        pause();
    }
    return Status::success();
  }

private:
  /// The tag of the point-to-point messages (the collectives use none).
  static constexpr int kMessageTag = 4711;

  static CommRequestPtr wrap(std::shared_ptr<MpiOp> op) {
    return std::make_unique<MpiRequest>(std::move(op));
  }

  MPI_Comm comm;
  int rank_, size_;
};

} // namespace

Status createMpiBackend(const CommConfig &, std::unique_ptr<CommBackend> &out) {
  MpiEngine &engine = MpiEngine::get();
  if (Status s = engine.ready(); !s.ok())
    return s;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 0;
  Status s = engine.run("communicator setup", [&]() -> Status {
    // Duplicate MPI_COMM_WORLD with errors returned (not fatal), leaving the
    // world's own handler as the application set it.
    MPI_Errhandler worldHandler;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &worldHandler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, worldHandler);
    MPI_Errhandler_free(&worldHandler);
    if (rc != MPI_SUCCESS)
      return mpiError("MPI_Comm_dup", rc);
    if ((rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
      return mpiError("MPI_Comm_set_errhandler", rc);
    if ((rc = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
      return mpiError("MPI_Comm_rank", rc);
    if ((rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS)
      return mpiError("MPI_Comm_size", rc);
    return Status::success();
  });
  if (!s.ok())
    return s;
  out = std::make_unique<MpiBackend>(comm, rank, size);
  return Status::success();
}

} // namespace mgs::rt
