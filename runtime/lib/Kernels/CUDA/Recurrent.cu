//===- Recurrent.cu - LSTM and GRU layers on the GPU ---------------------===//
//
// mgsrt_lstm_* and mgsrt_gru_* (mgsrt.h) as CPU/Lstm.cpp and CPU/Gru.cpp run
// them, with the same `saved` layout and checks (Descriptors/RecurrentDesc.h):
// the input products of all steps are one cuBLAS GEMM (Gemm.cpp's sgemm), each
// step adds its recurrent product and runs its gates in one kernel; the
// backward pass keeps every step's gate gradients (in the context's
// workspace) for one GEMM over all steps per weight gradient and for dx.
//
// The gate arithmetic is CPU/VectorMath.h's operation for operation (Cephes'
// exp, the rational tanh): every float step is an _rn intrinsic, which nvcc
// never contracts into an FMA (the CPU's Lstm.cpp and Gru.cpp are built with
// -ffp-contract=off, runtime/lib/Kernels/CMakeLists.txt),
// so equal inputs give the CPU's results bit for bit, and the bias gradients
// are column sums in the CPU's row order. cuBLAS sums the products in another
// order than oneDNN, so the layers as a whole agree with the CPU to rounding.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "DeviceMath.cuh"

#include "Descriptors/RecurrentDesc.h"

#include <cstdint>

using namespace mgs::rt;
using namespace mgs::rt::cuda;
using namespace mgs::rt::recurrent;

namespace {

constexpr unsigned kThreads = 256;

/// 1 - v (the derivative factors' complement).
__device__ inline float oneMinus(float v) { return __fsub_rn(1.0f, v); }

/// sums[j] = the sum of column j of a rows x cols matrix, added in row order
/// from 0 as the CPU's addColumnSums into a zeroed vector; also into
/// `copy` when given.
__global__ void columnSumsKernel(const float *__restrict__ m, int64_t rows, int64_t cols,
                                        float *__restrict__ sums, float *__restrict__ copy) {
  for (int64_t j = firstIndex(); j < cols; j += gridStride()) {
    float s = 0.0f;
    for (int64_t r = 0; r < rows; ++r)
      s = __fadd_rn(s, m[r * cols + j]);
    sums[j] = s;
    if (copy)
      copy[j] = s;
  }
}

/// Device memory `dst` = `src` (n floats), or zero when src is null.
inline mgsrt_status_t copyOrZero(mgsrt_ctx_t *ctx, const char *kernel, float *dst,
                                 const float *src, int64_t n) {
  cudaStream_t st = state(ctx).stream;
  if (src)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(dst, src, sizeof(float) * n,
                                                  cudaMemcpyDeviceToDevice, st));
  else
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(dst, 0, sizeof(float) * n, st));
  return MGSRT_OK;
}

/// `count` floats of the context's workspace.
inline mgsrt_status_t scratch(mgsrt_ctx_t *ctx, const char *kernel, int64_t count, float *&out) {
  void *p = nullptr;
  if (workspace(ctx, kernel, sizeof(float) * static_cast<size_t>(count), &p))
    return ctx->status;
  out = static_cast<float *>(p);
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// LSTM (gate order i, o, f, c; saved rows: i, o, f, c~, c)
//===----------------------------------------------------------------------===//

/// One step's gates from the pre-activations in `st` (N rows of 5H, step t),
/// as CPU/Lstm.cpp: the activations and the cell state go back into `st`, h
/// into `h`. `cPrev` is the previous c, row n at cPrev + n * cLd (step t - 1's
/// saved rows, the initial c0, or null at t = 0: zero).
__global__ void lstmGatesKernel(float *__restrict__ st, const float *__restrict__ cPrev,
                                int64_t cLd, const float *__restrict__ b, float *__restrict__ h,
                                int64_t n, int64_t hidden) {
  const int64_t H = hidden, G = 4 * H, S = 5 * H;
  for (int64_t e = firstIndex(); e < n * H; e += gridStride()) {
    const int64_t row = e / H, j = e % H;
    float *g = st + row * S;
    const float gi = sigmoid(__fadd_rn(g[j], __fadd_rn(b[j], b[G + j])));
    const float go = sigmoid(__fadd_rn(g[H + j], __fadd_rn(b[H + j], b[G + H + j])));
    const float gf = sigmoid(__fadd_rn(g[2 * H + j], __fadd_rn(b[2 * H + j], b[G + 2 * H + j])));
    const float gc = fastTanh(__fadd_rn(g[3 * H + j], __fadd_rn(b[3 * H + j], b[G + 3 * H + j])));
    const float c = cPrev ? __fadd_rn(__fmul_rn(gf, cPrev[row * cLd + j]), __fmul_rn(gi, gc))
                          : __fmul_rn(gi, gc);
    g[j] = gi;
    g[H + j] = go;
    g[2 * H + j] = gf;
    g[3 * H + j] = gc;
    g[G + j] = c;
    h[row * H + j] = __fmul_rn(go, fastTanh(c));
  }
}

/// One step's gate gradients (dg: N rows of 4H) from dh (dhNext + dy) and
/// dc flowing back, as CPU/Lstm.cpp; dcNext becomes step t - 1's. `cPrev` and
/// `cLd` as lstmGatesKernel's.
__global__ void lstmGateGradsKernel(const float *__restrict__ st, const float *__restrict__ cPrev,
                                    int64_t cLd, const float *__restrict__ dy,
                                    const float *__restrict__ dhNext,
                                    float *__restrict__ dcNext, float *__restrict__ dg, int64_t n,
                                    int64_t hidden) {
  const int64_t H = hidden, G = 4 * H, S = 5 * H;
  for (int64_t e = firstIndex(); e < n * H; e += gridStride()) {
    const int64_t row = e / H, j = e % H;
    const float *g = st + row * S;
    const float gi = g[j], go = g[H + j], gf = g[2 * H + j], gc = g[3 * H + j], c = g[G + j];
    const float prev = cPrev ? cPrev[row * cLd + j] : 0.0f;
    const float dh = dy ? __fadd_rn(dhNext[e], dy[e]) : dhNext[e];
    const float tc = fastTanh(c);
    const float dc =
        __fadd_rn(dcNext[e], __fmul_rn(__fmul_rn(dh, go), oneMinus(__fmul_rn(tc, tc))));
    float *d = dg + row * G;
    d[j] = __fmul_rn(__fmul_rn(__fmul_rn(dc, gc), gi), oneMinus(gi));
    d[H + j] = __fmul_rn(__fmul_rn(__fmul_rn(dh, tc), go), oneMinus(go));
    d[2 * H + j] = __fmul_rn(__fmul_rn(__fmul_rn(dc, prev), gf), oneMinus(gf));
    d[3 * H + j] = __fmul_rn(__fmul_rn(dc, gi), oneMinus(__fmul_rn(gc, gc)));
    dcNext[e] = __fmul_rn(dc, gf);
  }
}

mgsrt_status_t lstmFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::lstm_fwd);
  Shape s;
  if (parseShape(ctx, kernel, desc, s) || !checkLstmFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *b = static_cast<const float *>(bufs[3]);
  float *y = static_cast<float *>(bufs[4]), *yh = static_cast<float *>(bufs[5]),
        *yc = static_cast<float *>(bufs[6]), *saved = static_cast<float *>(bufs[7]);
  const float *h0 = static_cast<const float *>(bufs[8]),
              *c0 = static_cast<const float *>(bufs[9]);
  const int64_t N = s.n, H = s.h, G = 4 * H, S = 5 * H;
  cudaStream_t stream = state(ctx).stream;
  // Pre-activations of all steps into the first 4H columns of the saved rows.
  if (sgemm(ctx, kernel, false, true, s.t * N, G, s.i, 1.0f, x, s.i, w, s.i, 0.0f, saved, S))
    return ctx->status;
  for (int64_t t = 0; t < s.t; ++t) {
    float *st = saved + t * N * S;
    const float *hPrev = t > 0 ? y + (t - 1) * N * H : h0;
    if (hPrev && sgemm(ctx, kernel, false, true, N, G, H, 1.0f, hPrev, H, r, H, 1.0f, st, S))
      return ctx->status;
    lstmGatesKernel<<<gridFor(N * H, kThreads), kThreads, 0, stream>>>(
        st, t > 0 ? st - N * S + G : c0, t > 0 ? S : H, b, y + t * N * H, N, H);
  }
  const float *lastSt = saved + (s.t - 1) * N * S;
  if (yh)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(yh, y + (s.t - 1) * N * H, sizeof(float) * N * H,
                                                  cudaMemcpyDeviceToDevice, stream));
  if (yc)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpy2DAsync(yc, sizeof(float) * H, lastSt + G,
                                                    sizeof(float) * S, sizeof(float) * H, N,
                                                    cudaMemcpyDeviceToDevice, stream));
  return MGSRT_OK;
}

mgsrt_status_t lstmBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::lstm_bwd);
  Shape s;
  if (parseShape(ctx, kernel, desc, s) || !checkLstmBwdBufs(ctx, kernel, bufs))
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
  cudaStream_t stream = state(ctx).stream;
  // The gate gradients of all steps (T*N x 4H), then dh and dc flowing back
  // from step t + 1 (the last step's from y_h, y_c).
  float *dgates = nullptr;
  if (scratch(ctx, kernel, TN * G + 2 * N * H, dgates))
    return ctx->status;
  float *dhNext = dgates + TN * G, *dcNext = dhNext + N * H;
  if (copyOrZero(ctx, kernel, dhNext, dyh, N * H) || copyOrZero(ctx, kernel, dcNext, dyc, N * H))
    return ctx->status;
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const float *st = saved + t * N * S;
    float *dg = dgates + t * N * G;
    lstmGateGradsKernel<<<gridFor(N * H, kThreads), kThreads, 0, stream>>>(
        st, t > 0 ? st - N * S + G : c0, t > 0 ? S : H, dy ? dy + t * N * H : nullptr, dhNext,
        dcNext, dg, N, H);
    // dh_{t-1} = dG_t R (at t = 0: the initial state's gradient, when asked).
    float *dhPrev = t > 0 ? dhNext : dh0;
    if (dhPrev && sgemm(ctx, kernel, false, false, N, H, G, 1.0f, dg, G, r, H, 0.0f, dhPrev, H))
      return ctx->status;
  }
  if (dc0)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(dc0, dcNext, sizeof(float) * N * H,
                                                  cudaMemcpyDeviceToDevice, stream));
  // Over all steps at once: dW = dG^T x, dR = dG^T h_{t-1} (h_{-1} is h0 or
  // zero), dx = dG W; the biases' gradient is dG's column sums, the same for both.
  if (sgemm(ctx, kernel, true, false, G, I, TN, 1.0f, dgates, G, x, I, 0.0f, dw, I) ||
      sgemm(ctx, kernel, true, false, G, H, TN - N, 1.0f, dgates + N * G, G, y, H, 0.0f, dr, H) ||
      (h0 && sgemm(ctx, kernel, true, false, G, H, N, 1.0f, dgates, G, h0, H, 1.0f, dr, H)))
    return ctx->status;
  if (dx && sgemm(ctx, kernel, false, false, TN, I, G, 1.0f, dgates, G, w, I, 0.0f, dx, I))
    return ctx->status;
  columnSumsKernel<<<gridFor(G, kThreads), kThreads, 0, stream>>>(dgates, TN, G, db, db + G);
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// GRU (gate order z, r, h; saved rows: z, r, n, the candidate's recurrent term)
//===----------------------------------------------------------------------===//

/// One step's update and reset gates in `st` (N rows of 4H), as CPU/Gru.cpp;
/// with linear_before_reset = 0 also r * h_prev into resetH (N x H).
__global__ void gruResetKernel(float *__restrict__ st, const float *__restrict__ b,
                               const float *__restrict__ prev, float *__restrict__ resetH,
                               int64_t n, int64_t hidden) {
  const int64_t H = hidden, G = 3 * H, S = 4 * H;
  for (int64_t e = firstIndex(); e < n * H; e += gridStride()) {
    const int64_t row = e / H, j = e % H;
    float *g = st + row * S;
    g[j] = sigmoid(__fadd_rn(g[j], __fadd_rn(b[j], b[G + j])));
    const float rg = sigmoid(__fadd_rn(g[H + j], __fadd_rn(b[H + j], b[G + H + j])));
    g[H + j] = rg;
    if (prev && resetH)
      resetH[e] = __fmul_rn(rg, prev[e]);
  }
}

/// One step's candidate and h, as CPU/Gru.cpp: the candidate's recurrent
/// term (in st's last H columns; absent at t = 0, prev null) gets its bias.
__global__ void gruOutputKernel(float *__restrict__ st, const float *__restrict__ b,
                                const float *__restrict__ prev, float *__restrict__ h, int64_t n,
                                int64_t hidden, bool lbr) {
  const int64_t H = hidden, G = 3 * H, S = 4 * H;
  for (int64_t e = firstIndex(); e < n * H; e += gridStride()) {
    const int64_t row = e / H, j = e % H;
    float *g = st + row * S;
    const float z = g[j], rg = g[H + j];
    const float hn = __fadd_rn(prev ? g[G + j] : 0.0f, b[G + 2 * H + j]);
    const float cand = fastTanh(
        __fadd_rn(__fadd_rn(g[2 * H + j], b[2 * H + j]), lbr ? __fmul_rn(rg, hn) : hn));
    g[G + j] = hn;
    g[2 * H + j] = cand;
    h[e] = prev ? __fadd_rn(__fmul_rn(oneMinus(z), cand), __fmul_rn(z, prev[e]))
                : __fmul_rn(oneMinus(z), cand);
  }
}

/// One step's gradients of the input pre-activations (gx) and the recurrent
/// ones (gh), N rows of 3H each, as CPU/Gru.cpp; dhNext becomes dh z. With
/// linear_before_reset = 0, r's gradients wait for d(r h_prev)
/// (gruResetGradKernel) and r h_prev goes into rhp.
__global__ void gruGateGradsKernel(const float *__restrict__ st, const float *__restrict__ prev,
                                   const float *__restrict__ dy, float *__restrict__ dhNext,
                                   float *__restrict__ gx, float *__restrict__ gh,
                                   float *__restrict__ rhp, int64_t n, int64_t hidden, bool lbr) {
  const int64_t H = hidden, G = 3 * H, S = 4 * H;
  for (int64_t e = firstIndex(); e < n * H; e += gridStride()) {
    const int64_t row = e / H, j = e % H;
    const float *g = st + row * S;
    const float z = g[j], rg = g[H + j], cand = g[2 * H + j], hn = g[G + j];
    const float hp = prev ? prev[e] : 0.0f;
    const float dh = dy ? __fadd_rn(dhNext[e], dy[e]) : dhNext[e];
    const float da = __fmul_rn(__fmul_rn(dh, oneMinus(z)), oneMinus(__fmul_rn(cand, cand)));
    float *x = gx + row * G, *r = gh + row * G;
    x[j] = r[j] = __fmul_rn(__fmul_rn(__fmul_rn(dh, __fsub_rn(hp, cand)), z), oneMinus(z));
    x[2 * H + j] = da;
    if (lbr) {
      x[H + j] = r[H + j] = __fmul_rn(__fmul_rn(__fmul_rn(da, hn), rg), oneMinus(rg));
      r[2 * H + j] = __fmul_rn(da, rg);
    } else {
      r[2 * H + j] = da;
      rhp[e] = __fmul_rn(rg, hp);
    }
    dhNext[e] = __fmul_rn(dh, z);
  }
}

/// linear_before_reset = 0: r's gradients from d(r h_prev) (zero at t = 0,
/// prev null), and h_prev's share through r, as CPU/Gru.cpp.
__global__ void gruResetGradKernel(const float *__restrict__ st, const float *__restrict__ prev,
                                   const float *__restrict__ dResetH, float *__restrict__ dhNext,
                                   float *__restrict__ gx, float *__restrict__ gh, int64_t n,
                                   int64_t hidden) {
  const int64_t H = hidden, G = 3 * H, S = 4 * H;
  for (int64_t e = firstIndex(); e < n * H; e += gridStride()) {
    const int64_t row = e / H, j = e % H;
    float *x = gx + row * G + H, *r = gh + row * G + H;
    if (!prev) {
      x[j] = r[j] = 0.0f;
      continue;
    }
    const float rg = st[row * S + H + j], drh = dResetH[e];
    x[j] = r[j] = __fmul_rn(__fmul_rn(__fmul_rn(drh, prev[e]), rg), oneMinus(rg));
    dhNext[e] = __fadd_rn(dhNext[e], __fmul_rn(drh, rg));
  }
}

mgsrt_status_t gruFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gru_fwd);
  Shape s;
  bool lbr = false;
  if (parseGru(ctx, kernel, desc, s, lbr) || !checkGruFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]), *w = static_cast<const float *>(bufs[1]),
              *r = static_cast<const float *>(bufs[2]), *b = static_cast<const float *>(bufs[3]);
  float *y = static_cast<float *>(bufs[4]), *yh = static_cast<float *>(bufs[5]),
        *saved = static_cast<float *>(bufs[6]);
  const float *h0 = static_cast<const float *>(bufs[7]); // null: the zero state
  const int64_t N = s.n, H = s.h, G = 3 * H, S = 4 * H;
  const float *rh = r + 2 * H * H; // the candidate's recurrent weights
  cudaStream_t stream = state(ctx).stream;
  float *resetH = nullptr; // r * h_prev (linear_before_reset = 0)
  if (!lbr && scratch(ctx, kernel, N * H, resetH))
    return ctx->status;
  // Input pre-activations of z, r, h of all steps into the first 3H columns;
  // each step adds the recurrent ones of z and r and puts the candidate's
  // recurrent term into the last H columns.
  if (sgemm(ctx, kernel, false, true, s.t * N, G, s.i, 1.0f, x, s.i, w, s.i, 0.0f, saved, S))
    return ctx->status;
  for (int64_t t = 0; t < s.t; ++t) {
    const float *prev = t > 0 ? y + (t - 1) * N * H : h0;
    float *st = saved + t * N * S;
    if (prev && sgemm(ctx, kernel, false, true, N, 2 * H, H, 1.0f, prev, H, r, H, 1.0f, st, S))
      return ctx->status;
    gruResetKernel<<<gridFor(N * H, kThreads), kThreads, 0, stream>>>(st, b, prev, resetH, N, H);
    if (prev && sgemm(ctx, kernel, false, true, N, H, H, 1.0f, lbr ? prev : resetH, H, rh, H,
                      0.0f, st + G, S))
      return ctx->status;
    gruOutputKernel<<<gridFor(N * H, kThreads), kThreads, 0, stream>>>(st, b, prev,
                                                                       y + t * N * H, N, H, lbr);
  }
  if (yh)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(yh, y + (s.t - 1) * N * H, sizeof(float) * N * H,
                                                  cudaMemcpyDeviceToDevice, stream));
  return MGSRT_OK;
}

mgsrt_status_t gruBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gru_bwd);
  Shape s;
  bool lbr = false;
  if (parseGru(ctx, kernel, desc, s, lbr) || !checkGruBwdBufs(ctx, kernel, bufs))
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
  cudaStream_t stream = state(ctx).stream;
  // As on the CPU: dgx and dgh of all steps, all steps' r h_prev
  // (linear_before_reset = 0), then d(r h_prev) and the dh flowing back.
  float *dgx = nullptr;
  // (Then H zeros a row for h_{-1} when dh0 is asked for without h0.)
  const bool zeroState = dh0 && !h0;
  if (scratch(ctx, kernel, 2 * TN * G + TN * H + (zeroState ? 3 : 2) * N * H, dgx))
    return ctx->status;
  float *dgh = dgx + TN * G, *resetH = dgh + TN * G, *dResetH = resetH + TN * H;
  float *dhNext = dResetH + N * H;
  if (copyOrZero(ctx, kernel, dhNext, dyh, N * H) ||
      (zeroState && copyOrZero(ctx, kernel, dhNext + N * H, nullptr, N * H)))
    return ctx->status;
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const float *prev = t > 0 ? y + (t - 1) * N * H : zeroState ? dhNext + N * H : h0,
                *st = saved + t * N * S;
    float *gxt = dgx + t * N * G, *ght = dgh + t * N * G;
    gruGateGradsKernel<<<gridFor(N * H, kThreads), kThreads, 0, stream>>>(
        st, prev, dy ? dy + t * N * H : nullptr, dhNext, gxt, ght, resetH + t * N * H, N, H, lbr);
    if (!lbr) {
      // d(r h_prev) = da Rh; then r's gradient and h_prev's share through it.
      if (prev &&
          sgemm(ctx, kernel, false, false, N, H, H, 1.0f, ght + 2 * H, G, rh, H, 0.0f, dResetH, H))
        return ctx->status;
      gruResetGradKernel<<<gridFor(N * H, kThreads), kThreads, 0, stream>>>(st, prev, dResetH,
                                                                            dhNext, gxt, ght, N, H);
    }
    // dh_prev += dgh R (z and r's rows only when linear_before_reset = 0).
    if (prev && sgemm(ctx, kernel, false, false, N, H, lbr ? G : 2 * H, 1.0f, ght, G, r, H, 1.0f,
                      dhNext, H))
      return ctx->status;
  }
  if (dh0)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(dh0, dhNext, sizeof(float) * N * H,
                                                  cudaMemcpyDeviceToDevice, stream));
  // Over all steps at once, as on the CPU: dW = dgx^T x, dR = dgh^T h_prev
  // (its last H rows from r h_prev when linear_before_reset = 0; h_{-1} is h0
  // or zero), dx = dgx W; the biases: column sums.
  if (sgemm(ctx, kernel, true, false, G, I, TN, 1.0f, dgx, G, x, I, 0.0f, dw, I))
    return ctx->status;
  const int64_t first = h0 ? 0 : N, rows = lbr ? G : 2 * H;
  if (sgemm(ctx, kernel, true, false, rows, H, TN - N, 1.0f, dgh + N * G, G, y, H, 0.0f, dr, H) ||
      (h0 && sgemm(ctx, kernel, true, false, rows, H, N, 1.0f, dgh, G, h0, H, 1.0f, dr, H)) ||
      (!lbr && sgemm(ctx, kernel, true, false, H, H, TN - first, 1.0f, dgh + first * G + 2 * H,
                     G, resetH + first * H, H, 0.0f, dr + 2 * H * H, H)))
    return ctx->status;
  if (dx && sgemm(ctx, kernel, false, false, TN, I, G, 1.0f, dgx, G, w, I, 0.0f, dx, I))
    return ctx->status;
  columnSumsKernel<<<gridFor(G, kThreads), kThreads, 0, stream>>>(dgx, TN, G, db, nullptr);
  columnSumsKernel<<<gridFor(G, kThreads), kThreads, 0, stream>>>(dgh, TN, G, db + G, nullptr);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t lstm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::lstm_fwd), desc, bufs,
                       [&] { return lstmFwd(ctx, desc, bufs); });
}
mgsrt_status_t lstm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::lstm_bwd), desc, bufs,
                       [&] { return lstmBwd(ctx, desc, bufs); });
}
mgsrt_status_t gru_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gru_fwd), desc, bufs,
                       [&] { return gruFwd(ctx, desc, bufs); });
}
mgsrt_status_t gru_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gru_bwd), desc, bufs,
                       [&] { return gruBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
