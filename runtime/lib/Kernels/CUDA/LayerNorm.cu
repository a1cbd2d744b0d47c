//===- LayerNorm.cu - Layer normalization over the last dimension, on a GPU ===//
//
// The CPU kernels' formulas (CPU/LayerNorm.cpp) and checks
// (Descriptors/LayerNormDesc.h). A row's statistics are summed in double by a
// warp (rows of up to kWarpCols columns) or a block, the scale and bias
// gradients by one thread a column over the rows in order, also in double;
// every float step is an _rn intrinsic (never contracted into an FMA, as the
// CPU build has none). Only the order of the double sums differs from the
// CPU's, so the results equal the CPU's but where a double sum rounds to the
// other side of a float (rare: a last-bit difference).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/LayerNormDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;
constexpr int64_t kWarpCols = 1024; // wider rows get a block each

__device__ inline double warpSum(double v) {
  for (int off = 16; off > 0; off >>= 1)
    v = __dadd_rn(v, __shfl_down_sync(0xffffffffu, v, off));
  return v;
}

/// The sum of v over a group of `Group` threads (32: a warp; kThreads: the
/// block), returned to every thread of the group.
template <unsigned Group> __device__ inline double groupSum(double v) {
  v = warpSum(v);
  if constexpr (Group == 32)
    return __shfl_sync(0xffffffffu, v, 0);
  __shared__ double partial[kThreads / 32];
  __shared__ double total;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warpSum(lane < kThreads / 32 ? partial[lane] : 0.0);
    if (lane == 0)
      total = v;
  }
  __syncthreads();
  v = total;
  __syncthreads(); // partial/total are reused by the next row
  return v;
}

/// (x - mean) * inv_std, rounded as the CPU's.
__device__ inline float normalized(float x, float mean, float invStd) {
  return __fmul_rn(__fsub_rn(x, mean), invStd);
}

template <unsigned Group>
__global__ void layerNormFwdKernel(const float *__restrict__ x, const float *__restrict__ scale,
                                   const float *__restrict__ bias, float *__restrict__ y,
                                   float *__restrict__ mean, float *__restrict__ invStd,
                                   int64_t rows, int64_t cols, double eps) {
  constexpr unsigned perBlock = kThreads / Group;
  const unsigned t = threadIdx.x % Group;
  // Every thread of a block runs as many iterations (the block sums sync).
  for (int64_t base = int64_t(blockIdx.x) * perBlock; base < rows;
       base += int64_t(gridDim.x) * perBlock) {
    const int64_t r = base + threadIdx.x / Group;
    const bool live = r < rows;
    const float *xr = x + (live ? r : 0) * cols;
    double s = 0.0;
    for (int64_t j = t; live && j < cols; j += Group)
      s = __dadd_rn(s, xr[j]);
    const double m = groupSum<Group>(s) / static_cast<double>(cols);
    double v = 0.0;
    for (int64_t j = t; live && j < cols; j += Group) {
      const double d = __dsub_rn(xr[j], m);
      v = __dadd_rn(v, __dmul_rn(d, d));
    }
    v = groupSum<Group>(v);
    if (!live)
      continue;
    const float mf = static_cast<float>(m);
    const float rs = static_cast<float>(1.0 / sqrt(__dadd_rn(v / static_cast<double>(cols), eps)));
    float *yr = y + r * cols;
    for (int64_t j = t; j < cols; j += Group)
      yr[j] = __fadd_rn(__fmul_rn(normalized(xr[j], mf, rs), scale[j]), bias[j]);
    if (t == 0) {
      mean[r] = mf;
      invStd[r] = rs;
    }
  }
}

/// dx = inv_std (g - E[g] - xhat E[g xhat]), g = dy * scale, per row.
template <unsigned Group>
__global__ void layerNormDxKernel(const float *__restrict__ x, const float *__restrict__ scale,
                                  const float *__restrict__ mean, const float *__restrict__ invStd,
                                  const float *__restrict__ dy, float *__restrict__ dx,
                                  int64_t rows, int64_t cols) {
  constexpr unsigned perBlock = kThreads / Group;
  const unsigned t = threadIdx.x % Group;
  for (int64_t base = int64_t(blockIdx.x) * perBlock; base < rows;
       base += int64_t(gridDim.x) * perBlock) {
    const int64_t r = base + threadIdx.x / Group;
    const bool live = r < rows;
    const int64_t at = (live ? r : 0) * cols;
    const float *xr = x + at, *dyr = dy + at;
    const float m = mean[live ? r : 0], rs = invStd[live ? r : 0];
    double sg = 0.0, sgx = 0.0;
    for (int64_t j = t; live && j < cols; j += Group) {
      const float g = __fmul_rn(dyr[j], scale[j]);
      sg = __dadd_rn(sg, g);
      sgx = __dadd_rn(sgx, __dmul_rn(g, normalized(xr[j], m, rs)));
    }
    sg = groupSum<Group>(sg);
    sgx = groupSum<Group>(sgx);
    if (!live)
      continue;
    const float a = static_cast<float>(sg / static_cast<double>(cols));
    const float b = static_cast<float>(sgx / static_cast<double>(cols));
    float *dxr = dx + at;
    for (int64_t j = t; j < cols; j += Group)
      dxr[j] = __fmul_rn(rs, __fsub_rn(__fsub_rn(__fmul_rn(dyr[j], scale[j]), a),
                                       __fmul_rn(normalized(xr[j], m, rs), b)));
  }
}

/// dscale = sum over rows of dy * xhat, dbias = sum of dy (in double, rows in
/// order; either output may be null).
__global__ void layerNormParamGradKernel(const float *__restrict__ x,
                                         const float *__restrict__ mean,
                                         const float *__restrict__ invStd,
                                         const float *__restrict__ dy, float *__restrict__ dscale,
                                         float *__restrict__ dbias, int64_t rows, int64_t cols) {
  for (int64_t j = firstIndex(); j < cols; j += gridStride()) {
    double s = 0.0, b = 0.0;
    for (int64_t r = 0; r < rows; ++r) {
      const float g = dy[r * cols + j];
      s = __dadd_rn(s, __dmul_rn(g, normalized(x[r * cols + j], mean[r], invStd[r])));
      b = __dadd_rn(b, g);
    }
    if (dscale)
      dscale[j] = static_cast<float>(s);
    if (dbias)
      dbias[j] = static_cast<float>(b);
  }
}

/// Blocks of kThreads covering `rows` rows, `Group` threads a row.
template <unsigned Group> unsigned rowBlocks(int64_t rows) {
  return gridFor(rows, kThreads / Group);
}

mgsrt_status_t layerNormFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::layer_norm_fwd);
  LayerNormParams p;
  if (parseLayerNorm(ctx, kernel, desc, p) || !checkLayerNormFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  if (p.rows == 0)
    return MGSRT_OK;
  const auto *x = static_cast<const float *>(bufs[0]);
  const auto *scale = static_cast<const float *>(bufs[1]);
  const auto *bias = static_cast<const float *>(bufs[2]);
  auto *y = static_cast<float *>(bufs[3]);
  auto *mean = static_cast<float *>(bufs[4]);
  auto *invStd = static_cast<float *>(bufs[5]);
  cudaStream_t st = state(ctx).stream;
  if (p.cols <= kWarpCols)
    layerNormFwdKernel<32><<<rowBlocks<32>(p.rows), kThreads, 0, st>>>(
        x, scale, bias, y, mean, invStd, p.rows, p.cols, p.eps);
  else
    layerNormFwdKernel<kThreads><<<rowBlocks<kThreads>(p.rows), kThreads, 0, st>>>(
        x, scale, bias, y, mean, invStd, p.rows, p.cols, p.eps);
  return MGSRT_OK;
}

mgsrt_status_t layerNormBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::layer_norm_bwd);
  LayerNormParams p;
  if (parseLayerNorm(ctx, kernel, desc, p) || !checkLayerNormBwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const auto *x = static_cast<const float *>(bufs[0]);
  const auto *scale = static_cast<const float *>(bufs[1]);
  const auto *mean = static_cast<const float *>(bufs[2]);
  const auto *invStd = static_cast<const float *>(bufs[3]);
  const auto *dy = static_cast<const float *>(bufs[4]);
  auto *dx = static_cast<float *>(bufs[5]);
  auto *dscale = static_cast<float *>(bufs[6]);
  auto *dbias = static_cast<float *>(bufs[7]);
  cudaStream_t st = state(ctx).stream;
  if (dscale || dbias)
    layerNormParamGradKernel<<<gridFor(p.cols, kThreads), kThreads, 0, st>>>(
        x, mean, invStd, dy, dscale, dbias, p.rows, p.cols);
  if (!dx || p.rows == 0)
    return MGSRT_OK;
  if (p.cols <= kWarpCols)
    layerNormDxKernel<32><<<rowBlocks<32>(p.rows), kThreads, 0, st>>>(x, scale, mean, invStd, dy,
                                                                      dx, p.rows, p.cols);
  else
    layerNormDxKernel<kThreads><<<rowBlocks<kThreads>(p.rows), kThreads, 0, st>>>(
        x, scale, mean, invStd, dy, dx, p.rows, p.cols);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t layer_norm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::layer_norm_fwd), desc, bufs,
                       [&] { return layerNormFwd(ctx, desc, bufs); });
}
mgsrt_status_t layer_norm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::layer_norm_bwd), desc, bufs,
                       [&] { return layerNormBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
