//===- Elementwise.cpp - Unary, clip, binary, copy/zero/accumulate --------===//

#include "Descriptors/ElementwiseDesc.h"
#include "Kernels/BinaryMath.h"
#include "Kernels/UnaryMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <omp.h>

using namespace mgs::rt;

namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// y = x^p for a constant p; the exponents LayerNorm and GELU use (2, 3, 0.5,
/// 1) as products or a square root, as exact as PyTorch's own.
void unaryPow(const float *x, float *y, int64_t n, float p) {
  if (p == 2.0f) {
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] * x[i];
  } else if (p == 3.0f) {
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] * x[i] * x[i];
  } else if (p == 0.5f) {
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::sqrt(x[i]);
  } else if (p == 1.0f) {
    std::memcpy(y, x, sizeof(float) * n);
  } else {
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::pow(x[i], p);
  }
}

/// dx = dy p x^(p-1).
void unaryPowGrad(const float *x, const float *dy, float *dx, int64_t n, float p) {
  if (p == 2.0f) {
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * 2.0f * x[i];
  } else if (p == 3.0f) {
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * 3.0f * (x[i] * x[i]);
  } else if (p == 1.0f) {
    std::memcpy(dx, dy, sizeof(float) * n);
  } else if (p == 0.0f) {
    std::memset(dx, 0, sizeof(float) * n);
  } else {
    const float q = p - 1.0f;
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * p * std::pow(x[i], q);
  }
}

/// UnaryMath.h's ops, forward and backward (every one reads x), indexed by
/// op - MGSRT_UNARY_ABS.
template <int Op> void laterUnaryFwd(const float *x, float *y, int64_t n, float a, float b) {
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = unary::value<Op>(x[i], a, b);
}
template <int Op>
void laterUnaryBwd(const float *x, const float *dy, float *dx, int64_t n, float a, float b) {
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = unary::grad<Op>(x[i], dy[i], a, b);
}
template <int... Ops> struct LaterUnary {
  static constexpr void (*fwd[])(const float *, float *, int64_t, float,
                                 float) = {laterUnaryFwd<Ops>...};
  static constexpr void (*bwd[])(const float *, const float *, float *, int64_t, float,
                                 float) = {laterUnaryBwd<Ops>...};
};
using Later = LaterUnary<MGSRT_UNARY_ABS, MGSRT_UNARY_LOG, MGSRT_UNARY_SOFTSIGN, MGSRT_UNARY_MISH,
                         MGSRT_UNARY_ELU, MGSRT_UNARY_CELU, MGSRT_UNARY_SELU, MGSRT_UNARY_ROUND,
                         MGSRT_UNARY_FLOOR, MGSRT_UNARY_CEIL>;

mgsrt_status_t unaryFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  UnaryParams p{};
  if (parseUnary(ctx, kernelName(Kernel::unary_fwd), desc, bufs, false, p))
    return ctx->status;
  const int64_t n = p.n;
  const float alpha = p.alpha, beta = p.beta;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  switch (p.op) {
  case MGSRT_UNARY_RELU:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] < 0.0f ? 0.0f : x[i];
    break;
  case MGSRT_UNARY_LEAKY_RELU:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] < 0.0f ? alpha * x[i] : x[i];
    break;
  case MGSRT_UNARY_SIGMOID:
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = 1.0f / (1.0f + std::exp(-x[i]));
    break;
  case MGSRT_UNARY_TANH:
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::tanh(x[i]);
    break;
  case MGSRT_UNARY_SQRT:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::sqrt(x[i]);
    break;
  case MGSRT_UNARY_ERF:
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::erf(x[i]);
    break;
  case MGSRT_UNARY_POW:
    unaryPow(x, y, n, alpha);
    break;
  case MGSRT_UNARY_HARD_SIGMOID:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::min(1.0f, std::max(0.0f, alpha * x[i] + beta));
    break;
  case MGSRT_UNARY_HARD_SWISH:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = x[i] * std::min(1.0f, std::max(0.0f, alpha * x[i] + beta));
    break;
  case MGSRT_UNARY_EXP:
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::exp(x[i]);
    break;
  case MGSRT_UNARY_COS:
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::cos(x[i]);
    break;
  case MGSRT_UNARY_SIN:
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::sin(x[i]);
    break;
  default: // (parseUnary checked the range)
    Later::fwd[p.op - MGSRT_UNARY_ABS](x, y, n, alpha, beta);
    break;
  }
  return MGSRT_OK;
}

mgsrt_status_t unaryBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  UnaryParams p{};
  if (parseUnary(ctx, kernelName(Kernel::unary_bwd), desc, bufs, true, p))
    return ctx->status;
  const int64_t op = p.op, n = p.n;
  const float alpha = p.alpha, beta = p.beta;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *y = static_cast<const float *>(bufs[1]);
  const float *dy = static_cast<const float *>(bufs[2]);
  float *dx = static_cast<float *>(bufs[3]);
  switch (op) {
  case MGSRT_UNARY_RELU:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const float g = dy[i]; // loaded unconditionally, so the select vectorizes
      dx[i] = x[i] > 0.0f ? g : 0.0f;
    }
    break;
  case MGSRT_UNARY_LEAKY_RELU:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const float g = dy[i];
      dx[i] = x[i] > 0.0f ? g : alpha * g;
    }
    break;
  case MGSRT_UNARY_SIGMOID:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * y[i] * (1.0f - y[i]);
    break;
  case MGSRT_UNARY_TANH:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * (1.0f - y[i] * y[i]);
    break;
  case MGSRT_UNARY_SQRT:
    // d sqrt(x) = 1 / (2 sqrt(x)), from the forward output.
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * 0.5f / y[i];
    break;
  case MGSRT_UNARY_ERF: {
    // d erf(x) = 2 / sqrt(pi) exp(-x^2).
    const float c = static_cast<float>(1.1283791670955126);
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * c * std::exp(-x[i] * x[i]);
    break;
  }
  case MGSRT_UNARY_POW:
    unaryPowGrad(x, dy, dx, n, alpha);
    break;
  case MGSRT_UNARY_HARD_SIGMOID:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const float g = dy[i], u = alpha * x[i] + beta;
      dx[i] = (0.0f < u) & (u < 1.0f) ? alpha * g : 0.0f;
    }
    break;
  case MGSRT_UNARY_HARD_SWISH:
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const float g = dy[i], u = alpha * x[i] + beta;
      dx[i] = u < 0.0f ? 0.0f : u > 1.0f ? g : g * (u + alpha * x[i]);
    }
    break;
  case MGSRT_UNARY_EXP:
    // d exp(x) = exp(x), the forward output.
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * y[i];
    break;
  case MGSRT_UNARY_COS:
    // d cos(x) = -sin(x).
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = -dy[i] * std::sin(x[i]);
    break;
  case MGSRT_UNARY_SIN:
    // d sin(x) = cos(x).
#pragma omp parallel for if (n >= kParallelGrain / 8) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * std::cos(x[i]);
    break;
  default:
    Later::bwd[op - MGSRT_UNARY_ABS](x, dy, dx, n, alpha, beta);
    break;
  }
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

mgsrt_status_t clipFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseClip(ctx, kernelName(Kernel::clip_fwd), desc, bufs, false, n))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float lo = *static_cast<const float *>(bufs[1]);
  const float hi = *static_cast<const float *>(bufs[2]);
  float *y = static_cast<float *>(bufs[3]);
  // ONNX: min(max(x, lo), hi); NaN passes through.
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] < lo ? lo : x[i];
    y[i] = hi < v ? hi : v;
  }
  return MGSRT_OK;
}

mgsrt_status_t clipBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseClip(ctx, kernelName(Kernel::clip_bwd), desc, bufs, true, n))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float lo = *static_cast<const float *>(bufs[1]);
  const float hi = *static_cast<const float *>(bufs[2]);
  const float *dy = static_cast<const float *>(bufs[3]);
  float *dx = static_cast<float *>(bufs[4]);
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float g = dy[i], v = x[i]; // loaded unconditionally, so the select vectorizes
    dx[i] = (lo <= v) & (v <= hi) ? g : 0.0f;
  }
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Binary (broadcasting)
//===----------------------------------------------------------------------===//

/// Offsets of operands 1 and 2 at the start of row `row` (all dims but the
/// last, in row-major order).
inline void rowOffsets(const BroadcastSpace<3> &sp, int64_t row, int64_t &o1, int64_t &o2) {
  o1 = o2 = 0;
  for (int64_t d = sp.rank - 2; d >= 0; --d) {
    int64_t c = row % sp.ext[d];
    row /= sp.ext[d];
    o1 += c * sp.stride[1][d];
    o2 += c * sp.stride[2][d];
  }
}

template <int Op, int SL, int SR>
inline void binaryRow(const float *__restrict a, const float *__restrict b, float *__restrict y,
                      int64_t len) {
#pragma omp simd
  for (int64_t i = 0; i < len; ++i)
    y[i] = binary::value<Op>(a[i * SL], b[i * SR]);
}

template <int Op>
void binaryFwdOp(const BroadcastSpace<3> &sp, int64_t total, const float *a, const float *b,
                 float *y) {
  if (sp.rank == 0) {
    y[0] = binary::value<Op>(a[0], b[0]);
    return;
  }
  const int64_t len = sp.ext[sp.rank - 1];
  const int64_t s1 = sp.stride[1][sp.rank - 1], s2 = sp.stride[2][sp.rank - 1];
  const int64_t rows = total / len;
#pragma omp parallel for if (total >= kParallelGrain) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t o1, o2;
    rowOffsets(sp, row, o1, o2);
    float *yr = y + row * len;
    if (s1 && s2)
      binaryRow<Op, 1, 1>(a + o1, b + o2, yr, len);
    else if (s1)
      binaryRow<Op, 1, 0>(a + o1, b + o2, yr, len);
    else if (s2)
      binaryRow<Op, 0, 1>(a + o1, b + o2, yr, len);
    else
      binaryRow<Op, 0, 0>(a + o1, b + o2, yr, len);
  }
}

mgsrt_status_t binaryFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  BinaryShape s;
  if (parseBinary(ctx, kernelName(Kernel::binary_fwd), desc, bufs, false, s))
    return ctx->status;
  if (s.total == 0)
    return MGSRT_OK;
  BroadcastSpace<3> sp;
  buildBinarySpace(s, sp);
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  float *y = static_cast<float *>(bufs[2]);
  binary::dispatch(s.op, [&](auto op) { binaryFwdOp<decltype(op)::value>(sp, s.total, a, b, y); });
  return MGSRT_OK;
}

/// dT where T has the output's shape (nothing to reduce): elementwise.
template <int Op, int Target>
void binaryGradElementwise(const BroadcastSpace<3> &sp, int64_t total, const float *g,
                           const float *a, const float *b, float *dt) {
  const int64_t last = sp.rank - 1;
  const int64_t len = sp.ext[last], rows = total / len;
  const int64_t sa = sp.stride[1][last], sb = sp.stride[2][last];
#pragma omp parallel for if (total >= kParallelGrain) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t oa, ob;
    rowOffsets(sp, row, oa, ob);
    const float *__restrict gr = g + row * len;
    const float *__restrict ar = a + oa;
    const float *__restrict br = b + ob;
    float *__restrict dr = dt + row * len;
    if (sa && sb) {
#pragma omp simd
      for (int64_t j = 0; j < len; ++j)
        dr[j] = binary::grad<Op, Target>(gr[j], ar[j], br[j]);
    } else if (sa) {
#pragma omp simd
      for (int64_t j = 0; j < len; ++j)
        dr[j] = binary::grad<Op, Target>(gr[j], ar[j], br[0]);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < len; ++j)
        dr[j] = binary::grad<Op, Target>(gr[j], ar[0], br[j]);
    }
  }
}

/// dT = sum over the broadcast dims of binaryGrad. The iteration space is
/// split into rows of T (kept dims) and the reduced dims (stride 0 in T).
/// When T's innermost dim is kept, each row is a contiguous run of `len`
/// elements of T accumulated over the reduced positions; otherwise each row
/// is one element of T and the innermost (reduced) dim is a contiguous sum.
template <int Op, int Target>
void binaryBwdTarget(const BroadcastSpace<3> &sp, int64_t total, const float *g,
                     const float *a, const float *b, float *dt, int64_t targetSize) {
  const int t = 1 + Target; // operand index of T in the space
  if (sp.rank == 0) {
    dt[0] = binary::grad<Op, Target>(g[0], a[0], b[0]);
    return;
  }
  if (targetSize == total) {
    binaryGradElementwise<Op, Target>(sp, total, g, a, b, dt);
    return;
  }
  int64_t keptDims[kMaxRank], redDims[kMaxRank], nk = 0, nr = 0;
  for (int64_t d = 0; d < sp.rank; ++d)
    (sp.stride[t][d] != 0 ? keptDims[nk++] : redDims[nr++]) = d;
  const int64_t last = sp.rank - 1;
  const bool innerKept = sp.stride[t][last] != 0;
  // Row dims: kept dims, minus the innermost one when it is kept.
  const int64_t nRowDims = innerKept ? nk - 1 : nk;
  // Odometer dims: reduced dims, minus the innermost one when it is reduced.
  const int64_t nOdoDims = innerKept ? nr : nr - 1;
  const int64_t len = sp.ext[last];
  const int64_t rows = innerKept ? targetSize / len : targetSize;
  int64_t odoCount = 1;
  for (int64_t i = 0; i < nOdoDims; ++i)
    odoCount *= sp.ext[redDims[i]];
  const int64_t sa = sp.stride[1][last], sb = sp.stride[2][last];

  // A target of few rows (a bias: one) also splits its reduced positions into
  // blocks of kOdoBlock, each summed apart, so that it spreads over the threads.
  // The blocks depend on the shape alone and their sums add in block order:
  // the same bits whatever the thread count.
  constexpr int64_t kOdoBlock = 64;
  const int64_t blocks =
      rows < 64 && odoCount > kOdoBlock ? (odoCount + kOdoBlock - 1) / kOdoBlock : 1;
  const int64_t perBlock = blocks > 1 ? kOdoBlock : odoCount; // reduced positions a block
  const int64_t items = rows * blocks;
  const bool parallel = total >= kParallelGrain && items > 1;
  const int64_t accLen = innerKept ? len : 1;
  // Each (row, block)'s sums when there are several blocks; else each thread's.
  std::vector<double> accAll(accLen * (blocks > 1 ? items
                                                  : parallel ? omp_get_max_threads() : 1));
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t row = item / blocks, block = item % blocks;
      double *acc = accAll.data() + accLen * (blocks > 1 ? item : omp_get_thread_num());
      // Offsets of out, lhs, rhs, T at the row's start.
      int64_t og = 0, oa = 0, ob = 0, ot = 0;
      int64_t r = row;
      for (int64_t i = nRowDims - 1; i >= 0; --i) {
        int64_t d = keptDims[i];
        int64_t c = r % sp.ext[d];
        r /= sp.ext[d];
        og += c * sp.stride[0][d];
        oa += c * sp.stride[1][d];
        ob += c * sp.stride[2][d];
        ot += c * sp.stride[t][d];
      }
      std::fill(acc, acc + accLen, 0.0);
      const int64_t kEnd = std::min(odoCount, (block + 1) * perBlock);
      for (int64_t k = block * perBlock; k < kEnd; ++k) {
        int64_t pg = og, pa = oa, pb = ob, q = k;
        for (int64_t i = nOdoDims - 1; i >= 0; --i) {
          int64_t d = redDims[i];
          int64_t c = q % sp.ext[d];
          q /= sp.ext[d];
          pg += c * sp.stride[0][d];
          pa += c * sp.stride[1][d];
          pb += c * sp.stride[2][d];
        }
        const float *gr = g + pg, *ar = a + pa, *br = b + pb;
        if (innerKept) {
          for (int64_t j = 0; j < len; ++j)
            acc[j] += binary::grad<Op, Target>(gr[j], ar[j * sa], br[j * sb]);
        } else {
          double sum = acc[0]; // one running sum, in the row's order
          for (int64_t j = 0; j < len; ++j)
            sum += binary::grad<Op, Target>(gr[j], ar[j * sa], br[j * sb]);
          acc[0] = sum;
        }
      }
      if (blocks == 1)
        for (int64_t j = 0; j < accLen; ++j)
          dt[ot + j] = static_cast<float>(acc[j]);
    }
    if (blocks > 1) {
      // Each row's blocks, in order.
#pragma omp for schedule(static)
      for (int64_t row = 0; row < rows; ++row) {
        int64_t ot = 0, r = row;
        for (int64_t i = nRowDims - 1; i >= 0; --i) {
          int64_t d = keptDims[i];
          ot += (r % sp.ext[d]) * sp.stride[t][d];
          r /= sp.ext[d];
        }
        for (int64_t j = 0; j < accLen; ++j) {
          double sum = 0.0;
          for (int64_t block = 0; block < blocks; ++block)
            sum += accAll[(row * blocks + block) * accLen + j];
          dt[ot + j] = static_cast<float>(sum);
        }
      }
    }
  }
}

template <int Op>
void binaryBwdOp(const BinaryShape &s, const BroadcastSpace<3> &sp, const float *a,
                 const float *b, const float *g, float *da, float *db) {
  if (da)
    binaryBwdTarget<Op, 0>(sp, s.total, g, a, b, da, s.lhsSize);
  if (db)
    binaryBwdTarget<Op, 1>(sp, s.total, g, a, b, db, s.rhsSize);
}

mgsrt_status_t binaryBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  BinaryShape s;
  if (parseBinary(ctx, kernelName(Kernel::binary_bwd), desc, bufs, true, s))
    return ctx->status;
  float *da = static_cast<float *>(bufs[3]);
  float *db = static_cast<float *>(bufs[4]);
  const int64_t lhsSize = s.lhsSize, rhsSize = s.rhsSize;
  if (s.total == 0) {
    // Nothing flows back; operands that broadcast from size 1 get zeros.
    if (da)
      std::memset(da, 0, sizeof(float) * lhsSize);
    if (db)
      std::memset(db, 0, sizeof(float) * rhsSize);
    return MGSRT_OK;
  }
  BroadcastSpace<3> sp;
  buildBinarySpace(s, sp);
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *g = static_cast<const float *>(bufs[2]);
  binary::dispatch(s.op,
                   [&](auto op) { binaryBwdOp<decltype(op)::value>(s, sp, a, b, g, da, db); });
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Copy, zero, accumulate
//===----------------------------------------------------------------------===//

mgsrt_status_t copyKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseCopy(ctx, kernelName(Kernel::copy), desc, bufs, n))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  if (x == y)
    return MGSRT_OK;
  constexpr int64_t chunk = 1 << 16;
  const int64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for if (n >= 16 * kParallelGrain) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = c * chunk, end = std::min(n, begin + chunk);
    std::memcpy(y + begin, x + begin, sizeof(float) * (end - begin));
  }
  return MGSRT_OK;
}

mgsrt_status_t zeroKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseZero(ctx, kernelName(Kernel::zero), desc, bufs, n))
    return ctx->status;
  float *y = static_cast<float *>(bufs[0]);
  constexpr int64_t chunk = 1 << 16;
  const int64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for if (n >= 16 * kParallelGrain) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = c * chunk, end = std::min(n, begin + chunk);
    std::memset(y + begin, 0, sizeof(float) * (end - begin));
  }
  return MGSRT_OK;
}

mgsrt_status_t accumulateKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseAccumulate(ctx, kernelName(Kernel::accumulate), desc, bufs, n))
    return ctx->status;
  // y may alias a or b: no restrict here.
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  float *y = static_cast<float *>(bufs[2]);
#pragma omp parallel for simd if (n >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = a[i] + b[i];
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t unary_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::unary_fwd), desc, bufs, [&] { return unaryFwd(ctx, desc, bufs); });
}
mgsrt_status_t unary_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::unary_bwd), desc, bufs, [&] { return unaryBwd(ctx, desc, bufs); });
}
mgsrt_status_t clip_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::clip_fwd), desc, bufs, [&] { return clipFwd(ctx, desc, bufs); });
}
mgsrt_status_t clip_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::clip_bwd), desc, bufs, [&] { return clipBwd(ctx, desc, bufs); });
}
mgsrt_status_t binary_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::binary_fwd), desc, bufs, [&] { return binaryFwd(ctx, desc, bufs); });
}
mgsrt_status_t binary_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::binary_bwd), desc, bufs, [&] { return binaryBwd(ctx, desc, bufs); });
}
mgsrt_status_t copy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::copy), desc, bufs, [&] { return copyKernel(ctx, desc, bufs); });
}
mgsrt_status_t zero(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::zero), desc, bufs, [&] { return zeroKernel(ctx, desc, bufs); });
}
mgsrt_status_t accumulate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::accumulate), desc, bufs,
                   [&] { return accumulateKernel(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
