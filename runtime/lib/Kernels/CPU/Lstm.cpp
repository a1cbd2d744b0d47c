//===- Lstm.cpp - One LSTM layer, forward and backward through time -------===//
//
// mgsrt_lstm_* (mgsrt.h): ONNX's LSTM (gate order i, o, f, c) with its
// default activations, its initial states given or zero. The input products of all
// steps are one GEMM (dnnl_sgemm), each step adds its recurrent product and
// runs the gates as loops over whole gate blocks (Recurrent.h). The forward pass keeps
// every step's gate activations and cell state (`saved`), from which the
// backward pass runs backpropagation through time without recomputing; it
// keeps every step's gate gradients, so that the weight gradients and dx are
// one GEMM each over all steps.
//
// oneDNN's own LSTM primitive would do the products in one call, but its
// training workspace has a size known only once the primitive exists, while
// mgs plans every buffer at compile time; `saved` is sized from the shapes.
//
//===----------------------------------------------------------------------===//

#include "Kernels/CPU/Recurrent.h"

#include <algorithm>

using namespace mgs::rt;
using namespace mgs::rt::cpu::recurrent;
using mgs::rt::recurrent::checkLstmBwdBufs;
using mgs::rt::recurrent::checkLstmFwdBufs;
using mgs::rt::cpu::fastTanh;
using mgs::rt::cpu::sigmoid;

namespace {

/// One step's cells, forward: `st` holds N rows of 5H (the gates' pre-activations without
/// their bias in the first 4H columns); turns them into the activations i, o, f, c~ (the
/// summed `bias` added), writes the cell state c into the last H columns and the output
/// h = o tanh(c) into N x H `h`. `prev` is the previous step's c, row n at
/// prev + n * prevLd (at the first step the initial c0, or H zeros and
/// prevLd 0: the zero state).
MGSRT_SIMD_CLONES void cellsForward(float *__restrict st, const float *__restrict prev,
                                    int64_t prevLd, const float *__restrict bias,
                                    float *__restrict h, int64_t N, int64_t H) {
  const int64_t S = 5 * H;
  for (int64_t n = 0; n < N; ++n) {
    float *row = st + n * S, *c = row + 4 * H, *hOut = h + n * H;
    const float *cPrev = prev + n * prevLd;
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) {
      const float gi = sigmoid(row[j] + bias[j]);
      const float go = sigmoid(row[H + j] + bias[H + j]);
      const float gf = sigmoid(row[2 * H + j] + bias[2 * H + j]);
      const float gc = fastTanh(row[3 * H + j] + bias[3 * H + j]);
      row[j] = gi;
      row[H + j] = go;
      row[2 * H + j] = gf;
      row[3 * H + j] = gc;
      const float cj = gf * cPrev[j] + gi * gc;
      c[j] = cj;
      hOut[j] = go * fastTanh(cj);
    }
  }
}

/// One step's cells, backward: from the saved activations `st` (N rows of 5H),
/// the previous step's c (as cellsForward's), this step's output gradient
/// (row n at dy + n * dyLd: H zeros and 0 when the step has none) and the
/// gradients flowing back from the next step (`dhNext`, `dcNext`, N x H
/// each), writes the gate gradients (N x 4H `dg`) and replaces `dcNext` by the
/// gradient of the previous c; `dhNext` gets dy added (the caller then
/// replaces it by dG R).
MGSRT_SIMD_CLONES void cellsBackward(const float *__restrict st, const float *__restrict prev,
                                     int64_t prevLd, const float *__restrict dy, int64_t dyLd,
                                     float *__restrict dg, float *__restrict dhNext,
                                     float *__restrict dcNext, int64_t N, int64_t H) {
  const int64_t S = 5 * H, G = 4 * H;
  for (int64_t n = 0; n < N; ++n) {
    const float *row = st + n * S;
    const float *gi = row, *go = row + H, *gf = row + 2 * H, *gc = row + 3 * H, *c = row + G;
    const float *cPrev = prev + n * prevLd, *dyRow = dy + n * dyLd;
    float *d = dg + n * G, *dhn = dhNext + n * H, *dcn = dcNext + n * H;
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) {
      const float dh = dhn[j] + dyRow[j];
      const float tc = fastTanh(c[j]);
      const float dc = dcn[j] + dh * go[j] * (1.0f - tc * tc);
      d[j] = dc * gc[j] * gi[j] * (1.0f - gi[j]);
      d[H + j] = dh * tc * go[j] * (1.0f - go[j]);
      d[2 * H + j] = dc * cPrev[j] * gf[j] * (1.0f - gf[j]);
      d[3 * H + j] = dc * gi[j] * (1.0f - gc[j] * gc[j]);
      dhn[j] = dh;
      dcn[j] = dc * gf[j];
    }
  }
}

mgsrt_status_t lstmFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::lstm_fwd);
  Shape s;
  if (parseShape(ctx, kernel, desc, s))
    return ctx->status;
  if (!checkLstmFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *b = static_cast<const float *>(bufs[3]);
  float *y = static_cast<float *>(bufs[4]), *yh = static_cast<float *>(bufs[5]),
        *yc = static_cast<float *>(bufs[6]), *saved = static_cast<float *>(bufs[7]);
  const float *h0 = static_cast<const float *>(bufs[8]), *c0 = static_cast<const float *>(bufs[9]);
  const int64_t N = s.n, H = s.h, G = 4 * H, S = 5 * H;
  float *bias = scratch(G + H), *zeros = bias + G;
  sumBiases(b, G, G, bias);
  std::fill(zeros, zeros + H, 0.0f);
  // Pre-activations of all steps into the first 4H columns of the saved rows.
  if (!inputProducts(ctx, kernel, s, G, x, w, saved, S))
    return ctx->status;
  for (int64_t t = 0; t < s.t; ++t) {
    float *st = saved + t * N * S;
    const float *hPrev = t > 0 ? y + (t - 1) * N * H : h0;
    if (hPrev && !recurrentProduct(ctx, kernel, s, G, hPrev, r, st, S))
      return ctx->status;
    if (t > 0)
      cellsForward(st, st - N * S + G, S, bias, y + t * N * H, N, H);
    else
      cellsForward(st, c0 ? c0 : zeros, c0 ? H : 0, bias, y, N, H);
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < H; ++j) {
      if (yh)
        yh[n * H + j] = y[((s.t - 1) * N + n) * H + j];
      if (yc)
        yc[n * H + j] = saved[((s.t - 1) * N + n) * S + G + j];
    }
  return MGSRT_OK;
}

mgsrt_status_t lstmBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::lstm_bwd);
  Shape s;
  if (parseShape(ctx, kernel, desc, s))
    return ctx->status;
  if (!checkLstmBwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *y = static_cast<const float *>(bufs[3]),
              *saved = static_cast<const float *>(bufs[4]),
              *dy = static_cast<const float *>(bufs[5]),
              *dyh = static_cast<const float *>(bufs[6]),
              *dyc = static_cast<const float *>(bufs[7]);
  float *dx = static_cast<float *>(bufs[8]), *dw = static_cast<float *>(bufs[9]),
        *dr = static_cast<float *>(bufs[10]), *db = static_cast<float *>(bufs[11]);
  const float *h0 = static_cast<const float *>(bufs[12]),
              *c0 = static_cast<const float *>(bufs[13]);
  float *dh0 = static_cast<float *>(bufs[14]), *dc0 = static_cast<float *>(bufs[15]);
  const int64_t N = s.n, I = s.i, H = s.h, G = 4 * H, S = 5 * H, TN = s.t * N;
  // The gate gradients of all steps (T*N x 4H), then dh and dc flowing back
  // from step t + 1 (the last step's from y_h, y_c), then H zeros.
  float *dgates = scratch(TN * G + 2 * N * H + H);
  float *dhNext = dgates + TN * G, *dcNext = dhNext + N * H, *zeros = dcNext + N * H;
  std::fill(zeros, zeros + H, 0.0f);
  if (dyh)
    std::copy(dyh, dyh + N * H, dhNext);
  else
    std::fill(dhNext, dhNext + N * H, 0.0f);
  if (dyc)
    std::copy(dyc, dyc + N * H, dcNext);
  else
    std::fill(dcNext, dcNext + N * H, 0.0f);
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const float *st = saved + t * N * S;
    const float *cPrev = t > 0 ? st - N * S + G : c0 ? c0 : zeros;
    cellsBackward(st, cPrev,
                  t > 0 ? S
                  : c0  ? H
                        : 0,
                  dy ? dy + t * N * H : zeros, dy ? H : 0, dgates + t * N * G, dhNext, dcNext, N,
                  H);
    // dh_{t-1} = dG_t R (at t = 0: the initial state's gradient, when asked).
    float *dhPrev = t > 0 ? dhNext : dh0;
    if (dhPrev && !backProduct(ctx, kernel, N, H, G, dgates + t * N * G, G, r, 0.0f, dhPrev))
      return ctx->status;
  }
  if (dc0)
    std::copy(dcNext, dcNext + N * H, dc0);
  // Over all steps at once: dW = dG^T x, dR = dG^T h_{t-1} (h_{-1} is h0 or
  // zero), dx = dG W; the biases' gradient is dG's column sums, the same for both.
  if (!weightGradient(ctx, kernel, TN, G, I, dgates, G, x, I, dw, I) ||
      !weightGradient(ctx, kernel, TN - N, G, H, dgates + N * G, G, y, H, dr, H) ||
      (h0 && !weightGradient(ctx, kernel, N, G, H, dgates, G, h0, H, dr, H, 1.0f)))
    return ctx->status;
  if (dx && !backProduct(ctx, kernel, TN, I, G, dgates, G, w, 0.0f, dx))
    return ctx->status;
  std::fill(db, db + G, 0.0f);
  addColumnSums(dgates, TN, G, G, db);
  std::copy(db, db + G, db + G); // the recurrent bias gets the same gradient
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t lstm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::lstm_fwd), desc, bufs, [&] { return lstmFwd(ctx, desc, bufs); });
}
mgsrt_status_t lstm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::lstm_bwd), desc, bufs, [&] { return lstmBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
