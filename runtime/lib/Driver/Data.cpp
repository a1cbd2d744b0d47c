//===- Data.cpp - Readers of the standard image-classification data sets --===//
//
// Each reader fills one contiguous float32 array (normalized to [0, 1]) and
// an int64 label array; every problem is an error naming the file.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace mgs::rt::driver {

namespace {

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

// The first of `candidates` (each also tried with ".gz") present in `dir`.
std::string findIn(const std::string &dir, std::initializer_list<const char *> candidates) {
  for (const char *c : candidates)
    for (const char *suffix : {"", ".gz"}) {
      std::string p = joinPath(dir, std::string(c) + suffix);
      if (isRegularFile(p))
        return p;
    }
  return "";
}

// CIFAR-10 training batches in `dir`, sorted by batch number.
Status cifarBatches(const std::string &dir, std::vector<std::string> &files) {
  std::vector<std::string> names;
  if (Status s = listDirectory(dir, names); !s.ok())
    return s;
  std::vector<std::pair<long, std::string>> batches;
  for (const std::string &n : names) {
    if (n.rfind("data_batch_", 0) != 0 || !(endsWith(n, ".bin") || endsWith(n, ".bin.gz")))
      continue;
    batches.emplace_back(std::strtol(n.c_str() + 11, nullptr, 10), n);
  }
  std::sort(batches.begin(), batches.end());
  for (auto &b : batches)
    files.push_back(joinPath(dir, b.second));
  return Status::success();
}

constexpr const char *kMnistImages[] = {"train-images-idx3-ubyte", "train-images.idx3-ubyte"};
constexpr const char *kMnistLabels[] = {"train-labels-idx1-ubyte", "train-labels.idx1-ubyte"};
// The test split's (t10k: MNIST's and Fashion-MNIST's names for it).
constexpr const char *kMnistTestImages[] = {"t10k-images-idx3-ubyte", "t10k-images.idx3-ubyte"};
constexpr const char *kMnistTestLabels[] = {"t10k-labels-idx1-ubyte", "t10k-labels.idx1-ubyte"};

uint32_t bigEndian32(const unsigned char *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

// An IDX file of unsigned bytes: its dims and the offset of its data.
Status parseIdx(const std::string &path, const std::vector<unsigned char> &bytes, const char *what,
                std::vector<uint32_t> &dims, size_t &dataOffset) {
  auto fail = [&](const std::string &msg) {
    return badInput(std::string("MNIST ") + what + " file '" + path + "': " + msg);
  };
  if (bytes.size() < 4)
    return fail("truncated file (" + std::to_string(bytes.size()) + " bytes)");
  if (bytes[0] != 0 || bytes[1] != 0 || bytes[3] == 0)
    return fail("not an IDX file (bad magic)");
  if (bytes[2] != 0x08) {
    char type[8];
    std::snprintf(type, sizeof type, "0x%02X", bytes[2]);
    return fail(std::string("unsupported IDX element type ") + type +
                " (only unsigned bytes, 0x08)");
  }
  size_t rank = bytes[3];
  if (bytes.size() < 4 + 4 * rank)
    return fail("truncated file (" + std::to_string(bytes.size()) + " bytes)");
  uint64_t elements = 1;
  for (size_t i = 0; i < rank; ++i) {
    dims.push_back(bigEndian32(&bytes[4 + 4 * i]));
    elements *= dims.back();
    if (elements > (uint64_t(1) << 40))
      return fail("dimensions too large (corrupt file)");
  }
  dataOffset = 4 + 4 * rank;
  uint64_t have = bytes.size() - dataOffset;
  if (have < elements)
    return fail("truncated file: " + std::to_string(elements) + " data bytes expected, " +
                std::to_string(have) + " present");
  if (have > elements) {
    std::string shape;
    for (uint32_t d : dims)
      shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    return fail(std::to_string(have - elements) + " unexpected bytes after the data (its header " +
                "gives " + std::to_string(rank) + " dimension(s), " + shape + ": " +
                std::to_string(elements) + " bytes)");
  }
  return Status::success();
}

} // namespace

//===--- Formats ----------------------------------------------------------===//

bool parseDataFormat(std::string_view name, DataFormat &format) {
  if (name == "digits")
    format = DataFormat::Digits;
  else if (name == "mnist")
    format = DataFormat::Mnist;
  else if (name == "cifar10")
    format = DataFormat::Cifar10;
  else if (name == "npy")
    format = DataFormat::Npy;
  else if (name == "imagefolder")
    format = DataFormat::ImageFolder;
  else
    return false;
  return true;
}

const char *dataFormatName(DataFormat format) {
  switch (format) {
  case DataFormat::Digits:
    return "digits";
  case DataFormat::Mnist:
    return "mnist";
  case DataFormat::Cifar10:
    return "cifar10";
  case DataFormat::Npy:
    return "npy";
  case DataFormat::ImageFolder:
    return "imagefolder";
  }
  return "?";
}

Status guessDataFormat(const std::string &path, DataFormat &format) {
  if (isDirectory(path)) {
    if (!findIn(path, {kMnistImages[0], kMnistImages[1]}).empty()) {
      format = DataFormat::Mnist;
      return Status::success();
    }
    std::vector<std::string> batches;
    if (Status s = cifarBatches(path, batches); !s.ok())
      return s;
    if (!batches.empty()) {
      format = DataFormat::Cifar10;
      return Status::success();
    }
    // Folders in it: an image folder (its loader says what is wrong in them).
    std::vector<std::string> names;
    if (listDirectory(path, names).ok() &&
        std::any_of(names.begin(), names.end(),
                    [&](const std::string &n) { return isDirectory(joinPath(path, n)); })) {
      format = DataFormat::ImageFolder;
      return Status::success();
    }
    return badInput("cannot guess the data format of directory '" + path +
                    "' (no train-images-idx3-ubyte, no data_batch_*.bin, no class folders); "
                    "pass --data-format digits|mnist|cifar10|npy|imagefolder");
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ioError("data path '" + path + "' does not exist");
  if (!S_ISREG(st.st_mode))
    return badInput("data path '" + path +
                    "' is not a regular file (a pipe or a device): its format cannot be guessed; "
                    "pass --data-format");
  std::string name = lower(baseName(path));
  if (endsWith(name, ".csv") || endsWith(name, ".csv.gz"))
    format = DataFormat::Digits;
  else if (name.find("idx") != std::string::npos && name.find("ubyte") != std::string::npos)
    format = DataFormat::Mnist;
  else if (endsWith(name, ".bin") || endsWith(name, ".bin.gz"))
    format = DataFormat::Cifar10;
  else if (endsWith(name, ".npy") || endsWith(name, ".npy.gz"))
    format = DataFormat::Npy;
  else {
    return badInput("cannot guess the data format of '" + path +
                    "'; pass --data-format digits|mnist|cifar10|npy|imagefolder");
  }
  return Status::success();
}

//===--- scikit-learn digits ----------------------------------------------===//

Status loadDigits(const std::string &path, Dataset &data) {
  data = Dataset();
  data.source = path;
  std::vector<unsigned char> bytes;
  if (Status s = readMaybeGzip(path, bytes); !s.ok())
    return s;
  bytes.push_back('\0'); // strtod stops here at the latest
  const char *p = reinterpret_cast<const char *>(bytes.data());
  const char *end = p + bytes.size() - 1;
  int64_t lineNo = 0, fields = -1;
  std::vector<double> row;
  auto fail = [&](const std::string &msg) {
    Status failure =
        badInput("digits file '" + path + "' line " + std::to_string(lineNo) + ": " + msg);
    data = Dataset();
    return failure;
  };
  while (p < end) {
    ++lineNo;
    const char *eol = static_cast<const char *>(std::memchr(p, '\n', end - p));
    if (!eol)
      eol = end;
    row.clear();
    const char *q = p;
    bool blank = true;
    for (const char *c = p; c < eol; ++c)
      blank &= (*c == ' ' || *c == '\t' || *c == '\r');
    if (blank) {
      p = eol + 1;
      continue;
    }
    for (;;) {
      char *after;
      double v = std::strtod(q, &after);
      while (after < eol && (*after == ' ' || *after == '\t' || *after == '\r'))
        ++after;
      if (after == q || (after < eol && *after != ',') || after > eol || !std::isfinite(v))
        return fail("field " + std::to_string(row.size() + 1) + " is not a number");
      row.push_back(v);
      if (after >= eol)
        break;
      q = after + 1;
    }
    if (row.size() < 2)
      return fail("expected pixel values and a label, got " + std::to_string(row.size()) +
                  " field");
    if (fields < 0) {
      fields = static_cast<int64_t>(row.size());
      data.sampleSize = fields - 1;
    } else if (static_cast<int64_t>(row.size()) != fields) {
      return fail(std::to_string(row.size()) + " fields, but the first row has " +
                  std::to_string(fields));
    }
    double label = row.back();
    if (label != std::floor(label) || label < 0 || label > 1e9)
      return fail("label " + std::to_string(label) + " is not a class number");
    for (int64_t i = 0; i < data.sampleSize; ++i)
      data.samples.push_back(static_cast<float>(row[i] / 16.0));
    data.labels.push_back(static_cast<int64_t>(label));
    data.lines.push_back(lineNo);
    p = eol + 1;
  }
  if (data.labels.empty()) {
    Status failure = badInput("digits file '" + path + "' has no samples");
    data = Dataset();
    return failure;
  }
  return Status::success();
}

//===--- MNIST IDX --------------------------------------------------------===//

Status loadMnist(const std::string &path, Dataset &data, DataSplit split) {
  data = Dataset();
  std::string images, labels;
  if (isDirectory(path)) {
    const bool test = split == DataSplit::Test;
    const char *const *imageNames = test ? kMnistTestImages : kMnistImages;
    const char *const *labelNames = test ? kMnistTestLabels : kMnistLabels;
    const char *what = test ? " (the test split)" : "";
    images = findIn(path, {imageNames[0], imageNames[1]});
    if (images.empty())
      return ioError("MNIST directory '" + path + "' has no " + imageNames[0] + " (or .gz)" +
                     what);
    labels = findIn(path, {labelNames[0], labelNames[1]});
    if (labels.empty())
      return ioError("MNIST directory '" + path + "' has no " + labelNames[0] + " (or .gz)" +
                     what);
  } else {
    if (!isRegularFile(path))
      return ioError("MNIST images file '" + path + "' does not exist");
    images = path;
    size_t slash = path.find_last_of('/');
    std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    std::string name = baseName(path);
    for (auto [from, to] : {std::pair<const char *, const char *>{"images", "labels"},
                            std::pair<const char *, const char *>{"idx3", "idx1"}}) {
      size_t at = name.find(from);
      if (at != std::string::npos)
        name.replace(at, std::strlen(from), to);
    }
    labels = dir + name;
    if (labels == images || !isRegularFile(labels)) {
      std::string alt = endsWith(labels, ".gz") ? labels.substr(0, labels.size() - 3) : labels + ".gz";
      if (labels != images && isRegularFile(alt)) {
        labels = alt;
      } else {
        return ioError(labels == images
                           ? "no MNIST labels file for '" + path +
                                 "': its name has no 'images' or 'idx3' to replace by "
                                 "'labels' / 'idx1' (MNIST's files are "
                                 "train-images-idx3-ubyte and train-labels-idx1-ubyte, "
                                 "optionally .gz; is it MNIST at all? --data-format says)"
                           : "no MNIST labels file for '" + path + "' (looked for '" + labels +
                                 "' and '" + alt + "')");
      }
    }
  }
  data.source = images;

  std::vector<unsigned char> ib, lb;
  std::vector<uint32_t> idims, ldims;
  size_t ioff, loff;
  Status s = readMaybeGzip(images, ib);
  if (s.ok())
    s = parseIdx(images, ib, "images", idims, ioff);
  if (!s.ok())
    return s;
  if (idims.size() < 2) {
    return badInput("MNIST images file '" + images + "': expected at least 2 dimensions, got " +
                    std::to_string(idims.size()));
  }
  s = readMaybeGzip(labels, lb);
  if (s.ok())
    s = parseIdx(labels, lb, "labels", ldims, loff);
  if (!s.ok())
    return s;
  if (ldims.size() != 1) {
    return badInput("MNIST labels file '" + labels + "': expected 1 dimension, got " +
                    std::to_string(ldims.size()));
  }
  if (ldims[0] != idims[0]) {
    return badInput("MNIST labels file '" + labels + "' has " + std::to_string(ldims[0]) +
                    " labels but images file '" + images + "' has " + std::to_string(idims[0]) +
                    " images");
  }
  int64_t n = idims[0];
  data.sampleSize = 1;
  for (size_t i = 1; i < idims.size(); ++i)
    data.sampleSize *= idims[i];
  data.samples.resize(static_cast<size_t>(n * data.sampleSize));
  const unsigned char *src = ib.data() + ioff;
  for (size_t i = 0; i < data.samples.size(); ++i)
    data.samples[i] = src[i] * (1.0f / 255.0f);
  data.labels.assign(lb.begin() + loff, lb.end());
  if (n == 0) {
    Status failure = badInput("MNIST images file '" + images + "' has no samples");
    data = Dataset();
    return failure;
  }
  return Status::success();
}

//===--- CIFAR-10 binary --------------------------------------------------===//

Status loadCifar10(const std::string &path, Dataset &data, DataSplit split) {
  data = Dataset();
  data.source = path;
  std::vector<std::string> files;
  if (isDirectory(path) && split == DataSplit::Test) {
    files.push_back(findIn(path, {"test_batch.bin"}));
    if (files.back().empty())
      return ioError("CIFAR-10 directory '" + path + "' has no test_batch.bin (the test split)");
  } else if (isDirectory(path)) {
    if (Status s = cifarBatches(path, files); !s.ok())
      return s;
    if (files.empty())
      return ioError("CIFAR-10 directory '" + path + "' has no data_batch_*.bin files");
  } else if (!isRegularFile(path)) {
    return ioError("CIFAR-10 file '" + path + "' does not exist");
  } else {
    files.push_back(path);
  }
  constexpr size_t kPixels = 3 * 32 * 32, kRecord = kPixels + 1;
  data.sampleSize = kPixels;
  std::vector<unsigned char> bytes;
  for (const std::string &file : files) {
    if (Status s = readMaybeGzip(file, bytes); !s.ok())
      return s;
    if (bytes.empty() || bytes.size() % kRecord != 0) {
      Status failure =
          badInput("CIFAR-10 file '" + file + "': " + std::to_string(bytes.size()) +
                   " bytes is not a whole number of 3073-byte records (truncated or not CIFAR-10)");
      data = Dataset();
      return failure;
    }
    size_t n = bytes.size() / kRecord;
    size_t base = data.samples.size();
    data.samples.resize(base + n * kPixels);
    for (size_t i = 0; i < n; ++i) {
      const unsigned char *rec = bytes.data() + i * kRecord;
      data.labels.push_back(rec[0]);
      float *dst = data.samples.data() + base + i * kPixels;
      for (size_t j = 0; j < kPixels; ++j)
        dst[j] = rec[1 + j] * (1.0f / 255.0f);
    }
  }
  return Status::success();
}

Status loadDataset(const std::string &path, DataFormat format, Dataset &data, DataSplit split) {
  switch (format) {
  case DataFormat::Digits:
    return loadDigits(path, data);
  case DataFormat::Mnist:
    return loadMnist(path, data, split);
  case DataFormat::Cifar10:
    return loadCifar10(path, data, split);
  case DataFormat::Npy:
    return badInput("NumPy data '" + path + "' needs its labels file (--labels FILE.npy)");
  case DataFormat::ImageFolder:
    return badInput("image folder '" + path +
                    "' needs the model's image size "
                    "(loadImageFolder)");
  }
  return badInput("unknown data format");
}

/// Label `k` of a sample as messages name it: its index, or (i1, ..., ik)
/// for labels of shape (N, d1, ..., dk).
static std::string labelPosition(const Dataset &data, int64_t k) {
  if (data.labelShape.size() < 2)
    return std::to_string(k);
  std::string at;
  for (size_t d = data.labelShape.size(); d-- > 0;) {
    const int64_t extent = std::max<int64_t>(data.labelShape[d], 1);
    at = std::to_string(k % extent) + (at.empty() ? "" : ", ") + at;
    k /= extent;
  }
  return "(" + at + ")";
}

void Dataset::copySample(int64_t i, float *out) const {
  const uint64_t first = static_cast<uint64_t>(i) * static_cast<uint64_t>(sampleSize);
  if (storedSamples.count)
    storedSamples.toFloats(first, static_cast<uint64_t>(sampleSize), out);
  else
    std::memcpy(out, samples.data() + first, static_cast<size_t>(sampleSize) * sizeof(float));
}

void Dataset::copySampleIds(int64_t i, int64_t *out) const {
  const uint64_t first = static_cast<uint64_t>(i) * static_cast<uint64_t>(sampleSize);
  if (storedSamples.count)
    storedSamples.toInts(first, static_cast<uint64_t>(sampleSize), out);
  else
    for (int64_t k = 0; k < sampleSize; ++k)
      out[k] = static_cast<int64_t>(samples[first + static_cast<uint64_t>(k)]);
}

void Dataset::copyLabels(int64_t i, int64_t *out) const {
  const uint64_t first = static_cast<uint64_t>(i) * static_cast<uint64_t>(labelsPerSample);
  if (storedLabels.count)
    storedLabels.toInts(first, static_cast<uint64_t>(labelsPerSample), out);
  else
    std::copy_n(labels.data() + first, labelsPerSample, out);
}

Status checkDataset(const Dataset &data, int64_t sampleSize, int64_t labelsPerSample,
                    int64_t classes, const char *what, int64_t ignoreIndex) {
  const std::string prefix = std::string(what) + " '";
  if (data.sampleSize != sampleSize) {
    return badInput(prefix + data.source + "': a sample has " + std::to_string(data.sampleSize) +
                    " values, but the model's input takes " + std::to_string(sampleSize) +
                    " per sample");
  }
  if (data.labelsPerSample != labelsPerSample && !data.targets.empty()) {
    return badInput(prefix + data.labelSource + "': " + std::to_string(data.labelsPerSample) +
                    " target value(s) per sample, but the model's first output has " +
                    std::to_string(labelsPerSample) +
                    " per sample (the targets take the output's shape)");
  }
  if (data.labelsPerSample != labelsPerSample) {
    const std::string count = std::to_string(labelsPerSample);
    return badInput(
        prefix + (data.labelSource.empty() ? data.source : data.labelSource) + "': " +
        std::to_string(data.labelsPerSample) + " label(s) per sample, but the model's loss takes " +
        count + " per sample (labels of shape " +
        (labelsPerSample == 1 ? "(N,)"
                              : "(N, " + count + "), or (N, d1, ...) of " + count + " positions") +
        ")");
  }
  // NaN, infinity and absurd magnitudes (a float64 1e39 becomes float32
  // infinity; 1e20 squared overflows BatchNorm's variance) name their sample.
  for (uint64_t k = 0; k < data.sampleValues(); ++k) {
    const float v = data.sampleValue(k);
    if (std::fabs(v) <= kMaxAbsSample) // false for NaN
      continue;
    const int64_t i = static_cast<int64_t>(k) / data.sampleSize;
    std::string where = static_cast<size_t>(i) < data.lines.size()
                            ? "line " + std::to_string(data.lines[i])
                            : "sample " + std::to_string(i) + " (counting from 0)";
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(v));
    return badInput(prefix + data.source + "': " + where + ", value " +
                    std::to_string(k % static_cast<size_t>(data.sampleSize)) + " is " + value +
                    " (after scaling), beyond the +-1e15 a sample value may hold (NaN and "
                    "infinity included)");
  }
  // Float targets: finite and within the samples' bound (NaN fails it).
  for (size_t k = 0; k < data.targets.size(); ++k) {
    const float v = data.targets[k];
    if (std::fabs(v) <= kMaxAbsSample)
      continue;
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(v));
    const int64_t i = static_cast<int64_t>(k) / data.labelsPerSample;
    return badInput(prefix + (data.labelSource.empty() ? data.source : data.labelSource) +
                    "': target " + std::to_string(static_cast<int64_t>(k) % data.labelsPerSample) +
                    " of sample " + std::to_string(i) + " (counting from 0) is " + value +
                    ", not a finite value within +-1e15");
  }
  for (int64_t k = 0; k < static_cast<int64_t>(data.labelCount()); ++k) {
    const int64_t label = data.label(static_cast<uint64_t>(k));
    if ((label < 0 || label >= classes) && label != ignoreIndex) {
      const int64_t i = k / data.labelsPerSample;
      std::string where =
          static_cast<size_t>(i) < data.lines.size()
              ? "line " + std::to_string(data.lines[i])
              : "sample " + std::to_string(i) + " (counting from 0)";
      if (data.labelsPerSample > 1)
        where += ", position " + labelPosition(data, k % data.labelsPerSample);
      return badInput(prefix + (data.labelSource.empty() ? data.source : data.labelSource) +
                      "': label " + std::to_string(label) + " at " + where +
                      " is out of range for the model's " + std::to_string(classes) + " classes" +
                      (label < 0 ? " (padding must be the ignored label " +
                                       std::to_string(ignoreIndex) + ": mgsc --ignore-index)"
                                 : ""));
    }
  }
  return Status::success();
}

Status checkLabelShape(const Dataset &data, const std::vector<int64_t> &positions,
                       const char *what) {
  if (data.labelShape.empty() || positions.empty() || data.labelShape == positions)
    return Status::success();
  auto shape = [](const std::vector<int64_t> &dims) {
    std::string out = "(N";
    for (int64_t d : dims)
      out += ", " + std::to_string(d);
    return out + ")";
  };
  return badInput(std::string(what) + " '" +
                  (data.labelSource.empty() ? data.source : data.labelSource) +
                  "': labels of shape " + shape(data.labelShape) + ", but the model's loss takes " +
                  shape(positions) + " (its scores' positions, in their order)");
}

//===--- Deterministic order ----------------------------------------------===//

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias.
uint64_t below(uint64_t &state, uint64_t bound) {
  uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    uint64_t r = splitmix64(state);
    if (r >= threshold)
      return r % bound;
  }
}

void fisherYates(std::vector<int64_t> &v, uint64_t state) {
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[below(state, i)]);
}

// Independent streams per purpose: mix the seed with a tag and an index.
uint64_t streamState(uint64_t seed, uint64_t tag, uint64_t index) {
  uint64_t s = seed ^ (tag * 0xD1B54A32D192ED03ull);
  splitmix64(s);
  s ^= index * 0x8CB92BA72F3D8DD7ull;
  return splitmix64(s);
}

} // namespace

void shuffleForEpoch(std::vector<int64_t> &indices, uint64_t seed, uint64_t epoch) {
  fisherYates(indices, streamState(seed, 1, epoch));
}

void splitHoldout(int64_t n, double fraction, uint64_t seed, std::vector<int64_t> &train,
                  std::vector<int64_t> &heldOut) {
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    all[i] = i;
  fisherYates(all, streamState(seed, 2, 0));
  int64_t held = static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
  held = std::clamp<int64_t>(held, 0, n);
  heldOut.assign(all.begin(), all.begin() + held);
  train.assign(all.begin() + held, all.end());
  std::sort(heldOut.begin(), heldOut.end());
  std::sort(train.begin(), train.end());
}

//===--- Data augmentation ------------------------------------------------===//

std::string describeAugmentation(const Augmentation &a) {
  std::string s;
  auto add = [&](const std::string &what) { s += (s.empty() ? "" : ", ") + what; };
  if (a.cropPadding > 0)
    add("random crop of the image padded by " + std::to_string(a.cropPadding));
  if (a.hflip)
    add("random horizontal flip");
  if (a.vflip)
    add("random vertical flip");
  return s;
}

AugmentDraw drawAugmentation(const Augmentation &a, uint64_t seed, uint64_t epoch, int64_t sample) {
  uint64_t state = streamState(streamState(seed, 3, epoch), 4, static_cast<uint64_t>(sample));
  AugmentDraw d;
  if (a.cropPadding > 0) {
    const uint64_t span = 2 * static_cast<uint64_t>(a.cropPadding) + 1;
    d.dy = static_cast<int64_t>(below(state, span)) - a.cropPadding;
    d.dx = static_cast<int64_t>(below(state, span)) - a.cropPadding;
  }
  if (a.hflip)
    d.hflip = splitmix64(state) >> 63;
  if (a.vflip)
    d.vflip = splitmix64(state) >> 63;
  return d;
}

namespace {

template <typename T>
void transformPlanes(T *values, int64_t planes, int64_t height, int64_t width, const AugmentDraw &d,
                     T fill) {
  if (d.dy == 0 && d.dx == 0 && !d.hflip && !d.vflip)
    return;
  thread_local std::vector<T> plane;
  plane.resize(static_cast<size_t>(height * width));
  for (int64_t p = 0; p < planes; ++p) {
    T *v = values + p * height * width;
    std::copy_n(v, height * width, plane.data());
    for (int64_t y = 0; y < height; ++y) {
      const int64_t from = (d.vflip ? height - 1 - y : y) + d.dy;
      T *row = v + y * width;
      if (from < 0 || from >= height) {
        std::fill_n(row, width, fill);
        continue;
      }
      const T *in = plane.data() + from * width;
      for (int64_t x = 0; x < width; ++x) {
        const int64_t at = (d.hflip ? width - 1 - x : x) + d.dx;
        row[x] = at >= 0 && at < width ? in[at] : fill;
      }
    }
  }
}

} // namespace

void augmentPlanes(float *values, int64_t planes, int64_t height, int64_t width,
                   const AugmentDraw &draw, float fill) {
  transformPlanes(values, planes, height, width, draw, fill);
}

void augmentPlanes(int64_t *values, int64_t planes, int64_t height, int64_t width,
                   const AugmentDraw &draw, int64_t fill) {
  transformPlanes(values, planes, height, width, draw, fill);
}

} // namespace mgs::rt::driver
