//===- Optimizer.cu - the SGD update ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(sgd_update)
