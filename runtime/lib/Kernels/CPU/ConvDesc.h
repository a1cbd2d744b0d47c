//===- ConvDesc.h - The convolution descriptor, parsed and checked -*- C++ -*-===//
//
// mgsrt_conv_* descriptors (mgsrt.h): parsing and validation shared by the
// CPU (oneDNN) and CUDA (cuDNN) kernels, so both reject the same input with
// the same words. No backend headers here.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_CONVDESC_H
#define MGSRT_KERNELS_CPU_CONVDESC_H

#include "Common.h"

#include <vector>

namespace mgs::rt {

struct ConvParams {
  int64_t s, n, c, m, g;
  std::vector<int64_t> in, kernel, out, strides, padsBegin, padsEnd, dilations;
  int64_t descLen; // entries of desc the convolution reads

  /// Elements of w (M x C/group x kernel).
  int64_t weightCount() const {
    int64_t w = m * (c / g);
    for (int64_t k : kernel)
      w *= k;
    return w;
  }
};

/// Parses and checks `desc` into `p`; records an invalid-argument error and
/// returns its status when malformed.
inline mgsrt_status_t parseConv(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                ConvParams &p) {
  p.s = desc[0];
  if (p.s < 1 || p.s > 3)
    return invalidArg(ctx, kernel, "spatial rank ", p.s, " is not 1, 2 or 3");
  p.n = desc[1];
  p.c = desc[2];
  p.m = desc[3];
  p.g = desc[4];
  if (p.n < 0)
    return invalidArg(ctx, kernel, "batch size ", p.n, " is negative");
  if (p.c < 1 || p.m < 1 || p.g < 1)
    return invalidArg(ctx, kernel, "C=", p.c, " M=", p.m, " group=", p.g, " must be positive");
  if (p.c % p.g || p.m % p.g)
    return invalidArg(ctx, kernel, "group ", p.g, " does not divide C=", p.c, " and M=", p.m);
  const int64_t *v = desc + 5;
  auto take = [&](std::vector<int64_t> &d) {
    d.assign(v, v + p.s);
    v += p.s;
  };
  take(p.in);
  take(p.kernel);
  take(p.out);
  take(p.strides);
  take(p.padsBegin);
  take(p.padsEnd);
  take(p.dilations);
  p.descLen = 5 + 7 * p.s;
  for (int64_t i = 0; i < p.s; ++i) {
    if (p.in[i] < 1 || p.kernel[i] < 1 || p.strides[i] < 1 || p.dilations[i] < 1)
      return invalidArg(ctx, kernel, "spatial dim ", i, ": in=", p.in[i], " kernel=",
                        p.kernel[i], " stride=", p.strides[i], " dilation=", p.dilations[i],
                        " must be positive");
    if (p.padsBegin[i] < 0 || p.padsEnd[i] < 0)
      return invalidArg(ctx, kernel, "spatial dim ", i, ": negative pad");
    int64_t span = p.in[i] + p.padsBegin[i] + p.padsEnd[i] - ((p.kernel[i] - 1) * p.dilations[i] + 1);
    if (span < 0 || p.out[i] != span / p.strides[i] + 1)
      return invalidArg(ctx, kernel, "spatial dim ", i, ": out=", p.out[i],
                        " does not match in=", p.in[i], " kernel=", p.kernel[i], " stride=",
                        p.strides[i], " pads=", p.padsBegin[i], "/", p.padsEnd[i],
                        " dilation=", p.dilations[i]);
  }
  return MGSRT_OK;
}

/// The buffer checks of each direction (after parseConv).
inline bool checkConvFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs).require(0, "x").require(1, "w").require(3, "y").ok;
}
inline bool checkConvBwdDataBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs).require(0, "dy").require(1, "w").require(2, "dx").ok;
}
inline bool checkConvBwdWeightsBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs).require(0, "x").require(1, "dy").require(2, "dw").ok;
}

} // namespace mgs::rt

#endif // MGSRT_KERNELS_CPU_CONVDESC_H
