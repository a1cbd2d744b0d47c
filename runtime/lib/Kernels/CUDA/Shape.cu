//===- Shape.cu - Transpose, concat / split, constant pad on a GPU --------===//
//
// The CPU kernels' semantics (CPU/Shape.cpp) and checks (Descriptors/ShapeDesc.h).
// Every kernel here moves floats without arithmetic: the results are the
// CPU's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/ShapeDesc.h"


using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

constexpr unsigned kThreads = 256;


//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

/// The collapsed transpose (TransposeParams), a __grid_constant__ parameter.
struct TransposeIndex {
  int rank;
  int64_t ext[kMaxRank], is[kMaxRank];
};

/// One thread per output element, reading its input element (used when the
/// innermost dim stays innermost, so both sides are contiguous runs).
__global__ void transposeGatherKernel(const __grid_constant__ TransposeIndex ix,
                                      const float *__restrict__ x, float *__restrict__ y,
                                      int64_t total) {
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    int64_t q = i, off = 0;
    for (int d = ix.rank - 1; d > 0; --d) {
      off += (q % ix.ext[d]) * ix.is[d];
      q /= ix.ext[d];
    }
    y[i] = x[off + q * ix.is[0]];
  }
}

constexpr int kTile = 32;
constexpr int kTileRows = 8; // blockDim = kTile x kTileRows

/// Output dim j (innermost in the input) against the output's innermost dim
/// `last`, tiled through shared memory so reads and writes both coalesce;
/// the other dims (`outer`) are decoded per tile.
struct TileIndex {
  int nOuter;
  int64_t oext[kMaxRank], ois[kMaxRank], oos[kMaxRank]; // outer dims: extent, in/out strides
  int64_t extJ, extL, strideL, strideJ; // strideL: input stride of last; strideJ: output stride of j
  int64_t tilesJ, tilesL, tasks;
};

__global__ void transposeTiledKernel(const __grid_constant__ TileIndex ix,
                                     const float *__restrict__ x, float *__restrict__ y) {
  __shared__ float tile[kTile][kTile + 1]; // +1: no bank conflicts on the transposed read
  for (int64_t task = blockIdx.x; task < ix.tasks; task += gridDim.x) {
    int64_t q = task;
    const int64_t tl = q % ix.tilesL;
    q /= ix.tilesL;
    const int64_t tj = q % ix.tilesJ;
    q /= ix.tilesJ;
    int64_t xo = 0, yo = 0;
    for (int k = ix.nOuter - 1; k >= 0; --k) {
      const int64_t c = q % ix.oext[k];
      q /= ix.oext[k];
      xo += c * ix.ois[k];
      yo += c * ix.oos[k];
    }
    const int64_t j0 = tj * kTile, l0 = tl * kTile;
    // Read: threadIdx.x runs along j (contiguous in x).
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t ll = l0 + r, jj = j0 + threadIdx.x;
      if (ll < ix.extL && jj < ix.extJ)
        tile[r][threadIdx.x] = x[xo + jj + ll * ix.strideL];
    }
    __syncthreads();
    // Write: threadIdx.x runs along last (contiguous in y).
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t jj = j0 + r, ll = l0 + threadIdx.x;
      if (ll < ix.extL && jj < ix.extJ)
        y[yo + jj * ix.strideJ + ll] = tile[threadIdx.x][r];
    }
    __syncthreads(); // the tile is refilled by the next task
  }
}

mgsrt_status_t transposeKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::transpose);
  TransposeParams tp;
  if (parseTranspose(ctx, kernel, desc, bufs, tp))
    return ctx->status;
  const float *x = static_cast<const float *>(bufs[0]);
  float *y = static_cast<float *>(bufs[1]);
  const int64_t total = tp.total, rank = tp.rank;
  cudaStream_t st = state(ctx).stream;
  if (total == 0)
    return MGSRT_OK;
  if (rank <= 1) {
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(y, x, sizeof(float) * total,
                                                  cudaMemcpyDeviceToDevice, st));
    return MGSRT_OK;
  }
  const int64_t last = rank - 1;
  if (tp.is[last] == 1) {
    TransposeIndex ix;
    ix.rank = static_cast<int>(rank);
    for (int64_t d = 0; d < rank; ++d) {
      ix.ext[d] = tp.ext[d];
      ix.is[d] = tp.is[d];
    }
    transposeGatherKernel<<<gridFor(total, kThreads), kThreads, 0, st>>>(ix, x, y, total);
    return MGSRT_OK;
  }
  int64_t os[kMaxRank];
  for (int64_t i = rank - 1, s = 1; i >= 0; --i) {
    os[i] = s;
    s *= tp.ext[i];
  }
  int64_t j = 0;
  while (tp.is[j] != 1)
    ++j;
  TileIndex ix;
  ix.nOuter = 0;
  int64_t outerCount = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (d != j && d != last) {
      ix.oext[ix.nOuter] = tp.ext[d];
      ix.ois[ix.nOuter] = tp.is[d];
      ix.oos[ix.nOuter] = os[d];
      ++ix.nOuter;
      outerCount *= tp.ext[d];
    }
  ix.extJ = tp.ext[j];
  ix.extL = tp.ext[last];
  ix.strideL = tp.is[last];
  ix.strideJ = os[j];
  ix.tilesJ = (ix.extJ + kTile - 1) / kTile;
  ix.tilesL = (ix.extL + kTile - 1) / kTile;
  ix.tasks = outerCount * ix.tilesJ * ix.tilesL;
  transposeTiledKernel<<<gridFor(ix.tasks, 1), dim3(kTile, kTileRows), 0, st>>>(ix, x, y);
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Concat / split
//===----------------------------------------------------------------------===//

/// rows x len floats from src (row pitch srcPitch) to dst (row pitch dstPitch).
__global__ void copyRowsKernel(float *__restrict__ dst, int64_t dstPitch,
                               const float *__restrict__ src, int64_t srcPitch, int64_t len,
                               int64_t rows) {
  const int64_t total = rows * len;
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    const int64_t r = i / len, c = i % len;
    dst[r * dstPitch + c] = src[r * srcPitch + c];
  }
}

/// Copies between the whole tensor and its parts; `toWhole` picks the
/// direction. Null parts are skipped.
mgsrt_status_t concatCopy(mgsrt_ctx_t *ctx, const char *kernel, const ConcatParams &p,
                          float *whole, void *const *parts, bool toWhole) {
  cudaStream_t st = state(ctx).stream;
  const int64_t row = p.sum * p.inner;
  for (int64_t i = 0, offset = 0; i < p.k; offset += p.extent[i] * p.inner, ++i) {
    const int64_t len = p.extent[i] * p.inner;
    if (!parts[i] || len == 0 || p.outer == 0)
      continue;
    float *w = whole + offset;
    float *part = static_cast<float *>(parts[i]);
    if (p.outer == 1 || len == row) {
      // One contiguous run on both sides.
      MGSRT_CUDA_CHECK(ctx, kernel,
                       cudaMemcpyAsync(toWhole ? w : part, toWhole ? part : w,
                                       sizeof(float) * len * p.outer, cudaMemcpyDeviceToDevice,
                                       st));
      continue;
    }
    const unsigned grid = gridFor(p.outer * len, kThreads);
    if (toWhole)
      copyRowsKernel<<<grid, kThreads, 0, st>>>(w, row, part, len, len, p.outer);
    else
      copyRowsKernel<<<grid, kThreads, 0, st>>>(part, len, w, row, len, p.outer);
  }
  return MGSRT_OK;
}

mgsrt_status_t concatKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::concat);
  ConcatParams p;
  if (parseConcat(ctx, kernel, desc, bufs, false, p))
    return ctx->status;
  return concatCopy(ctx, kernel, p, static_cast<float *>(bufs[p.k]), bufs, true);
}

mgsrt_status_t splitKernel(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::split);
  ConcatParams p;
  if (parseConcat(ctx, kernel, desc, bufs, true, p))
    return ctx->status;
  return concatCopy(ctx, kernel, p, static_cast<float *>(bufs[0]), bufs + 1, false);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// dst (dense over dext) from src (extents sext, row-major strides sstride):
/// dst at coordinate c is src at c + shift where that is inside src, else
/// `fill`. Forward: dst = y, src = x, shift = -pads_begin, fill = the pad
/// value. Backward: dst = dx, src = dy, shift = +pads_begin, fill = 0.
struct ShiftIndex {
  int rank;
  float fill;
  // Per dim: dst's dense stride and extent, src's extent and stride, the shift.
  int64_t dstride[kMaxRank], dext[kMaxRank], sext[kMaxRank], sstride[kMaxRank], shift[kMaxRank];
};

__global__ void shiftGatherKernel(const ShiftIndex ix, const float *src, float *dst,
                                  int64_t total) {
  for (int64_t i = firstIndex(); i < total; i += gridStride()) {
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d < ix.rank; ++d) {
      const int64_t c = (i / ix.dstride[d]) % ix.dext[d] + ix.shift[d];
      if (c < 0 || c >= ix.sext[d])
        inside = false;
      off += c * ix.sstride[d];
    }
    dst[i] = inside ? src[off] : ix.fill;
  }
}

/// The shared body of pad_fwd / pad_bwd.
mgsrt_status_t padKernel(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                         void *const *bufs, bool bwd) {
  PadParams p{};
  if (parsePad(ctx, kernel, desc, bufs, bwd, p))
    return ctx->status;
  const float *src = static_cast<const float *>(bufs[0]);
  float *dst = static_cast<float *>(bufs[1]);
  cudaStream_t st = state(ctx).stream;
  if (p.r == 0) {
    MGSRT_CUDA_CHECK(ctx, kernel,
                     cudaMemcpyAsync(dst, src, sizeof(float), cudaMemcpyDeviceToDevice, st));
    return MGSRT_OK;
  }
  const int64_t *dext = bwd ? p.in : p.out;
  const int64_t *sext = bwd ? p.out : p.in;
  const int64_t total = product(dext, p.r);
  if (total == 0)
    return MGSRT_OK;
  ShiftIndex ix;
  ix.rank = static_cast<int>(p.r);
  ix.fill = bwd ? 0.0f : p.value;
  for (int64_t d = p.r - 1, s = 1, t = 1; d >= 0; --d) {
    ix.dext[d] = dext[d];
    ix.dstride[d] = t;
    ix.sext[d] = sext[d];
    ix.sstride[d] = s;
    ix.shift[d] = bwd ? p.pads[d] : -p.pads[d];
    s *= sext[d];
    t *= dext[d];
  }
  shiftGatherKernel<<<gridFor(total, kThreads), kThreads, 0, st>>>(ix, src, dst, total);
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t transpose(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::transpose), desc, bufs,
                       [&] { return transposeKernel(ctx, desc, bufs); });
}
mgsrt_status_t concat(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::concat), desc, bufs, [&] { return concatKernel(ctx, desc, bufs); });
}
mgsrt_status_t split(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::split), desc, bufs, [&] { return splitKernel(ctx, desc, bufs); });
}
mgsrt_status_t pad_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::pad_fwd), desc, bufs,
                       [&] { return padKernel(ctx, kernelName(Kernel::pad_fwd), desc, bufs, false); });
}
mgsrt_status_t pad_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::pad_bwd), desc, bufs,
                       [&] { return padKernel(ctx, kernelName(Kernel::pad_bwd), desc, bufs, true); });
}

} // namespace mgs::rt::cuda
