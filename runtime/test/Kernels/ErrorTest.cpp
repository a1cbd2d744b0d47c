//===- ErrorTest.cpp - invalid descriptors, null buffers, sticky errors ---===//

#include "TestUtil.h"

using namespace mgsrt_test;

namespace {

using KernelFn = mgsrt_status_t (*)(mgsrt_ctx_t *, const int64_t *, void *const *);

struct BadCall {
  const char *name;
  KernelFn fn;
  std::vector<int64_t> desc;
};

std::vector<BadCall> badCalls() {
  const int64_t one = bits(1.0), half = bits(0.5);
  return {
      {"unary_fwd", mgsrt_unary_fwd, {MGSRT_UNARY_CEIL + 1, 4, 0}}, // op out of range
      {"unary_bwd", mgsrt_unary_bwd, {0, -1, 0}},
      {"clip_fwd", mgsrt_clip_fwd, {-1}},
      {"clip_bwd", mgsrt_clip_bwd, {-1}},
      {"binary_fwd", mgsrt_binary_fwd, {9, 1, 4, 4, 4}},
      {"binary_bwd", mgsrt_binary_bwd, {0, 1, 4, 3, 4}}, // 3 does not broadcast to 4
      {"gemm_fwd", mgsrt_gemm_fwd, {2, 3, 4, 2, 0, one, one, 0, 0}},
      {"gemm_bwd", mgsrt_gemm_bwd, {2, 3, 4, 0, 0, one, one, 2, 5}},
      {"matmul_fwd", mgsrt_matmul_fwd, {1, 3, 2, 1, 2, 2, 2}},
      {"matmul_bwd", mgsrt_matmul_bwd, {-1, 2, 2, 2}},
      {"conv_fwd", mgsrt_conv_fwd, {4, 1, 1, 1, 1}},
      // (each conv descriptor whole, precision included: ConvDesc::size(2) = 20 entries)
      // group 2 does not divide C = 3
      {"conv_bwd_data", mgsrt_conv_bwd_data, {2, 1, 3, 4, 2, 5, 5, 3, 3, 3,
                                              3, 1, 1, 0, 0, 0, 0, 1, 1, MGSRT_PRECISION_F32}},
      // out 4 should be 3
      {"conv_bwd_weights",
       mgsrt_conv_bwd_weights,
       {2, 1, 2, 2, 1, 5, 5, 3, 3, 4, 3, 1, 1, 0, 0, 0, 0, 1, 1, MGSRT_PRECISION_F32}},
      {"pool_fwd", mgsrt_pool_fwd, {2, 1, 1, 1, 4, 2, 3, 1, 0, 0, 1, 0, 0}},
      // out 9 exceeds the ceil-mode extent 3
      {"pool_bwd", mgsrt_pool_bwd, {0, 1, 1, 1, 4, 2, 9, 1, 0, 0, 1, 0, 0}},
      {"batch_norm_fwd", mgsrt_batch_norm_fwd, {-1, 2, 3, 1, bits(1e-5), half, 0, 0}},
      {"batch_norm_bwd", mgsrt_batch_norm_bwd, {1, 2, 3, 1, bits(-1.0), half, 0, 0}},
      {"dropout_fwd", mgsrt_dropout_fwd, {4, bits(1.5), 1, 1}},
      // a mask entry of 3 elements does not divide 4
      {"dropout_fwd", mgsrt_dropout_fwd, {4, half, 1, 3}},
      {"dropout_bwd", mgsrt_dropout_bwd, {-2, half, 1, 1}},
      {"dropout_bwd", mgsrt_dropout_bwd, {4, half, 1, 0}},
      {"softmax_fwd", mgsrt_softmax_fwd, {1, 4, 1, 2}},
      {"softmax_bwd", mgsrt_softmax_bwd, {1, -4, 1, 0}},
      {"transpose", mgsrt_transpose, {2, 2, 3, 0, 0}},
      {"concat", mgsrt_concat, {1, 1, 2, 3, -1}},
      {"split", mgsrt_split, {1, 1, -2}},
      {"pad_fwd", mgsrt_pad_fwd, {1, 3, -2, -2, bits(0.0)}},
      {"pad_bwd", mgsrt_pad_bwd, {-1}},
      {"copy", mgsrt_copy, {-1}},
      {"zero", mgsrt_zero, {-1}},
      {"accumulate", mgsrt_accumulate, {-1}},
      {"softmax_cross_entropy", mgsrt_softmax_cross_entropy, {0, 3, -100, 0, 0}},
      {"softmax_cross_entropy", mgsrt_softmax_cross_entropy, {2, 3, -100, bits(-0.5), 0}},
      {"elementwise_loss", mgsrt_elementwise_loss, {7, 4, 0, 1, 0}},              // kind
      {"elementwise_loss", mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 0, 0, 1, 0}}, // count
      {"elementwise_loss", mgsrt_elementwise_loss, {MGSRT_LOSS_SMOOTH_L1, 4, bits(-1.0), 1, 0}},
      {"elementwise_loss", mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 4, 0, 0, 0}},  // last axis
      {"elementwise_loss", mgsrt_elementwise_loss, {MGSRT_LOSS_MSE, 4, 0, 1, 2}},  // sum flag
      {"softmax_cross_entropy", mgsrt_softmax_cross_entropy, {2, 3, -100, 0, -1}}, // sum flag
      {"sgd_update", mgsrt_sgd_update, {-5}},
      {"topk_sparsify", mgsrt_topk_sparsify, {4, 5}},               // k > n
      {"scatter_add", mgsrt_scatter_add, {4, 1, 0}},                // no workers
      {"clip_grad_norm", mgsrt_clip_grad_norm, {1, bits(-1.0), 4}}, // max_norm <= 0
  };
}

TEST(ErrorTest, EveryKernelRejectsABadDescriptor) {
  std::vector<float> scratch(4096, 0.0f);
  std::vector<void *> bufs(16, scratch.data());
  for (const BadCall &call : badCalls()) {
    Ctx ctx;
    mgsrt_status_t st = call.fn(ctx, call.desc.data(), bufs.data());
    EXPECT_EQ(st, MGSRT_ERROR_INVALID_ARGUMENT) << call.name;
    EXPECT_EQ(mgsrt_ctx_status(ctx), MGSRT_ERROR_INVALID_ARGUMENT) << call.name;
    std::string msg = ctx.message();
    EXPECT_EQ(msg.rfind(std::string(call.name) + ": ", 0), 0u)
        << call.name << " message: " << msg;
    EXPECT_GT(msg.size(), std::string(call.name).size() + 2) << call.name;
  }
}

TEST(ErrorTest, NullRequiredBufferIsReported) {
  Ctx ctx;
  const int64_t desc[] = {MGSRT_UNARY_RELU, 4, 0};
  float x[4] = {};
  void *bufs[] = {x, nullptr};
  EXPECT_EQ(mgsrt_unary_fwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "unary_fwd: buffer 1 (y) is null");
}

TEST(ErrorTest, NullContextDescriptorOrBuffers) {
  const int64_t desc[] = {4};
  float x[4] = {}, y[4] = {};
  void *bufs[] = {x, y};
  EXPECT_EQ(mgsrt_copy(nullptr, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  {
    Ctx ctx;
    EXPECT_EQ(mgsrt_copy(ctx, nullptr, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), "copy: descriptor is null");
  }
  {
    Ctx ctx;
    EXPECT_EQ(mgsrt_copy(ctx, desc, nullptr), MGSRT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.message(), "copy: buffer list is null");
  }
}

TEST(ErrorTest, FailedContextMakesKernelsNoOps) {
  Ctx ctx;
  const int64_t bad[] = {-1};
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  void *bufs[] = {x, y};
  ASSERT_EQ(mgsrt_copy(ctx, bad, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  const std::string first = ctx.message();

  // Later kernels return the sticky status and do nothing.
  const int64_t good[] = {3};
  EXPECT_EQ(mgsrt_copy(ctx, good, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(y[0], 0.0f);
  const int64_t conv[] = {2, 1, 1, 1, 1, 3, 3, 1, 1, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1,
                          MGSRT_PRECISION_F32};
  float w = 2.0f, out[9] = {};
  float img[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  void *cb[] = {img, &w, nullptr, out};
  EXPECT_EQ(mgsrt_conv_fwd(ctx, conv, cb), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(out[0], 0.0f);
  // A later failure does not replace the first message.
  const int64_t alsoBad[] = {-7};
  EXPECT_EQ(mgsrt_zero(ctx, alsoBad, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mgsrt_ctx_fail(ctx, MGSRT_ERROR_IO, "other"), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), first);

  // Cleared, the context works again.
  mgsrt_ctx_clear(ctx);
  EXPECT_EQ(mgsrt_ctx_status(ctx), MGSRT_OK);
  EXPECT_EQ(mgsrt_copy(ctx, good, bufs), MGSRT_OK);
  EXPECT_EQ(y[2], 3.0f);
  EXPECT_EQ(mgsrt_conv_fwd(ctx, conv, cb), MGSRT_OK) << ctx.message();
  EXPECT_EQ(out[4], 2.0f);
}

TEST(ErrorTest, CrossEntropyNamesTheBadLabel) {
  Ctx ctx;
  const int64_t desc[] = {3, 4, -100, 0, 0};
  float logits[12] = {}, loss = -1.0f;
  int64_t labels[3] = {0, 4, 1};
  void *bufs[] = {logits, labels, &loss, nullptr, nullptr};
  EXPECT_EQ(mgsrt_softmax_cross_entropy(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("label 4 of sample 1 is outside [0, 4) and is not the ignored "
                               "index -100"),
            std::string::npos)
      << ctx.message();
  EXPECT_EQ(loss, -1.0f);
  // PyTorch's ignored index is no error; another negative label is.
  mgsrt_ctx_clear(ctx);
  labels[1] = -100;
  EXPECT_EQ(mgsrt_softmax_cross_entropy(ctx, desc, bufs), MGSRT_OK) << ctx.message();
  labels[1] = -1;
  EXPECT_EQ(mgsrt_softmax_cross_entropy(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ctx.message().find("label -1 of sample 1"), std::string::npos) << ctx.message();
}

TEST(ErrorTest, GemmRejectsMissingC) {
  Ctx ctx;
  const int64_t desc[] = {2, 2, 2, 0, 0, bits(1.0), bits(1.0), 1, 2, MGSRT_PRECISION_F32};
  float a[4] = {}, b[4] = {}, y[4] = {};
  void *bufs[] = {a, b, nullptr, y};
  EXPECT_EQ(mgsrt_gemm_fwd(ctx, desc, bufs), MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.message(), "gemm_fwd: buffer 2 (C) is null");
}

} // namespace
