//===- Recurrent.h - What the CPU LSTM and GRU kernels share -*- C++ -*-===//
//
// The per-call scratch memory, the gate activations and the products over
// all time steps of Lstm.cpp and Gru.cpp (the descriptor and buffer checks
// are in Descriptors/RecurrentDesc.h, shared with the CUDA kernels). The
// activations (VectorMath.h) are loops over whole gate blocks without libm
// calls, which vectorize in the kernels' MGSRT_SIMD_CLONES functions.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_RECURRENT_H
#define MGSRT_KERNELS_CPU_RECURRENT_H

#include "Support/Common.h"
#include "Descriptors/GemmDesc.h"
#include "Descriptors/RecurrentDesc.h"
#include "Kernels/CPU/VectorMath.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mgs::rt::cpu::recurrent {

using ::mgs::rt::recurrent::parseGru;
using ::mgs::rt::recurrent::parseShape;
using ::mgs::rt::recurrent::Shape;

/// `count` floats of this thread's scratch memory, kept between calls so that
/// a training step allocates only on its first call (the contents are
/// undefined; the pointer is valid until the next call on this thread).
inline float *scratch(size_t count) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < count)
    buffer.resize(count);
  return buffer.data();
}

/// v[j] = sigmoid(v[j] + bias[j]) for j < count.
inline void sigmoidBias(float *__restrict v, const float *__restrict bias, int64_t count) {
#pragma omp simd
  for (int64_t j = 0; j < count; ++j)
    v[j] = sigmoid(v[j] + bias[j]);
}

/// bias[j] = b[j] + b[gates + j] for j < count: ONNX's input and recurrent
/// biases (`gates` columns each) of the first `count` columns summed into one.
inline void sumBiases(const float *b, int64_t gates, int64_t count, float *bias) {
  for (int64_t j = 0; j < count; ++j)
    bias[j] = b[j] + b[gates + j];
}

/// Adds the column sums of rows x cols `m` (leading dimension ld) to `sums`.
inline void addColumnSums(const float *m, int64_t rows, int64_t cols, int64_t ld, float *sums) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      sums[j] += m[r * ld + j];
}

/// The input products of all T steps in one GEMM: out[t*N + n][0, gates) =
/// x[t*N + n] W^T (out's leading dimension `ld`), W gates x I.
inline bool inputProducts(mgsrt_ctx_t *ctx, const char *kernel, const Shape &s, int64_t gates,
                          const float *x, const float *w, float *out, int64_t ld) {
  return sgemm(ctx, kernel, false, true, s.t * s.n, gates, s.i, 1.0f, x, s.i, w, s.i, 0.0f, out,
               ld);
}

/// One step's recurrent product: out (N x gates, leading dimension ld) +=
/// hPrev R^T, R gates x H.
inline bool recurrentProduct(mgsrt_ctx_t *ctx, const char *kernel, const Shape &s, int64_t gates,
                             const float *hPrev, const float *r, float *out, int64_t ld,
                             float beta = 1.0f) {
  return sgemm(ctx, kernel, false, true, s.n, gates, s.h, 1.0f, hPrev, s.h, r, s.h, beta, out, ld);
}

/// Gradients flowing back through a weight matrix: out (rows x cols) =
/// dG W + beta out, dG rows x k (leading dimension ldg), W k x cols.
inline bool backProduct(mgsrt_ctx_t *ctx, const char *kernel, int64_t rows, int64_t cols,
                        int64_t k, const float *dg, int64_t ldg, const float *wm, float beta,
                        float *out) {
  return sgemm(ctx, kernel, false, false, rows, cols, k, 1.0f, dg, ldg, wm, cols, beta, out, cols);
}

/// A weight gradient over `rows` (= steps x N) rows of gate gradients in one
/// GEMM: dW (gates x cols) = dG^T X + beta dW, dG with leading dimension ldg.
inline bool weightGradient(mgsrt_ctx_t *ctx, const char *kernel, int64_t rows, int64_t gates,
                           int64_t cols, const float *dg, int64_t ldg, const float *xs, int64_t ldx,
                           float *dw, int64_t lddw, float beta = 0.0f) {
  if (rows == 0) {
    for (int64_t g = 0; beta == 0.0f && g < gates; ++g)
      std::fill(dw + g * lddw, dw + g * lddw + cols, 0.0f);
    return true;
  }
  return sgemm(ctx, kernel, true, false, gates, cols, rows, 1.0f, dg, ldg, xs, ldx, beta, dw, lddw);
}

} // namespace mgs::rt::cpu::recurrent

#endif // MGSRT_KERNELS_CPU_RECURRENT_H
