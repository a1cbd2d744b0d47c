//===- SmallGemm.h - One thread's GEMM of matrices of 32 x 32 or less -*- C++ -*-===//
//
// Windowed attention (Swin's windows of 16 tokens and heads of 24 or 32
// channels) runs thousands of GEMMs of 16 x 24 x 16 a step. dnnl_sgemm spends
// more on each call than on its arithmetic there (0.45 us for 6 K
// multiply-adds: 27 GFLOP/s on 2 AVX2 cores), so these run here instead: an
// operand copied only when it is transposed or its rows are not whole vectors,
// a block of C's rows kept in registers, and the products summed in k's order.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_SMALLGEMM_H
#define MGSRT_KERNELS_CPU_SMALLGEMM_H

#include <cstdint>

namespace mgs::rt::cpu {

/// The largest m, n and k smallGemm takes.
inline constexpr int64_t kSmallGemmMax = 32;

/// Whether smallGemm takes an m x n x k product.
inline bool isSmallGemm(int64_t m, int64_t n, int64_t k) {
  return m >= 1 && n >= 1 && k >= 1 && m <= kSmallGemmMax && n <= kSmallGemmMax &&
         k <= kSmallGemmMax;
}

/// C = op(A) op(B) + beta C on the calling thread, as sgemm with alpha 1: op(A)
/// is m x k (A stored k x m, rows of lda, when ta), op(B) k x n (B stored n x
/// k when tb), C m x n in rows of ldc. C is not read when beta is 0. Needs
/// isSmallGemm(m, n, k).
void smallGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_SMALLGEMM_H
