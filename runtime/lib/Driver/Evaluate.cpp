//===- Evaluate.cpp - Accuracy and loss on the evaluation set -------------===//
//
// The evaluation set's accuracy or loss after each epoch (mgs_eval_step), the
// line that says it, and --per-class's table.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "Descriptors/LossDesc.h"

#include <algorithm>
#include <cstdio>

namespace mgs::rt::driver {

// The evaluation set's accuracy (the cross-entropy: argmax of each row of
// the first output, labelsPerSample rows a sample, one per token, against its
// label, padding left out) or mean loss (float targets: the training loss's
// elementLoss over every value, in double; a loss the graph computes: its
// value on each full batch, averaged).
std::string Driver::describeEvaluation(const char *set, int64_t correct, int64_t total,
                                       bool counts) const {
  char text[200];
  const double meanLoss = evalLossSum / static_cast<double>(std::max<int64_t>(total, 1));
  // Multi-label: also the labels predicted right.
  const double labelAccuracy =
      100.0 * static_cast<double>(correct) / static_cast<double>(std::max<int64_t>(total, 1));
  if (lossInGraph() && total == 0)
    std::snprintf(text, sizeof text, "%s loss%s n/a (fewer samples than one batch)", set,
                  counts ? "" : ":");
  else if (lossInGraph())
    std::snprintf(text, sizeof text,
                  counts ? "%s loss %.6g (the graph's, mean of %lld batches)" : "%s loss: %.6g",
                  set, meanLoss, static_cast<long long>(total));
  else if (m.loss == "bce_with_logits" && counts)
    std::snprintf(text, sizeof text,
                  "%s loss %.6g (%s, mean of %lld values), label accuracy %.2f%% (logit > 0 "
                  "where the target >= 0.5)",
                  set, meanLoss, m.loss.c_str(), static_cast<long long>(total), labelAccuracy);
  else if (m.loss == "bce_with_logits")
    std::snprintf(text, sizeof text, "%s loss: %.6g (label accuracy %.2f%%)", set, meanLoss,
                  labelAccuracy);
  else if (!m.loss.empty())
    std::snprintf(text, sizeof text, counts ? "%s loss %.6g (%s, mean of %lld values)" : "%s loss: %.6g",
                  set, meanLoss, m.loss.c_str(), static_cast<long long>(total));
  else if (total == 0)
    std::snprintf(text, sizeof text, "%s accuracy%s n/a (every label is the ignored %lld)", set,
                  counts ? "" : ":", static_cast<long long>(m.ignoreIndex));
  else if (counts)
    std::snprintf(text, sizeof text, "%s accuracy %.2f%% (%lld/%lld)", set,
                  100.0 * static_cast<double>(correct) / static_cast<double>(total),
                  static_cast<long long>(correct), static_cast<long long>(total));
  else
    std::snprintf(text, sizeof text, "%s accuracy: %.2f%%", set,
                  100.0 * static_cast<double>(correct) / static_cast<double>(total));
  return text;
}

void Driver::printPerClass(const char *set) const {
  std::printf("per class (%s): class, recall (right / its labels), precision (right / its "
              "predictions), IoU (right / its labels or predictions)\n",
              set);
  double recallSum = 0.0, iouSum = 0.0;
  int64_t present = 0, silent = 0, seen = 0;
  auto percent = [](int64_t part, int64_t whole) {
    return 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  };
  for (size_t c = 0; c < classSupport.size(); ++c) {
    const int64_t support = classSupport[c], hits = classHits[c], predicted = classPredicted[c];
    if (support == 0 && predicted == 0) {
      ++silent; // neither in the set nor predicted: nothing to say
      continue;
    }
    char recall[48] = "n/a (no labels)", precision[48] = "n/a (never predicted)";
    if (support > 0) {
      std::snprintf(recall, sizeof recall, "%.2f%% (%lld/%lld)", percent(hits, support),
                    static_cast<long long>(hits), static_cast<long long>(support));
      recallSum += static_cast<double>(hits) / static_cast<double>(support);
      ++present;
    }
    if (predicted > 0)
      std::snprintf(precision, sizeof precision, "%.2f%% (%lld/%lld)", percent(hits, predicted),
                    static_cast<long long>(hits), static_cast<long long>(predicted));
    // Intersection over union (Jaccard): right over the positions labelled
    // or predicted c, a segmentation's figure of each class.
    const int64_t either = support + predicted - hits;
    iouSum += static_cast<double>(hits) / static_cast<double>(either);
    ++seen;
    // An image folder's class by its folder's name too.
    const std::string name = c < data.classNames.size() ? " (" + data.classNames[c] + ")" : "";
    std::printf("  class %zu%s: recall %s, precision %s, IoU %.2f%% (%lld/%lld)\n", c, name.c_str(),
                recall, precision, percent(hits, either), static_cast<long long>(hits),
                static_cast<long long>(either));
  }
  if (silent > 0)
    std::printf("  (%lld classes neither in the set nor predicted)\n",
                static_cast<long long>(silent));
  if (present > 0)
    std::printf("balanced accuracy (mean recall over the %lld classes in the set): %.2f%%\n",
                static_cast<long long>(present), 100.0 * recallSum / static_cast<double>(present));
  if (seen > 0)
    std::printf("mean IoU (over the %lld classes in the set or predicted): %.2f%%\n",
                static_cast<long long>(seen), 100.0 * iouSum / static_cast<double>(seen));
}

bool Driver::evaluate(int64_t &correct, int64_t &total, int &status) {
  // What the evaluation draws (a model's random_normal noise) does not move
  // the training's random stream: a run's weights are the same with and
  // without held-out evaluations.
  struct KeepRandomStream {
    mgsrt_ctx_t *ctx;
    uint64_t state;
    ~KeepRandomStream() { mgsrt_ctx_set_rng_state(ctx, state); }
  } keep{ctx, mgsrt_ctx_rng_state(ctx)};
  correct = total = 0;
  evalLossSum = 0.0;
  if (o.perClass && m.loss.empty())
    for (std::vector<int64_t> *counts : {&classSupport, &classHits, &classPredicted})
      counts->assign(static_cast<size_t>(m.classes), 0);
  ElementwiseLossParams lossParams{};
  if (!m.loss.empty() && !lossInGraph())
    lossParams = {m.lossKind, labelsPerSample * m.batchSize, m.smoothL1Beta,
                  m.labelDims.back(), m.posWeight.empty() ? nullptr : m.posWeight.data()};
  const TensorSpec &out = m.outputs[0];
  // (No labels for the graph's own loss: L is 0.)
  const int64_t L = labelsPerSample, perRow = L ? out.numElements() / (m.batchSize * L) : 0;
  const Dataset &from = haveTestSet() ? testSet : data;
  const std::vector<int64_t> &set = evalSet();
  for (size_t start = 0; start < set.size(); start += m.batchSize) {
    int64_t count = std::min<int64_t>(m.batchSize, set.size() - start);
    // The graph's loss is the whole batch's: a partial one (zeros padding
    // it) would count the padding. Full batches only.
    if (lossInGraph() && count < m.batchSize)
      break;
    fillBatch(from, set.data() + start, count);
    for (Buffer &b : inputs)
      if ((status = toDevice(b)))
        return false;
    markProgress(haveTestSet() ? "the test-set evaluation" : "the held-out evaluation",
                 watchdogProgress.load());
    if (mgs_eval_step(ctx, evalIo.data()) != MGSRT_OK) {
      status = error("mgs_eval_step failed: %s", mgsrt_ctx_message(ctx));
      return false;
    }
    if ((status = toHost(outputs[0])))
      return false;
    const float *y = outputs[0].f32();
    if (lossInGraph()) {
      evalLossSum += y[0];
      ++total;
      continue;
    }
    if (!m.loss.empty()) {
      for (int64_t j = 0; j < count * L; ++j) {
        const float target = from.targets[set[start + j / L] * L + j % L];
        double grad;
        evalLossSum += elementLoss(lossParams, j, y[j], target, grad);
        // Multi-label: a label is predicted when its logit is positive.
        correct += (y[j] > 0.0f) == (target >= 0.5f);
      }
      total += count * L;
      continue;
    }
    for (int64_t j = 0; j < count; ++j)
      for (int64_t k = 0; k < L; ++k) {
        const int64_t label = from.label(static_cast<uint64_t>(set[start + j] * L + k));
        if (label == m.ignoreIndex) // padding: not a prediction
          continue;
        const float *row = y + (j * L + k) * perRow;
        int64_t best = std::max_element(row, row + perRow) - row;
        correct += best == label;
        ++total;
        if (!classSupport.empty()) {
          ++classSupport[label];
          ++classPredicted[best];
          classHits[label] += best == label;
        }
      }
  }
  return true;
}

} // namespace mgs::rt::driver
