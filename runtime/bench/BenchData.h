//===- BenchData.h - What the top-k benchmarks share ------------*- C++ -*-===//
//
// The clock, the median and the gradient-like data of mgsrt_topk_bench
// (CPU) and mgsrt_topk_cuda_bench (GPU), so both time the same input.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_BENCH_BENCHDATA_H
#define MGSRT_BENCH_BENCHDATA_H

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mgsrt_bench {

inline double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Normal data (the default, like torch.randn) or layers of very different
/// scales, like a model's gradient. Filled in 64 chunks of their own seeds
/// (in parallel where OpenMP is on), so the data does not depend on threads.
inline void fill(std::vector<float> &v, const std::string &kind, uint64_t seed, float scale) {
  const int64_t n = static_cast<int64_t>(v.size());
  const int chunks = 64;
#pragma omp parallel for schedule(static)
  for (int c = 0; c < chunks; ++c) {
    std::mt19937_64 gen(seed * 1000 + c);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::uniform_real_distribution<float> logScale(-4.0f, 0.0f);
    const int64_t lo = n * c / chunks, hi = n * (c + 1) / chunks;
    float layerScale = 1.0f;
    for (int64_t i = lo; i < hi; ++i) {
      if (kind == "layered" && (i - lo) % 150000 == 0)
        layerScale = std::pow(10.0f, logScale(gen));
      v[i] = scale * layerScale * d(gen);
    }
  }
}

} // namespace mgsrt_bench

#endif // MGSRT_BENCH_BENCHDATA_H
