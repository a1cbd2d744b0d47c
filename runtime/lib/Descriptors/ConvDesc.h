//===- ConvDesc.h - The convolution descriptor, parsed and checked -*- C++ -*-===//
//
// mgsrt_conv_* descriptors (mgsrt.h; fields named in mgsrt/contract.h): parsing and validation shared by the
// CPU (oneDNN) and CUDA (cuDNN) kernels, so both reject the same input with
// the same words. No backend headers here.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_CONVDESC_H
#define MGSRT_DESCRIPTORS_CONVDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

#include <vector>

namespace mgs::rt {

struct ConvParams {
  int64_t s, n, c, m, g;
  std::vector<int64_t> in, kernel, out, strides, padsBegin, padsEnd, dilations;
  int64_t descLen; // entries of desc the convolution reads
  Precision precision; // what the operands are rounded to (MGSRT_PRECISION_*)

  /// Elements of w (M x C/group x kernel).
  int64_t weightCount() const {
    int64_t w = m * (c / g);
    for (int64_t k : kernel)
      w *= k;
    return w;
  }
  /// Elements of x (N x C x in) and of y (N x M x out).
  int64_t srcCount() const { return n * c * product(in.data(), s); }
  int64_t dstCount() const { return n * m * product(out.data(), s); }
};

/// Parses and checks `desc` into `p`; records an invalid-argument error and
/// returns its status when malformed.
inline mgsrt_status_t parseConv(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                ConvParams &p) {
  using F = mgs::contract::ConvDesc;
  p.s = desc[F::SpatialRank];
  if (p.s < 1 || p.s > 3)
    return invalidArg(ctx, kernel, "spatial rank ", p.s, " is not 1, 2 or 3");
  p.n = desc[F::Batch];
  p.c = desc[F::Channels];
  p.m = desc[F::Filters];
  p.g = desc[F::Group];
  if (p.n < 0)
    return invalidArg(ctx, kernel, "batch size ", p.n, " is negative");
  if (p.c < 1 || p.m < 1 || p.g < 1)
    return invalidArg(ctx, kernel, "C=", p.c, " M=", p.m, " group=", p.g, " must be positive");
  if (p.c % p.g || p.m % p.g)
    return invalidArg(ctx, kernel, "group ", p.g, " does not divide C=", p.c, " and M=", p.m);
  auto take = [&](F::Array a, std::vector<int64_t> &d) {
    const int64_t *v = desc + F::at(a, p.s);
    d.assign(v, v + p.s);
  };
  take(F::In, p.in);
  take(F::Kernel, p.kernel);
  take(F::Out, p.out);
  take(F::Strides, p.strides);
  take(F::PadsBegin, p.padsBegin);
  take(F::PadsEnd, p.padsEnd);
  take(F::Dilations, p.dilations);
  p.descLen = F::size(p.s);
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
  return parsePrecision(ctx, kernel, desc[F::at(F::Precision, p.s)], p.precision);
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

#endif // MGSRT_DESCRIPTORS_CONVDESC_H
