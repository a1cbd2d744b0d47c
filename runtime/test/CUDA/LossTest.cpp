//===- LossTest.cpp - GPU elementwise_loss against the CPU ----------------===//
//
// Both devices compute each element's loss and gradient with the same
// function (Descriptors/LossDesc.h): the gradients are the CPU's to float
// rounding of the same double, the mean to the order of a double sum; every
// kind (BCE also with a pos_weight), counts from 1 to past one block's
// share; the descriptor and buffer errors in the CPU's words.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include "mgsrt/contract.h"

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

using GpuLoss = GpuTest;

TEST_F(GpuLoss, ElementwiseLossMatchesCpu) {
  struct Kind {
    int kind;
    double beta;
    bool posWeight;
  };
  const Kind kinds[] = {{MGSRT_LOSS_MSE, 1.0, false},
                        {MGSRT_LOSS_L1, 1.0, false},
                        {MGSRT_LOSS_SMOOTH_L1, 0.5, false},
                        {MGSRT_LOSS_BCE_WITH_LOGITS, 1.0, false},
                        {MGSRT_LOSS_BCE_WITH_LOGITS, 1.0, true}};
  for (const Kind &k : kinds)
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{3} << 20}) {
      SCOPED_TRACE("kind " + std::to_string(k.kind) + (k.posWeight ? " pos_weight" : "") +
                   " n " + std::to_string(n));
      const int64_t last = n == 1 ? 1 : 8;
      const int64_t desc[] = {k.kind, n, bits(k.beta), last, 0};
      std::vector<float> x = randomVec(n, -4.0f, 4.0f), t = randomVec(n, 0.0f, 1.0f);
      const Buffers in = {x, t, {-1.0f}, std::vector<float>(n, -7.0f),
                          k.posWeight ? randomVec(last, 0.0f, 4.0f) : std::vector<float>{}};
      const Buffers c = runCpu(cpu, mgsrt_elementwise_loss, desc, in);
      const Buffers g = runGpu(gpu, mgsrt_elementwise_loss, desc, in);
      EXPECT_LE(relToMax(g[2], c[2]), 1e-6) << g[2][0] << " vs " << c[2][0];
      EXPECT_LE(relToMax(g[3], c[3]), 1e-7);
      // Under a loss scale (f16): the gradients scaled as the CPU's, the
      // loss itself not.
      for (mgsrt_ctx_t *c : {cpu, gpu})
        mgsrt_ctx_set_loss_scale(c, 1024.0f);
      const Buffers cs = runCpu(cpu, mgsrt_elementwise_loss, desc, in);
      const Buffers gs = runGpu(gpu, mgsrt_elementwise_loss, desc, in);
      for (mgsrt_ctx_t *c : {cpu, gpu})
        mgsrt_ctx_set_loss_scale(c, 1.0f);
      EXPECT_TRUE(bitsEqual(cs[2], c[2])) << "the CPU's loss under a scale";
      EXPECT_LE(relToMax(gs[2], cs[2]), 1e-6) << "loss, scale 1024";
      EXPECT_LE(relToMax(gs[3], cs[3]), 1e-7) << "gradient, scale 1024";
      if (!k.posWeight)
        continue;
      // pos_weight in host memory, as a compiled step's constant (the kernel
      // stages it): the same result.
      DeviceBuffer<float> dx(gpu, x), dt(gpu, t), dloss(gpu, std::vector<float>{-1.0f}),
          dgrad(gpu, std::vector<float>(n, -7.0f));
      std::vector<float> hostPw = in[4];
      void *bufs[] = {dx.ptr, dt.ptr, dloss.ptr, dgrad.ptr, hostPw.data()};
      EXPECT_OK(gpu, mgsrt_elementwise_loss(gpu, desc, bufs));
      EXPECT_OK(gpu, mgsrt_synchronize(gpu));
      EXPECT_TRUE(bitsEqual(dloss.download(), g[2]));
      EXPECT_TRUE(bitsEqual(dgrad.download(), g[3]));
    }
}

TEST_F(GpuLoss, BadCallsAreRefusedAsOnTheCpu) {
  const std::vector<bool> all = {true, true, true, true, false};
  expectSameError(cpu, gpu, mgsrt_elementwise_loss, {9, 4, bits(1.0), 1, 0}, all, "unknown kind");
  expectSameError(cpu, gpu, mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 0, bits(1.0), 1, 0}, all,
                  "no elements");
  expectSameError(cpu, gpu, mgsrt_elementwise_loss, {MGSRT_LOSS_SMOOTH_L1, 4, bits(-1.0), 1, 0},
                  all, "negative beta");
  expectSameError(cpu, gpu, mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 4, bits(1.0), 3, 0}, all,
                  "last axis not dividing the count");
  expectSameError(cpu, gpu, mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 4, bits(1.0), 1, 0},
                  {true, false, true, true, false}, "no target");
  expectSameError(cpu, gpu, mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 4, bits(1.0), 1, 0},
                  {true, true, true, true, true}, "pos_weight for mse");
}

} // namespace
