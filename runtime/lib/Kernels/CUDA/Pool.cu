//===- Pool.cu - pooling ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(pool_fwd)
MGSRT_CUDA_UNIMPLEMENTED(pool_bwd)
