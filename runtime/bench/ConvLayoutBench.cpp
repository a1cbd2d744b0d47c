//===- ConvLayoutBench.cpp - What activation layouts would save on oneDNN -===//
//
//   mgsrt_conv_layout_bench [--model resnet18|mobilenet_v2] [--batch N] [--image S]
//                           [--rounds R]
//
// Would a compiler pass that keeps activations in another layout between the
// convolutions pay on the CPU? Times the convolutions of torchvision's ResNet-18
// or MobileNetV2 (its depthwise ones grouped; on S x S images, batch N:
// bench/zoo_step.py's at 64 x 64 and 32),
// forward, backward-data and backward-weights, three ways:
//   mgs:     mgs's own kernels (mgsrt_conv_fwd, _bwd_data, _bwd_weights) on
//            NCHW buffers: oneDNN primitives free to choose their layout
//            (format `any`), with reorders into and out of it around each
//            call (runtime/lib/Kernels/CPU/Conv.cpp), and mgs's channels-last
//            weight gradient of grouped convolutions where oneDNN's is slow;
//   nhwc:    channels-last buffers and primitives (no activation reorder);
//   blocked: buffers already in the layout each primitive chose (no
//            activation reorder: the bound of a pass keeping the blocked
//            layouts from convolution to convolution).
// Weights stay OIHW with their reorder in all three (they are the optimizer's
// plain buffers). Each shape is weighted by how often the network has it; ms
// per training step's convolutions, medians over R rounds, the three ways
// interleaved in each round. OMP_NUM_THREADS threads.
//
//===----------------------------------------------------------------------===//

#include "mgsrt/contract.h"
#include "mgsrt/mgsrt.h"

#include "Kernels/CPU/DnnlStep.h"

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

enum Layout { Mgs, Nhwc, Blocked, NumLayouts };
const char *const kLayoutNames[NumLayouts] = {"mgs", "nhwc", "blocked"};

struct ConvShape {
  int c, h, m, k, stride, pad, count; ///< count: how many the network has
  int groups = 1;
};

/// A primitive with its arguments, reordered in and out where the primitive
/// wants another layout than the buffers' (the runtime's own, Conv.cpp's).
using Call = mgs::rt::cpu::DnnlStep;

/// One argument of a primitive: a buffer of its own (zeroed) in `user`'s
/// layout, and the primitive's layout `prim`.
mgs::rt::cpu::DnnlArg makeArg(int key, bool output, const dnnl::memory::desc &user,
                              const dnnl::memory::desc &prim, const dnnl::engine &eng) {
  mgs::rt::cpu::DnnlArg a;
  a.init(key, output, user, prim, eng, /*owned=*/true);
  return a;
}

Call makeCall(const dnnl::primitive &prim, std::vector<mgs::rt::cpu::DnnlArg> args) {
  Call c;
  c.prim = prim;
  c.args = std::move(args);
  c.finish();
  return c;
}

/// One convolution's training step through mgs's kernels, on NCHW buffers.
struct MgsCalls {
  std::vector<int64_t> desc;
  std::vector<float> x, w, y, dx, dw;
  bool first;

  MgsCalls(const ConvShape &c, int batch, bool first) : first(first) {
    using D = mgs::contract::ConvDesc;
    const int out = (c.h + 2 * c.pad - c.k) / c.stride + 1;
    desc.assign(D::size(2), 0);
    desc[D::SpatialRank] = 2;
    desc[D::Batch] = batch;
    desc[D::Channels] = c.c;
    desc[D::Filters] = c.m;
    desc[D::Group] = c.groups;
    for (int d = 0; d < 2; ++d) {
      desc[D::at(D::In, 2) + d] = c.h;
      desc[D::at(D::Kernel, 2) + d] = c.k;
      desc[D::at(D::Out, 2) + d] = out;
      desc[D::at(D::Strides, 2) + d] = c.stride;
      desc[D::at(D::PadsBegin, 2) + d] = c.pad;
      desc[D::at(D::PadsEnd, 2) + d] = c.pad;
      desc[D::at(D::Dilations, 2) + d] = 1;
    }
    desc[D::at(D::Precision, 2)] = MGSRT_PRECISION_F32;
    x.assign(static_cast<size_t>(batch) * c.c * c.h * c.h, 0.5f);
    dx = x;
    w.assign(static_cast<size_t>(c.m) * (c.c / c.groups) * c.k * c.k, 0.25f);
    dw = w;
    y.assign(static_cast<size_t>(batch) * c.m * out * out, 0.0f);
  }

  bool run(mgsrt_ctx_t *ctx) {
    void *fwd[4] = {x.data(), w.data(), nullptr, y.data()};
    void *data[3] = {y.data(), w.data(), dx.data()};
    void *weights[4] = {x.data(), y.data(), dw.data(), nullptr};
    return mgsrt_conv_fwd(ctx, desc.data(), fwd) == MGSRT_OK &&
           (first || mgsrt_conv_bwd_data(ctx, desc.data(), data) == MGSRT_OK) &&
           mgsrt_conv_bwd_weights(ctx, desc.data(), weights) == MGSRT_OK;
  }
};

/// The calls of one convolution's training step in `layout` (Nhwc or
/// Blocked); the first layer has no data gradient (the image's).
std::vector<Call> makeCalls(const ConvShape &c, int batch, Layout layout, bool first,
                            const dnnl::engine &eng) {
  const int out = (c.h + 2 * c.pad - c.k) / c.stride + 1;
  const int g = c.groups;
  dnnl::memory::dims src{batch, c.c, c.h, c.h},
      wei = g > 1 ? dnnl::memory::dims{g, c.m / g, c.c / g, c.k, c.k}
                  : dnnl::memory::dims{c.m, c.c, c.k, c.k},
      dst{batch, c.m, out, out}, strides{c.stride, c.stride}, pads{c.pad, c.pad}, dil{0, 0};
  const tag user = layout == Nhwc ? tag::nhwc : tag::nchw; // Blocked: replaced below
  const tag chosen = layout == Nhwc ? tag::nhwc : tag::any;
  dnnl::memory::desc srcUser(src, dt::f32, user), dstUser(dst, dt::f32, user),
      weiUser(wei, dt::f32, g > 1 ? tag::goihw : tag::oihw);
  dnnl::memory::desc srcAny(src, dt::f32, chosen), dstAny(dst, dt::f32, chosen),
      weiAny(wei, dt::f32, tag::any);
  // Blocked: the caller's buffers are in the primitive's own layout.
  auto caller = [&](const dnnl::memory::desc &plain, const dnnl::memory::desc &prim) {
    return layout == Blocked ? prim : plain;
  };
  using namespace dnnl;
  convolution_forward::primitive_desc fwd(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, srcAny,
                                weiAny, dstAny, strides, dil, pads, pads),
      eng);
  std::vector<Call> calls;
  calls.push_back(makeCall(
      convolution_forward(fwd),
      {makeArg(DNNL_ARG_SRC, false, caller(srcUser, fwd.src_desc()), fwd.src_desc(), eng),
       makeArg(DNNL_ARG_WEIGHTS, false, weiUser, fwd.weights_desc(), eng),
       makeArg(DNNL_ARG_DST, true, caller(dstUser, fwd.dst_desc()), fwd.dst_desc(), eng)}));
  if (!first) {
    convolution_backward_data::primitive_desc bwd(
        convolution_backward_data::desc(algorithm::convolution_direct, srcAny, weiAny, dstAny,
                                        strides, dil, pads, pads),
        eng, fwd);
    calls.push_back(
        makeCall(convolution_backward_data(bwd),
                 {makeArg(DNNL_ARG_DIFF_DST, false, caller(dstUser, bwd.diff_dst_desc()),
                          bwd.diff_dst_desc(), eng),
                  makeArg(DNNL_ARG_WEIGHTS, false, weiUser, bwd.weights_desc(), eng),
                  makeArg(DNNL_ARG_DIFF_SRC, true, caller(srcUser, bwd.diff_src_desc()),
                          bwd.diff_src_desc(), eng)}));
  }
  convolution_backward_weights::primitive_desc bww(
      convolution_backward_weights::desc(algorithm::convolution_direct, srcAny, weiAny, dstAny,
                                         strides, dil, pads, pads),
      eng, fwd);
  calls.push_back(
      makeCall(convolution_backward_weights(bww),
               {makeArg(DNNL_ARG_SRC, false, caller(srcUser, bww.src_desc()), bww.src_desc(), eng),
                makeArg(DNNL_ARG_DIFF_DST, false, caller(dstUser, bww.diff_dst_desc()),
                        bww.diff_dst_desc(), eng),
                makeArg(DNNL_ARG_DIFF_WEIGHTS, true, weiUser, bww.diff_weights_desc(), eng)}));
  return calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// torchvision's ResNet-18: the stem, then four stages of two basic blocks
/// (the first of stages 2-4 strided, with a 1x1 strided shortcut).
std::vector<ConvShape> resnet18(int image) {
  const int s = image / 4; // after the stem's stride 2 and the max pool's
  return {
      {3, image, 64, 7, 2, 3, 1},    {64, s, 64, 3, 1, 1, 4},       {64, s, 128, 3, 2, 1, 1},
      {128, s / 2, 128, 3, 1, 1, 3}, {64, s, 128, 1, 2, 0, 1},      {128, s / 2, 256, 3, 2, 1, 1},
      {256, s / 4, 256, 3, 1, 1, 3}, {128, s / 2, 256, 1, 2, 0, 1}, {256, s / 4, 512, 3, 2, 1, 1},
      {512, s / 8, 512, 3, 1, 1, 3}, {256, s / 4, 512, 1, 2, 0, 1}};
}

/// torchvision's MobileNetV2 (width 1): the stem, inverted residual blocks
/// (1x1 expansion by t but where t = 1, 3x3 depthwise, 1x1 projection) as
/// its (t, channels, blocks, first stride) table, the last 1x1 to 1280.
std::vector<ConvShape> mobilenetV2(int image) {
  std::vector<ConvShape> v{{3, image, 32, 3, 2, 1, 1}};
  const int table[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                           {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int c = 32, h = image / 2;
  for (const auto &row : table)
    for (int b = 0; b < row[2]; ++b) {
      const int t = row[0], out = row[1], stride = b == 0 ? row[3] : 1, hidden = c * t;
      if (t != 1)
        v.push_back({c, h, hidden, 1, 1, 0, 1});
      v.push_back({hidden, h, hidden, 3, stride, 1, 1, hidden});
      h = (h + 2 - 3) / stride + 1;
      v.push_back({hidden, h, out, 1, 1, 0, 1});
      c = out;
    }
  v.push_back({c, h, 1280, 1, 1, 0, 1});
  return v;
}

} // namespace

int main(int argc, char **argv) {
  int batch = 32, image = 64, rounds = 5;
  std::string model = "resnet18";
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char *name) {
      if (i + 1 >= argc || std::atoi(argv[i + 1]) < 1) {
        std::fprintf(stderr, "mgsrt_conv_layout_bench: %s needs a positive integer\n", name);
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--model") && i + 1 < argc)
      model = argv[++i];
    else if (!std::strcmp(argv[i], "--batch"))
      batch = value("--batch");
    else if (!std::strcmp(argv[i], "--image"))
      image = value("--image");
    else if (!std::strcmp(argv[i], "--rounds"))
      rounds = value("--rounds");
    else {
      std::fprintf(stderr, "usage: mgsrt_conv_layout_bench [--model resnet18|mobilenet_v2] "
                           "[--batch N] [--image S] [--rounds R]\n");
      return 2;
    }
  }
  if (model != "resnet18" && model != "mobilenet_v2") {
    std::fprintf(stderr,
                 "mgsrt_conv_layout_bench: --model must be resnet18 or mobilenet_v2, "
                 "got '%s'\n",
                 model.c_str());
    return 2;
  }
  const std::vector<ConvShape> shapes = model == "resnet18" ? resnet18(image) : mobilenetV2(image);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  std::vector<MgsCalls> mgsCalls;
  std::vector<std::vector<Call>> calls[NumLayouts];
  for (size_t i = 0; i < shapes.size(); ++i) {
    mgsCalls.emplace_back(shapes[i], batch, i == 0);
    for (int l = Nhwc; l < NumLayouts; ++l)
      calls[l].push_back(makeCalls(shapes[i], batch, static_cast<Layout>(l), i == 0, eng));
  }
  auto runStep = [&](int l, size_t i) {
    if (l == Mgs) {
      if (!mgsCalls[i].run(ctx)) {
        std::fprintf(stderr, "mgsrt_conv_layout_bench: %s\n", mgsrt_ctx_message(ctx));
        std::exit(1);
      }
      return;
    }
    for (Call &c : calls[l][i])
      c.run(strm);
  };
  // Per layout, shape and round: the weighted ms of the shape's calls.
  std::vector<std::vector<double>> ms[NumLayouts];
  for (auto &m : ms)
    m.assign(shapes.size(), {});
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < shapes.size(); ++i)
      for (int l = 0; l < NumLayouts; ++l) {
        runStep(l, i); // warm: primitive caches, pages
        const int reps = 5;
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < reps; ++k)
          runStep(l, i);
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count() /
                   reps;
        ms[l][i].push_back(t * shapes[i].count);
      }
  std::printf("%s's convolutions, batch %d, %dx%d images, forward + backward-data + "
              "backward-weights, ms per step (medians of %d rounds), oneDNN %d.%d.%d\n",
              model.c_str(), batch, image, image, rounds, dnnl_version()->major,
              dnnl_version()->minor, dnnl_version()->patch);
  std::printf("%-32s %9s %9s %9s\n", "conv (C->M, map, k, stride) x n", kLayoutNames[0],
              kLayoutNames[1], kLayoutNames[2]);
  double total[NumLayouts] = {};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const ConvShape &c = shapes[i];
    char name[64];
    std::snprintf(name, sizeof name, "%d->%d%s, %dx%d, %d, %d x%d", c.c, c.m,
                  c.groups > 1 ? " dw" : "", c.h, c.h, c.k, c.stride, c.count);
    std::printf("%-32s", name);
    for (int l = 0; l < NumLayouts; ++l) {
      const double m = median(ms[l][i]);
      total[l] += m;
      std::printf(" %9.2f", m);
    }
    std::printf("\n");
  }
  std::printf("%-32s %9.2f %9.2f %9.2f\n", "total", total[0], total[1], total[2]);
  std::printf("nhwc / mgs %.3f, blocked / mgs %.3f\n", total[Nhwc] / total[Mgs],
              total[Blocked] / total[Mgs]);
  mgsrt_ctx_destroy(ctx);
  return 0;
}
