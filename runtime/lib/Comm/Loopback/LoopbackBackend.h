//===- LoopbackBackend.h - N ranks as threads of one process ----*- C++ -*-===//
//
// A loopback group is a rendezvous shared by the backends of its ranks, one
// per thread. The rank that starts a collective last performs it (summing in
// rank order, so every rank gets the same bits) and completes it for all, so
// a start never waits for the other ranks and a wait only waits until every
// rank has started the collective. Ranks that disagree on a collective's
// kind, size, operation or root all get an MGSRT_ERROR_INVALID_ARGUMENT
// naming the disagreement.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_LOOPBACK_LOOPBACKBACKEND_H
#define MGSRT_COMM_LOOPBACK_LOOPBACKBACKEND_H

#include "Comm/CommBackend.h"

namespace mgs::rt {

/// The rendezvous of an in-process group of `size` ranks: create backends
/// for ranks 0 .. size-1 with it (CommConfig::loopbackGroup/loopbackRank)
/// and use each from its own thread.
std::shared_ptr<LoopbackGroup> createLoopbackGroup(int size);

Status createLoopbackBackend(const CommConfig &config, std::unique_ptr<CommBackend> &out);

} // namespace mgs::rt

#endif // MGSRT_COMM_LOOPBACK_LOOPBACKBACKEND_H
