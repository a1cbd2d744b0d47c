//===- Context.cpp - The runtime context ----------------------------------===//

#include "Support/Context.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

extern "C" {

mgsrt_ctx_t *mgsrt_ctx_create(uint64_t seed) {
  auto *ctx = new (std::nothrow) mgsrt_ctx;
  if (!ctx)
    return nullptr;
  ctx->rngState = seed;
  if (const char *p = std::getenv("MGSRT_PROFILE"); p && *p && std::strcmp(p, "0") != 0)
    ctx->profile = std::make_unique<mgs::rt::KernelProfile>();
  return ctx;
}

void mgsrt_ctx_destroy(mgsrt_ctx_t *ctx) {
  if (ctx && ctx->profile) {
    // Most expensive first.
    std::vector<std::pair<std::string, mgs::rt::KernelProfile::Entry>> rows(
        ctx->profile->byKernel.begin(), ctx->profile->byKernel.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto &a, const auto &b) { return a.second.seconds > b.second.seconds; });
    double total = 0, first = 0;
    for (const auto &r : rows) {
      total += r.second.seconds;
      first += r.second.firstSeconds;
    }
    std::fprintf(stderr,
                 "mgsrt profile (MGSRT_PROFILE): %.3f s in kernels, %.3f s of it in each call "
                 "site's first call (set-up)\n",
                 total, first);
    std::fprintf(stderr, "  %-24s %8s %10s %6s %10s %12s\n", "kernel", "calls", "total ms", "%",
                 "first ms", "later ms/call");
    for (const auto &[name, e] : rows) {
      const int64_t later = e.calls - e.firstCalls;
      std::fprintf(stderr, "  %-24s %8lld %10.3f %5.1f%% %10.3f %12.4f\n", name.c_str(),
                   static_cast<long long>(e.calls), e.seconds * 1e3,
                   total > 0 ? 100.0 * e.seconds / total : 0.0, e.firstSeconds * 1e3,
                   later > 0 ? (e.seconds - e.firstSeconds) * 1e3 / later : 0.0);
    }
  }
  delete ctx;
}

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

void mgsrt_ctx_set_adamw(mgsrt_ctx_t *ctx, float beta1, float beta2, float eps, int64_t step) {
  ctx->adamw = true;
  ctx->beta1 = beta1;
  ctx->beta2 = beta2;
  ctx->eps = eps;
  ctx->adamStep = step;
}

void mgsrt_ctx_set_loss_scale(mgsrt_ctx_t *ctx, float scale) {
  if (!(scale > 0.0f) || !std::isfinite(scale))
    return;
  ctx->lossScale = scale;
  ctx->invLossScale = 1.0f / scale;
}

float mgsrt_ctx_loss_scale(const mgsrt_ctx_t *ctx) { return ctx->lossScale; }

uint64_t mgsrt_ctx_rng_state(const mgsrt_ctx_t *ctx) { return ctx->rngState; }

void mgsrt_ctx_set_rng_state(mgsrt_ctx_t *ctx, uint64_t state) { ctx->rngState = state; }

int64_t mgsrt_ctx_take_nonfinite(mgsrt_ctx_t *ctx, const void **param) {
  const int64_t count = ctx->nonfiniteUpdates;
  if (param)
    *param = ctx->firstNonfiniteParam;
  ctx->nonfiniteUpdates = 0;
  ctx->firstNonfiniteParam = nullptr;
  return count;
}

} // extern "C"
