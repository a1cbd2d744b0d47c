//===- RecurrentDesc.h - LSTM and GRU descriptors, parsed and checked -*- C++ -*-===//
//
// mgsrt_lstm_* and mgsrt_gru_* descriptors (mgsrt.h; fields named in
// mgsrt/contract.h) and their buffer checks, shared by the CPU and CUDA
// kernels so that both reject the same input with the same words.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DESCRIPTORS_RECURRENTDESC_H
#define MGSRT_DESCRIPTORS_RECURRENTDESC_H

#include "Support/Common.h"
#include "mgsrt/contract.h"

namespace mgs::rt::recurrent {

/// Steps, batch, input and hidden size of one recurrent layer.
struct Shape {
  int64_t t, n, i, h;
};

/// Reads T, N, I, H from the first four descriptor fields (LstmDesc and
/// GruDesc share their order) and rejects a non-positive one.
inline mgsrt_status_t parseShape(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                                 Shape &s) {
  s = {desc[0], desc[1], desc[2], desc[3]};
  if (s.t < 1 || s.n < 1 || s.i < 1 || s.h < 1)
    return invalidArg(ctx, kernel, "T=", s.t, " N=", s.n, " I=", s.i, " H=", s.h,
                      " must all be positive");
  return MGSRT_OK;
}

/// The shape and linear_before_reset of a GRU descriptor.
inline mgsrt_status_t parseGru(mgsrt_ctx_t *ctx, const char *kernel, const int64_t *desc,
                               Shape &s, bool &linearBeforeReset) {
  using F = mgs::contract::GruDesc;
  if (parseShape(ctx, kernel, desc, s))
    return ctx->status;
  if (desc[F::LinearBeforeReset] != 0 && desc[F::LinearBeforeReset] != 1)
    return invalidArg(ctx, kernel, "linear_before_reset must be 0 or 1, got ",
                      desc[F::LinearBeforeReset]);
  linearBeforeReset = desc[F::LinearBeforeReset] != 0;
  return MGSRT_OK;
}

/// lstm_fwd's buffer checks (x, w, r, b, y, the nullable y_h and y_c, saved,
/// the nullable h0 and c0).
inline bool checkLstmFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "w").require(2, "r").require(3, "b").require(4, "y")
      .require(7, "saved").ok;
}

/// lstm_bwd's buffer checks (x, w, r, y, saved, the nullable dy, dy_h, dy_c
/// and dx, then dw, dr, db, the nullable h0, c0, dh0 and dc0).
inline bool checkLstmBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "w").require(2, "r").require(3, "y").require(4, "saved")
      .require(9, "dw").require(10, "dr").require(11, "db").ok;
}

/// gru_fwd's buffer checks (x, w, r, b, y, the nullable y_h, saved, the
/// nullable h0).
inline bool checkGruFwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "w").require(2, "r").require(3, "b").require(4, "y")
      .require(6, "saved").ok;
}

/// gru_bwd's buffer checks (x, w, r, y, saved, the nullable dy, dy_h and dx,
/// then dw, dr, db, the nullable h0 and dh0).
inline bool checkGruBwdBufs(mgsrt_ctx_t *ctx, const char *kernel, void *const *bufs) {
  return BufferCheck(ctx, kernel, bufs)
      .require(0, "x").require(1, "w").require(2, "r").require(3, "y").require(4, "saved")
      .require(8, "dw").require(9, "dr").require(10, "db").ok;
}

} // namespace mgs::rt::recurrent

#endif // MGSRT_DESCRIPTORS_RECURRENTDESC_H
