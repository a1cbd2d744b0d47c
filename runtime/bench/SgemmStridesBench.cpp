//===- SgemmStridesBench.cpp - Weight gradients against plain dnnl_sgemm --===//
//
//   mgsrt_sgemm_strides_bench [--rounds R]
//
// Times a weight gradient dB = A^T dY (gemm_bwd, dA not wanted) through
// mgsrt_gemm_bwd against dnnl_sgemm('T', 'N') on the same operands as they
// are, at GPT's and ViT's weight-gradient shapes (bench/transformer_step.py's
// models: rows of 1 to 4 KB), LSTM ones (gates x inputs) and 512^3. mgs copies an operand whose
// rows are a multiple of 2 KB apart into padded rows first (Gemm.cpp's padStrides), which this
// shows paying, or not, shape by shape. Buffers are 64-byte aligned, as the executables' are.
// Medians of R interleaved rounds, on the OpenMP threads the environment gives (OMP_NUM_THREADS).
//
//===----------------------------------------------------------------------===//

#include "mgsrt/mgsrt.h"

#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

/// Appends to `times` the mean time of a call of `f` over `reps` calls after
/// three untimed ones, in ms.
template <typename F> void timeRound(int reps, F &&f, std::vector<double> &times) {
  for (int w = 0; w < 3; ++w)
    f();
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r)
    f();
  times.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
      reps);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct AlignedFloats {
  float *p;
  explicit AlignedFloats(int64_t n)
      : p(static_cast<float *>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))) {}
  ~AlignedFloats() { std::free(p); }
};

} // namespace

int main(int argc, char **argv) {
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: mgsrt_sgemm_strides_bench [--rounds R]\n");
      return 2;
    }
  }
  struct Shape {
    int64_t m, n, k; // dB is m x n, summed over k rows
    const char *what;
  };
  const Shape shapes[] = {
      {256, 768, 512, "GPT qkv"},   {256, 1024, 512, "GPT fc1"},  {1024, 256, 512, "GPT fc2"},
      {256, 256, 512, "GPT out"},   {256, 2000, 512, "GPT head"}, {192, 576, 1040, "ViT qkv"},
      {192, 768, 1040, "ViT fc1"},  {768, 192, 1040, "ViT fc2"},  {192, 192, 1040, "ViT out"},
      {512, 512, 512, "512^3"},     {200, 800, 320, "LSTM 200"},  {512, 128, 320, "LSTM 128"},
      {1024, 256, 320, "LSTM 256"},
  };
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::printf("weight gradient dB = A^T dY (m x n over k rows), medians of %d rounds\n", rounds);
  std::printf("%-10s %5s %5s %5s %12s %12s %8s\n", "shape", "m", "n", "k", "sgemm ms", "mgs ms",
              "mgs/sgemm");
  int status = 0;
  for (const Shape &s : shapes) {
    AlignedFloats a(s.k * s.m), b(s.m * s.n), dy(s.k * s.n), db(s.m * s.n);
    for (int64_t i = 0; i < s.k * s.m; ++i)
      a.p[i] = normal(gen);
    for (int64_t i = 0; i < s.k * s.n; ++i)
      dy.p[i] = normal(gen);
    // gemm_bwd of Y (k x n) = A (k x m) B (m x n): its dB is A^T dY.
    const int64_t one = 0x3ff0000000000000; // 1.0's bits (alpha)
    const int64_t desc[] = {s.k, s.n, s.m, 0, 0, one, 0, 0, 0, MGSRT_PRECISION_F32};
    void *bufs[] = {a.p, b.p, dy.p, nullptr, db.p, nullptr};
    const int reps = std::max<int64_t>(3, 200000000 / (2 * s.m * s.n * s.k));
    std::vector<double> plain, ours;
    for (int r = 0; r < rounds; ++r) {
      timeRound(
          reps,
          [&] { dnnl_sgemm('T', 'N', s.m, s.n, s.k, 1.0f, a.p, s.m, dy.p, s.n, 0.0f, db.p, s.n); },
          plain);
      timeRound(
          reps,
          [&] {
            if (mgsrt_gemm_bwd(ctx, desc, bufs) != MGSRT_OK)
              status = 1;
          },
          ours);
    }
    if (status) {
      std::fprintf(stderr, "mgsrt_gemm_bwd failed: %s\n", mgsrt_ctx_message(ctx));
      break;
    }
    const double p = median(plain), o = median(ours);
    std::printf("%-10s %5lld %5lld %5lld %12.3f %12.3f %8.3f\n", s.what, (long long)s.m,
                (long long)s.n, (long long)s.k, p, o, o / p);
  }
  mgsrt_ctx_destroy(ctx);
  return status;
}
