//===- Transforms.cpp - What a sample goes through on its way to the batch ===//
//
// --augment (random crops and flips of the training samples, drawn from
// Data.cpp's streams) and --input-mean / --input-std (torchvision's
// Normalize, on every sample): checked against the model before the workers
// start, said in the run's opening lines, applied by fillBatch (Train.cpp)
// sample by sample.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <cstdio>

namespace mgs::rt::driver {

namespace {

std::string joined(const std::vector<float> &values) {
  std::string s;
  for (float v : values) {
    char text[32];
    std::snprintf(text, sizeof(text), "%s%g", s.empty() ? "" : ", ", static_cast<double>(v));
    s += text;
  }
  return s;
}

} // namespace

int Driver::setupSampleTransforms() {
  const Augmentation &a = o.augmentation;
  const bool normalize = !o.inputMean.empty() || !o.inputStd.empty();
  if (!a.any() && !normalize)
    return 0;
  const TensorSpec &in = m.inputs[0];
  const char *option = a.any()                ? "--augment"
                       : !o.inputMean.empty() ? "--input-mean"
                                              : "--input-std";
  if (in.int64)
    return usageOnEveryWorker(std::string(option) +
                              " transforms a sample's values; the model's "
                              "input '" +
                              in.name + "' takes token ids");
  if (normalize) {
    // A value per channel (axis 1), or one for all.
    const int64_t channels = in.dims.size() >= 2 ? in.dims[1] : 1;
    for (const auto &[name, given, out, fallback] :
         {std::tuple{"--input-mean", &o.inputMean, &normalizeMean, 0.0},
          std::tuple{"--input-std", &o.inputStd, &normalizeStd, 1.0}}) {
      const int64_t count = static_cast<int64_t>(given->size());
      if (count > 1 && count != channels)
        return usageOnEveryWorker(std::string(name) + " gives " + std::to_string(count) +
                                  " values; the model's input '" + in.name + "' " +
                                  formatShape(in.dims) + " has " + std::to_string(channels) +
                                  (channels == 1 ? " channel" : " channels") +
                                  " (its axis 1): give one value a channel, or one for all");
      out->assign(static_cast<size_t>(channels),
                  static_cast<float>(count == 0 ? fallback : (*given)[0]));
      for (int64_t c = 0; count > 1 && c < channels; ++c)
        (*out)[c] = static_cast<float>((*given)[c]);
    }
  }
  if (!a.any())
    return 0;
  if (in.dims.size() < 3)
    return usageOnEveryWorker(
        "--augment moves pixels along a sample's last two axes (its height and width); the "
        "model's input '" +
        in.name + "' " + formatShape(in.dims) +
        " has one axis a sample (export the model with its image input, (N, C, H, W))");
  const int64_t h = in.dims[in.dims.size() - 2], w = in.dims.back();
  if (a.cropPadding >= h || a.cropPadding >= w)
    return usageOnEveryWorker("--augment crop=" + std::to_string(a.cropPadding) +
                              ": the padding must be smaller than the image, " + std::to_string(h) +
                              " x " + std::to_string(w) + " (the input '" + in.name + "' " +
                              formatShape(in.dims) + ")");
  // Labels or targets per pixel move with the image; others (a class, a
  // vector a sample) stay as they are.
  auto perPixel = [&](const std::vector<int64_t> &dims) {
    return dims.size() >= 3 && dims[dims.size() - 2] == h && dims.back() == w;
  };
  if (m.loss.empty() && !m.labelShape.empty() && !perPixel(m.labelShape))
    return usageOnEveryWorker("--augment moves the image's " + std::to_string(h) + " x " +
                              std::to_string(w) + " pixels, but the model's labels " +
                              formatShape(m.labelShape) +
                              " are per position of another grid, which cannot move with them");
  if (m.loss.empty() && m.labelShape.empty() && labelsPerSample > 1)
    return usageOnEveryWorker(
        "--augment moves the image's pixels, but the model takes " +
        std::to_string(labelsPerSample) +
        " labels a sample (a label per token or row), which cannot move with them");
  augmentHeight = h;
  augmentWidth = w;
  augmentLabels = m.loss.empty() && !m.labelShape.empty();
  augmentTargets = !m.loss.empty() && perPixel(m.labelDims);
  return 0;
}

void Driver::describeSampleTransforms() const {
  if (o.augmentation.any())
    std::printf("augment: %s, on the %lld x %lld pixels of each training sample, drawn anew each "
                "epoch%s\n",
                describeAugmentation(o.augmentation).c_str(), static_cast<long long>(augmentHeight),
                static_cast<long long>(augmentWidth),
                augmentLabels    ? " (its labels per pixel moved with it, padded with the ignored "
                                   "label)"
                : augmentTargets ? " (its targets per pixel moved with it, padded with 0)"
                                 : "");
  if (!normalizeMean.empty())
    std::printf("normalize: every sample as (x - mean) / std per channel%s, mean %s, std %s\n",
                o.augmentation.any() ? ", after the augmentation" : "",
                joined(normalizeMean).c_str(), joined(normalizeStd).c_str());
}

void Driver::transformSample(int64_t sample, bool augment, float *values, int64_t *labels,
                             float *targets) {
  if (augment && o.augmentation.any()) {
    // The sample's draw: a function of the run's seed, the epoch and the
    // sample alone, so the same whatever the workers and the batch order.
    const AugmentDraw draw =
        drawAugmentation(o.augmentation, o.seed, static_cast<uint64_t>(augmentEpoch), sample);
    const int64_t plane = augmentHeight * augmentWidth, L = labelsPerSample;
    augmentPlanes(values, sampleSize / plane, augmentHeight, augmentWidth, draw, 0.0f);
    if (labels && augmentLabels) // padded with the label the loss ignores
      augmentPlanes(labels, L / plane, augmentHeight, augmentWidth, draw, m.ignoreIndex);
    if (targets && augmentTargets)
      augmentPlanes(targets, L / plane, augmentHeight, augmentWidth, draw, 0.0f);
  }
  if (normalizeMean.empty())
    return;
  // As torchvision's Normalize: x.sub_(mean).div_(std), in float32.
  const int64_t channels = static_cast<int64_t>(normalizeMean.size());
  const int64_t inner = sampleSize / channels;
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = normalizeMean[c], std = normalizeStd[c];
    float *v = values + c * inner;
    for (int64_t k = 0; k < inner; ++k)
      v[k] = (v[k] - mean) / std;
  }
}

} // namespace mgs::rt::driver
