//===- Norm.cu - batch normalization ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(batch_norm_fwd)
MGSRT_CUDA_UNIMPLEMENTED(batch_norm_bwd)
