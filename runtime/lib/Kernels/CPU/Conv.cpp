//===- Conv.cpp - Convolution forward / backward on oneDNN ----------------===//
//
// Each call site (desc address) gets a ConvCache holding, per direction, the
// oneDNN primitive, the memory objects for the caller's plain layouts
// (NCW / NCHW / NCDHW, [g]oi{w,hw,dhw}), and, where oneDNN picks a blocked
// layout for speed, an internal buffer in that layout with the reorders to
// and from it. The caller's pointers are attached with set_data_handle on
// every call. The engine and stream are created once per context.
//
//===----------------------------------------------------------------------===//

#include "Support/Common.h"
#include "Descriptors/ConvDesc.h"
#include "Kernels/CPU/DepthwiseConv.h"
#include "Kernels/CPU/Dnnl.h"
#include "Kernels/CPU/DnnlStep.h"
#include "Kernels/CPU/GroupedConvWeights.h"
#include "Kernels/CPU/RoundedOperands.h"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace mgs::rt;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

namespace {

tag plainDataTag(int64_t s) { return s == 1 ? tag::ncw : s == 2 ? tag::nchw : tag::ncdhw; }

tag plainWeightsTag(int64_t s, bool grouped) {
  if (grouped)
    return s == 1 ? tag::goiw : s == 2 ? tag::goihw : tag::goidhw;
  return s == 1 ? tag::oiw : s == 2 ? tag::oihw : tag::oidhw;
}

dnnl::memory::dims concatDims(dnnl::memory::dims head, const dnnl::memory::dims &tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

struct ConvShapes {
  dnnl::memory::dims src, weights, bias, dst, strides, dilations, padL, padR;
};

ConvShapes convShapes(const ConvParams &p) {
  ConvShapes s;
  s.src = concatDims({p.n, p.c}, p.in);
  s.dst = concatDims({p.n, p.m}, p.out);
  s.weights = p.g > 1 ? concatDims({p.g, p.m / p.g, p.c / p.g}, p.kernel)
                      : concatDims({p.m, p.c}, p.kernel);
  s.bias = {p.m};
  s.strides = p.strides;
  s.padL = p.padsBegin;
  s.padR = p.padsEnd;
  for (int64_t d : p.dilations)
    s.dilations.push_back(d - 1); // oneDNN counts the holes: ONNX dilation - 1
  return s;
}

/// Whether primitives may pick their own (blocked) layouts; MGSRT_CONV_LAYOUT=plain
/// forces the caller's plain layouts everywhere (no reorders).
bool useBlockedLayouts() {
  static const bool blocked = [] {
    const char *v = std::getenv("MGSRT_CONV_LAYOUT");
    return !(v && std::strcmp(v, "plain") == 0);
  }();
  return blocked;
}

//===----------------------------------------------------------------------===//
// Cached state
//===----------------------------------------------------------------------===//

using cpu::DnnlEnv;
using cpu::roundedOperands;

DnnlEnv &getEnv(mgsrt_ctx_t *ctx) { return cpu::dnnlEnv(ctx); }

using Step = cpu::DnnlStep;

struct ConvCache : KernelCache {
  std::vector<int64_t> descCopy;
  std::unique_ptr<Step> fwd[2];        // [has bias]
  std::unique_ptr<Step> bwdData;
  std::unique_ptr<Step> bwdWeights[2]; // [has bias]
  // A grouped convolution's weight gradient where oneDNN has no direct
  // kernel for it (GroupedConvWeights.h); then bwdWeights stays empty.
  std::unique_ptr<cpu::GroupedConvWeights> groupedWeights;
  // A depthwise convolution that runs in blocks of planes (DepthwiseConv.h)
  // in every direction; then nothing above is made.
  std::unique_ptr<cpu::DepthwiseConv> depthwise;
  bool depthwiseChosen = false; // whether `depthwise` was decided
};

/// The call site's cache, reset when the descriptor's contents changed (an
/// address reused for another convolution).
ConvCache &getConvCache(mgsrt_ctx_t *ctx, const int64_t *desc, const ConvParams &p) {
  ConvCache &cache = getCache<ConvCache>(ctx, desc);
  if (cache.descCopy.size() != static_cast<size_t>(p.descLen) ||
      !std::equal(cache.descCopy.begin(), cache.descCopy.end(), desc)) {
    cache.fwd[0].reset();
    cache.fwd[1].reset();
    cache.bwdData.reset();
    cache.bwdWeights[0].reset();
    cache.bwdWeights[1].reset();
    cache.groupedWeights.reset();
    cache.depthwise.reset();
    cache.depthwiseChosen = false;
    cache.descCopy.assign(desc, desc + p.descLen);
  }
  return cache;
}

/// The call site's depthwise kernel, or null when its convolution stays on
/// oneDNN.
const cpu::DepthwiseConv *depthwiseOf(ConvCache &cache, const ConvParams &p) {
  if (!cache.depthwiseChosen) {
    if (cpu::DepthwiseConv::takes(p))
      cache.depthwise = std::make_unique<cpu::DepthwiseConv>(p);
    cache.depthwiseChosen = true;
  }
  return cache.depthwise.get();
}

struct Mds {
  dnnl::memory::desc src, weights, bias, dst;       // the caller's layouts
  dnnl::memory::desc srcAny, weightsAny, dstAny;    // what primitives may choose
};

/// A direction's operands: which of src, weights and dst it reads (they are
/// bfloat16 inside the primitive when the convolution's precision is bf16
/// and oneDNN has bfloat16 kernels; what it writes stays float32).
enum class Reads { Fwd, BwdData, BwdWeights };

Mds makeMds(const ConvParams &p, const ConvShapes &s, Reads reads) {
  Mds m;
  m.src = {s.src, dt::f32, plainDataTag(p.s)};
  m.dst = {s.dst, dt::f32, plainDataTag(p.s)};
  m.weights = {s.weights, dt::f32, plainWeightsTag(p.s, p.g > 1)};
  m.bias = {s.bias, dt::f32, tag::x};
  const bool bf16 = cpu::nativeBf16(p.precision);
  auto type = [&](bool read) { return bf16 && read ? dt::bf16 : dt::f32; };
  const dt srcType = type(reads != Reads::BwdData), weightsType = type(reads != Reads::BwdWeights),
           dstType = type(reads != Reads::Fwd);
  const bool blocked = useBlockedLayouts();
  m.srcAny = {s.src, srcType, blocked ? tag::any : plainDataTag(p.s)};
  m.dstAny = {s.dst, dstType, blocked ? tag::any : plainDataTag(p.s)};
  m.weightsAny = {s.weights, weightsType, blocked ? tag::any : plainWeightsTag(p.s, p.g > 1)};
  return m;
}

dnnl::convolution_forward::primitive_desc fwdPd(const ConvShapes &s, const Mds &m, bool bias,
                                                const dnnl::engine &eng) {
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training,
                                    dnnl::algorithm::convolution_direct, m.srcAny, m.weightsAny,
                                    bias ? m.bias : dnnl::memory::desc(), m.dstAny, s.strides,
                                    s.dilations, s.padL, s.padR);
  return dnnl::convolution_forward::primitive_desc(d, eng);
}

std::unique_ptr<Step> makeFwd(const ConvParams &p, bool bias, const dnnl::engine &eng) {
  ConvShapes s = convShapes(p);
  Mds m = makeMds(p, s, Reads::Fwd);
  auto pd = fwdPd(s, m, bias, eng);
  auto step = std::make_unique<Step>();
  step->prim = dnnl::convolution_forward(pd);
  step->args.resize(bias ? 4 : 3);
  step->args[0].init(DNNL_ARG_SRC, false, m.src, pd.src_desc(), eng);
  step->args[1].init(DNNL_ARG_WEIGHTS, false, m.weights, pd.weights_desc(), eng);
  step->args[2].init(DNNL_ARG_DST, true, m.dst, pd.dst_desc(), eng);
  if (bias)
    step->args[3].init(DNNL_ARG_BIAS, false, m.bias, pd.bias_desc(), eng);
  step->finish();
  return step;
}

std::unique_ptr<Step> makeBwdData(const ConvParams &p, const dnnl::engine &eng) {
  ConvShapes s = convShapes(p);
  Mds m = makeMds(p, s, Reads::BwdData);
  auto hint = fwdPd(s, makeMds(p, s, Reads::Fwd), false, eng);
  dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, m.srcAny,
                                          m.weightsAny, m.dstAny, s.strides, s.dilations,
                                          s.padL, s.padR);
  dnnl::convolution_backward_data::primitive_desc pd(d, eng, hint);
  auto step = std::make_unique<Step>();
  step->prim = dnnl::convolution_backward_data(pd);
  step->args.resize(3);
  step->args[0].init(DNNL_ARG_DIFF_DST, false, m.dst, pd.diff_dst_desc(), eng);
  step->args[1].init(DNNL_ARG_WEIGHTS, false, m.weights, pd.weights_desc(), eng);
  step->args[2].init(DNNL_ARG_DIFF_SRC, true, m.src, pd.diff_src_desc(), eng);
  step->finish();
  return step;
}

std::unique_ptr<Step> makeBwdWeights(const ConvParams &p, bool bias, const dnnl::engine &eng) {
  ConvShapes s = convShapes(p);
  Mds m = makeMds(p, s, Reads::BwdWeights);
  auto hint = fwdPd(s, makeMds(p, s, Reads::Fwd), bias, eng);
  dnnl::convolution_backward_weights::desc d(
      dnnl::algorithm::convolution_direct, m.srcAny, m.weightsAny,
      bias ? m.bias : dnnl::memory::desc(), m.dstAny, s.strides, s.dilations, s.padL, s.padR);
  dnnl::convolution_backward_weights::primitive_desc pd(d, eng, hint);
  auto step = std::make_unique<Step>();
  step->prim = dnnl::convolution_backward_weights(pd);
  step->impl = pd.impl_info_str();
  step->args.resize(bias ? 4 : 3);
  step->args[0].init(DNNL_ARG_SRC, false, m.src, pd.src_desc(), eng);
  step->args[1].init(DNNL_ARG_DIFF_DST, false, m.dst, pd.diff_dst_desc(), eng);
  step->args[2].init(DNNL_ARG_DIFF_WEIGHTS, true, m.weights, pd.diff_weights_desc(), eng);
  if (bias)
    step->args[3].init(DNNL_ARG_DIFF_BIAS, true, m.bias, pd.diff_bias_desc(), eng);
  step->finish();
  return step;
}

/// Whether a grouped convolution's weight gradient runs on
/// GroupedConvWeights: always or never as MGSRT_CONV_GROUPED_WEIGHTS says,
/// otherwise where oneDNN's primitive (made by `make` into `step`) is its
/// im2col + GEMM or reference implementation (on float32 operands: with
/// oneDNN's bfloat16 kernels the primitive stays). `step` is left empty when
/// the answer is yes.
template <typename Make>
bool useGroupedWeights(const ConvParams &p, Make &&make, std::unique_ptr<Step> &step) {
  using cpu::GroupedWeightsChoice;
  const GroupedWeightsChoice choice = cpu::groupedWeightsChoice();
  if (p.g == 1 || cpu::nativeBf16(p.precision) || choice == GroupedWeightsChoice::OneDnn) {
    step = make();
    return false;
  }
  if (choice == GroupedWeightsChoice::Direct)
    return true;
  step = make();
  if (step->impl.find("gemm") == std::string::npos && step->impl.find("ref") == std::string::npos)
    return false;
  step.reset();
  return true;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// A precision this CPU does not compute in (half; bfloat16 without oneDNN's
/// kernels): points the direction's two operands (`first`, `second`, what
/// the primitive reads) at rounded copies; nothing otherwise.
mgsrt_status_t roundedReads(mgsrt_ctx_t *ctx, const char *kernel, const ConvParams &p,
                            void *&first, int64_t firstCount, void *&second, int64_t secondCount) {
  const float *a = static_cast<const float *>(first), *b = static_cast<const float *>(second);
  if (roundedOperands(ctx, kernel, p.precision, {{a, firstCount}, {b, secondCount}}))
    return ctx->status;
  first = const_cast<float *>(a);
  second = const_cast<float *>(b);
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
  const bool bias = bufs[2] != nullptr;
  DnnlEnv &env = getEnv(ctx);
  ConvCache &cache = getConvCache(ctx, desc, p);
  void *ptrs[4] = {bufs[0], bufs[1], bufs[3], bufs[2]};
  if (const cpu::DepthwiseConv *dw = depthwiseOf(cache, p)) {
    if (roundedReads(ctx, kernel, p, ptrs[0], p.srcCount(), ptrs[1], p.weightCount()))
      return ctx->status;
    dw->forward(static_cast<const float *>(ptrs[0]), static_cast<const float *>(ptrs[1]),
                static_cast<const float *>(ptrs[3]), static_cast<float *>(ptrs[2]));
    return MGSRT_OK;
  }
  auto &step = cache.fwd[bias];
  if (!step)
    step = makeFwd(p, bias, env.engine);
  if (roundedReads(ctx, kernel, p, ptrs[0], p.srcCount(), ptrs[1], p.weightCount()))
    return ctx->status;
  step->run(env.stream, ptrs);
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
  DnnlEnv &env = getEnv(ctx);
  ConvCache &cache = getConvCache(ctx, desc, p);
  const cpu::DepthwiseConv *dw = depthwiseOf(cache, p);
  if (!dw && !cache.bwdData)
    cache.bwdData = makeBwdData(p, env.engine);
  void *ptrs[3] = {bufs[0], bufs[1], bufs[2]};
  if (roundedReads(ctx, kernel, p, ptrs[0], p.dstCount(), ptrs[1], p.weightCount()))
    return ctx->status;
  if (dw)
    dw->backwardData(static_cast<const float *>(ptrs[0]), static_cast<const float *>(ptrs[1]),
                     static_cast<float *>(ptrs[2]));
  else
    cache.bwdData->run(env.stream, ptrs);
  return MGSRT_OK;
}

mgsrt_status_t convBwdWeights(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::conv_bwd_weights);
  ConvParams p;
  if (parseConv(ctx, kernel, desc, p))
    return ctx->status;
  if (!checkConvBwdWeightsBufs(ctx, kernel, bufs))
    return ctx->status;
  const bool bias = bufs[3] != nullptr;
  if (p.n == 0) {
    std::memset(bufs[2], 0, sizeof(float) * p.weightCount());
    if (bias)
      std::memset(bufs[3], 0, sizeof(float) * p.m);
    return MGSRT_OK;
  }
  DnnlEnv &env = getEnv(ctx);
  ConvCache &cache = getConvCache(ctx, desc, p);
  if (const cpu::DepthwiseConv *dw = depthwiseOf(cache, p)) {
    void *ptrs[2] = {bufs[0], bufs[1]};
    if (roundedReads(ctx, kernel, p, ptrs[0], p.srcCount(), ptrs[1], p.dstCount()))
      return ctx->status;
    dw->backwardWeights(static_cast<const float *>(ptrs[0]), static_cast<const float *>(ptrs[1]),
                        static_cast<float *>(bufs[2]), static_cast<float *>(bufs[3]));
    return MGSRT_OK;
  }
  auto &step = cache.bwdWeights[bias];
  if (!step && !cache.groupedWeights) {
    if (useGroupedWeights(p, [&] { return makeBwdWeights(p, bias, env.engine); }, step))
      cache.groupedWeights = std::make_unique<cpu::GroupedConvWeights>(p);
  }
  void *ptrs[4] = {bufs[0], bufs[1], bufs[2], bufs[3]};
  if (roundedReads(ctx, kernel, p, ptrs[0], p.srcCount(), ptrs[1], p.dstCount()))
    return ctx->status;
  if (!cache.groupedWeights) {
    step->run(env.stream, ptrs);
    return MGSRT_OK;
  }
  static const int64_t key = 0; // the channels-last copies' scratch, one for every call site
  const int64_t count = cache.groupedWeights->scratchCount();
  float *scratch = floatScratch(ctx, &key, static_cast<size_t>(count));
  if (!scratch)
    return ctx->fail(MGSRT_ERROR_OUT_OF_MEMORY,
                     strCat(kernel, ": no memory for the channels-last copies of x and dy (",
                            count * static_cast<int64_t>(sizeof(float)), " bytes)"));
  cache.groupedWeights->run(static_cast<const float *>(ptrs[0]),
                            static_cast<const float *>(ptrs[1]), static_cast<float *>(ptrs[2]),
                            static_cast<float *>(ptrs[3]), scratch);
  return MGSRT_OK;
}

/// runKernel plus oneDNN's own error type, whose status is more telling.
template <typename Body>
mgsrt_status_t runDnnlKernel(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                             void *const *bufs, Body &&body) {
  return runKernel(ctx, kernel, desc, bufs, [&] {
    using F = mgs::contract::ConvDesc;
    const int64_t s = desc[F::SpatialRank];
    const bool bf16 = s >= 1 && s <= 3 &&
                      desc[F::at(F::Precision, s)] == MGSRT_PRECISION_BF16 &&
                      cpu::hasBf16Kernels();
    return cpu::catchDnnl(ctx, kernel, body, bf16);
  });
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t conv_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runDnnlKernel(ctx, kernelName(Kernel::conv_fwd), desc, bufs, [&] { return convFwd(ctx, desc, bufs); });
}
mgsrt_status_t conv_bwd_data(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runDnnlKernel(ctx, kernelName(Kernel::conv_bwd_data), desc, bufs,
                       [&] { return convBwdData(ctx, desc, bufs); });
}
mgsrt_status_t conv_bwd_weights(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runDnnlKernel(ctx, kernelName(Kernel::conv_bwd_weights), desc, bufs,
                       [&] { return convBwdWeights(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
