//===- CommChecks.h - Checks every collective makes (internal) --*- C++ -*-===//
//
// The slot and communicator checks of the collective kernels, with their
// messages, shared by the CPU collectives (CommCAPI.cpp) and NCCL's
// (NCCL/NcclCollectives.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_COMMCHECKS_H
#define MGSRT_COMM_COMMCHECKS_H

#include "Support/Common.h"

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

/// allgather_start's buffers for k entries per rank over P ranks (values,
/// indices, recv_values, recv_indices). Returns false after recording the error.
inline bool checkAllgather(mgsrt_ctx_t *ctx, const char *kernel, int64_t k, int P,
                           void *const *bufs) {
  if (k > std::numeric_limits<int64_t>::max() / 8 / P)
    return invalidArg(ctx, kernel, "k = ", k, " is too large for ", P, " ranks"), false;
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "values", k)
      .require(1, "indices", k)
      .require(2, "recv_values", P * k)
      .require(3, "recv_indices", P * k)
      .ok;
}

} // namespace mgs::rt

#endif // MGSRT_COMM_COMMCHECKS_H
