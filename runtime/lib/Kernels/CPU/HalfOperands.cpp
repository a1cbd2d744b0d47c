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
                                          const float **ptrs, const int64_t *counts, int n) {
  static const int64_t key = 0; // its cache key (no descriptor has this address)
  HalfScratch &scratch = getCache<HalfScratch>(ctx, &key);
  size_t total = 0;
  for (int i = 0; i < n; ++i)
    if (ptrs[i])
      total += static_cast<size_t>(counts[i]);
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
  for (int i = 0; i < n; ++i) {
    if (!ptrs[i])
      continue;
    const float *in = ptrs[i];
    float *out = next;
    const int64_t count = counts[i];
#pragma omp parallel for simd if (count >= kParallelGrain) schedule(static)
    for (int64_t j = 0; j < count; ++j)
      out[j] = roundToHalf(in[j]);
    ptrs[i] = out;
    next += count;
  }
  return MGSRT_OK;
}
