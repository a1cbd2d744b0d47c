//===- Gru.cpp - One GRU layer, forward and backward through time ---------===//
//
// mgsrt_gru_* (mgsrt.h): ONNX's GRU (gate order z, r, h) with its default
// activations, its initial state given or zero, with either linear_before_reset
// (1 is what PyTorch's nn.GRU exports), forward direction. Like the LSTM
// (Lstm.cpp) the input products of all steps are one GEMM, each step adds its
// recurrent products and runs the gates as loops over gate blocks (Recurrent.h);
// the forward pass keeps every step's gate activations and the recurrent
// term of the candidate (`saved`, sized from the shapes), from which the
// backward pass runs backpropagation through time, keeping every step's gate
// gradients for one GEMM over all steps per weight gradient and for dx.
//
//===----------------------------------------------------------------------===//

#include "Kernels/CPU/Recurrent.h"

#include <algorithm>

using namespace mgs::rt;
using namespace mgs::rt::cpu::recurrent;
using mgs::rt::cpu::fastTanh;
using mgs::rt::cpu::sigmoid;
using mgs::rt::recurrent::checkGruBwdBufs;
using mgs::rt::recurrent::checkGruFwdBufs;

namespace {

MGSRT_SIMD_CLONES mgsrt_status_t gruFwd(mgsrt_ctx_t *ctx, const int64_t *desc,
                                         void *const *bufs) {
  const char *kernel = kernelName(Kernel::gru_fwd);
  Shape s;
  bool lbr = false;
  if (parseGru(ctx, kernel, desc, s, lbr))
    return ctx->status;
  if (!checkGruFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *b = static_cast<const float *>(bufs[3]);
  float *y = static_cast<float *>(bufs[4]), *yh = static_cast<float *>(bufs[5]),
        *saved = static_cast<float *>(bufs[6]);
  const float *h0 = static_cast<const float *>(bufs[7]); // null: the zero state
  const int64_t N = s.n, H = s.h, G = 3 * H, S = 4 * H;
  const float *rh = r + 2 * H * H; // the candidate's recurrent weights
  // z and r's summed biases; r * h_prev (linear_before_reset = 0).
  float *bias = scratch(2 * H + N * H), *resetH = bias + 2 * H;
  sumBiases(b, G, 2 * H, bias);
  const float *bx = b + 2 * H, *bh = b + G + 2 * H; // the candidate's biases
  // Input pre-activations of z, r, h of all steps into the first 3H columns;
  // each step adds the recurrent ones of z and r and puts the candidate's
  // recurrent term into the last H columns.
  if (!inputProducts(ctx, kernel, s, G, x, w, saved, S))
    return ctx->status;
  for (int64_t t = 0; t < s.t; ++t) {
    const float *prev = t > 0 ? y + (t - 1) * N * H : h0;
    float *st = saved + t * N * S;
    if (prev && !recurrentProduct(ctx, kernel, s, 2 * H, prev, r, st, S))
      return ctx->status;
    for (int64_t n = 0; n < N; ++n) {
      float *row = st + n * S;
      sigmoidBias(row, bias, 2 * H);
      if (prev && !lbr)
        for (int64_t j = 0; j < H; ++j)
          resetH[n * H + j] = row[H + j] * prev[n * H + j];
    }
    if (!prev) {
      for (int64_t n = 0; n < N; ++n)
        std::fill(st + n * S + G, st + n * S + S, 0.0f);
    } else if (!recurrentProduct(ctx, kernel, s, H, lbr ? prev : resetH, rh, st + G, S, 0.0f)) {
      return ctx->status;
    }
    for (int64_t n = 0; n < N; ++n) {
      float *row = st + n * S, *hn = row + G, *cand = row + 2 * H;
      const float *z = row, *rg = row + H;
      float *hOut = y + (t * N + n) * H;
      for (int64_t j = 0; j < H; ++j) {
        hn[j] += bh[j];
        cand[j] = fastTanh(cand[j] + bx[j] + (lbr ? rg[j] * hn[j] : hn[j]));
      }
      if (prev)
        for (int64_t j = 0; j < H; ++j)
          hOut[j] = (1.0f - z[j]) * cand[j] + z[j] * prev[n * H + j];
      else
        for (int64_t j = 0; j < H; ++j)
          hOut[j] = (1.0f - z[j]) * cand[j];
    }
  }
  if (yh)
    std::copy(y + (s.t - 1) * N * H, y + s.t * N * H, yh);
  return MGSRT_OK;
}

MGSRT_SIMD_CLONES mgsrt_status_t gruBwd(mgsrt_ctx_t *ctx, const int64_t *desc,
                                         void *const *bufs) {
  const char *kernel = kernelName(Kernel::gru_bwd);
  Shape s;
  bool lbr = false;
  if (parseGru(ctx, kernel, desc, s, lbr))
    return ctx->status;
  if (!checkGruBwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *y = static_cast<const float *>(bufs[3]),
              *saved = static_cast<const float *>(bufs[4]),
              *dy = static_cast<const float *>(bufs[5]), *dyh = static_cast<const float *>(bufs[6]);
  float *dx = static_cast<float *>(bufs[7]), *dw = static_cast<float *>(bufs[8]),
        *dr = static_cast<float *>(bufs[9]), *db = static_cast<float *>(bufs[10]);
  const float *h0 = static_cast<const float *>(bufs[11]);
  float *dh0 = static_cast<float *>(bufs[12]);
  const int64_t N = s.n, I = s.i, H = s.h, G = 3 * H, S = 4 * H, TN = s.t * N;
  const float *rh = r + 2 * H * H;
  // The gradients of all steps' input pre-activations (dgx) and recurrent
  // ones (dgh: z, r, and the candidate's recurrent term), all steps' r h_prev
  // (linear_before_reset = 0), then d(r h_prev) and the dh flowing back from
  // step t + 1 (the last one's from y_h).
  // (Then H zeros a row for h_{-1} when dh0 is asked for without h0.)
  const bool zeroState = dh0 && !h0;
  float *dgx = scratch(2 * TN * G + TN * H + (zeroState ? 3 : 2) * N * H), *dgh = dgx + TN * G;
  float *resetH = dgh + TN * G, *dResetH = resetH + TN * H, *dhNext = dResetH + N * H;
  if (dyh)
    std::copy(dyh, dyh + N * H, dhNext);
  else
    std::fill(dhNext, dhNext + N * H, 0.0f);
  if (zeroState)
    std::fill(dhNext + N * H, dhNext + 2 * N * H, 0.0f);
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const float *prev = t > 0 ? y + (t - 1) * N * H : zeroState ? dhNext + N * H : h0;
    for (int64_t n = 0; n < N; ++n) {
      const float *row = saved + (t * N + n) * S;
      const float *z = row, *rg = row + H, *cand = row + 2 * H, *hn = row + G;
      const float *dyRow = dy ? dy + (t * N + n) * H : nullptr;
      float *gx = dgx + (t * N + n) * G, *gh = dgh + (t * N + n) * G, *dhn = dhNext + n * H;
      float *rhp = resetH + (t * N + n) * H;
      if (dyRow)
        for (int64_t j = 0; j < H; ++j)
          dhn[j] += dyRow[j];
      for (int64_t j = 0; j < H; ++j) {
        const float hp = prev ? prev[n * H + j] : 0.0f, dh = dhn[j];
        const float da = dh * (1.0f - z[j]) * (1.0f - cand[j] * cand[j]);
        gx[j] = gh[j] = dh * (hp - cand[j]) * z[j] * (1.0f - z[j]);
        gx[2 * H + j] = da;
        if (lbr) {
          gx[H + j] = gh[H + j] = da * hn[j] * rg[j] * (1.0f - rg[j]);
          gh[2 * H + j] = da * rg[j];
        } else {
          gh[2 * H + j] = da; // r's gradient waits for d(r h_prev) below
          rhp[j] = rg[j] * hp;
        }
        dhn[j] = dh * z[j];
      }
    }
    float *ght = dgh + t * N * G, *gxt = dgx + t * N * G;
    if (!lbr) {
      // d(r h_prev) = da Rh; then r's gradient and h_prev's share through it.
      if (prev && !backProduct(ctx, kernel, N, H, H, ght + 2 * H, G, rh, 0.0f, dResetH))
        return ctx->status;
      for (int64_t n = 0; n < N; ++n) {
        const float *rg = saved + (t * N + n) * S + H;
        float *gx = gxt + n * G + H, *gh = ght + n * G + H, *dhn = dhNext + n * H;
        if (!prev) {
          std::fill(gx, gx + H, 0.0f);
          std::fill(gh, gh + H, 0.0f);
          continue;
        }
        const float *drh = dResetH + n * H, *hp = prev + n * H;
        for (int64_t j = 0; j < H; ++j) {
          gx[j] = gh[j] = drh[j] * hp[j] * rg[j] * (1.0f - rg[j]);
          dhn[j] += drh[j] * rg[j];
        }
      }
    }
    // dh_prev += dgh R (z and r's rows only when linear_before_reset = 0: the
    // candidate's went through r above).
    if (prev && !backProduct(ctx, kernel, N, H, lbr ? G : 2 * H, ght, G, r, 1.0f, dhNext))
      return ctx->status;
  }
  if (dh0)
    std::copy(dhNext, dhNext + N * H, dh0);
  // Over all steps at once: dW = dgx^T x, dR = dgh^T h_prev (its last H rows
  // from r h_prev when linear_before_reset = 0; h_{-1} is h0 or zero, whose
  // rows then add nothing), dx = dgx W; the biases: column sums.
  if (!weightGradient(ctx, kernel, TN, G, I, dgx, G, x, I, dw, I))
    return ctx->status;
  const int64_t first = h0 ? 0 : N; // the first row of dgh with a non-zero h_prev
  const int64_t rows = lbr ? G : 2 * H;
  if (!weightGradient(ctx, kernel, TN - N, rows, H, dgh + N * G, G, y, H, dr, H) ||
      (h0 && !weightGradient(ctx, kernel, N, rows, H, dgh, G, h0, H, dr, H, 1.0f)) ||
      (!lbr && !weightGradient(ctx, kernel, TN - first, H, H, dgh + first * G + 2 * H, G,
                               resetH + first * H, H, dr + 2 * H * H, H)))
    return ctx->status;
  if (dx && !backProduct(ctx, kernel, TN, I, G, dgx, G, w, 0.0f, dx))
    return ctx->status;
  std::fill(db, db + 2 * G, 0.0f);
  addColumnSums(dgx, TN, G, G, db);
  addColumnSums(dgh, TN, G, G, db + G);
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
