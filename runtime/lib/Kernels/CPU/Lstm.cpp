//===- Lstm.cpp - One LSTM layer, forward and backward through time -------===//
//
// mgsrt_lstm_* (mgsrt.h): ONNX's LSTM (gate order i, o, f, c) with its
// default activations and a zero initial state. The matrix products of each
// step run on dnnl_sgemm; the gates are elementwise loops. The forward pass
// keeps every step's gate activations and cell state (`saved`), from which
// the backward pass runs backpropagation through time without recomputing.
//
// oneDNN's own LSTM primitive would do the products in one call, but its
// training workspace has a size known only once the primitive exists, while
// mgs plans every buffer at compile time; `saved` is sized from the shapes.
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/GemmDesc.h"

#include <cmath>
#include <vector>

using namespace mgs::rt;

namespace {

struct LstmShape {
  int64_t t, n, i, h;
};

mgsrt_status_t parseLstm(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                         LstmShape &s) {
  using F = mgs::contract::LstmDesc;
  s = {desc[F::Steps], desc[F::Batch], desc[F::InputSize], desc[F::HiddenSize]};
  if (s.t < 1 || s.n < 1 || s.i < 1 || s.h < 1)
    return invalidArg(ctx, kernel, "T=", s.t, " N=", s.n, " I=", s.i, " H=", s.h,
                      " must all be positive");
  return MGSRT_OK;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

mgsrt_status_t lstmFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::lstm_fwd);
  LstmShape s;
  if (parseLstm(ctx, kernel, desc, s))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "x")
           .require(1, "w")
           .require(2, "r")
           .require(3, "b")
           .require(4, "y")
           .require(7, "saved")
           .ok)
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *b = static_cast<const float *>(bufs[3]);
  float *y = static_cast<float *>(bufs[4]), *yh = static_cast<float *>(bufs[5]),
        *yc = static_cast<float *>(bufs[6]), *saved = static_cast<float *>(bufs[7]);
  const int64_t N = s.n, I = s.i, H = s.h, G = 4 * H, S = 5 * H;
  for (int64_t t = 0; t < s.t; ++t) {
    float *st = saved + t * N * S;
    // Pre-activations into the first 4H columns of this step's saved rows.
    if (!cpu::sgemm(ctx, kernel, false, true, N, G, I, 1.0f, x + t * N * I, I, w, I, 0.0f, st, S))
      return ctx->status;
    if (t > 0 && !cpu::sgemm(ctx, kernel, false, true, N, G, H, 1.0f, y + (t - 1) * N * H, H, r,
                             H, 1.0f, st, S))
      return ctx->status;
    for (int64_t n = 0; n < N; ++n) {
      float *row = st + n * S;
      const float *prev = t > 0 ? saved + ((t - 1) * N + n) * S + G : nullptr;
      float *hOut = y + (t * N + n) * H;
      for (int64_t j = 0; j < H; ++j) {
        const float gi = sigmoid(row[j] + b[j] + b[G + j]);
        const float go = sigmoid(row[H + j] + b[H + j] + b[G + H + j]);
        const float gf = sigmoid(row[2 * H + j] + b[2 * H + j] + b[G + 2 * H + j]);
        const float gc = std::tanh(row[3 * H + j] + b[3 * H + j] + b[G + 3 * H + j]);
        const float c = gf * (prev ? prev[j] : 0.0f) + gi * gc;
        row[j] = gi;
        row[H + j] = go;
        row[2 * H + j] = gf;
        row[3 * H + j] = gc;
        row[G + j] = c;
        hOut[j] = go * std::tanh(c);
      }
    }
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
  LstmShape s;
  if (parseLstm(ctx, kernel, desc, s))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "x")
           .require(1, "w")
           .require(2, "r")
           .require(3, "y")
           .require(4, "saved")
           .require(9, "dw")
           .require(10, "dr")
           .require(11, "db")
           .ok)
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *y = static_cast<const float *>(bufs[3]),
              *saved = static_cast<const float *>(bufs[4]),
              *dy = static_cast<const float *>(bufs[5]),
              *dyh = static_cast<const float *>(bufs[6]),
              *dyc = static_cast<const float *>(bufs[7]);
  float *dx = static_cast<float *>(bufs[8]), *dw = static_cast<float *>(bufs[9]),
        *dr = static_cast<float *>(bufs[10]), *db = static_cast<float *>(bufs[11]);
  const int64_t N = s.n, I = s.i, H = s.h, G = 4 * H, S = 5 * H;
  // dh and dc flowing back from step t + 1 (the last step's from y_h, y_c).
  std::vector<float> dhNext(N * H, 0.0f), dcNext(N * H, 0.0f), dgates(N * G);
  if (dyh)
    std::copy(dyh, dyh + N * H, dhNext.begin());
  if (dyc)
    std::copy(dyc, dyc + N * H, dcNext.begin());
  std::fill(db, db + 2 * G, 0.0f);
  for (int64_t t = s.t - 1; t >= 0; --t) {
    for (int64_t n = 0; n < N; ++n) {
      const float *row = saved + (t * N + n) * S;
      const float *prev = t > 0 ? saved + ((t - 1) * N + n) * S + G : nullptr;
      const float *dyRow = dy ? dy + (t * N + n) * H : nullptr;
      float *dg = dgates.data() + n * G;
      for (int64_t j = 0; j < H; ++j) {
        const float gi = row[j], go = row[H + j], gf = row[2 * H + j], gc = row[3 * H + j],
                    c = row[G + j], tc = std::tanh(c);
        const float dh = dhNext[n * H + j] + (dyRow ? dyRow[j] : 0.0f);
        const float dc = dcNext[n * H + j] + dh * go * (1.0f - tc * tc);
        dg[j] = dc * gc * gi * (1.0f - gi);
        dg[H + j] = dh * tc * go * (1.0f - go);
        dg[2 * H + j] = dc * (prev ? prev[j] : 0.0f) * gf * (1.0f - gf);
        dg[3 * H + j] = dc * gi * (1.0f - gc * gc);
        dcNext[n * H + j] = dc * gf;
      }
    }
    // Weights: dW += dG^T x_t, dR += dG^T h_{t-1} (overwritten at the last step).
    const float beta = t == s.t - 1 ? 0.0f : 1.0f;
    if (!cpu::sgemm(ctx, kernel, true, false, G, I, N, 1.0f, dgates.data(), G, x + t * N * I, I,
                    beta, dw, I))
      return ctx->status;
    if (t > 0) {
      if (!cpu::sgemm(ctx, kernel, true, false, G, H, N, 1.0f, dgates.data(), G,
                      y + (t - 1) * N * H, H, beta, dr, H))
        return ctx->status;
    } else if (s.t == 1) {
      std::fill(dr, dr + G * H, 0.0f); // one step: h_{-1} is zero
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < G; ++j)
        db[j] += dgates[n * G + j];
    // Into the inputs: dx_t = dG W, dh_{t-1} = dG R.
    if (dx && !cpu::sgemm(ctx, kernel, false, false, N, I, G, 1.0f, dgates.data(), G, w, I, 0.0f,
                          dx + t * N * I, I))
      return ctx->status;
    if (t > 0 && !cpu::sgemm(ctx, kernel, false, false, N, H, G, 1.0f, dgates.data(), G, r, H,
                             0.0f, dhNext.data(), H))
      return ctx->status;
  }
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
