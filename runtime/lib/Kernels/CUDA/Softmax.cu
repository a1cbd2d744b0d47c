//===- Softmax.cu - Softmax, log-softmax, softmax cross-entropy on a GPU --===//
//
// The CPU kernels' semantics (CPU/Softmax.cpp) and checks (Descriptors/SoftmaxDesc.h),
// with the same precision: float max and exponentials, sums in double
// (cross-entropy entirely in double here; the CPU's exps are float since
// its rows became vector loops). The tensor is outer x axis x inner.
// With inner == 1 a group of threads (a warp, or a block for long rows)
// handles each contiguous row; otherwise one thread handles one (outer,
// inner) column, the threads of a warp taking adjacent columns. Every
// reduction runs in a fixed order (shuffle trees, then warps in order): the
// same result on every run.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/SoftmaxDesc.h"

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;
constexpr int kWarps = kThreads / 32;


/// std::max(a, b) of the CPU: NaN in b never wins.
__device__ inline float maxOf(float a, float b) { return a < b ? b : a; }

/// Reductions over a group of TPR threads (32: one warp, no barrier; kThreads:
/// the whole block, which must reach the call together). Every thread of the
/// group gets the result.
template <int TPR> struct Group {
  static_assert(TPR == 32 || TPR == static_cast<int>(kThreads), "a warp or the block");

  template <typename T, typename F> __device__ static T reduce(T v, F combine, T *shared) {
    for (int delta = 16; delta > 0; delta >>= 1)
      v = combine(v, __shfl_xor_sync(0xffffffffu, v, delta));
    if constexpr (TPR == 32) {
      (void)shared;
      return v;
    } else {
      const int warp = threadIdx.x / 32;
      if ((threadIdx.x & 31) == 0)
        shared[warp] = v;
      __syncthreads();
      T r = shared[0];
      for (int w = 1; w < kWarps; ++w)
        r = combine(r, shared[w]);
      __syncthreads(); // shared is reused by the next reduction
      return r;
    }
  }
  __device__ static float max(float v, float *shared) {
    return reduce(v, [](float a, float b) { return maxOf(a, b); }, shared);
  }
  __device__ static double sum(double v, double *shared) {
    return reduce(v, [](double a, double b) { return a + b; }, shared);
  }
};

/// The row index of this thread's group, and its lane in the group.
template <int TPR> __device__ inline int64_t groupRow() {
  return static_cast<int64_t>(blockIdx.x) * (kThreads / TPR) + threadIdx.x / TPR;
}
template <int TPR> __device__ inline int64_t groupRows() {
  return static_cast<int64_t>(gridDim.x) * (kThreads / TPR);
}

//===----------------------------------------------------------------------===//
// Softmax forward
//===----------------------------------------------------------------------===//

/// Contiguous rows (inner == 1). The row loop is uniform over a group (and,
/// for TPR = kThreads, over the block), so the group reductions are safe.
template <int TPR>
__global__ void softmaxRowsKernel(const float *__restrict__ x, float *__restrict__ y,
                                  int64_t rows, int64_t n, bool log) {
  __shared__ float smax[kWarps];
  __shared__ double ssum[kWarps];
  const int lane = threadIdx.x % TPR;
  for (int64_t row = groupRow<TPR>(); row < rows; row += groupRows<TPR>()) {
    const float *xr = x + row * n;
    float *yr = y + row * n;
    float mx = -INFINITY;
    for (int64_t i = lane; i < n; i += TPR)
      mx = maxOf(mx, xr[i]);
    mx = Group<TPR>::max(mx, smax);
    double sum = 0.0;
    for (int64_t i = lane; i < n; i += TPR) {
      const float e = expf(xr[i] - mx);
      if (!log)
        yr[i] = e;
      sum += e;
    }
    sum = Group<TPR>::sum(sum, ssum);
    if (log) {
      const float lse = mx + static_cast<float>(::log(sum));
      for (int64_t i = lane; i < n; i += TPR)
        yr[i] = xr[i] - lse;
    } else {
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t i = lane; i < n; i += TPR) // the elements this thread wrote
        yr[i] *= inv;
    }
  }
}

/// Strided columns (inner > 1): one thread per (outer, inner) position.
__global__ void softmaxColumnsKernel(const float *__restrict__ x, float *__restrict__ y,
                                     int64_t outer, int64_t axis, int64_t inner, bool log) {
  const int64_t columns = outer * inner;
  for (int64_t c = firstIndex(); c < columns; c += gridStride()) {
    const int64_t o = c / inner, i = c % inner;
    const float *xc = x + o * axis * inner + i;
    float *yc = y + o * axis * inner + i;
    float mx = -INFINITY;
    for (int64_t a = 0; a < axis; ++a)
      mx = maxOf(mx, xc[a * inner]);
    double sum = 0.0;
    for (int64_t a = 0; a < axis; ++a) {
      const float e = expf(xc[a * inner] - mx);
      if (!log)
        yc[a * inner] = e;
      sum += e;
    }
    if (log) {
      const float lse = mx + static_cast<float>(::log(sum));
      for (int64_t a = 0; a < axis; ++a)
        yc[a * inner] = xc[a * inner] - lse;
    } else {
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t a = 0; a < axis; ++a)
        yc[a * inner] *= inv;
    }
  }
}

/// Rows longer than this get a whole block each, shorter ones a warp.
constexpr int64_t kBlockRow = 1024;

/// Blocks for `rows` rows of TPR threads each.
template <int TPR> unsigned rowGrid(int64_t rows) {
  return gridFor(rows * TPR, kThreads);
}

mgsrt_status_t softmaxFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  SoftmaxParams p;
  if (parseSoftmax(ctx, kernelName(Kernel::softmax_fwd), desc, bufs, false, p))
    return ctx->status;
  if (p.outer * p.axis * p.inner == 0)
    return MGSRT_OK;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  cudaStream_t st = state(ctx).stream;
  if (p.inner == 1) {
    if (p.axis > kBlockRow)
      softmaxRowsKernel<kThreads><<<rowGrid<kThreads>(p.outer), kThreads, 0, st>>>(
          x, y, p.outer, p.axis, p.log);
    else
      softmaxRowsKernel<32><<<rowGrid<32>(p.outer), kThreads, 0, st>>>(x, y, p.outer, p.axis,
                                                                      p.log);
  } else {
    softmaxColumnsKernel<<<gridFor(p.outer * p.inner, kThreads), kThreads, 0, st>>>(
        x, y, p.outer, p.axis, p.inner, p.log);
  }
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Softmax backward
//   softmax:     dx = y * (dy - sum(dy * y))
//   log-softmax: dx = dy - exp(y) * sum(dy)
//===----------------------------------------------------------------------===//

/// The term summed over the axis (the product rounded to float, as on the CPU).
__device__ inline double bwdTerm(float y, float g, bool log) {
  return log ? g : __fmul_rn(g, y);
}
__device__ inline float bwdOut(float y, float g, float s, bool log) {
  return log ? g - __fmul_rn(expf(y), s) : y * (g - s);
}

template <int TPR>
__global__ void softmaxBwdRowsKernel(const float *__restrict__ y, const float *__restrict__ dy,
                                     float *__restrict__ dx, int64_t rows, int64_t n, bool log) {
  __shared__ double ssum[kWarps];
  const int lane = threadIdx.x % TPR;
  for (int64_t row = groupRow<TPR>(); row < rows; row += groupRows<TPR>()) {
    const float *yr = y + row * n, *gr = dy + row * n;
    float *dr = dx + row * n;
    double sum = 0.0;
    for (int64_t i = lane; i < n; i += TPR)
      sum += bwdTerm(yr[i], gr[i], log);
    const float s = static_cast<float>(Group<TPR>::sum(sum, ssum));
    for (int64_t i = lane; i < n; i += TPR)
      dr[i] = bwdOut(yr[i], gr[i], s, log);
  }
}

__global__ void softmaxBwdColumnsKernel(const float *__restrict__ y,
                                        const float *__restrict__ dy, float *__restrict__ dx,
                                        int64_t outer, int64_t axis, int64_t inner, bool log) {
  const int64_t columns = outer * inner;
  for (int64_t c = firstIndex(); c < columns; c += gridStride()) {
    const int64_t base = (c / inner) * axis * inner + c % inner;
    double sum = 0.0;
    for (int64_t a = 0; a < axis; ++a)
      sum += bwdTerm(y[base + a * inner], dy[base + a * inner], log);
    const float s = static_cast<float>(sum);
    for (int64_t a = 0; a < axis; ++a)
      dx[base + a * inner] = bwdOut(y[base + a * inner], dy[base + a * inner], s, log);
  }
}

mgsrt_status_t softmaxBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  SoftmaxParams p;
  if (parseSoftmax(ctx, kernelName(Kernel::softmax_bwd), desc, bufs, true, p))
    return ctx->status;
  if (p.outer * p.axis * p.inner == 0)
    return MGSRT_OK;
  const float *y = static_cast<const float *>(bufs[0]);
  const float *dy = static_cast<const float *>(bufs[1]);
  float *dx = static_cast<float *>(bufs[2]);
  cudaStream_t st = state(ctx).stream;
  if (p.inner == 1) {
    if (p.axis > kBlockRow)
      softmaxBwdRowsKernel<kThreads><<<rowGrid<kThreads>(p.outer), kThreads, 0, st>>>(
          y, dy, dx, p.outer, p.axis, p.log);
    else
      softmaxBwdRowsKernel<32><<<rowGrid<32>(p.outer), kThreads, 0, st>>>(y, dy, dx, p.outer,
                                                                         p.axis, p.log);
  } else {
    softmaxBwdColumnsKernel<<<gridFor(p.outer * p.inner, kThreads), kThreads, 0, st>>>(
        y, dy, dx, p.outer, p.axis, p.inner, p.log);
  }
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Softmax cross-entropy
//===----------------------------------------------------------------------===//

/// *check = the lowest sample whose label is neither a class nor ignored
/// (left at its initial all-ones value when there is none), *count += the
/// samples counted (not ignored).
__global__ void checkLabelsKernel(const int64_t *__restrict__ labels, CrossEntropyParams p,
                                  unsigned long long *check, unsigned long long *count) {
  unsigned long long counted = 0;
  for (int64_t i = firstIndex(); i < p.n; i += gridStride()) {
    bool bad;
    counted += p.counts(labels[i], bad);
    if (bad)
      atomicMin(check, static_cast<unsigned long long>(i));
  }
  if (counted)
    atomicAdd(count, counted);
}

/// With class weights (one block, a fixed-order sum): sums[0] = the sum of
/// w[label] over the counted samples (the mean's denominator), sums[1] = the
/// sum of every class's weight. Bad labels are skipped (the check reports
/// them).
__global__ void crossEntropyWeightSumsKernel(const int64_t *__restrict__ labels,
                                             CrossEntropyParams p, double *sums) {
  __shared__ double ssum[kWarps];
  double norm = 0.0, total = 0.0;
  for (int64_t i = threadIdx.x; i < p.n; i += kThreads) {
    bool bad;
    if (p.counts(labels[i], bad) && !bad)
      norm += p.weight[labels[i]];
  }
  for (int64_t j = threadIdx.x; j < p.c; j += kThreads)
    total += p.weight[j];
  norm = Group<kThreads>::sum(norm, ssum);
  total = Group<kThreads>::sum(total, ssum);
  if (threadIdx.x == 0) {
    sums[0] = norm;
    sums[1] = total;
  }
}

/// The factors of the loss and its gradient (crossEntropyScalesKernel), in
/// device memory: a step captured as a CUDA graph computes them there.
struct CrossEntropyScales {
  double invN, gradScale, weightSum;
};

/// The factors from the label check's count or the weight sums, as the host
/// computed them before (the same double operations).
__global__ void crossEntropyScalesKernel(const unsigned long long *__restrict__ count,
                                         const double *__restrict__ weightSums,
                                         CrossEntropyParams p, double lossScale,
                                         CrossEntropyScales *__restrict__ out) {
  const double norm = p.weight ? weightSums[0] : static_cast<double>(*count);
  const double invN = p.reductionScale(norm);
  out->invN = invN;
  out->gradScale = __dmul_rn(invN, lossScale);
  out->weightSum = p.weight ? weightSums[1] : static_cast<double>(p.c);
}

/// One warp per sample, with the target (1 - e) onehot(label) + e / c
/// weighted by the class weights w (1 without): rowLoss[i] = rowScale lse_i -
/// (1 - e) w[label] logit[i, label] - e / c sum_j w[j] logit[i, j] (double),
/// and dlogits (if any) = (softmax rowScale - (1 - e) w[label] onehot -
/// e / c w) * invN; 0 on ignored rows. rowScale = p.rowScale(label,
/// weightSum): 1 without weights. invN here is the scales' gradScale (the
/// mean's factor times the loss scale). Nothing when the label check found a
/// bad label (a graph's replay runs it regardless; the error comes after).
__global__ void crossEntropyRowsKernel(const float *__restrict__ logits,
                                       const int64_t *__restrict__ labels, CrossEntropyParams p,
                                       const unsigned long long *__restrict__ verdict,
                                       const CrossEntropyScales *__restrict__ scales,
                                       double *__restrict__ rowLoss,
                                       float *__restrict__ dlogits) {
  if (*verdict != ~0ull)
    return;
  const double invN = scales->gradScale, weightSum = scales->weightSum;
  const int lane = threadIdx.x % 32;
  const int64_t c = p.c;
  for (int64_t i = groupRow<32>(); i < p.n; i += groupRows<32>()) {
    const int64_t label = labels[i];
    if (label == p.ignoreIndex) {
      if (lane == 0)
        rowLoss[i] = 0.0;
      if (dlogits)
        for (int64_t j = lane; j < c; j += 32)
          dlogits[i * c + j] = 0.0f;
      continue;
    }
    const float *row = logits + i * c;
    if (p.logProbabilities) { // the negative log-likelihood: no softmax
      const double wLabel = p.classWeight(label);
      if (lane == 0)
        rowLoss[i] = -wLabel * row[label];
      if (dlogits)
        for (int64_t j = lane; j < c; j += 32)
          dlogits[i * c + j] = j == label ? static_cast<float>(-wLabel * invN) : 0.0f;
      continue;
    }
    float mx = -INFINITY;
    for (int64_t j = lane; j < c; j += 32)
      mx = maxOf(mx, row[j]);
    mx = Group<32>::max(mx, nullptr);
    double sum = 0.0, rowSum = 0.0;
    for (int64_t j = lane; j < c; j += 32) {
      sum += exp(static_cast<double>(row[j]) - mx);
      rowSum += p.classWeight(j) * row[j];
    }
    sum = Group<32>::sum(sum, nullptr);
    const double lse = mx + ::log(sum);
    if (p.smoothing != 0.0)
      rowSum = Group<32>::sum(rowSum, nullptr);
    const double wLabel = p.classWeight(label);
    const double scale = p.rowScale(label, weightSum);
    if (lane == 0)
      rowLoss[i] = p.smoothing == 0.0 ? wLabel * (lse - row[label])
                                      : scale * lse - (1.0 - p.smoothing) * wLabel * row[label] -
                                            p.smoothing * rowSum / c;
    if (dlogits) {
      float *drow = dlogits + i * c;
      const double spread = p.smoothing * invN / c;
      for (int64_t j = lane; j < c; j += 32) {
        float v = static_cast<float>(exp(row[j] - lse) * scale * invN - spread * p.classWeight(j));
        if (j == label)
          v -= static_cast<float>((1.0 - p.smoothing) * wLabel * invN);
        drow[j] = v;
      }
    }
  }
}

/// *loss = mean of rowLoss (one block; a fixed-order sum).
__global__ void crossEntropyMeanKernel(const double *__restrict__ rowLoss, int64_t n,
                                       const CrossEntropyScales *__restrict__ scales,
                                       float *__restrict__ loss) {
  __shared__ double ssum[kWarps];
  const double invN = scales->invN;
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads)
    sum += rowLoss[i];
  sum = Group<kThreads>::sum(sum, ssum);
  if (threadIdx.x == 0)
    *loss = static_cast<float>(sum * invN);
}

/// loss[i] = rowLoss[i] (reduction "none": each sample's loss).
__global__ void crossEntropyPerSampleKernel(const double *__restrict__ rowLoss, int64_t n,
                                            float *__restrict__ loss) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    loss[i] = static_cast<float>(rowLoss[i]);
}

mgsrt_status_t softmaxCrossEntropy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::softmax_cross_entropy);
  CrossEntropyParams p;
  if (parseCrossEntropy(ctx, kernel, desc, bufs, p))
    return ctx->status;
  const int64_t n = p.n;
  const float *logits = static_cast<const float *>(bufs[0]);
  const int64_t *labels = static_cast<const int64_t *>(bufs[1]);
  float *loss = static_cast<float *>(bufs[2]);
  float *dlogits = static_cast<float *>(bufs[3]);
  cudaStream_t st = state(ctx).stream;

  // Scratch: the check's verdict word (firstRefused's: the first bad sample;
  // a graph's own while capturing) and count, the weight sums, the factors,
  // one double per sample, then a copy of the class weights (stageOnDevice).
  void *ws = nullptr;
  if (workspace(ctx, kernel,
                sizeof(double) * (n + 7) + (p.weight ? sizeof(float) * p.c : 0), &ws))
    return ctx->status;
  auto *count = static_cast<unsigned long long *>(ws) + 1;
  double *weightSums = static_cast<double *>(ws) + 2;
  auto *scales = reinterpret_cast<CrossEntropyScales *>(static_cast<double *>(ws) + 4);
  double *rowLoss = static_cast<double *>(ws) + 7;
  if (p.weight &&
      stageOnDevice(ctx, kernel, p.weight, reinterpret_cast<float *>(rowLoss + n), p.c))
    return ctx->status;

  // The labels are checked (and the counted ones counted) before anything is
  // written, as on the CPU: the check runs on the device and its verdict is
  // read back (a synchronization). In a graph's capture the verdict is read
  // back after each replay instead (StepGraph::verdicts) and the rows kernel
  // skips its work on a bad label.
  MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(count, 0, sizeof *count, st));
  const unsigned long long *check = nullptr;
  if (mgsrt_status_t s = firstRefused(
          ctx, kernel, labels,
          [&](unsigned long long *first, cudaStream_t) {
            checkLabelsKernel<<<gridFor(n, kThreads), kThreads, 0, st>>>(labels, p, first, count);
            if (p.weight)
              crossEntropyWeightSumsKernel<<<1, kThreads, 0, st>>>(labels, p, weightSums);
            // Every label ignored (or weighing 0): no loss and no gradient
            // (PyTorch's mean is 0 / 0). The gradient's factor: the mean's
            // times the loss scale (exactly invN at 1).
            crossEntropyScalesKernel<<<1, 1, 0, st>>>(
                count, weightSums, p, p.unscaled ? 1.0 : static_cast<double>(ctx->lossScale),
                scales);
          },
          [kernel, p](mgsrt_ctx_t *c, int64_t at, int64_t label) {
            return badLabel(c, kernel, label, at, p);
          },
          check))
    return s;
  crossEntropyRowsKernel<<<rowGrid<32>(n), kThreads, 0, st>>>(logits, labels, p, check, scales,
                                                              rowLoss, dlogits);
  if (p.perSample)
    crossEntropyPerSampleKernel<<<gridFor(n, kThreads), kThreads, 0, st>>>(rowLoss, n, loss);
  else
    crossEntropyMeanKernel<<<1, kThreads, 0, st>>>(rowLoss, n, scales, loss);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t softmax_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::softmax_fwd), desc, bufs,
                       [&] { return softmaxFwd(ctx, desc, bufs); });
}
mgsrt_status_t softmax_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::softmax_bwd), desc, bufs,
                       [&] { return softmaxBwd(ctx, desc, bufs); });
}
mgsrt_status_t softmax_cross_entropy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::softmax_cross_entropy), desc, bufs,
                       [&] { return softmaxCrossEntropy(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
