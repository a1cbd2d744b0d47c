//===- TopKBench.cpp - Time mgsrt_topk_sparsify against the memory bound --===//
//
//   mgsrt_topk_bench [--n N] [--k K] [--threads T] [--reps R] [--data normal|layered]
//
// Times mgsrt_topk_sparsify on N floats (grad and residual, k of them kept),
// a plain sum over N floats (one read of the data: the memory bound the
// benchmark is measured against) and residual += grad (the traffic the
// kernel's interface needs at least: two reads and a write), each the median
// of R runs with T OpenMP threads. The residual is restored before every
// top-k run. Prints "key value" lines (bench/topk_bench.py reads them).
//
//===----------------------------------------------------------------------===//

#include "BenchData.h"
#include "mgsrt/mgsrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

using namespace mgsrt_bench;

int main(int argc, char **argv) {
  int64_t n = 25557032, k = -1;
  int threads = 2, reps = 11;
  std::string data = "normal";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--n")
      n = std::atoll(argv[i + 1]);
    else if (a == "--k")
      k = std::atoll(argv[i + 1]);
    else if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--data")
      data = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (k < 0)
    k = std::max<int64_t>(1, static_cast<int64_t>(0.001 * n));
  omp_set_num_threads(threads);

  std::vector<float> grad(n), residual0(n), residual(n), values(k);
  std::vector<int32_t> indices(k);
  fill(grad, data, 1, 1.0f);
  fill(residual0, data, 2, 0.5f);

  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  const int64_t desc[] = {n, k};
  void *bufs[] = {grad.data(), residual.data(), values.data(), indices.data()};
  std::vector<double> topk, sum, add;
  for (int r = 0; r < reps + 1; ++r) { // the first run warms up
    std::memcpy(residual.data(), residual0.data(), n * sizeof(float));
    double t0 = seconds();
    mgsrt_status_t st = mgsrt_topk_sparsify(ctx, desc, bufs);
    double t1 = seconds();
    if (st != MGSRT_OK) {
      std::fprintf(stderr, "topk_sparsify failed: %s\n", mgsrt_ctx_message(ctx));
      return 1;
    }
    if (r > 0)
      topk.push_back(t1 - t0);
  }
  volatile float sink = 0;
  const float *g = grad.data();
  for (int r = 0; r < reps + 1; ++r) {
    double t0 = seconds();
    float total = 0;
#pragma omp parallel reduction(+ : total)
    {
      // 16 independent accumulators: bound by memory, not by add latency.
      float acc[16] = {0};
      const int T = omp_get_num_threads(), id = omp_get_thread_num();
      const int64_t lo = n * id / T, hi = n * (id + 1) / T;
      int64_t i = lo;
      for (; i + 16 <= hi; i += 16)
#pragma omp simd
        for (int j = 0; j < 16; ++j)
          acc[j] += g[i + j];
      for (; i < hi; ++i)
        acc[0] += g[i];
      for (float a : acc)
        total += a;
    }
    sink = total;
    double t1 = seconds();
    if (r > 0)
      sum.push_back(t1 - t0);
  }
  float *res = residual.data();
  for (int r = 0; r < reps + 1; ++r) {
    double t0 = seconds();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i)
      res[i] += g[i];
    double t1 = seconds();
    if (r > 0)
      add.push_back(t1 - t0);
  }
  (void)sink;
  mgsrt_ctx_destroy(ctx);
  std::printf("n %lld\nk %lld\nthreads %d\nreps %d\ndata %s\n", static_cast<long long>(n),
              static_cast<long long>(k), threads, reps, data.c_str());
  std::printf("topk_ms %.3f\ntopk_min_ms %.3f\nsum_ms %.3f\nadd_ms %.3f\n", median(topk) * 1e3,
              *std::min_element(topk.begin(), topk.end()) * 1e3, median(sum) * 1e3,
              median(add) * 1e3);
  return 0;
}
