//===- driver.h - The training executable's driver (C++ API) ----*- C++ -*-===//
//
// The `main` of the executables mgsc produces (runtime/lib/Driver): the
// manifest parser, the weights and checkpoint files, the data readers and the
// training / inference loop around mgs_train_step and mgs_eval_step
// (mgsrt.h, "The compiled model").
//
// Every function that can fail returns a Status (mgsrt/status.h) whose
// message names the file (or manifest line) at fault: MGSRT_ERROR_IO when a
// file cannot be opened, read or written, MGSRT_ERROR_INVALID_ARGUMENT when
// what it holds is wrong (corrupt, truncated, not what the model takes).
// Nothing here exits, aborts or throws on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_H
#define MGSRT_DRIVER_H

#include "mgsrt/contract.h"
#include "mgsrt/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// The whole driver: parses argv, runs training or inference, returns the
/// process exit status (0 ok, 1 runtime error, 2 bad command line). The
/// executable's main() (lib/Driver/Main.cpp) only calls this.
extern "C" int mgsrt_driver_main(int argc, char **argv);

/// Writes the ONNX model `source` with the initializers `names[i]` replaced by
/// `values[i]` (`sizes[i]` floats each) to `output`; 0 on success, else 1
/// with a message in `error`. Defined by onnx_import/OnnxSave.cpp, which mgsc
/// links into the executables it makes; weak here so that the runtime does
/// not depend on ONNX (--save reports its absence).
extern "C" int mgs_onnx_save_model(const char *source, const char *output, int64_t count,
                                   const char *const *names, const float *const *values,
                                   const int64_t *sizes, char *error, size_t errorSize)
    __attribute__((weak));

namespace mgs::rt::driver {

//===--- Manifest ---------------------------------------------------------===//

/// One `param`, `input` or `output` line of the manifest.
struct TensorSpec {
  std::string name;
  std::vector<int64_t> dims;
  bool trainable = false; // params only: `trainable` (true) or `state`
  bool int64 = false;     // inputs only: int64 indices (manifest `index_input`), else float32
  int64_t indexRows = 0;  // int64 inputs: values in [-indexRows, indexRows) (0: no bound)
  std::string indexTable; // the table of indexRows rows ("-": a computed one)
  bool hasIndexRange = false; // int64 inputs read as numbers: values in [indexLo, indexHi]
  int64_t indexLo = 0, indexHi = 0;

  int64_t numElements() const;
};

struct Manifest {
  enum class Mode { Train, Inference };
  Mode mode = Mode::Train;
  int64_t batchSize = 0;
  uint64_t arenaBytes = 0;
  std::vector<TensorSpec> params; // in io order
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<int64_t> labelDims; // train mode
  /// Train mode, "label_shape": the positions (N, D1, ...) the labels' rows
  /// come from (mgsc --class-axis); empty when the manifest has none.
  std::vector<int64_t> labelShape;
  int64_t classes = 0;            // train mode, cross-entropy
  /// Train mode: the elementwise_loss kind ("mse", ...) of a model trained
  /// against float targets; empty: the cross-entropy against class labels.
  std::string loss;
  int lossKind = -1;         ///< MGSRT_LOSS_* of `loss` (-1: the cross-entropy)
  double smoothL1Beta = 1.0; ///< `loss smooth_l1 BETA`
  /// `pos_weight W0 ...` (bce_with_logits): per position of the labels' last axis.
  std::vector<float> posWeight;
  /// Train mode: the label the loss ignores (padding).
  int64_t ignoreIndex = mgs::contract::manifest::kDefaultIgnoreIndex;
  std::string source;             // the ONNX model compiled (for --save), if known
  int64_t collectives = 0;        // collective calls per step (0: a one-worker model)
  /// `sparse_collectives NAME ...` (GPU models): gtopk, sparse-allreduce.
  std::vector<std::string> sparseCollectives;
  int64_t workers = 0;            // workers a sparse exchange was compiled for (0: any)
  bool cuda = false;              // `target cuda`: kernels run on a GPU
  int precision = 0;              // MGSRT_PRECISION_*: `precision bf16|f16`, or float32
  bool instrumented = false;      // `instrumented 1`: the step calls mgsrt_mark
  /// `accumulate N`: batches an optimizer step takes (mgs_accum_step for the
  /// first N - 1); 1 when absent.
  int64_t accumulate = 1;
  /// `density_schedule R0 R1 ...`: the top-k density of epoch e is R[min(e, last)].
  std::vector<double> densitySchedule;
  /// `mark B NAME` lines (instrumented): the gradient of param NAME completes
  /// at mark B (its backprop index).
  std::vector<std::pair<int64_t, std::string>> marks;

  int64_t numTrainable() const;
};

/// Parses the text of mgs_model_manifest(). Errors read
/// "manifest line N: <problem>: '<line>'".
Status parseManifest(std::string_view text, Manifest &manifest);

/// "[10, 64]".
std::string formatShape(const std::vector<int64_t> &dims);
/// "the R rows of 'TABLE' that the model's input 'NAME' indexes (ids must be
/// in [-R, R))": what an index input's values must stay within (indexRows > 0).
std::string describeIndexBound(const TensorSpec &input);
/// "[LO, HI], the range in which the model reads its input 'NAME' as numbers":
/// what an index input's values must stay within (hasIndexRange).
std::string describeIndexRange(const TensorSpec &input);
/// Whether `v` is beyond the rows of the tables index input `input` indexes.
inline bool beyondIndexRows(const TensorSpec &input, double v) {
  const double rows = static_cast<double>(input.indexRows);
  return input.indexRows > 0 && (v < -rows || v >= rows);
}
/// Whether `v` is outside the range the model reads index input `input` in.
inline bool outsideIndexRange(const TensorSpec &input, double v) {
  return input.hasIndexRange &&
         (v < static_cast<double>(input.indexLo) || v > static_cast<double>(input.indexHi));
}

//===--- Weights files ----------------------------------------------------===//
//
// Little-endian: magic "MGSW0002", u64 count, then per tensor: u32 name
// length, name bytes, u32 rank, i64 dims[rank], float32 data; a u32 CRC-32
// of all that last ("MGSW0001", without it, is still read). Every value
// must be finite.

struct Tensor {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> data;
};

Status readWeights(const std::string &path, std::vector<Tensor> &tensors);
/// Written atomically (a temporary file renamed over `path`).
Status writeWeights(const std::string &path, const std::vector<Tensor> &tensors);
/// Checks that `tensors` (read from `path`) holds exactly the manifest's
/// params with the manifest's shapes, and reorders them into param order.
/// The error-feedback residuals (mgs.residual/...) may be left out: they
/// then start at zero (mgsc writes none; --save-weights writes them).
Status matchWeights(const Manifest &manifest, const std::string &path,
                    std::vector<Tensor> &tensors);

//===--- Checkpoints ------------------------------------------------------===//

/// What a checkpoint holds; the file format is documented in Checkpoint.cpp.
struct Checkpoint {
  /// The compiled model's manifest (mgs_model_manifest()). A checkpoint in
  /// the first format (MGSCKPT1) holds only its fnv1a64 hash: `manifest` is
  /// then empty and `manifestHash` set (written files are always MGSCKPT7).
  std::string manifest;
  uint64_t manifestHash = 0;
  int version = 7; // the format read: 1 (MGSCKPT1), 2, ... 7
  uint64_t seed = 0;
  double holdout = 0;
  uint64_t numSamples = 0;      // size of the whole data set (before the split)
  uint64_t epochsDone = 0;      // the next epoch to run (0-based)
  uint64_t iterationsDone = 0;  // training iterations run so far, all epochs
  uint64_t rngState = 0;        // the context's dropout stream
  uint64_t runId = 0;           // the run that wrote it (0: unknown, MGSCKPT1/2)
  /// Iterations whose step was dropped (--on-nonfinite skip), all epochs:
  /// iterationsDone less these is the optimizer's update count (AdamW's bias
  /// correction). 0 in the earlier formats.
  uint64_t stepsSkipped = 0;
  /// The dynamic loss scale the next step would use (0: the run had none;
  /// 0 in the formats before MGSCKPT5) and the steps since it last changed.
  /// Residuals are stored unscaled whatever the scale.
  double lossScale = 0.0;
  uint64_t lossScaleSteps = 0;
  /// A checkpoint within an epoch (--checkpoint-every, or a stop on a
  /// signal): the iterations of epoch `epochsDone` (0-based) already run, of
  /// `itersPerEpoch` an epoch, and that epoch's sum of kept steps' losses and
  /// count of dropped steps so far (for its mean). 0 at an epoch's end and in
  /// the formats before MGSCKPT6 (itersPerEpoch then unknown).
  uint64_t itersIntoEpoch = 0;
  uint64_t itersPerEpoch = 0;
  double epochLossSum = 0.0;
  uint64_t epochSkipped = 0;
  /// The training options the run was given (Options.h, isRecordedOption:
  /// its schedule, optimizer settings, transforms), as (option, value) in
  /// the order given; --resume takes those not given again. Empty in the
  /// formats before MGSCKPT7, whose runs' options are unknown (`hasOptions`
  /// false).
  std::vector<std::pair<std::string, std::string>> options;
  bool hasOptions = true;
  std::vector<Tensor> params;     // every manifest param, in param order
  std::vector<Tensor> velocities; // one per trainable param, in param order
};

Status writeCheckpoint(const std::string &path, const Checkpoint &checkpoint);
Status readCheckpoint(const std::string &path, Checkpoint &checkpoint);

uint64_t fnv1a64(std::string_view text);

//===--- Data sets --------------------------------------------------------===//

enum class DataFormat { Digits, Mnist, Cifar10, Npy, ImageFolder };

/// Which split a directory of a standard data set gives: the training files
/// (MNIST train-*, CIFAR-10 data_batch_*) or the test ones (MNIST t10k-*,
/// CIFAR-10 test_batch.bin). A path naming a file is read as it is.
enum class DataSplit { Train, Test };

/// Numbers as a NumPy file stores them (float32 or float64, integers of 1,
/// 2, 4 or 8 bytes, little-endian), read in place: usually a read-only
/// mapping of the file, which `owner` keeps alive. count 0: none.
struct StoredNumbers {
  std::shared_ptr<const void> owner;
  const unsigned char *data = nullptr;
  char kind = 'f'; // 'f' (float), 'i' (signed) or 'u' (unsigned integers)
  int itemSize = 4;
  uint64_t count = 0;
  /// > 0: a number reads as float32 value / divisor (an image folder's
  /// bytes: ToTensor's division by 255).
  float divisor = 0;

  /// Number k as float32 (a float64 rounded; an integer converted).
  float asFloat(uint64_t k) const;
  /// Integer k (kind 'i' or 'u'; a uint64 beyond INT64_MAX is not one: the
  /// reader refuses such files). A float is rounded to float32 and truncated:
  /// only for values checked to be integers within int64 (token ids are).
  int64_t asInt(uint64_t k) const;
  void toFloats(uint64_t first, uint64_t n, float *out) const;
  void toInts(uint64_t first, uint64_t n, int64_t *out) const;
};

/// Samples (sample i at i * sampleSize), normalized to [0, 1] (NumPy inputs:
/// as stored), and labels, int64. The built-in formats hold them in
/// `samples` and `labels`; NumPy files in place (`storedSamples`,
/// `storedLabels`: a mapped file is not copied, so the workers on a node
/// share one copy of the data). Read them through the accessors.
struct Dataset {
  std::string source;      // the path the samples came from, for messages
  std::string labelSource; // where the labels came from, when another file (NumPy)
  int64_t sampleSize = 0;
  /// NumPy samples: one sample's shape (the file's dimensions after the
  /// first), for messages; else empty.
  std::vector<int64_t> sampleShape;
  std::vector<float> samples;
  std::vector<int64_t> labels; // labelsPerSample for each sample, in order
  StoredNumbers storedSamples; // in place of `samples` when count > 0
  StoredNumbers storedLabels;  // in place of `labels` when count > 0
  /// Float targets (loadNpy with floatTargets: a regression or multi-label
  /// loss) instead of `labels`, labelsPerSample for each sample.
  std::vector<float> targets;
  int64_t labelsPerSample = 1; // > 1: a label per token (NumPy labels (N, L)), or targets
  /// NumPy labels of rank > 2, (N, d1, ..., dk): (d1, ..., dk), a label's
  /// position in messages (a segmentation's (row, column)); else empty.
  std::vector<int64_t> labelShape;
  /// Digits CSV: the line each sample was read from, for messages.
  std::vector<int64_t> lines;
  /// An image folder: the name of each label's class (its folder), and the
  /// files it skipped (not images).
  std::vector<std::string> classNames;
  int64_t skippedFiles = 0;

  /// The samples: as many as their labels (or targets) say, or for samples
  /// alone (loadNpySamples) their values over sampleSize.
  int64_t size() const {
    if (targets.empty() && labelCount() == 0)
      return sampleSize ? static_cast<int64_t>(sampleValues()) / sampleSize : 0;
    return static_cast<int64_t>(targets.empty() ? labelCount() : targets.size()) / labelsPerSample;
  }
  /// Every sample value, all samples: sampleSize x size().
  uint64_t sampleValues() const {
    return storedSamples.count ? storedSamples.count : samples.size();
  }
  float sampleValue(uint64_t k) const {
    return storedSamples.count ? storedSamples.asFloat(k) : samples[k];
  }
  /// Sample i's sampleSize values, as float32 / as integers (token ids).
  void copySample(int64_t i, float *out) const;
  void copySampleIds(int64_t i, int64_t *out) const;
  uint64_t labelCount() const { return storedLabels.count ? storedLabels.count : labels.size(); }
  int64_t label(uint64_t k) const { return storedLabels.count ? storedLabels.asInt(k) : labels[k]; }
  /// Sample i's labelsPerSample labels.
  void copyLabels(int64_t i, int64_t *out) const;
};

/// "digits", "mnist", "cifar10", "npy".
bool parseDataFormat(std::string_view name, DataFormat &format);
const char *dataFormatName(DataFormat format);
/// From the path: a .csv / .csv.gz file is digits; an idx file (or a
/// directory with train-images-idx3-ubyte) is MNIST; a .bin file (or a
/// directory with data_batch_*.bin) is CIFAR-10; a .npy file is NumPy.
Status guessDataFormat(const std::string &path, DataFormat &format);

/// scikit-learn digits: CSV (gzip or plain), 64 values 0..16 then the label
/// per row, no header. Values are divided by 16.
Status loadDigits(const std::string &path, Dataset &data);
/// MNIST IDX (Fashion-MNIST too): `path` is a directory holding
/// train-images-idx3-ubyte and train-labels-idx1-ubyte (each optionally .gz;
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte for the test split), or
/// the images file itself (the labels file is found by replacing "images" by
/// "labels" and "idx3" by "idx1" in its name). Values are divided by 255.
Status loadMnist(const std::string &path, Dataset &data, DataSplit split = DataSplit::Train);
/// CIFAR-10 binary: one data_batch_*.bin file, or a directory of them (read
/// in name order; its test_batch.bin for the test split). Records are 1 label
/// byte + 3072 bytes (CHW). Values are divided by 255.
Status loadCifar10(const std::string &path, Dataset &data, DataSplit split = DataSplit::Train);
/// NumPy .npy files (format 1.0-3.0, C order; gzip also read): `inputs` of
/// shape (N, ...) in float32 or float64, taken as stored (one sample is the
/// product of the other dimensions), or integers within +-2^24 (token ids),
/// and `labels` of shape (N,), or (N, L) for L labels a sample (one per
/// token), or (N, d1, ..., dk) (one per position: a segmentation's pixels),
/// in any integer type. What users bring for models of any input shape.
/// With `floatTargets` (a model trained against float targets: mgsc --loss
/// mse, ...), `labels` holds the targets instead, of shape (N, ...) in any
/// float or integer type, read into data.targets (labelsPerSample: the
/// product of the other dimensions).
Status loadNpy(const std::string &inputs, const std::string &labels, Dataset &data,
               bool floatTargets = false);
/// One .npy file of samples alone, as loadNpy reads its `inputs` (a model
/// input beside the first: the executable's --input-data); `what` names the
/// file in messages.
Status loadNpySamples(const std::string &path, Dataset &data, const char *what = "NumPy inputs");
/// Digits, MNIST or CIFAR-10 (NumPy data needs its labels file: loadNpy).
Status loadDataset(const std::string &path, DataFormat format, Dataset &data,
                   DataSplit split = DataSplit::Train);

/// An image folder, torchvision's ImageFolder layout: DIR/CLASS/.../IMAGE
/// (PNG or JPEG, decoded by content; other files skipped, other image
/// formats refused), classes labelled in the sorted order of their folders'
/// names (`knownClasses`: a test set's, by the training set's names), each
/// image decoded once, as gray or RGB for `channels` (1 or 3), resized and
/// center-cropped to height x width as torchvision's Resize + CenterCrop do
/// on a PIL image (imageToSample), held as bytes (storedSamples, read
/// divided by 255). Decoded in parallel (OpenMP), with a progress line every
/// 10 s.
Status loadImageFolder(const std::string &path, int64_t channels, int64_t height, int64_t width,
                       Dataset &data, const std::vector<std::string> *knownClasses = nullptr);
/// One decoded image (interleaved 8-bit RGB, height x width) as a sample of
/// `channels` x toHeight x toWidth bytes: PIL's "L" conversion for one
/// channel; torchvision's Resize(S) (the side that limits a cover of the
/// target to it, the other truncated, with PIL's antialiased bilinear filter
/// in its fixed point) and CenterCrop. (The data set reads each byte divided
/// by 255, as ToTensor.)
void imageToSample(const unsigned char *rgb, int64_t height, int64_t width, int64_t channels,
                   int64_t toHeight, int64_t toWidth, unsigned char *out);

/// The largest magnitude a sample value may have (checkDataset).
inline constexpr float kMaxAbsSample = 1e15f;

/// Checks the samples against the model: per-sample element count, labels
/// per sample, labels in [0, classes) or equal to `ignoreIndex` (padding the
/// loss ignores), and every value finite and within +-kMaxAbsSample (naming
/// the sample, or the line of a CSV). Messages begin with `what` and the file
/// ("data '...'", "test data '...'").
Status checkDataset(const Dataset &data, int64_t sampleSize, int64_t labelsPerSample,
                    int64_t classes, const char *what = "data", int64_t ignoreIndex = -100);
/// Labels of rank > 2 (data.labelShape) against the positions (D1, ...) a
/// sample's labels must have (the manifest's label_shape without N): an
/// error naming both shapes when they differ (the same count, another
/// layout: (N, W, H) for (N, H, W)). Labels of rank 1 or 2 are not checked.
Status checkLabelShape(const Dataset &data, const std::vector<int64_t> &positions,
                       const char *what = "data");

//===--- Determinism helpers ----------------------------------------------===//

/// The order of the training samples in `epoch`: a pure function of
/// (seed, epoch, indices).
void shuffleForEpoch(std::vector<int64_t> &indices, uint64_t seed, uint64_t epoch);
/// Splits 0..n-1 into (train, held-out) sets, both sorted; the held-out set
/// has round(fraction * n) samples chosen by `seed`.
void splitHoldout(int64_t n, double fraction, uint64_t seed, std::vector<int64_t> &train,
                  std::vector<int64_t> &heldOut);

//===--- Data augmentation ------------------------------------------------===//
//
// --augment: random geometric transforms of every training sample, drawn
// anew each epoch, as torchvision's RandomCrop(size, padding=P),
// RandomHorizontalFlip and RandomVerticalFlip do. They act on a sample's last
// two axes (H, W): each of its planes (the product of its other axes, its
// channels) moves alike.

struct Augmentation {
  bool hflip = false, vflip = false;
  int64_t cropPadding = 0; ///< crop=P: a window of H x W from the image padded by P
  bool any() const { return hflip || vflip || cropPadding > 0; }
};

/// Parses --augment's value: items `flip` (horizontal), `vflip`, `crop=P`
/// (P >= 1) separated by commas, each at most once; an error names the item.
Status parseAugmentation(std::string_view spec, Augmentation &augmentation);
/// "random crop of the image padded by 4, random horizontal flip".
std::string describeAugmentation(const Augmentation &augmentation);

/// One sample's transform: out(y, x) = in(Y + dy, X + dx), Y = H - 1 - y when
/// vflip (else y), X = W - 1 - x when hflip (else x), and the fill value
/// where (Y + dy, X + dx) is outside the image. dy, dx in [-P, P] are the
/// crop's offset in the padded image minus P.
struct AugmentDraw {
  int64_t dy = 0, dx = 0;
  bool hflip = false, vflip = false;
};

/// Sample `sample`'s draw in `epoch`: a pure function of (seed, epoch,
/// sample) (not of the workers, the batch or the order), taken from its own
/// splitmix64 stream in this order: the crop's row and column offsets (each
/// uniform in [0, 2P]), then one bit (the top one of a draw) per flip, the
/// horizontal first.
AugmentDraw drawAugmentation(const Augmentation &augmentation, uint64_t seed, uint64_t epoch,
                             int64_t sample);
/// Applies `draw` in place to `planes` consecutive planes of H x W values.
void augmentPlanes(float *values, int64_t planes, int64_t height, int64_t width,
                   const AugmentDraw &draw, float fill);
void augmentPlanes(int64_t *values, int64_t planes, int64_t height, int64_t width,
                   const AugmentDraw &draw, int64_t fill);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_H
