//===- MpiBackend.h - Collectives over MPI ----------------------*- C++ -*-===//
//
// The "mpi" backend: MPI_COMM_WORLD duplicated, MPI_ERRORS_RETURN on it, and
// nonblocking MPI_Iallreduce / MPI_Iallgather / MPI_Ibcast / MPI_Ibarrier.
// Every MPI call of the process is made by one communication thread (the
// engine), which starts the collectives it is handed and tests the pending
// ones every MGSRT_MPI_POLL_US microseconds (default 50), sleeping when none
// is pending; so collectives progress while the caller computes, without an
// MPI call on the caller's thread. If MPI is not initialized, the engine
// initializes it (MPI_Init_thread, MPI_THREAD_FUNNELED: the engine is MPI's
// main thread) and finalizes it at exit; an application that initialized
// MPI itself must have asked for MPI_THREAD_SERIALIZED or more.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_MPI_MPIBACKEND_H
#define MGSRT_COMM_MPI_MPIBACKEND_H

#include "Comm/CommBackend.h"

namespace mgs::rt {

Status createMpiBackend(const CommConfig &config, std::unique_ptr<CommBackend> &out);

} // namespace mgs::rt

#endif // MGSRT_COMM_MPI_MPIBACKEND_H
