//===- Graph.cu - The training step as a CUDA graph ------------------------===//
//
// mgsrt_graph_begin / _end / _launch on a GPU context: the step's kernels,
// queued by one call of the compiled step while the compute stream is
// captured, become a graph that each later step replays with one launch
// (small batches are otherwise bound by the launches' latency).
//
// What a replay cannot repeat is refused while capturing (refuseInCapture:
// a wait for the stream, scratch memory that grows, the sparse collectives'
// host work, profiling), and the caller then runs the step without a graph.
// What changes from step to step is read by the replayed kernels from device
// memory: the updates' learning rate, momentum, weight decay and AdamW bias
// correction (UpdateScalars, queued before each launch), dropout's stream
// states (queued before each launch), the cross-entropy's factors and the
// clipping factor (computed on the device). A graph captured at another loss
// scale or top-k density, or before scratch memory moved, is stale:
// graphLaunch says so and the caller captures again. The updates' finiteness
// bits and the checks of the step's data come back as an eager step's do,
// with the next wait for the stream.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/DropoutDesc.h"

using namespace mgs::rt;

namespace mgs::rt::cuda {

void StepGraph::reset() {
  if (exec)
    cudaGraphExecDestroy(exec);
  exec = nullptr;
  updates.clear();
  verdicts.clear();
  dropoutMasks.clear();
}

StepGraph::~StepGraph() {
  reset();
  if (verdictsHost)
    cudaFreeHost(verdictsHost);
  if (words)
    cudaFree(words);
  if (rngStarts)
    cudaFree(rngStarts);
}

mgsrt_status_t verdictWord(mgsrt_ctx_t *ctx, const char *kernel, unsigned long long *scratch,
                           unsigned long long *&word) {
  StepGraph &g = state(ctx).graph;
  if (!g.capturing) {
    word = scratch;
    return MGSRT_OK;
  }
  if (g.wordsUsed + 2 > StepGraph::kWords)
    return refuseInCapture(ctx, kernel, "is one check more than a graph's 1024");
  word = g.words + g.wordsUsed;
  g.wordsUsed += 2;
  return MGSRT_OK;
}

namespace {
/// The dropout calls' stream states of one launch (by value: the launch
/// copies them).
struct RngStarts {
  uint64_t at[StepGraph::kDropouts];
};
__global__ void setRngStarts(uint64_t *__restrict__ out, RngStarts v, unsigned count) {
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x)
    out[i] = v.at[i];
}

/// word[1] = the bits of the element of `values` at the bad position word[0]
/// (nothing when there is none).
__global__ void copyBadValue(const unsigned char *values, unsigned bytes,
                             unsigned long long *word) {
  if (word[0] == ~0ull)
    return;
  unsigned long long bits = 0;
  const unsigned char *v = values + word[0] * bytes;
  for (unsigned b = 0; b < bytes; ++b)
    bits |= static_cast<unsigned long long>(v[b]) << (8 * b);
  word[1] = bits;
}
} // namespace

mgsrt_status_t checkVerdict(mgsrt_ctx_t *ctx, const char *kernel, unsigned long long *bad,
                            const void *values, size_t valueBytes, StepGraph::Report report) {
  CudaState &st = state(ctx);
  if (st.graph.capturing) {
    // The value now, while `values` holds it (a replay reads the words after
    // the whole step).
    copyBadValue<<<1, 1, 0, st.stream>>>(static_cast<const unsigned char *>(values),
                                         static_cast<unsigned>(valueBytes), bad);
    MGSRT_CUDA_CHECK(ctx, kernel, cudaGetLastError());
    st.graph.captured.push_back(std::move(report)); // its words: verdictWord's, in order
    return MGSRT_OK;
  }
  unsigned long long at = 0;
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemcpyAsync(&at, bad, sizeof at, cudaMemcpyDeviceToHost, st.stream));
  if (mgsrt_status_t s = synchronizeStream(ctx, kernel))
    return s;
  if (at == ~0ull)
    return MGSRT_OK;
  unsigned long long bits = 0; // little-endian, as copyBadValue packs it
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemcpy(&bits, static_cast<const unsigned char *>(values) + at * valueBytes,
                              valueBytes, cudaMemcpyDeviceToHost));
  return report(ctx, at, bits);
}

mgsrt_status_t checkGraphVerdicts(mgsrt_ctx_t *ctx, const char *) {
  StepGraph &g = state(ctx).graph;
  if (g.pending.empty())
    return MGSRT_OK;
  // The replays' checks were read back before the wait that called this.
  std::vector<StepGraph::Report> pending;
  pending.swap(g.pending);
  for (size_t i = 0; i < pending.size(); ++i)
    if (g.verdictsHost[2 * i] != ~0ull)
      return pending[i](ctx, g.verdictsHost[2 * i], g.verdictsHost[2 * i + 1]);
  return MGSRT_OK;
}

mgsrt_status_t graphBegin(mgsrt_ctx_t *ctx) {
  const char *kernel = "graph_begin";
  if (ctx->failed())
    return ctx->status;
  CudaState &st = state(ctx);
  if (st.graph.capturing)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT, strCat(kernel, ": already capturing"));
  if (ctx->stagedComm)
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                     strCat(kernel, ": the collectives are staged through host memory (MPI), "
                                    "which a CUDA graph of the step cannot hold"));
  if (ctx->profile || ctx->tracing)
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                     strCat(kernel, ": profiling or a trace waits for every kernel, which a "
                                    "CUDA graph of the step cannot hold"));
  MGSRT_CUDA_CHECK(ctx, kernel, cudaSetDevice(st.ordinal));
  // The updates' flags and the checks of an earlier step come back first:
  // the graph's updates number their flags from 0.
  if (!st.nonfinite.params.empty() || !st.graph.pending.empty())
    if (mgsrt_status_t s = synchronizeStream(ctx, kernel))
      return s;
  st.graph.reset(); // a capture replaces the graph kept, whatever its outcome
  st.graph.captured.clear();
  if (!st.graph.words) {
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaMalloc(&st.graph.words, StepGraph::kWords * sizeof(*st.graph.words)));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMallocHost(&st.graph.verdictsHost,
                                                 StepGraph::kWords * sizeof(*st.graph.words)));
  }
  if (!st.graph.rngStarts)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMalloc(&st.graph.rngStarts,
                                             StepGraph::kDropouts * sizeof(*st.graph.rngStarts)));
  st.graph.wordsUsed = 0;
  st.graph.capturedMasks.clear();
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaStreamBeginCapture(st.stream, cudaStreamCaptureModeThreadLocal));
  st.graph.capturing = true;
  st.graph.capturedGeneration = st.graph.generation;
  st.graph.capturedLossScale = ctx->lossScale;
  st.graph.capturedDensity = ctx->density;
  return MGSRT_OK;
}

mgsrt_status_t graphEnd(mgsrt_ctx_t *ctx, int keep) {
  const char *kernel = "graph_end";
  CudaState &st = state(ctx);
  StepGraph &g = st.graph;
  if (!g.capturing)
    return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT, strCat(kernel, ": not capturing"));
  g.capturing = false;
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(st.stream, &graph);
  // The updates queued their flags' bits while capturing: they are the
  // graph's (nothing ran, so no bit is set).
  std::vector<const void *> updates;
  updates.swap(st.nonfinite.params);
  st.nonfinite.copyQueued = false;
  std::vector<StepGraph::Report> captured;
  captured.swap(g.captured);
  std::vector<int64_t> masks;
  masks.swap(g.capturedMasks);
  auto drop = [&] {
    if (graph)
      cudaGraphDestroy(graph);
    cudaGetLastError(); // an invalidated capture's error is not the next kernel's
  };
  if (ctx->failed()) { // something refused, or failed, while capturing
    drop();
    return ctx->status;
  }
  if (ended != cudaSuccess) {
    drop();
    return cudaFailure(ctx, kernel, "cudaStreamEndCapture", ended);
  }
  if (g.generation != g.capturedGeneration) {
    drop();
    return ctx->fail(MGSRT_ERROR_UNAVAILABLE,
                     strCat(kernel, ": scratch memory moved while capturing"));
  }
  if (!keep) {
    drop();
    return MGSRT_OK;
  }
  cudaGraphExec_t exec = nullptr;
  cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  drop();
  if (made != cudaSuccess)
    return cudaFailure(ctx, kernel, "cudaGraphInstantiate", made);
  g.reset();
  g.exec = exec;
  g.updates = std::move(updates);
  g.verdicts = std::move(captured);
  g.dropoutMasks = std::move(masks);
  return MGSRT_OK;
}

mgsrt_status_t graphLaunch(mgsrt_ctx_t *ctx, int *ran) {
  const char *kernel = "graph_launch";
  *ran = 0;
  if (ctx->failed())
    return ctx->status;
  CudaState &st = state(ctx);
  StepGraph &g = st.graph;
  if (!g.exec)
    return MGSRT_OK;
  if (g.generation != g.capturedGeneration || ctx->lossScale != g.capturedLossScale ||
      ctx->density != g.capturedDensity) {
    g.reset(); // stale: the caller captures again
    return MGSRT_OK;
  }
  MGSRT_CUDA_CHECK(ctx, kernel, cudaSetDevice(st.ordinal));
  if (!st.nonfinite.params.empty() || !g.pending.empty())
    if (mgsrt_status_t s = synchronizeStream(ctx, kernel))
      return s;
  if (mgsrt_status_t s = uploadUpdateScalars(ctx, kernel, /*force=*/true))
    return s;
  // Each dropout call's stream state, the context's moved on as the calls
  // would move it.
  if (!g.dropoutMasks.empty()) {
    RngStarts starts{};
    uint64_t rng = ctx->rngState;
    for (size_t i = 0; i < g.dropoutMasks.size(); ++i) {
      starts.at[i] = rng;
      rng = dropoutAdvance(rng, g.dropoutMasks[i]);
    }
    setRngStarts<<<1, 256, 0, st.stream>>>(g.rngStarts, starts,
                                           static_cast<unsigned>(g.dropoutMasks.size()));
    MGSRT_CUDA_CHECK(ctx, kernel, cudaGetLastError());
    ctx->rngState = rng;
  }
  MGSRT_CUDA_CHECK(ctx, kernel, cudaGraphLaunch(g.exec, st.stream));
  // The checks' words, all at once (check i's are words 2 i and 2 i + 1).
  if (!g.verdicts.empty())
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaMemcpyAsync(g.verdictsHost, g.words,
                                     2 * g.verdicts.size() * sizeof(*g.verdictsHost),
                                     cudaMemcpyDeviceToHost, st.stream));
  // The replay may have rewritten the scalars (a clipping factor): the next
  // update run kernel by kernel queues its own.
  st.scalarsUploaded = false;
  // Read back with the next wait, as an eager step's.
  st.nonfinite.params = g.updates;
  g.pending = g.verdicts;
  *ran = 1;
  return MGSRT_OK;
}

} // namespace mgs::rt::cuda
