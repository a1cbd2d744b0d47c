//===- ManifestTest.cpp - The manifest parser -----------------------------===//

#include "TestUtil.h"
#include "mgsrt/contract.h"
#include "mgsrt/driver.h"

#include <cstdio>
#include <cstring>

#include <gtest/gtest.h>

using mgs::rt::Status;
using namespace mgs::rt::driver;
using namespace mgs::rt::driver::test;

namespace {

constexpr const char *kTrain = R"(mgs-manifest 3
mode train
batch_size 32
arena_bytes 123456
param conv.weight trainable 4 8 1 3 3
param bn.running_mean state 1 8
param fc.bias trainable 1 10
input x 4 32 1 28 28
output logits 2 32 10
labels 1 32
classes 10
)";

TEST(Manifest, ParsesTrainMode) {
  Manifest m;
  ASSERT_TRUE(succeeded(parseManifest(kTrain, m)));
  EXPECT_EQ(m.mode, Manifest::Mode::Train);
  EXPECT_EQ(m.batchSize, 32);
  EXPECT_EQ(m.arenaBytes, 123456u);
  ASSERT_EQ(m.params.size(), 3u);
  EXPECT_EQ(m.params[0].name, "conv.weight");
  EXPECT_TRUE(m.params[0].trainable);
  EXPECT_EQ(m.params[0].dims, (std::vector<int64_t>{8, 1, 3, 3}));
  EXPECT_EQ(m.params[0].numElements(), 72);
  EXPECT_FALSE(m.params[1].trainable);
  EXPECT_EQ(m.numTrainable(), 2);
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].dims, (std::vector<int64_t>{32, 1, 28, 28}));
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].name, "logits");
  EXPECT_EQ(m.labelDims, (std::vector<int64_t>{32}));
  EXPECT_EQ(m.classes, 10);
}

TEST(Manifest, ParsesLossOptions) {
  // A regression: float targets of the output's shape, no classes.
  Manifest m;
  ASSERT_TRUE(succeeded(parseManifest("mgs-manifest 3\nmode train\nbatch_size 4\narena_bytes 0\n"
                                      "input x 2 4 3\noutput y 3 4 2 5\nlabels 3 4 2 5\n"
                                      "loss smooth_l1 0.5\n",
                                      m)));
  EXPECT_EQ(m.loss, "smooth_l1");
  EXPECT_EQ(m.lossKind, MGSRT_LOSS_SMOOTH_L1);
  EXPECT_EQ(m.smoothL1Beta, 0.5);
  EXPECT_EQ(m.labelDims, (std::vector<int64_t>{4, 2, 5}));
  EXPECT_EQ(m.ignoreIndex, -100); // the default
  // The cross-entropy with another ignored label.
  ASSERT_TRUE(succeeded(parseManifest(
      std::string(kTrain) + "ignore_index -1\n", m)));
  EXPECT_TRUE(m.loss.empty());
  EXPECT_EQ(m.lossKind, -1);
  EXPECT_EQ(m.ignoreIndex, -1);
  // Multi-label with a pos_weight per label (the labels' last axis).
  Manifest b;
  ASSERT_TRUE(succeeded(parseManifest("mgs-manifest 3\nmode train\nbatch_size 4\narena_bytes 0\n"
                                      "input x 2 4 3\noutput y 2 4 3\nlabels 2 4 3\n"
                                      "loss bce_with_logits\npos_weight 0.5 2 0\n",
                                      b)));
  EXPECT_EQ(b.lossKind, MGSRT_LOSS_BCE_WITH_LOGITS);
  EXPECT_EQ(b.posWeight, (std::vector<float>{0.5f, 2.0f, 0.0f}));
  // A loss the graph computes: its first output a scalar, labels of rank 0
  // (unread), no classes.
  Manifest g;
  ASSERT_TRUE(succeeded(parseManifest("mgs-manifest 3\nmode train\nbatch_size 4\narena_bytes 0\n"
                                      "input x 2 4 3\ninput t 2 4 2\noutput y 0\nlabels 0\n"
                                      "loss value\n",
                                      g)));
  EXPECT_EQ(g.lossKind, MGSRT_LOSS_VALUE);
  EXPECT_TRUE(g.labelDims.empty());
  EXPECT_EQ(g.inputs.size(), 2u);
}

TEST(Manifest, ParsesInferenceModeWithoutLabels) {
  Manifest m;
  ASSERT_TRUE(
      succeeded(parseManifest("mgs-manifest 3\r\nmode inference\n\nbatch_size 1\narena_bytes 0\n"
                              "param w trainable 0\ninput a 2 1 3\ninput b 0\noutput y 1 1",
                              m)));
  EXPECT_EQ(m.mode, Manifest::Mode::Inference);
  EXPECT_EQ(m.inputs.size(), 2u);
  EXPECT_TRUE(m.params[0].dims.empty());
  EXPECT_EQ(m.params[0].numElements(), 1);
  EXPECT_TRUE(m.labelDims.empty());
}

TEST(Manifest, ParsesSparseCollectives) {
  Manifest m;
  ASSERT_TRUE(succeeded(
      parseManifest(std::string(kTrain) + "target cuda\nsparse_collectives gtopk sparse-allreduce\n",
                    m)));
  EXPECT_TRUE(m.cuda);
  EXPECT_EQ(m.sparseCollectives, (std::vector<std::string>{"gtopk", "sparse-allreduce"}));
}

TEST(Manifest, ParsesPrecision) {
  Manifest plain, bf16, f16;
  ASSERT_TRUE(succeeded(parseManifest(kTrain, plain)));
  EXPECT_EQ(plain.precision, MGSRT_PRECISION_F32);
  ASSERT_TRUE(succeeded(parseManifest(std::string(kTrain) + "precision bf16\n", bf16)));
  EXPECT_EQ(bf16.precision, MGSRT_PRECISION_BF16);
  ASSERT_TRUE(succeeded(parseManifest(std::string(kTrain) + "precision f16\n", f16)));
  EXPECT_EQ(f16.precision, MGSRT_PRECISION_F16);
}

TEST(Manifest, ParsesAccumulate) {
  Manifest plain, four;
  ASSERT_TRUE(succeeded(parseManifest(kTrain, plain)));
  EXPECT_EQ(plain.accumulate, 1);
  ASSERT_TRUE(succeeded(parseManifest(std::string(kTrain) + "accumulate 4\n", four)));
  EXPECT_EQ(four.accumulate, 4);
}

TEST(Manifest, ParsesIndexRows) {
  Manifest m;
  ASSERT_TRUE(succeeded(parseManifest("mgs-manifest 3\nmode train\nbatch_size 4\n"
                                      "arena_bytes 16\nindex_input ids 2 4 12\n"
                                      "index_rows ids 50 embed.weight\noutput y 2 48 50\n"
                                      "labels 1 48\nclasses 50\n",
                                      m)));
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_TRUE(m.inputs[0].int64);
  EXPECT_EQ(m.inputs[0].indexRows, 50);
  EXPECT_EQ(m.inputs[0].indexTable, "embed.weight");
}

TEST(Manifest, ParsesIndexRange) {
  // Labels read as numbers (a scatter along 10 classes) beside a gather of 10 rows.
  Manifest m;
  ASSERT_TRUE(succeeded(parseManifest("mgs-manifest 3\nmode train\nbatch_size 4\n"
                                      "arena_bytes 16\nindex_input y 1 4\n"
                                      "index_rows y 10 -\nindex_range y 0 9\noutput l 2 4 10\n"
                                      "labels 1 4\nclasses 10\n",
                                      m)));
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_TRUE(m.inputs[0].hasIndexRange);
  EXPECT_EQ(m.inputs[0].indexLo, 0);
  EXPECT_EQ(m.inputs[0].indexHi, 9);
  EXPECT_FALSE(outsideIndexRange(m.inputs[0], 9));
  EXPECT_FALSE(beyondIndexRows(m.inputs[0], -1));
  EXPECT_TRUE(outsideIndexRange(m.inputs[0], -1)); // within the rows, not the range
  EXPECT_TRUE(beyondIndexRows(m.inputs[0], 10));
  EXPECT_TRUE(outsideIndexRange(m.inputs[0], 10));
  EXPECT_EQ(describeIndexRange(m.inputs[0]),
            "[0, 9], the range in which the model reads its input 'y' as numbers");
}

TEST(Manifest, ParsesLabelShape) {
  // Rows of (N, C, 2, 3) scores (mgsc --class-axis): 24 labels, their positions (4, 2, 3).
  Manifest m, none;
  ASSERT_TRUE(succeeded(parseManifest("mgs-manifest 3\nmode train\nbatch_size 4\n"
                                      "arena_bytes 16\ninput x 2 4 5\noutput y 2 24 3\n"
                                      "labels 1 24\nlabel_shape 3 4 2 3\nclasses 3\n",
                                      m)));
  EXPECT_EQ(m.labelShape, (std::vector<int64_t>{4, 2, 3}));
  ASSERT_TRUE(succeeded(parseManifest(kTrain, none)));
  EXPECT_TRUE(none.labelShape.empty());
}

TEST(Manifest, FormatsShapes) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({10, 64}), "[10, 64]");
}

struct BadManifest {
  const char *text;
  const char *message;
};

class ManifestErrors : public ::testing::TestWithParam<BadManifest> {};

TEST_P(ManifestErrors, NamesTheProblem) {
  Manifest m;
  Status err = parseManifest(GetParam().text, m);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, GetParam().message);
}

#define HEAD "mgs-manifest 3\nmode train\nbatch_size 4\narena_bytes 16\n"
#define TAIL "output y 2 4 3\nlabels 1 4\nclasses 3\n"

INSTANTIATE_TEST_SUITE_P(
    Manifest, ManifestErrors,
    ::testing::Values(
        BadManifest{"", "manifest: missing 'mgs-manifest 3' line"},
        BadManifest{"mode train\n",
                    "manifest line 1: expected 'mgs-manifest 3' first: 'mode train'"},
        BadManifest{"mgs-manifest 4\n", "manifest line 1: unsupported manifest version (this "
                                        "runtime reads version 3): 'mgs-manifest 4'"},
        BadManifest{"mgs-manifest 2\n", "manifest line 1: this model was compiled by an older mgsc "
                                        "(manifest version 2); recompile it: 'mgs-manifest 2'"},
        BadManifest{HEAD "mode train\n" TAIL, "manifest line 5: duplicate 'mode': 'mode train'"},
        BadManifest{"mgs-manifest 3\nmode training\n",
                    "manifest line 2: mode must be 'train' or 'inference': 'mode training'"},
        BadManifest{"mgs-manifest 3\nbatch_size 0\n",
                    "manifest line 2: batch_size must be at least 1, got 0: 'batch_size 0'"},
        BadManifest{"mgs-manifest 3\nbatch_size x\n",
                    "manifest line 2: batch_size 'x' is not an integer: 'batch_size x'"},
        BadManifest{"mgs-manifest 3\nbatch_size 4 5\n",
                    "manifest line 2: expected 1 value after 'batch_size': 'batch_size 4 5'"},
        BadManifest{HEAD "widget 3\n", "manifest line 5: unknown item 'widget': 'widget 3'"},
        BadManifest{HEAD "param w trainable 2 3\n",
                    "manifest line 5: rank 2 but 1 dimensions: 'param w trainable 2 3'"},
        BadManifest{
            HEAD "param w trainable 1 -3\n",
            "manifest line 5: dimension must be at least 0, got -3: 'param w trainable 1 -3'"},
        BadManifest{HEAD "param w frozen 1 3\n", "manifest line 5: expected 'trainable' or "
                                                 "'state', got 'frozen': 'param w frozen 1 3'"},
        BadManifest{HEAD "param w trainable\n",
                    "manifest line 5: missing the rank: 'param w trainable'"},
        BadManifest{HEAD "param w trainable 1 3\nparam w state 1 3\n",
                    "manifest line 6: duplicate param 'w': 'param w state 1 3'"},
        BadManifest{HEAD "input\n", "manifest line 5: missing the name: 'input'"},
        BadManifest{HEAD "input x 1 4\nindex_rows x 10 e\n",
                    "manifest line 6: index_rows names 'x', which is not an index_input before "
                    "it: 'index_rows x 10 e'"},
        BadManifest{HEAD "index_input x 1 4\nindex_rows x 0 e\n",
                    "manifest line 6: index_rows must be at least 1, got 0: 'index_rows x 0 e'"},
        BadManifest{HEAD "index_input x 1 4\nindex_rows x 10 e\nindex_rows x 9 e\n",
                    "manifest line 7: index_rows given twice for 'x': 'index_rows x 9 e'"},
        BadManifest{HEAD "index_input x 1 4\nindex_rows x 10\n",
                    "manifest line 6: expected 3 values after 'index_rows': 'index_rows x 10'"},
        BadManifest{HEAD "input x 1 4\nindex_range x 0 9\n",
                    "manifest line 6: index_range names 'x', which is not an index_input before "
                    "it: 'index_range x 0 9'"},
        BadManifest{HEAD "index_input x 1 4\nindex_range x 9 0\n",
                    "manifest line 6: index_range needs two integers LO <= HI, got '9' and '0': "
                    "'index_range x 9 0'"},
        BadManifest{HEAD "index_input x 1 4\nindex_range x 0 9\nindex_range x 0 8\n",
                    "manifest line 7: index_range given twice for 'x': 'index_range x 0 8'"},
        BadManifest{HEAD "output y 2 4 3\nlabels 2 4 1\nclasses 3\n",
                    "manifest line 6: the cross-entropy's labels must have rank 1: 'labels 2 4 1'"},
        BadManifest{HEAD "output y 2 8 3\nlabels 1 8\nlabel_shape 1 8\nclasses 3\n",
                    "manifest line 7: label_shape must have rank 2 or more (N and the "
                    "positions): 'label_shape 1 8'"},
        BadManifest{HEAD "output y 2 8 3\nlabels 1 8\nlabel_shape 2 4 3\nclasses 3\n",
                    "manifest: label_shape must be the batch size and the positions of the "
                    "cross-entropy's rows, as many as its labels"},
        BadManifest{HEAD "output y 2 8 3\nlabels 1 8\nlabel_shape 2 2 4\nclasses 3\n",
                    "manifest: label_shape must be the batch size and the positions of the "
                    "cross-entropy's rows, as many as its labels"},
        BadManifest{HEAD "output y 2 4 3\nlabels 2 4 3\nloss mse\nclasses 3\n",
                    "manifest: 'classes' is for the cross-entropy, not loss mse"},
        BadManifest{HEAD "output y 0\nlabels 0\nclasses 3\n",
                    "manifest line 6: labels must have rank 1 or more: 'labels 0'"},
        BadManifest{HEAD "output y 0\nlabels 1 4\nloss value\n",
                    "manifest line 6: labels must have rank 0 for loss value: 'labels 1 4'"},
        BadManifest{HEAD "loss hinge\n",
                    "manifest line 5: loss must be mse, l1, smooth_l1 BETA, bce_with_logits or "
                    "value, got 'hinge': 'loss hinge'"},
        BadManifest{HEAD "loss smooth_l1 -1\n",
                    "manifest line 5: smooth_l1's beta must be a finite number >= 0, got '-1': "
                    "'loss smooth_l1 -1'"},
        BadManifest{HEAD "loss smooth_l1\n",
                    "manifest line 5: expected 2 values after 'loss': 'loss smooth_l1'"},
        BadManifest{HEAD "pos_weight\n",
                    "manifest line 5: pos_weight needs at least one weight: 'pos_weight'"},
        BadManifest{HEAD "pos_weight 1 -2\n",
                    "manifest line 5: pos_weight 1 must be a finite number >= 0, got '-2': "
                    "'pos_weight 1 -2'"},
        BadManifest{HEAD "pos_weight 1 nan\n",
                    "manifest line 5: pos_weight 1 must be a finite number >= 0, got 'nan': "
                    "'pos_weight 1 nan'"},
        BadManifest{HEAD "output y 2 4 3\nlabels 2 4 3\nloss mse\npos_weight 1 1 1\n",
                    "manifest: pos_weight (3 values) needs loss bce_with_logits and one value "
                    "per position of the labels' last axis (3)"},
        BadManifest{HEAD "output y 2 4 3\nlabels 2 4 3\nloss bce_with_logits\npos_weight 1 1\n",
                    "manifest: pos_weight (2 values) needs loss bce_with_logits and one value "
                    "per position of the labels' last axis (3)"},
        BadManifest{HEAD "ignore_index x\n",
                    "manifest line 5: ignore_index must be an integer, got 'x': 'ignore_index x'"},
        BadManifest{HEAD "output y 1 4\nlabels 1 5\nclasses 3\n",
                    "manifest line 6: labels dimension 5 is not a multiple of the batch size 4: "
                    "'labels 1 5'"},
        BadManifest{"mgs-manifest 3\nbatch_size 4\narena_bytes 16\n" TAIL,
                    "manifest: missing 'mode' line"},
        BadManifest{"mgs-manifest 3\nmode train\narena_bytes 16\n" TAIL,
                    "manifest: missing 'batch_size' line"},
        BadManifest{"mgs-manifest 3\nmode train\nbatch_size 4\n" TAIL,
                    "manifest: missing 'arena_bytes' line"},
        BadManifest{HEAD "labels 1 4\nclasses 3\n", "manifest: missing 'output' line"},
        BadManifest{HEAD "output y 2 4 3\nclasses 3\n", "manifest: missing 'labels' line"},
        BadManifest{HEAD "output y 2 4 3\nlabels 1 4\n", "manifest: missing 'classes' line"},
        BadManifest{HEAD "sparse_collectives\n",
                    "manifest line 5: sparse_collectives needs at least one name: "
                    "'sparse_collectives'"},
        BadManifest{HEAD "sparse_collectives gtopk ring\n",
                    "manifest line 5: sparse_collectives: 'ring' is not gtopk or "
                    "sparse-allreduce: 'sparse_collectives gtopk ring'"},
        BadManifest{HEAD "accumulate 1\n",
                    "manifest line 5: accumulate must be at least 2, got 1: 'accumulate 1'"},
        BadManifest{HEAD "accumulate 1048577\n",
                    "manifest line 5: accumulate must be at most 1048576, got 1048577: "
                    "'accumulate 1048577'"},
        BadManifest{HEAD "accumulate 2\naccumulate 2\n",
                    "manifest line 6: duplicate 'accumulate': 'accumulate 2'"},
        BadManifest{HEAD "precision f32\n",
                    "manifest line 5: precision must be bf16 or f16 (float32 has no line): "
                    "'precision f32'"},
        BadManifest{HEAD TAIL "mgs-manifest 3\n",
                    "manifest line 8: duplicate 'mgs-manifest': 'mgs-manifest 3'"}));

// The checksum line (what mgsc writes last) is checked: a patched arena size
// is refused before anything is allocated from it.
TEST(Manifest, ChecksumLine) {
  std::string text = kTrain;
  char sum[40];
  std::snprintf(sum, sizeof sum, "checksum %016llx\n",
                static_cast<unsigned long long>(mgs::contract::manifest::checksum(text)));
  Manifest m;
  ASSERT_TRUE(succeeded(parseManifest(text + sum, m)));
  EXPECT_EQ(m.arenaBytes, 123456u);

  std::string patched = text + sum;
  patched.replace(patched.find("123456"), 6, "000016");
  Status err = parseManifest(patched, m);
  EXPECT_EQ(err.message, "manifest line 12: the manifest does not match its checksum: the "
                         "executable was changed after mgsc built it (recompile it): '" +
                             std::string(sum, std::strlen(sum) - 1) + "'");
  err = parseManifest(text + sum + "classes 10\n", m);
  EXPECT_EQ(err.message, "manifest line 13: a line after the checksum: 'classes 10'");
  err = parseManifest(text + "checksum 12\n", m);
  EXPECT_EQ(err.message,
            "manifest line 12: expected 16 hex digits after 'checksum': 'checksum 12'");
}

} // namespace
