//===- Planner.cpp - Gradient merge planner (OMGS cost model) -------------===//
//
// Profiles, the pipeline cost model, and the merge strategies; the exact
// planner (planOptimal) is explained and proved above its definition.
//
//===----------------------------------------------------------------------===//

#include "mgs/Analysis/Planner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

using namespace llvm;

namespace mgs::planner {

//===----------------------------------------------------------------------===//
// Profile: cost functions
//===----------------------------------------------------------------------===//

int64_t Profile::topkK(int64_t n) const {
  double k = std::floor(density * static_cast<double>(n));
  if (k < 1.0)
    return 1;
  if (k >= static_cast<double>(n))
    return n;
  return static_cast<int64_t>(k);
}

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
  const TopKPoint &a = pts[hi - 1], &b = pts[hi];
  if (n == b.n)
    return b.seconds;
  double t = static_cast<double>(n - a.n) / static_cast<double>(b.n - a.n);
  double v = a.seconds + t * (b.seconds - a.seconds);
  return v < 0.0 ? 0.0 : v;
}

double Profile::allgatherSeconds(int64_t n) const {
  return allgather.alpha +
         allgather.beta * 8.0 * static_cast<double>(topkK(n)) * static_cast<double>(workers);
}

double Profile::allreduceSeconds(int64_t n) const {
  return allreduce.alpha + allreduce.beta * 4.0 * static_cast<double>(n);
}

double Profile::allgatherComputeSeconds(int64_t n) const {
  return allgather.cpuPerByte * 8.0 * static_cast<double>(topkK(n)) *
         static_cast<double>(workers);
}

double Profile::allreduceComputeSeconds(int64_t n) const {
  return allreduce.cpuPerByte * 4.0 * static_cast<double>(n);
}

//===----------------------------------------------------------------------===//
// Profile: parsing and validation
//===----------------------------------------------------------------------===//

namespace {

// Largest accepted numel and number of workers; keeps every sum and byte
// count of the model far from int64 overflow.
constexpr int64_t kMaxNumel = int64_t(1) << 48;
constexpr int64_t kMaxTotalNumel = int64_t(1) << 56;
constexpr int64_t kMaxWorkers = int64_t(1) << 24;
/// The exact planners keep a table of every group's cost: (L + 1)^2 entries
/// per collective, 1.6 GB at this L (a 96-block transformer has ~1,200
/// tensors). Beyond it a profile is refused rather than exhausting memory.
constexpr size_t kMaxLayers = 8192;

Error fieldError(const Twine &field, const Twine &message) {
  return createStringError(inconvertibleErrorCode(), field + ": " + message);
}

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
    return *d;
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
  if (batchSize < 0 || batchSize > kMaxNumel)
    return fieldError("batch_size", formatv("expected a positive integer, got {0}", batchSize));
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
                         {"allreduce", &allreduce}}) {
    if (Error e = checkNonNegative(ab->alpha, Twine(key) + ".alpha", "seconds"))
      return e;
    if (Error e = checkNonNegative(ab->beta, Twine(key) + ".beta", "seconds per byte"))
      return e;
    if (Error e = checkNonNegative(ab->cpuPerByte, Twine(key) + ".cpu_per_byte",
                                   "seconds per byte"))
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

Expected<Profile> parseProfile(StringRef text) {
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

//===----------------------------------------------------------------------===//
// Plans and the cost model
//===----------------------------------------------------------------------===//

StringRef stringifyCollective(Collective c) {
  return c == Collective::AllGather ? "allgather" : "allreduce";
}

Error verifyGroups(const Profile &profile, ArrayRef<Group> groups) {
  int64_t expectedEnd = static_cast<int64_t>(profile.layers.size());
  for (auto [i, g] : enumerate(groups)) {
    if (g.end != expectedEnd || g.begin >= g.end || g.begin < 0)
      return fieldError(formatv("groups[{0}]", i),
                        formatv("layers [{0}, {1}) do not continue the backprop order (expected a "
                                "non-empty range ending at {2})",
                                g.begin, g.end, expectedEnd));
    expectedEnd = g.begin;
  }
  if (expectedEnd != 0)
    return fieldError("groups", formatv("layers [0, {0}) are in no group", expectedEnd));
  return Error::success();
}

namespace {

/// The profile seen in backprop order: position p is forward layer L-1-p;
/// boundary i (0..L) separates the first i positions from the rest.
struct BackpropView {
  int64_t L;
  std::vector<int64_t> prefixNumel;   ///< N[i]: elements of positions [0, i)
  std::vector<double> prefixBackward; ///< B[i]: backward of positions [0, i), summed in order

  explicit BackpropView(const Profile &p) : L(static_cast<int64_t>(p.layers.size())) {
    prefixNumel.assign(L + 1, 0);
    prefixBackward.assign(L + 1, 0.0);
    for (int64_t i = 0; i < L; ++i) {
      const LayerProfile &layer = p.layers[L - 1 - i];
      prefixNumel[i + 1] = prefixNumel[i] + layer.numel;
      prefixBackward[i + 1] = prefixBackward[i] + layer.backward;
    }
  }
  int64_t numel(int64_t j, int64_t i) const { return prefixNumel[i] - prefixNumel[j]; }
  /// The group of positions [j, i) as forward indices.
  Group group(int64_t j, int64_t i, Collective c) const { return {L - i, L - j, c}; }
};

/// Compute-stream and comm-stream time of one group.
struct GroupCost {
  double topk; ///< on the compute stream: top-k (none when dense) + the collective's CPU time
  double comm;
};

GroupCost groupCost(const Profile &p, int64_t n, Collective c) {
  if (c == Collective::AllReduce)
    return {p.allreduceComputeSeconds(n), p.allreduceSeconds(n)};
  return {p.topkSeconds(n) + p.allgatherComputeSeconds(n), p.allgatherSeconds(n)};
}

/// One step of the pipeline recurrence; every planner and predict() use it.
inline void step(double &x, double &y, double prefixBackward, GroupCost cost) {
  x = x + cost.topk;
  double computeEnd = prefixBackward + x;
  y = std::max(y, computeEnd) + cost.comm;
}

} // namespace

double predict(const Profile &profile, ArrayRef<Group> groups, std::vector<GroupTimes> *times) {
  assert(!errorToBool(verifyGroups(profile, groups)) && "invalid grouping");
  BackpropView view(profile);
  if (times)
    times->clear();
  double x = 0.0, y = 0.0;
  for (const Group &g : groups) {
    int64_t i = view.L - g.begin; // boundary after the group
    GroupCost cost = groupCost(profile, view.numel(view.L - g.end, i), g.collective);
    double prevY = y;
    step(x, y, view.prefixBackward[i], cost);
    if (times) {
      double computeEnd = view.prefixBackward[i] + x;
      times->push_back({computeEnd, std::max(prevY, computeEnd), y});
    }
  }
  return y;
}

//===----------------------------------------------------------------------===//
// Simple strategies
//===----------------------------------------------------------------------===//

std::vector<Group> planDense(const Profile &profile) {
  std::vector<Group> groups;
  for (int64_t f = static_cast<int64_t>(profile.layers.size()) - 1; f >= 0; --f)
    groups.push_back({f, f + 1, Collective::AllReduce});
  return groups;
}

std::vector<Group> planSingle(const Profile &profile) {
  return {{0, static_cast<int64_t>(profile.layers.size()), Collective::AllGather}};
}

std::vector<Group> planLayerwise(const Profile &profile) {
  std::vector<Group> groups = planDense(profile);
  for (Group &g : groups)
    g.collective = Collective::AllGather;
  return groups;
}

std::vector<Group> planThreshold(const Profile &profile, int64_t bytes) {
  // Buckets fill in backprop order (like Horovod's fusion buffer and DDP's
  // buckets) and close as soon as they hold `bytes` of float32 gradients.
  std::vector<Group> groups;
  int64_t end = static_cast<int64_t>(profile.layers.size());
  int64_t filled = 0;
  for (int64_t f = end - 1; f >= 0; --f) {
    filled += 4 * profile.layers[f].numel;
    if (filled >= bytes || f == 0) {
      groups.push_back({f, end, Collective::AllGather});
      end = f;
      filled = 0;
    }
  }
  return groups;
}

// The greedy rule of the OMGS paper, as the authors' code applies it
// (HKBU-HPML/OMGS-SGD, _generate_groups_mgs): walk the layers in backprop
// order with a current group G; for the next layer l, merging l into G
//   - saves tsave = t_c(G) + t_c(l) - t_c(G + l) on the comm stream (one
//     start-up fewer), and
//   - costs tw = t_b(l) + t_s(G + l) - t_s(G) - t_s(l) - slack(G) of waiting,
//     where slack(G) is how long G's collective would wait for the comm
//     stream after G's top-k anyway (G's comm start minus its top-k end,
//     given the groups closed so far);
// merge when tw < tsave, otherwise close G and start a new group with l.
// One difference: the authors' loop never tests the first pair (the first two
// layers in backprop order are always merged); here every pair is tested.
std::vector<Group> planGreedy(const Profile &profile) {
  BackpropView view(profile);
  std::vector<Group> groups;
  auto ts = [&](int64_t n) { return profile.topkSeconds(n); };
  auto tc = [&](int64_t n) { return profile.allgatherSeconds(n); };
  double x = 0.0, y = 0.0; // state after the closed groups
  int64_t start = 0;       // current group: positions [start, next)
  for (int64_t next = 1; next <= view.L; ++next) {
    int64_t nG = view.numel(start, next);
    if (next < view.L) {
      int64_t nl = view.numel(next, next + 1);
      double topkEnd = view.prefixBackward[next] + x + ts(nG);
      double slack = std::max(0.0, y - topkEnd);
      double backward = profile.layers[view.L - 1 - next].backward;
      double tw = backward + ts(nG + nl) - ts(nG) - ts(nl) - slack;
      double tsave = tc(nG) + tc(nl) - tc(nG + nl);
      if (tw < tsave)
        continue; // merge l into G
    }
    step(x, y, view.prefixBackward[next], groupCost(profile, nG, Collective::AllGather));
    groups.push_back(view.group(start, next, Collective::AllGather));
    start = next;
  }
  return groups;
}

//===----------------------------------------------------------------------===//
// The exact planner
//===----------------------------------------------------------------------===//
//
// Model. In backprop order, positions 0..L-1 with backward times b_p and
// boundaries 0..L; a grouping is a path 0 = i_0 < i_1 < ... < i_G = L and
// each group [i_{g-1}, i_g) picks a collective. With the compute-stream time
// s_g of group g (its top-k, none when dense, plus the CPU time its
// collective takes, cpu_per_byte) and its collective time c_g, and B(i) the backward
// time of positions [0, i), the pipeline is the recurrence over (X, Y) =
// (top-k time so far, end of the last collective so far), from (0, 0):
//     X_g = X_{g-1} + s_g,   Y_g = max(Y_{g-1}, B(i_g) + X_g) + c_g,
// and the cost is Y_G. (Unrolled: Y_G = max_g [B(i_g) + X_g + sum_{h>=g} c_h],
// the makespan of a two-machine flow shop whose jobs are the groups.)
//
// Why one number per boundary is not enough. The cost of a grouping splits
// at any boundary into max(Y + A, X + F): (X, Y) from the prefix, A = the
// suffix's total collective time, F = the suffix's max_g [B(i_g) + its own
// top-k time up to g + its collective time from g on]. Two prefixes with
// X1 < X2 and Y1 > Y2 are incomparable: a comm-bound suffix (large A)
// prefers the second, a compute-bound one (large F) the first. So an O(L^2)
// DP keeping the best Y per boundary, or the paper's greedy, is not exact.
// (With no compute-stream time at all -- mgwfbp without cpu_per_byte -- X is
// always 0, F does not depend on the prefix, and the DP below degenerates to
// exactly that O(L^2) DP.)
//
// Algorithm: a label-setting DP over boundaries keeping the Pareto frontier
// of (X, Y). front[0] = {(0, 0)}; front[i] = the non-dominated labels among
// every extension of every label of front[j], j < i, by the group [j, i)
// with every allowed collective.
//
// Exactness. (1) The step (X, Y) -> (X + s, max(Y, B + X + s) + c) is
// non-decreasing in X and in Y, also in floating point (IEEE addition with
// round-to-nearest and max are monotone). So if (X1, Y1) <= (X2, Y2)
// componentwise at boundary i, then for every continuation the final
// Y1' <= Y2': dropping a dominated label never loses the optimum. (2) By
// induction on i, front[i] holds, for every grouping of positions [0, i), a
// label that dominates its (X, Y): the grouping's last group [j, i) extends
// a grouping of [0, j), which some label of front[j] dominates, and that
// label's extension by [j, i) is a candidate of front[i] dominating the
// grouping's (by (1)); filtering keeps a label dominating every candidate.
// Hence min Y over front[L] is the optimum.
//
// Prunings, each keeping some optimal grouping (all but the first hold in
// exact arithmetic and are applied with a 1e-9 relative margin against
// rounding; the unit tests compare with brute force to 1e-12):
//   - Within one (j, collective) batch, front[j] sorted by X ascending has
//     Y descending; once B(i) + X + s >= Y the new Y is B(i) + X + s + c, and
//     every later label (larger X) yields a label it dominates: stop there.
//   - Bounds. Split at boundary i, cost = max(Y + A, X + F). The backward
//     DPs of computeSimpleBounds() give the least A, a lower bound of F and
//     the least and largest F - A over the groupings of [i, L);
//     computeSuffixBounds() gives a coarse lower envelope of the suffix
//     frontier {(A, F)} (buckets of A, each kept as its corner). A label
//     whose lower bound exceeds the cost U of a known grouping (heuristic
//     runs of this DP keeping one label per boundary) is dropped: labels on
//     an optimal path have LB <= OPT <= U.
//   - Wider dominance (dominance(), filterWithinLimit()): if Y - X is below
//     every suffix's F - A, only X matters; and within the groupings that
//     can still finish within U, a label with a larger X but a smaller Y
//     (or the reverse) dominates when the suffixes' F - A (bounded by the
//     coarse envelope) says the difference can never show.
// predict() evaluates the same recurrence with the same operations (step()),
// so the returned grouping's predict() is the DP's value bit for bit.
//
// Cost: O(L^2) group costs and bounds, O(L^2 * F) label extensions for
// frontier size F, plus the coarse envelopes: O(L^2) batches over their
// corners, usually a few each (stopping as above). The bucket count starts at
// 512 and grows 8x (to 32768) whenever the exact search keeps more than
// 16 * L labels. F is small on most model-shaped profiles (bench/planner_bench
// prints it); with one collective and no compute-stream time (mgwfbp without
// cpu_per_byte), F = 1.
//
// Worst case. We know no exact algorithm polynomial on every profile (auto
// holds a per-layer two-way choice trading compute-stream time against comm
// time, much like PARTITION), and profiles whose top-k and collective costs
// trade almost exactly 1:1 have very many groupings within 1e-5 of the
// optimum: there F grows to thousands and planning takes seconds.

namespace {

/// A label of the forward DP: a grouping of the first i positions.
struct Label {
  double x, y;
  int32_t from;    ///< boundary j of the previous label
  int32_t fromIdx; ///< its index in front[j]
  bool dense;      ///< the group [j, i) is all-reduced
};

/// A lower-bound point of a boundary's suffix frontier: every grouping of
/// [i, L) it stands for has total collective time >= a and F >= f.
struct SuffixPoint {
  double a, f;
};

class OptimalPlanner {
public:
  OptimalPlanner(const Profile &p, bool allowSparse, bool allowDense, const OptimalTuning &tuning)
      : view(p), tuning(tuning) {
    if (allowSparse)
      collectives.push_back(Collective::AllGather);
    if (allowDense)
      collectives.push_back(Collective::AllReduce);
    assert(!collectives.empty());
    int64_t L = view.L;
    costs.resize(collectives.size() * (L + 1) * (L + 1));
    for (int64_t j = 0; j < L; ++j)
      for (int64_t i = j + 1; i <= L; ++i)
        for (size_t c = 0; c < collectives.size(); ++c)
          costAt(j, i, c) = groupCost(p, view.numel(j, i), collectives[c]);
  }

  std::vector<Group> run() {
    computeSimpleBounds();
    // A cheap feasible grouping bounds the search: one label per boundary,
    // the least Y.
    std::vector<std::vector<Label>> best =
        solve(Mode::KeepLeastY, std::nullopt, std::nullopt).value();
    double upper = bestY(best[view.L]);
    // Finer suffix bounds cost more but prune more: escalate while the exact
    // search outgrows its label budget; the last level has no budget.
    size_t budget = tuning.labelBudgetPerLayer * static_cast<size_t>(view.L);
    size_t growth = std::max<size_t>(tuning.bucketGrowth, 2);
    attempts = 0;
    for (size_t buckets = std::max<size_t>(tuning.firstBuckets, 1);;
         buckets *= growth, budget *= growth) {
      bool last = buckets >= tuning.lastBuckets;
      ++attempts;
      usedBuckets = buckets;
      computeSuffixBounds(upper, buckets);
      // The suffix bounds guide a second heuristic grouping.
      std::vector<std::vector<Label>> guided =
          solve(Mode::KeepLeastBound, std::nullopt, std::nullopt).value();
      if (bestY(guided[view.L]) < upper) {
        upper = bestY(guided[view.L]);
        best = std::move(guided);
      }
      std::optional<std::vector<std::vector<Label>>> front =
          solve(Mode::Exact, upper + kMargin * std::abs(upper),
                last ? std::nullopt : std::optional<size_t>(budget));
      if (!front)
        continue; // over budget: finer bounds
      // The exact run keeps an optimal grouping unless rounding beat the
      // margin; then the known grouping is as good.
      if ((*front)[view.L].empty() || bestY((*front)[view.L]) > upper)
        return reconstruct(best);
      return reconstruct(*front);
    }
  }

  /// Statistics of the exact run (for the benchmark).
  size_t maxFront = 0, totalLabels = 0, usedBuckets = 0, attempts = 0;

private:
  enum class Mode { Exact, KeepLeastY, KeepLeastBound };
  /// Relative slack for rounding wherever a bound is compared with a cost.
  static constexpr double kMargin = 1e-9;

  BackpropView view;
  OptimalTuning tuning;
  SmallVector<Collective, 2> collectives;
  std::vector<GroupCost> costs;
  /// minComm[i]: least total collective time of a grouping of [i, L).
  /// minRest[i]: a lower bound of F over the groupings of [i, L).
  std::vector<double> minComm, minRest;
  /// minSlack[i], maxSlack[i]: the least and largest F - A over the
  /// groupings of [i, L) (see dominance()).
  std::vector<double> minSlack, maxSlack;
  /// minCommF[i]: F of a grouping of [i, L) with the least A (the least F
  /// among those).
  std::vector<double> minCommF;
  /// Least X and least Y of any grouping of [0, i).
  std::vector<double> prefixMinX, prefixMinY;
  /// Coarse suffix frontiers: a ascending, f strictly descending.
  std::vector<std::vector<SuffixPoint>> suffix;

  GroupCost &costAt(int64_t j, int64_t i, size_t c) {
    return costs[(c * (view.L + 1) + j) * (view.L + 1) + i];
  }

  void computeSimpleBounds() {
    int64_t L = view.L;
    const double inf = std::numeric_limits<double>::infinity();
    minComm.assign(L + 1, 0.0);
    minRest.assign(L + 1, -inf);
    minSlack.assign(L + 1, -inf);
    maxSlack.assign(L + 1, -inf);
    minCommF.assign(L + 1, -inf);
    for (int64_t j = L - 1; j >= 0; --j) {
      double comm = inf, rest = inf, lowSlack = inf, slack = -inf, commF = inf;
      for (int64_t e = j + 1; e <= L; ++e)
        for (size_t c = 0; c < collectives.size(); ++c) {
          GroupCost gc = costAt(j, e, c);
          double viaE = gc.comm + minComm[e];
          double fViaE = std::max(view.prefixBackward[e] + gc.topk + viaE, gc.topk + minCommF[e]);
          if (viaE < comm || (viaE == comm && fViaE < commF)) {
            comm = viaE;
            commF = fViaE;
          }
          // F of [j, L) >= the first group's term B(e) + s + c + A(rest);
          // the later groups' terms only grow by this group's top-k.
          rest = std::min(
              rest, std::max(view.prefixBackward[e] + gc.topk + gc.comm + minComm[e], minRest[e]));
          // F - A = max(B(e) + s, s - c + (F - A of the rest)).
          // Non-decreasing in the rest's F - A: its least and largest give
          // the least and largest.
          slack = std::max(
              slack, std::max(view.prefixBackward[e] + gc.topk, gc.topk - gc.comm + maxSlack[e]));
          lowSlack = std::min(lowSlack, std::max(view.prefixBackward[e] + gc.topk,
                                                 gc.topk - gc.comm + minSlack[e]));
        }
      minComm[j] = comm;
      minRest[j] = rest;
      minSlack[j] = lowSlack;
      // Every Pareto-optimal grouping of [j, L) has A >= minComm and so
      // F <= commF (the F of a least-A grouping), so F - A <= commF - minComm.
      maxSlack[j] = std::min(slack, commF - comm);
      minCommF[j] = commF;
    }
    // Every grouping of [0, i) has X >= prefixMinX[i] (the least total top-k
    // time) and Y >= prefixMinY[i] (its collectives all end by Y, and its
    // last one starts after B(i)).
    std::vector<double> commBefore(L + 1, 0.0);
    prefixMinX.assign(L + 1, 0.0);
    prefixMinY.assign(L + 1, 0.0);
    for (int64_t i = 1; i <= L; ++i) {
      double x = inf, comm = inf, last = inf;
      for (int64_t j = 0; j < i; ++j)
        for (size_t c = 0; c < collectives.size(); ++c) {
          GroupCost gc = costAt(j, i, c);
          x = std::min(x, prefixMinX[j] + gc.topk);
          comm = std::min(comm, commBefore[j] + gc.comm);
          last = std::min(last, gc.comm);
        }
      prefixMinX[i] = x;
      commBefore[i] = comm;
      prefixMinY[i] = std::max(comm, view.prefixBackward[i] + last);
    }
    suffix.assign(L + 1, {});
  }

  /// The coarse suffix frontiers, backward from {(0, -inf)} at L: a grouping
  /// of [j, L) is a first group [j, e) (top-k s, collective c) and a
  /// grouping of [e, L) with (A, F), giving A' = c + A and
  /// F' = max(B(e) + s + c + A, s + F). Both are non-decreasing in (A, F),
  /// so lower-bound points at e give lower-bound points at j. The points of
  /// j are bucketed by A and each bucket kept as its corner (least A, least
  /// F): a lower bound of every point in it. Points that cannot finish within
  /// `upper` (A > upper - the least Y of a prefix; F > upper - the least X)
  /// are dropped.
  void computeSuffixBounds(double upper, size_t buckets) {
    int64_t L = view.L;
    const double inf = std::numeric_limits<double>::infinity();
    double slack = kMargin * std::abs(upper);
    suffix.assign(L + 1, {});
    suffix[L].push_back({0.0, -inf});
    std::vector<double> bucketA(buckets), bucketF(buckets);
    for (int64_t j = L - 1; j >= 0; --j) {
      double lo = minComm[j], hi = upper - prefixMinY[j] + slack;
      double fCap = upper - prefixMinX[j] + slack;
      double scale = hi > lo ? static_cast<double>(buckets) / (hi - lo) : 0.0;
      std::fill(bucketA.begin(), bucketA.end(), inf);
      std::fill(bucketF.begin(), bucketF.end(), inf);
      for (int64_t e = j + 1; e <= L; ++e) {
        double be = view.prefixBackward[e];
        for (size_t c = 0; c < collectives.size(); ++c) {
          GroupCost gc = costAt(j, e, c);
          for (const SuffixPoint &pt : suffix[e]) {
            double first = be + gc.topk + gc.comm + pt.a;
            double later = gc.topk + pt.f;
            double a = gc.comm + pt.a, f = std::max(first, later);
            if (a <= hi && f <= fCap) {
              size_t m =
                  a > lo ? std::min<size_t>(buckets - 1, static_cast<size_t>((a - lo) * scale)) : 0;
              bucketA[m] = std::min(bucketA[m], a);
              bucketF[m] = std::min(bucketF[m], f);
            }
            if (first >= later)
              break; // later points (larger A) give points this one dominates
          }
        }
      }
      double lastF = inf;
      for (size_t m = 0; m < buckets; ++m)
        if (bucketA[m] < inf && bucketF[m] < lastF) {
          suffix[j].push_back({bucketA[m], bucketF[m]});
          lastF = bucketF[m];
        }
    }
  }

  /// No grouping of [i, L) after the label ends below this.
  /// (Above `cutoff` the exact value does not matter: returns early.)
  double lowerBound(const Label &l, int64_t i,
                    double cutoff = std::numeric_limits<double>::infinity()) const {
    if (i == view.L)
      return l.y;
    double bound = std::max(l.y + minComm[i], l.x + minRest[i]);
    const std::vector<SuffixPoint> &pts = suffix[i];
    if (pts.empty() || bound > cutoff) // before computeSuffixBounds, or pruned anyway
      return bound;
    // min_k max(y + a_k, x + f_k): y + a_k rises and x + f_k falls with k;
    // the minimum is next to the first k where the first reaches the second.
    size_t k = std::partition_point(pts.begin(), pts.end(),
                                    [&](const SuffixPoint &p) { return l.y + p.a < l.x + p.f; }) -
               pts.begin();
    double coarse = std::numeric_limits<double>::infinity();
    if (k < pts.size())
      coarse = l.y + pts[k].a;
    if (k > 0)
      coarse = std::min(coarse, l.x + pts[k - 1].f);
    return std::max(bound, coarse);
  }

  /// The (X, Y) of a label for dominance at boundary i < L: a label whose
  /// Y - X is below every suffix's F - A (e.g. its comm stream is idle by the
  /// end of the next layer's backward) behaves the same whatever its Y.
  std::pair<double, double> dominance(const Label &l, int64_t i) const {
    if (i == view.L)
      return {l.x, l.y};
    double d = l.y - l.x, margin = kMargin * (std::abs(l.y) + std::abs(l.x));
    if (d < minSlack[i] - margin)
      return {l.x, l.x + minSlack[i]};
    return {l.x, l.y};
  }

  /// Dominance within the groupings that can still finish within `limit`
  /// (the cost of a known grouping plus a margin). Label 1 dominates label 2
  /// when, for every grouping S of [i, L) with cost2(S) <= limit (so
  /// A <= limit - Y2 and F <= limit - X2), cost1(S) <= cost2(S):
  ///  - X1 <= X2 and Y1 + A <= X2 + F, i.e. Y1 - X2 <= F - A: true if
  ///    Y1 - X2 <= (least F with A <= limit - Y2) - (limit - Y2);
  ///  - Y1 <= Y2 and X1 + F <= Y2 + A, i.e. F - A <= Y2 - X1: true if
  ///    (limit - X2) - (least A with F <= limit - X2) <= Y2 - X1.
  /// The least F and least A come from the coarse suffix frontier (lower
  /// bounds). If the optimum runs through label 2 then it costs <= limit and
  /// label 1 does as well with the same suffix; the relation is transitive,
  /// so dropping label 2 keeps an optimal grouping. `labels` is the Pareto
  /// frontier (X ascending, Y descending); the survivors keep that order.
  void filterWithinLimit(std::vector<Label> &labels, int64_t i, double limit) const {
    const std::vector<SuffixPoint> &pts = suffix[i];
    if (i == view.L || pts.empty() || labels.size() < 2)
      return;
    const double inf = std::numeric_limits<double>::infinity();
    auto margin = [&](const Label &l) { return kMargin * (std::abs(l.x) + std::abs(l.y) + limit); };
    // Least F over suffixes with A <= cap: the last corner with a <= cap.
    auto leastF = [&](double cap) {
      size_t k = std::upper_bound(pts.begin(), pts.end(), cap,
                                  [](double v, const SuffixPoint &p) { return v < p.a; }) -
                 pts.begin();
      return k == 0 ? inf : pts[k - 1].f;
    };
    // Least A over suffixes with F <= cap: the first corner with f <= cap.
    auto leastA = [&](double cap) {
      size_t k = std::partition_point(pts.begin(), pts.end(),
                                      [&](const SuffixPoint &p) { return p.f > cap; }) -
                 pts.begin();
      return k == pts.size() ? inf : pts[k].a;
    };
    std::vector<char> drop(labels.size(), 0);
    // X ascending: label 1 = the least Y among the labels before.
    double runMinY = inf;
    for (size_t k = 0; k < labels.size(); ++k) {
      const Label &l = labels[k];
      double acap = limit - l.y;
      double bound = std::max(leastF(acap) - acap, minSlack[i]);
      if (runMinY - l.x <= bound - margin(l))
        drop[k] = 1;
      runMinY = std::min(runMinY, l.y);
    }
    // Y ascending (X descending): label 1 = the least X among those before.
    double runMinX = inf;
    for (size_t k = labels.size(); k-- > 0;) {
      const Label &l = labels[k];
      double fcap = limit - l.x;
      double bound = std::min(fcap - leastA(fcap), maxSlack[i]);
      if (bound + margin(l) <= l.y - runMinX)
        drop[k] = 1;
      runMinX = std::min(runMinX, l.x);
    }
    size_t kept = 0;
    for (size_t k = 0; k < labels.size(); ++k)
      if (!drop[k])
        labels[kept++] = labels[k];
    labels.resize(kept);
  }

  static double bestY(const std::vector<Label> &labels) {
    double best = std::numeric_limits<double>::infinity();
    for (const Label &l : labels)
      best = std::min(best, l.y);
    return best;
  }

  /// The forward DP. Mode::Exact keeps every non-dominated label whose lower
  /// bound is within `limit` (nullopt once more than `budget` labels are
  /// kept). The heuristics for an upper bound keep one label
  /// per boundary: the one of least Y, or of least lower bound.
  std::optional<std::vector<std::vector<Label>>> solve(Mode mode, std::optional<double> limit,
                                                       std::optional<size_t> budget) {
    int64_t L = view.L;
    std::vector<std::vector<Label>> front(L + 1);
    front[0].push_back({0.0, 0.0, -1, -1, false});
    // Mode::Exact: the Pareto frontier of the candidates so far, by
    // dominance X strictly ascending with dominance Y strictly descending.
    struct Keyed {
      double x, y; // dominance keys
      Label label;
    };
    std::vector<Keyed> pareto;
    if (mode == Mode::Exact) {
      maxFront = 0;
      totalLabels = 0;
    }
    for (int64_t i = 1; i <= L; ++i) {
      pareto.clear();
      std::optional<std::pair<double, Label>> best; // the other modes' one label
      double prefixB = view.prefixBackward[i];
      for (int64_t j = 0; j < i; ++j) {
        const std::vector<Label> &from = front[j];
        for (size_t c = 0; c < collectives.size(); ++c) {
          GroupCost gc = costAt(j, i, c);
          for (size_t k = 0; k < from.size(); ++k) {
            Label l{from[k].x, from[k].y, static_cast<int32_t>(j), static_cast<int32_t>(k),
                    collectives[c] == Collective::AllReduce};
            bool crossed = prefixB + (l.x + gc.topk) >= l.y;
            step(l.x, l.y, prefixB, gc);
            if (mode != Mode::Exact) {
              double key = mode == Mode::KeepLeastY ? l.y : lowerBound(l, i);
              if (!best || key < best->first || (key == best->first && l.y < best->second.y))
                best = {key, l};
            } else if (!limit || lowerBound(l, i, *limit) <= *limit) {
              auto [dx, dy] = dominance(l, i);
              insertPareto(pareto, {dx, dy, l});
            }
            if (crossed)
              break; // every later label of `from` (larger X) yields a dominated one
          }
        }
      }
      std::vector<Label> &out = front[i];
      if (mode != Mode::Exact) {
        if (best)
          out.push_back(best->second);
        continue;
      }
      for (const Keyed &k : pareto)
        out.push_back(k.label);
      if (limit)
        filterWithinLimit(out, i, *limit);
      maxFront = std::max(maxFront, out.size());
      totalLabels += out.size();
      if (budget && totalLabels > *budget)
        return std::nullopt;
    }
    return front;
  }

  /// Adds a candidate to a Pareto frontier (keys x strictly ascending, y
  /// strictly descending) unless a label there is at least as good; drops
  /// the labels it dominates. The frontier stays small, so a sorted vector
  /// is the fastest structure.
  template <typename Keyed> static void insertPareto(std::vector<Keyed> &pareto, const Keyed &c) {
    auto pos = std::lower_bound(pareto.begin(), pareto.end(), c.x,
                                [](const Keyed &k, double x) { return k.x < x; });
    if (pos != pareto.begin() && std::prev(pos)->y <= c.y)
      return; // a smaller X with no larger Y
    if (pos != pareto.end() && pos->x == c.x && pos->y <= c.y)
      return; // the same X with no larger Y
    auto last = pos;
    while (last != pareto.end() && last->y >= c.y)
      ++last; // X >= c.x, Y >= c.y: dominated
    if (last == pos) {
      pareto.insert(pos, c);
    } else {
      *pos = c;
      pareto.erase(std::next(pos), last);
    }
  }

  std::vector<Group> reconstruct(const std::vector<std::vector<Label>> &front) const {
    const std::vector<Label> &last = front[view.L];
    size_t idx = 0;
    for (size_t k = 1; k < last.size(); ++k)
      if (last[k].y < last[idx].y)
        idx = k;
    std::vector<Group> groups;
    int64_t i = view.L;
    while (i > 0) {
      const Label &l = front[i][idx];
      groups.push_back(
          view.group(l.from, i, l.dense ? Collective::AllReduce : Collective::AllGather));
      i = l.from;
      idx = l.fromIdx;
    }
    std::reverse(groups.begin(), groups.end()); // backprop order
    return groups;
  }
};

} // namespace

std::vector<Group> planOptimal(const Profile &profile, bool allowSparse, bool allowDense,
                               OptimalStats *stats, const OptimalTuning &tuning) {
  OptimalPlanner planner(profile, allowSparse, allowDense, tuning);
  std::vector<Group> groups = planner.run();
  if (stats)
    *stats = {planner.maxFront, planner.totalLabels, planner.usedBuckets, planner.attempts};
  return groups;
}

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

namespace {
struct StrategyName {
  const char *name;
  StrategyKind kind;
};
constexpr StrategyName kStrategyNames[] = {
    {"dense", StrategyKind::Dense},   {"mgwfbp", StrategyKind::MGWFBP},
    {"single", StrategyKind::Single}, {"layerwise", StrategyKind::Layerwise},
    {"greedy", StrategyKind::Greedy}, {"omgs", StrategyKind::OMGS},
    {"auto", StrategyKind::Auto},
};
constexpr const char *kStrategyList =
    "dense, mgwfbp, single, layerwise, threshold:BYTES, greedy, omgs, auto";
} // namespace

std::string Strategy::name() const {
  if (kind == StrategyKind::Threshold)
    return "threshold:" + std::to_string(thresholdBytes);
  for (const StrategyName &n : kStrategyNames)
    if (n.kind == kind)
      return n.name;
  llvm_unreachable("unnamed strategy kind");
}

Expected<Strategy> Strategy::parse(StringRef name) {
  for (const StrategyName &n : kStrategyNames)
    if (name == n.name)
      return Strategy{n.kind, 0};
  if (name.consume_front("threshold:")) {
    int64_t bytes = 0;
    if (name.empty() || !llvm::all_of(name, isDigit) || name.getAsInteger(10, bytes) || bytes < 1)
      return createStringError(inconvertibleErrorCode(),
                               "strategy 'threshold:" + name +
                                   "': BYTES must be a positive integer (bytes of float32 "
                                   "gradients per bucket)");
    return Strategy{StrategyKind::Threshold, bytes};
  }
  return createStringError(inconvertibleErrorCode(),
                           "unknown strategy '" + name + "'; expected one of " + kStrategyList);
}

std::vector<Strategy> allStrategies() {
  return {{StrategyKind::Dense, 0},
          {StrategyKind::MGWFBP, 0},
          {StrategyKind::Single, 0},
          {StrategyKind::Layerwise, 0},
          {StrategyKind::Threshold, kDefaultThresholdBytes},
          {StrategyKind::Greedy, 0},
          {StrategyKind::OMGS, 0},
          {StrategyKind::Auto, 0}};
}

Plan plan(const Profile &profile, const Strategy &strategy) {
  Plan result;
  result.strategy = strategy.name();
  switch (strategy.kind) {
  case StrategyKind::Dense:
    result.groups = planDense(profile);
    break;
  case StrategyKind::MGWFBP:
    result.groups = planOptimal(profile, /*allowSparse=*/false, /*allowDense=*/true);
    break;
  case StrategyKind::Single:
    result.groups = planSingle(profile);
    break;
  case StrategyKind::Layerwise:
    result.groups = planLayerwise(profile);
    break;
  case StrategyKind::Threshold:
    result.groups = planThreshold(profile, strategy.thresholdBytes);
    break;
  case StrategyKind::Greedy:
    result.groups = planGreedy(profile);
    break;
  case StrategyKind::OMGS:
    result.groups = planOptimal(profile, /*allowSparse=*/true, /*allowDense=*/false);
    break;
  case StrategyKind::Auto:
    result.groups = planOptimal(profile, /*allowSparse=*/true, /*allowDense=*/true);
    break;
  }
  result.predictedSeconds = predict(profile, result.groups);
  return result;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string formatSeconds(double value) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, res.ptr);
}

void printPlanJSON(raw_ostream &os, const Profile &profile, const Plan &plan, unsigned indent) {
  std::string pad(indent, ' ');
  os << pad << "{\n";
  os << pad << "  \"strategy\": " << json::Value(plan.strategy) << ",\n";
  os << pad << "  \"predicted_seconds\": " << formatSeconds(plan.predictedSeconds) << ",\n";
  os << pad << "  \"groups\": [\n";
  for (auto [gi, g] : enumerate(plan.groups)) {
    os << pad << "    {\"layers\": [";
    for (int64_t f = g.begin; f < g.end; ++f)
      os << (f == g.begin ? "" : ", ") << json::Value(profile.layers[f].name);
    os << "], \"collective\": \"" << stringifyCollective(g.collective) << "\"}"
       << (gi + 1 < plan.groups.size() ? "," : "") << "\n";
  }
  os << pad << "  ]\n";
  os << pad << "}";
}

json::Value planToJSON(const Profile &profile, const Plan &plan) {
  json::Array groups;
  for (const Group &g : plan.groups) {
    json::Array names;
    for (int64_t f = g.begin; f < g.end; ++f)
      names.push_back(profile.layers[f].name);
    groups.push_back(json::Object{{"layers", std::move(names)},
                                  {"collective", stringifyCollective(g.collective)}});
  }
  return json::Object{{"strategy", plan.strategy},
                      {"predicted_seconds", plan.predictedSeconds},
                      {"groups", std::move(groups)}};
}

//===----------------------------------------------------------------------===//
// Synthetic profiles
//===----------------------------------------------------------------------===//

namespace {
/// splitmix64: the same stream on every platform (std distributions are not).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double logUniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }
  int64_t pick(std::initializer_list<int64_t> values) {
    return values.begin()[next() % values.size()];
  }

private:
  uint64_t state;
};
} // namespace

Profile makeModelShapedProfile(int64_t numTensors, uint64_t seed) {
  assert(numTensors >= 1);
  Rng rng(seed);
  Profile p;
  p.workers = rng.pick({2, 4, 8, 16, 32, 64});
  p.density = static_cast<double>(rng.pick({1, 2, 5, 10, 50})) / 1000.0;

  // Top-k: s * n * log2(n) plus a launch overhead, sampled at powers of 4.
  double s = rng.logUniform(5e-11, 1e-9), launch = rng.logUniform(5e-6, 1e-4);
  for (int64_t n = 1; n <= (int64_t(1) << 32); n *= 4)
    p.topkPoints.push_back(
        {n, launch + s * static_cast<double>(n) * std::log2(static_cast<double>(n))});

  // Network: 1-100 Gbit/s, start-up 50 us - 20 ms; ring all-reduce.
  double bytesPerSecond = rng.logUniform(1e9, 1e11) / 8.0;
  p.allgather.alpha = rng.logUniform(5e-5, 2e-2);
  p.allgather.beta = 1.0 / bytesPerSecond;
  p.allreduce.alpha = p.allgather.alpha * rng.uniform(0.5, 2.0);
  p.allreduce.beta =
      2.0 * static_cast<double>(p.workers - 1) / static_cast<double>(p.workers) / bytesPerSecond;

  // Compute: FLOP/s and memory bandwidth of the device, batch size.
  double flops = rng.logUniform(2e12, 3e13), memBandwidth = rng.logUniform(2e11, 2e12);
  double batch = static_cast<double>(rng.pick({16, 32, 64, 128, 256}));
  double kernelLaunch = 5e-6;
  int64_t stages = rng.pick({3, 4, 5}), channels = rng.pick({16, 32, 64});
  int64_t spatial = rng.pick({32, 56, 112}), classes = rng.pick({10, 100, 1000});
  auto noise = [&] { return rng.uniform(0.8, 1.25); };

  int64_t body = std::max<int64_t>(numTensors - 2, 0);
  int64_t perStage = std::max<int64_t>((body + stages - 1) / stages, 1);
  int64_t cin = 3;
  for (int64_t t = 0; t < body; ++t) {
    int64_t stage = std::min(t / perStage, stages - 1);
    int64_t cout = channels << stage;
    double hw = std::pow(static_cast<double>(std::max<int64_t>(spatial >> stage, 1)), 2);
    int64_t unit = t / 3;
    LayerProfile layer;
    switch (t % 3) {
    case 0: { // conv weight
      int64_t k = rng.uniform() < 0.15 ? 1 : 3;
      layer.name = formatv("conv{0}.weight", unit).str();
      layer.numel = k * k * cin * cout;
      // Weight and input gradients: 2 x 2 x MACs.
      layer.backward =
          kernelLaunch + 4.0 * static_cast<double>(layer.numel) * hw * batch / flops * noise();
      cin = cout;
      break;
    }
    case 1:
    case 2: // batch-norm weight / bias: memory-bound over the activations
      layer.name = formatv("bn{0}.{1}", unit, t % 3 == 1 ? "weight" : "bias").str();
      layer.numel = cout;
      layer.backward = kernelLaunch + (t % 3 == 1 ? 12.0 : 4.0) * static_cast<double>(cout) * hw *
                                          batch / memBandwidth * noise();
      break;
    }
    p.layers.push_back(std::move(layer));
  }
  int64_t features = numTensors >= 3 ? cin : 512;
  if (numTensors >= 2) {
    double macs = static_cast<double>(features * classes) * batch;
    p.layers.push_back(
        {"fc.weight", features * classes, kernelLaunch + 4.0 * macs / flops * noise()});
  }
  p.layers.push_back({"fc.bias", classes, kernelLaunch * noise()});
  return p;
}

} // namespace mgs::planner
