//===- DataTest.cpp - The data-set readers --------------------------------===//

#include "TestUtil.h"
#include "mgsrt/driver.h"

#include <algorithm>
#include <cmath>
#include <set>

using mgs::rt::Status;
using namespace mgs::rt::driver;
using namespace mgs::rt::driver::test;

namespace {


//===--- digits -----------------------------------------------------------===//

TEST(Digits, ReadsPlainAndGzip) {
  TempDir dir;
  std::string csv = "0,16,8,3\n4,0,16,7\r\n\n";
  writeFile(dir / "d.csv", csv);
  writeGzip(dir / "d.csv.gz", csv);
  for (const char *name : {"d.csv", "d.csv.gz"}) {
    Dataset d;
    ASSERT_TRUE(succeeded(loadDigits(dir / name, d)));
    EXPECT_EQ(d.size(), 2);
    EXPECT_EQ(d.sampleSize, 3);
    EXPECT_EQ(d.samples, (std::vector<float>{0, 1, 0.5f, 0.25f, 0, 1}));
    EXPECT_EQ(d.labels, (std::vector<int64_t>{3, 7}));
    EXPECT_EQ(d.source, dir / name);
  }
}

// readMaybeGzip reads in chunks that start at the file's size and double: a
// gzip file that inflates to many times its size and past several 4 MiB
// chunks, and plain files around the first chunk's size, read whole.
TEST(Digits, ReadsFilesLargerThanTheirFirstChunk) {
  TempDir dir;
  std::string csv;
  const int64_t lines = 700000; // 10 bytes a line: about 7 MB inflated
  for (int64_t i = 0; i < lines; ++i)
    csv += "16,0,8," + std::to_string(i % 10) + "\n";
  writeGzip(dir / "big.csv.gz", csv);
  ASSERT_LT(readFile(dir / "big.csv.gz").size(), csv.size() / 10);
  Dataset d;
  ASSERT_TRUE(succeeded(loadDigits(dir / "big.csv.gz", d)));
  EXPECT_EQ(d.size(), lines);
  EXPECT_EQ(d.labels.back(), (lines - 1) % 10);
  for (size_t n : {size_t(4095), size_t(4096), size_t(4097), size_t(70000)}) {
    std::string small;
    while (small.size() + 8 <= n)
      small += "1,2,3,4\n";
    small.resize(n, '\n');
    writeFile(dir / "s.csv", small);
    Dataset s;
    ASSERT_TRUE(succeeded(loadDigits(dir / "s.csv", s))) << n;
    EXPECT_EQ(s.size(), static_cast<int64_t>(n / 8)) << n;
  }
}

TEST(Digits, ReadsScikitLearnsFile) {
  Dataset d;
  FILE *f = std::fopen(MGS_DIGITS_CSV, "rb");
  if (!f)
    GTEST_SKIP() << MGS_DIGITS_CSV << " not installed";
  std::fclose(f);
  ASSERT_TRUE(succeeded(loadDigits(MGS_DIGITS_CSV, d)));
  EXPECT_EQ(d.size(), 1797);
  EXPECT_EQ(d.sampleSize, 64);
  EXPECT_EQ(d.samples.size(), 1797u * 64);
  std::set<int64_t> labels(d.labels.begin(), d.labels.end());
  EXPECT_EQ(labels, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(*std::max_element(d.samples.begin(), d.samples.end()), 1.0f);
  EXPECT_EQ(*std::min_element(d.samples.begin(), d.samples.end()), 0.0f);
  EXPECT_EQ(d.labels[0], 0);
  EXPECT_EQ(d.samples[2], 5.0f / 16); // the first row starts 0,0,5,13
  EXPECT_TRUE(succeeded(checkDataset(d, 64, 1, 10)));
}

TEST(Digits, Errors) {
  TempDir dir;
  Dataset d;
  Status err;

  err = loadDigits(dir / "none.csv", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "cannot open '" + (dir / "none.csv") + "': No such file or directory");

  writeFile(dir / "bad.csv", "1,2,3\n1,x,3\n");
  err = loadDigits(dir / "bad.csv", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "digits file '" + (dir / "bad.csv") + "' line 2: field 2 is not a number");

  writeFile(dir / "empty-field.csv", "1,2,\n");
  err = loadDigits(dir / "empty-field.csv", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "digits file '" + (dir / "empty-field.csv") + "' line 1: field 3 is not a number");

  writeFile(dir / "ragged.csv", "1,2,3\n1,2\n");
  err = loadDigits(dir / "ragged.csv", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "digits file '" + (dir / "ragged.csv") + "' line 2: 2 fields, but the first row has 3");

  writeFile(dir / "label.csv", "1,2,3.5\n");
  err = loadDigits(dir / "label.csv", d);
  EXPECT_FALSE(err.ok());
  EXPECT_TRUE(contains(err.message, "line 1: label 3.5")) << err.message;

  writeFile(dir / "empty.csv", "\n\n");
  err = loadDigits(dir / "empty.csv", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "digits file '" + (dir / "empty.csv") + "' has no samples");

  // A truncated gzip stream.
  std::string csv;
  for (int i = 0; i < 200; ++i)
    csv += std::to_string(i % 17) + "," + std::to_string(i * 7 % 17) + "," + std::to_string(i % 10) + "\n";
  writeGzip(dir / "full.csv.gz", csv);
  std::string gz = readFile(dir / "full.csv.gz");
  writeFile(dir / "cut.csv.gz", gz.substr(0, gz.size() / 2));
  err = loadDigits(dir / "cut.csv.gz", d);
  EXPECT_FALSE(err.ok());
  EXPECT_TRUE(contains(err.message, "cannot read '" + (dir / "cut.csv.gz") + "'")) << err.message;
  EXPECT_TRUE(contains(err.message, "truncated")) << err.message;
}

//===--- MNIST ------------------------------------------------------------===//

std::string idx(const std::vector<uint32_t> &dims, const std::vector<uint8_t> &values) {
  std::string s = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      s += static_cast<char>((d >> shift) & 0xff);
  s.append(values.begin(), values.end());
  return s;
}

std::vector<uint8_t> ramp(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(i * 5 % 256);
  return v;
}

TEST(Mnist, ReadsADirectoryPlainOrGzip) {
  TempDir dir;
  makeDir(dir / "plain");
  makeDir(dir / "gz");
  std::string images = idx({3, 2, 2}, ramp(12)), labels = idx({3}, {7, 0, 9});
  writeFile(dir / "plain/train-images-idx3-ubyte", images);
  writeFile(dir / "plain/train-labels-idx1-ubyte", labels);
  writeGzip(dir / "gz/train-images-idx3-ubyte.gz", images);
  writeGzip(dir / "gz/train-labels-idx1-ubyte.gz", labels);
  for (const char *sub : {"plain", "gz"}) {
    Dataset d;
    ASSERT_TRUE(succeeded(loadMnist(dir / sub, d)));
    EXPECT_EQ(d.size(), 3);
    EXPECT_EQ(d.sampleSize, 4);
    EXPECT_EQ(d.labels, (std::vector<int64_t>{7, 0, 9}));
    EXPECT_FLOAT_EQ(d.samples[11], 55.0f / 255);
    DataFormat f;
    ASSERT_TRUE(succeeded(guessDataFormat(dir / sub, f)));
    EXPECT_EQ(f, DataFormat::Mnist);
  }
  // The images file itself: the labels file is found next to it.
  Dataset d;
  ASSERT_TRUE(succeeded(loadMnist(dir / "gz/train-images-idx3-ubyte.gz", d)));
  EXPECT_EQ(d.size(), 3);
  DataFormat f;
  ASSERT_TRUE(succeeded(guessDataFormat(dir / "plain/train-images-idx3-ubyte", f)));
  EXPECT_EQ(f, DataFormat::Mnist);
}

TEST(Mnist, TheTestSplitOfADirectoryIsItsT10kFiles) {
  // Fashion-MNIST's layout (Debian's dataset-fashion-mnist): both splits,
  // gzip, in one directory.
  TempDir dir;
  writeGzip(dir / "train-images-idx3-ubyte.gz", idx({3, 2, 2}, ramp(12)));
  writeGzip(dir / "train-labels-idx1-ubyte.gz", idx({3}, {7, 0, 9}));
  writeGzip(dir / "t10k-images-idx3-ubyte.gz", idx({2, 2, 2}, ramp(8)));
  writeGzip(dir / "t10k-labels-idx1-ubyte.gz", idx({2}, {4, 5}));
  Dataset d;
  ASSERT_TRUE(succeeded(loadMnist(dir.path(), d)));
  EXPECT_EQ(d.labels, (std::vector<int64_t>{7, 0, 9}));
  ASSERT_TRUE(succeeded(loadDataset(dir.path(), DataFormat::Mnist, d, DataSplit::Test)));
  EXPECT_EQ(d.labels, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(d.source, dir / "t10k-images-idx3-ubyte.gz");
  // A file is read as it is, whichever split is asked for.
  ASSERT_TRUE(succeeded(loadMnist(dir / "train-images-idx3-ubyte.gz", d, DataSplit::Test)));
  EXPECT_EQ(d.size(), 3);

  TempDir trainOnly;
  writeFile(trainOnly / "train-images-idx3-ubyte", idx({3, 2, 2}, ramp(12)));
  writeFile(trainOnly / "train-labels-idx1-ubyte", idx({3}, {7, 0, 9}));
  Status err = loadMnist(trainOnly.path(), d, DataSplit::Test);
  EXPECT_EQ(err.message, "MNIST directory '" + trainOnly.path() +
                             "' has no t10k-images-idx3-ubyte (or .gz) (the test split)");
  writeFile(trainOnly / "t10k-images-idx3-ubyte", idx({2, 2, 2}, ramp(8)));
  err = loadMnist(trainOnly.path(), d, DataSplit::Test);
  EXPECT_EQ(err.message, "MNIST directory '" + trainOnly.path() +
                             "' has no t10k-labels-idx1-ubyte (or .gz) (the test split)");
}

TEST(Mnist, Errors) {
  TempDir dir;
  Dataset d;
  Status err;
  makeDir(dir / "empty");
  err = loadMnist(dir / "empty", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "MNIST directory '" + (dir / "empty") + "' has no train-images-idx3-ubyte (or .gz)");

  int cases = 0;
  auto check = [&](const std::string &images, const std::string &labels, const std::string &what) {
    std::string sub = dir / ("case" + std::to_string(cases++));
    makeDir(sub);
    writeFile(sub + "/train-images-idx3-ubyte", images);
    if (!labels.empty())
      writeFile(sub + "/train-labels-idx1-ubyte", labels);
    err = loadMnist(sub, d);
    EXPECT_FALSE(err.ok());
    EXPECT_TRUE(contains(err.message, what)) << err.message;
    return sub;
  };
  std::string good = idx({3, 2, 2}, ramp(12)), labels = idx({3}, {1, 2, 3});
  std::string sub = check(good, "", "has no train-labels-idx1-ubyte");
  EXPECT_TRUE(contains(err.message, sub)) << err.message;
  sub = check("\x01\x02\x08\x03" + good.substr(4), labels, "not an IDX file (bad magic)");
  EXPECT_EQ(err.message,
            "MNIST images file '" + sub + "/train-images-idx3-ubyte': not an IDX file (bad magic)");
  sub = check(good.substr(0, good.size() - 1), labels, "truncated file: 12 data bytes expected, 11 present");
  EXPECT_TRUE(contains(err.message, sub + "/train-images-idx3-ubyte")) << err.message;
  check(good.substr(0, 6), labels, "truncated file (6 bytes)");
  check(good, idx({2}, {1, 2}), "has 2 labels but images file");
  check(good, idx({3}, {1, 2}), "MNIST labels file");
  std::string floats = good;
  floats[2] = 0x0D;
  check(floats, labels, "unsupported IDX element type 0x0D (only unsigned bytes, 0x08)");
  // A header with fewer dimensions than the data: says what it gives.
  std::string oneDim = good.substr(0, 3) + "\x01" + good.substr(4);
  check(oneDim, labels,
        "17 unexpected bytes after the data (its header gives 1 dimension(s), 3: 3 bytes)");
}

//===--- CIFAR-10 ---------------------------------------------------------===//

std::string cifarRecords(std::initializer_list<uint8_t> labels) {
  std::string s;
  for (uint8_t l : labels) {
    s += static_cast<char>(l);
    for (int j = 0; j < 3072; ++j)
      s += static_cast<char>((j + l) % 256);
  }
  return s;
}

TEST(Cifar10, ReadsAFileOrADirectoryInBatchOrder) {
  TempDir dir;
  makeDir(dir / "c");
  writeFile(dir / "c/data_batch_2.bin", cifarRecords({5}));
  writeFile(dir / "c/data_batch_1.bin", cifarRecords({3, 9}));
  writeFile(dir / "c/test_batch.bin", cifarRecords({1}));
  Dataset d;
  ASSERT_TRUE(succeeded(loadCifar10(dir / "c", d)));
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.sampleSize, 3072);
  EXPECT_EQ(d.labels, (std::vector<int64_t>{3, 9, 5}));
  EXPECT_FLOAT_EQ(d.samples[3072 * 2 + 10], 15.0f / 255);
  ASSERT_TRUE(succeeded(loadCifar10(dir / "c/data_batch_2.bin", d)));
  EXPECT_EQ(d.labels, (std::vector<int64_t>{5}));
  DataFormat f;
  ASSERT_TRUE(succeeded(guessDataFormat(dir / "c", f)));
  EXPECT_EQ(f, DataFormat::Cifar10);
  ASSERT_TRUE(succeeded(guessDataFormat(dir / "c/data_batch_1.bin", f)));
  EXPECT_EQ(f, DataFormat::Cifar10);
}

TEST(Cifar10, TheTestSplitOfADirectoryIsItsTestBatch) {
  TempDir dir;
  writeFile(dir / "data_batch_1.bin", cifarRecords({3, 9}));
  Dataset d;
  Status err = loadCifar10(dir.path(), d, DataSplit::Test);
  EXPECT_EQ(err.message,
            "CIFAR-10 directory '" + dir.path() + "' has no test_batch.bin (the test split)");
  writeGzip(dir / "test_batch.bin.gz", cifarRecords({1, 2, 4}));
  ASSERT_TRUE(succeeded(loadDataset(dir.path(), DataFormat::Cifar10, d, DataSplit::Test)));
  EXPECT_EQ(d.labels, (std::vector<int64_t>{1, 2, 4}));
}

TEST(Cifar10, Errors) {
  TempDir dir;
  Dataset d;
  Status err;
  makeDir(dir / "c");
  err = loadCifar10(dir / "c", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "CIFAR-10 directory '" + (dir / "c") + "' has no data_batch_*.bin files");
  err = loadCifar10(dir / "c/data_batch_1.bin", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "CIFAR-10 file '" + (dir / "c/data_batch_1.bin") + "' does not exist");
  std::string two = cifarRecords({1, 2});
  writeFile(dir / "c/data_batch_1.bin", two.substr(0, two.size() - 100));
  err = loadCifar10(dir / "c", d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "CIFAR-10 file '" + (dir / "c/data_batch_1.bin") +
                "': 6046 bytes is not a whole number of 3073-byte records (truncated or "
                "not CIFAR-10)");
}

//===--- Format guessing and checks ---------------------------------------===//

//===--- NumPy .npy -------------------------------------------------------===//

/// A .npy file (format 1.0) of `descr` and `shape` (a Python tuple) holding `data`.
std::string npy(const std::string &descr, const std::string &shape, const std::string &data,
                bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " +
                       (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

template <typename T> std::string bytesOf(std::initializer_list<T> values) {
  std::string s;
  for (T v : values)
    s.append(reinterpret_cast<const char *>(&v), sizeof v);
  return s;
}

/// A data set's samples and labels as values (they may be read in place).
std::vector<float> samplesOf(const Dataset &d) {
  std::vector<float> v(d.sampleValues());
  for (uint64_t k = 0; k < v.size(); ++k)
    v[k] = d.sampleValue(k);
  return v;
}
std::vector<int64_t> labelsOf(const Dataset &d) {
  std::vector<int64_t> v(d.labelCount());
  for (uint64_t k = 0; k < v.size(); ++k)
    v[k] = d.label(k);
  return v;
}

TEST(Npy, ReadsFloatInputsAndIntegerLabels) {
  TempDir dir;
  writeFile(dir / "x.npy", npy("<f4", "(3, 2, 2)", bytesOf<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                  10, 11})));
  writeFile(dir / "y.npy", npy("<i8", "(3,)", bytesOf<int64_t>({2, 0, 1})));
  Dataset d;
  ASSERT_TRUE(succeeded(loadNpy(dir / "x.npy", dir / "y.npy", d)));
  EXPECT_EQ(d.sampleSize, 4);
  EXPECT_EQ(labelsOf(d), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(d.sampleValue(5), 5.0f);
  // float64 inputs, uint8 labels (numpy's '|u1').
  writeFile(dir / "x64.npy", npy("<f8", "(2, 1)", bytesOf<double>({0.25, -1.5})));
  writeFile(dir / "y8.npy", npy("|u1", "(2,)", std::string("\x07\x03", 2)));
  ASSERT_TRUE(succeeded(loadNpy(dir / "x64.npy", dir / "y8.npy", d)));
  EXPECT_EQ(samplesOf(d), (std::vector<float>{0.25f, -1.5f}));
  EXPECT_EQ(labelsOf(d), (std::vector<int64_t>{7, 3}));
}

TEST(Npy, ReadsInPlace) {
  // A plain .npy is read in place (mapped: the workers on a node share it)
  // and converted a sample at a time; a gzip-compressed one is inflated
  // once, in its own dtype. Each dtype gives the same values.
  TempDir dir;
  writeFile(dir / "y.npy", npy("|u1", "(2,)", std::string("\x01\x02", 2)));
  const std::vector<float> want = {0, 7, 255, 3, 1, 200};
  const std::string u8 = npy("|u1", "(2, 3)", bytesOf<uint8_t>({0, 7, 255, 3, 1, 200}));
  writeFile(dir / "u8.npy", u8);
  writeGzip(dir / "u8.npy.gz", u8);
  writeFile(dir / "i16.npy", npy("<i2", "(2, 3)", bytesOf<int16_t>({0, 7, 255, 3, 1, 200})));
  writeFile(dir / "u32.npy", npy("<u4", "(2, 3)", bytesOf<uint32_t>({0, 7, 255, 3, 1, 200})));
  writeFile(dir / "f64.npy", npy("<f8", "(2, 3)", bytesOf<double>({0, 7, 255, 3, 1, 200})));
  for (const char *name : {"u8.npy", "u8.npy.gz", "i16.npy", "u32.npy", "f64.npy"}) {
    SCOPED_TRACE(name);
    Dataset d;
    ASSERT_TRUE(succeeded(loadNpy(dir / name, dir / "y.npy", d)));
    EXPECT_TRUE(d.samples.empty());
    EXPECT_NE(d.storedSamples.owner, nullptr);
    EXPECT_EQ(samplesOf(d), want);
    float sample[3];
    int64_t ids[3], label = 0;
    d.copySample(1, sample);
    d.copySampleIds(1, ids);
    d.copyLabels(1, &label);
    EXPECT_EQ(std::vector<float>(sample, sample + 3), (std::vector<float>{3, 1, 200}));
    EXPECT_EQ(std::vector<int64_t>(ids, ids + 3), (std::vector<int64_t>{3, 1, 200}));
    EXPECT_EQ(label, 2);
  }
  // What loadNpy returns outlives the files' names: a mapping holds the
  // file, removed or not.
  Dataset d;
  ASSERT_TRUE(succeeded(loadNpy(dir / "u8.npy", dir / "y.npy", d)));
  std::remove((dir / "u8.npy").c_str());
  EXPECT_EQ(samplesOf(d), want);
}

TEST(Npy, ReadsFloatTargets) {
  // A model trained against float targets (mgsc --loss mse, ...): targets of
  // any shape (N, ...) in float32, float64 or integers, into `targets`.
  TempDir dir;
  writeFile(dir / "x.npy", npy("<f4", "(2, 3)", bytesOf<float>({0, 1, 2, 3, 4, 5})));
  writeFile(dir / "t.npy", npy("<f8", "(2, 2, 2)", bytesOf<double>({0.5, -1, 2, 3, 4, 5, 6, 7})));
  Dataset d;
  ASSERT_TRUE(succeeded(loadNpy(dir / "x.npy", dir / "t.npy", d, /*floatTargets=*/true)));
  EXPECT_EQ(d.labelsPerSample, 4);
  EXPECT_EQ(d.size(), 2);
  EXPECT_EQ(d.labelCount(), 0u);
  EXPECT_EQ(d.targets, (std::vector<float>{0.5f, -1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(checkDataset(d, 3, 4, 1).ok());
  writeFile(dir / "ti.npy", npy("<i4", "(2,)", bytesOf<int32_t>({-3, 9})));
  ASSERT_TRUE(succeeded(loadNpy(dir / "x.npy", dir / "ti.npy", d, true)));
  EXPECT_EQ(d.targets, (std::vector<float>{-3, 9}));
  // A uint64 beyond int64, a boolean array, an infinity.
  writeFile(dir / "tu.npy", npy("<u8", "(2,)", bytesOf<uint64_t>({1, ~uint64_t{0}})));
  Status err = loadNpy(dir / "x.npy", dir / "tu.npy", d, true);
  EXPECT_EQ(err.message, "NumPy targets '" + (dir / "tu.npy") +
                             "': value 0 of sample 1 (counting from 0) is a uint64 beyond the "
                             "range of a target");
  writeFile(dir / "tb.npy", npy("|b1", "(2,)", std::string("\x01\x00", 2)));
  err = loadNpy(dir / "x.npy", dir / "tb.npy", d, true);
  EXPECT_EQ(err.message, "NumPy targets '" + (dir / "tb.npy") +
                             "': dtype must be float32, float64 or integers (the model's loss "
                             "takes float targets)");
  writeFile(dir / "tinf.npy", npy("<f4", "(2,)", bytesOf<float>({1, INFINITY})));
  ASSERT_TRUE(succeeded(loadNpy(dir / "x.npy", dir / "tinf.npy", d, true)));
  err = checkDataset(d, 3, 1, 1);
  EXPECT_EQ(err.message, "data '" + (dir / "tinf.npy") +
                             "': target 0 of sample 1 (counting from 0) is inf, not a finite "
                             "value within +-1e15");
}

TEST(Npy, SamplesAloneForAnotherInput) {
  // A model input beside the first (--input-data): samples without labels,
  // counted by their values; errors name the file as the caller says.
  TempDir dir;
  Dataset d;
  std::string t = dir / "t.npy";
  writeFile(t, npy("<i8", "(3, 2)", bytesOf<int64_t>({4, 5, 6, 7, 8, 9})));
  ASSERT_TRUE(succeeded(loadNpySamples(t, d, "--input-data t")));
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.sampleSize, 2);
  EXPECT_EQ(d.sampleShape, std::vector<int64_t>({2}));
  int64_t ids[2];
  d.copySampleIds(2, ids);
  EXPECT_EQ(ids[0], 8);
  EXPECT_EQ(ids[1], 9);
  writeFile(t, npy("<f4", "(2, 1)", bytesOf<float>({1, NAN})));
  Status err = loadNpySamples(t, d, "--input-data c");
  EXPECT_EQ(err.message, "--input-data c '" + t +
                             "': sample 1 (counting from 0) holds a value "
                             "that is not a finite float32 (NaN, infinity, or a float64 beyond "
                             "float32's range)");
  EXPECT_EQ(d.size(), 0);
}

TEST(Npy, ErrorsNameTheFileAndTheProblem) {
  TempDir dir;
  Status err;
  Dataset d;
  std::string x = dir / "x.npy", y = dir / "y.npy";
  writeFile(y, npy("<i4", "(2,)", bytesOf<int32_t>({0, 1})));
  auto fails = [&](const std::string &xBytes, const std::string &want) {
    writeFile(x, xBytes);
    err = loadNpy(x, y, d);
    EXPECT_FALSE(err.ok());
    EXPECT_TRUE(contains(err.message, want)) << err.message;
  };
  fails("not numpy at all", "NumPy inputs '" + x + "': not a NumPy .npy file");
  fails(npy("<f4", "(2, 2)", bytesOf<float>({1, 2, 3, 4}), /*fortran=*/true),
        "stored in Fortran order");
  fails(npy(">f4", "(2, 2)", bytesOf<float>({1, 2, 3, 4})), "dtype '>f4' is big-endian");
  fails(npy("|O", "(2,)", "xxxxxxxxxxxxxxxx"), "dtype '|O' is not a number type (object, string "
                                               "and structured arrays are not supported)");
  fails(npy("<U2", "(2,)", std::string(16, 'a')), "dtype '<U2' is not a number type");
  fails(npy("<f4", "(0, 2)", ""), "NumPy inputs '" + x + "' hold no samples");
  fails(npy("<f4", "(2, 2)", bytesOf<float>({1, 2, 3, NAN})),
        "NumPy inputs '" + x + "': sample 1 (counting from 0) holds a value that is not a "
        "finite float32");
  fails(npy("<f8", "(2, 1)", bytesOf<double>({1, 1e300})), "beyond float32's range");
  fails(npy("<f4", "(2, 2)", bytesOf<float>({1, 2, 3})), "holds 12 bytes of data; its shape and "
                                                        "dtype need 16 (truncated?)");
  fails(npy("<f2", "(2, 1)", std::string(4, 'a')), "dtype must be float32 or float64");
  fails(npy("<i4", "(2, 1)", bytesOf<int32_t>({1, (1 << 24) + 1})),
        "NumPy inputs '" + x + "': sample 1 (counting from 0) holds an integer beyond +-2^24");
  fails(npy("<f4", "(3, 1)", bytesOf<float>({1, 2, 3})),
        "NumPy inputs '" + x + "' hold 3 samples, labels '" + y + "' 2");
  writeFile(x, npy("<f4", "(2, 1)", bytesOf<float>({1, 2})));
  // Labels: out of range names the labels file; beyond int64 is refused.
  writeFile(y, npy("<i4", "(2,)", bytesOf<int32_t>({0, 9})));
  ASSERT_TRUE(succeeded(loadNpy(x, y, d)));
  err = checkDataset(d, 1, 1, 5);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data '" + y +
                             "': label 9 at sample 1 (counting from 0) is out of range for "
                             "the model's 5 classes");
  writeFile(y, npy("<u8", "(2,)", bytesOf<uint64_t>({0, ~uint64_t(0)})));
  err = loadNpy(x, y, d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "NumPy labels '" + y +
                "': label 18446744073709551615 of sample 1 (counting from 0) is not a class "
                "number");
  writeFile(y, npy("<f4", "(2,)", bytesOf<float>({0, 1})));
  err = loadNpy(x, y, d);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "NumPy labels '" + y +
                             "': must be integers of shape (N,) or, several per sample, (N, L) "
                             "(one per token) or (N, d1, ...) (one per position)");
  err = loadNpy(x, dir / "missing.npy", d);
  EXPECT_FALSE(err.ok());
  EXPECT_TRUE(contains(err.message, "missing.npy")) << err.message;
  // loadDataset cannot read NumPy data without its labels.
  err = loadDataset(x, DataFormat::Npy, d);
  EXPECT_FALSE(err.ok());
  EXPECT_TRUE(contains(err.message, "needs its labels file (--labels FILE.npy)")) << err.message;
}

TEST(Npy, TokenSequences) {
  // Integer inputs (token ids) and a label per token: (N, T) and (N, T).
  TempDir dir;
  const std::string x = dir / "x.npy", y = dir / "y.npy";
  writeFile(x, npy("<i8", "(2, 3)", bytesOf<int64_t>({5, 0, 7, 1, 2, 3})));
  writeFile(y, npy("<i8", "(2, 3)", bytesOf<int64_t>({0, 7, 1, 2, 3, 4})));
  Dataset d;
  Status err;
  ASSERT_TRUE(succeeded(loadNpy(x, y, d)));
  EXPECT_EQ(d.size(), 2);
  EXPECT_EQ(d.sampleSize, 3);
  EXPECT_EQ(d.labelsPerSample, 3);
  EXPECT_EQ(samplesOf(d), (std::vector<float>{5, 0, 7, 1, 2, 3}));
  EXPECT_TRUE(succeeded(checkDataset(d, 3, 3, 8)));
  err = checkDataset(d, 3, 1, 8);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data '" + y +
                             "': 3 label(s) per sample, but the model's loss takes 1 per "
                             "sample (labels of shape (N,))");
  err = checkDataset(d, 3, 3, 7);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data '" + y +
                             "': label 7 at sample 0 (counting from 0), position 1 is out of "
                             "range for the model's 7 classes");
}

TEST(Npy, LabelsPerPosition) {
  // A label per position of each sample, (N, d1, d2): a segmentation's per
  // pixel classes, row-major; messages name a position by its indices.
  TempDir dir;
  const std::string x = dir / "x.npy", y = dir / "y.npy";
  writeFile(x, npy("<f4", "(2, 1, 2, 3)",
                   bytesOf<float>(
                       {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f})));
  writeFile(y, npy("|u1", "(2, 2, 3)", bytesOf<uint8_t>({0, 1, 2, 3, 4, 0, 1, 1, 1, 2, 2, 4})));
  Dataset d;
  ASSERT_TRUE(succeeded(loadNpy(x, y, d)));
  EXPECT_EQ(d.size(), 2);
  EXPECT_EQ(d.labelsPerSample, 6);
  EXPECT_EQ(d.labelShape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(labelsOf(d), (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 1, 1, 2, 2, 4}));
  EXPECT_TRUE(succeeded(checkDataset(d, 6, 6, 5)));
  Status err = checkDataset(d, 6, 6, 4);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data '" + y +
                             "': label 4 at sample 0 (counting from 0), position (1, 1) is out "
                             "of range for the model's 4 classes");
  err = checkDataset(d, 6, 3, 5);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data '" + y +
                             "': 6 label(s) per sample, but the model's loss takes 3 per "
                             "sample (labels of shape (N, 3), or (N, d1, ...) of 3 positions)");
  // The positions' shape, when the model says it (the manifest's label_shape): the same count
  // in another layout is refused; labels of rank 2 (N, 6) are the positions flattened.
  EXPECT_TRUE(succeeded(checkLabelShape(d, {2, 3})));
  err = checkLabelShape(d, {3, 2}, "test data");
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "test data '" + y +
                             "': labels of shape (N, 2, 3), but the model's loss takes (N, 3, 2) "
                             "(its scores' positions, in their order)");
  writeFile(y, npy("|u1", "(2, 6)", bytesOf<uint8_t>({0, 1, 2, 3, 4, 0, 1, 1, 1, 2, 2, 4})));
  ASSERT_TRUE(succeeded(loadNpy(x, y, d)));
  EXPECT_TRUE(d.labelShape.empty());
  EXPECT_TRUE(succeeded(checkLabelShape(d, {3, 2})));
}

TEST(DataFormat, GuessesFromThePath) {
  TempDir dir;
  Status err;
  DataFormat f;
  writeFile(dir / "digits.csv.gz", "");
  ASSERT_TRUE(succeeded(guessDataFormat(dir / "digits.csv.gz", f)));
  EXPECT_EQ(f, DataFormat::Digits);
  writeFile(dir / "x.CSV", "");
  ASSERT_TRUE(succeeded(guessDataFormat(dir / "x.CSV", f)));
  EXPECT_EQ(f, DataFormat::Digits);
  writeFile(dir / "data.txt", "");
  err = guessDataFormat(dir / "data.txt", f);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "cannot guess the data format of '" + (dir / "data.txt") +
                             "'; pass --data-format digits|mnist|cifar10|npy|imagefolder");
  writeFile(dir / "x.npy", "");
  ASSERT_TRUE(succeeded(guessDataFormat(dir / "x.npy", f)));
  EXPECT_EQ(f, DataFormat::Npy);
  err = guessDataFormat(dir / "nope", f);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data path '" + (dir / "nope") + "' does not exist");
  err = guessDataFormat(dir.path(), f);
  EXPECT_FALSE(err.ok());
  EXPECT_TRUE(contains(err.message, "cannot guess the data format of directory")) << err.message;
  // A directory of folders: an image folder.
  ASSERT_EQ(::mkdir((dir / "cat").c_str(), 0755), 0);
  ASSERT_TRUE(succeeded(guessDataFormat(dir.path(), f)));
  EXPECT_EQ(f, DataFormat::ImageFolder);
  EXPECT_STREQ(dataFormatName(f), "imagefolder");

  EXPECT_TRUE(parseDataFormat("cifar10", f));
  EXPECT_EQ(f, DataFormat::Cifar10);
  EXPECT_STREQ(dataFormatName(f), "cifar10");
  EXPECT_FALSE(parseDataFormat("imagenet", f));
}

TEST(DataCheck, SampleSizeAndLabelRange) {
  Dataset d;
  d.source = "d.csv";
  d.sampleSize = 3;
  d.samples.assign(6, 0);
  d.labels = {1, 4};
  Status err;
  EXPECT_TRUE(succeeded(checkDataset(d, 3, 1, 5)));
  err = checkDataset(d, 4, 1, 5);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "data 'd.csv': a sample has 3 values, but the model's input takes 4 per sample");
  err = checkDataset(d, 3, 1, 4);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message,
            "data 'd.csv': label 4 at sample 1 (counting from 0) is out of range for the "
            "model's 4 classes");
}

TEST(Data, LabelOutOfRangeNamesTheCsvLine) {
  // Line numbers, as the parser's own errors give them (blank lines count).
  TempDir dir;
  writeFile(dir / "d.csv", "0,0,1\n\n0,0,7\n");
  Dataset d;
  Status err;
  ASSERT_TRUE(succeeded(loadDigits(dir / "d.csv", d)));
  err = checkDataset(d, 2, 1, 5);
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.message, "data '" + (dir / "d.csv") +
                             "': label 7 at line 3 is out of range for the model's 5 classes");
}

TEST(Data, IgnoredLabelIsAccepted) {
  // NumPy labels may hold the label the loss ignores (padding), no other
  // label outside the classes.
  Dataset d;
  d.sampleSize = 2;
  d.labelsPerSample = 3;
  d.samples = {0, 1, 2, 3};
  d.labels = {0, -100, 4, 1, 2, -100};
  d.source = "x.npy";
  d.labelSource = "y.npy";
  EXPECT_TRUE(checkDataset(d, 2, 3, 5).ok());
  Status err = checkDataset(d, 2, 3, 5, "data", 4);
  EXPECT_EQ(err.message, "data 'y.npy': label -100 at sample 0 (counting from 0), position 1 is "
                         "out of range for the model's 5 classes (padding must be the ignored "
                         "label 4: mgsc --ignore-index)");
  d.labels[1] = -1;
  EXPECT_FALSE(checkDataset(d, 2, 3, 5).ok());
}

//===--- Determinism ------------------------------------------------------===//

TEST(Order, SplitIsSeededDisjointAndComplete) {
  std::vector<int64_t> train, held, train2, held2;
  splitHoldout(1797, 0.2, 1, train, held);
  EXPECT_EQ(held.size(), 359u);
  EXPECT_EQ(train.size(), 1438u);
  EXPECT_TRUE(std::is_sorted(train.begin(), train.end()));
  std::vector<int64_t> all = train;
  all.insert(all.end(), held.begin(), held.end());
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < 1797; ++i)
    ASSERT_EQ(all[i], i);
  splitHoldout(1797, 0.2, 1, train2, held2);
  EXPECT_EQ(held, held2);
  splitHoldout(1797, 0.2, 2, train2, held2);
  EXPECT_NE(held, held2);
  splitHoldout(10, 0.0, 1, train2, held2);
  EXPECT_TRUE(held2.empty());
}

TEST(Order, ShuffleIsAPureFunctionOfSeedAndEpoch) {
  std::vector<int64_t> base(100);
  for (int i = 0; i < 100; ++i)
    base[i] = i * 3;
  auto shuffled = [&](uint64_t seed, uint64_t epoch) {
    std::vector<int64_t> v = base;
    shuffleForEpoch(v, seed, epoch);
    return v;
  };
  EXPECT_EQ(shuffled(1, 5), shuffled(1, 5));
  EXPECT_NE(shuffled(1, 5), shuffled(1, 6));
  EXPECT_NE(shuffled(1, 5), shuffled(2, 5));
  std::vector<int64_t> v = shuffled(1, 0);
  EXPECT_NE(v, base);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, base);
}

} // namespace
