//===- Softmax.cu - softmax and the loss ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(softmax_fwd)
MGSRT_CUDA_UNIMPLEMENTED(softmax_bwd)
MGSRT_CUDA_UNIMPLEMENTED(softmax_cross_entropy)
