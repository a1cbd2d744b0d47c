//===- StagedComm.h - A GPU context's collectives over MPI (internal) -*- C++ -*-===//
//
// The device table's allreduce_start, allgather_start, gtopk_start,
// sparse_allreduce_start, comm_wait and broadcast for a context with
// mgsrt_ctx_set_staged_comm(ctx, 1): the
// collectives run on the context's communicator's own backend (mpi),
// through Comm/StagedCollectives.h with a CUDA copy engine (StagedComm.cpp).
// NcclCollectives.cpp's entries hand such a context here.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CUDA_STAGEDCOMM_H
#define MGSRT_KERNELS_CUDA_STAGEDCOMM_H

#include "Support/Common.h"

namespace mgs::rt::cuda {

mgsrt_status_t stagedAllreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
mgsrt_status_t stagedAllgatherStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
mgsrt_status_t stagedGtopkStart(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
mgsrt_status_t stagedSparseAllreduceStart(mgsrt_ctx_t *ctx, const int64_t *desc,
                                          void *const *bufs);
mgsrt_status_t stagedWait(mgsrt_ctx_t *ctx, const int64_t *desc);
mgsrt_status_t stagedBroadcast(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
/// With a sticky error: completes the slot's pending collective, if any (its
/// buffers become free), ignoring its status.
void stagedRelease(mgsrt_ctx_t *ctx, int64_t slot);

} // namespace mgs::rt::cuda

#endif // MGSRT_KERNELS_CUDA_STAGEDCOMM_H
