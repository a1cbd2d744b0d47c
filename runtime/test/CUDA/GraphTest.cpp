//===- GraphTest.cpp - The step as a CUDA graph: replays vs the CPU -------===//
//
// mgsrt_graph_begin / _end / _launch: a "step" (cross-entropy, with or
// without norm clipping, then an SGD or AdamW update of a parameter by the
// logits' gradient) captured once and replayed with each step's learning rate
// gives the CPU's results bit for bit, as do dropout's masks; a bad label or
// index (cross-entropy, scatter-add, gather) surfaces as the eager step's
// error; what a replay cannot repeat refuses the capture and leaves the
// context usable.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtil.h"

#include <algorithm>
#include <functional>

using namespace mgsrt_test;

namespace {

using GraphGpu = GpuTest;

// n samples of c classes: the logits are the parameter.
constexpr int64_t kN = 64, kC = 10;

std::vector<int64_t> someLabels(int64_t n, int64_t c) {
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i)
    labels[i] = (i * 7919) % c;
  return labels;
}

TEST_F(GraphGpu, ReplaysMatchTheCpuWithEachStepsScalars) {
  // (SGD first: mgsrt_ctx_set_adamw stays on for the context's later steps.)
  for (auto [adamw, clipped] : {std::pair{false, false}, std::pair{false, true},
                                std::pair{true, false}, std::pair{true, true}}) {
    SCOPED_TRACE(std::string(adamw ? "AdamW" : "SGD") + (clipped ? ", clipped" : ""));
    std::vector<float> param = randomVec(kN * kC, -2.0f, 2.0f), state(2 * kN * kC, 0.0f);
    std::vector<float> grad(kN * kC), loss(1);
    std::vector<int64_t> labels = someLabels(kN, kC);
    DeviceBuffer<float> dp(gpu, param), ds(gpu, state), dg(gpu, kN * kC), dl(gpu, 1);
    DeviceBuffer<int64_t> dy(gpu, labels);
    // Clipping to a norm of 0.5 (a graph's factor is worked out on the device).
    const int64_t ce[] = {kN, kC, -100, 0, 0}, update[] = {kN * kC},
                  clip[] = {1, bits(0.5), kN * kC};
    void *cpuGrad[] = {grad.data()};
    void *gpuGrad[] = {dg.ptr};
    void *cpuCe[] = {param.data(), labels.data(), loss.data(), grad.data(), nullptr};
    void *gpuCe[] = {dp.ptr, dy.ptr, dl.ptr, dg.ptr, nullptr};
    void *cpuUpdate[] = {param.data(), grad.data(), state.data()};
    void *gpuUpdate[] = {dp.ptr, dg.ptr, ds.ptr};
    auto gpuStep = [&] {
      mgsrt_softmax_cross_entropy(gpu, ce, gpuCe);
      if (clipped)
        mgsrt_clip_grad_norm(gpu, clip, gpuGrad);
      mgsrt_sgd_update(gpu, update, gpuUpdate);
    };
    for (int step = 1; step <= 5; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      // The learning rate and AdamW's step change every step (a schedule).
      for (mgsrt_ctx_t *c : {cpu.ctx, gpu.ctx}) {
        mgsrt_ctx_set_sgd(c, 0.1f / static_cast<float>(step), 0.9f, 0.01f);
        if (adamw)
          mgsrt_ctx_set_adamw(c, 0.9f, 0.999f, 1e-8f, step);
      }
      ASSERT_OK(cpu, mgsrt_softmax_cross_entropy(cpu, ce, cpuCe));
      if (clipped)
        ASSERT_OK(cpu, mgsrt_clip_grad_norm(cpu, clip, cpuGrad));
      ASSERT_OK(cpu, mgsrt_sgd_update(cpu, update, cpuUpdate));
      int ran = 0;
      if (step == 1) { // as the driver: the first step runs kernel by kernel
        gpuStep();
      } else if (step == 2) {
        ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
        gpuStep();
        ASSERT_OK(gpu, mgsrt_graph_end(gpu, 1));
        ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
        EXPECT_EQ(ran, 1);
      } else {
        ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
        EXPECT_EQ(ran, 1);
      }
      EXPECT_TRUE(bitsEqual(dp.download(), param)) << "param";
      EXPECT_TRUE(bitsEqual(dl.download(), loss)) << "loss";
      EXPECT_TRUE(bitsEqual(ds.download(), state)) << "optimizer state";
    }
    // Another loss scale: the graph is stale, nothing runs.
    mgsrt_ctx_set_loss_scale(gpu, 2.0f);
    int ran = 1;
    ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
    EXPECT_EQ(ran, 0);
    mgsrt_ctx_set_loss_scale(gpu, 1.0f);
  }
}

TEST_F(GraphGpu, ABadLabelIsTheEagerStepsError) {
  std::vector<float> logits = randomVec(kN * kC, -2.0f, 2.0f), grad(kN * kC), loss(1);
  std::vector<int64_t> labels = someLabels(kN, kC);
  DeviceBuffer<float> dx(gpu, logits), dg(gpu, kN * kC), dl(gpu, 1);
  DeviceBuffer<int64_t> dy(gpu, labels);
  const int64_t ce[] = {kN, kC, -100, 0, 0};
  void *gpuCe[] = {dx.ptr, dy.ptr, dl.ptr, dg.ptr, nullptr};
  ASSERT_OK(gpu, mgsrt_softmax_cross_entropy(gpu, ce, gpuCe)); // the site's first call
  ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
  mgsrt_softmax_cross_entropy(gpu, ce, gpuCe);
  ASSERT_OK(gpu, mgsrt_graph_end(gpu, 1));
  labels[5] = 12;
  dy.upload(labels);
  int ran = 0;
  ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(mgsrt_synchronize(gpu), MGSRT_ERROR_INVALID_ARGUMENT);
  void *cpuCe[] = {logits.data(), labels.data(), loss.data(), grad.data(), nullptr};
  EXPECT_EQ(mgsrt_softmax_cross_entropy(cpu, ce, cpuCe), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpu.message(), cpu.message());
}

/// A kernel with an index check in a graph: run once kernel by kernel (its
/// first call), captured, replayed after `change` (new inputs, both sides)
/// to the CPU's `cpuOut` bit for bit; then, after `corrupt` (a bad index,
/// both sides), a replay's error is the CPU's.
void checkedKernelInAGraph(Ctx &cpu, Ctx &gpu,
                           mgsrt_status_t (*kernel)(mgsrt_ctx_t *, const int64_t *, void *const *),
                           const int64_t *desc, void *const *cpuBufs, void *const *gpuBufs,
                           const std::function<void()> &change,
                           const std::function<std::vector<float>()> &gpuOut,
                           const std::vector<float> &cpuOut, const std::function<void()> &corrupt) {
  ASSERT_OK(gpu, kernel(gpu, desc, gpuBufs));
  ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
  kernel(gpu, desc, gpuBufs);
  ASSERT_OK(gpu, mgsrt_graph_end(gpu, 1));
  change();
  int ran = 0;
  ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
  EXPECT_EQ(ran, 1);
  ASSERT_OK(cpu, kernel(cpu, desc, cpuBufs));
  EXPECT_TRUE(bitsEqual(gpuOut(), cpuOut));
  corrupt();
  ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
  EXPECT_EQ(mgsrt_synchronize(gpu), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kernel(cpu, desc, cpuBufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpu.message(), cpu.message());
}

// The sparse exchange's scatter-add checks its gathered indices after a
// replay, as the label check: the sums, then a bad index's own error.
TEST_F(GraphGpu, ScatterAddChecksItsIndicesAfterAReplay) {
  const int64_t n = 1000, k = 10, P = 3;
  std::vector<float> values = randomVec(P * k, -1.0f, 1.0f), out(n, 0.0f);
  std::vector<int32_t> indices(P * k);
  for (int64_t i = 0; i < P * k; ++i)
    indices[i] = static_cast<int32_t>((i * 37) % n);
  DeviceBuffer<float> dv(gpu, values), dout(gpu, n);
  DeviceBuffer<int32_t> di(gpu, indices);
  const int64_t desc[] = {n, k, P};
  void *cpuBufs[] = {values.data(), indices.data(), out.data()};
  void *gpuBufs[] = {dv.ptr, di.ptr, dout.ptr};
  checkedKernelInAGraph(
      cpu, gpu, mgsrt_scatter_add, desc, cpuBufs, gpuBufs,
      [&] { // new values in the same storage (cpuBufs points at it)
        const std::vector<float> v = randomVec(P * k, -1.0f, 1.0f);
        std::copy(v.begin(), v.end(), values.begin());
        dv.upload(values);
      },
      [&] { return dout.download(); }, out,
      [&] {
        indices[17] = -3;
        di.upload(indices);
      });
}

// An embedding's gather checks its indices after a replay too.
TEST_F(GraphGpu, GatherChecksItsIndicesAfterAReplay) {
  const int64_t rows = 50, rowSize = 8, count = 20;
  std::vector<float> table = randomVec(rows * rowSize, -1.0f, 1.0f), y(count * rowSize);
  std::vector<int64_t> indices(count);
  for (int64_t i = 0; i < count; ++i)
    indices[i] = (i * 13) % rows - (i % 3 == 0 ? rows : 0); // negatives count from the end
  DeviceBuffer<float> dt(gpu, table), dy(gpu, count * rowSize);
  DeviceBuffer<int64_t> di(gpu, indices);
  const int64_t desc[] = {rows, rowSize, count};
  void *cpuBufs[] = {table.data(), indices.data(), y.data()};
  void *gpuBufs[] = {dt.ptr, di.ptr, dy.ptr};
  checkedKernelInAGraph(
      cpu, gpu, mgsrt_gather_fwd, desc, cpuBufs, gpuBufs,
      [&] { // a new table in the same storage (cpuBufs points at it)
        const std::vector<float> t = randomVec(rows * rowSize, -1.0f, 1.0f);
        std::copy(t.begin(), t.end(), table.begin());
        dt.upload(table);
      },
      [&] { return dy.download(); }, y,
      [&] {
        indices[7] = rows;
        di.upload(indices);
      });
}

// Dropout in a graph: each replay draws the masks the calls run kernel by
// kernel draw (the CPU's), and the stream moves on as theirs does.
TEST_F(GraphGpu, DropoutReplaysDrawTheEagerMasks) {
  const int64_t n = 1000;
  const int64_t dropout[] = {n, bits(0.5), 1, 1};
  std::vector<float> x = randomVec(n), y(n);
  std::vector<uint8_t> mask(n);
  DeviceBuffer<float> dx(gpu, x), dy(gpu, n);
  DeviceBuffer<uint8_t> dmask(gpu, n);
  void *cpuBufs[] = {x.data(), y.data(), mask.data()};
  void *gpuBufs[] = {dx.ptr, dy.ptr, dmask.ptr};
  ASSERT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
  ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
  mgsrt_dropout_fwd(gpu, dropout, gpuBufs); // two calls a step
  mgsrt_dropout_fwd(gpu, dropout, gpuBufs);
  ASSERT_OK(gpu, mgsrt_graph_end(gpu, 1));
  EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu)); // nothing ran yet
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    ASSERT_OK(cpu, mgsrt_dropout_fwd(cpu, dropout, cpuBufs));
    const std::vector<uint8_t> firstMask = mask;
    ASSERT_OK(cpu, mgsrt_dropout_fwd(cpu, dropout, cpuBufs));
    EXPECT_NE(firstMask, mask); // the two calls drew differently
    int ran = 0;
    ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
    EXPECT_EQ(ran, 1);
    EXPECT_TRUE(bitsEqual(dy.download(), y));
    EXPECT_EQ(dmask.download(), mask);
    EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
  }
}

// Normal draws in a graph, between two dropouts: each replay draws the values
// the calls run kernel by kernel draw (the CPU's, within the last bit of the
// device's log and cos), and the stream moves on as theirs does.
TEST_F(GraphGpu, RandomNormalReplaysDrawTheEagerValues) {
  const int64_t n = 777;
  const int64_t dropout[] = {n, bits(0.5), 1, 1}, normal[] = {n, bits(1.0), bits(0.5)};
  std::vector<float> x = randomVec(n), y(n), z(n);
  DeviceBuffer<float> dx(gpu, x), dy(gpu, n), dz(gpu, n);
  void *cpuDrop[] = {x.data(), y.data(), nullptr}, *cpuNormal[] = {z.data()};
  void *gpuDrop[] = {dx.ptr, dy.ptr, nullptr}, *gpuNormal[] = {dz.ptr};
  ASSERT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
  ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
  mgsrt_dropout_fwd(gpu, dropout, gpuDrop);
  mgsrt_random_normal(gpu, normal, gpuNormal);
  mgsrt_dropout_fwd(gpu, dropout, gpuDrop);
  ASSERT_OK(gpu, mgsrt_graph_end(gpu, 1));
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    ASSERT_OK(cpu, mgsrt_dropout_fwd(cpu, dropout, cpuDrop));
    ASSERT_OK(cpu, mgsrt_random_normal(cpu, normal, cpuNormal));
    ASSERT_OK(cpu, mgsrt_dropout_fwd(cpu, dropout, cpuDrop));
    int ran = 0;
    ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran));
    EXPECT_EQ(ran, 1);
    EXPECT_TRUE(bitsEqual(dy.download(), y));
    std::vector<float> got = dz.download();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], z[i], 1e-6f * (1.0f + std::fabs(z[i]))) << i;
    EXPECT_EQ(mgsrt_ctx_rng_state(gpu), mgsrt_ctx_rng_state(cpu));
  }
}

TEST_F(GraphGpu, WhatAReplayCannotRepeatRefusesTheCapture) {
  int ran = 1;
  ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran)); // none kept yet
  EXPECT_EQ(ran, 0);
  // Scratch that would grow within the step: a cross-entropy larger than
  // any run before.
  const int64_t n = 4096, c = 10;
  std::vector<int64_t> labels = someLabels(n, c);
  DeviceBuffer<float> dx(gpu, randomVec(n * c)), dg(gpu, n * c), dl(gpu, 1);
  DeviceBuffer<int64_t> dy(gpu, labels);
  const int64_t ce[] = {n, c, -100, 0, 0};
  void *bufs[] = {dx.ptr, dy.ptr, dl.ptr, dg.ptr, nullptr};
  ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
  mgsrt_softmax_cross_entropy(gpu, ce, bufs);
  EXPECT_EQ(mgsrt_graph_end(gpu, 1), MGSRT_ERROR_UNAVAILABLE);
  EXPECT_EQ(gpu.message(), "softmax_cross_entropy: its scratch memory grows, which a CUDA graph "
                           "of the step cannot hold");
  mgsrt_ctx_clear(gpu);
  ASSERT_OK(gpu, mgsrt_graph_launch(gpu, &ran)); // nothing kept
  EXPECT_EQ(ran, 0);
  EXPECT_OK(gpu, mgsrt_softmax_cross_entropy(gpu, ce, bufs)); // usable again
  // A read-back inside the step.
  std::vector<float> host(n);
  ASSERT_OK(gpu, mgsrt_graph_begin(gpu));
  mgsrt_copy_to_host(gpu, host.data(), dx.ptr, n * sizeof(float));
  EXPECT_EQ(mgsrt_graph_end(gpu, 1), MGSRT_ERROR_UNAVAILABLE);
  EXPECT_NE(gpu.message().find("waits for the GPU"), std::string::npos) << gpu.message();
  mgsrt_ctx_clear(gpu);
  EXPECT_OK(gpu, mgsrt_copy_to_host(gpu, host.data(), dx.ptr, n * sizeof(float)));
}

// A CPU context has no graphs: a clear error, whether or not a GPU exists.
TEST(GraphCpu, ACpuContextHasNoGraphs) {
  Ctx cpu{7};
  EXPECT_EQ(mgsrt_graph_begin(cpu), MGSRT_ERROR_UNAVAILABLE);
  EXPECT_EQ(cpu.message(),
            "graph_begin: CUDA graphs are for a GPU context (this one runs on the CPU)");
  mgsrt_ctx_clear(cpu);
  int ran = 1;
  EXPECT_EQ(mgsrt_graph_launch(cpu, &ran), MGSRT_ERROR_UNAVAILABLE);
  EXPECT_EQ(ran, 0);
}

} // namespace
