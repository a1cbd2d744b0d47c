//===- Recurrent.h - What the CPU LSTM and GRU kernels share -*- C++ -*-===//
//
// The per-call scratch memory, the gate activations and the
// products over all time steps of Lstm.cpp and Gru.cpp. The activations are
// loops over whole gate blocks without libm calls: exp is Cephes' expf (range reduction by ln 2, a degree-6 polynomial, within
// 2 ulp of std::exp), tanh a [13/6] rational approximation (within a few
// ulp of std::tanh), so the results differ from the scalar libm loops only
// in float rounding.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_RECURRENT_H
#define MGSRT_KERNELS_CPU_RECURRENT_H

#include "Support/Common.h"
#include "Descriptors/GemmDesc.h"
#include "Descriptors/RecurrentDesc.h"

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

/// x clamped to [-bound, bound] (NaN stays NaN).
inline float clamp(float x, float bound) {
  x = x > bound ? bound : x;
  return x < -bound ? -bound : x;
}

/// exp(x) for x in float range (Cephes' expf).
inline float fastExp(float x) {
  x = clamp(x, 88.3762626647949f);
  float fx = x * 1.44269504088896341f + 0.5f;
  float n = static_cast<float>(static_cast<int32_t>(fx));
  n = n > fx ? n - 1.0f : n; // floor
  x = x - n * 0.693359375f + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * x + 1.3981999507e-3f;
  y = y * x + 8.3334519073e-3f;
  y = y * x + 4.1665795894e-2f;
  y = y * x + 1.6666665459e-1f;
  y = y * x + 5.0000001201e-1f;
  y = y * x * x + x + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}

/// The logistic function on a float.
inline float sigmoid(float x) { return 1.0f / (1.0f + fastExp(-x)); }

/// tanh(x): a [13/6] rational approximation, exact to float rounding on the
/// clamped range |x| <= 7.9 (tanh is 1 to float precision beyond).
inline float fastTanh(float x) {
  const float c = clamp(x, 7.90531110763549805f);
  const float x2 = c * c;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float r = c * p / q;
  return x * x < 1.6e-7f ? x : r;
}

/// v[j] = sigmoid(v[j] + bias[j]) for j < count.
inline void sigmoidBias(float *v, const float *bias, int64_t count) {
  for (int64_t j = 0; j < count; ++j)
    v[j] = sigmoid(v[j] + bias[j]);
}

/// v[j] = tanh(v[j] + bias[j]) for j < count.
inline void tanhBias(float *v, const float *bias, int64_t count) {
  for (int64_t j = 0; j < count; ++j)
    v[j] = fastTanh(v[j] + bias[j]);
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
/// GEMM: dW (gates x cols) = dG^T X, dG with leading dimension ldg.
inline bool weightGradient(mgsrt_ctx_t *ctx, const char *kernel, int64_t rows, int64_t gates,
                           int64_t cols, const float *dg, int64_t ldg, const float *xs,
                           int64_t ldx, float *dw, int64_t lddw) {
  if (rows == 0) {
    for (int64_t g = 0; g < gates; ++g)
      std::fill(dw + g * lddw, dw + g * lddw + cols, 0.0f);
    return true;
  }
  return sgemm(ctx, kernel, true, false, gates, cols, rows, 1.0f, dg, ldg, xs, ldx, 0.0f, dw, lddw);
}

} // namespace mgs::rt::cpu::recurrent

#endif // MGSRT_KERNELS_CPU_RECURRENT_H
