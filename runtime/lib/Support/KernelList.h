//===- KernelList.h - Every compute kernel of the C ABI (internal) -*- C++ -*-===//
//
// The kernel lists of mgsrt/contract.h (communication aside), expanded
// into the CPU implementations' declarations (mgs::rt::cpu, lib/Kernels/CPU),
// the device implementations' table (DeviceKernels, lib/Kernels/CUDA) and the
// C entry points that choose between them by the context's device
// (Dispatch.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_SUPPORT_KERNELLIST_H
#define MGSRT_SUPPORT_KERNELLIST_H

#include "mgsrt/contract.h" // MGSRT_COMPUTE_KERNELS, MGSRT_COMM_KERNELS
#include "mgsrt/mgsrt.h"
#include "mgsrt/status.h"

#include <cstddef>
#include <cstdint>
#include <memory>

using mgsrt_kernel_fn = mgsrt_status_t (*)(mgsrt_ctx_t *, const int64_t *, void *const *);

namespace mgs::rt {

class CommBackend;
struct CommConfig;

namespace cpu {
#define MGSRT_DECLARE_KERNEL(name) mgsrt_status_t name(mgsrt_ctx_t *, const int64_t *, void *const *);
MGSRT_COMPUTE_KERNELS(MGSRT_DECLARE_KERNEL)
#undef MGSRT_DECLARE_KERNEL
} // namespace cpu

/// What a device library (libmgsrt_cuda.so) provides: every kernel, its
/// collectives, and memory. Loaded by mgsrt_ctx_set_device.
struct DeviceKernels {
  /// The ABI version below; a library of another version is refused.
  int version;
  /// Makes `ctx` run on device `ordinal` (creates streams and library
  /// handles in ctx->deviceState). MGSRT_ERROR_UNAVAILABLE when no device
  /// is present (the message says why); other failures are backend errors.
  mgsrt_status_t (*attach)(mgsrt_ctx_t *ctx, int ordinal);
  mgsrt_status_t (*alloc)(mgsrt_ctx_t *ctx, size_t bytes, void **out);
  void (*free)(mgsrt_ctx_t *ctx, void *ptr);
  /// mgsrt_host_alloc, mgsrt_host_free: page-locked host memory.
  mgsrt_status_t (*hostAlloc)(mgsrt_ctx_t *ctx, size_t bytes, void **out);
  void (*hostFree)(mgsrt_ctx_t *ctx, void *ptr);
  /// kind: 0 host to device, 1 device to host, 2 device to device, 3 host to
  /// device without waiting (mgsrt_copy_to_device_async).
  mgsrt_status_t (*memcpy)(mgsrt_ctx_t *ctx, void *dst, const void *src, size_t bytes, int kind);
  /// Waits for every kernel queued on the context; reports asynchronous errors.
  mgsrt_status_t (*synchronize)(mgsrt_ctx_t *ctx);
  /// mgsrt_graph_begin, mgsrt_graph_end, mgsrt_graph_launch.
  mgsrt_status_t (*graphBegin)(mgsrt_ctx_t *ctx);
  mgsrt_status_t (*graphEnd)(mgsrt_ctx_t *ctx, int keep);
  mgsrt_status_t (*graphLaunch)(mgsrt_ctx_t *ctx, int *ran);
#define MGSRT_TABLE_ENTRY(name) mgsrt_kernel_fn name;
  MGSRT_COMPUTE_KERNELS(MGSRT_TABLE_ENTRY)
  MGSRT_COMM_KERNELS(MGSRT_TABLE_ENTRY)
#undef MGSRT_TABLE_ENTRY
  /// The "nccl" communication backend (lib/Comm/NCCL), which
  /// BackendRegistry.cpp creates through this table.
  Status (*createNcclBackend)(const CommConfig &config, std::unique_ptr<CommBackend> &out);
};

constexpr int kDeviceKernelsVersion = 21; // 6: clip_grad_norm; 7: gtopk_start,
                                          // sparse_allreduce_start; 8: layer_norm_fwd/bwd; 9: CUDA
                                          // layer_norm, lstm, gru; 10: gelu_fwd/bwd; 11: cumsum,
                                          // to_index; 12: topk_positions; 13: elementwise_loss,
                                          // softmax_cross_entropy's ignore_index and smoothing;
                                          // 14: class weights (softmax_cross_entropy's fifth
                                          // buffer), elementwise_loss's last axis and pos_weight;
                                          // 15: both losses' sum flag (reduction "sum");
                                          // 16: the step's CUDA graph (graphBegin ...);
                                          // 17: hostAlloc, hostFree, memcpy kind 3;
                                          // 18: lstm/gru initial states (their last buffers);
                                          // 19: softmax_cross_entropy's per-sample flag;
                                          // 20: its log-probabilities flag (NLL);
                                          // 21: from_index

/// The CUDA library's table in `kernels`, loaded on first use (Dispatch.cpp);
/// MGSRT_ERROR_UNAVAILABLE, saying why, where it cannot be loaded.
Status loadCudaKernels(const DeviceKernels *&kernels);

} // namespace mgs::rt

/// The symbol a device library exports.
extern "C" const mgs::rt::DeviceKernels *mgsrt_device_kernels(void);

#endif // MGSRT_SUPPORT_KERNELLIST_H
