//===- Gemm.cpp - Gemm and MatMul on cuBLAS ===//

#include "Device.h"

MGSRT_CUDA_UNIMPLEMENTED(gemm_fwd)
MGSRT_CUDA_UNIMPLEMENTED(gemm_bwd)
MGSRT_CUDA_UNIMPLEMENTED(matmul_fwd)
MGSRT_CUDA_UNIMPLEMENTED(matmul_bwd)
