//===- Profile.cpp - Calibration profiles: cost functions and JSON I/O ----===//
//
// The profile's cost functions (top-k, collectives), its parsing and
// validation with errors that name the field, its JSON form, and the check
// that a profile describes a model's parameters.
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/Profile.h"

#include "PlannerSupport.h"

#include "mgsrt/contract.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

using namespace llvm;

namespace mgs::planner {

using namespace detail;

//===----------------------------------------------------------------------===//
// Profile: cost functions
//===----------------------------------------------------------------------===//

int64_t Profile::topkK(int64_t n) const {
  // The compiler's and the runtime's k, at most n (a profile's density may
  // exceed 1), at least 1.
  return std::max<int64_t>(1, std::min(n, contract::topkCount(n, density)));
}

namespace {
/// The top-k time at n on the segment [hi - 1, hi] of `pts` (hi >= 1): what
/// topkSeconds and TopKWalk return once they have found the segment.
double topkOnSegment(ArrayRef<TopKPoint> pts, size_t hi, int64_t n) {
  const TopKPoint &a = pts[hi - 1], &b = pts[hi];
  if (n == b.n)
    return b.seconds;
  double t = static_cast<double>(n - a.n) / static_cast<double>(b.n - a.n);
  double v = a.seconds + t * (b.seconds - a.seconds);
  return v < 0.0 ? 0.0 : v;
}
} // namespace

double Profile::topkSeconds(int64_t n) const {
  const std::vector<TopKPoint> &pts = topkPoints;
  assert(!pts.empty() && "validated profile has top-k points");
  if (n <= pts.front().n || pts.size() == 1)
    return pts.front().seconds;
  // The segment [hi - 1, hi] holding n; beyond the last point, the last one.
  size_t hi = std::upper_bound(pts.begin(), pts.end(), n,
                               [](int64_t v, const TopKPoint &p) { return v < p.n; }) -
              pts.begin();
  if (hi == pts.size())
    hi = pts.size() - 1;
  return topkOnSegment(pts, hi, n);
}

double TopKWalk::operator()(int64_t n) {
  assert(!points.empty() && "validated profile has top-k points");
  if (n <= points.front().n || points.size() == 1)
    return points.front().seconds;
  // topkSeconds' upper_bound, clamped to the last segment, found by walking.
  while (hi + 1 < points.size() && points[hi].n <= n)
    ++hi;
  return topkOnSegment(points, hi, n);
}

GroupSize Profile::groupSize(int64_t n) const {
  int64_t k = topkK(n);
  return {n, k, topkSeconds(n), topkSeconds(2 * k)};
}

double Profile::allgatherSeconds(const GroupSize &g) const {
  return CollectiveConstants(*this).allgatherSeconds(g);
}

double Profile::allreduceSeconds(int64_t n) const {
  return CollectiveConstants(*this).allreduceSeconds(n);
}

double Profile::allgatherComputeSeconds(const GroupSize &g) const {
  return CollectiveConstants(*this).allgatherComputeSeconds(g);
}

double Profile::allreduceComputeSeconds(int64_t n) const {
  return CollectiveConstants(*this).allreduceComputeSeconds(n);
}

namespace {
/// floor(log2 p) for p >= 1.
int64_t floorLog2(int64_t p) {
  return static_cast<int64_t>(llvm::Log2_64(static_cast<uint64_t>(p)));
}
int64_t ceilLog2(int64_t p) { return p <= 1 ? 0 : floorLog2(p - 1) + 1; }
bool isPowerOfTwo(int64_t p) { return (p & (p - 1)) == 0; }
} // namespace

int64_t Profile::gtopkRounds(int64_t workers) {
  if (workers <= 1)
    return 0;
  return floorLog2(workers) + (isPowerOfTwo(workers) ? 0 : 2);
}

int64_t Profile::gtopkMerges(int64_t workers) {
  if (workers <= 1)
    return 0;
  return floorLog2(workers) + (isPowerOfTwo(workers) ? 0 : 1);
}

AlphaBeta Profile::pointToPoint(const std::optional<AlphaBeta> &measured) const {
  if (measured)
    return *measured;
  int64_t pc = measuredWorkers ? measuredWorkers : workers;
  if (pc <= 1)
    return allgather;
  double ring = static_cast<double>(pc - 1);
  return {allgather.alpha / ring, allgather.beta * static_cast<double>(pc) / ring,
          allgather.cpuPerByte, allgather.cpuFraction};
}

CollectiveConstants::CollectiveConstants(const Profile &p)
    : workers(static_cast<double>(p.workers)), allgather(p.allgather), allreduce(p.allreduce),
      gtopk(p.pointToPoint(p.gtopk)), sparseAllreduce(p.pointToPoint(p.sparseAllreduce)),
      gtopkRounds(static_cast<double>(Profile::gtopkRounds(p.workers))),
      gtopkMerges(static_cast<double>(Profile::gtopkMerges(p.workers))),
      perElement(p.sparseAllreduce ? p.sparseAllreduce->perElement : 0.0) {
  // The sparse all-reduce: the region boundaries (a sum of the P-1 index
  // quantiles in R = gtopkRounds messages), P-1 messages of one region's
  // share, the reduced regions gathered in ceil(log2 P) messages.
  double gatherRounds = static_cast<double>(ceilLog2(p.workers));
  sparseMessages = gtopkRounds + (workers - 1.0) + gatherRounds;
  boundaryBytes = gtopkRounds * 8.0 * (workers - 1.0);
}

double Profile::gtopkSeconds(const GroupSize &g) const {
  return CollectiveConstants(*this).gtopkSeconds(g);
}

double Profile::gtopkComputeSeconds(const GroupSize &g) const {
  return CollectiveConstants(*this).gtopkComputeSeconds(g);
}

double Profile::sparseAllreduceSeconds(const GroupSize &g) const {
  return CollectiveConstants(*this).sparseAllreduceSeconds(g);
}

double Profile::sparseAllreduceComputeSeconds(const GroupSize &g) const {
  return CollectiveConstants(*this).sparseAllreduceComputeSeconds(g);
}

//===----------------------------------------------------------------------===//
// Profile: parsing and validation
//===----------------------------------------------------------------------===//

namespace {

// Largest accepted numel and number of workers; keeps every sum and byte
// count of the model far from int64 overflow.
constexpr int64_t kMaxNumel = int64_t(1) << 48;
constexpr int64_t kMaxTotalNumel = int64_t(1) << 56;
/// The exact planners keep a table of every group's cost: (L + 1)^2 entries
/// per collective, 1.6 GB at this L (a 96-block transformer has ~1,200
/// tensors). Beyond it a profile is refused rather than exhausting memory.
constexpr size_t kMaxLayers = 8192;

/// A JSON value for "got ..." in messages: scalars literally, containers by
/// kind.
std::string describe(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Object:
    return "an object";
  case json::Value::Array:
    return "an array";
  default:
    return formatv("{0}", v).str();
  }
}

std::string describeNumber(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return formatSeconds(v);
}

/// Reads the member `key` of `obj`; `path` is the object's own path ("" for
/// the root).
class FieldReader {
public:
  FieldReader(const json::Object &obj, std::string path) : obj(obj), path(std::move(path)) {}

  std::string fieldPath(StringRef key) const {
    return path.empty() ? key.str() : path + "." + key.str();
  }

  Expected<const json::Value *> get(StringRef key) const {
    const json::Value *v = obj.get(key);
    if (!v)
      return fieldError(fieldPath(key), "missing field");
    return v;
  }

  Expected<int64_t> positiveInteger(StringRef key, int64_t max) const {
    auto v = get(key);
    if (!v)
      return v.takeError();
    return readPositiveInteger(**v, fieldPath(key), max);
  }

  Expected<double> number(StringRef key, const char *what) const {
    auto v = get(key);
    if (!v)
      return v.takeError();
    return readNonNegative(**v, fieldPath(key), what);
  }

  static Expected<int64_t> readPositiveInteger(const json::Value &v, const std::string &field,
                                               int64_t max) {
    std::optional<int64_t> i = v.getAsInteger();
    if (!i || *i < 1)
      return fieldError(field, "expected a positive integer, got " + describe(v));
    if (*i > max)
      return fieldError(field, formatv("{0} is too large (at most {1})", *i, max));
    return *i;
  }

  static Expected<double> readNonNegative(const json::Value &v, const std::string &field,
                                          const char *what) {
    std::optional<double> d = v.getAsNumber();
    if (!d || !std::isfinite(*d) || *d < 0.0)
      return fieldError(field, Twine("expected a non-negative number of ") + what + ", got " +
                                   (d ? describeNumber(*d) : describe(v)));
    return *d + 0.0; // -0 reads as 0: the JSON written back ("-0") would read as 0 again
  }

private:
  const json::Object &obj;
  std::string path;
};

Expected<const json::Object *> asObject(const json::Value &v, const Twine &field) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return fieldError(field, "expected an object, got " + describe(v));
  return o;
}

Expected<AlphaBeta> parseAlphaBeta(const FieldReader &root, StringRef key) {
  auto v = root.get(key);
  if (!v)
    return v.takeError();
  auto obj = asObject(**v, key);
  if (!obj)
    return obj.takeError();
  FieldReader r(**obj, key.str());
  AlphaBeta ab;
  auto alpha = r.number("alpha", "seconds");
  if (!alpha)
    return alpha.takeError();
  auto beta = r.number("beta", "seconds per byte");
  if (!beta)
    return beta.takeError();
  ab.alpha = *alpha;
  ab.beta = *beta;
  if (const json::Value *cpu = (*obj)->get("cpu_per_byte")) { // optional
    auto v = FieldReader::readNonNegative(*cpu, r.fieldPath("cpu_per_byte"),
                                          "seconds per byte");
    if (!v)
      return v.takeError();
    ab.cpuPerByte = *v;
  }
  if (const json::Value *dense = (*obj)->get("per_element"); dense && key == "sparse_allreduce") {
    auto v = FieldReader::readNonNegative(*dense, r.fieldPath("per_element"),
                                          "seconds per element");
    if (!v)
      return v.takeError();
    ab.perElement = *v;
  }
  if (const json::Value *fraction = (*obj)->get("cpu_fraction")) { // optional
    auto v = FieldReader::readNonNegative(*fraction, r.fieldPath("cpu_fraction"),
                                          "seconds per second");
    if (!v)
      return v.takeError();
    ab.cpuFraction = *v;
  }
  return ab;
}

Error checkNonNegative(double v, const Twine &field, const char *what) {
  if (!std::isfinite(v) || v < 0.0)
    return fieldError(field, Twine("expected a non-negative number of ") + what + ", got " +
                                 describeNumber(v));
  return Error::success();
}

} // namespace

Error Profile::validate() const {
  if (workers < 1 || workers > kMaxWorkers)
    return fieldError("workers", formatv("expected a positive integer (at most {0}), got {1}",
                                         kMaxWorkers, workers));
  if (!(density > 0.0 && density <= 1.0))
    return fieldError("density", "expected a number in (0, 1], got " + describeNumber(density));
  if (measuredWorkers < 0 || measuredWorkers > kMaxWorkers)
    return fieldError("workers", formatv("the measured workers must be at most {0}, got {1}",
                                         kMaxWorkers, measuredWorkers));
  if (batchSize < 0 || batchSize > kMaxNumel)
    return fieldError("batch_size", formatv("expected a positive integer, got {0}", batchSize));
  if (stepOffset)
    if (Error e = checkNonNegative(*stepOffset, "step_offset", "seconds"))
      return e;
  if (topkPoints.empty())
    return fieldError("topk.points", "must not be empty");
  for (auto [i, p] : enumerate(topkPoints)) {
    if (p.n < 1 || p.n > kMaxTotalNumel)
      return fieldError(formatv("topk.points[{0}][0]", i),
                        formatv("expected a positive integer, got {0}", p.n));
    if (Error e = checkNonNegative(p.seconds, formatv("topk.points[{0}][1]", i), "seconds"))
      return e;
    if (i > 0 && p.n <= topkPoints[i - 1].n)
      return fieldError("topk.points",
                        formatv("must be sorted by n, strictly increasing (points[{0}] has n = "
                                "{1} after n = {2})",
                                i, p.n, topkPoints[i - 1].n));
  }
  for (auto [key, ab] : {std::pair<const char *, const AlphaBeta *>{"allgather", &allgather},
                         {"allreduce", &allreduce},
                         {"gtopk", gtopk ? &*gtopk : nullptr},
                         {"sparse_allreduce", sparseAllreduce ? &*sparseAllreduce : nullptr}}) {
    if (!ab)
      continue;
    if (Error e = checkNonNegative(ab->alpha, Twine(key) + ".alpha", "seconds"))
      return e;
    if (Error e = checkNonNegative(ab->beta, Twine(key) + ".beta", "seconds per byte"))
      return e;
    if (Error e = checkNonNegative(ab->cpuPerByte, Twine(key) + ".cpu_per_byte",
                                   "seconds per byte"))
      return e;
    if (ab->cpuFraction)
      if (Error e = checkNonNegative(*ab->cpuFraction, Twine(key) + ".cpu_fraction",
                                     "seconds per second"))
        return e;
    if (Error e = checkNonNegative(ab->perElement, Twine(key) + ".per_element",
                                   "seconds per element"))
      return e;
  }
  if (layers.empty())
    return fieldError("layers", "must not be empty");
  if (layers.size() > kMaxLayers)
    return fieldError("layers", formatv("{0} tensors; the planner handles at most {1} (its cost "
                                        "tables grow with the square of the count)",
                                        layers.size(), kMaxLayers));
  StringMap<size_t> seen;
  int64_t total = 0;
  for (auto [i, layer] : enumerate(layers)) {
    std::string at = formatv("layers[{0}]", i).str();
    if (layer.name.empty())
      return fieldError(at + ".name", "expected a non-empty string, got \"\"");
    auto [it, inserted] = seen.try_emplace(layer.name, i);
    if (!inserted)
      return fieldError(at + ".name",
                        formatv("duplicate name '{0}' (also layers[{1}])", layer.name, it->second));
    if (layer.numel < 1)
      return fieldError(at + ".numel",
                        formatv("expected a positive integer, got {0}", layer.numel));
    if (layer.numel > kMaxNumel)
      return fieldError(at + ".numel",
                        formatv("{0} is too large (at most {1})", layer.numel, kMaxNumel));
    total += layer.numel;
    if (total > kMaxTotalNumel)
      return fieldError("layers", formatv("the model has more than {0} elements", kMaxTotalNumel));
    if (Error e = checkNonNegative(layer.backward, at + ".backward", "seconds"))
      return e;
  }
  return Error::success();
}

/// A profile nests objects and arrays 4 levels deep ("topk": {"points":
/// [[n, s]]}); llvm::json::parse recurses once a level, so a file nested tens
/// of thousands deep would overflow the stack. Deeper is refused first.
constexpr size_t kMaxProfileNesting = 64;

/// The deepest nesting of objects and arrays in `text` (strings skipped;
/// malformed text is left to the parser).
static size_t nestingDepth(StringRef text) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Expected<Profile> parseProfile(StringRef text) {
  if (size_t depth = nestingDepth(text); depth > kMaxProfileNesting)
    return createStringError(inconvertibleErrorCode(),
                             "invalid JSON: objects and arrays nested " + Twine(depth) +
                                 " levels deep (a profile nests 4; at most " +
                                 Twine(kMaxProfileNesting) + " are read)");
  Expected<json::Value> doc = json::parse(text);
  if (!doc)
    return createStringError(inconvertibleErrorCode(),
                             "invalid JSON: " + toString(doc.takeError()));
  const json::Object *rootObj = doc->getAsObject();
  if (!rootObj)
    return createStringError(inconvertibleErrorCode(),
                             "profile: expected a JSON object, got " + describe(*doc));
  FieldReader root(*rootObj, "");
  Profile p;

  auto workers = root.positiveInteger("workers", kMaxWorkers);
  if (!workers)
    return workers.takeError();
  p.workers = *workers;
  p.measuredWorkers = *workers;

  auto density = root.get("density");
  if (!density)
    return density.takeError();
  std::optional<double> rho = (*density)->getAsNumber();
  if (!rho || !(*rho > 0.0 && *rho <= 1.0))
    return fieldError("density", "expected a number in (0, 1], got " + describe(**density));
  p.density = *rho;

  if (const json::Value *batch = rootObj->get("batch_size")) { // optional
    auto b = FieldReader::readPositiveInteger(*batch, "batch_size", kMaxNumel);
    if (!b)
      return b.takeError();
    p.batchSize = *b;
  }
  if (const json::Value *offset = rootObj->get("step_offset")) { // optional
    auto v = FieldReader::readNonNegative(*offset, "step_offset", "seconds");
    if (!v)
      return v.takeError();
    p.stepOffset = *v;
  }

  // topk.points
  auto topk = root.get("topk");
  if (!topk)
    return topk.takeError();
  auto topkObj = asObject(**topk, "topk");
  if (!topkObj)
    return topkObj.takeError();
  auto points = FieldReader(**topkObj, "topk").get("points");
  if (!points)
    return points.takeError();
  const json::Array *pointsArr = (*points)->getAsArray();
  if (!pointsArr)
    return fieldError("topk.points",
                      "expected an array of [n, seconds] pairs, got " + describe(**points));
  if (pointsArr->empty())
    return fieldError("topk.points", "must not be empty");
  for (auto [i, pv] : enumerate(*pointsArr)) {
    std::string at = formatv("topk.points[{0}]", i).str();
    const json::Array *pair = pv.getAsArray();
    if (!pair || pair->size() != 2)
      return fieldError(at,
                        "expected an [n, seconds] pair, got " +
                            (pair ? formatv("{0} elements", pair->size()).str() : describe(pv)));
    auto n = FieldReader::readPositiveInteger((*pair)[0], at + "[0]", kMaxTotalNumel);
    if (!n)
      return n.takeError();
    auto secs = FieldReader::readNonNegative((*pair)[1], at + "[1]", "seconds");
    if (!secs)
      return secs.takeError();
    p.topkPoints.push_back({*n, *secs});
  }

  auto allgather = parseAlphaBeta(root, "allgather");
  if (!allgather)
    return allgather.takeError();
  p.allgather = *allgather;
  auto allreduce = parseAlphaBeta(root, "allreduce");
  if (!allreduce)
    return allreduce.takeError();
  p.allreduce = *allreduce;
  // Optional: the new collectives' point-to-point costs.
  for (auto [key, field] : {std::pair{"gtopk", &p.gtopk}, {"sparse_allreduce", &p.sparseAllreduce}})
    if (rootObj->get(key)) {
      auto ab = parseAlphaBeta(root, key);
      if (!ab)
        return ab.takeError();
      *field = *ab;
    }

  auto layers = root.get("layers");
  if (!layers)
    return layers.takeError();
  const json::Array *layersArr = (*layers)->getAsArray();
  if (!layersArr)
    return fieldError("layers", "expected an array, got " + describe(**layers));
  for (auto [i, lv] : enumerate(*layersArr)) {
    std::string at = formatv("layers[{0}]", i).str();
    auto obj = asObject(lv, at);
    if (!obj)
      return obj.takeError();
    FieldReader r(**obj, at);
    LayerProfile layer;
    auto name = r.get("name");
    if (!name)
      return name.takeError();
    std::optional<StringRef> s = (*name)->getAsString();
    if (!s || s->empty())
      return fieldError(at + ".name", "expected a non-empty string, got " + describe(**name));
    layer.name = s->str();
    auto numel = r.positiveInteger("numel", kMaxNumel);
    if (!numel)
      return numel.takeError();
    layer.numel = *numel;
    auto backward = r.number("backward", "seconds");
    if (!backward)
      return backward.takeError();
    layer.backward = *backward;
    p.layers.push_back(std::move(layer));
  }

  // What is left: cross-field rules (order, duplicates, empty layers, totals).
  if (Error e = p.validate())
    return std::move(e);
  return p;
}

Expected<Profile> loadProfile(StringRef path) {
  auto buffer = MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return createStringError(buffer.getError(),
                             "cannot read the profile: " + buffer.getError().message());
  return parseProfile((*buffer)->getBuffer());
}

/// {"alpha", "beta"} and, where calibrated, "cpu_per_byte".
static json::Object alphaBetaToJSON(const AlphaBeta &ab) {
  json::Object o{{"alpha", ab.alpha}, {"beta", ab.beta}};
  if (ab.cpuPerByte != 0.0)
    o["cpu_per_byte"] = ab.cpuPerByte;
  if (ab.cpuFraction)
    o["cpu_fraction"] = *ab.cpuFraction;
  if (ab.perElement != 0.0)
    o["per_element"] = ab.perElement;
  return o;
}

json::Value profileToJSON(const Profile &p) {
  json::Array points;
  for (const TopKPoint &pt : p.topkPoints)
    points.push_back(json::Array{pt.n, pt.seconds});
  json::Array layers;
  for (const LayerProfile &l : p.layers)
    layers.push_back(json::Object{{"name", l.name}, {"numel", l.numel}, {"backward", l.backward}});
  json::Object o{
      {"workers", p.workers},
      {"density", p.density},
      {"topk", json::Object{{"points", std::move(points)}}},
      {"allgather", alphaBetaToJSON(p.allgather)},
      {"allreduce", alphaBetaToJSON(p.allreduce)},
      {"layers", std::move(layers)},
  };
  if (p.batchSize)
    o["batch_size"] = p.batchSize;
  if (p.gtopk)
    o["gtopk"] = alphaBetaToJSON(*p.gtopk);
  if (p.sparseAllreduce)
    o["sparse_allreduce"] = alphaBetaToJSON(*p.sparseAllreduce);
  if (p.stepOffset)
    o["step_offset"] = *p.stepOffset;
  return o;
}

Error checkProfileMatchesModel(const Profile &profile, ArrayRef<ParameterShape> parameters) {
  if (profile.layers.size() != parameters.size())
    return fieldError("layers", formatv("the profile has {0} layers, the model has {1} trainable "
                                        "parameters",
                                        profile.layers.size(), parameters.size()));
  for (auto [i, pair] : enumerate(zip(profile.layers, parameters))) {
    const auto &[layer, param] = pair;
    if (layer.name != param.name)
      return fieldError(formatv("layers[{0}].name", i),
                        formatv("the profile has '{0}', the model's parameter {1} is '{2}'",
                                layer.name, i, param.name));
    if (layer.numel != param.numel)
      return fieldError(formatv("layers[{0}].numel", i),
                        formatv("the profile has {0}, the model's parameter '{1}' has {2} "
                                "elements",
                                layer.numel, param.name, param.numel));
  }
  return Error::success();
}

std::string formatSeconds(double value) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, res.ptr);
}

} // namespace mgs::planner
