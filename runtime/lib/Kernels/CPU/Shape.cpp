//===- Shape.cpp - Transpose, concat / split, constant pad ----------------===//

#include "Kernels/CPU/Transpose.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace mgs::rt;

namespace {

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

constexpr int64_t kTile = 32;

mgsrt_status_t transposeKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  TransposeParams tp;
  if (parseTranspose(ctx, kernelName(Kernel::transpose), desc, bufs, tp))
    return ctx->status;
  cpu::transpose(static_cast<const float *>(bufs[0]), static_cast<float *>(bufs[1]), tp);
  return MGSRT_OK;
}

} // namespace

void mgs::rt::cpu::transpose(const float *x, float *y, const TransposeParams &tp) {
  const int64_t total = tp.total;
  if (total == 0)
    return;
  const int64_t rank = tp.rank;
  const int64_t *ext = tp.ext, *is = tp.is;
  if (rank <= 1) {
    std::memcpy(y, x, sizeof(float) * total);
    return;
  }
  int64_t os[kMaxRank];
  for (int64_t i = rank - 1, s = 1; i >= 0; --i) {
    os[i] = s;
    s *= ext[i];
  }
  const int64_t last = rank - 1;
  if (is[last] == 1) {
    // The innermost dim stays innermost: contiguous runs.
    const int64_t len = ext[last], rows = total / len;
#pragma omp parallel for if (total >= kParallelGrain) schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t off = 0, q = row;
      for (int64_t d = last - 1; d >= 0; --d) {
        off += (q % ext[d]) * is[d];
        q /= ext[d];
      }
      std::memcpy(y + row * len, x + off, sizeof(float) * len);
    }
    return;
  }
  // Tile the output dim `j` that is innermost in the input against the
  // output's innermost dim, so both sides touch whole cache lines.
  int64_t j = 0;
  while (is[j] != 1)
    ++j;
  int64_t outerDims[kMaxRank], nOuter = 0, outerCount = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (d != j && d != last) {
      outerDims[nOuter++] = d;
      outerCount *= ext[d];
    }
  const int64_t tilesJ = (ext[j] + kTile - 1) / kTile, tilesL = (ext[last] + kTile - 1) / kTile;
  const int64_t tasks = outerCount * tilesJ * tilesL;
  const int64_t sL = is[last], oJ = os[j];
#pragma omp parallel for if (total >= kParallelGrain) schedule(static)
  for (int64_t task = 0; task < tasks; ++task) {
    int64_t q = task;
    const int64_t tl = q % tilesL;
    q /= tilesL;
    const int64_t tj = q % tilesJ;
    q /= tilesJ;
    int64_t xo = 0, yo = 0;
    for (int64_t k = nOuter - 1; k >= 0; --k) {
      const int64_t d = outerDims[k];
      const int64_t c = q % ext[d];
      q /= ext[d];
      xo += c * is[d];
      yo += c * os[d];
    }
    const int64_t j0 = tj * kTile, j1 = std::min(ext[j], j0 + kTile);
    const int64_t l0 = tl * kTile, l1 = std::min(ext[last], l0 + kTile);
    for (int64_t jj = j0; jj < j1; ++jj) {
      float *yr = y + yo + jj * oJ;
      const float *xr = x + xo + jj;
      for (int64_t ll = l0; ll < l1; ++ll)
        yr[ll] = xr[ll * sL];
    }
  }
}

namespace {

//===----------------------------------------------------------------------===//
// Concat / split
//===----------------------------------------------------------------------===//

/// Copies between the whole tensor and its parts; `toWhole` picks the
/// direction. Null parts are skipped.
void concatCopy(const int64_t *desc, float *whole, void *const *parts, bool toWhole) {
  using F = mgs::contract::ConcatDesc;
  const int64_t outer = desc[F::Outer], inner = desc[F::Inner], k = desc[F::Parts];
  const int64_t *extent = desc + F::extentAt(0);
  int64_t row = 0;
  for (int64_t i = 0; i < k; ++i)
    row += extent[i];
  row *= inner;
  const int64_t total = outer * row;
  const int64_t tasks = outer * k;
  // Offsets of each part in a row of the whole.
  std::vector<int64_t> offset(k);
  for (int64_t i = 0, off = 0; i < k; ++i) {
    offset[i] = off;
    off += extent[i] * inner;
  }
#pragma omp parallel for if (total >= 4 * kParallelGrain && tasks > 1) schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / k, i = t % k;
    const int64_t len = extent[i] * inner;
    if (!parts[i] || len == 0)
      continue;
    float *w = whole + o * row + offset[i];
    float *part = static_cast<float *>(parts[i]) + o * len;
    if (toWhole)
      std::memcpy(w, part, sizeof(float) * len);
    else
      std::memcpy(part, w, sizeof(float) * len);
  }
}

mgsrt_status_t concatKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ConcatParams p;
  if (parseConcat(ctx, kernelName(Kernel::concat), desc, bufs, false, p))
    return ctx->status;
  const int64_t k = p.k;
  concatCopy(desc, static_cast<float *>(bufs[k]), bufs, true);
  return MGSRT_OK;
}

mgsrt_status_t splitKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  ConcatParams p;
  if (parseConcat(ctx, kernelName(Kernel::split), desc, bufs, true, p))
    return ctx->status;
  concatCopy(desc, static_cast<float *>(bufs[0]), bufs + 1, false);
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// Maps row `row` of `from` (all dims but the last) to the matching row of
/// `to`, where to's coordinate = from's + shift; false when it falls outside.
inline bool mapRow(int64_t r, const int64_t *fromExt, const int64_t *toExt, const int64_t *shift,
                   int64_t row, int64_t &toRow) {
  int64_t coords[kMaxRank];
  for (int64_t d = r - 2; d >= 0; --d) {
    coords[d] = row % fromExt[d];
    row /= fromExt[d];
  }
  toRow = 0;
  for (int64_t d = 0; d < r - 1; ++d) {
    const int64_t c = coords[d] + shift[d];
    if (c < 0 || c >= toExt[d])
      return false;
    toRow = toRow * toExt[d] + c;
  }
  return true;
}

/// dst row (length dstLen) from src row (length srcLen), dst[j] = src[j + shift]
/// where in range, else `fill`.
inline void shiftRow(float *dst, int64_t dstLen, const float *src, int64_t srcLen, int64_t shift,
                     float fill) {
  const int64_t lo = std::clamp<int64_t>(-shift, 0, dstLen);
  const int64_t hi = std::clamp<int64_t>(srcLen - shift, lo, dstLen);
  std::fill(dst, dst + lo, fill);
  if (hi > lo)
    std::memcpy(dst + lo, src + lo + shift, sizeof(float) * (hi - lo));
  std::fill(dst + hi, dst + dstLen, fill);
}

mgsrt_status_t padFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  PadParams p;
  if (parsePad(ctx, kernelName(Kernel::pad_fwd), desc, bufs, false, p))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  if (p.r == 0) {
    y[0] = x[0];
    return MGSRT_OK;
  }
  const int64_t total = product(p.out, p.r);
  if (total == 0)
    return MGSRT_OK;
  const int64_t len = p.out[p.r - 1], inLen = p.in[p.r - 1], rows = total / len;
  int64_t shift[kMaxRank]; // input coordinate = output coordinate - pad_begin
  for (int64_t d = 0; d < p.r; ++d)
    shift[d] = -p.pads[d];
  const bool inEmpty = product(p.in, p.r) == 0;
#pragma omp parallel for if (total >= kParallelGrain) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    float *yr = y + row * len;
    int64_t inRow;
    if (inEmpty || !mapRow(p.r, p.out, p.in, shift, row, inRow))
      std::fill(yr, yr + len, p.value);
    else
      shiftRow(yr, len, x + inRow * inLen, inLen, shift[p.r - 1], p.value);
  }
  return MGSRT_OK;
}

mgsrt_status_t padBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  PadParams p;
  if (parsePad(ctx, kernelName(Kernel::pad_bwd), desc, bufs, true, p))
    return ctx->status;
  const float *dy = static_cast<const float *>(bufs[0]);
  float *dx = static_cast<float *>(bufs[1]);
  if (p.r == 0) {
    dx[0] = dy[0];
    return MGSRT_OK;
  }
  const int64_t total = product(p.in, p.r);
  if (total == 0)
    return MGSRT_OK;
  const int64_t len = p.in[p.r - 1], outLen = p.out[p.r - 1], rows = total / len;
  int64_t shift[kMaxRank]; // output coordinate = input coordinate + pad_begin
  for (int64_t d = 0; d < p.r; ++d)
    shift[d] = p.pads[d];
  const bool outEmpty = product(p.out, p.r) == 0;
#pragma omp parallel for if (total >= kParallelGrain) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    float *xr = dx + row * len;
    int64_t outRow;
    if (outEmpty || !mapRow(p.r, p.in, p.out, shift, row, outRow))
      std::fill(xr, xr + len, 0.0f);
    else
      shiftRow(xr, len, dy + outRow * outLen, outLen, shift[p.r - 1], 0.0f);
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cpu {

mgsrt_status_t transpose(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::transpose), desc, bufs, [&] { return transposeKernel(ctx, desc, bufs); });
}
mgsrt_status_t concat(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::concat), desc, bufs, [&] { return concatKernel(ctx, desc, bufs); });
}
mgsrt_status_t split(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::split), desc, bufs, [&] { return splitKernel(ctx, desc, bufs); });
}
mgsrt_status_t pad_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::pad_fwd), desc, bufs, [&] { return padFwd(ctx, desc, bufs); });
}
mgsrt_status_t pad_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runKernel(ctx, kernelName(Kernel::pad_bwd), desc, bufs, [&] { return padBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cpu
