//===- Manifest.cpp - Parser of mgs_model_manifest() ----------------------===//
//
// The format (one item a line, see mgsrt.h; the keys and the version are
// those of mgsrt/contract.h, which the compiler writes with):
//   mgs-manifest 2
//   mode train|inference
//   batch_size N
//   arena_bytes BYTES
//   param NAME trainable|state RANK D0 D1 ...
//   input NAME RANK D0 ...
//   index_input NAME RANK D0 ... (an int64 input: indices, e.g. token ids)
//   index_rows NAME R TABLE  (optional: index_input NAME's values are in
//                             [-R, R), the rows of the table it indexes)
//   output NAME RANK D0 ...
//   labels RANK D0 ...       (train mode)
//   classes C                (train mode, the cross-entropy: labels of rank 1)
//   loss KIND                (train mode instead of classes: mse, l1,
//                             smooth_l1 BETA or bce_with_logits against
//                             float targets of the labels' shape)
//   ignore_index I           (optional, train mode, default -100: labels of
//                             this value are padding the loss ignores)
//   pos_weight W0 W1 ...     (optional, with loss bce_with_logits: the
//                             positive targets' weight per position of the
//                             labels' last axis)
//   collectives N            (optional: collectives per training step)
//   workers P                (optional: the only number of workers it runs on)
//   density_schedule R0 ...  (optional: top-k density of epoch e is R[min(e, last)])
//   instrumented 1           (optional: calibration marks; --calibrate works)
//   mark B NAME              (instrumented: param NAME's gradient is mark B)
//   target cpu|cuda          (optional, default cpu: where the kernels run)
//   precision bf16           (optional, default float32: bfloat16 GEMMs and convolutions)
//   source PATH              (optional: the ONNX model compiled; the rest of
//                             the line, spaces included)
// Blank lines are skipped.
//
//===----------------------------------------------------------------------===//

#include "mgsrt/driver.h"

#include "mgsrt/contract.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

namespace mgs::rt::driver {

namespace key = mgs::contract::manifest;

int64_t TensorSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

int64_t Manifest::numTrainable() const {
  int64_t n = 0;
  for (const TensorSpec &p : params)
    n += p.trainable;
  return n;
}

std::string describeIndexBound(const TensorSpec &input) {
  const std::string rows = std::to_string(input.indexRows);
  const std::string table =
      input.indexTable == "-" ? std::string("a table") : "'" + input.indexTable + "'";
  return "the " + rows + " rows of " + table + " that the model's input '" + input.name +
         "' indexes (ids must be in [-" + rows + ", " + rows + "))";
}

std::string describeIndexRange(const TensorSpec &input) {
  return "[" + std::to_string(input.indexLo) + ", " + std::to_string(input.indexHi) +
         "], the range in which the model reads its input '" + input.name + "' as numbers";
}

std::string formatShape(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

namespace {

std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
      ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
      ++i;
    if (i > start)
      words.push_back(line.substr(start, i - start));
  }
  return words;
}

bool parseInt(std::string_view word, int64_t &value) {
  auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  return ec == std::errc() && ptr == word.data() + word.size();
}

/// A decimal number (strtod's syntax: nan and inf included) that is the whole
/// word; the caller checks its range.
bool parseReal(std::string_view word, double &value) {
  const std::string text(word);
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end != text.c_str() && !*end;
}

// A dimension is at most 2^40 and a tensor at most 2^48 elements: enough for
// any model, and no overflow in byte counts.
constexpr int64_t kMaxDim = int64_t(1) << 40;
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// The parser's helpers return whether to go on; the first failure is kept
/// in `status`, which run() returns.
class Parser {
public:
  explicit Parser(Manifest &manifest) : m(manifest) {}

  Status run(std::string_view text) {
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos)
        end = text.size();
      line = text.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
      ++lineNo;
      const std::string_view before = text.substr(0, pos);
      pos = end + 1;
      std::vector<std::string_view> words = splitWords(line);
      if (words.empty())
        continue;
      if (sawChecksum) {
        fail("a line after the checksum");
        return status;
      }
      if (words[0] == key::kChecksum) {
        if (!checkChecksum(words, before))
          return status;
        continue;
      }
      if (!parseLine(words))
        return status;
    }
    finish();
    return status;
  }

private:
  bool fail(const std::string &what) {
    status = Status::error(MGSRT_ERROR_INVALID_ARGUMENT, "manifest line " + std::to_string(lineNo) +
                                                             ": " + what + ": '" +
                                                             std::string(line) + "'");
    return false;
  }

  // "checksum HEX" against the text before its line.
  bool checkChecksum(const std::vector<std::string_view> &words, std::string_view before) {
    sawChecksum = true;
    uint64_t stored = 0;
    if (words.size() != 2 || words[1].size() != 16 ||
        words[1].find_first_not_of("0123456789abcdef") != std::string_view::npos)
      return fail("expected 16 hex digits after 'checksum'");
    for (char c : words[1])
      stored = stored << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    if (stored != contract::manifest::checksum(before))
      return fail("the manifest does not match its checksum: the executable was changed after "
                  "mgsc built it (recompile it)");
    return true;
  }

  bool once(std::string_view name) {
    if (!seen.insert(std::string(name)).second)
      return fail("duplicate '" + std::string(name) + "'");
    return true;
  }

  bool parseCount(std::string_view word, std::string_view what, int64_t min, int64_t &value) {
    if (!parseInt(word, value))
      return fail(std::string(what) + " '" + std::string(word) + "' is not an integer");
    if (value < min)
      return fail(std::string(what) + " must be at least " + std::to_string(min) + ", got " +
                  std::to_string(value));
    return true;
  }

  // RANK D0 D1 ... starting at words[at], to the end of the line.
  bool parseShape(const std::vector<std::string_view> &words, size_t at,
                  std::vector<int64_t> &dims) {
    if (at >= words.size())
      return fail("missing the rank");
    int64_t rank;
    if (!parseCount(words[at], "rank", 0, rank))
      return false;
    if (static_cast<int64_t>(words.size() - at - 1) != rank)
      return fail("rank " + std::to_string(rank) + " but " + std::to_string(words.size() - at - 1) +
                  " dimensions");
    int64_t elements = 1;
    for (size_t i = at + 1; i < words.size(); ++i) {
      int64_t d;
      if (!parseCount(words[i], "dimension", 0, d))
        return false;
      if (d > kMaxDim || (d > 0 && elements > kMaxElements / d))
        return fail("tensor too large");
      elements *= d;
      dims.push_back(d);
    }
    return true;
  }

  bool parseTensor(const std::vector<std::string_view> &words, bool isParam,
                   std::vector<TensorSpec> &list, std::set<std::string> &names) {
    if (words.size() < 2)
      return fail("missing the name");
    TensorSpec spec;
    spec.name = std::string(words[1]);
    size_t at = 2;
    if (isParam) {
      if (words.size() < 3)
        return fail("missing 'trainable' or 'state'");
      if (words[2] == key::kTrainable)
        spec.trainable = true;
      else if (words[2] != key::kState)
        return fail("expected 'trainable' or 'state', got '" + std::string(words[2]) + "'");
      at = 3;
    }
    if (!parseShape(words, at, spec.dims))
      return false;
    if (!names.insert(spec.name).second)
      return fail("duplicate " + std::string(words[0]) + " '" + spec.name + "'");
    list.push_back(std::move(spec));
    return true;
  }

  bool parseLine(const std::vector<std::string_view> &words) {
    std::string_view item = words[0];
    const std::string version = std::to_string(key::kVersion);
    if (!sawHeader) {
      if (item != key::kHeader)
        return fail("expected '" + std::string(key::kHeader) + " " + version + "' first");
      int64_t v = 0;
      if (words.size() == 2 && parseInt(words[1], v) && v >= 1 && v < key::kVersion)
        return fail("this model was compiled by an older mgsc (manifest version " +
                    std::to_string(v) + "); recompile it");
      if (words.size() != 2 || words[1] != version)
        return fail("unsupported manifest version (this runtime reads version " + version + ")");
      sawHeader = true;
      return true;
    }
    auto expectWords = [&](size_t n) {
      if (words.size() != n)
        return fail("expected " + std::to_string(n - 1) + " value" + (n == 2 ? "" : "s") +
                    " after '" + std::string(item) + "'");
      return true;
    };
    int64_t v;
    if (item == key::kHeader)
      return fail("duplicate '" + std::string(key::kHeader) + "'");
    if (item == key::kMode) {
      if (!once(item) || !expectWords(2))
        return false;
      if (words[1] == key::kModeTrain)
        m.mode = Manifest::Mode::Train;
      else if (words[1] == key::kModeInference)
        m.mode = Manifest::Mode::Inference;
      else
        return fail("mode must be 'train' or 'inference'");
      return true;
    }
    if (item == key::kBatchSize) {
      if (!once(item) || !expectWords(2) || !parseCount(words[1], item, 1, v))
        return false;
      m.batchSize = v;
      return true;
    }
    if (item == key::kArenaBytes) {
      if (!once(item) || !expectWords(2) || !parseCount(words[1], item, 0, v))
        return false;
      m.arenaBytes = static_cast<uint64_t>(v);
      return true;
    }
    if (item == key::kClasses) {
      if (!once(item) || !expectWords(2) || !parseCount(words[1], item, 1, v))
        return false;
      m.classes = v;
      return true;
    }
    if (item == key::kIgnoreIndex) {
      if (!once(item) || !expectWords(2))
        return false;
      if (!parseInt(words[1], v))
        return fail("ignore_index must be an integer, got '" + std::string(words[1]) + "'");
      m.ignoreIndex = v;
      return true;
    }
    if (item == key::kLoss) {
      if (!once(item))
        return false;
      const bool smoothL1 = words.size() >= 2 && words[1] == "smooth_l1";
      if (!expectWords(smoothL1 ? 3 : 2))
        return false;
      m.lossKind = mgs::contract::manifest::lossKindNamed(words[1]);
      if (m.lossKind < 0)
        return fail("loss must be mse, l1, smooth_l1 BETA, bce_with_logits or value, got '" +
                    std::string(words[1]) + "'");
      if (smoothL1 && (!parseReal(words[2], m.smoothL1Beta) || !(m.smoothL1Beta >= 0.0) ||
                       std::isinf(m.smoothL1Beta)))
        return fail("smooth_l1's beta must be a finite number >= 0, got '" +
                    std::string(words[2]) + "'");
      m.loss = std::string(words[1]);
      return true;
    }
    if (item == key::kPosWeight) {
      if (!once(item))
        return false;
      if (words.size() < 2)
        return fail("pos_weight needs at least one weight");
      for (size_t i = 1; i < words.size(); ++i) {
        double w;
        if (!parseReal(words[i], w) || !(w >= 0.0) || std::isinf(static_cast<float>(w)))
          return fail("pos_weight " + std::to_string(i - 1) +
                      " must be a finite number >= 0, got '" + std::string(words[i]) + "'");
        m.posWeight.push_back(static_cast<float>(w));
      }
      return true;
    }
    if (item == key::kLabelShape) {
      if (!once(item) || !parseShape(words, 1, m.labelShape))
        return false;
      if (m.labelShape.size() < 2)
        return fail("label_shape must have rank 2 or more (N and the positions)");
      return true;
    }
    if (item == key::kLabels) {
      if (!once(item) || !parseShape(words, 1, m.labelDims))
        return false;
      labelsLine = lineNo; // (rank 0 for loss value alone: checked at the end)
      labelsText = std::string(line);
      return true;
    }
    if (item == key::kCollectives) {
      if (!once(item) || !expectWords(2) || !parseCount(words[1], item, 0, v))
        return false;
      m.collectives = v;
      return true;
    }
    if (item == key::kSparseCollectives) {
      if (!once(item) || words.size() < 2)
        return fail("sparse_collectives needs at least one name");
      for (size_t i = 1; i < words.size(); ++i) {
        if (words[i] != key::kGTopK && words[i] != key::kSparseAllReduce)
          return fail("sparse_collectives: '" + std::string(words[i]) +
                      "' is not gtopk or sparse-allreduce");
        m.sparseCollectives.emplace_back(words[i]);
      }
      return true;
    }
    if (item == key::kWorkers) {
      if (!once(item) || !expectWords(2) || !parseCount(words[1], item, 1, v))
        return false;
      m.workers = v;
      return true;
    }
    if (item == key::kDensitySchedule) {
      if (!once(item) || words.size() < 2)
        return fail("density_schedule needs at least one density");
      for (size_t i = 1; i < words.size(); ++i) {
        double d;
        if (!parseReal(words[i], d) || !(d > 0 && d <= 1))
          return fail("density_schedule: '" + std::string(words[i]) +
                      "' is not a density in (0, 1]");
        m.densitySchedule.push_back(d);
      }
      return true;
    }
    if (item == key::kAccumulate) {
      if (!once(item) || !expectWords(2) || !parseCount(words[1], item, 2, v))
        return false;
      if (v > key::kMaxAccumulate)
        return fail("accumulate must be at most " + std::to_string(key::kMaxAccumulate) +
                    ", got " + std::to_string(v));
      m.accumulate = v;
      return true;
    }
    if (item == key::kInstrumented) {
      if (!once(item) || !expectWords(2) || words[1] != "1")
        return fail("instrumented takes the value 1");
      m.instrumented = true;
      return true;
    }
    if (item == key::kMark) {
      if (!expectWords(3) || !parseCount(words[1], item, 0, v))
        return false;
      if (!paramNames.count(std::string(words[2])))
        return fail("mark names '" + std::string(words[2]) + "', which is no param (params come first)");
      m.marks.emplace_back(v, std::string(words[2]));
      return true;
    }
    if (item == key::kTarget) {
      if (!once(item) || !expectWords(2))
        return false;
      if (words[1] != key::kTargetCpu && words[1] != key::kTargetCuda)
        return fail("target must be cpu or cuda");
      m.cuda = words[1] == key::kTargetCuda;
      return true;
    }
    if (item == key::kPrecision) {
      if (!once(item) || !expectWords(2))
        return false;
      if (words[1] == key::kPrecisionBf16)
        m.precision = MGSRT_PRECISION_BF16;
      else if (words[1] == key::kPrecisionF16)
        m.precision = MGSRT_PRECISION_F16;
      else
        return fail("precision must be bf16 or f16 (float32 has no line)");
      return true;
    }
    if (item == key::kSource) {
      if (!once(item) || words.size() < 2)
        return fail("source needs a path");
      size_t at = line.find(key::kSource) + key::kSource.size();
      while (at < line.size() && (line[at] == ' ' || line[at] == '\t'))
        ++at;
      m.source = std::string(line.substr(at));
      return true;
    }
    if (item == key::kParam)
      return parseTensor(words, true, m.params, paramNames);
    if (item == key::kInput)
      return parseTensor(words, false, m.inputs, inputNames);
    if (item == key::kIndexInput) {
      if (!parseTensor(words, false, m.inputs, inputNames))
        return false;
      m.inputs.back().int64 = true;
      return true;
    }
    // index_rows, index_range: NAME (an index_input before), two values,
    // once a NAME.
    auto boundedInput = [&](auto given) -> TensorSpec * {
      if (!expectWords(4))
        return nullptr;
      auto input = std::find_if(m.inputs.begin(), m.inputs.end(),
                                [&](const TensorSpec &t) { return t.name == words[1]; });
      if (input == m.inputs.end() || !input->int64) {
        fail(std::string(item) + " names '" + std::string(words[1]) +
             "', which is not an index_input before it");
        return nullptr;
      }
      if (given(*input)) {
        fail(std::string(item) + " given twice for '" + input->name + "'");
        return nullptr;
      }
      return &*input;
    };
    if (item == key::kIndexRows) {
      TensorSpec *input = boundedInput([](const TensorSpec &t) { return t.indexRows != 0; });
      if (!input)
        return false;
      if (!parseCount(words[2], item, 1, v))
        return false;
      input->indexRows = v;
      input->indexTable = std::string(words[3]);
      return true;
    }
    if (item == key::kIndexRange) {
      TensorSpec *input = boundedInput([](const TensorSpec &t) { return t.hasIndexRange; });
      if (!input)
        return false;
      int64_t lo = 0, hi = 0;
      if (!parseInt(words[2], lo) || !parseInt(words[3], hi) || lo > hi)
        return fail("index_range needs two integers LO <= HI, got '" + std::string(words[2]) +
                    "' and '" + std::string(words[3]) + "'");
      input->hasIndexRange = true;
      input->indexLo = lo;
      input->indexHi = hi;
      return true;
    }
    if (item == key::kOutput)
      return parseTensor(words, false, m.outputs, outputNames);
    return fail("unknown item '" + std::string(item) + "'");
  }

  bool finish() {
    auto missing = [&](std::string_view what) {
      status = Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                             "manifest: missing '" + std::string(what) + "' line");
      return false;
    };
    auto saw = [&](std::string_view name) { return seen.count(std::string(name)) != 0; };
    if (!sawHeader)
      return missing(std::string(key::kHeader) + " " + std::to_string(key::kVersion));
    for (std::string_view required : {key::kMode, key::kBatchSize, key::kArenaBytes})
      if (!saw(required))
        return missing(required);
    if (m.outputs.empty())
      return missing(key::kOutput);
    if (m.mode == Manifest::Mode::Train) {
      if (!saw(key::kLabels))
        return missing(key::kLabels);
      // The graph's own loss (loss value) takes no labels: rank 0; every
      // other loss, rank 1 or more.
      if ((m.lossKind == MGSRT_LOSS_VALUE) != m.labelDims.empty()) {
        status = Status::error(
            MGSRT_ERROR_INVALID_ARGUMENT,
            "manifest line " + std::to_string(labelsLine) + ": labels must " +
                (m.labelDims.empty() ? "have rank 1 or more" : "have rank 0 for loss value") +
                ": '" + labelsText + "'");
        return false;
      }
      // Class labels: one per row of the logits; float targets take the
      // output's shape.
      if (m.loss.empty() && !saw(key::kClasses))
        return missing(key::kClasses);
      if (m.loss.empty() && m.labelDims.size() != 1) {
        status = Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                               "manifest line " + std::to_string(labelsLine) +
                                   ": the cross-entropy's labels must have rank 1: '" +
                                   labelsText + "'");
        return false;
      }
      if (!m.labelShape.empty()) {
        int64_t positions = 1;
        for (int64_t d : m.labelShape)
          positions *= d; // parseShape bounds the product
        if (!m.loss.empty() || m.labelShape[0] != m.batchSize || m.labelDims.size() != 1 ||
            positions != m.labelDims[0]) {
          status = Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                                 "manifest: label_shape must be the batch size and the "
                                 "positions of the cross-entropy's rows, as many as its labels");
          return false;
        }
      }
      if (!m.loss.empty() && saw(key::kClasses)) {
        status = Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                               "manifest: 'classes' is for the cross-entropy, not loss " + m.loss);
        return false;
      }
      if (!m.posWeight.empty() && (m.lossKind != MGSRT_LOSS_BCE_WITH_LOGITS ||
                                   static_cast<int64_t>(m.posWeight.size()) != m.labelDims.back())) {
        status = Status::error(
            MGSRT_ERROR_INVALID_ARGUMENT,
            "manifest: pos_weight (" + std::to_string(m.posWeight.size()) +
                " values) needs loss bce_with_logits and one value per position of the labels' "
                "last axis (" +
                std::to_string(m.labelDims.back()) + ")");
        return false;
      }
    }
    // One label per sample, or several (one per token): a multiple of it.
    if (!m.labelDims.empty() &&
        (m.labelDims[0] < m.batchSize || m.labelDims[0] % m.batchSize != 0)) {
      status = Status::error(MGSRT_ERROR_INVALID_ARGUMENT,
                             "manifest line " + std::to_string(labelsLine) + ": labels dimension " +
                                 std::to_string(m.labelDims[0]) +
                                 " is not a multiple of the batch size " +
                                 std::to_string(m.batchSize) + ": '" + labelsText + "'");
      return false;
    }
    return true;
  }

  Manifest &m;
  Status status;
  std::string_view line;
  int lineNo = 0;
  bool sawHeader = false, sawChecksum = false;
  std::set<std::string> seen, paramNames, inputNames, outputNames;
  int labelsLine = 0;
  std::string labelsText;
};

} // namespace

Status parseManifest(std::string_view text, Manifest &manifest) {
  manifest = Manifest();
  Parser parser(manifest);
  return parser.run(text);
}

} // namespace mgs::rt::driver
