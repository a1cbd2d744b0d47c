//===- Conv.cpp - Convolutions on cuDNN -----------------------------------===//
//
// The legacy cuDNN convolution API (cudnnConvolutionForward /
// BackwardData / BackwardFilter / BackwardBias). Each call site (desc
// address) caches its tensor, filter and convolution descriptors and, per
// direction, the algorithm and its workspace size, chosen once by cuDNN's
// heuristics (cudnnGet*Algorithm_v7; or measured, see below) among those that
//   - run in plain FP32 (the descriptor's math type is CUDNN_FMA_MATH: no
//     TF32), so results compare with the CPU's oneDNN ones;
//   - are GEMM-like or direct: FFT and Winograd variants are skipped, their
//     transforms lose more precision than a 1e-5 comparison allows;
//   - are deterministic, when one qualifies (else the first that works).
// MGSRT_CUDNN_ALGOS=any lifts the last two rules: every FP32 algorithm cuDNN
// offers competes (Winograd, FFT, non-deterministic ones), as among those
// PyTorch's cudnn.benchmark chooses from; faster on small-channel 3x3
// convolutions, within PyTorch's accuracy rather than the CPU's 1e-5.
// With MGSRT_CUDNN_FIND=1 the candidates are ranked by cuDNN running each
// of them once on the call site's shapes (cudnnFind*Algorithm, what
// PyTorch's cudnn.benchmark does) instead of by its heuristics; the rules
// above still apply, so results stay within the same tolerance of the CPU's
// (not bit for bit: the fastest accurate algorithm may differ from run to
// run and from GPU to GPU). Should the measurement fail or offer no
// accurate algorithm, the heuristics decide.
// 1-D convolutions run as 2-D ones with a leading unit dim.
//
// Asymmetric padding: cuDNN only pads symmetrically. Per dim we give cuDNN
// P = min(pad_begin, pad_end) and materialize the rest: x is copied into a
// zeroed workspace buffer with (pad_begin - P) extra zeros before and
// (pad_end - P) after (cudnnTransformTensor into a strided view of it). The
// output extent is then the same, so y and dy are never touched; bwd_data
// computes the gradient of the padded copy and crops it into dx (the same
// strided view, read), bwd_weights correlates the padded copy with dy.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/ConvDesc.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

/// Per call site: cuDNN descriptors and the algorithms chosen.
struct ConvCudnn : KernelCache {
  std::vector<int64_t> descCopy;
  bool ready = false;
  int nbDims = 0; // 4 (1-D and 2-D) or 5 (3-D)
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  // Asymmetric pads: the padded copy of x, and x's place inside it.
  bool padded = false;
  cudnnTensorDescriptor_t xPad = nullptr, xView = nullptr;
  int64_t xPadCount = 0, xViewOffset = 0;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  bool haveFwd = false, haveBwdData = false, haveBwdFilter = false;
  cudnnConvolutionFwdAlgo_t fwdAlgo{};
  cudnnConvolutionBwdDataAlgo_t bwdDataAlgo{};
  cudnnConvolutionBwdFilterAlgo_t bwdFilterAlgo{};
  size_t fwdWs = 0, bwdDataWs = 0, bwdFilterWs = 0;

  /// The tensor the convolution itself reads as its input.
  cudnnTensorDescriptor_t convIn() const { return padded ? xPad : x; }

  void release() {
    for (cudnnTensorDescriptor_t *t : {&x, &y, &bias, &xPad, &xView})
      if (*t) {
        cudnnDestroyTensorDescriptor(*t);
        *t = nullptr;
      }
    if (w) {
      cudnnDestroyFilterDescriptor(w);
      w = nullptr;
    }
    if (conv) {
      cudnnDestroyConvolutionDescriptor(conv);
      conv = nullptr;
    }
    ready = padded = haveFwd = haveBwdData = haveBwdFilter = false;
  }
  ~ConvCudnn() override { release(); }
};

std::vector<int> denseStrides(const std::vector<int> &dims) {
  std::vector<int> s(dims.size());
  int64_t acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = static_cast<int>(acc);
    acc *= dims[i];
  }
  return s;
}

/// Whether every extent and element count fits cuDNN's int dimensions.
bool fitsInt(const std::vector<int64_t> &dims) {
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d > INT_MAX)
      return false;
    total *= d;
    if (total > INT_MAX)
      return false;
  }
  return true;
}

std::vector<int> toInt(const std::vector<int64_t> &v) { return std::vector<int>(v.begin(), v.end()); }

mgsrt_status_t setTensor(mgsrt_ctx_t *ctx, const char *kernel, cudnnTensorDescriptor_t &t,
                         const std::vector<int> &dims, const std::vector<int> &strides) {
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnCreateTensorDescriptor(&t));
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, static_cast<int>(dims.size()),
                                               dims.data(), strides.data()));
  return MGSRT_OK;
}

/// Builds the call site's descriptors (once per descriptor contents).
mgsrt_status_t prepare(mgsrt_ctx_t *ctx, const char *kernel, const ConvParams &p,
                       ConvCudnn &cc) {
  // Spatial attributes, 1-D promoted to 2-D with a leading unit dim.
  std::vector<int64_t> in = p.in, k = p.kernel, out = p.out, st = p.strides, pb = p.padsBegin,
                       pe = p.padsEnd, dil = p.dilations;
  if (p.s == 1) {
    in.insert(in.begin(), 1);
    k.insert(k.begin(), 1);
    out.insert(out.begin(), 1);
    st.insert(st.begin(), 1);
    pb.insert(pb.begin(), 0);
    pe.insert(pe.begin(), 0);
    dil.insert(dil.begin(), 1);
  }
  const size_t sd = in.size();
  std::vector<int64_t> sym(sd), inPad(sd);
  for (size_t i = 0; i < sd; ++i) {
    sym[i] = std::min(pb[i], pe[i]);
    inPad[i] = in[i] + (pb[i] - sym[i]) + (pe[i] - sym[i]);
    cc.padded |= pb[i] != pe[i];
  }
  auto full = [](int64_t a, int64_t b, const std::vector<int64_t> &sp) {
    std::vector<int64_t> d = {a, b};
    d.insert(d.end(), sp.begin(), sp.end());
    return d;
  };
  const std::vector<int64_t> xDims = full(p.n, p.c, in), yDims = full(p.n, p.m, out),
                             wDims = full(p.m, p.c / p.g, k), padDims = full(p.n, p.c, inPad);
  for (const auto *d : {&xDims, &yDims, &wDims, &padDims})
    if (!fitsInt(*d))
      return ctx->fail(MGSRT_ERROR_BACKEND,
                       strCat(kernel, ": a tensor has more than 2^31 - 1 elements (cuDNN's limit)"));
  for (int64_t v : st)
    if (v > INT_MAX)
      return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": stride too large for cuDNN"));
  for (size_t i = 0; i < sd; ++i)
    if (sym[i] > INT_MAX || dil[i] > INT_MAX)
      return ctx->fail(MGSRT_ERROR_BACKEND, strCat(kernel, ": pad or dilation too large for cuDNN"));

  cc.nbDims = static_cast<int>(xDims.size());
  const std::vector<int> xi = toInt(xDims), yi = toInt(yDims), wi = toInt(wDims);
  if (setTensor(ctx, kernel, cc.x, xi, denseStrides(xi)) ||
      setTensor(ctx, kernel, cc.y, yi, denseStrides(yi)))
    return ctx->status;
  std::vector<int> bi(cc.nbDims, 1);
  bi[1] = static_cast<int>(p.m);
  if (setTensor(ctx, kernel, cc.bias, bi, denseStrides(bi)))
    return ctx->status;
  if (cc.padded) {
    const std::vector<int> pi = toInt(padDims), ps = denseStrides(pi);
    if (setTensor(ctx, kernel, cc.xPad, pi, ps) || setTensor(ctx, kernel, cc.xView, xi, ps))
      return ctx->status;
    cc.xPadCount = 1;
    for (int64_t d : padDims)
      cc.xPadCount *= d;
    cc.xViewOffset = 0;
    for (size_t i = 0; i < sd; ++i)
      cc.xViewOffset += (pb[i] - sym[i]) * ps[2 + i];
  }
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnCreateFilterDescriptor(&cc.w));
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnSetFilterNdDescriptor(cc.w, CUDNN_DATA_FLOAT,
                                                            CUDNN_TENSOR_NCHW, cc.nbDims,
                                                            wi.data()));
  const std::vector<int> padA = toInt(sym), strideA = toInt(st), dilA = toInt(dil);
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnCreateConvolutionDescriptor(&cc.conv));
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnSetConvolutionNdDescriptor(cc.conv, static_cast<int>(sd), padA.data(),
                                                    strideA.data(), dilA.data(),
                                                    CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnSetConvolutionGroupCount(cc.conv, static_cast<int>(p.g)));
  // Plain FP32 FMA math, never TF32: results comparable with the CPU.
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnSetConvolutionMathType(cc.conv, CUDNN_FMA_MATH));

  // cuDNN must agree on the output shape (the descriptor was validated
  // against the ONNX formula; a mismatch would be a bug here).
  std::vector<int> got(cc.nbDims);
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnGetConvolutionNdForwardOutputDim(cc.conv, cc.convIn(), cc.w, cc.nbDims,
                                                          got.data()));
  if (got != yi)
    return ctx->fail(MGSRT_ERROR_BACKEND,
                     strCat(kernel, ": cuDNN computes another output shape than the descriptor's"));
  cc.ready = true;
  return MGSRT_OK;
}

/// The call site's descriptors, rebuilt when the descriptor's contents
/// changed (an address reused for another convolution).
mgsrt_status_t getConv(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                       const ConvParams &p, ConvCudnn *&out) {
  ConvCudnn &cc = getCache<ConvCudnn>(ctx, desc);
  if (cc.descCopy.size() != static_cast<size_t>(p.descLen) ||
      !std::equal(cc.descCopy.begin(), cc.descCopy.end(), desc)) {
    cc.release();
    cc.descCopy.assign(desc, desc + p.descLen);
  }
  if (!cc.ready) {
    cc.descCopy.clear(); // a failed prepare is retried, never half-used
    cc.release();
    if (prepare(ctx, kernel, p, cc))
      return ctx->status;
    cc.descCopy.assign(desc, desc + p.descLen);
  }
  out = &cc;
  return MGSRT_OK;
}

bool fp32Math(cudnnMathType_t m) {
  return m != CUDNN_TENSOR_OP_MATH && m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

bool accurate(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}
bool accurate(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}
bool accurate(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

/// MGSRT_CUDNN_ALGOS: "accurate" (the default) or "any" (see the top); read
/// once, with the value for the message of a bad one.
enum class AlgoPolicy { Accurate, Any, Invalid };
struct AlgoSetting {
  AlgoPolicy policy = AlgoPolicy::Accurate;
  std::string value;
};
const AlgoSetting &algoSetting() {
  static const AlgoSetting setting = [] {
    AlgoSetting s;
    const char *v = std::getenv("MGSRT_CUDNN_ALGOS");
    s.value = v ? v : "";
    if (!s.value.empty() && s.value != "accurate")
      s.policy = s.value == "any" ? AlgoPolicy::Any : AlgoPolicy::Invalid;
    return s;
  }();
  return setting;
}
AlgoPolicy algoPolicy() { return algoSetting().policy; }

/// Whether the policy lets algorithm `a` run.
template <typename Algo> bool allowed(Algo a) {
  return algoPolicy() == AlgoPolicy::Any || accurate(a);
}

/// Under "any", the most workspace an algorithm may ask for: a quarter of
/// the device memory free when it is chosen (FFT and Winograd variants can
/// ask for far more than the accurate ones, and the workspace, once grown,
/// is kept).
size_t anyWorkspaceCap() {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return freeBytes / 4;
}

/// A bad MGSRT_CUDNN_ALGOS, named before any algorithm is chosen.
mgsrt_status_t checkAlgoPolicy(mgsrt_ctx_t *ctx, const char *kernel) {
  if (algoPolicy() != AlgoPolicy::Invalid)
    return MGSRT_OK;
  return ctx->fail(MGSRT_ERROR_INVALID_ARGUMENT,
                   strCat(kernel, ": MGSRT_CUDNN_ALGOS='", algoSetting().value,
                          "' is neither 'accurate' nor 'any'"));
}

/// MGSRT_CUDNN_FIND=1: rank the algorithms by measuring them.
bool measureAlgos() {
  static const bool on = [] {
    const char *v = std::getenv("MGSRT_CUDNN_FIND");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

/// cuDNN's ranking of the algorithms for one direction of a call site:
/// `find(count, &returned, perf)` (measured) when measureAlgos(), falling
/// back to `get` (heuristics) if the measurement fails or offers no accurate
/// FP32 algorithm that ran.
template <typename Perf, typename Get, typename Find>
mgsrt_status_t rankAlgos(mgsrt_ctx_t *ctx, const char *kernel, int maxCount, Get get, Find find,
                         std::vector<Perf> &perf) {
  perf.assign(std::max(maxCount, 1), Perf{});
  int returned = 0;
  if (measureAlgos()) {
    cudnnStatus_t st = find(static_cast<int>(perf.size()), &returned, perf.data());
    // The search allocates with cudaMalloc; an algorithm whose workspace did
    // not fit leaves cudaErrorMemoryAllocation as the last error, which the
    // kernel guard would report as this convolution's failure.
    (void)cudaGetLastError();
    if (st == CUDNN_STATUS_SUCCESS && returned > 0) {
      perf.resize(returned);
      // The search also times CUDNN_DEFAULT_MATH, which may use TF32 tensor
      // cores; the convolution runs with the descriptor's FMA math, so those
      // timings rank when cuDNN labels any (else the FP32 ones, as before).
      auto usable = [](const Perf &r, bool fmaOnly) {
        return r.status == CUDNN_STATUS_SUCCESS && allowed(r.algo) &&
               (fmaOnly ? r.mathType == CUDNN_FMA_MATH : fp32Math(r.mathType));
      };
      for (bool fmaOnly : {true, false})
        if (std::any_of(perf.begin(), perf.end(),
                        [&](const Perf &r) { return usable(r, fmaOnly); })) {
          if (fmaOnly)
            perf.erase(std::remove_if(perf.begin(), perf.end(),
                                      [](const Perf &r) { return r.mathType != CUDNN_FMA_MATH; }),
                       perf.end());
          return MGSRT_OK;
        }
      perf.assign(std::max(maxCount, 1), Perf{});
    }
  }
  returned = 0;
  MGSRT_CUDNN_CHECK(ctx, kernel, get(static_cast<int>(perf.size()), &returned, perf.data()));
  perf.resize(returned);
  return MGSRT_OK;
}

/// Picks from cuDNN's ranked results: the first FP32 algorithm the policy
/// allows whose workspace size cuDNN reports (accurate: deterministic ones
/// first; any: in cuDNN's order, within anyWorkspaceCap()), else
/// `fallback`. `wsQuery(algo, &bytes)` asks cuDNN for the workspace.
template <typename Perf, typename Algo, typename Query>
mgsrt_status_t pickAlgo(mgsrt_ctx_t *ctx, const char *kernel, const std::vector<Perf> &perf,
                        Algo fallback, Query wsQuery, Algo &algo, size_t &ws) {
  const bool any = algoPolicy() == AlgoPolicy::Any;
  const size_t cap = any ? anyWorkspaceCap() : 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const Perf &r : perf) {
      if (r.status != CUDNN_STATUS_SUCCESS || !fp32Math(r.mathType) || !allowed(r.algo))
        continue;
      if (pass == 0 && r.determinism != CUDNN_DETERMINISTIC && !any)
        continue;
      size_t bytes = 0;
      if (wsQuery(r.algo, &bytes) == CUDNN_STATUS_SUCCESS && (!any || bytes <= cap)) {
        algo = r.algo;
        ws = bytes;
        return MGSRT_OK;
      }
    }
  size_t bytes = 0;
  cudnnStatus_t st = wsQuery(fallback, &bytes);
  if (st != CUDNN_STATUS_SUCCESS)
    return ctx->fail(MGSRT_ERROR_BACKEND,
                     strCat(kernel, ": cuDNN offers no FP32 algorithm for this convolution (",
                            cudnnGetErrorString(st), ")"));
  algo = fallback;
  ws = bytes;
  return MGSRT_OK;
}

mgsrt_status_t chooseFwd(mgsrt_ctx_t *ctx, const char *kernel, ConvCudnn &cc) {
  if (cc.haveFwd)
    return MGSRT_OK;
  cudnnHandle_t h = state(ctx).cudnn;
  int maxCount = 0;
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnGetConvolutionForwardAlgorithmMaxCount(h, &maxCount));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf;
  if (rankAlgos(
          ctx, kernel, maxCount,
          [&](int n, int *got, cudnnConvolutionFwdAlgoPerf_t *r) {
            return cudnnGetConvolutionForwardAlgorithm_v7(h, cc.convIn(), cc.w, cc.conv, cc.y, n,
                                                          got, r);
          },
          [&](int n, int *got, cudnnConvolutionFwdAlgoPerf_t *r) {
            return cudnnFindConvolutionForwardAlgorithm(h, cc.convIn(), cc.w, cc.conv, cc.y, n,
                                                        got, r);
          },
          perf))
    return ctx->status;
  auto query = [&](cudnnConvolutionFwdAlgo_t a, size_t *bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, cc.convIn(), cc.w, cc.conv, cc.y, a, bytes);
  };
  if (pickAlgo(ctx, kernel, perf, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, query, cc.fwdAlgo,
               cc.fwdWs))
    return ctx->status;
  cc.haveFwd = true;
  return MGSRT_OK;
}

mgsrt_status_t chooseBwdData(mgsrt_ctx_t *ctx, const char *kernel, ConvCudnn &cc) {
  if (cc.haveBwdData)
    return MGSRT_OK;
  cudnnHandle_t h = state(ctx).cudnn;
  int maxCount = 0;
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &maxCount));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf;
  if (rankAlgos(
          ctx, kernel, maxCount,
          [&](int n, int *got, cudnnConvolutionBwdDataAlgoPerf_t *r) {
            return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, cc.w, cc.y, cc.conv,
                                                               cc.convIn(), n, got, r);
          },
          [&](int n, int *got, cudnnConvolutionBwdDataAlgoPerf_t *r) {
            return cudnnFindConvolutionBackwardDataAlgorithm(h, cc.w, cc.y, cc.conv, cc.convIn(),
                                                             n, got, r);
          },
          perf))
    return ctx->status;
  auto query = [&](cudnnConvolutionBwdDataAlgo_t a, size_t *bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, cc.w, cc.y, cc.conv, cc.convIn(), a,
                                                        bytes);
  };
  if (pickAlgo(ctx, kernel, perf, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, query, cc.bwdDataAlgo,
               cc.bwdDataWs))
    return ctx->status;
  cc.haveBwdData = true;
  return MGSRT_OK;
}

mgsrt_status_t chooseBwdFilter(mgsrt_ctx_t *ctx, const char *kernel, ConvCudnn &cc) {
  if (cc.haveBwdFilter)
    return MGSRT_OK;
  cudnnHandle_t h = state(ctx).cudnn;
  int maxCount = 0;
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &maxCount));
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf;
  if (rankAlgos(
          ctx, kernel, maxCount,
          [&](int n, int *got, cudnnConvolutionBwdFilterAlgoPerf_t *r) {
            return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, cc.convIn(), cc.y, cc.conv,
                                                                 cc.w, n, got, r);
          },
          [&](int n, int *got, cudnnConvolutionBwdFilterAlgoPerf_t *r) {
            return cudnnFindConvolutionBackwardFilterAlgorithm(h, cc.convIn(), cc.y, cc.conv,
                                                               cc.w, n, got, r);
          },
          perf))
    return ctx->status;
  auto query = [&](cudnnConvolutionBwdFilterAlgo_t a, size_t *bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, cc.convIn(), cc.y, cc.conv, cc.w, a,
                                                          bytes);
  };
  if (pickAlgo(ctx, kernel, perf, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, query, cc.bwdFilterAlgo,
               cc.bwdFilterWs))
    return ctx->status;
  cc.haveBwdFilter = true;
  return MGSRT_OK;
}

constexpr size_t align256(size_t b) { return (b + 255) / 256 * 256; }

/// Workspace for the padded copy of x (if any) followed by `algoBytes` of
/// cuDNN scratch.
mgsrt_status_t convWorkspace(mgsrt_ctx_t *ctx, const char *kernel, const ConvCudnn &cc,
                             size_t algoBytes, float *&padBuf, void *&algoWs) {
  const size_t padBytes = cc.padded ? align256(sizeof(float) * cc.xPadCount) : 0;
  const size_t total = padBytes + algoBytes;
  padBuf = nullptr;
  algoWs = nullptr;
  if (total == 0)
    return MGSRT_OK;
  void *ws = nullptr;
  if (workspace(ctx, kernel, total, &ws))
    return ctx->status;
  padBuf = cc.padded ? static_cast<float *>(ws) : nullptr;
  algoWs = algoBytes ? static_cast<char *>(ws) + padBytes : nullptr;
  return MGSRT_OK;
}

/// The input cuDNN reads: x itself, or with asymmetric pads its padded copy
/// in padBuf (zeroed, then x written into its view).
mgsrt_status_t convInput(mgsrt_ctx_t *ctx, const char *kernel, const ConvCudnn &cc,
                         const void *x, float *padBuf, const void *&in) {
  in = x;
  if (!cc.padded)
    return MGSRT_OK;
  in = padBuf;
  const float one = 1.0f, zero = 0.0f;
  CudaState &st = state(ctx);
  MGSRT_CUDA_CHECK(ctx, kernel,
                   cudaMemsetAsync(padBuf, 0, sizeof(float) * cc.xPadCount, st.stream));
  MGSRT_CUDNN_CHECK(ctx, kernel, cudnnTransformTensor(st.cudnn, &one, cc.x, x, &zero, cc.xView,
                                                      padBuf + cc.xViewOffset));
  return MGSRT_OK;
}

/// bfloat16 or half (p.precision): every direction's two operands are bufs[0]
/// and bufs[1] (x and w, dy and w, x and dy), of c0 and c1 floats; `bufs` (of
/// `size` entries: 4, or bwd_data's 3) then points at `copy`, the same list
/// with those two rounded (roundedOperands).
mgsrt_status_t roundedConvOperands(mgsrt_ctx_t *ctx, const char *kernel, const ConvParams &p,
                                   void *const *&bufs, int size, int64_t c0, int64_t c1,
                                   void *(&copy)[4]) {
  if (p.precision == Precision::F32)
    return MGSRT_OK;
  const float *a = static_cast<const float *>(bufs[0]), *b = static_cast<const float *>(bufs[1]);
  if (roundedOperands(ctx, kernel, p.precision, {{a, c0}, {b, c1}}))
    return ctx->status;
  copy[0] = const_cast<float *>(a);
  copy[1] = const_cast<float *>(b);
  for (int i = 2; i < size; ++i)
    copy[i] = bufs[i];
  bufs = copy;
  return MGSRT_OK;
}

mgsrt_status_t convFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::conv_fwd);
  ConvParams p;
  if (parseConv(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkConvFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  void *copy[4];
  if (roundedConvOperands(ctx, kernel, p, bufs, 4, p.srcCount(), p.weightCount(), copy))
    return ctx->status;
  ConvCudnn *cc = nullptr;
  if (checkAlgoPolicy(ctx, kernel) || getConv(ctx, kernel, desc, p, cc) ||
      chooseFwd(ctx, kernel, *cc))
    return ctx->status;
  float *padBuf;
  void *algoWs;
  if (convWorkspace(ctx, kernel, *cc, cc->fwdWs, padBuf, algoWs))
    return ctx->status;
  const void *in = nullptr;
  if (convInput(ctx, kernel, *cc, bufs[0], padBuf, in))
    return ctx->status;
  const float one = 1.0f, zero = 0.0f;
  cudnnHandle_t h = state(ctx).cudnn;
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnConvolutionForward(h, &one, cc->convIn(), in, cc->w, bufs[1], cc->conv,
                                            cc->fwdAlgo, algoWs, cc->fwdWs, &zero, cc->y,
                                            bufs[3]));
  if (bufs[2])
    MGSRT_CUDNN_CHECK(ctx, kernel, cudnnAddTensor(h, &one, cc->bias, bufs[2], &one, cc->y, bufs[3]));
  return MGSRT_OK;
}

mgsrt_status_t convBwdData(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::conv_bwd_data);
  ConvParams p;
  if (parseConv(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkConvBwdDataBufs(ctx, kernel, bufs))
    return ctx->status;
  if (p.n == 0)
    return MGSRT_OK;
  void *copy[4];
  if (roundedConvOperands(ctx, kernel, p, bufs, 3, p.dstCount(), p.weightCount(), copy))
    return ctx->status;
  ConvCudnn *cc = nullptr;
  if (checkAlgoPolicy(ctx, kernel) || getConv(ctx, kernel, desc, p, cc) ||
      chooseBwdData(ctx, kernel, *cc))
    return ctx->status;
  float *padBuf;
  void *algoWs;
  if (convWorkspace(ctx, kernel, *cc, cc->bwdDataWs, padBuf, algoWs))
    return ctx->status;
  const float one = 1.0f, zero = 0.0f;
  cudnnHandle_t h = state(ctx).cudnn;
  // Asymmetric pads: the gradient of the padded copy, cropped into dx.
  void *out = cc->padded ? static_cast<void *>(padBuf) : bufs[2];
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnConvolutionBackwardData(h, &one, cc->w, bufs[1], cc->y, bufs[0],
                                                 cc->conv, cc->bwdDataAlgo, algoWs,
                                                 cc->bwdDataWs, &zero, cc->convIn(), out));
  if (cc->padded)
    MGSRT_CUDNN_CHECK(ctx, kernel, cudnnTransformTensor(h, &one, cc->xView,
                                                        padBuf + cc->xViewOffset, &zero, cc->x,
                                                        bufs[2]));
  return MGSRT_OK;
}

mgsrt_status_t convBwdWeights(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::conv_bwd_weights);
  ConvParams p;
  if (parseConv(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkConvBwdWeightsBufs(ctx, kernel, bufs))
    return ctx->status;
  cudaStream_t stream = state(ctx).stream;
  if (p.n == 0) {
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaMemsetAsync(bufs[2], 0, sizeof(float) * p.weightCount(), stream));
    if (bufs[3])
      MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(bufs[3], 0, sizeof(float) * p.m, stream));
    return MGSRT_OK;
  }
  void *copy[4];
  if (roundedConvOperands(ctx, kernel, p, bufs, 4, p.srcCount(), p.dstCount(), copy))
    return ctx->status;
  ConvCudnn *cc = nullptr;
  if (checkAlgoPolicy(ctx, kernel) || getConv(ctx, kernel, desc, p, cc) ||
      chooseBwdFilter(ctx, kernel, *cc))
    return ctx->status;
  float *padBuf;
  void *algoWs;
  if (convWorkspace(ctx, kernel, *cc, cc->bwdFilterWs, padBuf, algoWs))
    return ctx->status;
  const void *in = nullptr;
  if (convInput(ctx, kernel, *cc, bufs[0], padBuf, in))
    return ctx->status;
  const float one = 1.0f, zero = 0.0f;
  cudnnHandle_t h = state(ctx).cudnn;
  MGSRT_CUDNN_CHECK(ctx, kernel,
                    cudnnConvolutionBackwardFilter(h, &one, cc->convIn(), in, cc->y, bufs[1],
                                                   cc->conv, cc->bwdFilterAlgo, algoWs,
                                                   cc->bwdFilterWs, &zero, cc->w, bufs[2]));
  if (bufs[3])
    MGSRT_CUDNN_CHECK(ctx, kernel,
                      cudnnConvolutionBackwardBias(h, &one, cc->y, bufs[1], &zero, cc->bias,
                                                   bufs[3]));
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t conv_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::conv_fwd), desc, bufs, [&] { return convFwd(ctx, desc, bufs); });
}
mgsrt_status_t conv_bwd_data(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::conv_bwd_data), desc, bufs,
                       [&] { return convBwdData(ctx, desc, bufs); });
}
mgsrt_status_t conv_bwd_weights(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::conv_bwd_weights), desc, bufs,
                       [&] { return convBwdWeights(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
