//===- Checkpoint.cpp - Training checkpoints ------------------------------===//
//
// A checkpoint is written atomically (a temporary file renamed over the
// target) at the end of every epoch. Format, little-endian:
//
//   magic            8 bytes  "MGSCKPT7"
//   manifest         u64 length + the bytes of mgs_model_manifest()'s text
//                    (so a mismatch can say what differs)
//   seed             u64      --seed of the run (shuffling, split, dropout)
//   holdout          f64      --holdout of the run
//   num_samples      u64      samples in the data set, before the split
//   epochs_done      u64      epochs completed = the next epoch to run
//   iterations_done  u64      training iterations completed, all epochs
//   rng_state        u64      the context's dropout stream (mgsrt_ctx_rng_state)
//   params           u64 count + tensor records (every manifest param, in order)
//   velocities       u64 count + tensor records: the optimizer's state, in
//                    param order: SGD's velocity of each trainable param,
//                    named like it, or AdamW's moments, two records a param:
//                    exp_avg/NAME then exp_avg_sq/NAME
//   run_id           u64      the run that wrote it (every worker's file of
//                             one run has the same; a resumed run keeps it)
//   steps_skipped    u64      iterations whose step was dropped
//                             (--on-nonfinite skip, or a loss-scale
//                             overflow), all epochs
//   loss_scale       f64      the dynamic loss scale the next step would use
//                             (mgsrt_ctx_set_loss_scale); 0: the run had no
//                             dynamic loss scale
//   scale_steps      u64      steps since the dynamic loss scale last changed
//   iters_into_epoch u64      iterations of epoch epochs_done already run:
//                             0 at an epoch's end, else a checkpoint within
//                             it (--checkpoint-every, a stop on a signal)
//   iters_per_epoch  u64      the writing run's iterations an epoch
//   epoch_loss_sum   f64      that epoch's losses so far (its kept steps')
//   epoch_skipped    u64      that epoch's dropped steps so far
//   options          u64 count + (option, value) pairs, each string a u32
//                    length and its bytes: the training options the run
//                    was given (Options.h, isRecordedOption), which
//                    --resume takes when not given again
//   crc              u32      zlib's CRC-32 of every byte before it
//
// Residuals are written unscaled (divided by the loss scale) in every format.
// The earlier formats are still read: "MGSCKPT6" (no options: the run's
// are unknown), "MGSCKPT5" (no iters_into_epoch ..
// epoch_skipped: read as 0, an epoch's end), "MGSCKPT4" (no loss_scale and
// scale_steps: read as 0), "MGSCKPT3" (no steps_skipped either: read
// as 0), "MGSCKPT2" (no run_id either: read as 0,
// unknown) and "MGSCKPT1" (also a u64 FNV-1a 64 of the manifest in place of
// its text, and no CRC).
//
// A tensor record is the weights-file record: u32 name length, name bytes,
// u32 rank, i64 dims[rank], float32 data.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <cmath>
#include <cstring>

namespace mgs::rt::driver {

namespace {
constexpr char kMagicV1[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '1'};
constexpr char kMagicV2[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '2'};
constexpr char kMagicV3[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '3'};
constexpr char kMagicV4[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '4'};
constexpr char kMagicV5[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '5'};
constexpr char kMagicV6[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '6'};
constexpr char kMagic[8] = {'M', 'G', 'S', 'C', 'K', 'P', 'T', '7'};
/// A manifest longer than this is not one mgsc wrote.
constexpr uint64_t kMaxManifestBytes = 1ull << 30;
/// Bounds on the recorded options (far above what a command line holds).
constexpr uint64_t kMaxOptions = 256;
constexpr uint32_t kMaxOptionBytes = 1u << 16;

void writeString(AtomicWriter &w, const std::string &text) {
  const uint32_t bytes = static_cast<uint32_t>(text.size());
  w.writeValue(bytes);
  w.write(text.data(), bytes);
}

Status readString(Reader &r, std::string &text, const char *what) {
  uint32_t bytes = 0;
  if (Status s = r.readValue(bytes, what); !s.ok())
    return s;
  if (bytes > kMaxOptionBytes || bytes > r.remaining())
    return r.fail(std::string(what) + "'s length " + std::to_string(bytes) +
                  " does not fit in the file (corrupt?)");
  text.resize(bytes);
  return r.read(text.data(), bytes, what);
}

Status readOptions(Reader &r, std::vector<std::pair<std::string, std::string>> &options) {
  uint64_t count = 0;
  if (Status s = r.readValue(count, "the recorded options' count"); !s.ok())
    return s;
  if (count > kMaxOptions)
    return r.fail("it records " + std::to_string(count) + " options (corrupt?)");
  options.resize(count);
  for (auto &[option, value] : options) {
    if (Status s = readString(r, option, "a recorded option"); !s.ok())
      return s;
    if (Status s = readString(r, value, "a recorded option's value"); !s.ok())
      return s;
  }
  return Status::success();
}
} // namespace

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Status writeCheckpoint(const std::string &path, const Checkpoint &c) {
  AtomicWriter w;
  if (Status s = writeCheckpointUnpublished(path, c, w); !s.ok())
    return s;
  return w.publish();
}

Status writeCheckpointUnpublished(const std::string &path, const Checkpoint &c, AtomicWriter &w) {
  const uint64_t manifestBytes = c.manifest.size();
  w.open(path);
  w.write(kMagic, 8);
  w.writeValue(manifestBytes);
  w.write(c.manifest.data(), manifestBytes);
  w.writeValue(c.seed);
  w.writeValue(c.holdout);
  w.writeValue(c.numSamples);
  w.writeValue(c.epochsDone);
  w.writeValue(c.iterationsDone);
  w.writeValue(c.rngState);
  writeTensorList(w, c.params);
  writeTensorList(w, c.velocities);
  w.writeValue(c.runId);
  w.writeValue(c.stepsSkipped);
  w.writeValue(c.lossScale);
  w.writeValue(c.lossScaleSteps);
  w.writeValue(c.itersIntoEpoch);
  w.writeValue(c.itersPerEpoch);
  w.writeValue(c.epochLossSum);
  w.writeValue(c.epochSkipped);
  w.writeValue(static_cast<uint64_t>(c.options.size()));
  for (const auto &[option, value] : c.options) {
    writeString(w, option);
    writeString(w, value);
  }
  w.writeCrc();
  return w.finish();
}

Status readCheckpoint(const std::string &path, Checkpoint &c) {
  Reader r;
  if (Status s = r.open(path, "checkpoint"); !s.ok())
    return s;
  char magic[8];
  if (Status s = r.read(magic, 8, "the magic"); !s.ok())
    return s;
  const bool v1 = std::memcmp(magic, kMagicV1, 8) == 0;
  const bool v2 = std::memcmp(magic, kMagicV2, 8) == 0;
  const bool v3 = std::memcmp(magic, kMagicV3, 8) == 0;
  const bool v4 = std::memcmp(magic, kMagicV4, 8) == 0;
  const bool v5 = std::memcmp(magic, kMagicV5, 8) == 0;
  const bool v6 = std::memcmp(magic, kMagicV6, 8) == 0;
  if (!v1 && !v2 && !v3 && !v4 && !v5 && !v6 && std::memcmp(magic, kMagic, 8) != 0)
    return r.fail("not a checkpoint (the magic is not \"MGSCKPT7\" or an earlier format's, "
                  "\"MGSCKPT6\" .. \"MGSCKPT1\")");
  c.manifest.clear();
  c.manifestHash = 0;
  c.runId = 0;
  c.stepsSkipped = 0;
  c.lossScale = 0.0;
  c.lossScaleSteps = 0;
  c.itersIntoEpoch = c.itersPerEpoch = c.epochSkipped = 0;
  c.epochLossSum = 0.0;
  c.options.clear();
  c.version = v1 ? 1 : v2 ? 2 : v3 ? 3 : v4 ? 4 : v5 ? 5 : v6 ? 6 : 7;
  c.hasOptions = c.version >= 7;
  if (v1) {
    if (Status s = r.readValue(c.manifestHash, "the header"); !s.ok())
      return s;
  } else {
    uint64_t bytes = 0;
    if (Status s = r.readValue(bytes, "the manifest's length"); !s.ok())
      return s;
    if (bytes > kMaxManifestBytes || bytes > r.remaining())
      return r.fail("the manifest's length " + std::to_string(bytes) +
                    " does not fit in the file (corrupt?)");
    c.manifest.resize(bytes);
    if (Status s = r.read(c.manifest.data(), bytes, "the manifest"); !s.ok())
      return s;
  }
  // The header's fields, then the two tensor lists: the first failure.
  Status body;
  if (!(body = r.readValue(c.seed, "the header")).ok() ||
      !(body = r.readValue(c.holdout, "the header")).ok() ||
      !(body = r.readValue(c.numSamples, "the header")).ok() ||
      !(body = r.readValue(c.epochsDone, "the header")).ok() ||
      !(body = r.readValue(c.iterationsDone, "the header")).ok() ||
      !(body = r.readValue(c.rngState, "the header")).ok() ||
      !(body = readTensorList(r, c.params)).ok() ||
      !(body = readTensorList(r, c.velocities)).ok() ||
      (c.version >= 3 && !(body = r.readValue(c.runId, "the run id")).ok()) ||
      (c.version >= 4 && !(body = r.readValue(c.stepsSkipped, "the skipped steps")).ok()) ||
      (c.version >= 5 &&
       (!(body = r.readValue(c.lossScale, "the loss scale")).ok() ||
        !(body = r.readValue(c.lossScaleSteps, "the loss scale's steps")).ok())) ||
      (c.version >= 6 &&
       (!(body = r.readValue(c.itersIntoEpoch, "the iterations into the epoch")).ok() ||
        !(body = r.readValue(c.itersPerEpoch, "the iterations per epoch")).ok() ||
        !(body = r.readValue(c.epochLossSum, "the epoch's loss")).ok() ||
        !(body = r.readValue(c.epochSkipped, "the epoch's dropped steps")).ok())) ||
      (c.version >= 7 && !(body = readOptions(r, c.options)).ok()))
    return body;
  if (!v1) {
    if (Status s = r.readCrc(); !s.ok())
      return s;
  }
  if (!(c.lossScale >= 0) || !std::isfinite(c.lossScale))
    return r.fail("the loss scale " + std::to_string(c.lossScale) +
                  " is neither 0 nor a positive number (corrupt?)");
  if (c.itersIntoEpoch > 0 && c.itersIntoEpoch >= c.itersPerEpoch)
    return r.fail("it was written after iteration " + std::to_string(c.itersIntoEpoch) +
                  " of an epoch of " + std::to_string(c.itersPerEpoch) + " (corrupt?)");
  if (c.epochSkipped > c.itersIntoEpoch || !std::isfinite(c.epochLossSum))
    return r.fail("its epoch's loss so far is not that of its iterations (corrupt?)");
  if (r.remaining() != 0)
    return r.fail(std::to_string(r.remaining()) + " unexpected bytes at the end");
  return Status::success();
}

} // namespace mgs::rt::driver
