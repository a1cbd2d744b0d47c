//===- BackendRegistry.cpp - Communication backends by name ---------------===//
//
// Every backend built is listed here, once (IREE's
// iree_hal_register_all_available_drivers). MPI is always built; NCCL where
// the CUDA kernels are (MGSRT_WITH_NCCL), inside their library, which is
// loaded when a "nccl" backend is first asked for.
//
//===----------------------------------------------------------------------===//

#include "Comm/CommBackend.h"
#include "Comm/Loopback/LoopbackBackend.h"
#include "Comm/MPI/MpiBackend.h"
#include "Support/KernelList.h"

namespace mgs::rt {

namespace {

#ifdef MGSRT_WITH_NCCL
/// "nccl": NCCL lives in the CUDA library (lib/Comm/NCCL is compiled into
/// libmgsrt_cuda.so), so a program that never asks for it never loads CUDA.
Status createNcclThroughCudaLibrary(const CommConfig &config,
                                    std::unique_ptr<CommBackend> &out) {
  if (!config.ncclBootstrap)
    return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, kNcclNeedsBootstrap);
  const DeviceKernels *kernels = nullptr;
  if (Status s = loadCudaKernels(kernels); !s.ok())
    return Status::error(s.code, "nccl: " + s.message);
  return kernels->createNcclBackend(config, out);
}
#endif

struct BackendEntry {
  const char *name;
  Status (*create)(const CommConfig &, std::unique_ptr<CommBackend> &);
};

const BackendEntry kBackends[] = {
    {"loopback", createLoopbackBackend},
    {"mpi", createMpiBackend},
#ifdef MGSRT_WITH_NCCL
    {"nccl", createNcclThroughCudaLibrary},
#endif
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
