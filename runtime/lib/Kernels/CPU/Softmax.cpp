//===- Softmax.cpp - Softmax, log-softmax, softmax cross-entropy ----------===//
//
// The tensor is outer x axis x inner. With inner == 1 each row is
// contiguous and one function does it (softmaxRow, softmaxGradRow,
// crossEntropyRow: VectorMath.h's exp, sums in double, cloned for AVX-512 and
// AVX2 so their loops run in vectors); otherwise a task handles one outer
// index and a chunk of inner positions, walking the axis with vectors of the
// chunk's width.
//
//===----------------------------------------------------------------------===//

#include "Descriptors/SoftmaxDesc.h"
#include "Kernels/CPU/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mgs::rt;

namespace {

constexpr int64_t kChunk = 256;

using mgs::rt::cpu::fastExp;

/// The largest of a row's n >= 1 values.
MGSRT_SIMD_CLONES float rowMax(const float *__restrict x, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : mx)
  for (int64_t i = 0; i < n; ++i)
    mx = x[i] > mx ? x[i] : mx;
  return mx;
}

/// One contiguous row: y = softmax(x) or log_softmax(x). The exps are
/// float (fastExp: 0 for a masked -inf score), their sum double.
MGSRT_SIMD_CLONES void softmaxRow(const float *__restrict x, float *__restrict y, int64_t n,
                                  bool log) {
  const float mx = rowMax(x, n);
  double sum = 0.0;
  if (log) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i)
      sum += fastExp(x[i] - mx);
    const float lse = mx + static_cast<float>(std::log(sum));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] - lse;
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) {
      const float e = fastExp(x[i] - mx);
      y[i] = e;
      sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] *= inv;
  }
}

/// One contiguous row of the backward, the sum in double:
///   softmax:     dx = y * (dy - sum(dy * y))
///   log-softmax: dx = dy - exp(y) * sum(dy)
MGSRT_SIMD_CLONES void softmaxGradRow(const float *__restrict y, const float *__restrict dy,
                                      float *__restrict dx, int64_t n, bool log) {
  double sum = 0.0;
  if (log) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i)
      sum += dy[i];
    const float s = static_cast<float>(sum);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] - fastExp(y[i]) * s;
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i)
      sum += dy[i] * y[i];
    const float s = static_cast<float>(sum);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      dx[i] = y[i] * (dy[i] - s);
  }
}

mgsrt_status_t softmaxFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  SoftmaxParams p;
  if (parseSoftmax(ctx, kernelName(Kernel::softmax_fwd), desc, bufs, false, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  const int64_t outer = p.outer, axis = p.axis, inner = p.inner;
  const int64_t total = outer * axis * inner;
  if (total == 0)
    return MGSRT_OK;
  if (inner == 1) {
#pragma omp parallel for if (total >= kParallelGrain / 4 && outer > 1) schedule(static)
    for (int64_t o = 0; o < outer; ++o)
      softmaxRow(x + o * axis, y + o * axis, axis, p.log);
    return MGSRT_OK;
  }
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
#pragma omp parallel for if (total >= kParallelGrain / 4 && outer * chunks > 1) schedule(static)
  for (int64_t task = 0; task < outer * chunks; ++task) {
    const int64_t o = task / chunks, i0 = (task % chunks) * kChunk;
    const int64_t w = std::min(kChunk, inner - i0);
    const float *xb = x + o * axis * inner + i0;
    float *yb = y + o * axis * inner + i0;
    float mx[kChunk];
    double sum[kChunk];
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -std::numeric_limits<float>::infinity();
      sum[j] = 0.0;
    }
    for (int64_t a = 0; a < axis; ++a)
      for (int64_t j = 0; j < w; ++j)
        mx[j] = std::max(mx[j], xb[a * inner + j]);
    for (int64_t a = 0; a < axis; ++a)
      for (int64_t j = 0; j < w; ++j) {
        const float e = fastExp(xb[a * inner + j] - mx[j]);
        if (!p.log)
          yb[a * inner + j] = e;
        sum[j] += e;
      }
    if (p.log) {
      float lse[kChunk];
      for (int64_t j = 0; j < w; ++j)
        lse[j] = mx[j] + static_cast<float>(std::log(sum[j]));
      for (int64_t a = 0; a < axis; ++a)
        for (int64_t j = 0; j < w; ++j)
          yb[a * inner + j] = xb[a * inner + j] - lse[j];
    } else {
      float inv[kChunk];
      for (int64_t j = 0; j < w; ++j)
        inv[j] = static_cast<float>(1.0 / sum[j]);
      for (int64_t a = 0; a < axis; ++a)
        for (int64_t j = 0; j < w; ++j)
          yb[a * inner + j] *= inv[j];
    }
  }
  return MGSRT_OK;
}

mgsrt_status_t softmaxBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  SoftmaxParams p;
  if (parseSoftmax(ctx, kernelName(Kernel::softmax_bwd), desc, bufs, true, p))
    return ctx->status;
  const float *y = static_cast<const float *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  const int64_t outer = p.outer, axis = p.axis, inner = p.inner;
  const int64_t total = outer * axis * inner;
  if (total == 0)
    return MGSRT_OK;
  if (inner == 1) {
#pragma omp parallel for if (total >= kParallelGrain / 4 && outer > 1) schedule(static)
    for (int64_t o = 0; o < outer; ++o)
      softmaxGradRow(y + o * axis, dy + o * axis, dx + o * axis, axis, p.log);
    return MGSRT_OK;
  }
  // As softmaxGradRow, a chunk of inner positions at a time.
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
#pragma omp parallel for if (total >= kParallelGrain / 4 && outer * chunks > 1) schedule(static)
  for (int64_t task = 0; task < outer * chunks; ++task) {
    const int64_t o = task / chunks, i0 = (task % chunks) * kChunk;
    const int64_t w = std::min(kChunk, inner - i0);
    const int64_t base = o * axis * inner + i0;
    const float *yb = y + base, *gb = dy + base;
    float *ob = dx + base;
    double sum[kChunk];
    for (int64_t j = 0; j < w; ++j)
      sum[j] = 0.0;
    for (int64_t a = 0; a < axis; ++a)
      for (int64_t j = 0; j < w; ++j)
        sum[j] += p.log ? gb[a * inner + j] : gb[a * inner + j] * yb[a * inner + j];
    float s[kChunk];
    for (int64_t j = 0; j < w; ++j)
      s[j] = static_cast<float>(sum[j]);
    if (p.log) {
      for (int64_t a = 0; a < axis; ++a)
        for (int64_t j = 0; j < w; ++j)
          ob[a * inner + j] = gb[a * inner + j] - fastExp(yb[a * inner + j]) * s[j];
    } else {
      for (int64_t a = 0; a < axis; ++a)
        for (int64_t j = 0; j < w; ++j)
          ob[a * inner + j] = yb[a * inner + j] * (gb[a * inner + j] - s[j]);
    }
  }
  return MGSRT_OK;
}

/// One row of softmax cross-entropy against the target (1 - e) onehot(label)
/// + e / c: returns log(sum(exp(row))) - (1 - e) row[label] - e mean(row) and,
/// when `drow` is not null, writes (softmax(row) - target) * invN into it.
/// One float exp per logit (fastExp), summed in double, kept in `drow`
/// between the two passes (without it, only summed). e = 0 computes no mean.
MGSRT_SIMD_CLONES double crossEntropyRow(const float *__restrict row, int64_t label, int64_t c,
                                         double smoothing, double invN,
                                         float *__restrict drow) {
  const float mx = rowMax(row, c);
  double sum = 0.0, rowSum = 0.0;
  if (smoothing != 0.0) {
#pragma omp simd reduction(+ : rowSum)
    for (int64_t j = 0; j < c; ++j)
      rowSum += row[j];
  }
  const double picked = smoothing == 0.0
                            ? row[label]
                            : (1.0 - smoothing) * row[label] + smoothing * rowSum / c;
  if (!drow) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < c; ++j)
      sum += fastExp(row[j] - mx);
    return mx + std::log(sum) - picked;
  }
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < c; ++j) {
    const float v = fastExp(row[j] - mx);
    drow[j] = v;
    sum += v;
  }
  const float scale = static_cast<float>(invN / sum);
  const float spread = static_cast<float>(smoothing * invN / c);
#pragma omp simd
  for (int64_t j = 0; j < c; ++j)
    drow[j] = drow[j] * scale - spread;
  drow[label] -= static_cast<float>((1.0 - smoothing) * invN);
  return mx + std::log(sum) - picked;
}

/// One row with class weights w (PyTorch's weight=): returns rowScale *
/// log(sum(exp(row))) - (1 - e) w[label] row[label] - e / c sum_j w[j] row[j]
/// (rowScale = p.rowScale(label, weightSum)) and, when `drow` is not null,
/// writes (softmax(row) rowScale - (1 - e) w[label] onehot - e / c w) * invW.
MGSRT_SIMD_CLONES double weightedCrossEntropyRow(const float *__restrict row, int64_t label,
                                                 const CrossEntropyParams &p, double weightSum,
                                                 double invW, float *__restrict drow) {
  const int64_t c = p.c;
  const float *__restrict w = p.weight;
  const double e = p.smoothing;
  const float mx = rowMax(row, c);
  double sum = 0.0, weighted = 0.0;
  if (e != 0.0) {
#pragma omp simd reduction(+ : weighted)
    for (int64_t j = 0; j < c; ++j)
      weighted += static_cast<double>(w[j]) * row[j];
  }
  const double scale = p.rowScale(label, weightSum);
  const double picked = (1.0 - e) * w[label] * row[label] + e * weighted / c;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < c; ++j) {
    const float v = fastExp(row[j] - mx);
    if (drow)
      drow[j] = v;
    sum += v;
  }
  const double lse = mx + std::log(sum);
  if (drow) {
    const float rowFactor = static_cast<float>(scale * invW / sum);
    const float spread = static_cast<float>(e * invW / c);
#pragma omp simd
    for (int64_t j = 0; j < c; ++j)
      drow[j] = drow[j] * rowFactor - spread * w[j];
    drow[label] -= static_cast<float>((1.0 - e) * w[label] * invW);
  }
  return scale * lse - picked;
}

/// One row of log-probabilities (the negative log-likelihood): returns
/// -w[label] row[label] and, when `drow` is not null, writes its gradient,
/// -w[label] invW at the label and 0 elsewhere.
double logProbabilityRow(const float *__restrict row, int64_t label, const CrossEntropyParams &p,
                         double invW, float *__restrict drow) {
  const double w = p.classWeight(label);
  if (drow) {
    std::fill_n(drow, p.c, 0.0f);
    drow[label] = static_cast<float>(-w * invW);
  }
  return -w * row[label];
}

mgsrt_status_t softmaxCrossEntropy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::softmax_cross_entropy);
  CrossEntropyParams p;
  if (parseCrossEntropy(ctx, kernel, desc, bufs, p))
    return ctx->status;
  const int64_t n = p.n, c = p.c;
  const float *logits = static_cast<const float *>(bufs[0]);
  const int64_t *labels = static_cast<const int64_t *>(bufs[1]);
  float *loss = static_cast<float *>(bufs[2]);
  float *dlogits = static_cast<float *>(bufs[3]);
  // The mean's denominator: the counted samples, or their classes' weights.
  double norm = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    bool bad;
    const bool counted = p.counts(labels[i], bad);
    if (bad)
      return badLabel(ctx, kernel, labels[i], i, p);
    if (counted)
      norm += p.classWeight(labels[i]);
  }
  double weightSum = c;
  if (p.weight) {
    weightSum = 0.0;
    for (int64_t j = 0; j < c; ++j)
      weightSum += p.weight[j];
  }
  // Every label ignored (or weighing 0): no loss and no gradient (PyTorch's
  // mean is 0 / 0).
  const double invN = p.reductionScale(norm);
  const double gradScale =
      invN * (p.unscaled ? 1.0 : static_cast<double>(ctx->lossScale)); // invN at scale 1
  double total = 0.0;
#pragma omp parallel for reduction(+ : total) if (n * c >= kParallelGrain / 4) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float *drow = dlogits ? dlogits + i * c : nullptr;
    if (labels[i] == p.ignoreIndex) {
      if (drow)
        std::fill_n(drow, c, 0.0f);
      if (p.perSample)
        loss[i] = 0.0f;
      continue;
    }
    const double row =
        p.logProbabilities ? logProbabilityRow(logits + i * c, labels[i], p, gradScale, drow)
        : p.weight
            ? weightedCrossEntropyRow(logits + i * c, labels[i], p, weightSum, gradScale, drow)
            : crossEntropyRow(logits + i * c, labels[i], c, p.smoothing, gradScale, drow);
    if (p.perSample)
      loss[i] = static_cast<float>(row);
    else
      total += row;
  }
  if (!p.perSample)
    *loss = static_cast<float>(total * invN);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t softmax_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::softmax_fwd), desc, bufs, [&] { return softmaxFwd(ctx, desc, bufs); });
}
mgsrt_status_t softmax_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::softmax_bwd), desc, bufs, [&] { return softmaxBwd(ctx, desc, bufs); });
}
mgsrt_status_t softmax_cross_entropy(mgsrt_ctx_t *ctx, const int64_t *desc,
                                           void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::softmax_cross_entropy), desc, bufs,
                   [&] { return softmaxCrossEntropy(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
