//===- DriverTest.cpp - mgsrt_driver_main with a fake compiled model ------===//
//
// This file defines the compiled model's symbols (mgs_model_manifest,
// mgs_train_step, mgs_eval_step) as mgsc's object file would: a softmax
// regression on the 8x8 digits, in plain C++, with input dropout drawn from
// the context's random stream (so checkpoints must carry it) and a `state`
// param counting the samples seen (so state params must round-trip too).
//
//===----------------------------------------------------------------------===//

#include "Support/Context.h"
#include "TestUtil.h"
#include "mgsrt/driver.h"
#include "mgsrt/mgsrt.h"

#include <array>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <regex>

using mgs::rt::Status;
using namespace mgs::rt::driver;
using namespace mgs::rt::driver::test;

namespace fake {

constexpr int N = 32, D = 64, C = 10;
constexpr float kDropout = 0.1f;

constexpr const char *kTrainManifest = R"(mgs-manifest 3
mode train
batch_size 32
arena_bytes 8192
param fc.weight trainable 2 10 64
param fc.bias trainable 1 10
param seen state 1 1
input x 2 32 64
output logits 2 32 10
labels 1 32
classes 10
)";

std::string manifest = kTrainManifest;
bool failTrain = false;
/// (lr, momentum, weight decay) of every training step.
std::vector<std::array<float, 3>> hyper;
/// AdamW's (beta1, beta2, eps, step) of every training step that had it.
std::vector<std::array<double, 4>> adamw;

void forward(const float *w, const float *b, const float *x, float *logits) {
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      float acc = b[c];
      for (int d = 0; d < D; ++d)
        acc += w[c * D + d] * x[n * D + d];
      logits[n * C + c] = acc;
    }
}

} // namespace fake

extern "C" {

const char *mgs_model_manifest(void) { return fake::manifest.c_str(); }

// io: arena, fc.weight, fc.bias, seen, v(fc.weight), v(fc.bias), x, labels, loss, logits.
mgsrt_status_t mgs_train_step(mgsrt_ctx_t *ctx, void *const *io) {
  using namespace fake;
  if (ctx->failed())
    return ctx->status;
  float *xDropped = static_cast<float *>(io[0]);
  float *w = static_cast<float *>(io[1]), *b = static_cast<float *>(io[2]);
  float *seen = static_cast<float *>(io[3]);
  float *vw = static_cast<float *>(io[4]), *vb = static_cast<float *>(io[5]);
  const float *x = static_cast<const float *>(io[6]);
  const int64_t *labels = static_cast<const int64_t *>(io[7]);
  float *loss = static_cast<float *>(io[8]), *logits = static_cast<float *>(io[9]);
  if (failTrain)
    return mgsrt_ctx_fail(ctx, MGSRT_ERROR_BACKEND, "fake kernel failed on purpose");
  hyper.push_back({ctx->lr, ctx->momentum, ctx->weightDecay});

  for (int i = 0; i < N * D; ++i) {
    double u = static_cast<double>(mgs::rt::nextRandom(ctx->rngState) >> 11) * 0x1.0p-53;
    xDropped[i] = u < kDropout ? 0.0f : x[i] / (1 - kDropout);
  }
  forward(w, b, xDropped, logits);
  float gw[C * D] = {}, gb[C] = {};
  double total = 0;
  for (int n = 0; n < N; ++n) {
    if (labels[n] < 0 || labels[n] >= C)
      return mgsrt_ctx_fail(ctx, MGSRT_ERROR_INVALID_ARGUMENT, "label out of range");
    const float *z = logits + n * C;
    float mx = *std::max_element(z, z + C), sum = 0, p[C];
    for (int c = 0; c < C; ++c)
      sum += p[c] = std::exp(z[c] - mx);
    total += std::log(sum) + mx - z[labels[n]];
    for (int c = 0; c < C; ++c) {
      float g = (p[c] / sum - (c == labels[n] ? 1.0f : 0.0f)) / N;
      gb[c] += g;
      for (int d = 0; d < D; ++d)
        gw[c * D + d] += g * xDropped[n * D + d];
    }
  }
  *loss = static_cast<float>(total / N);
  if (ctx->adamw)
    adamw.push_back({ctx->beta1, ctx->beta2, ctx->eps, static_cast<double>(ctx->adamStep)});
  auto sgd = [&](float *param, const float *grad, float *velocity, int n) {
    if (ctx->adamw) { // the runtime's kernel, on the driver's 2n-float state
      const int64_t desc[] = {n};
      void *bufs[] = {param, const_cast<float *>(grad), velocity};
      mgsrt_sgd_update(ctx, desc, bufs);
      return;
    }
    for (int i = 0; i < n; ++i) {
      float g = grad[i] + ctx->weightDecay * param[i];
      velocity[i] = ctx->momentum * velocity[i] + g;
      param[i] -= ctx->lr * velocity[i];
    }
  };
  sgd(w, gw, vw, C * D);
  sgd(b, gb, vb, C);
  seen[0] += N;
  return ctx->status;
}

// io: arena, fc.weight, fc.bias, seen, x, logits.
mgsrt_status_t mgs_eval_step(mgsrt_ctx_t *ctx, void *const *io) {
  if (ctx->failed())
    return ctx->status;
  fake::forward(static_cast<const float *>(io[1]), static_cast<const float *>(io[2]),
                static_cast<const float *>(io[4]), static_cast<float *>(io[5]));
  return ctx->status;
}

} // extern "C"

namespace {


struct Result {
  int rc;
  std::string out, err;
};

std::vector<Tensor> initialWeights() {
  Tensor w{"fc.weight", {10, 64}, std::vector<float>(640)};
  for (int i = 0; i < 640; ++i)
    w.data[i] = 0.01f * std::sin(static_cast<float>(i));
  return {w, {"fc.bias", {10}, std::vector<float>(10, 0.0f)}, {"seen", {1}, {0.0f}}};
}

class DriverMain : public ::testing::Test {
protected:
  void SetUp() override {
    fake::manifest = fake::kTrainManifest;
    fake::failTrain = false;
    fake::hyper.clear();
    fake::adamw.clear();
    ASSERT_TRUE(succeeded(writeWeights(dir / "model.weights", initialWeights())));
  }

  bool haveDigits() const { return isRegularFile(MGS_DIGITS_CSV); }

  Result run(std::vector<std::string> args) {
    args.insert(args.begin(), dir / "model");
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    int rc = mgsrt_driver_main(static_cast<int>(args.size()), argv.data());
    Result r{rc, testing::internal::GetCapturedStdout(), testing::internal::GetCapturedStderr()};
    return r;
  }

  static bool isRegularFile(const std::string &p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  TempDir dir;
};

#define REQUIRE_DIGITS()                                                                          \
  do {                                                                                            \
    if (!haveDigits())                                                                            \
      GTEST_SKIP() << MGS_DIGITS_CSV << " not installed";                                         \
  } while (0)

double finalAccuracy(const std::string &out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("final held-out accuracy: ([0-9.]+)%")))
    return -1;
  return std::stod(m[1]);
}

TEST_F(DriverMain, TrainsDigitsToNinetyPercent) {
  REQUIRE_DIGITS();
  Result r = run({"--data", MGS_DIGITS_CSV, "--epochs", "5", "--progress-every", "20"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "1438 samples, 359 held out, batch size 32, 44 iterations")) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\nepoch 1/5 iter 20/44 loss [0-9]+\\.[0-9]{4}  [0-9.]+ samples/s  "
                        "ETA [0-9]{2}:[0-9]{2}\n")))
      << r.out;
  EXPECT_TRUE(contains(r.out, "epoch 5/5 iter 40/44")) << r.out;
  EXPECT_FALSE(contains(r.out, "iter 44/44")) << r.out;
  // 359 held-out samples = 11 full batches + a padded one of 7.
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\nepoch 5: train loss [0-9]+\\.[0-9]{4} \\(mean\\), held-out accuracy "
                        "[0-9.]+% \\([0-9]+/359\\)\n")))
      << r.out;
  double acc = finalAccuracy(r.out);
  EXPECT_GE(acc, 90.0) << r.out;
}

TEST_F(DriverMain, ResumeIsBitIdenticalToAnUninterruptedRun) {
  REQUIRE_DIGITS();
  std::vector<std::string> common = {"--data",     MGS_DIGITS_CSV, "--progress-every", "0",
                                     "--seed",     "7",            "--warmup-epochs",  "1.5",
                                     "--lr-steps", "2,3",          "--lr-gamma",       "0.5",
                                     "--weight-decay", "0.0001"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Result full = run(with({"--epochs", "4", "--save-weights", dir / "full.weights"}));
  ASSERT_EQ(full.rc, 0) << full.err;

  Result first = run(with({"--epochs", "2", "--checkpoint", dir / "ck"}));
  ASSERT_EQ(first.rc, 0) << first.err;
  // --seed and --holdout come from the checkpoint when not given.
  std::vector<std::string> resumeArgs = {"--data", MGS_DIGITS_CSV, "--progress-every", "0",
                                         "--warmup-epochs", "1.5", "--lr-steps", "2,3",
                                         "--lr-gamma", "0.5", "--weight-decay", "0.0001",
                                         "--epochs", "4", "--resume", dir / "ck",
                                         "--checkpoint", dir / "ck", "--save-weights",
                                         dir / "resumed.weights"};
  Result second = run(resumeArgs);
  ASSERT_EQ(second.rc, 0) << second.err;
  EXPECT_TRUE(contains(second.out, "resumed from '" + (dir / "ck") + "' after epoch 2")) << second.out;
  EXPECT_FALSE(contains(second.out, "epoch 2:")) << second.out;
  EXPECT_TRUE(contains(second.out, "epoch 3:")) << second.out;

  std::string a = readFile(dir / "full.weights"), b = readFile(dir / "resumed.weights");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "resumed training diverged from the uninterrupted run";
  // Same final accuracy line too.
  EXPECT_EQ(finalAccuracy(full.out), finalAccuracy(second.out));

  // The state param counted every sample once: 4 epochs x 44 x 32.
  std::vector<Tensor> ts;
  ASSERT_TRUE(succeeded(readWeights(dir / "resumed.weights", ts)));
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts[2].name, "seen");
  EXPECT_EQ(ts[2].data[0], 4.0f * 44 * 32);

  Checkpoint c;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "ck", c)));
  EXPECT_EQ(c.epochsDone, 4u);
  EXPECT_EQ(c.iterationsDone, 4u * 44);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.velocities.size(), 2u);

  // No temporary files left behind.
  DIR *d = ::opendir(dir.path().c_str());
  ASSERT_NE(d, nullptr);
  while (struct dirent *e = ::readdir(d))
    EXPECT_FALSE(contains(e->d_name, ".tmp")) << e->d_name;
  ::closedir(d);

  // A checkpoint already at --epochs: said, not silently nothing.
  Result done = run(with({"--epochs", "3", "--resume", dir / "ck"}));
  EXPECT_EQ(done.rc, 0) << done.err;
  EXPECT_TRUE(contains(done.out, "nothing left to train: --epochs 3 counts every epoch, the "
                                 "checkpoint's 4 included (pass a larger --epochs to continue)"))
      << done.out;

  // Resuming with a different seed is refused.
  resumeArgs.push_back("--seed");
  resumeArgs.push_back("8");
  Result bad = run(resumeArgs);
  EXPECT_EQ(bad.rc, 1);
  EXPECT_TRUE(contains(bad.err, "was written with --seed 7, not 8")) << bad.err;

  // A checkpoint of another model is refused, saying what differs.
  std::string otherManifest = fake::kTrainManifest;
  size_t arena = otherManifest.find("arena_bytes 8192");
  ASSERT_NE(arena, std::string::npos);
  otherManifest.replace(arena, 16, "arena_bytes 16384");
  fake::manifest = otherManifest;
  Result other = run(with({"--epochs", "4", "--resume", dir / "ck"}));
  EXPECT_EQ(other.rc, 1);
  EXPECT_TRUE(contains(other.err, "was written by a differently compiled model (it has "
                                  "'arena_bytes 8192'; this executable has 'arena_bytes "
                                  "16384'); resume with an executable compiled as that one was"))
      << other.err;
  // ... in mgsc's words where it can: here a sparse exchange's residual.
  fake::manifest = std::string(fake::kTrainManifest) +
                   "param mgs.residual/fc.weight..fc.bias state 1 650\n";
  Result sparse = run(with({"--epochs", "4", "--resume", dir / "ck"}));
  EXPECT_EQ(sparse.rc, 1);
  EXPECT_TRUE(contains(sparse.err, "was written by a differently compiled model (it exchanges "
                                   "no gradients (mgsc --strategy none), this executable "
                                   "exchanges sparse gradients with error feedback (mgsc "
                                   "--strategy layerwise, omgs, ...); it has nothing else; "))
      << sparse.err;
  // Where the .onnx was compiled from is not part of the model.
  fake::manifest = std::string(fake::kTrainManifest) + "source /elsewhere/model.onnx\n";
  Result moved = run(with({"--epochs", "5", "--resume", dir / "ck"}));
  EXPECT_EQ(moved.rc, 0) << moved.err;
}

TEST_F(DriverMain, LearningRateScheduleWarmsUpAndSteps) {
  REQUIRE_DIGITS();
  Result r = run({"--data", MGS_DIGITS_CSV, "--epochs", "4", "--lr", "0.2", "--momentum", "0.5",
                  "--weight-decay", "0.01", "--warmup-epochs", "0.5", "--lr-steps", "2,3",
                  "--lr-gamma", "0.1", "--progress-every", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::vector<std::array<float, 3>> &h = fake::hyper;
  ASSERT_EQ(h.size(), 4u * 44);
  // Warm-up over the first 22 iterations, per iteration.
  EXPECT_FLOAT_EQ(h[0][0], 0.2f * 1 / 22);
  EXPECT_FLOAT_EQ(h[10][0], 0.2f * 11 / 22);
  EXPECT_FLOAT_EQ(h[21][0], 0.2f);
  EXPECT_FLOAT_EQ(h[87][0], 0.2f);
  // x0.1 from epoch index 2 (the third epoch) on, x0.01 from index 3 on.
  EXPECT_FLOAT_EQ(h[88][0], 0.02f);
  EXPECT_FLOAT_EQ(h[131][0], 0.02f);
  EXPECT_FLOAT_EQ(h[132][0], 0.002f);
  for (const auto &step : h) {
    EXPECT_EQ(step[1], 0.5f);
    EXPECT_EQ(step[2], 0.01f);
  }
}

TEST_F(DriverMain, AdamWResumeIsBitIdenticalToAnUninterruptedRun) {
  REQUIRE_DIGITS();
  std::vector<std::string> common = {
      "--data",      MGS_DIGITS_CSV, "--progress-every", "0",     "--lr",           "0.01",
      "--beta2",     "0.99",         "--eps",            "1e-7",  "--weight-decay", "0.01",
      "--lr-schedule", "cosine",     "--warmup-epochs",  "0.5"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Result full =
      run(with({"--optimizer", "adamw", "--epochs", "4", "--save-weights", dir / "full.weights"}));
  ASSERT_EQ(full.rc, 0) << full.err;
  EXPECT_TRUE(contains(full.out, "optimizer adamw: betas 0.9, 0.99, eps 1e-07, decoupled weight "
                                 "decay 0.01"))
      << full.out;
  // Bias correction counts every update: 1 .. 4 x 44.
  ASSERT_EQ(fake::adamw.size(), 4u * 44);
  for (size_t i = 0; i < fake::adamw.size(); ++i)
    ASSERT_EQ(fake::adamw[i][3], static_cast<double>(i + 1));
  EXPECT_FLOAT_EQ(static_cast<float>(fake::adamw[0][1]), 0.99f);
  EXPECT_FLOAT_EQ(static_cast<float>(fake::adamw[0][2]), 1e-7f);

  // Stopped after 2 epochs on the 4-epoch curve (--cosine-epochs).
  Result first = run(with({"--optimizer", "adamw", "--epochs", "2", "--cosine-epochs", "4",
                           "--checkpoint", dir / "ck"}));
  ASSERT_EQ(first.rc, 0) << first.err;
  Checkpoint c;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "ck", c)));
  ASSERT_EQ(c.velocities.size(), 4u);
  EXPECT_EQ(c.velocities[0].name, "exp_avg/fc.weight");
  EXPECT_EQ(c.velocities[1].name, "exp_avg_sq/fc.weight");
  EXPECT_EQ(c.velocities[3].name, "exp_avg_sq/fc.bias");
  // The optimizer comes from the checkpoint when --optimizer is not given.
  fake::adamw.clear();
  Result second =
      run(with({"--epochs", "4", "--resume", dir / "ck", "--save-weights", dir / "resumed.weights"}));
  ASSERT_EQ(second.rc, 0) << second.err;
  ASSERT_EQ(fake::adamw.size(), 2u * 44);
  EXPECT_EQ(fake::adamw[0][3], 2.0 * 44 + 1);
  std::string a = readFile(dir / "full.weights"), b = readFile(dir / "resumed.weights");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "resumed AdamW training diverged from the uninterrupted run";

  // The other optimizer's checkpoint is refused, in both directions.
  Result wrong = run(with({"--optimizer", "sgd", "--epochs", "4", "--resume", dir / "ck"}));
  EXPECT_EQ(wrong.rc, 2) << wrong.err; // --beta2 given with sgd: a usage error
  EXPECT_TRUE(contains(wrong.err, "--beta2 is AdamW's (--optimizer adamw); the optimizer is sgd"))
      << wrong.err;
  Result sgdRun = run({"--data", MGS_DIGITS_CSV, "--progress-every", "0", "--epochs", "1",
                       "--checkpoint", dir / "sgd-ck"});
  ASSERT_EQ(sgdRun.rc, 0) << sgdRun.err;
  Result toAdam = run({"--data", MGS_DIGITS_CSV, "--progress-every", "0", "--epochs", "2",
                       "--optimizer", "adamw", "--resume", dir / "sgd-ck"});
  EXPECT_EQ(toAdam.rc, 1);
  EXPECT_TRUE(contains(toAdam.err, "was written with --optimizer sgd, not adamw")) << toAdam.err;
  Result sgdBetas = run({"--data", MGS_DIGITS_CSV, "--progress-every", "0", "--epochs", "2",
                         "--beta1", "0.5", "--resume", dir / "sgd-ck"});
  EXPECT_EQ(sgdBetas.rc, 2);
  EXPECT_TRUE(contains(sgdBetas.err, "--beta1 is AdamW's (--optimizer adamw); the optimizer is sgd"))
      << sgdBetas.err;
}

TEST_F(DriverMain, CosineScheduleFollowsItsFormulaPerIteration) {
  REQUIRE_DIGITS();
  Result r = run({"--data", MGS_DIGITS_CSV, "--epochs", "3", "--lr", "0.2", "--warmup-epochs",
                  "0.5", "--lr-schedule", "cosine", "--progress-every", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "lr schedule cosine: from 0.2 after 0.5 warm-up epoch(s) to 0 at "
                              "the end of epoch 3, per iteration"))
      << r.out;
  const std::vector<std::array<float, 3>> &h = fake::hyper;
  ASSERT_EQ(h.size(), 3u * 44);
  // 44 iterations an epoch: W = 22 warm-up iterations, T = 132 in all.
  const double W = 22, T = 132, pi = std::acos(-1.0);
  for (size_t t = 0; t < h.size(); ++t) {
    const double it = static_cast<double>(t);
    const double want = it + 1 < W ? 0.2 * (it + 1) / W
                                   : 0.2 * 0.5 * (1 + std::cos(pi * std::max(0.0, it - W) / (T - W)));
    EXPECT_FLOAT_EQ(h[t][0], static_cast<float>(want)) << "iteration " << t;
  }
  EXPECT_FLOAT_EQ(h[21][0], 0.2f); // the warm-up's end: the cosine's start
  EXPECT_FLOAT_EQ(h[77][0], static_cast<float>(0.1 * (1 + std::cos(pi * 55 / 110))));
  EXPECT_LT(h.back()[0], 1e-4f);
  EXPECT_GT(h.back()[0], 0.0f);
}

TEST_F(DriverMain, OptimizerOptionErrorsNameTheOption) {
  struct Case {
    std::vector<std::string> args;
    const char *message;
  };
  for (const Case &c : std::vector<Case>{
           {{"--optimizer", "adam"}, "bad value 'adam' for --optimizer (expected sgd or adamw)"},
           {{"--optimizer", "adamw", "--beta1", "1"},
            "bad value '1' for --beta1 (expected a number in [0, 1))"},
           {{"--optimizer", "adamw", "--beta2", "-0.1"},
            "bad value '-0.1' for --beta2 (expected a number in [0, 1))"},
           {{"--optimizer", "adamw", "--eps", "-1e-8"},
            "bad value '-1e-8' for --eps (expected a number >= 0)"},
           {{"--lr-schedule", "linear"},
            "bad value 'linear' for --lr-schedule (expected step or cosine)"},
           {{"--optimizer", "adamw", "--momentum", "0.9"},
            "--momentum is SGD's; AdamW takes --beta1 and --beta2"},
           {{"--eps", "1e-8"}, "--eps is AdamW's (--optimizer adamw); the optimizer is sgd"},
           {{"--lr-schedule", "cosine", "--lr-steps", "2"},
            "--lr-steps is for --lr-schedule step, not cosine"},
           {{"--lr-schedule", "cosine", "--lr-gamma", "0.5"},
            "--lr-gamma is for --lr-schedule step, not cosine"},
           {{"--cosine-epochs", "4"}, "--cosine-epochs is for --lr-schedule cosine"},
           {{"--lr-schedule", "cosine", "--cosine-epochs", "0"},
            "bad value '0' for --cosine-epochs (expected an integer >= 1)"},
       }) {
    std::vector<std::string> args = {"--data", "x.csv"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Result r = run(args);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
  }
  Result help = run({"--help"});
  EXPECT_TRUE(contains(help.out, "decoupled decay, p -= lr * F * p")) << help.out;
}

TEST_F(DriverMain, WrongBatchSizeSaysWhichWasCompiled) {
  Result r = run({"--data", "whatever.csv", "--batch-size", "16"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--batch-size 16 does not match the model, which was compiled with "
                              "batch size 32"))
      << r.err;
  // One line points at --help; the option list does not bury the error.
  EXPECT_TRUE(contains(r.err, "\n(model --help lists the options)\n")) << r.err;
  EXPECT_FALSE(contains(r.err, "usage:")) << r.err;
  // The compiled one is accepted.
  REQUIRE_DIGITS();
  r = run({"--data", MGS_DIGITS_CSV, "--batch-size", "32", "--epochs", "1"});
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(DriverMain, KernelFailurePrintsTheContextMessage) {
  REQUIRE_DIGITS();
  fake::failTrain = true;
  Result r = run({"--data", MGS_DIGITS_CSV});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "mgs_train_step failed (epoch 1, iteration 1): fake kernel failed "
                              "on purpose"))
      << r.err;
}

TEST_F(DriverMain, CommandLineErrorsExitTwo) {
  struct Case {
    std::vector<std::string> args;
    const char *message;
  };
  for (const Case &c : std::vector<Case>{
           {{"--frobnicate"}, "unknown option '--frobnicate'"},
           {{"--epoch", "2"}, "unknown option '--epoch' (did you mean '--epochs'?)"},
           {{"--lr-schedul", "cosine"},
            "unknown option '--lr-schedul' (did you mean '--lr-schedule'?)"},
           {{"--data"}, "option '--data' needs a value"},
           {{"--data", "x.csv", "--epochs", "ten"}, "bad value 'ten' for --epochs"},
           {{"--data", "x.csv", "--lr=-1"}, "bad value '-1' for --lr"},
           {{"--data", "x.csv", "--holdout", "1"}, "bad value '1' for --holdout"},
           {{"--data", "x.csv", "--momentum", "1.5"},
            "bad value '1.5' for --momentum (expected a number in [0, 1))"},
           {{"--data", "x.csv", "--lr-steps", "3,,5"}, "bad value '3,,5' for --lr-steps"},
           {{"--data", "x.csv", "--data-format", "png"}, "bad value 'png' for --data-format"},
           {{"--data", "x.csv", "--seed", "-3"}, "bad value '-3' for --seed"},
           {{"--epochs", "3"}, "--data is required to train"},
           {{"--data", "x.csv", "--input", "x=a.bin"}, "--input is for inference"},
           {{"--data", "x.csv", "--epochs", "2", "--epochs=3"}, "--epochs given twice"},
       }) {
    Result r = run(c.args);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
    EXPECT_TRUE(contains(r.err, "(model --help lists the options)")) << r.err;
    EXPECT_FALSE(contains(r.err, "usage: model [options]")) << r.err;
  }
  Result help = run({"--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_TRUE(contains(help.out, "--lr-steps E1,E2,...")) << help.out;
}

TEST_F(DriverMain, WeightsProblemsExitOne) {
  REQUIRE_DIGITS();
  std::string weights = dir / "model.weights";
  std::remove(weights.c_str());
  Result r = run({"--data", MGS_DIGITS_CSV});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "no weights file '" + weights +
                                  "' next to the executable (pass --weights FILE)"))
      << r.err;

  std::vector<Tensor> ts = initialWeights();
  ts[0].dims = {64, 10};
  ASSERT_TRUE(succeeded(writeWeights(dir / "other.weights", ts)));
  r = run({"--data", MGS_DIGITS_CSV, "--weights", dir / "other.weights"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "param 'fc.weight' has shape [64, 10] but the model expects "
                              "[10, 64]"))
      << r.err;
}

TEST_F(DriverMain, DataProblemsExitOne) {
  Result r = run({"--data", dir / "none.csv"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "data path '" + (dir / "none.csv") + "' does not exist")) << r.err;

  writeFile(dir / "few.csv", "1,2,3\n");
  r = run({"--data", dir / "few.csv"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "a sample has 2 values, but the model's input takes 64 per sample"))
      << r.err;

  std::string cifar(3073, '\0');
  writeFile(dir / "data_batch_1.bin", cifar.substr(0, 3000));
  r = run({"--data", dir / "data_batch_1.bin"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "CIFAR-10 file '" + (dir / "data_batch_1.bin") + "'")) << r.err;

  REQUIRE_DIGITS();
  fake::manifest = std::regex_replace(fake::kTrainManifest, std::regex("classes 10"), "classes 5");
  r = run({"--data", MGS_DIGITS_CSV});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "is out of range for the model's 5 classes")) << r.err;
  EXPECT_TRUE(contains(r.err, MGS_DIGITS_CSV)) << r.err;

  fake::manifest = fake::kTrainManifest;
  r = run({"--data", MGS_DIGITS_CSV, "--holdout", "0.99"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "18 training samples (after holding out 1779) are fewer than the "
                              "samples of one step, 32 (1 workers x batch size 32)"))
      << r.err;
}

TEST_F(DriverMain, BadManifestExitsOne) {
  fake::manifest = "mgs-manifest 3\nmode train\nbatch_size 0\n";
  Result r = run({"--data", "x.csv"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "the compiled model's manifest line 3: batch_size must be at least 1"))
      << r.err;
}

TEST_F(DriverMain, InferenceRunsTheEvalStepOnRawFiles) {
  fake::manifest = std::regex_replace(fake::kTrainManifest, std::regex("mode train"),
                                      "mode inference");
  fake::manifest = std::regex_replace(fake::manifest, std::regex("labels 1 32\nclasses 10\n"), "");
  std::vector<float> x(32 * 64);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 17) / 16;
  writeFile(dir / "x.bin", std::string(reinterpret_cast<const char *>(x.data()), x.size() * 4));

  Result r = run({"--input", "x=" + (dir / "x.bin"), "--output", "logits=" + (dir / "y.bin")});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output logits [32, 10] -> " + (dir / "y.bin"))) << r.out;
  std::string y = readFile(dir / "y.bin");
  ASSERT_EQ(y.size(), 32u * 10 * 4);
  std::vector<Tensor> w = initialWeights();
  std::vector<float> expected(320);
  fake::forward(w[0].data.data(), w[1].data.data(), x.data(), expected.data());
  EXPECT_EQ(std::memcmp(y.data(), expected.data(), y.size()), 0);

  // Missing, unknown, wrong-sized and training-only arguments.
  r = run({"--output", "logits=" + (dir / "y.bin")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "missing --input x=FILE ([32, 64] float32)")) << r.err;
  r = run({"--input", "x=" + (dir / "x.bin"), "--output", "probs=" + (dir / "y.bin")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "the model has no output 'probs'")) << r.err;
  r = run({"--input", "x=" + (dir / "x.bin"), "--data", "d.csv"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--data is a training option; this run is inference")) << r.err;
  writeFile(dir / "short.bin", "abcd");
  r = run({"--input", "x=" + (dir / "short.bin")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "input file '" + (dir / "short.bin") +
                                  "' has 4 bytes; input 'x' [32, 64] takes 8192 (float32)"))
      << r.err;
  r = run({"--input", "x=" + (dir / "missing.bin")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "cannot open input file '" + (dir / "missing.bin") + "'")) << r.err;
}

TEST_F(DriverMain, InferenceFlagOnATrainingModel) {
  std::vector<float> x(32 * 64, 0.5f);
  writeFile(dir / "x.bin", std::string(reinterpret_cast<const char *>(x.data()), x.size() * 4));
  Result r = run({"--inference", "--input", "x=" + (dir / "x.bin"), "--output",
                  "logits=" + (dir / "y.bin")});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(readFile(dir / "y.bin").size(), 32u * 10 * 4);
}

} // namespace

#include "Driver/Options.h"

#include <cstdlib>

namespace {

/// The launcher's environment for one test, restored after it.
struct LaunchEnv {
  explicit LaunchEnv(const char *rank, const char *contexts = nullptr) {
    setenv("OMPI_COMM_WORLD_RANK", rank, 1);
    if (contexts)
      setenv("OMPI_APP_CTX_NUM_PROCS", contexts, 1);
  }
  ~LaunchEnv() {
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("OMPI_APP_CTX_NUM_PROCS");
  }
};

TEST(LaunchedRank, EachCommandLineOfAnMpmdLaunchHasAFirstRank) {
  {
    LaunchEnv env("0");
    EXPECT_EQ(launchedRank(), 0);
    EXPECT_FALSE(launchedAsLaterRank());
  }
  {
    LaunchEnv env("3");
    EXPECT_EQ(launchedRank(), 3);
    EXPECT_TRUE(launchedAsLaterRank()); // one command line: rank 0 speaks for it
  }
  // mpirun -np 2 A : -np 3 B : -np 1 C: ranks 0, 2 and 5 are the first of theirs.
  for (auto [rank, later] :
       {std::pair{"1", true}, std::pair{"2", false}, std::pair{"4", true}, std::pair{"5", false}}) {
    LaunchEnv env(rank, "2 3 1");
    EXPECT_EQ(launchedAsLaterRank(), later) << "rank " << rank;
  }
}

} // namespace
