//===- Pool.cu - Max / average pooling (ONNX semantics) on the GPU --------===//
//
// Custom kernels rather than cuDNN pooling: cuDNN has no ONNX rules for
// ceil-mode windows overhanging the padded input, no dilation, no int64
// ONNX indices (with storage_order) and no "first in row-major order" tie
// rule. The window arithmetic is Descriptors/PoolDesc.h's (one definition for both
// devices), so the results are the CPU's bit for bit: the sums run in the
// same order in the same precision.
//
// Forward: a thread per output element. Backward gathers (a thread per input
// element loops over the windows that contain it, in row-major output order,
// as the CPU's scatter adds them), so it is deterministic and needs no
// atomics. Max backward first recomputes each window's argmax into the
// workspace.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/PoolDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;

/// Output position (o0, o1, o2) of flat in-plane index oi.
__device__ inline void outPos(const PoolParams &p, int64_t oi, int64_t o[3]) {
  o[2] = oi % p.out[2];
  o[1] = (oi / p.out[2]) % p.out[1];
  o[0] = oi / (p.out[2] * p.out[1]);
}

/// The row-major offset in the plane of the window's max (the first in
/// row-major window order on ties; padding never wins), or -1 for a window
/// with no in-bounds tap. As CPU/Pool.cpp's windowArgMax.
__device__ int64_t windowArgMax(const PoolParams &p, const float *x, const int64_t o[3]) {
  const PoolWindow w0 = poolWindow(p, 0, o[0]), w1 = poolWindow(p, 1, o[1]),
                   w2 = poolWindow(p, 2, o[2]);
  int64_t best = -1;
  float bestV = 0.0f;
  for (int64_t k0 = w0.lo; k0 < w0.hi; ++k0) {
    const int64_t q0 = w0.start + k0 * p.dilations[0];
    for (int64_t k1 = w1.lo; k1 < w1.hi; ++k1) {
      const int64_t row = (q0 * p.in[1] + w1.start + k1 * p.dilations[1]) * p.in[2] + w2.start;
      for (int64_t k2 = w2.lo; k2 < w2.hi; ++k2) {
        const int64_t off = row + k2 * p.dilations[2];
        const float v = x[off];
        if (best < 0 || v > bestV) {
          best = off;
          bestV = v;
        }
      }
    }
  }
  return best;
}

__global__ void maxPoolFwdKernel(PoolParams p, const float *__restrict__ x, float *__restrict__ y,
                                 int64_t *__restrict__ indices, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t plane = i / p.outPlane;
    int64_t o[3];
    outPos(p, i % p.outPlane, o);
    const float *xp = x + plane * p.inPlane;
    const int64_t arg = windowArgMax(p, xp, o);
    // A window with no in-bounds tap yields 0 and index -1 (ONNX's reference).
    y[i] = arg >= 0 ? xp[arg] : 0.0f;
    if (indices) {
      if (arg < 0) {
        indices[i] = -1;
      } else {
        const int64_t q2 = arg % p.in[2], q1 = (arg / p.in[2]) % p.in[1],
                      q0 = arg / (p.in[2] * p.in[1]);
        indices[i] = plane * p.inPlane + onnxIndex(p, q0, q1, q2);
      }
    }
  }
}

__global__ void avgPoolFwdKernel(PoolParams p, const float *__restrict__ x, float *__restrict__ y,
                                 int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t plane = i / p.outPlane;
    int64_t o[3];
    outPos(p, i % p.outPlane, o);
    const float *xp = x + plane * p.inPlane;
    const PoolWindow w0 = poolWindow(p, 0, o[0]), w1 = poolWindow(p, 1, o[1]),
                     w2 = poolWindow(p, 2, o[2]);
    const double div = w0.divisor * w1.divisor * w2.divisor;
    double sum = 0.0;
    for (int64_t k0 = w0.lo; k0 < w0.hi; ++k0) {
      const int64_t q0 = w0.start + k0 * p.dilations[0];
      for (int64_t k1 = w1.lo; k1 < w1.hi; ++k1) {
        const float *row =
            xp + (q0 * p.in[1] + w1.start + k1 * p.dilations[1]) * p.in[2] + w2.start;
        for (int64_t k2 = w2.lo; k2 < w2.hi; ++k2)
          sum += row[k2 * p.dilations[2]];
      }
    }
    y[i] = div > 0.0 ? static_cast<float>(sum / div) : 0.0f;
  }
}

/// Each window's argmax (row-major offset in its plane, -1: none).
__global__ void argMaxKernel(PoolParams p, const float *__restrict__ x, int64_t *__restrict__ arg,
                             int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t o[3];
    outPos(p, i % p.outPlane, o);
    arg[i] = windowArgMax(p, x + (i / p.outPlane) * p.inPlane, o);
  }
}

/// The outputs [first, last] along dim d whose windows may hold input
/// position q (those with (q + pad - o * stride) % dilation == 0 do).
__device__ inline void windowsHolding(const PoolParams &p, int d, int64_t q, int64_t &first,
                                      int64_t &last) {
  const int64_t pos = q + p.padsBegin[d], st = p.strides[d];
  const int64_t lowest = pos - (p.kernel[d] - 1) * p.dilations[d]; // o * st >= lowest
  first = lowest <= 0 ? 0 : (lowest + st - 1) / st;
  last = pos / st;
  if (last > p.out[d] - 1)
    last = p.out[d] - 1;
}

__device__ inline bool tapHits(const PoolParams &p, int d, int64_t q, int64_t o) {
  return (q + p.padsBegin[d] - o * p.strides[d]) % p.dilations[d] == 0;
}

/// dx by gathering: dy of each window holding the element (max: only where
/// it is the window's argmax; average: dy / divisor), added in row-major
/// output order from 0, as the CPU's scatter adds them.
template <bool IsMax>
__global__ void poolBwdKernel(PoolParams p, const float *__restrict__ dy,
                              const int64_t *__restrict__ arg, float *__restrict__ dx,
                              int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t plane = i / p.inPlane, q = i % p.inPlane;
    const int64_t q2 = q % p.in[2], q1 = (q / p.in[2]) % p.in[1], q0 = q / (p.in[2] * p.in[1]);
    int64_t f0, l0, f1, l1, f2, l2;
    windowsHolding(p, 0, q0, f0, l0);
    windowsHolding(p, 1, q1, f1, l1);
    windowsHolding(p, 2, q2, f2, l2);
    const float *dyp = dy + plane * p.outPlane;
    float acc = 0.0f;
    for (int64_t o0 = f0; o0 <= l0; ++o0) {
      if (!tapHits(p, 0, q0, o0))
        continue;
      const double div0 = IsMax ? 1.0 : poolWindow(p, 0, o0).divisor;
      for (int64_t o1 = f1; o1 <= l1; ++o1) {
        if (!tapHits(p, 1, q1, o1))
          continue;
        const double div1 = IsMax ? 1.0 : poolWindow(p, 1, o1).divisor;
        for (int64_t o2 = f2; o2 <= l2; ++o2) {
          if (!tapHits(p, 2, q2, o2))
            continue;
          const int64_t oi = (o0 * p.out[1] + o1) * p.out[2] + o2;
          if (IsMax) {
            if (arg[plane * p.outPlane + oi] == q)
              acc += dyp[oi];
          } else {
            const double div = div0 * div1 * poolWindow(p, 2, o2).divisor;
            if (div > 0.0)
              acc += static_cast<float>(dyp[oi] / div);
          }
        }
      }
    }
    dx[i] = acc;
  }
}

mgsrt_status_t poolFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::pool_fwd);
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkPoolFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const int64_t total = p.n * p.c * p.outPlane;
  if (total == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  cudaStream_t s = state(ctx).stream;
  if (p.kind == MGSRT_POOL_MAX)
    maxPoolFwdKernel<<<gridFor(total, kThreads), kThreads, 0, s>>>(
        p, x, y, static_cast<int64_t *>(bufs[2]), total);
  else
    avgPoolFwdKernel<<<gridFor(total, kThreads), kThreads, 0, s>>>(p, x, y, total);
  return MGSRT_OK;
}

mgsrt_status_t poolBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::pool_bwd);
  PoolParams p;
  if (parsePool(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkPoolBwdBufs(ctx, kernel, bufs, p))
    return ctx->status;
  const int64_t planes = p.n * p.c, outTotal = planes * p.outPlane,
                inTotal = planes * p.inPlane;
  if (inTotal == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  cudaStream_t s = state(ctx).stream;
  if (p.kind == MGSRT_POOL_MAX) {
    void *ws = nullptr;
    if (workspace(ctx, kernel, sizeof(int64_t) * outTotal, &ws))
      return ctx->status;
    int64_t *arg = static_cast<int64_t *>(ws);
    argMaxKernel<<<gridFor(outTotal, kThreads), kThreads, 0, s>>>(p, x, arg, outTotal);
    poolBwdKernel<true><<<gridFor(inTotal, kThreads), kThreads, 0, s>>>(p, dy, arg, dx, inTotal);
  } else {
    poolBwdKernel<false><<<gridFor(inTotal, kThreads), kThreads, 0, s>>>(p, dy, nullptr, dx,
                                                                          inTotal);
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t pool_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::pool_fwd), desc, bufs, [&] { return poolFwd(ctx, desc, bufs); });
}
mgsrt_status_t pool_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::pool_bwd), desc, bufs, [&] { return poolBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
