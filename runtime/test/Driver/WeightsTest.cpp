//===- WeightsTest.cpp - Weights files and checkpoints --------------------===//

#include "Driver/FileIO.h"
#include "TestUtil.h"
#include "mgsrt/driver.h"

#include <cmath>
#include <zlib.h>

using mgs::rt::Status;
using namespace mgs::rt::driver;
using namespace mgs::rt::driver::test;

namespace {

std::vector<Tensor> sampleTensors() {
  return {{"fc.weight", {2, 3}, {1, 2, 3, 4, 5, 6}},
          {"fc.bias", {2}, {-1.5f, 0.25f}},
          {"scalar", {}, {7}}};
}

Manifest sampleManifest() {
  Manifest m;
  EXPECT_TRUE(
      succeeded(parseManifest("mgs-manifest 3\nmode inference\nbatch_size 1\narena_bytes 0\n"
                              "param scalar state 0\nparam fc.weight trainable 2 2 3\n"
                              "param fc.bias trainable 1 2\noutput y 2 1 2\n",
                              m)));
  return m;
}

TEST(Weights, RoundTripsAndMatchesTheManifestInParamOrder) {
  TempDir dir;
  ASSERT_TRUE(succeeded(writeWeights(dir / "w", sampleTensors())));
  std::string bytes = readFile(dir / "w");
  EXPECT_EQ(bytes.substr(0, 8), "MGSW0002");
  // 8 magic + 8 count + (4+9+4+16+24) + (4+7+4+8+8) + (4+6+4+0+4) + 4 CRC
  EXPECT_EQ(bytes.size(), 8u + 8 + 57 + 31 + 18 + 4);

  std::vector<Tensor> ts;
  ASSERT_TRUE(succeeded(readWeights(dir / "w", ts)));
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts[0].name, "fc.weight");
  EXPECT_EQ(ts[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ts[1].data, (std::vector<float>{-1.5f, 0.25f}));
  EXPECT_TRUE(ts[2].dims.empty());

  ASSERT_TRUE(succeeded(matchWeights(sampleManifest(), dir / "w", ts)));
  EXPECT_EQ(ts[0].name, "scalar");
  EXPECT_EQ(ts[1].name, "fc.weight");
  EXPECT_EQ(ts[2].name, "fc.bias");
}

TEST(Weights, MissingParamIsAnError) {
  std::vector<Tensor> ts = sampleTensors();
  ts.erase(ts.begin() + 1);
  Status err = matchWeights(sampleManifest(), "m.weights", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "weights file 'm.weights' has no tensor for param 'fc.bias' (shape [2])");
}

// mgsc leaves the error-feedback residuals out (they start at zero): a
// weights file may, a checkpoint may not.
TEST(Weights, AResidualLeftOutStartsAtZero) {
  Manifest m;
  ASSERT_TRUE(succeeded(
      parseManifest("mgs-manifest 3\nmode inference\nbatch_size 1\narena_bytes 0\n"
                    "param fc.weight trainable 2 2 3\nparam fc.bias trainable 1 2\n"
                    "param mgs.residual/fc.weight..fc.bias state 1 8\noutput y 2 1 2\n",
                    m)));
  std::vector<Tensor> ts = sampleTensors();
  ts.pop_back(); // "scalar"
  std::vector<Tensor> kept = ts;
  ASSERT_TRUE(succeeded(matchWeights(m, "m.weights", ts)));
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts[2].name, "mgs.residual/fc.weight..fc.bias");
  EXPECT_EQ(ts[2].dims, (std::vector<int64_t>{8}));
  EXPECT_EQ(ts[2].data, std::vector<float>(8, 0.0f));
  // One the file holds is read as it is (--save-weights writes them).
  ts = kept;
  ts.push_back({"mgs.residual/fc.weight..fc.bias", {8}, {1, 2, 3, 4, 5, 6, 7, 8}});
  ASSERT_TRUE(succeeded(matchWeights(m, "m.weights", ts)));
  EXPECT_EQ(ts[2].data, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  // A checkpoint holds every param: one left out is an error there.
  ts = kept;
  Status err = matchParams(m, "checkpoint 'c'", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "checkpoint 'c' has no tensor for param "
                         "'mgs.residual/fc.weight..fc.bias' (shape [8])");
  // Any other param left out is an error in a weights file too.
  ts = kept;
  ts.pop_back(); // fc.bias
  EXPECT_FALSE(matchWeights(m, "m.weights", ts).ok());
}

TEST(Weights, ShapeMismatchNamesBothShapes) {
  std::vector<Tensor> ts = sampleTensors();
  ts[0].dims = {3, 2};
  Status err = matchWeights(sampleManifest(), "m.weights", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "weights file 'm.weights': param 'fc.weight' has shape [3, 2] but the model "
            "expects [2, 3]");
}

TEST(Weights, ExtraTensorIsAnError) {
  std::vector<Tensor> ts = sampleTensors();
  ts.push_back({"extra", {1}, {0}});
  Status err = matchWeights(sampleManifest(), "m.weights", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "weights file 'm.weights' has tensor 'extra', which is not a param of the model");
}

TEST(Weights, FileErrors) {
  TempDir dir;
  Status err;
  std::vector<Tensor> ts;
  err = readWeights(dir / "missing", ts);
  EXPECT_EQ(err.code, MGSRT_ERROR_IO); // the system cannot open it
  EXPECT_EQ(err.message,
            "cannot open weights file '" + (dir / "missing") + "': No such file or directory");

  err = readWeights(dir.path(), ts);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("it is a directory"), std::string::npos) << err.message;

  writeFile(dir / "magic", "NOTWEIGHTS0000000000");
  err = readWeights(dir / "magic", ts);
  EXPECT_EQ(err.code, MGSRT_ERROR_INVALID_ARGUMENT); // it holds something else
  EXPECT_EQ(err.message, "weights file '" + (dir / "magic") +
                             "': not a weights file (the magic is not \"MGSW0002\" or "
                             "\"MGSW0001\")");

  ASSERT_TRUE(succeeded(writeWeights(dir / "good", sampleTensors())));
  std::string good = readFile(dir / "good");
  for (size_t cut : {size_t(3), size_t(12), size_t(20), good.size() - 1}) {
    writeFile(dir / "cut", good.substr(0, cut));
    err = readWeights(dir / "cut", ts);
    EXPECT_FALSE(err.ok()) << cut;
    EXPECT_NE(err.message.find("weights file '" + (dir / "cut") + "'"), std::string::npos)
        << err.message;
    EXPECT_NE(err.message.find("truncated"), std::string::npos) << err.message;
  }

  writeFile(dir / "trailing", good + "x");
  err = readWeights(dir / "trailing", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("1 unexpected bytes after the last tensor"), std::string::npos)
      << err.message;

  std::vector<Tensor> twice = sampleTensors();
  twice.push_back(twice[0]);
  ASSERT_TRUE(succeeded(writeWeights(dir / "twice", twice)));
  err = readWeights(dir / "twice", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("tensor 'fc.weight' appears twice"), std::string::npos) << err.message;

  // A huge count or dimension in a small file is caught before allocating.
  std::string huge = "MGSW0001";
  append<uint64_t>(huge, 1);
  append<uint32_t>(huge, 1);
  huge += "w";
  append<uint32_t>(huge, 2);
  append<int64_t>(huge, int64_t(1) << 40);
  append<int64_t>(huge, int64_t(1) << 40);
  writeFile(dir / "huge", huge);
  err = readWeights(dir / "huge", ts);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("does not fit in the file"), std::string::npos) << err.message;
}

TEST(Weights, WriteErrorNamesTheFile) {
  Status err = writeWeights("/nonexistent-dir/x.weights", sampleTensors());
  EXPECT_EQ(err.code, MGSRT_ERROR_IO);
  EXPECT_NE(err.message.find("/nonexistent-dir/x.weights"), std::string::npos) << err.message;
}

// A flipped bit is found by the CRC; the first version (no CRC) is still read;
// a NaN or an infinity is refused naming the tensor and the element.
TEST(Weights, ChecksumVersionOneAndFiniteness) {
  TempDir dir;
  ASSERT_TRUE(succeeded(writeWeights(dir / "w", sampleTensors())));
  std::string bytes = readFile(dir / "w");
  std::vector<Tensor> ts;
  std::string flipped = bytes;
  flipped[52] ^= 0x10; // in fc.weight's data (from byte 49)
  writeFile(dir / "flipped", flipped);
  Status err = readWeights(dir / "flipped", ts);
  EXPECT_EQ(err.message, "weights file '" + (dir / "flipped") +
                             "': corrupt: its CRC-32 does not match its contents (the file was "
                             "changed after it was written)");
  std::string v1 = "MGSW0001" + bytes.substr(8, bytes.size() - 12);
  writeFile(dir / "v1", v1);
  ASSERT_TRUE(succeeded(readWeights(dir / "v1", ts)));
  EXPECT_EQ(ts[1].data, (std::vector<float>{-1.5f, 0.25f}));

  std::vector<Tensor> bad = sampleTensors();
  bad[1].data[1] = std::nanf("");
  ASSERT_TRUE(succeeded(writeWeights(dir / "nan", bad)));
  err = readWeights(dir / "nan", ts);
  EXPECT_EQ(err.code, MGSRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(err.message, "weights file '" + (dir / "nan") +
                             "': tensor 'fc.bias' holds nan at element 1 (not finite: a "
                             "diverged or corrupt file)");
}

TEST(Checkpoint, RoundTrips) {
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.seed = 42;
  c.holdout = 0.2;
  c.numSamples = 1797;
  c.epochsDone = 3;
  c.iterationsDone = 132;
  c.rngState = 0x123456789abcdefull;
  c.runId = 0xfeedface12345678ull;
  c.stepsSkipped = 7;
  c.lossScale = 8192.0;
  c.lossScaleSteps = 1999;
  c.itersIntoEpoch = 12;
  c.itersPerEpoch = 44;
  c.epochLossSum = 3.25;
  c.epochSkipped = 1;
  c.options = {{"--lr", "0.05"}, {"--augment", "crop=4,flip"}}; // 52 bytes in the file
  c.params = sampleTensors();
  c.velocities = {sampleTensors()[0]};
  Status err;
  ASSERT_TRUE(succeeded(writeCheckpoint(dir / "ck", c)));
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "ck", r)));
  EXPECT_EQ(r.manifest, c.manifest);
  EXPECT_EQ(r.version, 7);
  EXPECT_TRUE(r.hasOptions);
  EXPECT_EQ(r.options, c.options);
  EXPECT_EQ(r.runId, c.runId);
  EXPECT_EQ(r.itersIntoEpoch, 12u);
  EXPECT_EQ(r.itersPerEpoch, 44u);
  EXPECT_EQ(r.epochLossSum, 3.25);
  EXPECT_EQ(r.epochSkipped, 1u);
  EXPECT_EQ(r.stepsSkipped, 7u);
  EXPECT_EQ(r.lossScale, 8192.0);
  EXPECT_EQ(r.lossScaleSteps, 1999u);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.holdout, 0.2);
  EXPECT_EQ(r.numSamples, 1797u);
  EXPECT_EQ(r.epochsDone, 3u);
  EXPECT_EQ(r.iterationsDone, 132u);
  EXPECT_EQ(r.rngState, c.rngState);
  ASSERT_EQ(r.params.size(), 3u);
  EXPECT_EQ(r.params[1].data, c.params[1].data);
  ASSERT_EQ(r.velocities.size(), 1u);
  EXPECT_EQ(r.velocities[0].name, "fc.weight");

  std::string bytes = readFile(dir / "ck");
  writeFile(dir / "cut", bytes.substr(0, bytes.size() - 2));
  err = readCheckpoint(dir / "cut", r);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("checkpoint '" + (dir / "cut") + "'"), std::string::npos)
      << err.message;
  EXPECT_NE(err.message.find("truncated"), std::string::npos) << err.message;

  ASSERT_TRUE(succeeded(writeWeights(dir / "w", sampleTensors())));
  err = readCheckpoint(dir / "w", r);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("not a checkpoint"), std::string::npos) << err.message;

  // One flipped bit anywhere (here in a velocity's data) is found.
  std::string flipped = bytes;
  flipped[bytes.size() - 52 - 20] ^= 0x04;
  writeFile(dir / "flipped", flipped);
  err = readCheckpoint(dir / "flipped", r);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "checkpoint '" + (dir / "flipped") +
                "': corrupt: its CRC-32 does not match its contents (the file was changed "
                "after it was written)");
  // A manifest length beyond the file.
  std::string longManifest = bytes;
  longManifest[8 + 5] = 0x7f;
  writeFile(dir / "long", longManifest);
  err = readCheckpoint(dir / "long", r);
  EXPECT_FALSE(err.ok());
  EXPECT_NE(err.message.find("does not fit in the file"), std::string::npos) << err.message;
}

/// `text` with a new CRC-32 in place of its last 4 bytes.
std::string recrc(std::string text) {
  text.resize(text.size() - 4);
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef *>(text.data()), static_cast<uInt>(text.size())));
  return text + std::string(reinterpret_cast<const char *>(&crc), 4);
}

TEST(Checkpoint, RefusesCorruptRecordedOptions) {
  TempDir dir;
  Checkpoint c, r;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.params = sampleTensors();
  c.options = {{"--lr", "0.05"}};
  ASSERT_TRUE(succeeded(writeCheckpoint(dir / "ck", c)));
  const std::string bytes = readFile(dir / "ck");
  // The options: count (8), "--lr" (4 + 4), "0.05" (4 + 4), then the CRC.
  const size_t count = bytes.size() - 4 - 24;
  std::string many = bytes;
  many[count + 1] = 0x10; // 4097 options
  writeFile(dir / "many", recrc(many));
  Status err = readCheckpoint(dir / "many", r);
  EXPECT_EQ(err.message, "checkpoint '" + (dir / "many") + "': it records 4097 options (corrupt?)");
  std::string longValue = bytes;
  longValue[count + 16 + 2] = 0x01; // the value's length 65540
  writeFile(dir / "long", recrc(longValue));
  err = readCheckpoint(dir / "long", r);
  EXPECT_NE(err.message.find("a recorded option's value's length 65540 does not fit in the file "
                             "(corrupt?)"),
            std::string::npos)
      << err.message;
}

TEST(Checkpoint, ReadsTheFirstFormat) {
  // MGSCKPT1: the manifest's FNV-1a hash in place of its text, no CRC.
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.seed = 5;
  c.params = sampleTensors();
  ASSERT_TRUE(succeeded(writeCheckpoint(dir / "v2", c)));
  std::string v2 = readFile(dir / "v2");
  const uint64_t hash = fnv1a64(c.manifest);
  // (What MGSCKPT7 writes, less its run id, skipped steps, loss scale, place
  // in the epoch, options and CRC.)
  std::string v1 = "MGSCKPT1" + std::string(reinterpret_cast<const char *>(&hash), 8) +
                   v2.substr(16 + c.manifest.size(), v2.size() - 16 - c.manifest.size() - 76);
  writeFile(dir / "v1", v1);
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "v1", r)));
  EXPECT_TRUE(r.manifest.empty());
  EXPECT_EQ(r.version, 1);
  EXPECT_EQ(r.manifestHash, hash);
  EXPECT_EQ(r.seed, 5u);
  ASSERT_EQ(r.params.size(), 3u);
  EXPECT_EQ(r.params[2].data, c.params[2].data);
}

/// `c` (no options) written as MGSCKPT7, its options' count and its last
/// `drop` bytes of MGSCKPT6 before the CRC cut, under `magic`, with a new
/// CRC: the earlier formats.
std::string olderFormat(const TempDir &dir, const Checkpoint &c, const char *magic, size_t drop) {
  EXPECT_TRUE(c.options.empty());
  EXPECT_TRUE(succeeded(writeCheckpoint(dir / "current", c)));
  std::string current = readFile(dir / "current");
  return recrc(magic + current.substr(8, current.size() - 8 - 8 - drop));
}

TEST(Checkpoint, ReadsTheSixthFormat) {
  // MGSCKPT6: MGSCKPT7 without the options (the run's are unknown).
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.itersIntoEpoch = 5;
  c.itersPerEpoch = 9;
  c.params = sampleTensors();
  writeFile(dir / "v6", olderFormat(dir, c, "MGSCKPT6", 0));
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "v6", r)));
  EXPECT_EQ(r.version, 6);
  EXPECT_FALSE(r.hasOptions);
  EXPECT_TRUE(r.options.empty());
  EXPECT_EQ(r.itersIntoEpoch, 5u);
}

TEST(Checkpoint, ReadsTheFifthFormat) {
  // MGSCKPT5: MGSCKPT6 without the place in the epoch (read as 0: written at
  // an epoch's end).
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.epochsDone = 2;
  c.lossScale = 512.0;
  c.itersIntoEpoch = 5;
  c.itersPerEpoch = 9;
  c.epochLossSum = 1.5;
  c.params = sampleTensors();
  writeFile(dir / "v5", olderFormat(dir, c, "MGSCKPT5", 32));
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "v5", r)));
  EXPECT_EQ(r.version, 5);
  EXPECT_EQ(r.lossScale, 512.0);
  EXPECT_EQ(r.itersIntoEpoch, 0u);
  EXPECT_EQ(r.itersPerEpoch, 0u);
  EXPECT_EQ(r.epochLossSum, 0.0);
}

TEST(Checkpoint, RefusesAPlaceOutsideItsEpoch) {
  TempDir dir;
  Checkpoint c, r;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.params = sampleTensors();
  c.itersIntoEpoch = 44;
  c.itersPerEpoch = 44;
  ASSERT_TRUE(succeeded(writeCheckpoint(dir / "past", c)));
  Status err = readCheckpoint(dir / "past", r);
  EXPECT_EQ(err.message, "checkpoint '" + (dir / "past") +
                             "': it was written after iteration 44 of an epoch of 44 (corrupt?)");
  c.itersIntoEpoch = 3;
  c.epochSkipped = 4;
  ASSERT_TRUE(succeeded(writeCheckpoint(dir / "skips", c)));
  err = readCheckpoint(dir / "skips", r);
  EXPECT_NE(err.message.find("its epoch's loss so far is not that of its iterations (corrupt?)"),
            std::string::npos)
      << err.message;
}

TEST(Checkpoint, ReadsTheFourthFormat) {
  // MGSCKPT4: MGSCKPT5 without the loss scale and its steps (read as 0: no
  // dynamic scale).
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.stepsSkipped = 5;
  c.lossScale = 512.0;
  c.lossScaleSteps = 3;
  c.params = sampleTensors();
  writeFile(dir / "v4", olderFormat(dir, c, "MGSCKPT4", 48));
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "v4", r)));
  EXPECT_EQ(r.version, 4);
  EXPECT_EQ(r.stepsSkipped, 5u);
  EXPECT_EQ(r.lossScale, 0.0);
  EXPECT_EQ(r.lossScaleSteps, 0u);
  // A loss scale that is neither 0 nor a positive number is a corrupt file.
  c.lossScale = -2.0;
  ASSERT_TRUE(succeeded(writeCheckpoint(dir / "bad", c)));
  Status err = readCheckpoint(dir / "bad", r);
  EXPECT_NE(err.message.find("the loss scale -2.000000 is neither 0 nor a positive number "
                             "(corrupt?)"),
            std::string::npos)
      << err.message;
}

TEST(Checkpoint, ReadsTheThirdFormat) {
  // MGSCKPT3: MGSCKPT4 without the skipped steps (read as 0).
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.epochsDone = 3;
  c.runId = 78;
  c.stepsSkipped = 5;
  c.params = sampleTensors();
  writeFile(dir / "v3", olderFormat(dir, c, "MGSCKPT3", 56));
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "v3", r)));
  EXPECT_EQ(r.version, 3);
  EXPECT_EQ(r.runId, 78u);
  EXPECT_EQ(r.stepsSkipped, 0u);
  EXPECT_EQ(r.epochsDone, 3u);
  // The current format keeps the count.
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "current", r)));
  EXPECT_EQ(r.version, 7);
  EXPECT_EQ(r.stepsSkipped, 5u);
}

TEST(Checkpoint, ReadsTheSecondFormat) {
  // MGSCKPT2: MGSCKPT3 without the run id (read as 0, unknown).
  TempDir dir;
  Checkpoint c;
  c.manifest = "mgs-manifest 3\nmode train\n";
  c.epochsDone = 2;
  c.runId = 77;
  c.params = sampleTensors();
  writeFile(dir / "v2", olderFormat(dir, c, "MGSCKPT2", 64));
  Checkpoint r;
  ASSERT_TRUE(succeeded(readCheckpoint(dir / "v2", r)));
  EXPECT_EQ(r.version, 2);
  EXPECT_EQ(r.runId, 0u);
  EXPECT_EQ(r.epochsDone, 2u);
  EXPECT_EQ(r.manifest, c.manifest);
}

} // namespace
