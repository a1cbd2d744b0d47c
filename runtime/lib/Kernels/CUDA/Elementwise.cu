//===- Elementwise.cu - Unary, clip, binary, copy/zero/accumulate on a GPU ===//
//
// The CPU kernels' semantics (CPU/Elementwise.cpp) and checks
// (Descriptors/ElementwiseDesc.h). Per-element results are the same float
// operations as the CPU's (products are kept out of fused multiply-adds
// where the CPU rounds them), so only the transcendental functions differ in
// the last bits. binary_bwd sums over the broadcast dims in double, in a
// fixed order (partial sums per chunk, then the chunks in order): no atomics,
// the same result on every run.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/ElementwiseDesc.h"
#include "Kernels/BinaryMath.h"
#include "Kernels/UnaryMath.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;


//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// alpha x + beta rounded after each operation (no FMA), as on the CPU.
__device__ inline float hardLinear(float alpha, float v, float beta) {
  return __fadd_rn(__fmul_rn(alpha, v), beta);
}

template <int Op>
__global__ void unaryFwdKernel(const float *__restrict__ x, float *__restrict__ y, int64_t n,
                               float alpha, float beta) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    const float v = x[i];
    if constexpr (Op == MGSRT_UNARY_HARD_SIGMOID)
      y[i] = fminf(1.0f, fmaxf(0.0f, hardLinear(alpha, v, beta)));
    else if constexpr (Op == MGSRT_UNARY_HARD_SWISH)
      y[i] = __fmul_rn(v, fminf(1.0f, fmaxf(0.0f, hardLinear(alpha, v, beta))));
    else if constexpr (Op == MGSRT_UNARY_RELU)
      y[i] = v < 0.0f ? 0.0f : v;
    else if constexpr (Op == MGSRT_UNARY_LEAKY_RELU)
      y[i] = v < 0.0f ? alpha * v : v;
    else if constexpr (Op == MGSRT_UNARY_SIGMOID)
      y[i] = 1.0f / (1.0f + expf(-v));
    else if constexpr (Op == MGSRT_UNARY_SQRT)
      y[i] = sqrtf(v);
    else if constexpr (Op == MGSRT_UNARY_ERF)
      y[i] = erff(v);
    else if constexpr (Op == MGSRT_UNARY_EXP)
      y[i] = expf(v);
    else if constexpr (Op == MGSRT_UNARY_COS)
      y[i] = cosf(v);
    else if constexpr (Op == MGSRT_UNARY_SIN)
      y[i] = sinf(v);
    else if constexpr (unary::isLaterOp(Op))
      y[i] = unary::value<Op>(v, alpha, beta);
    else if constexpr (Op == MGSRT_UNARY_POW)
      // The exponents LayerNorm and GELU use as products, as on the CPU.
      y[i] = alpha == 2.0f   ? __fmul_rn(v, v)
             : alpha == 3.0f ? __fmul_rn(__fmul_rn(v, v), v)
             : alpha == 0.5f ? sqrtf(v)
             : alpha == 1.0f ? v
                             : powf(v, alpha);
    else
      y[i] = tanhf(v);
  }
}

template <int Op>
__global__ void unaryBwdKernel(const float *__restrict__ x, const float *__restrict__ y,
                               const float *__restrict__ dy, float *__restrict__ dx, int64_t n,
                               float alpha, float beta) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    const float g = dy[i];
    if constexpr (Op == MGSRT_UNARY_HARD_SIGMOID) {
      const float u = hardLinear(alpha, x[i], beta);
      dx[i] = 0.0f < u && u < 1.0f ? __fmul_rn(alpha, g) : 0.0f;
    } else if constexpr (Op == MGSRT_UNARY_HARD_SWISH) {
      const float u = hardLinear(alpha, x[i], beta);
      dx[i] = u < 0.0f ? 0.0f : u > 1.0f ? g : __fmul_rn(g, __fadd_rn(u, __fmul_rn(alpha, x[i])));
    } else if constexpr (Op == MGSRT_UNARY_RELU) {
      dx[i] = x[i] > 0.0f ? g : 0.0f;
    } else if constexpr (Op == MGSRT_UNARY_LEAKY_RELU) {
      dx[i] = x[i] > 0.0f ? g : alpha * g;
    } else if constexpr (Op == MGSRT_UNARY_SIGMOID) {
      const float v = y[i];
      dx[i] = g * v * (1.0f - v);
    } else if constexpr (Op == MGSRT_UNARY_SQRT) {
      dx[i] = g * 0.5f / y[i];
    } else if constexpr (Op == MGSRT_UNARY_EXP) {
      dx[i] = __fmul_rn(g, y[i]);
    } else if constexpr (Op == MGSRT_UNARY_COS) {
      dx[i] = __fmul_rn(-g, sinf(x[i]));
    } else if constexpr (Op == MGSRT_UNARY_SIN) {
      dx[i] = __fmul_rn(g, cosf(x[i]));
    } else if constexpr (unary::isLaterOp(Op)) {
      dx[i] = unary::grad<Op>(x[i], g, alpha, beta);
    } else if constexpr (Op == MGSRT_UNARY_ERF) {
      const float v = x[i];
      dx[i] = g * 1.1283791670955126f * expf(-v * v);
    } else if constexpr (Op == MGSRT_UNARY_POW) {
      const float v = x[i];
      dx[i] = alpha == 2.0f   ? g * 2.0f * v
              : alpha == 3.0f ? g * 3.0f * __fmul_rn(v, v)
              : alpha == 1.0f ? g
              : alpha == 0.0f ? 0.0f
                              : g * alpha * powf(v, alpha - 1.0f);
    } else {
      const float v = y[i];
      dx[i] = g * (1.0f - __fmul_rn(v, v)); // y*y rounded, as on the CPU
    }
  }
}

mgsrt_status_t unaryFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  UnaryParams p;
  if (parseUnary(ctx, kernelName(Kernel::unary_fwd), desc, bufs, false, p))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  const unsigned grid = gridFor(p.n, kThreads);
  cudaStream_t s = state(ctx).stream;
  switch (p.op) {
  case MGSRT_UNARY_RELU:
    unaryFwdKernel<MGSRT_UNARY_RELU><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_LEAKY_RELU:
    unaryFwdKernel<MGSRT_UNARY_LEAKY_RELU><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SIGMOID:
    unaryFwdKernel<MGSRT_UNARY_SIGMOID><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_HARD_SIGMOID:
    unaryFwdKernel<MGSRT_UNARY_HARD_SIGMOID><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_HARD_SWISH:
    unaryFwdKernel<MGSRT_UNARY_HARD_SWISH><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SQRT:
    unaryFwdKernel<MGSRT_UNARY_SQRT><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ERF:
    unaryFwdKernel<MGSRT_UNARY_ERF><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_POW:
    unaryFwdKernel<MGSRT_UNARY_POW><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_EXP:
    unaryFwdKernel<MGSRT_UNARY_EXP><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_COS:
    unaryFwdKernel<MGSRT_UNARY_COS><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SIN:
    unaryFwdKernel<MGSRT_UNARY_SIN><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ABS:
    unaryFwdKernel<MGSRT_UNARY_ABS><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_LOG:
    unaryFwdKernel<MGSRT_UNARY_LOG><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SOFTSIGN:
    unaryFwdKernel<MGSRT_UNARY_SOFTSIGN><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_MISH:
    unaryFwdKernel<MGSRT_UNARY_MISH><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ELU:
    unaryFwdKernel<MGSRT_UNARY_ELU><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_CELU:
    unaryFwdKernel<MGSRT_UNARY_CELU><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SELU:
    unaryFwdKernel<MGSRT_UNARY_SELU><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ROUND:
    unaryFwdKernel<MGSRT_UNARY_ROUND><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_FLOOR:
    unaryFwdKernel<MGSRT_UNARY_FLOOR><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_CEIL:
    unaryFwdKernel<MGSRT_UNARY_CEIL><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  default:
    unaryFwdKernel<MGSRT_UNARY_TANH><<<grid, kThreads, 0, s>>>(x, y, p.n, p.alpha, p.beta);
    break;
  }
  return MGSRT_OK;
}

mgsrt_status_t unaryBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  UnaryParams p;
  if (parseUnary(ctx, kernelName(Kernel::unary_bwd), desc, bufs, true, p))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *y = static_cast<const float *>(bufs[1]);
  const float *dy = static_cast<const float *>(bufs[2]);
  float *dx = static_cast<float *>(bufs[3]);
  const unsigned grid = gridFor(p.n, kThreads);
  cudaStream_t s = state(ctx).stream;
  switch (p.op) {
  case MGSRT_UNARY_RELU:
    unaryBwdKernel<MGSRT_UNARY_RELU><<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_LEAKY_RELU:
    unaryBwdKernel<MGSRT_UNARY_LEAKY_RELU>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SIGMOID:
    unaryBwdKernel<MGSRT_UNARY_SIGMOID>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_HARD_SIGMOID:
    unaryBwdKernel<MGSRT_UNARY_HARD_SIGMOID>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_HARD_SWISH:
    unaryBwdKernel<MGSRT_UNARY_HARD_SWISH>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SQRT:
    unaryBwdKernel<MGSRT_UNARY_SQRT>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ERF:
    unaryBwdKernel<MGSRT_UNARY_ERF>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_POW:
    unaryBwdKernel<MGSRT_UNARY_POW>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_EXP:
    unaryBwdKernel<MGSRT_UNARY_EXP>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_COS:
    unaryBwdKernel<MGSRT_UNARY_COS>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SIN:
    unaryBwdKernel<MGSRT_UNARY_SIN>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ABS:
    unaryBwdKernel<MGSRT_UNARY_ABS>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_LOG:
    unaryBwdKernel<MGSRT_UNARY_LOG>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SOFTSIGN:
    unaryBwdKernel<MGSRT_UNARY_SOFTSIGN>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_MISH:
    unaryBwdKernel<MGSRT_UNARY_MISH>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ELU:
    unaryBwdKernel<MGSRT_UNARY_ELU>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_CELU:
    unaryBwdKernel<MGSRT_UNARY_CELU>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_SELU:
    unaryBwdKernel<MGSRT_UNARY_SELU>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  case MGSRT_UNARY_ROUND:
  case MGSRT_UNARY_FLOOR:
  case MGSRT_UNARY_CEIL: // the same zero gradient
    unaryBwdKernel<MGSRT_UNARY_ROUND>
        <<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  default:
    unaryBwdKernel<MGSRT_UNARY_TANH><<<grid, kThreads, 0, s>>>(x, y, dy, dx, p.n, p.alpha, p.beta);
    break;
  }
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Clip (the bounds are read on the device: they are tensors of the graph)
//===----------------------------------------------------------------------===//

__global__ void clipFwdKernel(const float *__restrict__ x, const float *__restrict__ minv,
                              const float *__restrict__ maxv, float *__restrict__ y, int64_t n) {
  const float lo = *minv, hi = *maxv;
  // ONNX: min(max(x, lo), hi); NaN passes through.
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    const float v = x[i] < lo ? lo : x[i];
    y[i] = hi < v ? hi : v;
  }
}

__global__ void clipBwdKernel(const float *__restrict__ x, const float *__restrict__ minv,
                              const float *__restrict__ maxv, const float *__restrict__ dy,
                              float *__restrict__ dx, int64_t n) {
  const float lo = *minv, hi = *maxv;
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    const float v = x[i];
    dx[i] = (lo <= v && v <= hi) ? dy[i] : 0.0f;
  }
}

mgsrt_status_t clipFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseClip(ctx, kernelName(Kernel::clip_fwd), desc, bufs, false, n))
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  clipFwdKernel<<<gridFor(n, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), static_cast<const float *>(bufs[1]),
      static_cast<const float *>(bufs[2]), static_cast<float *>(bufs[3]), n);
  return MGSRT_OK;
}

mgsrt_status_t clipBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseClip(ctx, kernelName(Kernel::clip_bwd), desc, bufs, true, n))
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  clipBwdKernel<<<gridFor(n, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), static_cast<const float *>(bufs[1]),
      static_cast<const float *>(bufs[2]), static_cast<const float *>(bufs[3]),
      static_cast<float *>(bufs[4]), n);
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Binary forward
//===----------------------------------------------------------------------===//

/// The collapsed broadcast space of a binary op (a __grid_constant__
/// parameter: indexed in place, never copied per thread): the output is
/// dense over ext; sa / sb are the operands' strides.
struct BinaryIndex {
  int rank;
  int64_t ext[kMaxRank], sa[kMaxRank], sb[kMaxRank];
};

template <int Op>
__global__ void binaryFwdKernel(const __grid_constant__ BinaryIndex ix, const float *__restrict__ a,
                                const float *__restrict__ b, float *__restrict__ y,
                                int64_t total) {
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    int64_t q = i, oa = 0, ob = 0;
    for (int d = ix.rank - 1; d > 0; --d) {
      const int64_t c = q % ix.ext[d];
      q /= ix.ext[d];
      oa += c * ix.sa[d];
      ob += c * ix.sb[d];
    }
    if (ix.rank > 0) {
      oa += q * ix.sa[0];
      ob += q * ix.sb[0];
    }
    y[i] = binary::value<Op>(a[oa], b[ob]);
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
  BinaryIndex ix;
  ix.rank = static_cast<int>(sp.rank);
  for (int64_t d = 0; d < sp.rank; ++d) {
    ix.ext[d] = sp.ext[d];
    ix.sa[d] = sp.stride[1][d];
    ix.sb[d] = sp.stride[2][d];
  }
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  float *y = static_cast<float *>(bufs[2]);
  const unsigned grid = gridFor(s.total, kThreads);
  cudaStream_t st = state(ctx).stream;
  binary::dispatch(s.op, [&](auto op) {
    binaryFwdKernel<decltype(op)::value><<<grid, kThreads, 0, st>>>(ix, a, b, y, s.total);
  });
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Binary backward: dT = sum over T's broadcast dims of the elementwise grad
//===----------------------------------------------------------------------===//

/// The collapsed space split into T's kept dims (rows of T, row-major: the
/// flat kept index is T's element index) and its reduced dims (stride 0 in
/// T). Strides of operands 0 (dout), 1 (lhs), 2 (rhs).
struct GradSpace {
  int nk, nr;
  int64_t kext[kMaxRank], kstride[3][kMaxRank];
  int64_t rext[kMaxRank], rstride[3][kMaxRank];
};

/// Adds the offsets of flat index q over n dims (innermost last) to off[3].
__device__ inline void addOffsets(int64_t q, int n, const int64_t *ext,
                                  const int64_t (*stride)[kMaxRank], int64_t off[3]) {
  for (int d = n - 1; d >= 0; --d) {
    const int64_t c = d > 0 ? q % ext[d] : q;
    if (d > 0)
      q /= ext[d];
    off[0] += c * stride[0][d];
    off[1] += c * stride[1][d];
    off[2] += c * stride[2][d];
  }
}

/// Work item w = (chunk s, element t of T), t fastest. Each item sums the
/// reduced positions [s * chunk, min(R, (s + 1) * chunk)) in order, in
/// double: one thread per item (Warp false: threads of a warp take adjacent
/// elements of T) or one warp per item (Warp true, when the innermost dim is
/// reduced: lanes take adjacent positions, then a fixed shuffle tree). With
/// one chunk the sum goes to dt as float, else to partial[s * items + t].
template <int Op, int Target, bool Warp>
__global__ void binaryGradKernel(const __grid_constant__ GradSpace sp, const float *__restrict__ g,
                                 const float *__restrict__ a, const float *__restrict__ b,
                                 int64_t items, int64_t reduced, int64_t chunk, int64_t chunks,
                                 float *__restrict__ dt, double *__restrict__ partial) {
  const int64_t work = items * chunks;
  const int lane = Warp ? static_cast<int>(threadIdx.x & 31) : 0;
  const int64_t first = Warp ? firstIndex() / 32 : firstIndex();
  const int64_t step = Warp ? gridStride() / 32 : gridStride();
  for (int64_t w = first; w < work; w += step) {
    const int64_t t = w % items, s = w / items;
    int64_t base[3] = {0, 0, 0};
    addOffsets(t, sp.nk, sp.kext, sp.kstride, base);
    const int64_t k0 = s * chunk;
    const int64_t k1 = k0 + chunk < reduced ? k0 + chunk : reduced;
    double sum = 0.0;
    for (int64_t k = k0 + lane; k < k1; k += Warp ? 32 : 1) {
      int64_t off[3] = {base[0], base[1], base[2]};
      addOffsets(k, sp.nr, sp.rext, sp.rstride, off);
      sum += binary::grad<Op, Target>(g[off[0]], a[off[1]], b[off[2]]);
    }
    if constexpr (Warp) {
      for (int delta = 16; delta > 0; delta >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, delta);
      if (lane != 0)
        continue;
    }
    if (chunks == 1)
      dt[t] = static_cast<float>(sum);
    else
      partial[s * items + t] = sum;
  }
}

/// dt[t] = the chunks' partial sums of element t, added in chunk order.
__global__ void sumChunksKernel(const double *__restrict__ partial, float *__restrict__ dt,
                                int64_t items, int64_t chunks) {
  for (int64_t t = firstIndex(); t < items; t += gridStride()) {
    double sum = 0.0;
    for (int64_t s = 0; s < chunks; ++s)
      sum += partial[s * items + t];
    dt[t] = static_cast<float>(sum);
  }
}

template <int Op, int Target>
mgsrt_status_t binaryGradTarget(mgsrt_ctx_t *ctx, const BroadcastSpace<3> &sp, int64_t total,
                                int64_t targetSize, const float *g, const float *a,
                                const float *b, float *dt) {
  const char *kernel = kernelName(Kernel::binary_bwd);
  const int t = 1 + Target; // operand index of T in the space
  GradSpace gs;
  gs.nk = gs.nr = 0;
  for (int64_t d = 0; d < sp.rank; ++d) {
    const bool kept = sp.stride[t][d] != 0;
    int &n = kept ? gs.nk : gs.nr;
    (kept ? gs.kext : gs.rext)[n] = sp.ext[d];
    for (int op = 0; op < 3; ++op)
      (kept ? gs.kstride : gs.rstride)[op][n] = sp.stride[op][d];
    ++n;
  }
  const int64_t items = targetSize, reduced = total / targetSize;
  // Warps when the innermost dim is reduced (contiguous in dout).
  const bool warp = sp.rank > 0 && sp.stride[t][sp.rank - 1] == 0;
  // Enough chunks to fill the GPU (~2^18 threads), none shorter than a minimum.
  const int64_t wantItems = warp ? (int64_t{1} << 13) : (int64_t{1} << 18);
  const int64_t minChunk = warp ? 256 : 16;
  int64_t chunks = (wantItems + items - 1) / items;
  int64_t chunk = (reduced + chunks - 1) / chunks;
  if (chunk < minChunk)
    chunk = minChunk;
  chunks = (reduced + chunk - 1) / chunk;
  double *partial = nullptr;
  if (chunks > 1) {
    void *ws = nullptr;
    if (workspace(ctx, kernel, sizeof(double) * items * chunks, &ws))
      return ctx->status;
    partial = static_cast<double *>(ws);
  }
  cudaStream_t st = state(ctx).stream;
  const int64_t threads = items * chunks * (warp ? 32 : 1);
  const unsigned grid = gridFor(threads, kThreads);
  if (warp)
    binaryGradKernel<Op, Target, true><<<grid, kThreads, 0, st>>>(gs, g, a, b, items, reduced,
                                                                  chunk, chunks, dt, partial);
  else
    binaryGradKernel<Op, Target, false><<<grid, kThreads, 0, st>>>(gs, g, a, b, items, reduced,
                                                                   chunk, chunks, dt, partial);
  if (chunks > 1)
    sumChunksKernel<<<gridFor(items, kThreads), kThreads, 0, st>>>(partial, dt, items, chunks);
  return MGSRT_OK;
}

template <int Op>
mgsrt_status_t binaryBwdOp(mgsrt_ctx_t *ctx, const BinaryShape &s, const BroadcastSpace<3> &sp,
                           const float *a, const float *b, const float *g, float *da,
                           float *db) {
  if (da && binaryGradTarget<Op, 0>(ctx, sp, s.total, s.lhsSize, g, a, b, da))
    return ctx->status;
  if (db && binaryGradTarget<Op, 1>(ctx, sp, s.total, s.rhsSize, g, a, b, db))
    return ctx->status;
  return MGSRT_OK;
}

mgsrt_status_t binaryBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::binary_bwd);
  BinaryShape s;
  if (parseBinary(ctx, kernel, desc, bufs, true, s))
    return ctx->status;
  float *da = static_cast<float *>(bufs[3]);
  float *db = static_cast<float *>(bufs[4]);
  cudaStream_t st = state(ctx).stream;
  if (s.total == 0) {
    // Nothing flows back; operands that broadcast from size 1 get zeros.
    if (da && s.lhsSize > 0)
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(da, 0, sizeof(float) * s.lhsSize, st));
    if (db && s.rhsSize > 0)
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(db, 0, sizeof(float) * s.rhsSize, st));
    return MGSRT_OK;
  }
  BroadcastSpace<3> sp;
  buildBinarySpace(s, sp);
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *g = static_cast<const float *>(bufs[2]);
  return binary::dispatch(s.op, [&](auto op) {
    return binaryBwdOp<decltype(op)::value>(ctx, s, sp, a, b, g, da, db);
  });
}

//===----------------------------------------------------------------------===//
// Copy, zero, accumulate
//===----------------------------------------------------------------------===//

mgsrt_status_t copyKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::copy);
  int64_t n;
  if (parseCopy(ctx, kernel, desc, bufs, n))
    return ctx->status;
  if (n == 0 || bufs[0] == bufs[1])
    return MGSRT_OK;
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemcpyAsync(bufs[1], bufs[0], sizeof(float) * n, cudaMemcpyDeviceToDevice,
                                   state(ctx).stream));
  return MGSRT_OK;
}

mgsrt_status_t zeroKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::zero);
  int64_t n;
  if (parseZero(ctx, kernel, desc, bufs, n))
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemsetAsync(bufs[0], 0, sizeof(float) * n, state(ctx).stream));
  return MGSRT_OK;
}

// y may alias a or b: no __restrict__ here (each element is read before it
// is written, by the same thread).
__global__ void accumulateKernelGpu(const float *a, const float *b, float *y, int64_t n) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    y[i] = a[i] + b[i];
}

mgsrt_status_t accumulateKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  int64_t n;
  if (parseAccumulate(ctx, kernelName(Kernel::accumulate), desc, bufs, n))
    return ctx->status;
  if (n == 0)
    return MGSRT_OK;
  accumulateKernelGpu<<<gridFor(n, kThreads), kThreads, 0, state(ctx).stream>>>(
      static_cast<const float *>(bufs[0]), static_cast<const float *>(bufs[1]),
      static_cast<float *>(bufs[2]), n);
  return MGSRT_OK;
}

/// out = in rounded to bfloat16 (half when `half`), to nearest even.
__global__ void roundOperandKernel(const float *__restrict__ in, float *__restrict__ out,
                                   int64_t n, bool half) {
  for (int64_t i = mgs::rt::cuda::firstIndex(); i < n; i += mgs::rt::cuda::gridStride())
    out[i] = half ? __half2float(__float2half_rn(in[i]))
                  : __bfloat162float(__float2bfloat16_rn(in[i]));
}

/// roundedOperands' scratch: one device array per context.
const int64_t kRoundedScratchKey = 0; // its cache key (no descriptor has this address)

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t roundedOperands(mgsrt_ctx_t *ctx, const char *kernel, Precision precision,
                               std::initializer_list<RoundedOperand> operands) {
  if (precision == Precision::F32)
    return MGSRT_OK;
  CudaState &st = state(ctx);
  int64_t total = 0;
  for (const RoundedOperand &op : operands)
    total += op.count;
  float *next = nullptr;
  bool grown = false;
  if (deviceArray(ctx, kernel, &kRoundedScratchKey, total, next, grown))
    return ctx->status;
  for (const RoundedOperand &op : operands) {
    if (op.count == 0)
      continue;
    roundOperandKernel<<<gridFor(op.count), 256, 0, st.stream>>>(op.ptr, next, op.count,
                                                                 precision == Precision::F16);
    MGSRT_CUDA_CHECK(ctx, kernel, cudaPeekAtLastError());
    op.ptr = next;
    next += op.count;
  }
  return MGSRT_OK;
}

mgsrt_status_t unary_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::unary_fwd), desc, bufs, [&] { return unaryFwd(ctx, desc, bufs); });
}
mgsrt_status_t unary_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::unary_bwd), desc, bufs, [&] { return unaryBwd(ctx, desc, bufs); });
}
mgsrt_status_t clip_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::clip_fwd), desc, bufs, [&] { return clipFwd(ctx, desc, bufs); });
}
mgsrt_status_t clip_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::clip_bwd), desc, bufs, [&] { return clipBwd(ctx, desc, bufs); });
}
mgsrt_status_t binary_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::binary_fwd), desc, bufs, [&] { return binaryFwd(ctx, desc, bufs); });
}
mgsrt_status_t binary_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::binary_bwd), desc, bufs, [&] { return binaryBwd(ctx, desc, bufs); });
}
mgsrt_status_t copy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::copy), desc, bufs, [&] { return copyKernel(ctx, desc, bufs); });
}
mgsrt_status_t zero(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::zero), desc, bufs, [&] { return zeroKernel(ctx, desc, bufs); });
}
mgsrt_status_t accumulate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::accumulate), desc, bufs,
                       [&] { return accumulateKernel(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
