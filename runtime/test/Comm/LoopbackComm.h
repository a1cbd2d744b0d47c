//===- LoopbackComm.h - A rank of a loopback group as a C handle -*- C++ -*-===//
//
// For the tests that run several ranks as threads of one process: the
// conformance suites (CommConformance.h) and the GPU tests.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_TEST_COMM_LOOPBACKCOMM_H
#define MGSRT_TEST_COMM_LOOPBACKCOMM_H

#include "Comm/CommBackend.h"
#include "Comm/CommCAPI.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace mgsrt_comm_test {

/// Rank `rank` of the loopback `group` as a C handle, its waits giving up
/// after `timeout` (a broken test fails instead of hanging); null, with the
/// failure recorded, when it cannot be made.
inline mgsrt_comm_t *loopbackComm(const std::shared_ptr<mgs::rt::LoopbackGroup> &group, int rank,
                                  std::chrono::seconds timeout) {
  mgs::rt::CommConfig config;
  config.loopbackGroup = group;
  config.loopbackRank = rank;
  config.loopbackTimeout = timeout;
  std::unique_ptr<mgs::rt::CommBackend> backend;
  mgs::rt::Status s = mgs::rt::createCommBackend("loopback", config, backend);
  EXPECT_TRUE(s.ok()) << s.message;
  return s.ok() ? mgs::rt::wrapCommBackend(std::move(backend)) : nullptr;
}

} // namespace mgsrt_comm_test

#endif // MGSRT_TEST_COMM_LOOPBACKCOMM_H
