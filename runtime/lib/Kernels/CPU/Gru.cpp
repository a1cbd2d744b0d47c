//===- Gru.cpp - One GRU layer, forward and backward through time ---------===//
//
// mgsrt_gru_* (mgsrt.h): ONNX's GRU (gate order z, r, h) with its default
// activations and a zero initial state, with either linear_before_reset
// (1 is what PyTorch's nn.GRU exports), forward direction. Like the LSTM
// (Lstm.cpp) the matrix products of each step run on dnnl_sgemm and the
// gates are elementwise loops; the forward pass keeps every step's gate
// activations and the recurrent term of the candidate (`saved`, sized from
// the shapes), from which the backward pass runs backpropagation through time.
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/GemmDesc.h"

#include <cmath>
#include <vector>

using namespace mgs::rt;

namespace {

struct GruShape {
  int64_t t, n, i, h;
  bool linearBeforeReset;
};

mgsrt_status_t parseGru(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc, GruShape &s) {
  using F = mgs::contract::GruDesc;
  s = {desc[F::Steps], desc[F::Batch], desc[F::InputSize], desc[F::HiddenSize],
       desc[F::LinearBeforeReset] != 0};
  if (s.t < 1 || s.n < 1 || s.i < 1 || s.h < 1)
    return invalidArg(ctx, kernel, "T=", s.t, " N=", s.n, " I=", s.i, " H=", s.h,
                      " must all be positive");
  if (desc[F::LinearBeforeReset] != 0 && desc[F::LinearBeforeReset] != 1)
    return invalidArg(ctx, kernel, "linear_before_reset must be 0 or 1, got ",
                      desc[F::LinearBeforeReset]);
  return MGSRT_OK;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

mgsrt_status_t gruFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gru_fwd);
  GruShape s;
  if (parseGru(ctx, kernel, desc, s))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "x")
           .require(1, "w")
           .require(2, "r")
           .require(3, "b")
           .require(4, "y")
           .require(6, "saved")
           .ok)
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *b = static_cast<const float *>(bufs[3]);
  float *y = static_cast<float *>(bufs[4]), *yh = static_cast<float *>(bufs[5]),
        *saved = static_cast<float *>(bufs[6]);
  const int64_t N = s.n, I = s.i, H = s.h, G = 3 * H, S = 4 * H;
  const float *rh = r + 2 * H * H;  // the candidate's recurrent weights
  std::vector<float> resetH(N * H); // r * h_prev (linear_before_reset = 0)
  for (int64_t t = 0; t < s.t; ++t) {
    const float *prev = t > 0 ? y + (t - 1) * N * H : nullptr;
    float *st = saved + t * N * S;
    // Input pre-activations of z, r, h into the first 3H columns, the
    // recurrent ones of z and r added; the candidate's recurrent term into
    // the last H columns.
    if (!cpu::sgemm(ctx, kernel, false, true, N, G, I, 1.0f, x + t * N * I, I, w, I, 0.0f, st, S))
      return ctx->status;
    if (prev &&
        !cpu::sgemm(ctx, kernel, false, true, N, 2 * H, H, 1.0f, prev, H, r, H, 1.0f, st, S))
      return ctx->status;
    for (int64_t n = 0; n < N; ++n) {
      float *row = st + n * S;
      for (int64_t j = 0; j < 2 * H; ++j)
        row[j] = sigmoid(row[j] + b[j] + b[G + j]);
      for (int64_t j = 0; j < H; ++j)
        resetH[n * H + j] = prev ? row[H + j] * prev[n * H + j] : 0.0f;
    }
    if (!prev) {
      for (int64_t n = 0; n < N; ++n)
        std::fill(st + n * S + G, st + n * S + S, 0.0f);
    } else if (!cpu::sgemm(ctx, kernel, false, true, N, H, H, 1.0f,
                           s.linearBeforeReset ? prev : resetH.data(), H, rh, H, 0.0f, st + G, S)) {
      return ctx->status;
    }
    for (int64_t n = 0; n < N; ++n) {
      float *row = st + n * S;
      float *hOut = y + (t * N + n) * H;
      for (int64_t j = 0; j < H; ++j) {
        const float z = row[j], rg = row[H + j];
        const float hn = row[G + j] + b[G + 2 * H + j];
        const float a = row[2 * H + j] + b[2 * H + j] + (s.linearBeforeReset ? rg * hn : hn);
        const float cand = std::tanh(a);
        row[2 * H + j] = cand;
        row[G + j] = hn;
        hOut[j] = (1.0f - z) * cand + z * (prev ? prev[n * H + j] : 0.0f);
      }
    }
  }
  if (yh)
    std::copy(y + (s.t - 1) * N * H, y + s.t * N * H, yh);
  return MGSRT_OK;
}

mgsrt_status_t gruBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gru_bwd);
  GruShape s;
  if (parseGru(ctx, kernel, desc, s))
    return ctx->status;
  if (!BufferCheck(ctx, kernel, bufs)
           .require(0, "x")
           .require(1, "w")
           .require(2, "r")
           .require(3, "y")
           .require(4, "saved")
           .require(8, "dw")
           .require(9, "dr")
           .require(10, "db")
           .ok)
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *y = static_cast<const float *>(bufs[3]),
              *saved = static_cast<const float *>(bufs[4]),
              *dy = static_cast<const float *>(bufs[5]), *dyh = static_cast<const float *>(bufs[6]);
  float *dx = static_cast<float *>(bufs[7]), *dw = static_cast<float *>(bufs[8]),
        *dr = static_cast<float *>(bufs[9]), *db = static_cast<float *>(bufs[10]);
  const int64_t N = s.n, I = s.i, H = s.h, G = 3 * H, S = 4 * H;
  const float *rh = r + 2 * H * H;
  // dh flowing back from step t + 1 (the last one's from y_h); the
  // gradients of the input pre-activations (dgx) and of the recurrent ones
  // (dgh: z, r, and the candidate's recurrent term).
  std::vector<float> dhNext(N * H, 0.0f), dgx(N * G), dgh(N * G), resetH(N * H), dResetH(N * H);
  if (dyh)
    std::copy(dyh, dyh + N * H, dhNext.begin());
  std::fill(dw, dw + G * I, 0.0f);
  std::fill(dr, dr + G * H, 0.0f);
  std::fill(db, db + 2 * G, 0.0f);
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const float *prev = t > 0 ? y + (t - 1) * N * H : nullptr;
    for (int64_t n = 0; n < N; ++n) {
      const float *row = saved + (t * N + n) * S;
      const float *dyRow = dy ? dy + (t * N + n) * H : nullptr;
      float *gx = dgx.data() + n * G, *gh = dgh.data() + n * G;
      for (int64_t j = 0; j < H; ++j) {
        const float z = row[j], rg = row[H + j], cand = row[2 * H + j], hn = row[G + j];
        const float hp = prev ? prev[n * H + j] : 0.0f;
        const float dh = dhNext[n * H + j] + (dyRow ? dyRow[j] : 0.0f);
        const float da = dh * (1.0f - z) * (1.0f - cand * cand);
        gx[j] = gh[j] = dh * (hp - cand) * z * (1.0f - z);
        gx[2 * H + j] = da;
        if (s.linearBeforeReset) {
          gx[H + j] = gh[H + j] = da * hn * rg * (1.0f - rg);
          gh[2 * H + j] = da * rg;
        } else {
          gh[2 * H + j] = da; // r's gradient waits for d(r h_prev) below
          resetH[n * H + j] = rg * hp;
        }
        dhNext[n * H + j] = dh * z;
      }
    }
    if (!s.linearBeforeReset) {
      // d(r h_prev) = da Rh; then r's gradient and h_prev's share through it.
      if (prev && !cpu::sgemm(ctx, kernel, false, false, N, H, H, 1.0f, dgh.data() + 2 * H, G, rh,
                              H, 0.0f, dResetH.data(), H))
        return ctx->status;
      for (int64_t n = 0; n < N; ++n) {
        const float *row = saved + (t * N + n) * S;
        for (int64_t j = 0; j < H; ++j) {
          const float rg = row[H + j];
          const float drh = prev ? dResetH[n * H + j] : 0.0f;
          const float hp = prev ? prev[n * H + j] : 0.0f;
          dgx[n * G + H + j] = dgh[n * G + H + j] = drh * hp * rg * (1.0f - rg);
          dhNext[n * H + j] += drh * rg;
        }
      }
    }
    // Weights: dW += dgx^T x_t, dR += dgh^T h_prev (its last H rows from
    // r h_prev when linear_before_reset = 0); the biases: column sums.
    if (!cpu::sgemm(ctx, kernel, true, false, G, I, N, 1.0f, dgx.data(), G, x + t * N * I, I, 1.0f,
                    dw, I))
      return ctx->status;
    if (prev) {
      if (s.linearBeforeReset) {
        if (!cpu::sgemm(ctx, kernel, true, false, G, H, N, 1.0f, dgh.data(), G, prev, H, 1.0f, dr,
                        H))
          return ctx->status;
      } else if (!cpu::sgemm(ctx, kernel, true, false, 2 * H, H, N, 1.0f, dgh.data(), G, prev, H,
                             1.0f, dr, H) ||
                 !cpu::sgemm(ctx, kernel, true, false, H, H, N, 1.0f, dgh.data() + 2 * H, G,
                             resetH.data(), H, 1.0f, dr + 2 * H * H, H)) {
        return ctx->status;
      }
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < G; ++j) {
        db[j] += dgx[n * G + j];
        db[G + j] += dgh[n * G + j];
      }
    // Into the inputs: dx_t = dgx W, dh_prev += dgh R (z and r's rows only
    // when linear_before_reset = 0: the candidate's went through r above).
    if (dx && !cpu::sgemm(ctx, kernel, false, false, N, I, G, 1.0f, dgx.data(), G, w, I, 0.0f,
                          dx + t * N * I, I))
      return ctx->status;
    if (prev && !cpu::sgemm(ctx, kernel, false, false, N, H, s.linearBeforeReset ? G : 2 * H, 1.0f,
                            dgh.data(), G, r, H, 1.0f, dhNext.data(), H))
      return ctx->status;
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t gru_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gru_fwd), desc, bufs,
                   [&] { return gruFwd(ctx, desc, bufs); });
}
mgsrt_status_t gru_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::gru_bwd), desc, bufs,
                   [&] { return gruBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
