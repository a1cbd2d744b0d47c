//===- TopKCudaBenchBound.cu - Memory bounds for mgsrt_topk_cuda_bench -----===//
//
// The bench's reference kernels, on this file's own buffers and stream,
// timed with CUDA events (medians): one read of n floats (a sum) and
// residual += grad (two reads, one write).
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

/// Sum of n floats: float4 loads, four in flight a thread, one atomic a block.
__global__ void sumKernel(const float *__restrict__ x, int64_t n, float *out) {
  const int64_t n4 = n / 4, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  float acc = 0.0f;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 a = __ldcs(x4 + i), b = __ldcs(x4 + i + stride), c = __ldcs(x4 + i + 2 * stride),
           d = __ldcs(x4 + i + 3 * stride);
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) +
           (d.x + d.y + d.z + d.w);
  }
  for (; i < n4; i += stride) {
    float4 a = __ldcs(x4 + i);
    acc += a.x + a.y + a.z + a.w;
  }
  if (blockIdx.x == 0 && threadIdx.x < n % 4)
    acc += x[n4 * 4 + threadIdx.x];
  for (int off = 16; off > 0; off >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, off);
  __shared__ float warpSums[32];
  if ((threadIdx.x & 31) == 0)
    warpSums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned w = 0; w < blockDim.x / 32; ++w)
      s += warpSums[w];
    atomicAdd(out, s);
  }
}

__global__ void addKernel(const float *__restrict__ g, float *__restrict__ r, int64_t n) {
  const int64_t n4 = n / 4, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const float4 *g4 = reinterpret_cast<const float4 *>(g);
  float4 *r4 = reinterpret_cast<float4 *>(r);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    float4 a = __ldcs(g4 + i), b = __ldcs(r4 + i);
    __stcs(r4 + i, make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
  }
  if (blockIdx.x == 0 && threadIdx.x < n % 4)
    r[n4 * 4 + threadIdx.x] += g[n4 * 4 + threadIdx.x];
}

bool ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

template <typename Launch> double timeMs(cudaStream_t s, int reps, Launch launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> times;
  for (int r = 0; r < reps + 1; ++r) {
    cudaEventRecord(a, s);
    launch();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (r > 0)
      times.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int gridSize() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  return std::max(1, sms) * 8;
}

} // namespace

extern "C" double mgsrt_bench_read_ms(const float *host, int64_t n, int reps) {
  float *x = nullptr, *out = nullptr;
  cudaStream_t s;
  if (!ok(cudaStreamCreate(&s), "cudaStreamCreate") ||
      !ok(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMalloc(&out, sizeof(float)), "cudaMalloc") ||
      !ok(cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy"))
    return -1;
  const int grid = gridSize();
  double ms = timeMs(s, reps, [&] { sumKernel<<<grid, 256, 0, s>>>(x, n, out); });
  bool good = ok(cudaGetLastError(), "sum kernel");
  cudaFree(x);
  cudaFree(out);
  cudaStreamDestroy(s);
  return good ? ms : -1;
}

extern "C" double mgsrt_bench_add_ms(const float *grad, const float *residual, int64_t n,
                                     int reps) {
  float *g = nullptr, *r = nullptr;
  cudaStream_t s;
  if (!ok(cudaStreamCreate(&s), "cudaStreamCreate") ||
      !ok(cudaMalloc(&g, n * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMalloc(&r, n * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMemcpy(g, grad, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") ||
      !ok(cudaMemcpy(r, residual, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy"))
    return -1;
  const int grid = gridSize();
  double ms = timeMs(s, reps, [&] { addKernel<<<grid, 256, 0, s>>>(g, r, n); });
  bool good = ok(cudaGetLastError(), "add kernel");
  cudaFree(g);
  cudaFree(r);
  cudaStreamDestroy(s);
  return good ? ms : -1;
}
