//===- TopKTest.cpp - GPU topk_sparsify and scatter_add against the CPU ---===//
//
// The CPU kernels are the oracle: values, indices and the residual must be
// equal bit for bit, over sizes from 1 to ~30M, densities from k = 1 to
// k = n, and adversarial inputs (ties, all zeros, NaNs with payloads, +-inf,
// +-0, denormals), with inputs built to send the GPU kernel down each of
// its paths (sample, too few candidates, too many, no sample).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

#include <climits>
#include <limits>

using namespace mgsrt_test;

namespace {


float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

struct TopKResult {
  std::vector<float> values;
  std::vector<int32_t> indices;
  std::vector<float> residual;
};

TopKResult cpuTopK(mgsrt_ctx_t *ctx, const std::vector<float> &grad,
                   const std::vector<float> &residual, int64_t k) {
  TopKResult r{std::vector<float>(k, -7.0f), std::vector<int32_t>(k, -1), residual};
  const int64_t desc[] = {static_cast<int64_t>(grad.size()), k};
  void *bufs[] = {const_cast<float *>(grad.data()), r.residual.data(), r.values.data(),
                  r.indices.data()};
  EXPECT_OK(ctx, mgsrt_topk_sparsify(ctx, desc, bufs));
  return r;
}

/// The GPU kernel on copies of the inputs; `offset` floats into the device
/// buffers (1: buffers not 16-byte aligned).
TopKResult gpuTopK(mgsrt_ctx_t *ctx, const std::vector<float> &grad,
                   const std::vector<float> &residual, int64_t k, int offset = 0) {
  const int64_t n = grad.size();
  std::vector<float> g(offset, 0.0f), r(offset, 0.0f);
  g.insert(g.end(), grad.begin(), grad.end());
  r.insert(r.end(), residual.begin(), residual.end());
  DeviceBuffer<float> dg(ctx, g), dr(ctx, r), dv(ctx, std::vector<float>(k, -7.0f));
  DeviceBuffer<int32_t> di(ctx, std::vector<int32_t>(k, -1));
  const int64_t desc[] = {n, k};
  void *bufs[] = {dg.ptr + offset, dr.ptr + offset, dv.ptr, di.ptr};
  EXPECT_OK(ctx, mgsrt_topk_sparsify(ctx, desc, bufs));
  EXPECT_OK(ctx, mgsrt_synchronize(ctx));
  TopKResult out{dv.download(), di.download(), dr.download()};
  out.residual.erase(out.residual.begin(), out.residual.begin() + offset);
  return out;
}

void expectSame(const TopKResult &got, const TopKResult &want, const std::string &what) {
  EXPECT_EQ(got.indices, want.indices) << what;
  EXPECT_TRUE(bitsEqual(got.values, want.values)) << what << " (values)";
  EXPECT_TRUE(bitsEqual(got.residual, want.residual)) << what << " (residual)";
}

enum class Dist {
  Normal,        // N(0, 1)
  SmallIntegers, // -3..3: ties everywhere
  AllZero,       // +0 and -0
  AllEqual,      // +-1.5
  Special,       // NaNs with payloads, +-inf, +-0, denormals among normal values
  Layered,       // blocks of very different scales, like a model's gradient
};

std::vector<float> generate(Dist d, int64_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> small(-3, 3), pick(0, 99);
  std::vector<float> v(n);
  float scale = 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    switch (d) {
    case Dist::Normal:
      v[i] = normal(gen);
      break;
    case Dist::SmallIntegers:
      v[i] = static_cast<float>(small(gen));
      break;
    case Dist::AllZero:
      v[i] = (gen() & 1) ? 0.0f : -0.0f;
      break;
    case Dist::AllEqual:
      v[i] = (gen() & 1) ? 1.5f : -1.5f;
      break;
    case Dist::Special: {
      const int c = pick(gen);
      if (c < 5) // quiet and signalling NaNs, both signs, various payloads
        v[i] = floatOf((gen() & 1 ? 0xff800000u : 0x7f800000u) | (1u + (gen() & 0x7fffffu)));
      else if (c < 10)
        v[i] = gen() & 1 ? std::numeric_limits<float>::infinity()
                         : -std::numeric_limits<float>::infinity();
      else if (c < 20)
        v[i] = gen() & 1 ? 0.0f : -0.0f;
      else if (c < 25)
        v[i] = floatOf(static_cast<uint32_t>(gen() & 0x807fffffu)); // denormals
      else
        v[i] = normal(gen);
      break;
    }
    case Dist::Layered:
      if (i % 150000 == 0)
        scale = std::pow(10.0f, -4.0f * static_cast<float>(gen() % 1000) / 1000.0f);
      v[i] = scale * normal(gen);
      break;
    }
  }
  return v;
}

const char *name(Dist d) {
  switch (d) {
  case Dist::Normal: return "normal";
  case Dist::SmallIntegers: return "small-integers";
  case Dist::AllZero: return "all-zero";
  case Dist::AllEqual: return "all-equal";
  case Dist::Special: return "special";
  case Dist::Layered: return "layered";
  }
  return "?";
}

/// Residuals for a gradient: zeros for the special values (NaN + NaN is
/// left out: which NaN x86 returns then depends on the operand order the
/// compiler picked), else a smaller normal vector.
std::vector<float> residualFor(Dist d, int64_t n, uint64_t seed) {
  if (d == Dist::Special || d == Dist::AllZero)
    return std::vector<float>(n, 0.0f);
  std::vector<float> r = generate(Dist::Normal, n, seed);
  for (float &x : r)
    x *= 0.5f;
  return r;
}

using TopKGpu = GpuTest;

TEST_F(TopKGpu, MatchesTheCpuOverSizesDensitiesAndDistributions) {
  const int64_t sizes[] = {1, 2, 3, 7, 31, 100, 1000, 4095, 4096, 4097, 65535, 65536, 65537,
                           100003, (1 << 20) + 3};
  const Dist dists[] = {Dist::Normal, Dist::SmallIntegers, Dist::AllZero,
                        Dist::AllEqual, Dist::Special, Dist::Layered};
  uint64_t seed = 1;
  for (int64_t n : sizes) {
    std::vector<int64_t> ks = {1, n, (n + 1) / 2, std::max<int64_t>(1, n / 1000),
                               std::max<int64_t>(1, n / 32), std::max<int64_t>(1, n / 33 - 1)};
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    for (Dist d : dists) {
      const std::vector<float> grad = generate(d, n, seed++);
      const std::vector<float> residual = residualFor(d, n, seed++);
      for (int64_t k : ks) {
        const std::string what = std::string(name(d)) + " n=" + std::to_string(n) +
                                 " k=" + std::to_string(k);
        expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k), what);
        if (HasFailure())
          return;
      }
    }
  }
}

TEST_F(TopKGpu, UnalignedBuffers) {
  // Offsets of one float: the fused pass's scalar path.
  for (int64_t n : {int64_t(5), int64_t(70001), int64_t(1 << 20)}) {
    const std::vector<float> grad = generate(Dist::Normal, n, 11);
    const std::vector<float> residual = residualFor(Dist::Normal, n, 12);
    for (int64_t k : {int64_t(1), std::max<int64_t>(1, n / 1000), n}) {
      expectSame(gpuTopK(gpu, grad, residual, k, /*offset=*/1),
                 cpuTopK(cpu, grad, residual, k),
                 "unaligned n=" + std::to_string(n) + " k=" + std::to_string(k));
    }
  }
}

/// The positions the GPU kernel samples (TopK.cu's prepare kernel: 2048
/// runs of 16, one per stratum), for inputs that mislead the sample.
std::vector<int64_t> sampledPositions(int64_t n) {
  auto mix64 = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const int64_t stratum = n / 2048;
  const uint64_t offsets = stratum - 15;
  std::vector<int64_t> p;
  for (int64_t j = 0; j < 2048; ++j) {
    const int64_t start = j * stratum + static_cast<int64_t>(((mix64(j + 1) >> 32) * offsets) >> 32);
    for (int q = 0; q < 16; ++q)
      p.push_back(start + q);
  }
  return p;
}

TEST_F(TopKGpu, MisledSampleFallsBackExactly) {
  const int64_t n = 1 << 21;
  {
    // Too few candidates: only the sampled entries are large, k exceeds them.
    std::vector<float> grad = generate(Dist::Normal, n, 21);
    for (int64_t p : sampledPositions(n))
      grad[p] = 100.0f + static_cast<float>(p % 7);
    const std::vector<float> residual(n, 0.0f);
    for (int64_t k : {int64_t(40000), n / 32})
      expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k),
                 "too few candidates, k=" + std::to_string(k));
  }
  {
    // Too many candidates: every key equal to the sample's threshold.
    std::vector<float> grad(n, 2.0f);
    for (int64_t i = 0; i < n; i += 3)
      grad[i] = -2.0f;
    const std::vector<float> residual(n, 0.0f);
    for (int64_t k : {int64_t(1), int64_t(1000), n / 32})
      expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k),
                 "too many candidates, k=" + std::to_string(k));
  }
  {
    // NaNs everywhere but a few: the threshold is the NaN key.
    std::vector<float> grad(n, floatOf(0x7fc00001u));
    for (int64_t i = 0; i < n; i += 5)
      grad[i] = static_cast<float>(i);
    const std::vector<float> residual(n, 0.0f);
    for (int64_t k : {int64_t(7), n / 40})
      expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k),
                 "mostly NaN, k=" + std::to_string(k));
  }
}

TEST_F(TopKGpu, CandidatePathTiesAndOutliers) {
  const int64_t n = (1 << 21) + 5;
  {
    // Normal values on a grid of 1/64: runs of equal keys around the k-th
    // largest, split between the select blocks in index order.
    std::vector<float> grad = generate(Dist::Normal, n, 41);
    for (float &x : grad)
      x = std::round(x * 64.0f) / 64.0f;
    const std::vector<float> residual(n, 0.0f);
    for (int64_t k : {n / 1000, n / 100, n / 40})
      expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k),
                 "quantized, k=" + std::to_string(k));
  }
  {
    // k outliers, hundreds of times the sample's threshold: the k-th
    // largest is far more than a binade above it (the clamped first digit).
    std::vector<float> grad = generate(Dist::Normal, n, 42);
    const std::vector<float> residual = residualFor(Dist::Normal, n, 43);
    const int64_t k = n / 1000;
    for (int64_t j = 0; j < k; ++j)
      grad[(j * 7919 + 13) % n] = (j % 2 ? -1.0f : 1.0f) * (1000.0f + static_cast<float>(j % 13));
    for (int64_t kk : {k, k - 100, k + 100})
      expectSame(gpuTopK(gpu, grad, residual, kk), cpuTopK(cpu, grad, residual, kk),
                 "outliers, k=" + std::to_string(kk));
  }
}

TEST_F(TopKGpu, ErrorFeedbackStepsStayInLockStep) {
  // The residual carried on the device over steps equals the CPU's.
  const int64_t n = 300007, k = 300;
  std::vector<float> cpuResidual(n, 0.0f);
  DeviceBuffer<float> dr(gpu, cpuResidual), dv(gpu, k);
  DeviceBuffer<int32_t> di(gpu, k);
  DeviceBuffer<float> dg(gpu, n);
  const int64_t desc[] = {n, k};
  for (int step = 0; step < 5; ++step) {
    const std::vector<float> grad = generate(Dist::Layered, n, 100 + step);
    dg.upload(grad);
    void *bufs[] = {dg.ptr, dr.ptr, dv.ptr, di.ptr};
    ASSERT_OK(gpu, mgsrt_topk_sparsify(gpu, desc, bufs));
    TopKResult want = cpuTopK(cpu, grad, cpuResidual, k);
    cpuResidual = want.residual;
    expectSame({dv.download(), di.download(), dr.download()}, want,
               "step " + std::to_string(step));
  }
}

TEST_F(TopKGpu, DeterministicAcrossRuns) {
  const int64_t n = 5000000, k = 5000;
  const std::vector<float> grad = generate(Dist::SmallIntegers, n, 31);
  const std::vector<float> residual(n, 0.0f);
  const TopKResult first = gpuTopK(gpu, grad, residual, k);
  for (int run = 0; run < 3; ++run)
    expectSame(gpuTopK(gpu, grad, residual, k), first, "run " + std::to_string(run));
}

TEST_F(TopKGpu, LargeSizes) {
  // ResNet-50's parameter count at the design density, and ~30M.
  for (int64_t n : {int64_t(25557032), int64_t(30000001)}) {
    const std::vector<float> grad = generate(Dist::Normal, n, n);
    const std::vector<float> residual = residualFor(Dist::Normal, n, n + 1);
    const int64_t k = n / 1000;
    expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k),
               "n=" + std::to_string(n));
  }
  const int64_t n = 25557032;
  const std::vector<float> grad = generate(Dist::Layered, n, 5);
  const std::vector<float> residual(n, 0.0f);
  for (int64_t k : {int64_t(1), n / 100})
    expectSame(gpuTopK(gpu, grad, residual, k), cpuTopK(cpu, grad, residual, k),
               "layered n=" + std::to_string(n) + " k=" + std::to_string(k));
}

TEST_F(TopKGpu, RejectsWhatTheCpuRejects) {
  DeviceBuffer<float> d(gpu, 16);
  DeviceBuffer<int32_t> di(gpu, 16);
  std::vector<float> host(16, 1.0f);
  std::vector<int32_t> hostIdx(16);
  const std::vector<std::vector<int64_t>> descs = {
      {4, 0}, {4, 5}, {0, 1}, {-3, 1}, {int64_t(INT32_MAX) + 1, 1}};
  for (const auto &desc : descs) {
    Ctx c, g;
    ASSERT_EQ(attachGpu(g), "");
    DeviceBuffer<float> gb(g, 16);
    DeviceBuffer<int32_t> gi(g, 16);
    void *cpuBufs[] = {host.data(), host.data() + 4, host.data() + 8, hostIdx.data()};
    void *gpuBufs[] = {gb.ptr, gb.ptr + 4, gb.ptr + 8, gi.ptr};
    const mgsrt_status_t want = mgsrt_topk_sparsify(c, desc.data(), cpuBufs);
    EXPECT_EQ(mgsrt_topk_sparsify(g, desc.data(), gpuBufs), want);
    EXPECT_EQ(g.message(), c.message());
    EXPECT_EQ(want, MGSRT_ERROR_INVALID_ARGUMENT);
  }
  // A null buffer; then sticky: the failed context leaves the buffers alone.
  Ctx c, g;
  ASSERT_EQ(attachGpu(g), "");
  d.upload(host);
  const int64_t desc[] = {4, 2};
  void *cpuBufs[] = {host.data(), nullptr, host.data() + 8, hostIdx.data()};
  void *gpuBufs[] = {d.ptr, nullptr, d.ptr + 8, di.ptr};
  EXPECT_EQ(mgsrt_topk_sparsify(g, desc, gpuBufs), mgsrt_topk_sparsify(c, desc, cpuBufs));
  EXPECT_EQ(g.message(), c.message());
  void *good[] = {d.ptr, d.ptr + 4, d.ptr + 8, di.ptr};
  EXPECT_EQ(mgsrt_topk_sparsify(g, desc, good), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mgsrt_synchronize(gpu), MGSRT_OK);
  EXPECT_EQ(d.download(), host); // through `gpu`, which has not failed
}

//===----------------------------------------------------------------------===//
// scatter_add
//===----------------------------------------------------------------------===//

std::vector<float> cpuScatter(mgsrt_ctx_t *ctx, int64_t n, int64_t k, int64_t P,
                              const std::vector<float> &values,
                              const std::vector<int32_t> &indices) {
  std::vector<float> out(n, 42.0f);
  const int64_t desc[] = {n, k, P};
  void *bufs[] = {const_cast<float *>(values.data()), const_cast<int32_t *>(indices.data()),
                  out.data()};
  EXPECT_OK(ctx, mgsrt_scatter_add(ctx, desc, bufs));
  return out;
}

std::vector<float> gpuScatter(mgsrt_ctx_t *ctx, int64_t n, int64_t k, int64_t P,
                              const std::vector<float> &values,
                              const std::vector<int32_t> &indices) {
  DeviceBuffer<float> dv(ctx, values), dout(ctx, std::vector<float>(n, 42.0f));
  DeviceBuffer<int32_t> di(ctx, indices);
  const int64_t desc[] = {n, k, P};
  void *bufs[] = {dv.ptr, di.ptr, dout.ptr};
  EXPECT_OK(ctx, mgsrt_scatter_add(ctx, desc, bufs));
  return dout.download();
}

TEST_F(TopKGpu, ScatterAddMatchesTheCpu) {
  struct Case {
    int64_t n, k, P, indexRange;
  };
  const Case cases[] = {
      {1, 1, 1, 1},           {10, 3, 2, 10},          {100, 10, 3, 20},
      {1000, 100, 4, 1000},   {200000, 200, 16, 200000}, {200000, 5000, 5, 3000},
      {300000, 3000, 7, 300000}, {70000, 0, 4, 1},     {5, 4, 8, 2},
      {25557032, 25557, 8, 25557032},
  };
  for (const Case &c : cases) {
    const int64_t total = c.P * c.k;
    std::vector<float> values = randomVec(total, -3.0f, 3.0f);
    std::vector<int32_t> indices(total);
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(c.indexRange - 1));
    for (auto &i : indices)
      i = pick(rng());
    const std::string what = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                             " P=" + std::to_string(c.P);
    EXPECT_TRUE(bitsEqual(gpuScatter(gpu, c.n, c.k, c.P, values, indices),
                          cpuScatter(cpu, c.n, c.k, c.P, values, indices)))
        << what;
  }
}

TEST_F(TopKGpu, ScatterAddOfTopKResultsForEveryWorkerCount) {
  // P = 1..8 workers' top-k outputs (ascending, unique within a worker,
  // overlapping across workers), concatenated as the allgather does.
  const int64_t n = 1000003, k = 1000;
  for (int64_t P = 1; P <= 8; ++P) {
    std::vector<float> values;
    std::vector<int32_t> indices;
    for (int64_t r = 0; r < P; ++r) {
      std::vector<float> grad = generate(Dist::Normal, n, 500 + r);
      for (int64_t i = 0; i < n; i += 97) // shared large entries: repeated indices
        grad[i] = 8.0f + static_cast<float>(r);
      TopKResult t = cpuTopK(cpu, grad, std::vector<float>(n, 0.0f), k);
      values.insert(values.end(), t.values.begin(), t.values.end());
      indices.insert(indices.end(), t.indices.begin(), t.indices.end());
    }
    EXPECT_TRUE(bitsEqual(gpuScatter(gpu, n, k, P, values, indices),
                          cpuScatter(cpu, n, k, P, values, indices)))
        << "P=" << P;
  }
}

TEST_F(TopKGpu, ScatterAddSpecialValues) {
  // Signed zeros, infinities (inf - inf), denormals and NaNs with payloads,
  // one NaN per output element (the NaN x86 returns for NaN + NaN depends
  // on the operand order the compiler picked).
  const int64_t n = 64, k = 16, P = 4;
  std::vector<float> values = {-0.0f, 0.0f, INFINITY, -INFINITY, floatOf(0x7fa00005u),
                               floatOf(1u), floatOf(0x80000003u), 1e38f, 3e38f, -0.0f};
  std::vector<int32_t> indices = {0, 0, 1, 1, 2, 3, 3, 4, 4, 5};
  values.resize(P * k, 0.5f);
  for (size_t j = indices.size(); j < values.size(); ++j)
    indices.push_back(static_cast<int32_t>(6 + j % 50));
  EXPECT_TRUE(bitsEqual(gpuScatter(gpu, n, k, P, values, indices),
                        cpuScatter(cpu, n, k, P, values, indices)));
}

TEST_F(TopKGpu, ScatterAddRejectsWhatTheCpuRejects) {
  const std::vector<float> values = {1.0f, 2.0f, 3.0f, 4.0f};
  for (int32_t bad : {5, -1}) {
    const std::vector<int32_t> indices = {0, 4, 1, bad};
    DeviceBuffer<float> dv(gpu, values), dout(gpu, std::vector<float>(5, 9.0f));
    DeviceBuffer<int32_t> di(gpu, indices);
    std::vector<float> out(5, 9.0f);
    const int64_t desc[] = {5, 2, 2};
    void *cpuBufs[] = {const_cast<float *>(values.data()), const_cast<int32_t *>(indices.data()),
                       out.data()};
    void *gpuBufs[] = {dv.ptr, di.ptr, dout.ptr};
    Ctx c, g;
    ASSERT_EQ(attachGpu(g), "");
    // The buffers belong to `gpu`'s device; the same GPU serves `g`.
    EXPECT_EQ(mgsrt_scatter_add(g, desc, gpuBufs), mgsrt_scatter_add(c, desc, cpuBufs));
    EXPECT_EQ(g.message(), c.message());
    EXPECT_EQ(dout.download(), std::vector<float>(5, 9.0f)) << "out must be untouched";
  }
  const std::vector<std::vector<int64_t>> descs = {
      {-1, 1, 1}, {5, -2, 1}, {5, 1, 0}, {5, 1, (1 << 24) + 1}, {5, INT64_MAX / 2, 3}};
  DeviceBuffer<float> dv(gpu, 8), dout(gpu, 8);
  DeviceBuffer<int32_t> di(gpu, 8);
  std::vector<float> hv(8), hout(8);
  std::vector<int32_t> hi(8);
  for (const auto &desc : descs) {
    Ctx c, g;
    ASSERT_EQ(attachGpu(g), "");
    void *cpuBufs[] = {hv.data(), hi.data(), hout.data()};
    void *gpuBufs[] = {dv.ptr, di.ptr, dout.ptr};
    EXPECT_EQ(mgsrt_scatter_add(g, desc.data(), gpuBufs), mgsrt_scatter_add(c, desc.data(), cpuBufs));
    EXPECT_EQ(g.message(), c.message());
    EXPECT_EQ(mgsrt_ctx_status(g), MGSRT_ERROR_INVALID_ARGUMENT);
  }
}

} // namespace
