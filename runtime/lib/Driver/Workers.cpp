//===- Workers.cpp - Data-parallel workers --------------------------------===//
//
// The workers' communicator (MPI under mpirun, else loopback for a model
// with collectives), each worker's share of the cores and its dropout
// stream, and the broadcast of rank 0's parameters at the start.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "mgsrt/contract.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <sched.h>
#include <thread>

namespace mgs::rt::driver {

// Launched by mpirun (OpenMPI's or a PMI launcher's environment), the
// workers are MPI's ranks; otherwise there is one worker. Only rank 0 prints
// progress and writes files.
int Driver::setupWorkers() {
  bool underMpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE");
  const bool calibrating = !o.calibrate.empty();
  if (!underMpi && m.collectives == 0 && !calibrating)
    return 0;
  char message[512] = "";
  if (mgsrt_comm_create(underMpi ? "mpi" : "loopback", &comm, message, sizeof message) !=
      MGSRT_OK)
    return error("cannot start the workers' communication: %s", message);
  if (mgsrt_ctx_set_comm(ctx, comm) != MGSRT_OK)
    return error("%s", mgsrt_ctx_message(ctx));
  // --comm mpi: the GPU's collectives over this communicator, through host memory.
  if (m.cuda && o.comm == DeviceComm::Mpi && mgsrt_ctx_set_staged_comm(ctx, 1) != MGSRT_OK)
    return error("--comm mpi: %s", mgsrt_ctx_message(ctx));
  rank = mgsrt_comm_rank(comm);
  workers = mgsrt_comm_size(comm);
  // Each worker draws its own dropout masks (its checkpoint keeps its stream).
  if (rank != 0)
    mgsrt_ctx_set_rng_state(ctx, mgsrt_ctx_rng_state(ctx) + 0x9E3779B97F4A7C15ull *
                                                               static_cast<uint64_t>(rank));
  // The same model and job size on every worker: said once, no abort.
  if (workers > 1 && m.collectives == 0 && !calibrating)
    return errorOnEveryWorker("launched as " + std::to_string(workers) +
                              " workers, but the model was compiled for one process, without "
                              "gradient communication; compile it with mgsc --strategy dense "
                              "(or another strategy)");
  if (m.workers > 0 && workers != m.workers)
    return errorOnEveryWorker("launched as " + std::to_string(workers) +
                              " workers, but the model's sparse exchange was compiled for " +
                              std::to_string(m.workers) + " (mgsc --workers)");
  // Several workers on one host share its cores: unless told otherwise
  // (OMP_NUM_THREADS), each takes its share. OpenMP's default of one thread
  // per core in every process makes their spinning threads fight for the
  // cores (4 ranks on 2 cores trained 100x slower).
  if (workers > 1 && !std::getenv("OMP_NUM_THREADS")) {
    int local = workers;
    if (const char *v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); v && std::atoi(v) > 0)
      local = std::atoi(v);
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    threadsPerWorker = std::max(1, static_cast<int>(cores) / local);
    // mpirun may have bound this rank to fewer cores (Open MPI binds each of
    // two ranks to one core): no more threads than those.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      threadsPerWorker = std::max(1, std::min(threadsPerWorker, CPU_COUNT(&allowed)));
    omp_set_num_threads(threadsPerWorker);
  }
  if (rank != 0 && !std::freopen("/dev/null", "w", stdout))
    return error("cannot silence the output of worker %d", rank);
  return 0;
}

// Every worker starts from rank 0's parameters and velocities.
int Driver::broadcastParams() {
  if (workers == 1)
    return 0;
  auto broadcast = [&](Buffer &b, int64_t elements) {
    int64_t desc[contract::BroadcastDesc::Size] = {};
    desc[contract::BroadcastDesc::Bytes] = elements * static_cast<int64_t>(sizeof(float));
    desc[contract::BroadcastDesc::Root] = 0;
    void *bufs[1] = {b.io()};
    return mgsrt_broadcast(ctx, desc, bufs) == MGSRT_OK;
  };
  size_t v = 0;
  for (size_t i = 0; i < m.params.size(); ++i) {
    // Error-feedback residuals and accumulators are each worker's own (zero
    // at the start, the worker's checkpoint on resume).
    const bool own = contract::manifest::isWorkerStateName(m.params[i].name);
    if ((!own && !broadcast(params[i], m.params[i].numElements())) ||
        (m.params[i].trainable && !broadcast(velocities[v++], m.params[i].numElements())))
      return error("broadcasting the parameters: %s", mgsrt_ctx_message(ctx));
  }
  return 0;
}

// One allgather of a few int32 a worker (the request slot 0 is free between
// steps): on a GPU through device copies made once.
int Driver::gatherFromWorkers(const std::vector<int32_t> &mine, std::vector<int32_t> &all) {
  const size_t k = mine.size();
  if (workers == 1 || !comm) {
    all = mine;
    return 0;
  }
  if (k == 0 || k > kMaxGather)
    return error("internal error: gathering %zu values from the workers", k);
  if (!gatherBufs[0].get()) {
    const uint64_t bytes[4] = {kMaxGather * sizeof(float), kMaxGather * sizeof(int32_t),
                               kMaxGather * workers * sizeof(float),
                               kMaxGather * workers * sizeof(int32_t)};
    for (int b = 0; b < 4; ++b) {
      if (!gatherBufs[b].allocate(bytes[b]))
        return error("out of memory gathering from the workers");
      if (m.cuda)
        if (int rc = mirror(gatherBufs[b], "the workers' agreement"))
          return rc;
    }
  }
  std::memcpy(gatherBufs[1].get(), mine.data(), k * sizeof(int32_t));
  if (int rc = toDevice(gatherBufs[1]))
    return rc;
  int64_t desc[contract::AllGatherDesc::Size] = {};
  desc[contract::AllGatherDesc::K] = static_cast<int64_t>(k);
  int64_t wait[contract::WaitDesc::Size] = {};
  void *bufs[4] = {gatherBufs[0].io(), gatherBufs[1].io(), gatherBufs[2].io(),
                   gatherBufs[3].io()};
  if (mgsrt_allgather_start(ctx, desc, bufs) != MGSRT_OK ||
      mgsrt_comm_wait(ctx, wait, nullptr) != MGSRT_OK)
    return error("agreeing with the other workers: %s", mgsrt_ctx_message(ctx));
  if (int rc = toHost(gatherBufs[3]))
    return rc;
  const int32_t *got = static_cast<const int32_t *>(gatherBufs[3].get());
  all.assign(got, got + k * static_cast<size_t>(workers));
  return 0;
}

} // namespace mgs::rt::driver
