//===- SelectTest.cpp - GPU topk_positions against the CPU ----------------===//
//
// Both devices rank entries by the same strict order (ranksBefore), so the
// positions are the CPU's exactly: random rows, rows of ties, NaNs and
// infinities, k from 0 to the row's length; the descriptor and buffer errors
// in the CPU's words.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include "mgsrt/contract.h"

#include <limits>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

using GpuSelect = GpuTest;

TEST_F(GpuSelect, TopKPositionsMatchCpu) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t largest : {0, 1})
    for (auto [rows, len] : {std::pair<int64_t, int64_t>{1, 1}, {3, 6}, {2048, 8}, {7, 500}})
      for (bool ties : {false, true}) {
        const int64_t n = rows * len;
        std::vector<float> x = randomVec(n, -3.0f, 3.0f);
        if (ties)
          for (int64_t i = 0; i < n; ++i)
            x[i] = i % 5 == 0 ? nan : i % 7 == 0 ? -inf : static_cast<float>(i % 3);
        for (int64_t k : {int64_t{0}, int64_t{1}, len / 2, len}) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(len) + " k " +
                       std::to_string(k) + (largest ? " largest" : " smallest") +
                       (ties ? " ties" : ""));
          const std::vector<int64_t> desc = topKPositionsDesc(rows, len, k, largest);
          const Buffers in = {x, std::vector<float>(rows * k, -1.0f)};
          const Buffers c = runCpu(cpu, mgsrt_topk_positions, desc.data(), in);
          const Buffers g = runGpu(gpu, mgsrt_topk_positions, desc.data(), in);
          EXPECT_TRUE(bitsEqual(g[1], c[1])) << "y";
        }
      }
}

TEST_F(GpuSelect, BadCallsAreRefusedAsOnTheCpu) {
  expectSameError(cpu, gpu, mgsrt_topk_positions, topKPositionsDesc(-1, 4, 1, 1), {true, true},
                  "negative rows");
  expectSameError(cpu, gpu, mgsrt_topk_positions, topKPositionsDesc(1, 4, 5, 1), {true, true},
                  "k over len");
  expectSameError(cpu, gpu, mgsrt_topk_positions, topKPositionsDesc(1, 4, 2, 3), {true, true},
                  "largest 3");
  expectSameError(cpu, gpu, mgsrt_topk_positions, topKPositionsDesc(1, 4, 2, 1), {true, false},
                  "no y");
}

} // namespace
