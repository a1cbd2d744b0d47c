//===- CommChecks.h - Checks every collective makes (internal) --*- C++ -*-===//
//
// The slot, communicator, descriptor and buffer checks of the collective
// kernels, with their messages, shared by the CPU collectives (CommCAPI.cpp),
// NCCL's (NCCL/NcclCollectives.cpp) and the GPU's staged ones
// (Kernels/CUDA/StagedComm.cpp), the sparse collectives' included.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_COMMCHECKS_H
#define MGSRT_COMM_COMMCHECKS_H

#include "Comm/CommCAPI.h"
#include "Comm/WireValues.h"
#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <limits>

namespace mgs::rt {

inline bool validSlot(int64_t slot) { return slot >= 0 && slot < MGSRT_COMM_MAX_SLOTS; }

inline mgsrt_status_t badSlot(mgsrt_ctx_t *ctx, const char *kernel, int64_t slot) {
  return invalidArg(ctx, kernel, "slot ", slot, " is outside [0, ", MGSRT_COMM_MAX_SLOTS, ")");
}

inline mgsrt_status_t noComm(mgsrt_ctx_t *ctx, const char *kernel) {
  return invalidArg(ctx, kernel, "the context has no communicator (mgsrt_ctx_set_comm)");
}

inline mgsrt_status_t slotBusy(mgsrt_ctx_t *ctx, const char *kernel, int64_t slot) {
  return invalidArg(ctx, kernel, "slot ", slot,
                    " already has a pending collective (started again before mgsrt_comm_wait)");
}

inline mgsrt_status_t slotIdle(mgsrt_ctx_t *ctx, const char *kernel, int64_t slot) {
  return invalidArg(ctx, kernel, "slot ", slot,
                    " has no pending collective (a wait without a start)");
}

/// allgather_start's values format (its descriptor's values field,
/// MGSRT_VALUES_*) as `wire`, and its buffers for k entries per rank over P
/// ranks (values, indices, recv_values, recv_indices). Returns false after
/// recording the error.
inline bool checkAllgather(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc, int64_t k,
                           int P, void *const *bufs, WireValues &wire) {
  const int64_t v = desc[mgs::contract::AllGatherDesc::Values];
  if (v != MGSRT_VALUES_F32 && v != MGSRT_VALUES_F16 && v != MGSRT_VALUES_BF16)
    return invalidArg(ctx, kernel, "values format ", v, " is not ", int(MGSRT_VALUES_F32),
                      " (float32), ", int(MGSRT_VALUES_F16), " (IEEE half) or ",
                      int(MGSRT_VALUES_BF16), " (bfloat16)"),
           false;
  wire = static_cast<WireValues>(v);
  if (k > std::numeric_limits<int64_t>::max() / 8 / P)
    return invalidArg(ctx, kernel, "k = ", k, " is too large for ", P, " ranks"), false;
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "values", k)
      .require(1, "indices", k)
      .require(2, "recv_values", P * k)
      .require(3, "recv_indices", P * k)
      .ok;
}

/// allreduce_start's element count and buffer. Returns false after
/// recording the error.
inline bool checkAllreduce(mgsrt_ctx_t *ctx, const char *kernel, int64_t n, void *const *bufs) {
  if (n < 0)
    return invalidArg(ctx, kernel, "element count ", n, " is negative"), false;
  return BufferCheck(ctx, kernel, bufs).require(0, "data", n).ok;
}

/// broadcast's byte count, root and buffer, against the context's
/// communicator (every backend's group has its ranks). Returns false after
/// recording the error.
inline bool checkBroadcast(mgsrt_ctx_t *ctx, const char *kernel, int64_t bytes, int64_t root,
                           void *const *bufs) {
  if (bytes < 0)
    return invalidArg(ctx, kernel, "byte count ", bytes, " is negative"), false;
  if (!ctx->comm)
    return noComm(ctx, kernel), false;
  const int P = ctx->comm->backend->size();
  if (root < 0 || root >= P)
    return invalidArg(ctx, kernel, "root ", root, " is outside [0, ", P, ")"), false;
  return BufferCheck(ctx, kernel, bufs).require(0, "data", bytes).ok;
}

/// gtopk_start's and sparse_allreduce_start's k and element count
/// (0 <= k <= n < 2^31). Returns false after recording the error.
inline bool checkSparseCounts(mgsrt_ctx_t *ctx, const char *kernel, int64_t k, int64_t n) {
  if (k < 0)
    return invalidArg(ctx, kernel, "k = ", k, " is negative"), false;
  if (n < 0 || n > std::numeric_limits<int32_t>::max())
    return invalidArg(ctx, kernel, "element count ", n, " is outside [0, 2^31)"), false;
  if (k > n)
    return invalidArg(ctx, kernel, "k = ", k, " exceeds the element count ", n), false;
  return true;
}

/// gtopk_start's residual (n) and outputs (k values, k indices). Returns
/// false after recording the error.
inline bool checkGTopKOutputs(mgsrt_ctx_t *ctx, const char *kernel, int64_t k, int64_t n,
                              void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(2, "residual", n)
      .require(3, "out_values", k)
      .require(4, "out_indices", k)
      .ok;
}

/// The k entries (values, indices) both sparse collectives send. Returns
/// false after recording the error.
inline bool checkSparseEntries(mgsrt_ctx_t *ctx, const char *kernel, int64_t k,
                               void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs).require(0, "values", k).require(1, "indices", k).ok;
}

} // namespace mgs::rt

#endif // MGSRT_COMM_COMMCHECKS_H
