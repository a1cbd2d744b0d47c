//===- CommCAPI.h - The C handle of a communicator (internal) ---*- C++ -*-===//

#ifndef MGSRT_COMM_COMMCAPI_H
#define MGSRT_COMM_COMMCAPI_H

#include "Comm/CommBackend.h"

struct mgsrt_comm {
  std::unique_ptr<mgs::rt::CommBackend> backend;
};

namespace mgs::rt {

/// Wraps a backend in a C handle (freed by mgsrt_comm_destroy); tests use it
/// for loopback groups of several ranks, which mgsrt_comm_create cannot make.
inline mgsrt_comm_t *wrapCommBackend(std::unique_ptr<CommBackend> backend) {
  return new mgsrt_comm{std::move(backend)};
}

} // namespace mgs::rt

#endif // MGSRT_COMM_COMMCAPI_H
