//===- RecurrentTest.cpp - GPU LSTM and GRU layers against the CPU --------===//
//
// The GPU runs the CPU's gate arithmetic operation for operation; its
// products are cuBLAS's, which sum in another order than oneDNN's. So:
//  - where every product is exact (recurrent weights zero, inputs and input
//    weights multiples of 1/8), the forward results and the bias gradients
//    (the gate gradients' column sums) equal the CPU's bit for bit, which
//    checks the gate arithmetic through every step;
//  - in general they agree within kTol of each tensor's largest value, the
//    backward pass run on the CPU's forward results so that only its own
//    rounding counts;
//  - bad descriptors and null buffers are refused in the CPU's words.
//
//===----------------------------------------------------------------------===//

#include "LayerTestUtil.h"

#include "mgsrt/contract.h"

#include <random>

using namespace mgsrt_test;
using namespace mgsrt_test::layers;

namespace {

constexpr double kTol = 1e-4;

/// One layer: steps, batch, input and hidden size; the GRU's
/// linear_before_reset; whether the optional inputs and outputs are given;
/// whether the initial states and their gradients are.
struct RnnCase {
  int64_t t, n, i, h;
  bool lbr = true, optional = true, initial = false;
};

// A single step and unit sizes; the test models' (digits rows: 8 steps of 8,
// batch 4, hidden 16 or 32); a wide hidden state over a long batch; sizes
// that are no multiple of a warp; given initial states (one step and several).
const RnnCase kCases[] = {{1, 1, 1, 1},
                          {8, 4, 8, 16},
                          {8, 4, 8, 32},
                          {3, 64, 20, 40},
                          {7, 5, 33, 17},
                          {12, 3, 5, 9, false, false},
                          {1, 3, 4, 5, true, true, true},
                          {7, 5, 33, 17, false, true, true}};

std::string traceOf(const RnnCase &c) {
  return "T" + std::to_string(c.t) + " N" + std::to_string(c.n) + " I" + std::to_string(c.i) +
         " H" + std::to_string(c.h) + (c.lbr ? " lbr" : "") + (c.optional ? "" : " no optional") +
         (c.initial ? " initial states" : "");
}

/// The kernels, gate count and buffer layout of one kind of layer.
struct Kind {
  const char *name;
  KernelFn fwd, bwd;
  int64_t gates;    // 4 (LSTM) or 3 (GRU)
  bool cellState;   // the LSTM's y_c / dy_c
  std::vector<int64_t> desc(const RnnCase &c) const {
    if (cellState)
      return {c.t, c.n, c.i, c.h};
    return {c.t, c.n, c.i, c.h, c.lbr ? 1 : 0};
  }
  /// saved's columns a row: 5H (LSTM) or 4H (GRU).
  int64_t savedCols(const RnnCase &c) const { return (gates + 1) * c.h; }
  /// The states: h (and the LSTM's c).
  size_t states() const { return cellState ? 2 : 1; }
  /// The forward's outputs (y, y_h, [y_c], saved) start at buffer 4.
  size_t fwdOutputs() const { return 2 + states(); }
  /// The backward's dx (then dw, dr, db) and dh0 (then [dc0]) buffers.
  size_t bwdFirstGrad() const { return 6 + states(); }
  size_t bwdFirstInitialGrad() const { return bwdFirstGrad() + 4 + states(); }
  size_t fwdBufs() const { return 4 + fwdOutputs() + states(); }
  size_t bwdBufs() const { return bwdFirstInitialGrad() + states(); }
};

const Kind kLstm{"lstm", mgsrt_lstm_fwd, mgsrt_lstm_bwd, 4, true};
const Kind kGru{"gru", mgsrt_gru_fwd, mgsrt_gru_bwd, 3, false};

/// n multiples of 1/8 in [-1, 1]: products and sums of a few are exact.
std::vector<float> eighths(int64_t n) {
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<float> v(n);
  for (float &x : v)
    x = static_cast<float>(dist(rng())) / 8.0f;
  return v;
}

/// The forward call's buffers: x, w, r, b, then the outputs (y, y_h, [y_c],
/// saved), which start equal on both devices, then the initial states h0,
/// [c0] (empty: null, the zero state).
Buffers forwardBuffers(const Kind &k, const RnnCase &c, std::vector<float> x,
                       std::vector<float> w, std::vector<float> r) {
  const int64_t TN = c.t * c.n, H = c.h;
  Buffers b = {std::move(x), std::move(w), std::move(r), randomVec(2 * k.gates * H, -0.5f, 0.5f),
               randomVec(TN * H)};
  b.push_back(c.optional ? randomVec(c.n * H) : std::vector<float>());
  if (k.cellState)
    b.push_back(c.optional ? randomVec(c.n * H) : std::vector<float>());
  b.push_back(randomVec(TN * k.savedCols(c)));
  for (size_t s = 0; s < k.states(); ++s)
    b.push_back(c.initial ? randomVec(c.n * H) : std::vector<float>());
  return b;
}

Buffers randomForward(const Kind &k, const RnnCase &c) {
  return forwardBuffers(k, c, randomVec(c.t * c.n * c.i),
                        randomVec(k.gates * c.h * c.i, -0.7f, 0.7f),
                        randomVec(k.gates * c.h * c.h, -0.7f, 0.7f));
}

/// The backward call's buffers from the forward call's (after it ran): x, w,
/// r, y, saved, dy, dy_h, [dy_c], dx, dw, dr, db, h0, [c0], dh0, [dc0].
Buffers backwardBuffers(const Kind &k, const RnnCase &c, const Buffers &fwd) {
  const int64_t TN = c.t * c.n, H = c.h, G = k.gates * H;
  const auto optional = [&](int64_t n) {
    return c.optional ? randomVec(n) : std::vector<float>();
  };
  const std::vector<float> &saved = fwd[4 + k.fwdOutputs() - 1];
  Buffers b = {fwd[0], fwd[1], fwd[2], fwd[4], saved, optional(TN * H), optional(c.n * H)};
  if (k.cellState)
    b.push_back(optional(c.n * H));
  b.push_back(optional(TN * c.i));
  b.push_back(randomVec(G * c.i));
  b.push_back(randomVec(G * H));
  b.push_back(randomVec(2 * G));
  for (size_t s = 0; s < k.states(); ++s)
    b.push_back(fwd[4 + k.fwdOutputs() + s]);
  for (size_t s = 0; s < k.states(); ++s)
    b.push_back(c.initial ? randomVec(c.n * H) : std::vector<float>());
  return b;
}

/// Names of the outputs (the buffers from `first` on) for the messages.
const char *const kFwdNames[] = {"y", "y_h", "y_c", "saved"};
const char *const kBwdNames[] = {"dx", "dw", "dr", "db"};
const char *const kInitialGradNames[] = {"dh0", "dc0"};

void expectForwardClose(const Kind &k, const Buffers &g, const Buffers &c) {
  for (size_t i = 4, o = 0; i < 4 + k.fwdOutputs(); ++i, ++o) {
    if (!k.cellState && o == 2)
      ++o; // the GRU has no y_c
    EXPECT_LE(relToMax(g[i], c[i]), kTol) << kFwdNames[o];
  }
}

void runBothWays(mgsrt_ctx_t *cpu, mgsrt_ctx_t *gpu, const Kind &k, const RnnCase &c) {
  SCOPED_TRACE(std::string(k.name) + " " + traceOf(c));
  const std::vector<int64_t> desc = k.desc(c);
  const Buffers in = randomForward(k, c);
  const Buffers cf = runCpu(cpu, k.fwd, desc.data(), in);
  expectForwardClose(k, runGpu(gpu, k.fwd, desc.data(), in), cf);
  const Buffers bin = backwardBuffers(k, c, cf);
  const Buffers cb = runCpu(cpu, k.bwd, desc.data(), bin);
  const Buffers gb = runGpu(gpu, k.bwd, desc.data(), bin);
  const size_t first = k.bwdFirstGrad(), initial = k.bwdFirstInitialGrad();
  for (size_t i = first; i < first + 4; ++i) {
    if (!bin[i].empty()) {
      EXPECT_LE(relToMax(gb[i], cb[i]), kTol) << kBwdNames[i - first];
    }
  }
  for (size_t i = initial; i < bin.size(); ++i) {
    if (!bin[i].empty()) {
      EXPECT_LE(relToMax(gb[i], cb[i]), kTol) << kInitialGradNames[i - initial];
    }
  }
}

using GpuRecurrent = GpuTest;

TEST_F(GpuRecurrent, LstmMatchesCpu) {
  for (const RnnCase &c : kCases)
    runBothWays(cpu, gpu, kLstm, c);
}

TEST_F(GpuRecurrent, GruMatchesCpuWithEitherLinearBeforeReset) {
  for (RnnCase c : kCases)
    for (bool lbr : {true, false}) {
      c.lbr = lbr;
      runBothWays(cpu, gpu, kGru, c);
    }
}

TEST_F(GpuRecurrent, GateArithmeticEqualsTheCpuBitForBitWhereProductsAreExact) {
  const RnnCase cases[] = {{5, 3, 4, 8}, {4, 2, 16, 33, false}};
  for (const Kind *k : {&kLstm, &kGru})
    for (const RnnCase &c : cases) {
      SCOPED_TRACE(std::string(k->name) + " " + traceOf(c));
      const std::vector<int64_t> desc = k->desc(c);
      const Buffers in = forwardBuffers(*k, c, eighths(c.t * c.n * c.i),
                                        eighths(k->gates * c.h * c.i),
                                        std::vector<float>(k->gates * c.h * c.h, 0.0f));
      const Buffers cf = runCpu(cpu, k->fwd, desc.data(), in);
      const Buffers gf = runGpu(gpu, k->fwd, desc.data(), in);
      for (size_t i = 4; i < 4 + k->fwdOutputs(); ++i)
        EXPECT_TRUE(bitsEqual(gf[i], cf[i])) << "forward output " << i;
      const Buffers bin = backwardBuffers(*k, c, cf);
      const Buffers cb = runCpu(cpu, k->bwd, desc.data(), bin);
      const Buffers gb = runGpu(gpu, k->bwd, desc.data(), bin);
      EXPECT_TRUE(bitsEqual(gb[k->bwdFirstGrad() + 3], cb[k->bwdFirstGrad() + 3])) << "db";
    }
}

TEST_F(GpuRecurrent, BadCallsAreRefusedAsOnTheCpu) {
  for (const Kind *k : {&kLstm, &kGru}) {
    SCOPED_TRACE(k->name);
    const RnnCase good{2, 2, 3, 4};
    const std::vector<bool> allFwd(k->fwdBufs(), true), allBwd(k->bwdBufs(), true);
    for (RnnCase bad : {RnnCase{0, 2, 3, 4}, RnnCase{2, -1, 3, 4}, RnnCase{2, 2, 0, 4},
                        RnnCase{2, 2, 3, 0}}) {
      expectSameError(cpu, gpu, k->fwd, k->desc(bad), allFwd, "fwd " + traceOf(bad));
      expectSameError(cpu, gpu, k->bwd, k->desc(bad), allBwd, "bwd " + traceOf(bad));
    }
    // Null required buffers (the optional ones may be null).
    using Positions = std::vector<size_t>;
    const Positions fwdRequired = k->cellState ? Positions{0, 1, 2, 3, 4, 7}
                                               : Positions{0, 1, 2, 3, 4, 6};
    const Positions bwdRequired = k->cellState ? Positions{0, 1, 2, 3, 4, 9, 10, 11}
                                               : Positions{0, 1, 2, 3, 4, 8, 9, 10};
    for (size_t i : fwdRequired) {
      std::vector<bool> nn = allFwd;
      nn[i] = false;
      expectSameError(cpu, gpu, k->fwd, k->desc(good), nn, "fwd null " + std::to_string(i));
    }
    for (size_t i : bwdRequired) {
      std::vector<bool> nn = allBwd;
      nn[i] = false;
      expectSameError(cpu, gpu, k->bwd, k->desc(good), nn, "bwd null " + std::to_string(i));
    }
  }
  std::vector<int64_t> desc = kGru.desc({2, 2, 3, 4});
  desc[mgs::contract::GruDesc::LinearBeforeReset] = 2;
  expectSameError(cpu, gpu, mgsrt_gru_fwd, desc, std::vector<bool>(kGru.fwdBufs(), true),
                  "linear_before_reset 2");
  expectSameError(cpu, gpu, mgsrt_gru_bwd, desc, std::vector<bool>(kGru.bwdBufs(), true),
                  "linear_before_reset 2 (bwd)");
}

} // namespace
