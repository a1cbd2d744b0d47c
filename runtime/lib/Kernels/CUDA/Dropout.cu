//===- Dropout.cu - dropout ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(dropout_fwd)
MGSRT_CUDA_UNIMPLEMENTED(dropout_bwd)
