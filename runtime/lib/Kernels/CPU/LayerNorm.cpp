//===- LayerNorm.cpp - Layer normalization over the last dimension --------===//
//
// x is rows x cols; each row is normalized on its own. The statistics of a
// row are summed in double; rows are spread over the OpenMP threads, and the
// backward's scale and bias gradients are summed per thread, then added in
// thread order (the same result for the same thread count).
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/LayerNormDesc.h"

#include <omp.h>

#include <cmath>
#include <vector>

using namespace mgs::rt;

namespace {

mgsrt_status_t layerNormFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::layer_norm_fwd);
  LayerNormParams p;
  if (parseLayerNorm(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkLayerNormFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *scale = static_cast<const float *>(bufs[1]);
  const float *bias = static_cast<const float *>(bufs[2]);
  float *y = static_cast<float *>(bufs[3]);
  float *mean = static_cast<float *>(bufs[4]);
  float *invStd = static_cast<float *>(bufs[5]);
  const int64_t rows = p.rows, cols = p.cols;
#pragma omp parallel for if (rows * cols >= kParallelGrain && rows > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j)
      s += xr[j];
    const double m = s / static_cast<double>(cols);
    double v = 0.0;
#pragma omp simd reduction(+ : v)
    for (int64_t j = 0; j < cols; ++j) {
      const double d = xr[j] - m;
      v += d * d;
    }
    const float mf = static_cast<float>(m);
    const float rs = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(cols) + p.eps));
    float *yr = y + r * cols;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      yr[j] = (xr[j] - mf) * rs * scale[j] + bias[j];
    mean[r] = mf;
    invStd[r] = rs;
  }
  return MGSRT_OK;
}

mgsrt_status_t layerNormBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::layer_norm_bwd);
  LayerNormParams p;
  if (parseLayerNorm(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkLayerNormBwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *scale = static_cast<const float *>(bufs[1]);
  const float *mean = static_cast<const float *>(bufs[2]);
  const float *invStd = static_cast<const float *>(bufs[3]);
  const float *dy = static_cast<const float *>(bufs[4]);
  float *dx = static_cast<float *>(bufs[5]);
  float *dscale = static_cast<float *>(bufs[6]);
  float *dbias = static_cast<float *>(bufs[7]);
  const int64_t rows = p.rows, cols = p.cols;
  const bool params = dscale || dbias;
  const bool parallel = rows * cols >= kParallelGrain && rows > 1;
  const int threads = parallel ? omp_get_max_threads() : 1;
  // Per thread: the partial sums of dy * xhat (dscale) and of dy (dbias).
  std::vector<double> partial(params ? 2 * cols * threads : 0, 0.0);
#pragma omp parallel if (parallel) num_threads(threads)
  {
    double *ps = params ? partial.data() + 2 * cols * omp_get_thread_num() : nullptr;
    double *pb = params ? ps + cols : nullptr;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x + r * cols, *dyr = dy + r * cols;
      const float m = mean[r], rs = invStd[r];
      if (params) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) {
          ps[j] += static_cast<double>(dyr[j]) * ((xr[j] - m) * rs);
          pb[j] += dyr[j];
        }
      }
      if (!dx)
        continue;
      // dx = inv_std (g - E[g] - xhat E[g xhat]), g = dy * scale.
      double sg = 0.0, sgx = 0.0;
#pragma omp simd reduction(+ : sg, sgx)
      for (int64_t j = 0; j < cols; ++j) {
        const float g = dyr[j] * scale[j];
        sg += g;
        sgx += static_cast<double>(g) * ((xr[j] - m) * rs);
      }
      const float a = static_cast<float>(sg / static_cast<double>(cols));
      const float b = static_cast<float>(sgx / static_cast<double>(cols));
      float *dxr = dx + r * cols;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j)
        dxr[j] = rs * (dyr[j] * scale[j] - a - (xr[j] - m) * rs * b);
    }
  }
  for (int64_t j = 0; params && j < cols; ++j) {
    double s = 0.0, b = 0.0;
    for (int t = 0; t < threads; ++t) {
      s += partial[2 * cols * t + j];
      b += partial[2 * cols * t + cols + j];
    }
    if (dscale)
      dscale[j] = static_cast<float>(s);
    if (dbias)
      dbias[j] = static_cast<float>(b);
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t layer_norm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::layer_norm_fwd), desc, bufs,
                   [&] { return layerNormFwd(ctx, desc, bufs); });
}
mgsrt_status_t layer_norm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::layer_norm_bwd), desc, bufs,
                   [&] { return layerNormBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
