//===- BackendRegistry.cpp - Communication backends by name ---------------===//
//
// Every backend built is listed here, once (IREE's
// iree_hal_register_all_available_drivers). MPI is always built; a NCCL
// backend would be added under #if MGS_ENABLE_NCCL.
//
//===----------------------------------------------------------------------===//

#include "Comm/CommBackend.h"
#include "Comm/Loopback/LoopbackBackend.h"
#include "Comm/MPI/MpiBackend.h"

namespace mgs::rt {

namespace {

struct BackendEntry {
  const char *name;
  Status (*create)(const CommConfig &, std::unique_ptr<CommBackend> &);
};

const BackendEntry kBackends[] = {
    {"loopback", createLoopbackBackend},
    {"mpi", createMpiBackend},
};

} // namespace

Status createCommBackend(std::string_view name, const CommConfig &config,
                         std::unique_ptr<CommBackend> &out) {
  out.reset();
  for (const BackendEntry &b : kBackends)
    if (name == b.name)
      return b.create(config, out);
  std::string known;
  for (const BackendEntry &b : kBackends)
    known += std::string(known.empty() ? "" : ", ") + b.name;
  return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, "unknown communication backend '" +
                                                         std::string(name) + "' (known: " +
                                                         known + ")");
}

std::vector<std::string> commBackendNames() {
  std::vector<std::string> names;
  for (const BackendEntry &b : kBackends)
    names.push_back(b.name);
  return names;
}

} // namespace mgs::rt
