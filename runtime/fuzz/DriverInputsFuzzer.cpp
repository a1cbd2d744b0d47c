//===- DriverInputsFuzzer.cpp - Every file a user hands the executable ----===//
//
// A libFuzzer target over the training executable's readers of user files:
// weights files, checkpoints, digits CSV (plain or gzip), MNIST IDX pairs,
// CIFAR-10 batches, NumPy .npy pairs (class labels or float targets), the model manifest and
// an image of an image folder (PNG or JPEG). The first byte picks the reader;
// the rest is the file. Each must return an error message or data whose
// sizes agree, never crash, hang or read out of bounds (ASan/UBSan).
//
// Built with clang's -fsanitize=fuzzer by runtime/fuzz/run.sh; the same
// entry point is replayed over the committed corpus (runtime/fuzz/corpus) by
// FuzzReplay in the test suite, so every input that once failed stays tested.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"
#include "FuzzFiles.h"
#include "mgsrt/driver.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <utility>

using mgs::rt::Status;
using namespace mgs::rt::driver;

namespace {

std::string writeInput(const std::string &name, const uint8_t *data, size_t size) {
  return mgs::fuzz::writeInput("mgs-fuzz", name, data, size);
}

/// Readers of two files (MNIST images and labels, NumPy inputs and labels):
/// the first file's length in the input's first 2 bytes, then the two
/// files. Returns their paths, or nothing when the input is too short.
std::optional<std::pair<std::string, std::string>>
writeTwoInputs(const char *first, const char *second, const uint8_t *data, size_t size) {
  if (size < 2)
    return std::nullopt;
  size_t firstBytes = std::min<size_t>((size_t(data[0]) << 8 | data[1]), size - 2);
  return std::make_pair(writeInput(first, data + 2, firstBytes),
                        writeInput(second, data + 2 + firstBytes, size - 2 - firstBytes));
}

/// A failure must say why; a success must be consistent. MGS_FUZZ_VERBOSE=1
/// prints each outcome (the replay test checks that the seeds are accepted).
void check(const Status &status, const char *reader) {
  const bool ok = status.ok();
  if (!ok && status.message.empty()) {
    std::fprintf(stderr, "%s failed without a message\n", reader);
    std::abort();
  }
  static const bool verbose = std::getenv("MGS_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::printf("%s: %s%s\n", reader, ok ? "ok" : "error: ", ok ? "" : status.message.c_str());
}

void checkDataset(const Status &status, const Dataset &d, const char *reader) {
  check(status, reader);
  // Class labels or float targets (loadNpy's floatTargets), never both.
  const size_t perSample = d.targets.empty() ? d.labelCount() : d.targets.size();
  if (status.ok() && (d.sampleSize < 1 || d.size() < 1 || d.labelsPerSample < 1 ||
                      (!d.targets.empty() && d.labelCount() != 0) ||
                      perSample != static_cast<size_t>(d.size() * d.labelsPerSample) ||
                      d.sampleValues() != static_cast<uint64_t>(d.sampleSize * d.size()))) {
    std::fprintf(stderr,
                 "%s: inconsistent data set (%lld values a sample, %llu values, %llu "
                 "labels)\n",
                 reader, static_cast<long long>(d.sampleSize),
                 static_cast<unsigned long long>(d.sampleValues()),
                 static_cast<unsigned long long>(d.labelCount()));
    std::abort();
  }
  if (!status.ok())
    return;
  // Every sample and label as the batches read them (in place: a mapping).
  std::vector<float> sample(static_cast<size_t>(d.sampleSize));
  std::vector<int64_t> labels(static_cast<size_t>(d.labelsPerSample));
  for (int64_t i = 0; i < d.size(); ++i) {
    d.copySample(i, sample.data());
    if (d.targets.empty())
      d.copyLabels(i, labels.data());
  }
}

void checkTensors(const std::vector<Tensor> &ts, const char *reader) {
  for (const Tensor &t : ts) {
    int64_t n = 1;
    for (int64_t d : t.dims)
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
        std::fprintf(stderr, "%s: tensor '%s' has a shape whose size overflows\n", reader,
                     t.name.c_str());
        std::abort();
      }
    if (static_cast<size_t>(n) != t.data.size()) {
      std::fprintf(stderr, "%s: tensor '%s' has %zu values for its shape\n", reader,
                   t.name.c_str(), t.data.size());
      std::abort();
    }
  }
}

/// The readers this build fuzzes, by kind (the switch below): all of them by
/// default (the replay); run.sh builds one fuzzer a family with
/// -DMGS_FUZZ_KINDS=0,1 (weights and checkpoints), 2,3,4,6,7 (data) or 5 (manifest),
/// so that no execution goes to another family's reader.
#ifndef MGS_FUZZ_KINDS
#define MGS_FUZZ_KINDS 0, 1, 2, 3, 4, 5, 6, 7, 8
#endif
constexpr unsigned kKinds = 9;

/// The reader an input's first byte picks: byte % kKinds when this build has it,
/// else one of this build's. run.sh rewrites the first byte of what a family's
/// fuzzer keeps to the kind it ran, so the replay (every kind) runs the same.
unsigned kindOf(uint8_t first) {
  static constexpr unsigned kinds[] = {MGS_FUZZ_KINDS};
  constexpr size_t count = sizeof kinds / sizeof kinds[0];
  const unsigned kind = first % kKinds;
  if (std::find(kinds, kinds + count, kind) != kinds + count)
    return kind;
  return kinds[kind % count];
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const unsigned kind = kindOf(data[0]);
  ++data;
  --size;
  switch (kind) {
  case 0: {
    std::vector<Tensor> ts;
    Status s = readWeights(writeInput("w.weights", data, size), ts);
    check(s, "readWeights");
    if (s.ok())
      checkTensors(ts, "readWeights");
    break;
  }
  case 1: {
    Checkpoint c;
    Status s = readCheckpoint(writeInput("ck", data, size), c);
    check(s, "readCheckpoint");
    if (s.ok()) {
      checkTensors(c.params, "readCheckpoint");
      checkTensors(c.velocities, "readCheckpoint");
    }
    break;
  }
  case 2: {
    Dataset d;
    Status s = loadDigits(writeInput("d.csv", data, size), d);
    checkDataset(s, d, "loadDigits");
    break;
  }
  case 3: {
    Dataset d;
    Status s = loadCifar10(writeInput("data_batch_1.bin", data, size), d);
    checkDataset(s, d, "loadCifar10");
    break;
  }
  case 4: {
    auto files = writeTwoInputs("train-images-idx3-ubyte", "train-labels-idx1-ubyte", data, size);
    if (!files)
      return 0;
    Dataset d;
    Status s = loadMnist(files->first, d); // finds the labels beside the images
    checkDataset(s, d, "loadMnist");
    break;
  }
  case 5: {
    Manifest m;
    Status s = parseManifest(std::string_view(reinterpret_cast<const char *>(data), size), m);
    check(s, "parseManifest");
    break;
  }
  case 6: {
    auto files = writeTwoInputs("x.npy", "y.npy", data, size);
    if (!files)
      return 0;
    Dataset d;
    Status s = loadNpy(files->first, files->second, d);
    checkDataset(s, d, "loadNpy");
    break;
  }
  case 7: {
    // Float targets (a model compiled with mgsc --loss mse, ...), then the
    // driver's checks of them against a model of the same sizes.
    auto files = writeTwoInputs("x.npy", "t.npy", data, size);
    if (!files)
      return 0;
    Dataset d;
    Status s = loadNpy(files->first, files->second, d, /*floatTargets=*/true);
    checkDataset(s, d, "loadNpy (float targets)");
    if (s.ok())
      check(mgs::rt::driver::checkDataset(d, d.sampleSize, d.labelsPerSample, 1), "checkDataset");
    break;
  }
  case 8: {
    // One image (decoded by its signature, whatever its name says) as the
    // one class of an image folder, read for an RGB 8 x 8 model and a gray
    // 5 x 3 one (a crop of another aspect). The folder is made and removed
    // here: WorkFiles knows files only.
    const std::string root = mgs::fuzz::workDir("mgs-fuzz") + "/images";
    const std::string cls = root + "/c", file = cls + "/i.png";
    ::mkdir(root.c_str(), 0700);
    ::mkdir(cls.c_str(), 0700);
    std::FILE *f = std::fopen(file.c_str(), "wb");
    if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror(file.c_str());
      std::abort();
    }
    for (const auto &[channels, height, width] : {std::tuple{3, 8, 8}, std::tuple{1, 5, 3}}) {
      Dataset d;
      Status s = loadImageFolder(root, channels, height, width, d);
      checkDataset(s, d, "loadImageFolder");
    }
    std::remove(file.c_str());
    ::rmdir(cls.c_str());
    ::rmdir(root.c_str());
    break;
  }
  }
  return 0;
}
