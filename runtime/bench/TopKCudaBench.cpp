//===- TopKCudaBench.cpp - Time mgsrt_topk_sparsify on a GPU ---------------===//
//
//   mgsrt_topk_cuda_bench [--n N] [--k K] [--reps R] [--data normal|layered]
//
// Times mgsrt_topk_sparsify on a GPU context through the C ABI: grad ~ N(0, 1)
// and residual ~ N(0, 0.25) (or layers of different scales), k of N kept.
//  - topk_ms: the median of R calls, each on the restored residual, timed on
//    the host from a synchronized stream to the end of mgsrt_synchronize
//    (includes the launches and one synchronization's latency);
//  - topk_batch_ms: R calls queued back to back, residual carried from call
//    to call as in training (error feedback), one synchronization, divided
//    by R: the kernel's throughput without per-call host round trips.
// The bounds (TopKCudaBenchBound.cu, CUDA events, medians of R):
//  - read_ms: one read of N floats (a sum): the bound the goal is stated in;
//  - add_ms: residual += grad (two reads, one write): the least traffic an
//    in-place error-feedback top-k can do.
// Prints "key value" lines (bench/topk_gpu_bench.py reads them). Exit code 3
// when no GPU is available.
//
//===----------------------------------------------------------------------===//

#include "BenchData.h"
#include "mgsrt/mgsrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

/// TopKCudaBenchBound.cu: medians in milliseconds, or < 0 with a message.
extern "C" double mgsrt_bench_read_ms(const float *host, int64_t n, int reps);
extern "C" double mgsrt_bench_add_ms(const float *grad, const float *residual, int64_t n,
                                     int reps);

using namespace mgsrt_bench;

namespace {

bool check(mgsrt_ctx_t *ctx, mgsrt_status_t s, const char *what) {
  if (s == MGSRT_OK)
    return true;
  std::fprintf(stderr, "%s failed: %s\n", what, mgsrt_ctx_message(ctx));
  return false;
}

} // namespace

int main(int argc, char **argv) {
  int64_t n = 25557032, k = -1;
  int reps = 21;
  std::string data = "normal";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--n")
      n = std::atoll(argv[i + 1]);
    else if (a == "--k")
      k = std::atoll(argv[i + 1]);
    else if (a == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--data")
      data = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (k < 0)
    k = std::max<int64_t>(1, static_cast<int64_t>(0.001 * n));

  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  if (mgsrt_ctx_set_device(ctx, MGSRT_DEVICE_CUDA, 0) != MGSRT_OK) {
    std::fprintf(stderr, "no GPU: %s\n", mgsrt_ctx_message(ctx));
    mgsrt_ctx_destroy(ctx);
    return 3;
  }
  std::vector<float> grad(n), residual0(n);
  fill(grad, data, 1, 1.0f);
  fill(residual0, data, 2, 0.5f);

  void *dGrad = nullptr, *dResidual = nullptr, *dValues = nullptr, *dIndices = nullptr;
  if (!check(ctx, mgsrt_alloc(ctx, n * sizeof(float), &dGrad), "alloc") ||
      !check(ctx, mgsrt_alloc(ctx, n * sizeof(float), &dResidual), "alloc") ||
      !check(ctx, mgsrt_alloc(ctx, k * sizeof(float), &dValues), "alloc") ||
      !check(ctx, mgsrt_alloc(ctx, k * sizeof(int32_t), &dIndices), "alloc") ||
      !check(ctx, mgsrt_copy_to_device(ctx, dGrad, grad.data(), n * sizeof(float)), "copy"))
    return 1;
  const int64_t desc[] = {n, k};
  void *bufs[] = {dGrad, dResidual, dValues, dIndices};

  std::vector<double> topk;
  for (int r = 0; r < reps + 1; ++r) { // the first run warms up (workspace, caches)
    if (!check(ctx, mgsrt_copy_to_device(ctx, dResidual, residual0.data(), n * sizeof(float)),
               "copy") ||
        !check(ctx, mgsrt_synchronize(ctx), "synchronize"))
      return 1;
    const double t0 = seconds();
    mgsrt_status_t s = mgsrt_topk_sparsify(ctx, desc, bufs);
    if (s == MGSRT_OK)
      s = mgsrt_synchronize(ctx);
    const double t1 = seconds();
    if (!check(ctx, s, "topk_sparsify"))
      return 1;
    if (r > 0)
      topk.push_back(t1 - t0);
  }
  if (!check(ctx, mgsrt_copy_to_device(ctx, dResidual, residual0.data(), n * sizeof(float)),
             "copy") ||
      !check(ctx, mgsrt_synchronize(ctx), "synchronize"))
    return 1;
  const double b0 = seconds();
  for (int r = 0; r < reps; ++r)
    if (!check(ctx, mgsrt_topk_sparsify(ctx, desc, bufs), "topk_sparsify"))
      return 1;
  if (!check(ctx, mgsrt_synchronize(ctx), "synchronize"))
    return 1;
  const double batch = (seconds() - b0) / reps;
  mgsrt_free(ctx, dGrad);
  mgsrt_free(ctx, dResidual);
  mgsrt_free(ctx, dValues);
  mgsrt_free(ctx, dIndices);
  mgsrt_ctx_destroy(ctx);

  const double readMs = mgsrt_bench_read_ms(grad.data(), n, reps);
  const double addMs = mgsrt_bench_add_ms(grad.data(), residual0.data(), n, reps);
  if (readMs < 0 || addMs < 0)
    return 1;
  const double topkMs = median(topk) * 1e3, batchMs = batch * 1e3;
  std::printf("n %lld\nk %lld\nreps %d\ndata %s\n", static_cast<long long>(n),
              static_cast<long long>(k), reps, data.c_str());
  std::printf("topk_ms %.4f\ntopk_min_ms %.4f\ntopk_batch_ms %.4f\nread_ms %.4f\nadd_ms %.4f\n",
              topkMs, *std::min_element(topk.begin(), topk.end()) * 1e3, batchMs, readMs, addMs);
  std::printf("read_gbps %.1f\nread_fraction %.3f\nread_fraction_batch %.3f\n"
              "add_fraction_batch %.3f\n",
              n * 4.0 / (readMs * 1e-3) / 1e9, readMs / topkMs, readMs / batchMs,
              addMs / batchMs);
  return 0;
}
