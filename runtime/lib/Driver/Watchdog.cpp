//===- Watchdog.cpp - Ending a job whose workers stopped making progress --===//
//
// With several workers, one that stops (SIGSTOP, a hung device or file
// system) leaves the others waiting in their next collective forever. The
// training loop marks its progress (every iteration, evaluation batch and
// checkpoint); a thread watches the marks, and when none came for --timeout
// seconds (the set-up, the first iteration, checkpoints and the final saves
// get kLongAllowance times that) it ends the job on every reachable worker
// (mgsrt_comm_abort) with an error naming the workers that did not arrive.
// Which those are, it learns from the communicator's heartbeat (every worker
// tells the others its progress a few times a second, from its communication
// thread): a silent worker is stopped; one that beats but is behind is slow.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace mgs::rt::driver {

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A peer silent for longer than this is taken to be stopped (its
/// heartbeat comes every 0.25 s).
constexpr double kSilentSeconds = 2.0;

} // namespace

void Driver::markProgress(const char *what, int64_t step, double allowance) {
  if (!watchdog.joinable())
    return;
  watchdogWhat.store(what);
  watchdogProgress.store(step);
  watchdogDeadlineNs.store(nowNs() + static_cast<int64_t>(allowance * o.timeout * 1e9));
  mgsrt_comm_set_progress(comm, watchdogProgress.load());
}

void Driver::startWatchdog() {
  if (workers == 1 || o.timeout <= 0 || watchdog.joinable())
    return;
  watchdogDeadlineNs.store(nowNs() + static_cast<int64_t>(kLongAllowance * o.timeout * 1e9));
  mgsrt_comm_set_progress(comm, 0);
  watchdog = std::thread([this] {
    std::unique_lock<std::mutex> lock(watchdogMutex);
    int64_t lastWake = nowNs();
    while (!watchdogStop) {
      watchdogCv.wait_for(lock, std::chrono::milliseconds(100));
      const int64_t now = nowNs();
      // This process itself was stopped (SIGSTOP, then SIGCONT): the others
      // were not late; give them the time afresh.
      if (now - lastWake > static_cast<int64_t>(kSilentSeconds * 1e9))
        watchdogDeadlineNs.store(now + static_cast<int64_t>(o.timeout * 1e9));
      lastWake = now;
      if (watchdogStop || now < watchdogDeadlineNs.load())
        continue;
      reportHang();
    }
  });
}

void Driver::stopWatchdog() {
  if (!watchdog.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(watchdogMutex);
    watchdogStop = true;
  }
  watchdogCv.notify_all();
  watchdog.join();
}

std::string Driver::describePeers(int64_t mine) {
  std::string stopped, behind;
  for (int r = 0; r < workers; ++r) {
    if (r == rank)
      continue;
    int64_t theirs = 0;
    double ago = 0;
    char text[96];
    if (!mgsrt_comm_peer_status(comm, r, &theirs, &ago)) {
      std::snprintf(text, sizeof text, "%d (never heard from)", r);
      stopped += (stopped.empty() ? "" : ", ") + std::string(text);
    } else if (ago > kSilentSeconds) {
      std::snprintf(text, sizeof text, "%d (silent for %.0f s, last at step %lld)", r, ago,
                    static_cast<long long>(theirs));
      stopped += (stopped.empty() ? "" : ", ") + std::string(text);
    } else if (theirs < mine) {
      std::snprintf(text, sizeof text, "%d (at step %lld)", r, static_cast<long long>(theirs));
      behind += (behind.empty() ? "" : ", ") + std::string(text);
    }
  }
  std::string who;
  if (!stopped.empty())
    who = "worker(s) " + stopped + " did not arrive: stopped or hung";
  if (!behind.empty())
    who += (who.empty() ? "" : "; ") + ("worker(s) " + behind + " are behind, still working");
  return who;
}

std::string Driver::peersNote() {
  if (workers <= 1 || !comm)
    return "";
  std::string who = describePeers(watchdogProgress.load());
  return who.empty() ? "" : "; " + who;
}

void Driver::reportHang() {
  const int64_t mine = watchdogProgress.load();
  std::string who = describePeers(mine);
  if (who.empty())
    who = "every other worker is alive at the same step (a collective that cannot complete?)";
  // From here on this thread's error is the one: the NCCL collectives it
  // aborts (mgsrt_comm_abort) fail the main thread's waits.
  watchdogEnding.store(true);
  error("no progress for %g s (--timeout) in %s, after step %lld: %s; ending the job", o.timeout,
        watchdogWhat.load(), static_cast<long long>(mine), who.c_str());
  // error() ended every process of the group; a group within one process
  // returns: nothing more can be done from here.
  std::_Exit(1);
}

} // namespace mgs::rt::driver
