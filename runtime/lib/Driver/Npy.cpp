//===- Npy.cpp - Reader of NumPy .npy data sets ---------------------------===//
//
// loadNpy (mgsrt/driver.h): NumPy inputs and their labels, or float targets
// for a model trained with a regression or multi-label loss. Every problem is
// an error naming the file.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mgs::rt::driver {

//===--- NumPy .npy -------------------------------------------------------===//

namespace {

/// One parsed .npy file: its dtype ('<f4', '|u1', ...), shape and data.
struct NpyArray {
  char kind = 0;  // 'f', 'i', 'u', 'b', ...
  int itemSize = 0;
  std::vector<int64_t> shape;
  const unsigned char *data = nullptr;
  uint64_t count = 0; // elements
};

/// The value of `key` in the header dict ("{'descr': '<f4', ...}"): the text
/// after "'key':" with leading spaces skipped, or npos.
size_t headerValue(std::string_view header, std::string_view key) {
  std::string quoted = "'" + std::string(key) + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos)
    return at;
  at += quoted.size();
  while (at < header.size() && header[at] == ' ')
    ++at;
  if (at >= header.size() || header[at] != ':')
    return std::string_view::npos;
  ++at;
  while (at < header.size() && header[at] == ' ')
    ++at;
  return at < header.size() ? at : std::string_view::npos;
}

Status parseNpy(const std::string &path, const char *what, const FileBytes &file, NpyArray &a) {
  const std::string_view bytes(reinterpret_cast<const char *>(file.data), file.size);
  auto fail = [&](const std::string &msg) {
    return badInput(std::string(what) + " '" + path + "': " + msg);
  };
  static const unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return fail("not a NumPy .npy file (no \\x93NUMPY magic)");
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(bytes[i])); };
  const size_t major = byte(6);
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = byte(8) | (byte(9) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    headerLen = byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
    offset = 12;
  } else {
    return fail("unsupported .npy format version " + std::to_string(major));
  }
  if (headerLen > bytes.size() - offset)
    return fail("truncated header (" + std::to_string(headerLen) + " bytes announced)");
  std::string_view header = bytes.substr(offset, headerLen);
  size_t dataOffset = offset + headerLen;

  size_t d = headerValue(header, "descr");
  if (d != std::string_view::npos && header[d] == '[')
    return fail("a structured dtype is not supported (one plain number type per file)");
  if (d == std::string_view::npos || header[d] != '\'' || d + 4 >= header.size())
    return fail("the header has no 'descr'");
  size_t end = header.find('\'', d + 1);
  if (end == std::string_view::npos)
    return fail("the header's 'descr' is not a string");
  std::string_view descr = header.substr(d + 1, end - d - 1);
  if (descr.size() < 3 || std::string_view("fiub").find(descr[1]) == std::string_view::npos)
    return fail("dtype '" + std::string(descr) +
                "' is not a number type (object, string and structured arrays are not "
                "supported)");
  if (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')
    return fail("dtype '" + std::string(descr) +
                "' is big-endian; save it little-endian (x.astype(x.dtype.newbyteorder('<')))");
  a.kind = descr[1];
  int size = 0;
  for (char c : descr.substr(2)) {
    if (c < '0' || c > '9' || size > 64)
      return fail("dtype '" + std::string(descr) + "' is not a plain number type");
    size = size * 10 + (c - '0');
  }
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return fail("dtype '" + std::string(descr) + "' has an unsupported size");
  a.itemSize = size;

  size_t f = headerValue(header, "fortran_order");
  if (f == std::string_view::npos)
    return fail("the header has no 'fortran_order'");
  if (header.substr(f, 4) == "True")
    return fail("stored in Fortran order; save a C-ordered array (numpy.ascontiguousarray)");

  size_t s = headerValue(header, "shape");
  if (s == std::string_view::npos || header[s] != '(')
    return fail("the header has no 'shape'");
  size_t close = header.find(')', s);
  if (close == std::string_view::npos)
    return fail("the header's 'shape' is not a tuple");
  a.shape.clear();
  a.count = 1;
  for (size_t i = s + 1; i < close;) {
    while (i < close && (header[i] == ' ' || header[i] == ','))
      ++i;
    if (i == close)
      break;
    int64_t v = 0;
    size_t digits = 0;
    for (; i < close && header[i] >= '0' && header[i] <= '9'; ++i, ++digits) {
      if (v > (int64_t(1) << 40))
        return fail("a dimension of 'shape' is too large");
      v = v * 10 + (header[i] - '0');
    }
    if (digits == 0)
      return fail("the header's 'shape' holds something other than integers");
    if (__builtin_mul_overflow(a.count, static_cast<uint64_t>(v), &a.count) ||
        a.count > (uint64_t(1) << 40))
      return fail("the array is too large");
    a.shape.push_back(v);
  }
  if (a.shape.empty())
    return fail("a 0-dimensional array holds no samples");
  uint64_t want = a.count * static_cast<uint64_t>(a.itemSize);
  if (bytes.size() - dataOffset != want)
    return fail("holds " + std::to_string(bytes.size() - dataOffset) + " bytes of data; its shape " +
                "and dtype need " + std::to_string(want) + " (truncated?)");
  a.data = file.data + dataOffset;
  return Status::success();
}

template <typename T> T loadLittle(const unsigned char *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

} // namespace

namespace {
/// Element `i` of an integer array; false for a uint64 beyond INT64_MAX.
bool npyInt(const NpyArray &a, uint64_t i, int64_t &v) {
  const unsigned char *p = a.data + i * static_cast<uint64_t>(a.itemSize);
  const bool isSigned = a.kind == 'i';
  switch (a.itemSize) {
  case 1:
    v = isSigned ? int64_t(loadLittle<int8_t>(p)) : int64_t(loadLittle<uint8_t>(p));
    return true;
  case 2:
    v = isSigned ? int64_t(loadLittle<int16_t>(p)) : int64_t(loadLittle<uint16_t>(p));
    return true;
  case 4:
    v = isSigned ? int64_t(loadLittle<int32_t>(p)) : int64_t(loadLittle<uint32_t>(p));
    return true;
  default: {
    uint64_t u = loadLittle<uint64_t>(p);
    if (!isSigned && u > uint64_t(INT64_MAX))
      return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  }
}
} // namespace

Status loadNpySamples(const std::string &path, Dataset &data, const char *what) {
  data = Dataset();
  data.source = path;
  FileBytes xb;
  NpyArray x;
  Status s = mapOrRead(path, xb);
  if (s.ok())
    s = parseNpy(path, what, xb, x);
  if (!s.ok())
    return s;
  const bool intInputs = x.kind == 'i' || x.kind == 'u';
  if (!intInputs && (x.kind != 'f' || (x.itemSize != 4 && x.itemSize != 8))) {
    return badInput(
        std::string(what) + " '" + path + "': dtype must be float32 or float64 (convert with " +
        "x.astype(numpy.float32), scaled as the model expects), or integers (token ids)");
  }
  if (x.shape[0] == 0)
    return badInput(std::string(what) + " '" + path + "' hold no samples");
  const int64_t n = x.shape[0];
  data.sampleSize = static_cast<int64_t>(x.count / static_cast<uint64_t>(n));
  if (data.sampleSize == 0)
    return badInput(std::string(what) + " '" + path + "': a sample has no values");
  data.sampleShape.assign(x.shape.begin() + 1, x.shape.end());
  // The inputs stay where they are (a mapped file is not copied): checked
  // here, converted batch by batch.
  data.storedSamples = {xb.owner, x.data, x.kind, x.itemSize, x.count};
  for (uint64_t i = 0; i < x.count; ++i) {
    auto fail = [&](const char *problem) {
      Status failure = badInput(std::string(what) + " '" + path + "': sample " +
                                std::to_string(i / static_cast<uint64_t>(data.sampleSize)) +
                                " (counting from 0) holds " + problem);
      data = Dataset();
      return failure;
    };
    if (intInputs) {
      // Integer inputs (token ids) travel as float32 too: exact up to 2^24.
      int64_t iv = 0;
      if (!npyInt(x, i, iv) || iv < -(int64_t(1) << 24) || iv > (int64_t(1) << 24))
        return fail("an integer beyond +-2^24 (16,777,216), the range mgs carries exactly");
    } else if (!std::isfinite(data.storedSamples.asFloat(i))) {
      return fail("a value that is not a finite float32 (NaN, infinity, or a float64 beyond "
                  "float32's range)");
    }
  }
  return Status::success();
}

Status loadNpy(const std::string &inputs, const std::string &labels, Dataset &data,
               bool floatTargets) {
  if (Status s = loadNpySamples(inputs, data); !s.ok())
    return s;
  data.labelSource = labels;
  FileBytes yb;
  NpyArray y;
  Status s = mapOrRead(labels, yb);
  if (s.ok())
    s = parseNpy(labels, "NumPy labels", yb, y);
  if (!s.ok()) {
    data = Dataset();
    return s;
  }
  const bool numericY =
      y.kind == 'i' || y.kind == 'u' || (y.kind == 'f' && (y.itemSize == 4 || y.itemSize == 8));
  auto fail = [&](const std::string &message) {
    data = Dataset();
    return badInput(message);
  };
  if (floatTargets && !numericY) {
    return fail("NumPy targets '" + labels +
                "': dtype must be float32, float64 or integers (the model's loss takes "
                "float targets)");
  }
  if (!floatTargets && ((y.kind != 'i' && y.kind != 'u') || y.shape.size() < 1)) {
    return fail("NumPy labels '" + labels +
                "': must be integers of shape (N,) or, several per sample, (N, L) (one "
                "per token) or (N, d1, ...) (one per position)");
  }
  if (y.shape[0] == 0)
    return fail("NumPy labels '" + labels + "' hold no samples");
  const int64_t n = data.size(); // (no labels yet: the samples' count)
  if (n != y.shape[0]) {
    return fail("NumPy inputs '" + inputs + "' hold " + std::to_string(n) + " samples, labels '" +
                labels + "' " + std::to_string(y.shape[0]));
  }
  data.labelsPerSample = static_cast<int64_t>(y.count / static_cast<uint64_t>(n));
  if (data.labelsPerSample == 0)
    return fail("NumPy labels '" + labels + "': a sample has no labels");
  if (!floatTargets && y.shape.size() > 2)
    data.labelShape.assign(y.shape.begin() + 1, y.shape.end());
  if (floatTargets) {
    data.targets.resize(y.count);
    for (uint64_t i = 0; i < y.count; ++i) {
      int64_t iv = 0;
      const unsigned char *p = y.data + i * static_cast<uint64_t>(y.itemSize);
      if (y.kind != 'f' && !npyInt(y, i, iv)) {
        Status failure = badInput("NumPy targets '" + labels + "': value " +
                                  std::to_string(i % static_cast<uint64_t>(data.labelsPerSample)) +
                                  " of sample " +
                                  std::to_string(i / static_cast<uint64_t>(data.labelsPerSample)) +
                                  " (counting from 0) is a uint64 beyond the range of a target");
        data = Dataset();
        return failure;
      }
      data.targets[i] = y.kind != 'f'     ? static_cast<float>(iv)
                        : y.itemSize == 4 ? loadLittle<float>(p)
                                          : static_cast<float>(loadLittle<double>(p));
    }
    return Status::success(); // checkDataset checks the values
  }
  // Integer labels stay where they are too; checkDataset checks the range.
  for (uint64_t i = 0; i < y.count; ++i) {
    int64_t v = 0;
    if (!npyInt(y, i, v)) {
      Status failure =
          badInput("NumPy labels '" + labels + "': label " +
                   std::to_string(loadLittle<uint64_t>(y.data + 8 * i)) + " of sample " +
                   std::to_string(i / static_cast<uint64_t>(data.labelsPerSample)) +
                   " (counting from 0) is not a class number");
      data = Dataset();
      return failure;
    }
  }
  data.storedLabels = {yb.owner, y.data, y.kind, y.itemSize, y.count};
  return Status::success();
}

//===--- Numbers read in place --------------------------------------------===//

namespace {
template <typename T, typename Out> void convert(const unsigned char *p, uint64_t n, Out *out) {
  for (uint64_t k = 0; k < n; ++k)
    out[k] = static_cast<Out>(loadLittle<T>(p + k * sizeof(T)));
}

/// Numbers first .. first + n - 1 of `s` into `out`, converted (one switch a
/// run, not a number).
template <typename Out>
void convertStored(const StoredNumbers &s, uint64_t first, uint64_t n, Out *out) {
  const unsigned char *p = s.data + first * static_cast<uint64_t>(s.itemSize);
  const bool isSigned = s.kind == 'i';
  if (s.kind == 'f') {
    if (s.itemSize == 4)
      convert<float>(p, n, out);
    else
      convert<double>(p, n, out);
    return;
  }
  switch (s.itemSize) {
  case 1:
    return isSigned ? convert<int8_t>(p, n, out) : convert<uint8_t>(p, n, out);
  case 2:
    return isSigned ? convert<int16_t>(p, n, out) : convert<uint16_t>(p, n, out);
  case 4:
    return isSigned ? convert<int32_t>(p, n, out) : convert<uint32_t>(p, n, out);
  default: // a uint64 beyond INT64_MAX was refused when the file was read
    return convert<int64_t>(p, n, out);
  }
}
} // namespace

float StoredNumbers::asFloat(uint64_t k) const {
  float v;
  convertStored(*this, k, 1, &v);
  return divisor > 0 ? v / divisor : v;
}

int64_t StoredNumbers::asInt(uint64_t k) const {
  if (kind == 'f') // as the float32 the checks saw (a float64 rounded first)
    return static_cast<int64_t>(asFloat(k));
  int64_t v;
  convertStored(*this, k, 1, &v);
  return v;
}

void StoredNumbers::toFloats(uint64_t first, uint64_t n, float *out) const {
  convertStored(*this, first, n, out);
  if (divisor > 0)
    for (uint64_t k = 0; k < n; ++k)
      out[k] /= divisor;
}

void StoredNumbers::toInts(uint64_t first, uint64_t n, int64_t *out) const {
  if (kind == 'f') {
    for (uint64_t k = 0; k < n; ++k)
      out[k] = asInt(first + k);
    return;
  }
  convertStored(*this, first, n, out);
}

} // namespace mgs::rt::driver
