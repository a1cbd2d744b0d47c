//===- Comm.cpp - collectives on NCCL ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(allreduce_start)
MGSRT_CUDA_UNIMPLEMENTED(allgather_start)
MGSRT_CUDA_UNIMPLEMENTED(comm_wait)
MGSRT_CUDA_UNIMPLEMENTED(broadcast)
