//===- Common.h - Helpers shared across the runtime (internal) --*- C++ -*-===//
//
// The entry guard every kernel goes through (sticky status, exceptions turned
// into statuses), descriptor checks, and the parallel-loop thresholds; used by
// the CPU and CUDA kernels, the collectives (lib/Comm) and the dispatcher.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_SUPPORT_COMMON_H
#define MGSRT_SUPPORT_COMMON_H

#include "Support/Context.h"
#include "Support/KernelList.h"

#include <chrono>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

/// Functions the CPU and CUDA kernels share (the descriptors' per-element
/// arithmetic): device code too where nvcc compiles them.
#ifdef __CUDACC__
#define MGSRT_HOST_DEVICE __host__ __device__
#else
#define MGSRT_HOST_DEVICE
#endif

namespace mgs::rt {

/// Kernels are named as the contract names them (messages, trace, profile).
using contract::Kernel;
using contract::kernelName;

/// The largest tensor rank the shape kernels accept (descriptors are read
/// into fixed arrays of this size).
constexpr int64_t kMaxRank = 32;

/// Loops over fewer elements than this run on one thread.
constexpr int64_t kParallelGrain = 1 << 15;

template <typename... Args> std::string strCat(Args &&...args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

/// A steady_clock time point in seconds (the timeline's and the marks' clock).
inline double secondsOf(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

/// Records MGSRT_ERROR_INVALID_ARGUMENT with "<kernel>: <what>" and returns it.
template <typename... Args>
mgsrt_status_t invalidArg(mgsrt_ctx_t *ctx, const char *kernel, Args &&...what) {
  return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                   strCat(kernel, ": ", std::forward<Args>(what)...));
}

/// Runs `body` (returning mgsrt_status_t) behind the C ABI: a failed context
/// makes it a no-op returning the sticky status; null ctx/desc/bufs and
/// escaping exceptions become statuses. Exceptions must not escape OpenMP
/// regions inside `body` (kernels allocate outside them).
template <typename Body>
mgsrt_status_t runKernel(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                         void *const *bufs, Body &&body) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->failed())
    return ctx->status;
  if (!desc)
    return invalidArg(ctx, kernel, "descriptor is null");
  if (!bufs)
    return invalidArg(ctx, kernel, "buffer list is null");
  try {
    if (!ctx->profile && !ctx->tracing)
      return body();
    auto start = std::chrono::steady_clock::now();
    mgsrt_status_t status = body();
    auto end = std::chrono::steady_clock::now();
    if (ctx->profile)
      ctx->profile->record(kernel, desc, end - start);
    if (ctx->tracing)
      ctx->traceEvent(kernel, 0, secondsOf(start), secondsOf(end), MGSRT_TRACE_KERNEL);
    return status;
  } catch (const std::bad_alloc &) {
    return ctx->fail(MGSRT_ERROR_OUT_OF_MEMORY, strCat(kernel, ": out of memory"));
  } catch (const std::exception &e) {
    return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": ", e.what()));
  } catch (...) {
    return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": unknown exception"));
  }
}

/// Checks that the buffers at the given positions are non-null; records an
/// error naming the first null one. A buffer whose element count is given as
/// zero may be null.
struct BufferCheck {
  mgsrt_ctx_t *ctx;
  const char *kernel;
  void *const *bufs;
  bool ok = true;
  BufferCheck(mgsrt_ctx_t *c, const char *k, void *const *b) : ctx(c), kernel(k), bufs(b) {}
  BufferCheck &require(int index, const char *name, int64_t elements = -1) {
    if (ok && !bufs[index] && elements != 0) {
      invalidArg(ctx, kernel, "buffer ", index, " (", name, ") is null");
      ok = false;
    }
    return *this;
  }
};

inline double descF64(const int64_t *desc, int index) {
  return mgsrt_f64_from_bits(desc[index]);
}

/// What a GEMM, matmul or convolution rounds its operands to before it
/// multiplies (MGSRT_PRECISION_*); it accumulates in float32 either way.
enum class Precision : uint8_t { F32, BF16, F16 };

/// An operand such a kernel rounds (RoundedOperands.h on the CPU, Device.h's
/// roundedOperands on a GPU): its pointer, replaced by the rounded copy's,
/// and its element count (0: not read, the pointer left as it is).
struct RoundedOperand {
  const float *&ptr;
  int64_t count;
};

/// A descriptor's precision field; records an invalid-argument error for a
/// value that is not an MGSRT_PRECISION_*.
inline mgsrt_status_t parsePrecision(mgsrt_ctx_t *ctx, const char *kernel, int64_t value,
                                     Precision &precision) {
  switch (value) {
  case MGSRT_PRECISION_F32:
    precision = Precision::F32;
    return MGSRT_OK;
  case MGSRT_PRECISION_BF16:
    precision = Precision::BF16;
    return MGSRT_OK;
  case MGSRT_PRECISION_F16:
    precision = Precision::F16;
    return MGSRT_OK;
  default:
    return invalidArg(ctx, kernel, "precision ", value, " is not ", int(MGSRT_PRECISION_F32),
                      " (float32), ", int(MGSRT_PRECISION_BF16), " (bfloat16) or ",
                      int(MGSRT_PRECISION_F16), " (half)");
  }
}

/// `g` where `keep`, else +0.0f, without a branch. Written as a bit mask
/// because GCC turns `keep ? g : 0.0f` into a branch inside loops that also
/// reduce in double; on data where `keep` is random (a ReLU's mask) the
/// mispredictions made the fused-ReLU batch-norm backward 16x slower than
/// the plain one.
inline float keepOrZero(bool keep, float g) {
  uint32_t bits;
  std::memcpy(&bits, &g, sizeof bits);
  bits &= 0u - static_cast<uint32_t>(keep);
  std::memcpy(&g, &bits, sizeof g);
  return g;
}

/// Product of `n` extents (the caller has checked they are non-negative).
inline int64_t product(const int64_t *dims, int64_t n) {
  int64_t p = 1;
  for (int64_t i = 0; i < n; ++i)
    p *= dims[i];
  return p;
}

/// Returns the cache entry of type T for `desc`, creating it (replacing an
/// entry of another type) when absent.
template <typename T> T &getCache(mgsrt_ctx_t *ctx, const int64_t *desc) {
  auto &slot = ctx->caches[desc];
  if (auto *existing = dynamic_cast<T *>(slot.get()))
    return *existing;
  slot = std::make_unique<T>();
  return static_cast<T &>(*slot);
}

/// A float array kept with the context under `key` (an address no
/// descriptor has: each user's own static), grown to at least `count`
/// floats; valid until its next call with that key. Null when it cannot grow.
struct FloatScratch : KernelCache {
  std::vector<float> data;
};
inline float *floatScratch(mgsrt_ctx_t *ctx, const int64_t *key, size_t count) {
  FloatScratch &scratch = getCache<FloatScratch>(ctx, key);
  if (scratch.data.size() < count) {
    try {
      scratch.data.resize(count);
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
  }
  return scratch.data.data();
}

} // namespace mgs::rt

#endif // MGSRT_SUPPORT_COMMON_H
