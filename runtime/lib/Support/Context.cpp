//===- Context.cpp - The runtime context ----------------------------------===//

#include "Context.h"

#include <new>

extern "C" {

mgsrt_ctx_t *mgsrt_ctx_create(uint64_t seed) {
  auto *ctx = new (std::nothrow) mgsrt_ctx;
  if (ctx)
    ctx->rngState = seed;
  return ctx;
}

void mgsrt_ctx_destroy(mgsrt_ctx_t *ctx) { delete ctx; }

mgsrt_status_t mgsrt_ctx_status(const mgsrt_ctx_t *ctx) { return ctx->status; }

const char *mgsrt_ctx_message(const mgsrt_ctx_t *ctx) { return ctx->message.c_str(); }

void mgsrt_ctx_clear(mgsrt_ctx_t *ctx) {
  ctx->status = MGSRT_OK;
  ctx->message.clear();
}

mgsrt_status_t mgsrt_ctx_fail(mgsrt_ctx_t *ctx, mgsrt_status_t status, const char *message) {
  return ctx->fail(status, message ? message : "");
}

void mgsrt_ctx_set_sgd(mgsrt_ctx_t *ctx, float lr, float momentum, float weight_decay) {
  ctx->lr = lr;
  ctx->momentum = momentum;
  ctx->weightDecay = weight_decay;
}

uint64_t mgsrt_ctx_rng_state(const mgsrt_ctx_t *ctx) { return ctx->rngState; }

void mgsrt_ctx_set_rng_state(mgsrt_ctx_t *ctx, uint64_t state) { ctx->rngState = state; }

} // extern "C"
