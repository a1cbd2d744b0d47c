//===- Stop.cpp - Checkpoints within an epoch, a stop on a signal ---------===//
//
// A long run loses at most --checkpoint-every's iterations or seconds to a
// crash, and a run that is asked to stop (a cluster's preemption: SLURM and
// Kubernetes send SIGTERM, then SIGKILL after a grace period; SLURM's
// --signal=USR1@T sends SIGUSR1 T seconds before the end; Ctrl-C) finishes
// the step under way, writes its checkpoint and exits with 128 + the signal
// (a second signal, a second or more after the first, ends it at once),
// so that --resume goes on from that iteration as if the run had not
// stopped. Several workers decide together after every step (one allgather
// of two int32): a signal that reached one of them, or a checkpoint one of
// them finds due by its clock, holds for all, at the same iteration.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "FileIO.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <unistd.h>

namespace mgs::rt::driver {

namespace {

/// The first stop signal received (0: none) and when (CLOCK_MONOTONIC, ns).
/// Lock-free atomics: the handler may run on any of the process's threads,
/// two at once for a signal delivered twice.
std::atomic<int> stopSignal{0};
std::atomic<int64_t> stopSignalAt{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
              "the signal handler's atomics must be lock-free");
/// Whether the handler says what it will do (rank 0 alone: every worker of
/// an mpirun job gets the signal), and whether the run is past its last
/// step (its final evaluation and saves: it ends anyway).
std::atomic<bool> sayOnSignal{true}, finishing{false};

const char *signalName(int signal) {
  return signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "SIGUSR1";
}

int64_t monotonicNs() {
  timespec now = {};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

void say(const char *text) {
  ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

// Only async-signal-safe calls here (clock_gettime, write, signal, raise,
// lock-free atomics).
extern "C" void onStopSignal(int signal) {
  const int64_t now = monotonicNs();
  int none = 0;
  if (stopSignal.compare_exchange_strong(none, -1)) { // claimed: the first
    stopSignalAt.store(now);
    stopSignal.store(signal);
    if (!sayOnSignal.load())
      return;
    say(signalName(signal));
    say(finishing.load() ? ": the run is finishing (its last step is done)\n"
                         : ": stopping after this step to write the checkpoint (a second signal "
                           "stops at once)\n");
    return;
  }
  // Another within a second is the same request delivered twice (timeout(1)
  // sends it to its command, then to its process group); later, a second
  // request: the signal's default action, at once.
  const int64_t first = stopSignalAt.load();
  if (first == 0 || now - first < 1000000000)
    return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

/// Tests: MGSRT_FAULT_SIGNAL="I[:R[:S]]" sends signal S (default SIGTERM; 9
/// is SIGKILL, a crash) to worker R (default, or -1: every worker) after
/// iteration I, as a scheduler would; 0: none.
int faultSignalAt(uint64_t iteration, int rank) {
  const char *fault = std::getenv("MGSRT_FAULT_SIGNAL");
  unsigned long long at = 0;
  int onRank = -1, signal = SIGTERM;
  if (!fault || std::sscanf(fault, "%llu:%d:%d", &at, &onRank, &signal) < 1)
    return 0;
  return at == iteration && (onRank < 0 || onRank == rank) ? signal : 0;
}

} // namespace

void Driver::installStopHandlers() {
  if (o.checkpoint.empty())
    return; // no checkpoint to write: a signal's default action, at once
  sayOnSignal = rank == 0;
  lastCheckpoint = std::chrono::steady_clock::now(); // --checkpoint-every's seconds from here
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask); // one handler at a time
  for (int signal : {SIGTERM, SIGINT, SIGUSR1})
    sigaddset(&action.sa_mask, signal);
  for (int signal : {SIGTERM, SIGINT, SIGUSR1})
    sigaction(signal, &action, nullptr);
}

void Driver::noteFinishing() { finishing = true; }

int Driver::pollStop(uint64_t iteration, bool &checkpointDue, int &signal) {
  if (int fault = faultSignalAt(iteration, rank))
    std::raise(fault);
  checkpointDue =
      (o.checkpointEveryIters > 0 &&
       iteration % static_cast<uint64_t>(o.checkpointEveryIters) == 0) ||
      (o.checkpointEverySeconds > 0 &&
       std::chrono::duration<double>(std::chrono::steady_clock::now() - lastCheckpoint).count() >=
           o.checkpointEverySeconds);
  signal = std::max(stopSignal.load(), 0);
  if (workers == 1)
    return 0;
  std::vector<int32_t> all;
  if (int rc = gatherFromWorkers({signal, checkpointDue ? 1 : 0}, all))
    return rc;
  signalledWorkers = 0;
  for (int r = 0; r < workers; ++r) {
    if (signal == 0)
      signal = all[2 * r];
    signalledWorkers += all[2 * r] != 0;
    checkpointDue = checkpointDue || all[2 * r + 1];
  }
  return 0;
}

int Driver::chooseResume() {
  if (!o.autoResume)
    return 0;
  const bool mine = isRegularFile(rankPath(o.checkpoint));
  std::vector<int32_t> all;
  if (int rc = gatherFromWorkers({mine ? 1 : 0}, all))
    return rc;
  std::string with, without;
  for (int r = 0; r < workers; ++r) {
    std::string &list = all[r] ? with : without;
    list += (list.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!with.empty() && !without.empty())
    return errorOnEveryWorker("--auto-resume: the checkpoint '" + o.checkpoint +
                              "' has the files of worker(s) " + with + " but not of " + without +
                              " (written by fewer workers? each resumes from its own, "
                              "<file>.rank<r>); resume as it was written, or remove them to start "
                              "anew");
  if (without.empty())
    o.resume = o.checkpoint;
  else
    std::printf("no checkpoint '%s' yet: a new run (--auto-resume)\n", o.checkpoint.c_str());
  return 0;
}

int Driver::stoppedBySignal(int signal, int64_t epochsDone, int64_t itersIntoEpoch) {
  char where[96];
  if (itersIntoEpoch > 0)
    std::snprintf(where, sizeof where, "in epoch %lld after iteration %lld of %lld",
                  static_cast<long long>(epochsDone + 1), static_cast<long long>(itersIntoEpoch),
                  static_cast<long long>(itersPerEpoch));
  else
    std::snprintf(where, sizeof where, "after epoch %lld", static_cast<long long>(epochsDone));
  std::string by = signalName(signal);
  if (workers > 1)
    by += " (received by " + std::to_string(signalledWorkers) + " of " + std::to_string(workers) +
          " workers)";
  std::printf("stopped by %s %s: the checkpoint '%s' holds the run; continue it with --resume "
              "%s\n",
              by.c_str(), where, o.checkpoint.c_str(), o.checkpoint.c_str());
  std::fflush(stdout);
  return 128 + signal;
}

} // namespace mgs::rt::driver
