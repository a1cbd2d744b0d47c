//===- RoundedOperands.cpp - Reduced precision by rounded operands --------===//

#include "Kernels/CPU/RoundedOperands.h"
#include "Support/Rounding.h"

#include <dnnl.hpp>

#include <exception>

using namespace mgs::rt;

namespace {

/// Whether oneDNN can make a bfloat16 matmul (bfloat16 operands, float32
/// result): the primitive every bfloat16 GEMM and matmul uses, and the ISA
/// its convolutions need too.
bool probeBf16Kernels() {
  try {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const dnnl::memory::desc a({1, 1}, dt::bf16, tag::ab), c({1, 1}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, a, c), eng);
    return true;
  } catch (const std::exception &) { // dnnl::error, or no memory: no kernels to count on
    return false;
  }
}

/// Copies `count` floats from `in` to `out` rounded by `round`.
template <float (*round)(float)> void roundCopy(const float *in, float *out, int64_t count) {
#pragma omp parallel for simd if (count >= kParallelGrain) schedule(static)
  for (int64_t j = 0; j < count; ++j)
    out[j] = round(in[j]);
}

} // namespace

bool mgs::rt::cpu::hasBf16Kernels() {
  static const bool has = probeBf16Kernels();
  return has;
}

mgsrt_status_t mgs::rt::cpu::roundedOperands(mgsrt_ctx_t *ctx, const char *kernel, Precision p,
                                             std::initializer_list<RoundedOperand> operands) {
  if (nativePrecision(p))
    return MGSRT_OK;
  static const int64_t key = 0; // the rounded copies' scratch
  size_t total = 0;
  for (const RoundedOperand &op : operands)
    total += static_cast<size_t>(op.count);
  float *next = floatScratch(ctx, &key, total);
  if (!next)
    return ctx->fail(MGSRT_ERROR_OUT_OF_MEMORY,
                     strCat(kernel, ": no memory for the ",
                            p == Precision::F16 ? "half" : "bfloat16",
                            "-rounded copies of its operands (", total, " floats)"));
  for (const RoundedOperand &op : operands) {
    if (op.count == 0)
      continue;
    if (p == Precision::F16)
      roundCopy<roundToHalf>(op.ptr, next, op.count);
    else
      roundCopy<roundToBf16>(op.ptr, next, op.count);
    op.ptr = next;
    next += op.count;
  }
  return MGSRT_OK;
}
