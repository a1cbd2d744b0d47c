//===- Norm.cu - Batch normalization on the GPU ---------------------------===//
//
// Custom kernels rather than cuDNN's batch norm: cuDNN updates the running
// variance with the unbiased estimate only (no ONNX biased option), reduces
// in float and has no fused ReLU whose mask the backward recomputes from x.
// These follow CPU/Norm.cpp step for step:
//   1. per (n, c) plane, sum and sum of squares (training fwd) or sum(dy) and
//      sum(dy * (x - mean)) (bwd) in double; a warp (small planes) or a block
//      (large ones) per plane;
//   2. a thread per channel adds its N plane sums in order (double) and
//      derives the per-channel coefficients with the CPU's double formulas;
//   3. an elementwise pass applies them.
// Float arithmetic that must match the CPU bit for bit (the normalized value,
// which the fused ReLU's backward recomputes) uses the _rn intrinsics, which
// nvcc never contracts into FMAs; so do the double channel formulas.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/NormDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

/// (x - m) * a + b, rounded step by step as CPU/Norm.cpp's affine().
__device__ inline float affine(float x, float m, float a, float b) {
  return __fadd_rn(__fmul_rn(__fsub_rn(x, m), a), b);
}

/// The fused ReLU as std::max(v, 0.0f): NaN and -0 pass through.
__device__ inline float reluOf(float v) { return v < 0.0f ? 0.0f : v; }

__device__ inline double warpSum(double v) {
  for (int off = 16; off > 0; off >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

/// Two sums over `Group` threads (32: a warp; kThreads: the block); the
/// group's first thread gets the totals.
template <unsigned Group> __device__ inline void groupSum2(double &a, double &b) {
  a = warpSum(a);
  b = warpSum(b);
  if (Group > 32) {
    __shared__ double sa[kThreads / 32], sb[kThreads / 32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
      sa[warp] = a;
      sb[warp] = b;
    }
    __syncthreads();
    if (warp == 0) {
      a = lane < kThreads / 32 ? sa[lane] : 0.0;
      b = lane < kThreads / 32 ? sb[lane] : 0.0;
      a = warpSum(a);
      b = warpSum(b);
    }
    __syncthreads(); // sa/sb are reused by the next plane of the loop
  }
}

/// Forward statistics: part[2 pl] = sum x, part[2 pl + 1] = sum x^2 per plane.
template <unsigned Group>
__global__ void bnStatsKernel(const float *__restrict__ x, double *__restrict__ part,
                              int64_t planes, int64_t d) {
  constexpr unsigned perBlock = kThreads / Group;
  const unsigned t = threadIdx.x % Group;
  // Every thread of a block runs the same number of iterations (the block
  // reduction syncs), so the loop bound is the block's.
  for (int64_t base = int64_t(blockIdx.x) * perBlock; base < planes;
       base += int64_t(gridDim.x) * perBlock) {
    const int64_t pl = base + threadIdx.x / Group;
    double s = 0.0, sq = 0.0;
    if (pl < planes) {
      const float *xp = x + pl * d;
      for (int64_t i = t; i < d; i += Group) {
        const double v = xp[i];
        s += v;
        sq += v * v;
      }
    }
    groupSum2<Group>(s, sq);
    if (t == 0 && pl < planes) {
      part[2 * pl] = s;
      part[2 * pl + 1] = sq;
    }
  }
}

/// Backward sums: part[2 pl] = sum g, part[2 pl + 1] = sum g * (x - mean),
/// g = dy masked by the fused ReLU (if shift) as the forward computed it.
template <unsigned Group>
__global__ void bnBwdSumsKernel(const float *__restrict__ x, const float *__restrict__ dy,
                                const float *__restrict__ mean, const float *__restrict__ scale,
                                const float *__restrict__ invstd,
                                const float *__restrict__ shift, double *__restrict__ part,
                                int64_t planes, int64_t C, int64_t d) {
  constexpr unsigned perBlock = kThreads / Group;
  const unsigned t = threadIdx.x % Group;
  for (int64_t base = int64_t(blockIdx.x) * perBlock; base < planes;
       base += int64_t(gridDim.x) * perBlock) {
    const int64_t pl = base + threadIdx.x / Group;
    double s = 0.0, sx = 0.0;
    if (pl < planes) {
      const int64_t c = pl % C;
      const float *xp = x + pl * d, *gp = dy + pl * d;
      const float mc = mean[c];
      const double m = mc;
      if (shift) {
        const float ac = static_cast<float>(__dmul_rn(scale[c], invstd[c])), bc = shift[c];
        for (int64_t i = t; i < d; i += Group) {
          const double g = affine(xp[i], mc, ac, bc) > 0.0f ? gp[i] : 0.0f;
          s += g;
          sx += g * (xp[i] - m);
        }
      } else {
        for (int64_t i = t; i < d; i += Group) {
          const double g = gp[i];
          s += g;
          sx += g * (xp[i] - m);
        }
      }
    }
    groupSum2<Group>(s, sx);
    if (t == 0 && pl < planes) {
      part[2 * pl] = s;
      part[2 * pl + 1] = sx;
    }
  }
}

/// Per-channel coefficients of the affine pass: coef[c] = mean, coef[C + c]
/// = scale * invstd, coef[2C + c] = bias.
struct FwdChannelArgs {
  const double *part;
  const float *scale, *bias, *meanIn, *varIn;
  float *runMean, *runVar, *savedMean, *savedInvstd, *coef;
  int64_t n, C;
  double count, eps, momentum;
  bool training, unbiased;
};

__global__ void bnFwdChannelKernel(FwdChannelArgs a) {
  const int64_t C = a.C;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < C;
       c += int64_t(gridDim.x) * blockDim.x) {
    const float mv = a.meanIn[c], vv = a.varIn[c]; // read first: alias-safe
    if (!a.training) {
      const double invstd = 1.0 / sqrt(static_cast<double>(vv) + a.eps);
      a.coef[c] = mv;
      a.coef[C + c] = static_cast<float>(__dmul_rn(a.scale[c], invstd));
      a.coef[2 * C + c] = a.bias[c];
      a.runMean[c] = mv;
      a.runVar[c] = vv;
      continue;
    }
    double s = 0.0, sq = 0.0;
    for (int64_t n = 0; n < a.n; ++n) {
      s += a.part[2 * (n * C + c)];
      sq += a.part[2 * (n * C + c) + 1];
    }
    const double count = a.count;
    const double mean = count > 0 ? s / count : 0.0;
    const double var = count > 0 ? fmax(0.0, __dadd_rn(sq / count, -__dmul_rn(mean, mean))) : 0.0;
    const double invstd = 1.0 / sqrt(var + a.eps);
    a.coef[c] = static_cast<float>(mean);
    // From the float inverse std, as saved (the fused ReLU's backward
    // recomputes this from saved_invstd).
    a.coef[C + c] =
        static_cast<float>(__dmul_rn(a.scale[c], static_cast<double>(static_cast<float>(invstd))));
    a.coef[2 * C + c] = a.bias[c];
    const double runningVar =
        (a.unbiased && count > 1) ? __dmul_rn(var, count) / (count - 1) : var;
    const double keep = 1.0 - a.momentum;
    a.runMean[c] = static_cast<float>(__dadd_rn(__dmul_rn(mv, a.momentum), __dmul_rn(mean, keep)));
    a.runVar[c] =
        static_cast<float>(__dadd_rn(__dmul_rn(vv, a.momentum), __dmul_rn(runningVar, keep)));
    if (a.savedMean)
      a.savedMean[c] = static_cast<float>(mean);
    if (a.savedInvstd)
      a.savedInvstd[c] = static_cast<float>(invstd);
  }
}

__global__ void bnApplyKernel(const float *__restrict__ x, const float *__restrict__ coef,
                              float *__restrict__ y, int64_t total, int64_t C, int64_t d,
                              bool relu) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / d) % C;
    const float v = affine(x[i], coef[c], coef[C + c], coef[2 * C + c]);
    y[i] = relu ? reluOf(v) : v;
  }
}

/// dx = dy * k1 + (x - mean) * k2 + k3 per channel (coef[0..3C)), and the
/// ReLU's a = scale * invstd (coef[3C..4C)); dscale, dbias.
__global__ void bnBwdChannelKernel(const double *__restrict__ part,
                                   const float *__restrict__ scale,
                                   const float *__restrict__ invstd, float *__restrict__ dscale,
                                   float *__restrict__ dbias, float *__restrict__ coef, int64_t n,
                                   int64_t C, double count) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < C;
       c += int64_t(gridDim.x) * blockDim.x) {
    double s = 0.0, sx = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      s += part[2 * (k * C + c)];
      sx += part[2 * (k * C + c) + 1];
    }
    const double is = invstd[c];
    const double ds = __dmul_rn(sx, is); // sum(dy * xhat)
    dbias[c] = static_cast<float>(s);
    dscale[c] = static_cast<float>(ds);
    const double g = __dmul_rn(scale[c], is);
    const double inv = count > 0 ? 1.0 / count : 0.0;
    coef[c] = static_cast<float>(g);
    coef[C + c] = static_cast<float>(__dmul_rn(__dmul_rn(__dmul_rn(-g, ds), inv), is));
    coef[2 * C + c] = static_cast<float>(__dmul_rn(__dmul_rn(-g, s), inv));
    coef[3 * C + c] = static_cast<float>(__dmul_rn(scale[c], is));
  }
}

__global__ void bnBwdApplyKernel(const float *__restrict__ x, const float *__restrict__ dy,
                                 const float *__restrict__ mean, const float *__restrict__ shift,
                                 const float *__restrict__ coef, float *__restrict__ dx,
                                 int64_t total, int64_t C, int64_t d) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / d) % C;
    const float m = mean[c], xv = x[i];
    float g = dy[i];
    if (shift && !(affine(xv, m, coef[3 * C + c], shift[c]) > 0.0f))
      g = 0.0f;
    dx[i] = __fadd_rn(__fadd_rn(__fmul_rn(g, coef[c]), __fmul_rn(__fsub_rn(xv, m), coef[C + c])),
                      coef[2 * C + c]);
  }
}

/// Planes of fewer elements than this get a warp each, larger ones a block.
constexpr int64_t kBlockPerPlane = 2048;

/// Blocks for `planes` planes at `perBlock` planes a block (capped; the
/// kernels loop).
unsigned planeBlocks(int64_t planes, unsigned perBlock) {
  int64_t b = (planes + perBlock - 1) / perBlock;
  return static_cast<unsigned>(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/// Carves `bytes` aligned to 256 off the workspace cursor.
template <typename T> T *carve(char *&cursor, size_t count) {
  T *p = reinterpret_cast<T *>(cursor);
  cursor += (sizeof(T) * count + 255) / 256 * 256;
  return p;
}

mgsrt_status_t bnFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::batch_norm_fwd);
  BnParams p;
  if (parseBn(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkBnFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const int64_t C = p.c, planes = p.n * p.c, d = p.d, total = planes * d;
  if (C == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  cudaStream_t s = state(ctx).stream;
  const size_t partCount = p.training ? 2 * static_cast<size_t>(planes) : 0;
  void *ws = nullptr;
  if (workspace(ctx, kernel, (sizeof(double) * partCount + 255) / 256 * 256 + sizeof(float) * 3 * C,
                &ws))
    return ctx->status;
  char *cursor = static_cast<char *>(ws);
  double *part = carve<double>(cursor, partCount);
  float *coef = carve<float>(cursor, 3 * C);

  if (p.training && total > 0) {
    if (d >= kBlockPerPlane)
      bnStatsKernel<kThreads><<<planeBlocks(planes, 1), kThreads, 0, s>>>(x, part, planes, d);
    else
      bnStatsKernel<32><<<planeBlocks(planes, kThreads / 32), kThreads, 0, s>>>(x, part, planes,
                                                                               d);
  }
  FwdChannelArgs a;
  a.part = part;
  a.scale = static_cast<const float *>(bufs[1]);
  a.bias = static_cast<const float *>(bufs[2]);
  a.meanIn = static_cast<const float *>(bufs[3]);
  a.varIn = static_cast<const float *>(bufs[4]);
  a.runMean = static_cast<float *>(bufs[6]);
  a.runVar = static_cast<float *>(bufs[7]);
  a.savedMean = p.training ? static_cast<float *>(bufs[8]) : nullptr;
  a.savedInvstd = p.training ? static_cast<float *>(bufs[9]) : nullptr;
  a.coef = coef;
  // With D = 0 the planes are empty: every channel's count is 0.
  a.n = d > 0 ? p.n : 0;
  a.C = C;
  a.count = static_cast<double>(p.n * d);
  a.eps = p.eps;
  a.momentum = p.momentum;
  a.training = p.training;
  a.unbiased = p.unbiasedRunningVar;
  bnFwdChannelKernel<<<gridFor(C, kThreads), kThreads, 0, s>>>(a);
  if (total > 0)
    bnApplyKernel<<<gridFor(total, kThreads), kThreads, 0, s>>>(
        x, coef, static_cast<float *>(bufs[5]), total, C, d, p.relu);
  return MGSRT_OK;
}

mgsrt_status_t bnBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::batch_norm_bwd);
  BnParams p;
  if (parseBn(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkBnBwdBufs(ctx, kernel, bufs, p))
    return ctx->status;
  const int64_t C = p.c, planes = p.n * p.c, d = p.d, total = planes * d;
  if (C == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *scale = static_cast<const float *>(bufs[1]);
  const float *mean = static_cast<const float *>(bufs[2]);
  const float *invstd = static_cast<const float *>(bufs[3]);
  const float *dy = static_cast<const float *>(bufs[4]);
  const float *shift = p.relu ? static_cast<const float *>(bufs[8]) : nullptr;
  cudaStream_t s = state(ctx).stream;
  const size_t partCount = 2 * static_cast<size_t>(planes);
  void *ws = nullptr;
  if (workspace(ctx, kernel, (sizeof(double) * partCount + 255) / 256 * 256 + sizeof(float) * 4 * C,
                &ws))
    return ctx->status;
  char *cursor = static_cast<char *>(ws);
  double *part = carve<double>(cursor, partCount);
  float *coef = carve<float>(cursor, 4 * C);
  if (total > 0) {
    if (d >= kBlockPerPlane)
      bnBwdSumsKernel<kThreads><<<planeBlocks(planes, 1), kThreads, 0, s>>>(
          x, dy, mean, scale, invstd, shift, part, planes, C, d);
    else
      bnBwdSumsKernel<32><<<planeBlocks(planes, kThreads / 32), kThreads, 0, s>>>(
          x, dy, mean, scale, invstd, shift, part, planes, C, d);
  }
  bnBwdChannelKernel<<<gridFor(C, kThreads), kThreads, 0, s>>>(
      part, scale, invstd, static_cast<float *>(bufs[6]), static_cast<float *>(bufs[7]), coef,
      d > 0 ? p.n : 0, C, static_cast<double>(p.n * d));
  if (total > 0)
    bnBwdApplyKernel<<<gridFor(total, kThreads), kThreads, 0, s>>>(
        x, dy, mean, shift, coef, static_cast<float *>(bufs[5]), total, C, d);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t batch_norm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::batch_norm_fwd), desc, bufs, [&] { return bnFwd(ctx, desc, bufs); });
}
mgsrt_status_t batch_norm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::batch_norm_bwd), desc, bufs, [&] { return bnBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
