//===- Dispatch.cpp - The C entry points: CPU kernels or a device's -------===//
//
// Every compute kernel of mgsrt.h is defined here once: a context attached
// to a device (mgsrt_ctx_set_device) runs the device library's kernel, any
// other the CPU one. The device library (libmgsrt_cuda.so) is loaded on
// first use, so programs that never ask for a GPU never load CUDA.
//
//===----------------------------------------------------------------------===//

#include "Kernels/CPU/RoundedOperands.h"
#include "Support/Common.h"
#include "Support/KernelList.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>

using namespace mgs::rt;

namespace {

#ifndef MGSRT_CUDA_LIBRARY_PATH
#define MGSRT_CUDA_LIBRARY_PATH ""
#endif

struct LoadedLibrary {
  const DeviceKernels *kernels = nullptr;
  std::string error;
};

/// Loads the CUDA library once per process.
const LoadedLibrary &cudaLibrary() {
  static LoadedLibrary lib;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string path = MGSRT_CUDA_LIBRARY_PATH;
    if (const char *env = std::getenv("MGSRT_CUDA_LIBRARY"); env && *env)
      path = env;
    if (path.empty()) {
      lib.error = "this mgs runtime was built without CUDA (no CUDA toolkit was found when it "
                  "was configured)";
      return;
    }
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *e = dlerror();
      lib.error = strCat("cannot load the CUDA runtime library ", path, ": ", e ? e : "?");
      return;
    }
    using Getter = const DeviceKernels *(*)();
    auto get = reinterpret_cast<Getter>(dlsym(handle, "mgsrt_device_kernels"));
    if (!get) {
      lib.error = strCat(path, " has no mgsrt_device_kernels: not an mgs runtime library");
      return;
    }
    const DeviceKernels *k = get();
    if (!k || k->version != kDeviceKernelsVersion) {
      lib.error = strCat(path, " is of another runtime version (", k ? k->version : -1,
                         ", expected ", kDeviceKernelsVersion, ")");
      return;
    }
    lib.kernels = k;
  });
  return lib;
}

} // namespace

Status mgs::rt::loadCudaKernels(const DeviceKernels *&kernels) {
  const LoadedLibrary &lib = cudaLibrary();
  kernels = lib.kernels;
  return kernels ? Status::success() : Status::error(MGSRT_ERROR_UNAVAILABLE, lib.error);
}

extern "C" {

mgsrt_status_t mgsrt_ctx_set_device(mgsrt_ctx_t *ctx, int device, int ordinal) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->failed())
    return ctx->status;
  if (device == MGSRT_DEVICE_CPU) {
    if (ctx->device != MGSRT_DEVICE_CPU)
      return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                       "ctx_set_device: a context attached to a GPU cannot go back to the CPU");
    return MGSRT_OK;
  }
  if (device != MGSRT_DEVICE_CUDA)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     strCat("ctx_set_device: unknown device ", device,
                            " (0 = cpu, 1 = cuda)"));
  if (ctx->device == MGSRT_DEVICE_CUDA)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     "ctx_set_device: the context is already attached to a GPU");
  if (ctx->comm)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                     "ctx_set_device: set the device before the communicator");
  const LoadedLibrary &lib = cudaLibrary();
  if (!lib.kernels)
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE, lib.error);
  if (mgsrt_status_t s = lib.kernels->attach(ctx, ordinal); s != MGSRT_OK)
    return ctx->fail(s, ctx->message.empty() ? "ctx_set_device: attach failed" : ctx->message);
  ctx->device = MGSRT_DEVICE_CUDA;
  ctx->deviceKernels = lib.kernels;
  return MGSRT_OK;
}

int mgsrt_ctx_device(const mgsrt_ctx_t *ctx) { return ctx ? ctx->device : MGSRT_DEVICE_CPU; }

int mgsrt_ctx_precision_native(const mgsrt_ctx_t *ctx, int precision) {
  switch (precision) {
  case MGSRT_PRECISION_F32:
    return 1;
  case MGSRT_PRECISION_BF16:
  case MGSRT_PRECISION_F16:
    // A GPU rounds the operands of both (Device.h's roundedOperands).
    if (mgsrt_ctx_device(ctx) == MGSRT_DEVICE_CUDA)
      return 0;
    return cpu::nativePrecision(precision == MGSRT_PRECISION_BF16 ? Precision::BF16
                                                                  : Precision::F16);
  default:
    return -1;
  }
}

namespace {
/// mgsrt_alloc (`host` false: the device's memory) and mgsrt_host_alloc
/// (page-locked host memory); on a CPU context both are aligned host memory.
mgsrt_status_t allocate(mgsrt_ctx_t *ctx, size_t bytes, void **out, bool host) {
  if (!ctx || !out)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  *out = nullptr;
  if (ctx->failed())
    return ctx->status;
  if (bytes == 0)
    return MGSRT_OK;
  if (ctx->deviceKernels)
    return (host ? ctx->deviceKernels->hostAlloc : ctx->deviceKernels->alloc)(ctx, bytes, out);
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p)
    return ctx->fail(MGSRT_ERROR_OUT_OF_MEMORY,
                     strCat(host ? "host_alloc" : "alloc", ": out of memory allocating ", bytes,
                            " bytes"));
  *out = p;
  return MGSRT_OK;
}

void release(mgsrt_ctx_t *ctx, void *ptr, bool host) {
  if (!ptr)
    return;
  if (ctx && ctx->deviceKernels)
    (host ? ctx->deviceKernels->hostFree : ctx->deviceKernels->free)(ctx, ptr);
  else
    std::free(ptr);
}
} // namespace

mgsrt_status_t mgsrt_alloc(mgsrt_ctx_t *ctx, size_t bytes, void **out) {
  return allocate(ctx, bytes, out, /*host=*/false);
}

void mgsrt_free(mgsrt_ctx_t *ctx, void *ptr) { release(ctx, ptr, /*host=*/false); }

mgsrt_status_t mgsrt_host_alloc(mgsrt_ctx_t *ctx, size_t bytes, void **out) {
  return allocate(ctx, bytes, out, /*host=*/true);
}

void mgsrt_host_free(mgsrt_ctx_t *ctx, void *ptr) { release(ctx, ptr, /*host=*/true); }

static mgsrt_status_t copyBytes(mgsrt_ctx_t *ctx, void *dst, const void *src, size_t bytes,
                                int kind) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->failed())
    return ctx->status;
  if (bytes == 0)
    return MGSRT_OK;
  if (!dst || !src)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT, "copy: null pointer");
  if (ctx->deviceKernels)
    return ctx->deviceKernels->memcpy(ctx, dst, src, bytes, kind);
  std::memcpy(dst, src, bytes);
  return MGSRT_OK;
}

mgsrt_status_t mgsrt_copy_to_device(mgsrt_ctx_t *ctx, void *dst, const void *src, size_t bytes) {
  return copyBytes(ctx, dst, src, bytes, 0);
}

mgsrt_status_t mgsrt_copy_to_host(mgsrt_ctx_t *ctx, void *dst, const void *src, size_t bytes) {
  return copyBytes(ctx, dst, src, bytes, 1);
}

mgsrt_status_t mgsrt_copy_to_device_async(mgsrt_ctx_t *ctx, void *dst, const void *src,
                                          size_t bytes) {
  return copyBytes(ctx, dst, src, bytes, 3);
}

mgsrt_status_t mgsrt_synchronize(mgsrt_ctx_t *ctx) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->failed())
    return ctx->status;
  if (ctx->deviceKernels)
    return ctx->deviceKernels->synchronize(ctx);
  return MGSRT_OK;
}

namespace {
mgsrt_status_t noGraphs(mgsrt_ctx_t *ctx, const char *what) {
  return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                   strCat(what, ": CUDA graphs are for a GPU context (this one runs on the CPU)"));
}
} // namespace

mgsrt_status_t mgsrt_graph_begin(mgsrt_ctx_t *ctx) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->failed())
    return ctx->status;
  return ctx->deviceKernels ? ctx->deviceKernels->graphBegin(ctx) : noGraphs(ctx, "graph_begin");
}

mgsrt_status_t mgsrt_graph_end(mgsrt_ctx_t *ctx, int keep) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  return ctx->deviceKernels ? ctx->deviceKernels->graphEnd(ctx, keep) : noGraphs(ctx, "graph_end");
}

mgsrt_status_t mgsrt_graph_launch(mgsrt_ctx_t *ctx, int *ran) {
  if (!ctx || !ran)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  *ran = 0;
  if (ctx->failed())
    return ctx->status;
  return ctx->deviceKernels ? ctx->deviceKernels->graphLaunch(ctx, ran)
                            : noGraphs(ctx, "graph_launch");
}

mgsrt_status_t mgsrt_mark(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *) {
  if (!ctx)
    return MGSRT_ERROR_INVALID_ARGUMENT;
  if (ctx->failed() || (!ctx->recordMarks && !ctx->tracing))
    return ctx->status;
  if (!desc)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT, "mark: descriptor is null");
  if (ctx->deviceKernels)
    if (mgsrt_status_t s = ctx->deviceKernels->synchronize(ctx); s != MGSRT_OK)
      return s;
  double now = secondsOf(std::chrono::steady_clock::now());
  if (ctx->tracing)
    ctx->traceEvent(kernelName(Kernel::mark), desc[mgs::contract::MarkDesc::Id], now, now, MGSRT_TRACE_MARK);
  try {
    if (ctx->recordMarks)
      ctx->marks.emplace_back(desc[mgs::contract::MarkDesc::Id], now);
  } catch (const std::bad_alloc &) {
    return ctx->fail(MGSRT_ERROR_OUT_OF_MEMORY, "mark: out of memory");
  }
  return MGSRT_OK;
}

void mgsrt_ctx_record_trace(mgsrt_ctx_t *ctx, int on) {
  if (!ctx)
    return;
  ctx->tracing = on != 0;
  ctx->trace.clear();
  ctx->traceStarts.clear();
}

int64_t mgsrt_ctx_trace(const mgsrt_ctx_t *ctx, const mgsrt_trace_event_t **events) {
  if (events)
    *events = ctx && !ctx->trace.empty() ? ctx->trace.data() : nullptr;
  return ctx ? static_cast<int64_t>(ctx->trace.size()) : 0;
}

void mgsrt_ctx_record_marks(mgsrt_ctx_t *ctx, int on) {
  if (!ctx)
    return;
  ctx->recordMarks = on != 0;
  ctx->marks.clear();
}

int64_t mgsrt_ctx_marks(const mgsrt_ctx_t *ctx, int64_t *ids, double *seconds,
                        int64_t capacity) {
  if (!ctx)
    return 0;
  const int64_t n = static_cast<int64_t>(ctx->marks.size());
  for (int64_t i = 0; i < n && i < capacity; ++i) {
    if (ids)
      ids[i] = ctx->marks[i].first;
    if (seconds)
      seconds[i] = ctx->marks[i].second;
  }
  return n;
}

void mgsrt_ctx_set_density(mgsrt_ctx_t *ctx, double density) {
  if (ctx)
    ctx->density = density > 0 && density <= 1 ? density : 0;
}

#define MGSRT_DEFINE_ENTRY(name)                                                                   \
  mgsrt_status_t mgsrt_##name(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {          \
    if (ctx && ctx->deviceKernels)                                                                 \
      return ctx->deviceKernels->name(ctx, desc, bufs);                                            \
    return cpu::name(ctx, desc, bufs);                                                             \
  }
// The exchange's top-k kernels run with the warm-up's k.
#define MGSRT_DEFINE_TOPK_ENTRY(name, D)                                                           \
  mgsrt_status_t mgsrt_##name(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {          \
    if (ctx && !ctx->failed())                                                                     \
      desc = ctx->effectiveDesc(desc, D::K, D::Count, D::Size);                                    \
    if (ctx && ctx->deviceKernels)                                                                 \
      return ctx->deviceKernels->name(ctx, desc, bufs);                                            \
    return cpu::name(ctx, desc, bufs);                                                             \
  }
MGSRT_NON_TOPK_KERNELS(MGSRT_DEFINE_ENTRY)
MGSRT_DEFINE_TOPK_ENTRY(topk_sparsify, mgs::contract::TopKDesc)
MGSRT_DEFINE_TOPK_ENTRY(scatter_add, mgs::contract::ScatterAddDesc)
#undef MGSRT_DEFINE_ENTRY
#undef MGSRT_DEFINE_TOPK_ENTRY

} // extern "C"
