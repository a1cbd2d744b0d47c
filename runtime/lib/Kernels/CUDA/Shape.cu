//===- Shape.cu - shape kernels ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(transpose)
MGSRT_CUDA_UNIMPLEMENTED(concat)
MGSRT_CUDA_UNIMPLEMENTED(split)
MGSRT_CUDA_UNIMPLEMENTED(pad_fwd)
MGSRT_CUDA_UNIMPLEMENTED(pad_bwd)
