//===- SmallGemm.cpp - One thread's GEMM of matrices of 32 x 32 or less ---===//
//
// C's rows in blocks of R (4, or 2 when a row is 3 or 4 vectors), each block's
// R x NV vectors of 8 floats held in registers while k's products add in
// order: op(B)'s row p is loaded once per block and multiplied by each row's
// op(A)(i, p). op(A) is read where it is unless transposed (then copied into
// rows of k); op(B) likewise unless transposed or its rows are not whole
// vectors (then copied into rows of whole vectors, zero-padded), and C is
// written where it is when its rows are whole vectors (else through a padded
// copy). Each product is computed by one thread in one order: the same bits
// however many threads share the batches out. The AVX2 and AVX-512 clones fuse
// the multiply-adds and the baseline does not, so the bits depend on the CPU,
// as oneDNN's do. (The vectors are 8 floats in every clone: AVX-512's gains
// nothing over AVX2's here.)
//
//===----------------------------------------------------------------------===//

#include "Kernels/CPU/SmallGemm.h"
#include "Kernels/CPU/VectorMath.h"

#include <cstring>

namespace {

using mgs::rt::cpu::kSmallGemmMax;

/// 8 floats: one AVX register in the AVX2 and AVX-512 clones, two SSE ones in
/// the baseline.
typedef float V8 __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

/// Rows [i0, i0 + R) of C = op(A) op(B) + beta C, C's rows NV vectors wide:
/// op(A) rows of lda, op(B) k rows of ldb, C rows of ldc (not read when beta
/// is 0).
template <int NV, int R>
[[gnu::always_inline]] inline void rowBlock(int64_t i0, int64_t k, const float *a, int64_t lda,
                                            const float *b, int64_t ldb, float beta, float *c,
                                            int64_t ldc) {
  // (Loads and stores by memcpy into locals: no helper taking or giving a
  // vector by value, whose ABI would differ between the clones.)
  V8 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) {
      V8 t{};
      if (beta != 0.0f)
        std::memcpy(&t, c + (i0 + r) * ldc + v * kLanes, sizeof t);
      acc[r][v] = beta * t;
    }
  for (int64_t p = 0; p < k; ++p) {
    V8 bv[NV];
    for (int v = 0; v < NV; ++v) {
      V8 t;
      std::memcpy(&t, b + p * ldb + v * kLanes, sizeof t);
      bv[v] = t;
    }
    for (int r = 0; r < R; ++r) {
      const float s = a[(i0 + r) * lda + p];
      for (int v = 0; v < NV; ++v)
        acc[r][v] += s * bv[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) {
      const V8 t = acc[r][v];
      std::memcpy(c + (i0 + r) * ldc + v * kLanes, &t, sizeof t);
    }
}

/// Every row of C, NV vectors wide, in blocks of R and then one at a time.
template <int NV, int R>
[[gnu::always_inline]] inline void rows(int64_t m, int64_t k, const float *a, int64_t lda,
                                        const float *b, int64_t ldb, float beta, float *c,
                                        int64_t ldc) {
  int64_t i = 0;
  for (; i + R <= m; i += R)
    rowBlock<NV, R>(i, k, a, lda, b, ldb, beta, c, ldc);
  for (; i < m; ++i)
    rowBlock<NV, 1>(i, k, a, lda, b, ldb, beta, c, ldc);
}

} // namespace

namespace mgs::rt::cpu {

MGSRT_SIMD_CLONES void smallGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a,
                                 int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                                 int64_t ldc) {
  alignas(64) float ap[kSmallGemmMax * kSmallGemmMax]; // op(A), rows of k
  alignas(64) float bp[kSmallGemmMax * kSmallGemmMax]; // op(B), rows of whole vectors
  alignas(64) float cp[kSmallGemmMax * kSmallGemmMax]; // C, rows of whole vectors
  const int64_t nv = (n + kLanes - 1) / kLanes, np = nv * kLanes;
  if (ta) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        ap[i * k + p] = a[p * lda + i];
    a = ap;
    lda = k;
  }
  if (tb || np != n) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j)
        bp[p * np + j] = tb ? b[j * ldb + p] : b[p * ldb + j];
      for (int64_t j = n; j < np; ++j)
        bp[p * np + j] = 0.0f;
    }
    b = bp;
    ldb = np;
  }
  // C where it is, or its padded copy (the product alone, beta applied after).
  const bool direct = np == n;
  float *out = direct ? c : cp;
  const int64_t ldo = direct ? ldc : np;
  const float betaIn = direct ? beta : 0.0f;
  switch (nv) {
  case 1:
    rows<1, 4>(m, k, a, lda, b, ldb, betaIn, out, ldo);
    break;
  case 2:
    rows<2, 4>(m, k, a, lda, b, ldb, betaIn, out, ldo);
    break;
  case 3:
    rows<3, 2>(m, k, a, lda, b, ldb, betaIn, out, ldo);
    break;
  default:
    rows<4, 2>(m, k, a, lda, b, ldb, betaIn, out, ldo);
    break;
  }
  if (direct)
    return;
  for (int64_t i = 0; i < m; ++i) {
    float *ci = c + i * ldc;
    const float *pi = cp + i * np;
    if (beta == 0.0f)
      for (int64_t j = 0; j < n; ++j)
        ci[j] = pi[j];
    else
      for (int64_t j = 0; j < n; ++j)
        ci[j] = beta * ci[j] + pi[j];
  }
}

} // namespace mgs::rt::cpu
