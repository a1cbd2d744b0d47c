//===- TopK.cu - top-k sparsification and scatter-add ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(topk_sparsify)
MGSRT_CUDA_UNIMPLEMENTED(scatter_add)
