//===- SoftmaxTest.cpp - GPU softmax, log-softmax, cross-entropy vs the CPU ===//

#include "GpuTestUtil.h"

#include <memory>

using namespace mgsrt_test;

namespace {

using GpuSoftmax = GpuTest;

struct Shape3 {
  int64_t outer, axis, inner;
};

std::vector<float> runCpu(mgsrt_ctx_t *ctx, bool bwd, const int64_t *desc,
                          std::vector<std::vector<float>> in, size_t n) {
  std::vector<float> out(n);
  std::vector<void *> bufs;
  for (auto &b : in)
    bufs.push_back(b.data());
  bufs.push_back(out.data());
  EXPECT_OK(ctx, (bwd ? mgsrt_softmax_bwd : mgsrt_softmax_fwd)(ctx, desc, bufs.data()));
  return out;
}

std::vector<float> runGpu(mgsrt_ctx_t *ctx, bool bwd, const int64_t *desc,
                          const std::vector<std::vector<float>> &in, size_t n) {
  std::vector<std::unique_ptr<DeviceBuffer<float>>> dev;
  std::vector<void *> bufs;
  for (const auto &b : in) {
    dev.push_back(std::make_unique<DeviceBuffer<float>>(ctx, b));
    bufs.push_back(dev.back()->ptr);
  }
  DeviceBuffer<float> out(ctx, n);
  bufs.push_back(out.ptr);
  EXPECT_OK(ctx, (bwd ? mgsrt_softmax_bwd : mgsrt_softmax_fwd)(ctx, desc, bufs.data()));
  EXPECT_OK(ctx, mgsrt_synchronize(ctx));
  return out.download();
}

TEST_F(GpuSoftmax, ForwardAndBackwardMatchCpu) {
  const Shape3 shapes[] = {
      {1, 1, 1},       // one element
      {64, 1000, 1},   // last axis, warp per row
      {4, 5000, 1},    // last axis, long rows: block per row
      {10000, 10, 1},  // many short rows
      {1, 32, 4096},   // first axis
      {8, 17, 33},     // middle axis
      {3, 1, 50},      // axis of extent 1
      {2, 3000, 7},    // long middle axis
  };
  for (const Shape3 &s : shapes) {
    const size_t n = static_cast<size_t>(s.outer * s.axis * s.inner);
    for (int log = 0; log <= 1; ++log) {
      SCOPED_TRACE("outer " + std::to_string(s.outer) + " axis " + std::to_string(s.axis) +
                   " inner " + std::to_string(s.inner) + " log " + std::to_string(log));
      const int64_t desc[] = {s.outer, s.axis, s.inner, log};
      std::vector<float> x = randomVec(static_cast<int64_t>(n), -5.0f, 5.0f);
      x[0] = 40.0f; // a dominant logit: the max subtraction matters
      std::vector<float> yc = runCpu(cpu, false, desc, {x}, n);
      std::vector<float> yg = runGpu(gpu, false, desc, {x}, n);
      EXPECT_LE(maxRelDiff(yg, yc), 1e-6) << "forward";

      std::vector<float> dy = randomVec(static_cast<int64_t>(n));
      std::vector<float> dxc = runCpu(cpu, true, desc, {yc, dy}, n);
      std::vector<float> dxg = runGpu(gpu, true, desc, {yc, dy}, n);
      EXPECT_LE(maxRelDiff(dxg, dxc), 1e-6) << "backward";
      // Deterministic.
      EXPECT_TRUE(bitsEqual(runGpu(gpu, true, desc, {yc, dy}, n), dxg));
    }
  }
}

TEST_F(GpuSoftmax, EmptyTensorIsANoOp) {
  const int64_t desc[] = {0, 10, 1, 0};
  DeviceBuffer<float> d(gpu, std::vector<float>(1));
  void *gb[] = {d.ptr, d.ptr, d.ptr};
  EXPECT_OK(gpu, mgsrt_softmax_fwd(gpu, desc, gb));
  EXPECT_OK(gpu, mgsrt_softmax_bwd(gpu, desc, gb));
  EXPECT_OK(gpu, mgsrt_synchronize(gpu));
}

struct CeResult {
  float loss;
  std::vector<float> dlogits;
};

CeResult ceCpu(mgsrt_ctx_t *ctx, const int64_t *desc, std::vector<float> logits,
               std::vector<int64_t> labels, bool withGrad, std::vector<float> weight = {}) {
  CeResult r{-1.0f, std::vector<float>(logits.size(), -7.0f)};
  void *bufs[] = {logits.data(), labels.data(), &r.loss, withGrad ? r.dlogits.data() : nullptr,
                  weight.empty() ? nullptr : weight.data()};
  mgsrt_softmax_cross_entropy(ctx, desc, bufs);
  return r;
}

/// `hostWeight`: the weights stay in host memory, as a step's constant is
/// (the kernel stages them); otherwise they are uploaded.
CeResult ceGpu(mgsrt_ctx_t *ctx, const int64_t *desc, const std::vector<float> &logits,
               const std::vector<int64_t> &labels, bool withGrad,
               std::vector<float> weight = {}, bool hostWeight = false) {
  DeviceBuffer<float> dl(ctx, logits), loss(ctx, std::vector<float>{-1.0f});
  DeviceBuffer<int64_t> dlab(ctx, labels);
  DeviceBuffer<float> grad(ctx, std::vector<float>(logits.size(), -7.0f));
  DeviceBuffer<float> dweight(ctx, weight.empty() ? std::vector<float>{0.0f} : weight);
  void *bufs[] = {dl.ptr, dlab.ptr, loss.ptr, withGrad ? grad.ptr : nullptr,
                  weight.empty() ? nullptr : hostWeight ? weight.data() : dweight.ptr};
  mgsrt_softmax_cross_entropy(ctx, desc, bufs);
  // Read back even after an error (the buffers must be untouched then).
  const mgsrt_status_t st = mgsrt_ctx_status(ctx);
  const std::string msg = mgsrt_ctx_message(ctx);
  mgsrt_ctx_clear(ctx);
  CeResult r{loss.download()[0], grad.download()};
  if (st != MGSRT_OK)
    mgsrt_ctx_fail(ctx, st, msg.c_str());
  return r;
}

TEST_F(GpuSoftmax, CrossEntropyMatchesCpu) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {1, 10}, {64, 10}, {3000, 1000},
                                                {7, 5000}, {100000, 3}};
  for (auto [n, c] : shapes) {
    for (bool withGrad : {true, false}) {
      SCOPED_TRACE("N " + std::to_string(n) + " C " + std::to_string(c) +
                   (withGrad ? " grad" : " no grad"));
      const int64_t desc[] = {n, c, -100, 0, 0};
      std::vector<float> logits = randomVec(n * c, -4.0f, 4.0f);
      logits[0] = 30.0f;
      std::vector<int64_t> labels(n);
      for (int64_t i = 0; i < n; ++i)
        labels[i] = (i * 7919) % c;
      labels[n - 1] = c - 1;
      CeResult rc = ceCpu(cpu, desc, logits, labels, withGrad);
      CeResult rg = ceGpu(gpu, desc, logits, labels, withGrad);
      ASSERT_EQ(mgsrt_ctx_status(gpu), MGSRT_OK) << mgsrt_ctx_message(gpu);
      EXPECT_LE(maxRelDiff({rg.loss}, {rc.loss}), 1e-6) << rg.loss << " vs " << rc.loss;
      EXPECT_LE(maxRelDiff(rg.dlogits, rc.dlogits), 1e-6);
      if (!withGrad) {
        EXPECT_TRUE(bitsEqual(rg.dlogits, std::vector<float>(n * c, -7.0f)));
      }
    }
  }
}

// A loss scale (mgsrt_ctx_set_loss_scale) multiplies the GPU's gradient as
// the CPU's (a power of two: exactly the unscaled one times it), not the loss.
TEST_F(GpuSoftmax, CrossEntropyLossScaleMatchesCpu) {
  const int64_t n = 64, c = 10;
  const int64_t desc[] = {n, c, -100, 0, 0};
  std::vector<float> logits = randomVec(n * c, -4.0f, 4.0f);
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i)
    labels[i] = (i * 7919) % c;
  CeResult plain = ceGpu(gpu, desc, logits, labels, true);
  for (mgsrt_ctx_t *ctx : {cpu.ctx, gpu.ctx})
    mgsrt_ctx_set_loss_scale(ctx, 1024.0f);
  CeResult rc = ceCpu(cpu, desc, logits, labels, true);
  CeResult rg = ceGpu(gpu, desc, logits, labels, true);
  for (mgsrt_ctx_t *ctx : {cpu.ctx, gpu.ctx})
    mgsrt_ctx_set_loss_scale(ctx, 1.0f);
  ASSERT_EQ(mgsrt_ctx_status(gpu), MGSRT_OK) << mgsrt_ctx_message(gpu);
  EXPECT_EQ(rg.loss, plain.loss);
  EXPECT_LE(maxRelDiff(rg.dlogits, rc.dlogits), 1e-6);
  for (int64_t i = 0; i < n * c; ++i)
    ASSERT_EQ(rg.dlogits[i], 1024.0f * plain.dlogits[i]) << i;
}

// Ignored labels and label smoothing: the GPU's loss and gradient are the
// CPU's (the CPU's are checked against a float64 reference in
// Kernels/SoftmaxTest.cpp), also with every label of the batch ignored.
TEST_F(GpuSoftmax, CrossEntropyIgnoreAndSmoothingMatchCpu) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 10}, {64, 10}, {3000, 1000}, {7, 5000}};
  for (auto [n, c] : shapes)
    for (double smoothing : {0.0, 0.1, 1.0})
      for (bool allIgnored : {false, true}) {
        SCOPED_TRACE("N " + std::to_string(n) + " C " + std::to_string(c) + " smoothing " +
                     std::to_string(smoothing) + (allIgnored ? " all ignored" : ""));
        const int64_t desc[] = {n, c, -7, bits(smoothing), 0};
        std::vector<float> logits = randomVec(n * c, -4.0f, 4.0f);
        std::vector<int64_t> labels(n);
        for (int64_t i = 0; i < n; ++i)
          labels[i] = allIgnored || i % 3 == 1 ? -7 : (i * 7919) % c;
        CeResult rc = ceCpu(cpu, desc, logits, labels, true);
        CeResult rg = ceGpu(gpu, desc, logits, labels, true);
        ASSERT_EQ(mgsrt_ctx_status(gpu), MGSRT_OK) << mgsrt_ctx_message(gpu);
        ASSERT_EQ(mgsrt_ctx_status(cpu), MGSRT_OK) << mgsrt_ctx_message(cpu);
        EXPECT_LE(maxRelDiff({rg.loss}, {rc.loss}), 1e-6) << rg.loss << " vs " << rc.loss;
        EXPECT_LE(maxRelDiff(rg.dlogits, rc.dlogits), 1e-6);
        if (allIgnored) {
          EXPECT_EQ(rg.loss, 0.0f);
          EXPECT_TRUE(bitsEqual(rg.dlogits, std::vector<float>(n * c, 0.0f)));
        }
      }
}

// Class weights (with ignored labels and smoothing, and weights that are
// all 0 on the batch's classes): the GPU's loss and gradient are the CPU's.
TEST_F(GpuSoftmax, CrossEntropyClassWeightsMatchCpu) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 10}, {64, 10}, {3000, 1000}, {7, 5000}};
  for (auto [n, c] : shapes)
    for (double smoothing : {0.0, 0.1})
      for (bool zeroWeights : {false, true}) {
        SCOPED_TRACE("N " + std::to_string(n) + " C " + std::to_string(c) + " smoothing " +
                     std::to_string(smoothing) + (zeroWeights ? " zero weights" : ""));
        const int64_t desc[] = {n, c, -100, bits(smoothing), 0};
        std::vector<float> logits = randomVec(n * c, -4.0f, 4.0f);
        std::vector<float> weight = randomVec(c, 0.1f, 3.0f);
        std::vector<int64_t> labels(n);
        for (int64_t i = 0; i < n; ++i)
          labels[i] = i % 3 == 1 ? -100 : (i * 7919) % c;
        if (zeroWeights)
          std::fill(weight.begin(), weight.end(), 0.0f);
        CeResult rc = ceCpu(cpu, desc, logits, labels, true, weight);
        CeResult rg = ceGpu(gpu, desc, logits, labels, true, weight);
        ASSERT_EQ(mgsrt_ctx_status(gpu), MGSRT_OK) << mgsrt_ctx_message(gpu);
        ASSERT_EQ(mgsrt_ctx_status(cpu), MGSRT_OK) << mgsrt_ctx_message(cpu);
        EXPECT_LE(maxRelDiff({rg.loss}, {rc.loss}), 1e-6) << rg.loss << " vs " << rc.loss;
        EXPECT_LE(maxRelDiff(rg.dlogits, rc.dlogits), 1e-6);
        // The weights in host memory, as a compiled step's constant: the same.
        CeResult rh = ceGpu(gpu, desc, logits, labels, true, weight, /*hostWeight=*/true);
        ASSERT_EQ(mgsrt_ctx_status(gpu), MGSRT_OK) << mgsrt_ctx_message(gpu);
        EXPECT_EQ(rh.loss, rg.loss);
        EXPECT_TRUE(bitsEqual(rh.dlogits, rg.dlogits));
        if (zeroWeights) {
          EXPECT_EQ(rg.loss, 0.0f);
          EXPECT_TRUE(bitsEqual(rg.dlogits, std::vector<float>(n * c, 0.0f)));
        }
      }
}

// The GPU's losses (`losses` of them) and gradients of descriptor `flags` and
// `smoothing` are the CPU's, with ignored rows, with and without class
// weights, on logits in [low, high).
static void expectCrossEntropyMatchesCpu(mgsrt_ctx_t *gpu, mgsrt_ctx_t *cpu, int64_t flags,
                                         double smoothing, float low, float high) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 10}, {64, 10}, {3000, 1000}};
  for (auto [n, c] : shapes)
    for (bool weighted : {false, true}) {
      SCOPED_TRACE("N " + std::to_string(n) + " C " + std::to_string(c) + " flags " +
                   std::to_string(flags) + (weighted ? " weighted" : ""));
      const int64_t desc[] = {n, c, -100, bits(smoothing), flags};
      const int64_t losses = (flags & 4) ? n : 1;
      std::vector<float> logits = randomVec(n * c, low, high);
      std::vector<float> weight = randomVec(c, 0.1f, 3.0f);
      std::vector<int64_t> labels(n);
      for (int64_t i = 0; i < n; ++i)
        labels[i] = i % 3 == 1 ? -100 : (i * 7919) % c;
      std::vector<float> cpuLoss(losses, -7.0f), cpuGrad(n * c, -7.0f);
      void *cb[] = {logits.data(), labels.data(), cpuLoss.data(), cpuGrad.data(),
                    weighted ? weight.data() : nullptr};
      ASSERT_OK(cpu, mgsrt_softmax_cross_entropy(cpu, desc, cb));
      DeviceBuffer<float> dl(gpu, logits), loss(gpu, std::vector<float>(losses, -7.0f));
      DeviceBuffer<int64_t> dlab(gpu, labels);
      DeviceBuffer<float> grad(gpu, std::vector<float>(n * c, -7.0f)), dw(gpu, weight);
      void *gb[] = {dl.ptr, dlab.ptr, loss.ptr, grad.ptr, weighted ? dw.ptr : nullptr};
      ASSERT_OK(gpu, mgsrt_softmax_cross_entropy(gpu, desc, gb));
      EXPECT_LE(maxRelDiff(loss.download(), cpuLoss), 1e-6);
      EXPECT_LE(maxRelDiff(grad.download(), cpuGrad), 1e-6);
    }
}

// Reduction "none" (flags kPerSample | kUnscaled): each row's loss and
// gradient, with smoothing too.
TEST_F(GpuSoftmax, CrossEntropyPerSampleMatchesCpu) {
  expectCrossEntropyMatchesCpu(gpu, cpu, 6, 0.1, -4.0f, 4.0f);
}

// Log-probabilities (flag 8: the negative log-likelihood), with the mean,
// the sum and each sample's loss.
TEST_F(GpuSoftmax, CrossEntropyLogProbabilitiesMatchCpu) {
  for (int64_t flags : {8, 9, 14})
    expectCrossEntropyMatchesCpu(gpu, cpu, flags, 0.0, -6.0f, 0.0f);
}

TEST_F(GpuSoftmax, CrossEntropyNamesTheFirstBadLabel) {
  const int64_t n = 300000, c = 10;
  const int64_t desc[] = {n, c, -100, 0, 0};
  std::vector<float> logits = randomVec(n * c);
  std::vector<int64_t> labels(n, 3);
  labels[5] = 10;     // the first bad one
  labels[6] = -1;
  labels[n - 1] = 99;
  CeResult rc = ceCpu(cpu, desc, logits, labels, true);
  CeResult rg = ceGpu(gpu, desc, logits, labels, true);
  EXPECT_EQ(mgsrt_ctx_status(cpu), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mgsrt_ctx_status(gpu), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)));
  EXPECT_NE(std::string(mgsrt_ctx_message(gpu)).find("label 10 of sample 5"), std::string::npos)
      << mgsrt_ctx_message(gpu);
  // Nothing written.
  EXPECT_EQ(rg.loss, -1.0f);
  EXPECT_TRUE(bitsEqual(rg.dlogits, std::vector<float>(n * c, -7.0f)));
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);

  // A negative label alone.
  labels[5] = 3;
  labels[n - 1] = 3;
  ceCpu(cpu, desc, logits, labels, false);
  ceGpu(gpu, desc, logits, labels, false);
  EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)));
  mgsrt_ctx_clear(cpu);
  mgsrt_ctx_clear(gpu);

  // The context works again with good labels.
  labels[6] = 0;
  CeResult good = ceGpu(gpu, desc, logits, labels, true);
  EXPECT_EQ(mgsrt_ctx_status(gpu), MGSRT_OK) << mgsrt_ctx_message(gpu);
  CeResult want = ceCpu(cpu, desc, logits, labels, true);
  EXPECT_LE(maxRelDiff({good.loss}, {want.loss}), 1e-6);
}

TEST_F(GpuSoftmax, ErrorsMatchCpu) {
  std::vector<float> host(64, 0.0f);
  DeviceBuffer<float> dev(gpu, host);
  struct Case {
    int kind; // 0 fwd, 1 bwd, 2 cross-entropy
    std::vector<int64_t> desc;
    std::vector<bool> nonNull;
  };
  const Case cases[] = {
      {0, {-1, 2, 2, 0}, {true, true}},
      {0, {2, 2, 2, 3}, {true, true}},
      {0, {2, 2, 2, 0}, {true, false}},
      {1, {2, -2, 2, 1}, {true, true, true}},
      {1, {2, 2, 2, 1}, {true, false, true}},
      {2, {0, 3, -100, 0, 0}, {true, true, true, true}},
      {2, {3, 0, -100, 0, 0}, {true, true, true, true}},
      {2, {3, 3, -100, 0, 0}, {true, true, false, true}},
      {2, {3, 3, -100, bits(1.5), 0}, {true, true, true, true}},
  };
  for (const Case &k : cases) {
    std::vector<void *> hb, db;
    for (bool b : k.nonNull) {
      hb.push_back(b ? host.data() : nullptr);
      db.push_back(b ? dev.ptr : nullptr);
    }
    auto fn = k.kind == 0 ? mgsrt_softmax_fwd
              : k.kind == 1 ? mgsrt_softmax_bwd
                            : mgsrt_softmax_cross_entropy;
    mgsrt_status_t sc = fn(cpu, k.desc.data(), hb.data());
    mgsrt_status_t sg = fn(gpu, k.desc.data(), db.data());
    EXPECT_EQ(sc, MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sg, sc);
    EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)));
    mgsrt_ctx_clear(cpu);
    mgsrt_ctx_clear(gpu);
  }
}

} // namespace
