//===- Dnnl.h - oneDNN engine, stream and errors of a context ---*- C++ -*-===//
//
// What the kernels on oneDNN primitives (Conv.cpp, Gemm.cpp) share: the CPU
// engine and stream, created once per context, and the translation of
// oneDNN's exceptions into a backend error of the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_DNNL_H
#define MGSRT_KERNELS_CPU_DNNL_H

#include "Support/Common.h"

#include <dnnl.hpp>

namespace mgs::rt::cpu {

struct DnnlEnv : KernelCache {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

/// The context's engine and stream (kept in its cache map under an address
/// no descriptor can have).
inline DnnlEnv &dnnlEnv(mgsrt_ctx_t *ctx) {
  static const int64_t key = 0;
  return getCache<DnnlEnv>(ctx, &key);
}

/// Runs `body`, turning a dnnl::error into the kernel's backend error. With
/// `bf16` (oneDNN's bfloat16 primitives, which this CPU has: a CPU without
/// them rounds the operands for float32 ones instead, RoundedOperands.h),
/// oneDNN having no kernel means none for this shape, which the error says.
template <typename Body>
mgsrt_status_t catchDnnl(mgsrt_ctx_t *ctx, const char *kernel, Body &&body, bool bf16 = false) {
  try {
    return body();
  } catch (const dnnl::error &e) {
    if (bf16 && e.status == dnnl_unimplemented)
      return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                       strCat(kernel, ": oneDNN has no bfloat16 kernel for this shape on this "
                                      "CPU; compile with --precision f32"));
    return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": oneDNN: ", e.what(), " (status ",
                                                 static_cast<int>(e.status), ")"));
  }
}

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_DNNL_H
