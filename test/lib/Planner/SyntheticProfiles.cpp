//===- SyntheticProfiles.cpp - Random model-shaped planner profiles -------===//
//
// makeModelShapedProfile: a splitmix64 stream drives every choice, so a seed
// gives the same profile on every platform (std distributions do not).
//
//===----------------------------------------------------------------------===//

#include "SyntheticProfiles.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <initializer_list>

using namespace llvm;

namespace mgs::planner {

namespace {
/// splitmix64: the same stream on every platform (std distributions are not).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double logUniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }
  int64_t pick(std::initializer_list<int64_t> values) {
    return values.begin()[next() % values.size()];
  }

private:
  uint64_t state;
};
} // namespace

Profile makeModelShapedProfile(int64_t numTensors, uint64_t seed) {
  assert(numTensors >= 1);
  Rng rng(seed);
  Profile p;
  p.workers = rng.pick({2, 4, 8, 16, 32, 64});
  p.density = static_cast<double>(rng.pick({1, 2, 5, 10, 50})) / 1000.0;

  // Top-k: s * n * log2(n) plus a launch overhead, sampled at powers of 4.
  double s = rng.logUniform(5e-11, 1e-9), launch = rng.logUniform(5e-6, 1e-4);
  for (int64_t n = 1; n <= (int64_t(1) << 32); n *= 4)
    p.topkPoints.push_back(
        {n, launch + s * static_cast<double>(n) * std::log2(static_cast<double>(n))});

  // Network: 1-100 Gbit/s, start-up 50 us - 20 ms; ring all-reduce.
  double bytesPerSecond = rng.logUniform(1e9, 1e11) / 8.0;
  p.allgather.alpha = rng.logUniform(5e-5, 2e-2);
  p.allgather.beta = 1.0 / bytesPerSecond;
  p.allreduce.alpha = p.allgather.alpha * rng.uniform(0.5, 2.0);
  p.allreduce.beta =
      2.0 * static_cast<double>(p.workers - 1) / static_cast<double>(p.workers) / bytesPerSecond;

  // Compute: FLOP/s and memory bandwidth of the device, batch size.
  double flops = rng.logUniform(2e12, 3e13), memBandwidth = rng.logUniform(2e11, 2e12);
  double batch = static_cast<double>(rng.pick({16, 32, 64, 128, 256}));
  double kernelLaunch = 5e-6;
  int64_t stages = rng.pick({3, 4, 5}), channels = rng.pick({16, 32, 64});
  int64_t spatial = rng.pick({32, 56, 112}), classes = rng.pick({10, 100, 1000});
  auto noise = [&] { return rng.uniform(0.8, 1.25); };

  int64_t body = std::max<int64_t>(numTensors - 2, 0);
  int64_t perStage = std::max<int64_t>((body + stages - 1) / stages, 1);
  int64_t cin = 3;
  for (int64_t t = 0; t < body; ++t) {
    int64_t stage = std::min(t / perStage, stages - 1);
    int64_t cout = channels << stage;
    double hw = std::pow(static_cast<double>(std::max<int64_t>(spatial >> stage, 1)), 2);
    int64_t unit = t / 3;
    LayerProfile layer;
    switch (t % 3) {
    case 0: { // conv weight
      int64_t k = rng.uniform() < 0.15 ? 1 : 3;
      layer.name = formatv("conv{0}.weight", unit).str();
      layer.numel = k * k * cin * cout;
      // Weight and input gradients: 2 x 2 x MACs.
      layer.backward =
          kernelLaunch + 4.0 * static_cast<double>(layer.numel) * hw * batch / flops * noise();
      cin = cout;
      break;
    }
    case 1:
    case 2: // batch-norm weight / bias: memory-bound over the activations
      layer.name = formatv("bn{0}.{1}", unit, t % 3 == 1 ? "weight" : "bias").str();
      layer.numel = cout;
      layer.backward = kernelLaunch + (t % 3 == 1 ? 12.0 : 4.0) * static_cast<double>(cout) * hw *
                                          batch / memBandwidth * noise();
      break;
    }
    p.layers.push_back(std::move(layer));
  }
  int64_t features = numTensors >= 3 ? cin : 512;
  if (numTensors >= 2) {
    double macs = static_cast<double>(features * classes) * batch;
    p.layers.push_back(
        {"fc.weight", features * classes, kernelLaunch + 4.0 * macs / flops * noise()});
  }
  p.layers.push_back({"fc.bias", classes, kernelLaunch * noise()});
  return p;
}

} // namespace mgs::planner
