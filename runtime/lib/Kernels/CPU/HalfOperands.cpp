//===- HalfOperands.cpp - Operands rounded to IEEE half -------------------===//

#include "Kernels/CPU/HalfOperands.h"

#include <new>
#include <vector>

using namespace mgs::rt;

namespace {

/// The rounded copies of the running kernel's operands.
struct HalfScratch : KernelCache {
  std::vector<float> data;
};

} // namespace

mgsrt_status_t mgs::rt::cpu::halfOperands(mgsrt_ctx_t *ctx, const char *kernel,
                                          std::initializer_list<RoundedOperand> operands) {
  static const int64_t key = 0; // its cache key (no descriptor has this address)
  HalfScratch &scratch = getCache<HalfScratch>(ctx, &key);
  size_t total = 0;
  for (const RoundedOperand &op : operands)
    total += static_cast<size_t>(op.count);
  if (scratch.data.size() < total) {
    try {
      scratch.data.resize(total);
    } catch (const std::bad_alloc &) {
      return ctx->fail(MGSRT_ERROR_OUT_OF_MEMORY,
                       strCat(kernel, ": no memory for the half-rounded copies of its operands (",
                              total, " floats)"));
    }
  }
  float *next = scratch.data.data();
  for (const RoundedOperand &op : operands) {
    if (op.count == 0)
      continue;
    const float *in = op.ptr;
    float *out = next;
    const int64_t count = op.count;
#pragma omp parallel for simd if (count >= kParallelGrain) schedule(static)
    for (int64_t j = 0; j < count; ++j)
      out[j] = roundToHalf(in[j]);
    op.ptr = out;
    next += count;
  }
  return MGSRT_OK;
}
