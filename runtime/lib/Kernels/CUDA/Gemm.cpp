//===- Gemm.cpp - Gemm and batched MatMul on cuBLAS -----------------------===//
//
// Row-major products through column-major cuBLAS: a row-major m x n result
// C = op(A) op(B) is the column-major n x m result C^T = op(B)^T op(A)^T, so
// every call passes B before A with m and n swapped. The handle's math mode is
// CUBLAS_PEDANTIC_MATH (Device.cpp): plain FP32, no TF32.
//
// Broadcasts and reductions use cuBLAS too, against a per-context vector of
// ones: a broadcast C is a rank-1 product (ones x row, column x ones), and
// dC's sums over broadcast dims are matrix-vector products with ones.
//
// MatMul's batches: out batch o reads lhs batch li[o] and rhs batch ri[o]
// (Descriptors/GemmDesc.h's batchMaps). Maximal runs of o where li and ri step by a
// constant go to one strided-batched call each (one call when nothing
// broadcasts, or a stride of 0 for a broadcast operand). A gradient whose
// operand is broadcast sums over the batches that share it: those gemms
// accumulate (beta = 1) one after another in batch order, as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Descriptors/GemmDesc.h"

#include <vector>

using namespace mgs::rt;
using namespace mgs::rt::cuda;

namespace {

cublasOperation_t op(bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

/// Zeroes (beta == 0) or scales the rows of a row-major m x n matrix with
/// leading dimension ldc: what C = alpha op(A) op(B) + beta C is with k = 0.
mgsrt_status_t scaleRows(mgsrt_ctx_t *ctx, const char *kernel, int64_t m, int64_t n, float beta,
                         float *c, int64_t ldc) {
  CudaState &st = state(ctx);
  if (beta == 1.0f)
    return MGSRT_OK;
  if (beta == 0.0f) {
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemset2DAsync(c, sizeof(float) * ldc, 0, sizeof(float) * n,
                                                    m, st.stream));
    return MGSRT_OK;
  }
  for (int64_t i = 0; i < m; ++i)
    MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSscal_64(st.cublas, n, &beta, c + i * ldc, 1));
  return MGSRT_OK;
}

} // namespace

/// Row-major C = alpha op(A) op(B) + beta C, C m x n (as CPU/Gemm.cpp's sgemm).
mgsrt_status_t mgs::rt::cuda::sgemm(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb,
                                    int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                                    int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                                    int64_t ldc) {
  if (m == 0 || n == 0)
    return MGSRT_OK;
  if (k == 0)
    return scaleRows(ctx, kernel, m, n, beta, c, ldc);
  MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSgemm_64(state(ctx).cublas, op(tb), op(ta), n, m, k,
                                                 &alpha, b, ldb, a, lda, &beta, c, ldc));
  return MGSRT_OK;
}

namespace {

/// `count` row-major products C_i = alpha op(A_i) op(B_i) + beta C_i with
/// the given element strides between batches (C's must not overlap).
mgsrt_status_t sgemmStrided(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t m,
                            int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                            int64_t strideA, const float *b, int64_t ldb, int64_t strideB,
                            float beta, float *c, int64_t ldc, int64_t strideC, int64_t count) {
  if (count == 1)
    return sgemm(ctx, kernel, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (m == 0 || n == 0 || count == 0)
    return MGSRT_OK;
  if (k == 0) {
    for (int64_t i = 0; i < count; ++i)
      if (scaleRows(ctx, kernel, m, n, beta, c + i * strideC, ldc))
        return ctx->status;
    return MGSRT_OK;
  }
  MGSRT_CUBLAS_CHECK(ctx, kernel,
                     cublasSgemmStridedBatched_64(state(ctx).cublas, op(tb), op(ta), n, m, k,
                                                  &alpha, b, ldb, strideB, a, lda, strideA, &beta,
                                                  c, ldc, strideC, count));
  return MGSRT_OK;
}

/// A device vector of ones, per context, grown on demand.
const int64_t kOnesKey = 0; // its cache key (no descriptor has this address)

mgsrt_status_t ones(mgsrt_ctx_t *ctx, const char *kernel, int64_t n, const float *&out) {
  float *ptr = nullptr;
  bool grown = false;
  const int64_t want = n < 4096 ? 4096 : n; // (never below 4096: grown only past that)
  if (deviceArray(ctx, kernel, &kOnesKey, want, ptr, grown))
    return ctx->status;
  if (grown) {
    std::vector<float> host(want, 1.0f);
    CudaState &st = state(ctx);
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(ptr, host.data(), sizeof(float) * want,
                                                  cudaMemcpyHostToDevice, st.stream));
    // `host` is freed on return: wait for the copy.
    MGSRT_CUDA_CHECK(ctx, kernel, cudaStreamSynchronize(st.stream));
  }
  out = ptr;
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

/// y (m x n) = beta * C broadcast (C is c0 x c1; the products with ones are
/// exact, so each element is beta * c rounded once, as on the CPU).
mgsrt_status_t broadcastC(mgsrt_ctx_t *ctx, const char *kernel, const GemmDesc &g,
                          const float *c, float *y) {
  CudaState &st = state(ctx);
  const int64_t m = g.m, n = g.n;
  if (g.c0 == m && g.c1 == n) {
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(y, c, sizeof(float) * m * n,
                                                  cudaMemcpyDeviceToDevice, st.stream));
    if (g.beta != 1.0f)
      MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSscal_64(st.cublas, m * n, &g.beta, y, 1));
    return MGSRT_OK;
  }
  const float *one = nullptr;
  if (ones(ctx, kernel, m > n ? m : n, one))
    return ctx->status;
  if (g.c0 == 1 && g.c1 == n) // ones (m x 1) times the row (1 x n)
    return sgemm(ctx, kernel, false, false, m, n, 1, g.beta, one, 1, c, n, 0.0f, y, n);
  if (g.c0 == m && g.c1 == 1) // the column (m x 1) times ones (1 x n)
    return sgemm(ctx, kernel, false, false, m, n, 1, g.beta, c, 1, one, n, 0.0f, y, n);
  // 1 x 1: the scalar times ones (1 x n) into a row, then ones (m x 1) times the row.
  void *ws = nullptr;
  if (workspace(ctx, kernel, sizeof(float) * n, &ws))
    return ctx->status;
  float *row = static_cast<float *>(ws);
  if (sgemm(ctx, kernel, false, false, 1, n, 1, 1.0f, c, 1, one, n, 0.0f, row, n))
    return ctx->status;
  return sgemm(ctx, kernel, false, false, m, n, 1, g.beta, one, 1, row, n, 0.0f, y, n);
}

mgsrt_status_t gemmFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gemm_fwd);
  GemmDesc g;
  if (parseGemm(ctx, kernel, desc, g))
    return ctx->status;
  if (!checkGemmFwdBufs(ctx, kernel, bufs, g))
    return ctx->status;
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *c = static_cast<const float *>(bufs[2]);
  float *y = static_cast<float *>(bufs[3]);
  if (g.m == 0 || g.n == 0)
    return MGSRT_OK;
  if (roundedOperands(ctx, kernel, g.precision, {{a, g.m * g.k}, {b, g.k * g.n}}))
    return ctx->status;
  float beta = 0.0f;
  if (g.hasC) {
    // Y = beta * broadcast(C), then accumulate the product into it.
    if (broadcastC(ctx, kernel, g, c, y))
      return ctx->status;
    beta = 1.0f;
  }
  return sgemm(ctx, kernel, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.ta ? g.m : g.k, b,
               g.tb ? g.k : g.n, beta, y, g.n);
}

/// dC = beta * dY summed over C's broadcast dims.
mgsrt_status_t gemmDc(mgsrt_ctx_t *ctx, const char *kernel, const GemmDesc &g, const float *dy,
                      float *dc) {
  CudaState &st = state(ctx);
  const int64_t m = g.m, n = g.n, c0 = g.c0, c1 = g.c1;
  const float zero = 0.0f;
  if (c0 == m && c1 == n) {
    if (m * n == 0)
      return MGSRT_OK;
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemcpyAsync(dc, dy, sizeof(float) * m * n,
                                                  cudaMemcpyDeviceToDevice, st.stream));
    if (g.beta != 1.0f)
      MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSscal_64(st.cublas, m * n, &g.beta, dc, 1));
    return MGSRT_OK;
  }
  const int64_t dcCount = c0 * c1;
  if (m * n == 0) { // sums over nothing
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(dc, 0, sizeof(float) * dcCount, st.stream));
    return MGSRT_OK;
  }
  const float *one = nullptr;
  if (ones(ctx, kernel, m > n ? m : n, one))
    return ctx->status;
  // Row-major dY (m x n) is the column-major n x m matrix with ld n.
  if (c0 == 1 && c1 == n) { // column sums: dc (n) = beta * dY^T ones
    MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSgemv_64(st.cublas, CUBLAS_OP_N, n, m, &g.beta, dy, n,
                                                   one, 1, &zero, dc, 1));
    return MGSRT_OK;
  }
  if (c1 == 1 && c0 == m) { // row sums: dc (m) = beta * dY ones
    MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSgemv_64(st.cublas, CUBLAS_OP_T, n, m, &g.beta, dy, n,
                                                   one, 1, &zero, dc, 1));
    return MGSRT_OK;
  }
  // 1 x 1: column sums into the workspace, then their sum.
  void *ws = nullptr;
  if (workspace(ctx, kernel, sizeof(float) * n, &ws))
    return ctx->status;
  float *cols = static_cast<float *>(ws);
  const float unit = 1.0f;
  MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSgemv_64(st.cublas, CUBLAS_OP_N, n, m, &unit, dy, n, one,
                                                 1, &zero, cols, 1));
  MGSRT_CUBLAS_CHECK(ctx, kernel, cublasSgemv_64(st.cublas, CUBLAS_OP_T, n, 1, &g.beta, cols, n,
                                                 one, 1, &zero, dc, 1));
  return MGSRT_OK;
}

mgsrt_status_t gemmBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::gemm_bwd);
  GemmDesc g;
  if (parseGemm(ctx, kernel, desc, g))
    return ctx->status;
  if (!checkGemmBwdBufs(ctx, kernel, bufs, g))
    return ctx->status;
  const float *a = static_cast<const float *>(bufs[0]);
  const float *b = static_cast<const float *>(bufs[1]);
  const float *dy = static_cast<const float *>(bufs[2]);
  float *da = static_cast<float *>(bufs[3]);
  float *db = static_cast<float *>(bufs[4]);
  float *dc = static_cast<float *>(bufs[5]);
  const int64_t m = g.m, n = g.n, k = g.k;
  // bfloat16 or half: the products read rounded copies of A, B and dY; dC sums dY itself.
  const float *dyOp = dy;
  if ((da || db) && roundedOperands(ctx, kernel, g.precision,
                                    {{a, db ? m * k : 0}, {b, da ? k * n : 0}, {dyOp, m * n}}))
    return ctx->status;
  // With opA = op(A) (M x K) and opB = op(B) (K x N):
  //   d opA = alpha dY opB^T,  d opB = alpha opA^T dY.
  if (da) {
    if (!g.ta ? sgemm(ctx, kernel, false, !g.tb, m, k, n, g.alpha, dyOp, n, b, g.tb ? k : n,
                      0.0f, da, k)
              : sgemm(ctx, kernel, g.tb, true, k, m, n, g.alpha, b, g.tb ? k : n, dyOp, n, 0.0f,
                      da, m))
      return ctx->status;
  }
  if (db) {
    if (!g.tb ? sgemm(ctx, kernel, !g.ta, false, k, n, m, g.alpha, a, g.ta ? m : k, dyOp, n,
                      0.0f, db, n)
              : sgemm(ctx, kernel, true, g.ta, n, k, m, g.alpha, dyOp, n, a, g.ta ? m : k, 0.0f,
                      db, k))
      return ctx->status;
  }
  if (dc)
    return gemmDc(ctx, kernel, g, dy, dc);
  return MGSRT_OK;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// A run of out batches [first, first + count) whose lhs / rhs batch indices
/// step by constants.
struct Run {
  int64_t first, count, l0, lStep, r0, rStep;
};

std::vector<Run> linearRuns(const std::vector<int64_t> &li, const std::vector<int64_t> &ri) {
  std::vector<Run> runs;
  const int64_t total = static_cast<int64_t>(li.size());
  for (int64_t o = 0; o < total;) {
    Run r{o, 1, li[o], 0, ri[o], 0};
    if (o + 1 < total) {
      r.lStep = li[o + 1] - li[o];
      r.rStep = ri[o + 1] - ri[o];
      while (o + r.count < total && li[o + r.count] == r.l0 + r.count * r.lStep &&
             ri[o + r.count] == r.r0 + r.count * r.rStep)
        ++r.count;
    }
    runs.push_back(r);
    o += r.count;
  }
  return runs;
}

/// Whether the map hits every index of [0, count) once.
bool bijective(const std::vector<int64_t> &map, int64_t count) {
  if (static_cast<int64_t>(map.size()) != count)
    return false;
  std::vector<char> seen(count, 0);
  for (int64_t v : map) {
    if (v < 0 || v >= count || seen[v])
      return false;
    seen[v] = 1;
  }
  return true;
}

mgsrt_status_t matmulFwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::matmul_fwd);
  MatmulDesc d;
  if (parseMatmul(ctx, kernel, desc, d))
    return ctx->status;
  if (!checkMatmulFwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *lhs = static_cast<const float *>(bufs[0]);
  const float *rhs = static_cast<const float *>(bufs[1]);
  float *out = static_cast<float *>(bufs[2]);
  const int64_t m = d.m, k = d.k, n = d.n;
  const int64_t lda = d.tl ? m : k, ldb = d.tr ? k : n;
  if (d.outCount == 0)
    return MGSRT_OK;
  if (roundedOperands(ctx, kernel, d.precision,
                      {{lhs, d.lhsCount * m * k}, {rhs, d.rhsCount * k * n}}))
    return ctx->status;
  if (d.rhsCount == 1 && d.lhsCount == d.outCount && !d.tl) {
    // One rhs for every batch: the batches stack into one (B*M) x K matrix.
    return sgemm(ctx, kernel, false, d.tr, d.outCount * m, n, k, 1.0f, lhs, k, rhs, ldb, 0.0f,
                 out, n);
  }
  std::vector<int64_t> li, ri;
  batchMaps(d, li, ri);
  for (const Run &r : linearRuns(li, ri))
    if (sgemmStrided(ctx, kernel, d.tl, d.tr, m, n, k, 1.0f, lhs + r.l0 * m * k, lda,
                     r.lStep * m * k, rhs + r.r0 * k * n, ldb, r.rStep * k * n, 0.0f,
                     out + r.first * m * n, n, m * n, r.count))
      return ctx->status;
  return MGSRT_OK;
}

/// An operand of one of matmul_bwd's products: its batches (each `size`
/// floats, leading dimension `ld`) and which one out batch o takes: o itself
/// (Out), li[o] (Lhs) or ri[o] (Rhs).
struct Operand {
  enum Map { Out, Lhs, Rhs };
  const float *base;
  int64_t ld, size;
  Map map;
};

/// The batched product C = op(A) op(B) (pm x pn x pk) of matmul_bwd for
/// every out batch: strided runs writing C once when C's batches are
/// `distinct`, else one product at a time, accumulating (C starts at zero).
mgsrt_status_t gradProduct(mgsrt_ctx_t *ctx, const char *kernel, bool ta, bool tb, int64_t pm,
                           int64_t pn, int64_t pk, Operand a, Operand b, Operand c, bool distinct,
                           const std::vector<int64_t> &li, const std::vector<int64_t> &ri,
                           const std::vector<Run> &runs) {
  auto index = [&](const Operand &x, int64_t o) {
    return x.map == Operand::Out ? o : x.map == Operand::Lhs ? li[o] : ri[o];
  };
  auto start = [](const Operand &x, const Run &r) {
    return x.map == Operand::Out ? r.first : x.map == Operand::Lhs ? r.l0 : r.r0;
  };
  auto step = [](const Operand &x, const Run &r) {
    return x.map == Operand::Out ? 1 : x.map == Operand::Lhs ? r.lStep : r.rStep;
  };
  float *cBase = const_cast<float *>(c.base);
  if (distinct) {
    for (const Run &r : runs)
      if (sgemmStrided(ctx, kernel, ta, tb, pm, pn, pk, 1.0f, a.base + start(a, r) * a.size, a.ld,
                       step(a, r) * a.size, b.base + start(b, r) * b.size, b.ld,
                       step(b, r) * b.size, 0.0f, cBase + start(c, r) * c.size, c.ld,
                       step(c, r) * c.size, r.count))
        return ctx->status;
    return MGSRT_OK;
  }
  for (int64_t o = 0; o < static_cast<int64_t>(li.size()); ++o)
    if (sgemm(ctx, kernel, ta, tb, pm, pn, pk, 1.0f, a.base + index(a, o) * a.size, a.ld,
              b.base + index(b, o) * b.size, b.ld, 1.0f, cBase + index(c, o) * c.size, c.ld))
      return ctx->status;
  return MGSRT_OK;
}

mgsrt_status_t matmulBwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  const char *kernel = kernelName(Kernel::matmul_bwd);
  MatmulDesc d;
  if (parseMatmul(ctx, kernel, desc, d))
    return ctx->status;
  if (!checkMatmulBwdBufs(ctx, kernel, bufs))
    return ctx->status;
  const float *lhs = static_cast<const float *>(bufs[0]);
  const float *rhs = static_cast<const float *>(bufs[1]);
  const float *dout = static_cast<const float *>(bufs[2]);
  float *dl = static_cast<float *>(bufs[3]);
  float *dr = static_cast<float *>(bufs[4]);
  const int64_t m = d.m, k = d.k, n = d.n;
  const bool tl = d.tl, tr = d.tr;
  cudaStream_t s = state(ctx).stream;
  // Batches that broadcast accumulate: start from zero (also what a
  // gradient summed over no batch is).
  if (dl && d.lhsCount * m * k > 0)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(dl, 0, sizeof(float) * d.lhsCount * m * k, s));
  if (dr && d.rhsCount * k * n > 0)
    MGSRT_CUDA_CHECK(ctx, kernel, cudaMemsetAsync(dr, 0, sizeof(float) * d.rhsCount * k * n, s));
  if (d.outCount == 0)
    return MGSRT_OK;
  // Each gradient reads the other operand (dlhs: rhs, drhs: lhs), which may
  // be null when its gradient is not wanted (the CPU rounds the same ones).
  if (roundedOperands(ctx, kernel, d.precision,
                      {{lhs, dr ? d.lhsCount * m * k : 0}, {rhs, dl ? d.rhsCount * k * n : 0},
                       {dout, d.outCount * m * n}}))
    return ctx->status;
  const bool stackLhs = d.rhsCount == 1 && d.lhsCount == d.outCount && !tl;
  const int64_t bm = d.outCount * m;
  std::vector<int64_t> li, ri;
  std::vector<Run> runs;
  if (!stackLhs) {
    batchMaps(d, li, ri);
    runs = linearRuns(li, ri);
  }
  // With opL = op(lhs) (M x K) and opR = op(rhs) (K x N): d opL = dOut opR^T,
  // d opR = opL^T dOut; a transposed operand's gradient is their transpose.
  const Operand gOut{dout, n, m * n, Operand::Out};
  const Operand l{lhs, tl ? m : k, m * k, Operand::Lhs}, r{rhs, tr ? k : n, k * n, Operand::Rhs};
  if (dl) {
    const Operand g{dl, tl ? m : k, m * k, Operand::Lhs};
    const bool distinct = bijective(li, d.lhsCount);
    if (stackLhs) { // dL (B*M x K) = dOut (B*M x N) opR^T
      if (sgemm(ctx, kernel, false, !tr, bm, k, n, 1.0f, dout, n, rhs, r.ld, 0.0f, dl, k))
        return ctx->status;
    } else if (!tl ? gradProduct(ctx, kernel, false, !tr, m, k, n, gOut, r, g, distinct, li, ri,
                                 runs) // dL_l (M x K) += dOut_o opR_o^T
                   : gradProduct(ctx, kernel, tr, true, k, m, n, r, gOut, g, distinct, li, ri,
                                 runs)) // dL_l (K x M) += opR_o dOut_o^T
      return ctx->status;
  }
  if (dr) {
    const Operand g{dr, tr ? k : n, k * n, Operand::Rhs};
    const bool distinct = bijective(ri, d.rhsCount);
    if (stackLhs) { // dR (K x N) = L^T dOut, or dR (N x K) = dOut^T L (L: B*M x K)
      if (!tr ? sgemm(ctx, kernel, true, false, k, n, bm, 1.0f, lhs, k, dout, n, 0.0f, dr, n)
              : sgemm(ctx, kernel, true, false, n, k, bm, 1.0f, dout, n, lhs, k, 0.0f, dr, k))
        return ctx->status;
    } else if (!tr ? gradProduct(ctx, kernel, !tl, false, k, n, m, l, gOut, g, distinct, li, ri,
                                 runs) // dR_r (K x N) += opL_o^T dOut_o
                   : gradProduct(ctx, kernel, true, tl, n, k, m, gOut, l, g, distinct, li, ri,
                                 runs)) // dR_r (N x K) += dOut_o^T opL_o
      return ctx->status;
  }
  return MGSRT_OK;
}

} // namespace

namespace mgs::rt::cuda {

mgsrt_status_t gemm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gemm_fwd), desc, bufs, [&] { return gemmFwd(ctx, desc, bufs); });
}
mgsrt_status_t gemm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::gemm_bwd), desc, bufs, [&] { return gemmBwd(ctx, desc, bufs); });
}
mgsrt_status_t matmul_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::matmul_fwd), desc, bufs, [&] { return matmulFwd(ctx, desc, bufs); });
}
mgsrt_status_t matmul_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs) {
  return runCudaKernel(ctx, kernelName(Kernel::matmul_bwd), desc, bufs, [&] { return matmulBwd(ctx, desc, bufs); });
}

} // namespace mgs::rt::cuda
