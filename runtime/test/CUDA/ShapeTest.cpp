//===- ShapeTest.cpp - GPU transpose, concat / split, pad vs the CPU ------===//
//
// Shape kernels move floats without arithmetic: the GPU must match the CPU
// bit for bit.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include <algorithm>
#include <memory>
#include <numeric>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

using GpuShape = GpuTest;

/// CPU and GPU outputs equal bit for bit at every buffer.
void expectSame(const Buffers &g, const Buffers &c, const std::string &what) {
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_TRUE(bitsEqual(g[i], c[i])) << what << " buffer " << i;
}

std::string str(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

void checkTranspose(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, const std::vector<int64_t> &in,
                    const std::vector<int64_t> &perm) {
  std::vector<int64_t> desc = {static_cast<int64_t>(in.size())};
  desc.insert(desc.end(), in.begin(), in.end());
  desc.insert(desc.end(), perm.begin(), perm.end());
  const int64_t n = product(in);
  Buffers host = {randomVec(n), std::vector<float>(n, -9.0f)};
  expectSame(runGpu(gpu, mgsrt_transpose, desc.data(), host),
             runCpu(cpu, mgsrt_transpose, desc.data(), host), "in " + str(in) + " perm " + str(perm));
}

TEST_F(GpuShape, TransposeEveryPermutationOfRank0To5) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {7}, {33, 65}, {5, 1, 40}, {3, 34, 5, 36}, {2, 3, 1, 5, 6}, {4, 3, 2, 33, 5}};
  for (const auto &in : shapes) {
    std::vector<int64_t> perm(in.size());
    std::iota(perm.begin(), perm.end(), 0);
    do
      checkTranspose(cpu, gpu, in, perm);
    while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_F(GpuShape, TransposeLarge) {
  checkTranspose(cpu, gpu, {1024, 1024}, {1, 0});
  checkTranspose(cpu, gpu, {1000, 1001}, {1, 0});
  checkTranspose(cpu, gpu, {32, 64, 512}, {2, 0, 1}); // NCHW-like moves
  checkTranspose(cpu, gpu, {8, 64, 32, 32}, {0, 2, 3, 1});
  checkTranspose(cpu, gpu, {8, 32, 32, 64}, {0, 3, 1, 2});
  checkTranspose(cpu, gpu, {1 << 20, 1}, {1, 0}); // a copy
}

//===----------------------------------------------------------------------===//
// Concat / split
//===----------------------------------------------------------------------===//

void checkConcatSplit(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, int64_t outer, int64_t inner,
                      const std::vector<int64_t> &extent, const std::vector<bool> &skip) {
  const std::string what = "outer " + std::to_string(outer) + " inner " +
                           std::to_string(inner) + " extents " + str(extent);
  const int64_t k = static_cast<int64_t>(extent.size());
  std::vector<int64_t> desc = {outer, inner, k};
  desc.insert(desc.end(), extent.begin(), extent.end());
  const int64_t sum = std::accumulate(extent.begin(), extent.end(), int64_t{0});
  Buffers parts;
  for (int64_t e : extent)
    parts.push_back(randomVec(outer * e * inner));
  Buffers cat = parts;
  cat.push_back(std::vector<float>(outer * sum * inner, -9.0f));
  Buffers cc = runCpu(cpu, mgsrt_concat, desc.data(), cat);
  expectSame(runGpu(gpu, mgsrt_concat, desc.data(), cat), cc, "concat " + what);

  // Split the concatenation back, some slices skipped (null).
  Buffers sp = {cc.back()};
  for (int64_t i = 0; i < k; ++i)
    sp.push_back(skip[i] ? std::vector<float>() : std::vector<float>(outer * extent[i] * inner, -9.0f));
  Buffers sc = runCpu(cpu, mgsrt_split, desc.data(), sp);
  Buffers sg = runGpu(gpu, mgsrt_split, desc.data(), sp);
  expectSame(sg, sc, "split " + what);
  for (int64_t i = 0; i < k; ++i) {
    if (skip[i])
      continue;
    EXPECT_TRUE(bitsEqual(sg[1 + i], parts[i])) << "split round trip " << what;
  }
}

TEST_F(GpuShape, ConcatAndSplitMatchCpu) {
  checkConcatSplit(cpu, gpu, 1, 1, {3}, {false});
  checkConcatSplit(cpu, gpu, 1, 7, {2, 0, 5}, {false, false, true});
  checkConcatSplit(cpu, gpu, 3, 1, {2, 0, 5}, {true, false, false});
  checkConcatSplit(cpu, gpu, 4, 17, {3, 1, 8, 2}, {false, true, false, true});
  checkConcatSplit(cpu, gpu, 32, 196, {64, 128, 32}, {false, false, false}); // channel concat
  checkConcatSplit(cpu, gpu, 5, 3, {0, 4}, {false, false});                  // one non-empty part
  checkConcatSplit(cpu, gpu, 0, 3, {2, 4}, {false, false});                  // empty
  // Gradient buckets: many flat parts, outer = 1.
  std::vector<int64_t> extents;
  for (int i = 0; i < 200; ++i)
    extents.push_back((i * 7919) % 5000 + (i % 3 == 0 ? 0 : 1));
  checkConcatSplit(cpu, gpu, 1, 1, extents, std::vector<bool>(extents.size(), false));
  checkConcatSplit(cpu, gpu, 1, 1 << 20, {1}, {false}); // 1M floats
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

void checkPad(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, const std::vector<int64_t> &in,
              const std::vector<int64_t> &pads, double value) {
  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> desc = {r};
  desc.insert(desc.end(), in.begin(), in.end());
  desc.insert(desc.end(), pads.begin(), pads.end());
  desc.push_back(bits(value));
  std::vector<int64_t> out(r);
  for (int64_t i = 0; i < r; ++i)
    out[i] = in[i] + pads[i] + pads[r + i];
  const int64_t nIn = product(in), nOut = product(out);
  const std::string what = "in " + str(in) + " pads " + str(pads);
  // Empty tensors still get a (never read) buffer: both are required.
  auto sized = [](int64_t n) { return std::vector<float>(std::max<int64_t>(n, 1), -9.0f); };
  std::vector<float> x = sized(nIn);
  if (nIn > 0)
    x = randomVec(nIn);
  Buffers fwd = {x, sized(nOut)};
  expectSame(runGpu(gpu, mgsrt_pad_fwd, desc.data(), fwd),
             runCpu(cpu, mgsrt_pad_fwd, desc.data(), fwd), "pad_fwd " + what);
  std::vector<float> dy = sized(nOut);
  if (nOut > 0)
    dy = randomVec(nOut);
  Buffers bwd = {dy, sized(nIn)};
  expectSame(runGpu(gpu, mgsrt_pad_bwd, desc.data(), bwd),
             runCpu(cpu, mgsrt_pad_bwd, desc.data(), bwd), "pad_bwd " + what);
}

TEST_F(GpuShape, PadMatchesCpu) {
  checkPad(cpu, gpu, {}, {}, 2.0);                           // rank 0
  checkPad(cpu, gpu, {10}, {2, 3}, 1.5);                     // rank 1
  checkPad(cpu, gpu, {10}, {-2, -3}, 1.5);                   // crop
  checkPad(cpu, gpu, {10}, {-4, 6}, 0.0);                    // crop one side, pad the other
  checkPad(cpu, gpu, {10}, {-10, 0}, 0.0);                   // crop to nothing
  checkPad(cpu, gpu, {4, 5}, {1, 0, 2, 3}, -1.0);            // rank 2
  checkPad(cpu, gpu, {4, 5}, {-1, 2, 1, -2}, 3.0);           // mixed
  checkPad(cpu, gpu, {2, 3, 6, 7}, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0); // NCHW spatial pad
  checkPad(cpu, gpu, {2, 3, 6, 7}, {0, -1, -2, 3, 1, 0, -1, -3}, 0.25);
  checkPad(cpu, gpu, {0, 3}, {1, 1, 0, 2}, 7.0);             // empty input: all value
  checkPad(cpu, gpu, {2, 1, 3, 1, 2}, {1, 0, -1, 2, 0, 0, 1, 0, 0, 1}, 0.5); // rank 5
  checkPad(cpu, gpu, {64, 3, 64, 64}, {0, 0, 3, 3, 0, 0, 3, 3}, 0.0);        // ~1M out
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(GpuShape, ErrorsMatchCpu) {
  std::vector<float> host(64, 0.0f);
  DeviceBuffer<float> dev(gpu, host);
  struct Case {
    KernelFn fn;
    std::vector<int64_t> desc;
    std::vector<bool> nonNull;
  };
  const Case cases[] = {
      {mgsrt_transpose, {33}, {true, true}},
      {mgsrt_transpose, {2, 3, -4, 1, 0}, {true, true}},
      {mgsrt_transpose, {2, 3, 4, 0, 0}, {true, true}},
      {mgsrt_transpose, {2, 3, 4, 1, 0}, {true, false}},
      {mgsrt_concat, {-1, 1, 1, 2}, {true, true}},
      {mgsrt_concat, {1, 1, -1}, {true, true}},
      {mgsrt_concat, {1, 1, 2, 3, -3}, {true, true, true}},
      {mgsrt_concat, {1, 1, 2, 3, 3}, {true, false, true}},
      {mgsrt_concat, {1, 1, 2, 3, 3}, {true, true, false}},
      {mgsrt_split, {1, 1, 2, 3, 3}, {false, true, true}},
      {mgsrt_split, {1, 1, 70000}, {true}},
      {mgsrt_pad_fwd, {40}, {true, true}},
      {mgsrt_pad_fwd, {1, -2, 0, 0, 0}, {true, true}},
      {mgsrt_pad_fwd, {1, 3, -2, -2, 0}, {true, true}},
      {mgsrt_pad_bwd, {1, 3, 1, 1, 0}, {false, true}},
  };
  int index = 0;
  for (const Case &c : cases) {
    std::vector<void *> hb, db;
    for (bool b : c.nonNull) {
      hb.push_back(b ? host.data() : nullptr);
      db.push_back(b ? dev.ptr : nullptr);
    }
    mgsrt_status_t sc = c.fn(cpu, c.desc.data(), hb.data());
    mgsrt_status_t sg = c.fn(gpu, c.desc.data(), db.data());
    EXPECT_EQ(sc, MGSRT_ERROR_INVALID_ARGUMENT) << "case " << index;
    EXPECT_EQ(sg, sc) << "case " << index;
    EXPECT_EQ(std::string(mgsrt_ctx_message(gpu)), std::string(mgsrt_ctx_message(cpu)))
        << "case " << index;
    mgsrt_ctx_clear(cpu);
    mgsrt_ctx_clear(gpu);
    ++index;
  }
}

} // namespace
