//===- LoadData.cpp - The data sets of a training run ---------------------===//
//
// --data (and --labels), --test-data, the other inputs' --input-data and
// --test-input-data, each checked against the model (sample sizes, labels,
// token ids within their tables, an image folder's classes), and the
// held-out split (the batches made of them: Train.cpp).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "FileIO.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mgs::rt::driver {

int Driver::checkSamples(const Dataset &d, const std::string &path, const char *what) {
  if (Status s = checkDataset(d, sampleSize, lossInGraph() ? d.labelsPerSample : labelsPerSample,
                              m.classes, what, m.ignoreIndex);
      !s.ok())
    return error(s);
  if (!m.labelShape.empty())
    if (Status s = checkLabelShape(
            d, std::vector<int64_t>(m.labelShape.begin() + 1, m.labelShape.end()), what);
        !s.ok())
      return error(s);
  return checkIds(d, path, what, m.inputs[0]);
}

int Driver::checkIds(const Dataset &d, const std::string &path, const char *what,
                     const TensorSpec &input) {
  if (!input.int64)
    return 0;
  // Token ids: the samples must be integers (within +-2^24, exact in the
  // float32 the data sets hold), and within the rows of the tables (the
  // embeddings) the input indexes, when the model says which.
  for (uint64_t i = 0; i < d.sampleValues(); ++i) {
    const float v = d.sampleValue(i);
    if (v != std::trunc(v) || std::fabs(v) > 16777216.0f)
      return error("%s '%s': sample %lld holds %g, but the model's input '%s' takes token ids "
                   "(integers)",
                   what, path.c_str(), static_cast<long long>(i) / d.sampleSize, v,
                   input.name.c_str());
    const bool rows = beyondIndexRows(input, v);
    if (rows || outsideIndexRange(input, v))
      return error("%s '%s': sample %lld holds %s%g at position %lld, outside %s", what,
                   path.c_str(), static_cast<long long>(i) / d.sampleSize, rows ? "token id " : "",
                   v, static_cast<long long>(i) % d.sampleSize,
                   (rows ? describeIndexBound(input) : describeIndexRange(input)).c_str());
  }
  return 0;
}

int Driver::loadInputData() {
  if (m.inputs.size() == 1) {
    for (const auto *files : {&o.inputData, &o.testInputData})
      if (!files->empty())
        return usage(std::string(files == &o.inputData ? "--input-data" : "--test-input-data") +
                     " feeds a model input beside the first; the model has one, '" +
                     m.inputs[0].name + "', which --data " +
                     (files == &o.inputData ? "" : "(and --test-data) ") + "feeds");
    return 0;
  }
  if (int rc = loadOtherInputs(o.inputData, data, "--input-data", inputSets))
    return rc;
  return haveTestSet()
             ? loadOtherInputs(o.testInputData, testSet, "--test-input-data", testInputSets)
             : 0;
}

int Driver::loadOtherInputs(const std::vector<std::pair<std::string, std::string>> &files,
                            const Dataset &first, const char *option, std::vector<Dataset> &sets) {
  const bool test = &first == &testSet;
  const std::string &firstPath = test ? o.testData : o.data;
  std::string others; // the inputs the option may name
  for (size_t i = 1; i < m.inputs.size(); ++i)
    others += (i > 1 ? ", '" : "'") + m.inputs[i].name + "'";
  for (const auto &[name, file] : files) {
    auto named = std::find_if(m.inputs.begin(), m.inputs.end(),
                              [&](const TensorSpec &in) { return in.name == name; });
    if (named == m.inputs.begin())
      return usage(std::string(option) + " " + name + "=...: '" + name +
                   "' is the model's first input, which " + (test ? "--test-data" : "--data") +
                   " feeds; " + option + " feeds the others (" + others + ")");
    if (named == m.inputs.end())
      return usage(std::string(option) + " " + name + "=...: the model has no input '" + name +
                   "' (its inputs beside the first: " + others + ")");
  }
  sets.assign(m.inputs.size(), Dataset());
  for (size_t i = 1; i < m.inputs.size(); ++i) {
    const TensorSpec &in = m.inputs[i];
    auto given =
        std::find_if(files.begin(), files.end(), [&](const auto &f) { return f.first == in.name; });
    if (given == files.end())
      return usage("the model's input '" + in.name + "' " + formatShape(in.dims) + " (" +
                   (in.int64 ? "int64 token ids" : "float32") + ") needs its samples: " + option +
                   " " + in.name + "=FILE.npy, beside " + (test ? "--test-data" : "--data") +
                   " (which feeds its first input, '" + m.inputs[0].name + "')");
    const std::string &path = given->second;
    const std::string what = std::string(option) + " " + in.name;
    if (!isRegularFile(path))
      return error("%s: '%s' does not exist", what.c_str(), path.c_str());
    if (Status s = loadNpySamples(path, sets[i], what.c_str()); !s.ok())
      return error(s);
    if (sets[i].size() != first.size())
      return error("%s '%s' holds %lld samples, but %s '%s' %lld: sample i of each is one "
                   "sample of the model's inputs",
                   what.c_str(), path.c_str(), static_cast<long long>(sets[i].size()),
                   test ? "--test-data" : "--data", firstPath.c_str(),
                   static_cast<long long>(first.size()));
    if (sets[i].sampleSize != inputSampleSizes[i])
      return error("%s '%s': a sample is %s (%lld values), but the model's input '%s' %s takes "
                   "%lld a sample",
                   what.c_str(), path.c_str(), formatShape(sets[i].sampleShape).c_str(),
                   static_cast<long long>(sets[i].sampleSize), in.name.c_str(),
                   formatShape(in.dims).c_str(), static_cast<long long>(inputSampleSizes[i]));
    if (int rc = checkIds(sets[i], path, what.c_str(), in))
      return rc;
  }
  return 0;
}

int Driver::checkImageFolderModel() {
  const TensorSpec &in = m.inputs[0];
  if (in.int64 || in.dims.size() != 4 || (in.dims[1] != 1 && in.dims[1] != 3))
    return error("an image folder gives images; the model's input '%s' %s is not a batch of "
                 "gray or RGB images (N, 1 or 3, H, W)",
                 in.name.c_str(), formatShape(in.dims).c_str());
  if (!lossInGraph() && (!m.loss.empty() || labelsPerSample != 1))
    return error("an image folder gives one class a sample (its folder); the model trains "
                 "against %s",
                 !m.loss.empty() ? ("float targets (" + m.loss + ")").c_str()
                                 : (std::to_string(labelsPerSample) + " labels a sample").c_str());
  return 0;
}

int Driver::describeImageFolder(const Dataset &d, const char *what) {
  const int64_t classes = static_cast<int64_t>(d.classNames.size());
  std::vector<bool> present(d.classNames.size(), false);
  for (uint64_t k = 0; k < d.labelCount(); ++k)
    present[static_cast<size_t>(d.label(k))] = true;
  const int64_t held = std::count(present.begin(), present.end(), true);
  if (classes > m.classes)
    return error("%s '%s' has %lld class folders, but the model scores %lld classes", what,
                 d.source.c_str(), static_cast<long long>(classes),
                 static_cast<long long>(m.classes));
  std::string names;
  for (int64_t c = 0; c < std::min<int64_t>(classes, 8); ++c)
    names += (c ? ", " : "") + std::to_string(c) + " " + d.classNames[c];
  std::printf(
      "%s '%s': %lld images of %s%lld classes (%s%s)%s, each as %lld x %lld x %lld\n", what,
      d.source.c_str(), static_cast<long long>(d.size()),
      held < classes ? (std::to_string(held) + " of the ").c_str() : "",
      static_cast<long long>(classes), names.c_str(), classes > 8 ? ", ..." : "",
      d.skippedFiles ? (", " + std::to_string(d.skippedFiles) + " other files skipped").c_str()
                     : "",
      static_cast<long long>(m.inputs[0].dims[1]), static_cast<long long>(m.inputs[0].dims[2]),
      static_cast<long long>(m.inputs[0].dims[3]));
  return 0;
}

int Driver::readSet(const std::string &path, const std::string &labelsPath, DataFormat format,
                    bool test, Dataset &d) {
  const char *what = test ? "test data" : "data";
  const TensorSpec &in = m.inputs[0];
  Status s = format == DataFormat::Npy
                 ? (lossInGraph() ? loadNpySamples(path, d)
                                  : loadNpy(path, labelsPath, d, /*floatTargets=*/!m.loss.empty()))
             : format == DataFormat::ImageFolder
                 ? loadImageFolder(path, in.dims[1], in.dims[2], in.dims[3], d,
                                   test ? &data.classNames : nullptr)
                 : loadDataset(path, format, d, test ? DataSplit::Test : DataSplit::Train);
  if (!s.ok())
    return test ? error("--test-data: %s", s.message.c_str()) : error(s);
  if (format == DataFormat::ImageFolder && !lossInGraph())
    if (int rc = describeImageFolder(d, what))
      return rc;
  if (lossInGraph()) { // the format's class labels: not the model's
    d.labels.clear();
    d.storedLabels = StoredNumbers();
    d.labelsPerSample = 1;
  }
  return checkSamples(d, path, what);
}

int Driver::loadData() {
  DataFormat format = o.format;
  if (!o.haveFormat) {
    if (Status s = guessDataFormat(o.data, format); !s.ok())
      return error(s);
  }
  const bool floatTargets = !m.loss.empty() && !lossInGraph();
  if (lossInGraph()) {
    for (const char *option : {"--labels", "--test-labels"})
      if (o.given.count(option))
        return usage(std::string(option) +
                     ": the model computes its loss in its graph (its first output), which "
                     "takes no labels; feed its targets as an input (--input-data NAME=FILE.npy)");
    if (o.perClass)
      return usage("--per-class reports class labels' recall and precision; the model computes "
                   "its loss in its graph, without class labels");
  }
  if (floatTargets && o.perClass)
    return error("--per-class reports class labels' recall and precision; this model's loss "
                 "(%s) trains against float targets",
                 m.loss.c_str());
  if (floatTargets && format != DataFormat::Npy)
    return error("the model's loss (%s) trains against float targets: give NumPy data, --data "
                 "X.npy --labels TARGETS.npy; '%s' is read as %s data, whose labels are classes",
                 m.loss.c_str(), o.data.c_str(), dataFormatName(format));
  if (format == DataFormat::Npy && o.labels.empty() && !lossInGraph())
    return usage("NumPy data '" + o.data + "' needs --labels FILE.npy (" +
                 (floatTargets ? "its float targets)" : "its integer labels)"));
  if (format != DataFormat::Npy && !o.labels.empty())
    return usage("--labels is for NumPy (.npy) data; '" + o.data + "' is read as " +
                 dataFormatName(format) + " data, whose labels come with it");
  if (format == DataFormat::ImageFolder)
    if (int rc = checkImageFolderModel())
      return rc;
  if (int rc = readSet(o.data, o.labels, format, /*test=*/false, data))
    return rc;
  if (haveTestSet()) {
    // The test set is read in the training data's format.
    if (format == DataFormat::Npy && o.testLabels.empty() && !lossInGraph())
      return usage("NumPy test data '" + o.testData + "' needs --test-labels FILE.npy (" +
                   (floatTargets ? "its float targets)" : "its integer labels)"));
    if (format != DataFormat::Npy && !o.testLabels.empty())
      return usage("--test-labels is for NumPy (.npy) data; '" + o.testData + "' is read as " +
                   dataFormatName(format) + " data (--data's format), whose labels come with it");
    if (!isDirectory(o.testData) && !isRegularFile(o.testData))
      return error("test data '%s' does not exist", o.testData.c_str());
    if (int rc = readSet(o.testData, o.testLabels, format, /*test=*/true, testSet))
      return rc;
    testIndices.resize(static_cast<size_t>(testSet.size()));
    for (size_t i = 0; i < testIndices.size(); ++i)
      testIndices[i] = static_cast<int64_t>(i);
  }

  uint64_t seed = o.seed;
  double holdout = o.holdout;
  if (haveResumed) {
    // The split and the shuffling depend on these: take them from the
    // checkpoint unless given, and refuse a contradiction.
    if (o.given.count("--seed") && o.seed != resumed.seed)
      return error("checkpoint '%s' was written with --seed %llu, not %llu", o.resume.c_str(),
                   static_cast<unsigned long long>(resumed.seed),
                   static_cast<unsigned long long>(o.seed));
    if (o.given.count("--holdout") && o.holdout != resumed.holdout)
      return error("checkpoint '%s' was written with --holdout %g, not %g", o.resume.c_str(),
                   resumed.holdout, o.holdout);
    if (resumed.numSamples != static_cast<uint64_t>(data.size()))
      return error("checkpoint '%s' was written for a data set of %llu samples; '%s' has %lld",
                   o.resume.c_str(), static_cast<unsigned long long>(resumed.numSamples),
                   o.data.c_str(), static_cast<long long>(data.size()));
    if (haveTestSet() && resumed.holdout != 0)
      return error("checkpoint '%s' was written with --holdout %g (a held-out evaluation set); "
                   "--test-data holds nothing out",
                   o.resume.c_str(), resumed.holdout);
    seed = o.seed = resumed.seed;
    holdout = o.holdout = resumed.holdout;
  }
  if (int rc = loadInputData())
    return rc;
  splitHoldout(data.size(), holdout, seed, trainSet, heldOutSet);
  // Every worker shuffles the same way; batch u of the epoch takes
  // `workers` consecutive batches of the order, one per worker (a global
  // batch), and iteration i (an optimizer step) the batches i * A .. i * A +
  // A - 1 with accumulation over A batches.
  int64_t stepSamples = 0;
  const bool overflows = __builtin_mul_overflow(m.batchSize, workers, &stepSamples) ||
                         __builtin_mul_overflow(stepSamples, m.accumulate, &stepSamples);
  itersPerEpoch = overflows ? 0 : static_cast<int64_t>(trainSet.size()) / stepSamples;
  if (itersPerEpoch == 0)
    return error("'%s': %zu training samples (after holding out %zu) are fewer than the "
                 "samples of one step, %.0f (%d workers x batch size %lld%s)",
                 o.data.c_str(), trainSet.size(), heldOutSet.size(),
                 static_cast<double>(m.batchSize) * workers * static_cast<double>(m.accumulate),
                 workers,
                 static_cast<long long>(m.batchSize),
                 m.accumulate > 1
                     ? (" x " + std::to_string(m.accumulate) + " batches accumulated").c_str()
                     : "");
  return 0;
}

} // namespace mgs::rt::driver
