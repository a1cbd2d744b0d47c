//===- Conv.cpp - convolutions on cuDNN ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(conv_fwd)
MGSRT_CUDA_UNIMPLEMENTED(conv_bwd_data)
MGSRT_CUDA_UNIMPLEMENTED(conv_bwd_weights)
