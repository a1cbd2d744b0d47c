//===- PlannerTest.cpp - Profiles, cost model, merge strategies -----------===//

#include "mgs/Planner/Planner.h"
#include "SyntheticProfiles.h"
#include "mgs/Planner/ExactPlanner.h"
#include "mgs/Planner/Heuristics.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <vector>

using namespace mgs::planner;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The lit tests' small profile: dyadic times, so sums are exact.
constexpr const char *kSmall = R"json({
  "workers": 2, "density": 0.5,
  "topk": {"points": [[1, 0.0625], [1025, 0.125]]},
  "allgather": {"alpha": 0.25, "beta": 0.000244140625},
  "allreduce": {"alpha": 0.5, "beta": 0.0009765625},
  "layers": [
    {"name": "a.weight", "numel": 513, "backward": 0.5},
    {"name": "a.bias", "numel": 1, "backward": 0.0625},
    {"name": "b.weight", "numel": 257, "backward": 0.25},
    {"name": "b.bias", "numel": 1, "backward": 0.0625}
  ]})json";

Profile small() {
  llvm::Expected<Profile> p = parseProfile(kSmall);
  if (!p) {
    ADD_FAILURE() << llvm::toString(p.takeError());
    return {};
  }
  return *p;
}

/// parseProfile's error message ("" when it parses).
std::string parseError(llvm::StringRef json) {
  llvm::Expected<Profile> p = parseProfile(json);
  if (p)
    return "";
  return llvm::toString(p.takeError());
}

/// kSmall with one substring replaced.
std::string smallWith(llvm::StringRef from, llvm::StringRef to) {
  std::string s = kSmall;
  size_t at = s.find(from.str());
  EXPECT_NE(at, std::string::npos) << from.str();
  if (at != std::string::npos)
    s.replace(at, from.size(), to.str());
  return s;
}

/// Groupings from backprop-order group sizes, e.g. {2, 1, 1}.
std::vector<Group> fromSizes(const Profile &p, std::vector<int64_t> sizes,
                             std::vector<Collective> collectives = {}) {
  std::vector<Group> groups;
  int64_t end = static_cast<int64_t>(p.layers.size());
  for (size_t g = 0; g < sizes.size(); ++g) {
    Collective c = g < collectives.size() ? collectives[g] : Collective::AllGather;
    groups.push_back({end - sizes[g], end, c});
    end -= sizes[g];
  }
  return groups;
}

std::vector<int64_t> sizesOf(const std::vector<Group> &groups) {
  std::vector<int64_t> sizes;
  for (const Group &g : groups)
    sizes.push_back(g.end - g.begin);
  return sizes;
}

/// The least predict() over every contiguous grouping (2^(L-1)) and, when
/// both collectives are allowed, every collective per group (3^(L-1) plans
/// in all).
double bruteForce(const Profile &p, bool allowSparse, bool allowDense) {
  int64_t L = static_cast<int64_t>(p.layers.size());
  double best = INFINITY;
  std::vector<int64_t> sizes;
  for (uint32_t cuts = 0; cuts < (1u << (L - 1)); ++cuts) {
    sizes.clear();
    int64_t run = 0;
    for (int64_t q = 0; q < L; ++q) {
      ++run;
      if (q == L - 1 || (cuts >> q & 1)) {
        sizes.push_back(run);
        run = 0;
      }
    }
    uint32_t choices = allowSparse && allowDense ? 1u << sizes.size() : 1u;
    for (uint32_t pick = 0; pick < choices; ++pick) {
      std::vector<Collective> cs;
      for (size_t g = 0; g < sizes.size(); ++g)
        cs.push_back(allowSparse && allowDense
                         ? ((pick >> g & 1) ? Collective::AllReduce : Collective::AllGather)
                         : (allowSparse ? Collective::AllGather : Collective::AllReduce));
      best = std::min(best, predict(p, fromSizes(p, sizes, cs)));
    }
  }
  return best;
}

/// A random profile of `layers` layers from one of several families, to
/// reach every regime: generic (random top-k curves, possibly non-monotone,
/// zero backward times, huge and tiny start-ups), model-shaped, and
/// degenerate (many equal costs, so many ties).
Profile randomProfile(std::mt19937_64 &rng, int64_t layers, int family) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto logUniform = [&](double lo, double hi) {
    return std::exp(uniform(std::log(lo), std::log(hi)));
  };
  if (family == 0)
    return makeModelShapedProfile(layers, rng());
  Profile p;
  if (family == 1) {
    p.workers = 1 + static_cast<int64_t>(rng() % 64);
    p.density = logUniform(1e-3, 1.0);
    int64_t n = 0;
    for (int k = 0, e = 1 + static_cast<int>(rng() % 4); k < e; ++k) {
      n += 1 + static_cast<int64_t>(rng() % 200000);
      p.topkPoints.push_back({n, logUniform(1e-6, 1e-2)});
    }
    // Half of them with collectives that also take compute time.
    auto cpu = [&] { return rng() % 2 ? logUniform(1e-13, 1e-8) : 0.0; };
    p.allgather = {logUniform(1e-7, 1e-1), logUniform(1e-13, 1e-7), cpu()};
    p.allreduce = {logUniform(1e-7, 1e-1), logUniform(1e-13, 1e-7), cpu()};
    for (int64_t i = 0; i < layers; ++i)
      p.layers.push_back({"l" + std::to_string(i), static_cast<int64_t>(logUniform(1, 1e7)),
                          rng() % 4 == 0 ? 0.0 : logUniform(1e-6, 1e-1)});
    return p;
  }
  // Degenerate: small integers, so costs tie often.
  p.workers = 1 + static_cast<int64_t>(rng() % 4);
  p.density = 0.5;
  p.topkPoints = {{1, double(rng() % 3)}, {64, double(rng() % 5)}};
  p.allgather = {double(rng() % 4), double(rng() % 2) / 64};
  p.allreduce = {double(rng() % 4), double(rng() % 2) / 64};
  for (int64_t i = 0; i < layers; ++i)
    p.layers.push_back(
        {"l" + std::to_string(i), 1 + static_cast<int64_t>(rng() % 64), double(rng() % 3)});
  return p;
}

/// The one sparse collective of a sparse strategy without a per-group choice.
Collective namedCollective(const Strategy &s) {
  if (s.kind == StrategyKind::GTopK)
    return Collective::GTopK;
  if (s.kind == StrategyKind::SparseAllReduce)
    return Collective::SparseAllReduce;
  return Collective::AllGather;
}

bool sameCost(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(a, b); }

//===----------------------------------------------------------------------===//
// Profiles
//===----------------------------------------------------------------------===//

TEST(PlannerProfile, ParsesEveryField) {
  Profile p = small();
  EXPECT_EQ(p.workers, 2);
  EXPECT_EQ(p.density, 0.5);
  ASSERT_EQ(p.topkPoints.size(), 2u);
  EXPECT_EQ(p.topkPoints[1].n, 1025);
  EXPECT_EQ(p.topkPoints[1].seconds, 0.125);
  EXPECT_EQ(p.allgather.alpha, 0.25);
  EXPECT_EQ(p.allreduce.beta, 0.0009765625);
  ASSERT_EQ(p.layers.size(), 4u);
  EXPECT_EQ(p.layers[0].name, "a.weight");
  EXPECT_EQ(p.layers[2].numel, 257);
  EXPECT_EQ(p.layers[3].backward, 0.0625);
}

TEST(PlannerProfile, RoundTripsThroughJSON) {
  Profile p = makeModelShapedProfile(40, 7);
  std::string text = llvm::formatv("{0}", profileToJSON(p)).str();
  llvm::Expected<Profile> back = parseProfile(text);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  ASSERT_EQ(back->layers.size(), p.layers.size());
  for (size_t i = 0; i < p.layers.size(); ++i) {
    EXPECT_EQ(back->layers[i].name, p.layers[i].name);
    EXPECT_EQ(back->layers[i].numel, p.layers[i].numel);
    EXPECT_EQ(back->layers[i].backward, p.layers[i].backward);
  }
  EXPECT_EQ(back->allgather.beta, p.allgather.beta);
  EXPECT_EQ(predict(*back, planLayerwise(*back)), predict(p, planLayerwise(p)));
}

TEST(PlannerProfile, IgnoresUnknownKeys) {
  EXPECT_EQ(parseError(smallWith("\"workers\": 2,", "\"device\": \"h200\", \"workers\": 2,")), "");
}

TEST(PlannerProfile, CollectiveComputeTimeIsOptional) {
  Profile p = small();
  EXPECT_EQ(p.allreduce.cpuPerByte, 0.0);
  llvm::Expected<Profile> q =
      parseProfile(smallWith("\"alpha\": 0.5", "\"alpha\": 0.5, \"cpu_per_byte\": 2e-9"));
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->allreduce.cpuPerByte, 2e-9);
  // Written back only where calibrated, and read back unchanged.
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(*q);
  EXPECT_NE(text.find("cpu_per_byte"), std::string::npos);
  llvm::Expected<Profile> r = parseProfile(text);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->allreduce.cpuPerByte, 2e-9);
  EXPECT_EQ(parseError(smallWith("\"alpha\": 0.5", "\"alpha\": 0.5, \"cpu_per_byte\": -1")),
            "allreduce.cpu_per_byte: expected a non-negative number of seconds per byte, got -1");
}

// cpu_fraction (optional, each collective): read, validated, written back.
TEST(PlannerProfile, CpuFractionIsOptional) {
  EXPECT_FALSE(small().allreduce.cpuFraction.has_value());
  llvm::Expected<Profile> q = parseProfile(
      smallWith("\"alpha\": 0.5", "\"alpha\": 0.5, \"cpu_per_byte\": 2e-9, \"cpu_fraction\": 0.5"));
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  ASSERT_TRUE(q->allreduce.cpuFraction.has_value());
  EXPECT_EQ(*q->allreduce.cpuFraction, 0.5);
  EXPECT_FALSE(q->allgather.cpuFraction.has_value());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(*q);
  llvm::Expected<Profile> r = parseProfile(text);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->allreduce.cpuFraction, q->allreduce.cpuFraction);
  EXPECT_EQ(parseError(smallWith("\"alpha\": 0.5", "\"alpha\": 0.5, \"cpu_fraction\": -0.5")),
            "allreduce.cpu_fraction: expected a non-negative number of seconds per second, got "
            "-0.5");
  EXPECT_EQ(parseError(smallWith("\"alpha\": 0.5", "\"alpha\": 0.5, \"cpu_fraction\": \"x\"")),
            "allreduce.cpu_fraction: expected a non-negative number of seconds per second, got "
            "\"x\"");
  Profile bad = small();
  bad.allgather.cpuFraction = std::nan("");
  EXPECT_EQ(llvm::toString(bad.validate()),
            "allgather.cpu_fraction: expected a non-negative number of seconds per second, got NaN");
}

// per_element (optional, the sparse all-reduce's): n times it on the comm
// stream; read, validated, written back; ignored in the other collectives.
TEST(PlannerProfile, SparseAllreducePerElementIsOptional) {
  Profile p = small();
  double before = p.sparseAllreduceSeconds(771);
  p.sparseAllreduce = p.pointToPoint(std::nullopt);
  EXPECT_EQ(p.sparseAllreduceSeconds(771), before);
  p.sparseAllreduce->perElement = 1.0 / 1024;
  EXPECT_EQ(p.sparseAllreduceSeconds(771), before + 771.0 / 1024);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(p);
  llvm::Expected<Profile> r = parseProfile(text);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->sparseAllreduce->perElement, 1.0 / 1024);
  EXPECT_EQ(r->sparseAllreduceSeconds(771), p.sparseAllreduceSeconds(771));
  const char *entry = "\"allreduce\": {\"alpha\": 0.5, \"beta\": 0.0009765625}";
  EXPECT_EQ(parseError(smallWith(entry, std::string(entry) +
                                            ", \"sparse_allreduce\": {\"alpha\": 0, \"beta\": 0, "
                                            "\"per_element\": -1}")),
            "sparse_allreduce.per_element: expected a non-negative number of seconds per element, "
            "got -1");
  // Only the sparse all-reduce reads it.
  llvm::Expected<Profile> q =
      parseProfile(smallWith("\"alpha\": 0.5", "\"alpha\": 0.5, \"per_element\": -1"));
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->allreduce.perElement, 0.0);
}

// step_offset (optional): read, validated, written back; plans and their
// predicted_seconds do not depend on it, predicted_step_seconds adds it.
TEST(PlannerProfile, StepOffsetIsOptional) {
  EXPECT_FALSE(small().stepOffset.has_value());
  llvm::Expected<Profile> q =
      parseProfile(smallWith("\"workers\": 2,", "\"workers\": 2, \"step_offset\": 0.125,"));
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->stepOffset, 0.125);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(*q);
  llvm::Expected<Profile> r = parseProfile(text);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->stepOffset, 0.125);
  Plan with = plan(*q, Strategy{StrategyKind::OMGS});
  Plan without = plan(small(), Strategy{StrategyKind::OMGS});
  EXPECT_EQ(with.predictedSeconds, without.predictedSeconds);
  llvm::json::Value v = planToJSON(*q, with);
  EXPECT_EQ(v.getAsObject()->getNumber("predicted_step_seconds"), with.predictedSeconds + 0.125);
  EXPECT_FALSE(planToJSON(small(), without).getAsObject()->get("predicted_step_seconds"));
  EXPECT_EQ(parseError(smallWith("\"workers\": 2,", "\"workers\": 2, \"step_offset\": -1,")),
            "step_offset: expected a non-negative number of seconds, got -1");
}

// Found by lib/Planner/fuzz (corpus/crash-negative-zero-seconds): a time of -0
// passed as non-negative and was written back as "-0", which JSON reads as the
// integer 0, so a profile's JSON did not read back to itself. -0 reads as 0.
TEST(PlannerProfile, NegativeZeroSecondsReadAsZero) {
  llvm::Expected<Profile> q = parseProfile(
      smallWith("[1025, 0.125]", "[1025, -0e-4]"));
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->topkPoints[1].seconds, 0.0);
  EXPECT_FALSE(std::signbit(q->topkPoints[1].seconds));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(*q);
  EXPECT_EQ(text.find("-0"), std::string::npos) << text;
}

TEST(PlannerProfile, BatchSizeIsOptional) {
  EXPECT_EQ(small().batchSize, 0);
  llvm::Expected<Profile> q =
      parseProfile(smallWith("\"workers\": 2,", "\"workers\": 2, \"batch_size\": 16,"));
  ASSERT_TRUE(static_cast<bool>(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->batchSize, 16);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(*q);
  llvm::Expected<Profile> r = parseProfile(text);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->batchSize, 16);
  EXPECT_EQ(parseError(smallWith("\"workers\": 2,", "\"workers\": 2, \"batch_size\": 0,")),
            "batch_size: expected a positive integer, got 0");
}

TEST(PlannerProfile, TooManyLayersIsAnErrorNotAnOutOfMemory) {
  Profile p = small();
  p.layers.clear();
  for (int i = 0; i < 8193; ++i)
    p.layers.push_back({"t" + std::to_string(i), 10, 1e-6});
  llvm::Error e = p.validate();
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_EQ(llvm::toString(std::move(e)),
            "layers: 8193 tensors; the planner handles at most 8192 (its cost tables grow with "
            "the square of the count)");
  p.layers.pop_back();
  EXPECT_FALSE(static_cast<bool>(p.validate()));
}

TEST(PlannerProfile, ErrorsNameTheField) {
  EXPECT_EQ(parseError(smallWith("\"numel\": 257", "\"numel\": -5")),
            "layers[2].numel: expected a positive integer, got -5");
  EXPECT_EQ(parseError(smallWith("\"numel\": 257", "\"numel\": 2.5")),
            "layers[2].numel: expected a positive integer, got 2.5");
  EXPECT_EQ(parseError(smallWith("\"numel\": 257", "\"numel\": \"257\"")),
            "layers[2].numel: expected a positive integer, got \"257\"");
  EXPECT_EQ(parseError(smallWith("\"backward\": 0.25", "\"backward\": -1")),
            "layers[2].backward: expected a non-negative number of seconds, got -1");
  EXPECT_EQ(parseError(smallWith("\"backward\": 0.25", "\"backward\": null")),
            "layers[2].backward: expected a non-negative number of seconds, got null");
  EXPECT_EQ(parseError(smallWith("\"backward\": 0.25", "\"backward\": 1e999")),
            "layers[2].backward: expected a non-negative number of seconds, got inf");
  EXPECT_EQ(parseError(smallWith("\"name\": \"b.weight\", ", "")), "layers[2].name: missing field");
  EXPECT_EQ(parseError(smallWith("\"b.weight\"", "\"\"")),
            "layers[2].name: expected a non-empty string, got \"\"");
  EXPECT_EQ(parseError(smallWith("\"b.bias\"", "\"a.bias\"")),
            "layers[3].name: duplicate name 'a.bias' (also layers[1])");
  EXPECT_EQ(parseError(smallWith("\"workers\": 2", "\"workers\": 0")),
            "workers: expected a positive integer, got 0");
  EXPECT_EQ(parseError(smallWith("\"workers\": 2,", "")), "workers: missing field");
  EXPECT_EQ(parseError(smallWith("\"density\": 0.5", "\"density\": 0")),
            "density: expected a number in (0, 1], got 0");
  EXPECT_EQ(parseError(smallWith("\"alpha\": 0.25, ", "")), "allgather.alpha: missing field");
  EXPECT_EQ(parseError(smallWith("\"alpha\": 0.5", "\"alpha\": -0.5")),
            "allreduce.alpha: expected a non-negative number of seconds, got -0.5");
  EXPECT_EQ(parseError(smallWith("\"beta\": 0.000244140625", "\"beta\": true")),
            "allgather.beta: expected a non-negative number of seconds per byte, got true");
  EXPECT_EQ(parseError(smallWith("\"allreduce\": {", "\"allreduce\": 3, \"x\": {")),
            "allreduce: expected an object, got 3");
  EXPECT_EQ(parseError(smallWith("[[1, 0.0625], [1025, 0.125]]", "[[1025, 0.125], [1, 0.0625]]")),
            "topk.points: must be sorted by n, strictly increasing (points[1] has n = 1 after "
            "n = 1025)");
  EXPECT_EQ(parseError(smallWith("[[1, 0.0625], [1025, 0.125]]", "[[1, 0.0625], [1, 0.125]]")),
            "topk.points: must be sorted by n, strictly increasing (points[1] has n = 1 after "
            "n = 1)");
  EXPECT_EQ(parseError(smallWith("[[1, 0.0625], [1025, 0.125]]", "[]")),
            "topk.points: must not be empty");
  EXPECT_EQ(parseError(smallWith("[[1, 0.0625], [1025, 0.125]]", "[[1, 0.0625], 7]")),
            "topk.points[1]: expected an [n, seconds] pair, got 7");
  EXPECT_EQ(parseError(smallWith("[[1, 0.0625], [1025, 0.125]]", "[[0, 0.0625]]")),
            "topk.points[0][0]: expected a positive integer, got 0");
  EXPECT_EQ(parseError(smallWith("[[1, 0.0625], [1025, 0.125]]", "[[1, -0.0625]]")),
            "topk.points[0][1]: expected a non-negative number of seconds, got -0.0625");
  EXPECT_EQ(parseError(smallWith("\"topk\": {\"points\"", "\"topk\": {\"pts\"")),
            "topk.points: missing field");
  EXPECT_EQ(parseError("[]"), "profile: expected a JSON object, got an array");
  EXPECT_EQ(parseError("{\"workers\": 2,}").rfind("invalid JSON: [1:", 0), 0u);
  EXPECT_EQ(parseError(R"({"workers": 1, "density": 1, "topk": {"points": [[1, 0]]},
      "allgather": {"alpha": 0, "beta": 0}, "allreduce": {"alpha": 0, "beta": 0},
      "layers": []})"),
            "layers: must not be empty");
  EXPECT_EQ(parseError(smallWith("{\"name\": \"a.bias\"", "5, {\"name\": \"a.bias\"")),
            "layers[1]: expected an object, got 5");
}

TEST(PlannerProfile, ValidateChecksProfilesBuiltInCode) {
  Profile p = small();
  EXPECT_FALSE(bool(p.validate()));
  p.layers[1].backward = NAN;
  EXPECT_EQ(llvm::toString(p.validate()),
            "layers[1].backward: expected a non-negative number of seconds, got NaN");
  p = small();
  p.density = 2;
  EXPECT_EQ(llvm::toString(p.validate()), "density: expected a number in (0, 1], got 2");
  p = small();
  p.layers.clear();
  EXPECT_EQ(llvm::toString(p.validate()), "layers: must not be empty");
}

TEST(PlannerProfile, LoadNamesUnreadableFiles) {
  llvm::Expected<Profile> p = loadProfile("/nonexistent/profile.json");
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(llvm::toString(p.takeError()).rfind("cannot read the profile: ", 0), 0u);
}

TEST(PlannerProfile, MatchesTheModel) {
  Profile p = small();
  std::vector<ParameterShape> params = {
      {"a.weight", 513}, {"a.bias", 1}, {"b.weight", 257}, {"b.bias", 1}};
  EXPECT_FALSE(bool(checkProfileMatchesModel(p, params)));
  params[2].numel = 256;
  EXPECT_EQ(llvm::toString(checkProfileMatchesModel(p, params)),
            "layers[2].numel: the profile has 257, the model's parameter 'b.weight' has 256 "
            "elements");
  params[2] = {"b.w", 257};
  EXPECT_EQ(llvm::toString(checkProfileMatchesModel(p, params)),
            "layers[2].name: the profile has 'b.weight', the model's parameter 2 is 'b.w'");
  params.pop_back();
  EXPECT_EQ(llvm::toString(checkProfileMatchesModel(p, params)),
            "layers: the profile has 4 layers, the model has 3 trainable parameters");
}

//===----------------------------------------------------------------------===//
// Cost functions
//===----------------------------------------------------------------------===//

TEST(PlannerCost, TopKInterpolation) {
  Profile p = small(); // (1, 1/16) -- (1025, 1/8)
  p.topkPoints = {{100, 1.0}, {200, 3.0}, {400, 4.0}};
  EXPECT_EQ(p.topkSeconds(1), 1.0);   // below the first point: its time
  EXPECT_EQ(p.topkSeconds(100), 1.0); // at a point
  EXPECT_EQ(p.topkSeconds(150), 2.0); // linear between points
  EXPECT_EQ(p.topkSeconds(200), 3.0);
  EXPECT_EQ(p.topkSeconds(300), 3.5);
  EXPECT_EQ(p.topkSeconds(400), 4.0);
  EXPECT_EQ(p.topkSeconds(600), 5.0); // beyond: the last segment's line
  EXPECT_EQ(p.topkSeconds(1200), 8.0);
  p.topkPoints = {{100, 2.0}};
  EXPECT_EQ(p.topkSeconds(5), 2.0); // one point: constant
  EXPECT_EQ(p.topkSeconds(5000), 2.0);
  p.topkPoints = {{100, 2.0}, {200, 1.0}};
  EXPECT_EQ(p.topkSeconds(300), 0.0); // a falling last segment stops at 0
  EXPECT_EQ(p.topkSeconds(1000), 0.0);
}

// The exact planner walks the top-k curve as its groups grow: every n of a
// non-decreasing sequence gets topkSeconds' value, bit for bit, on every kind
// of curve (points, between, beyond, one point, a falling last segment).
TEST(PlannerCost, TopKWalkEqualsTopKSeconds) {
  Profile p = small();
  const std::vector<std::vector<TopKPoint>> curves = {
      {{100, 1.0}, {200, 3.0}, {400, 4.0}},
      {{100, 2.0}},
      {{100, 2.0}, {200, 1.0}},
      {{1, 1e-5}, {1000, 3e-5}, {100000, 7e-4}, {1000000, 9e-3}}};
  std::mt19937_64 rng(7);
  for (const std::vector<TopKPoint> &curve : curves) {
    p.topkPoints = curve;
    std::vector<int64_t> ns = {1, 100, 150, 200, 200, 300, 400, 401, 600, 1000, 1200, 5000};
    for (int r = 0; r < 200; ++r)
      ns.push_back(std::uniform_int_distribution<int64_t>(1, 3000000)(rng));
    std::sort(ns.begin(), ns.end());
    TopKWalk walk(p);
    for (int64_t n : ns)
      EXPECT_EQ(walk(n), p.topkSeconds(n)) << "n = " << n;
  }
}

// What the exact planner caches (the profile's CollectiveConstants, once;
// per group n, k and the two top-k times, built incrementally as the group
// grows) gives every collective the cost groupCost computes from n directly,
// bit for bit, on model-shaped profiles with and without the collectives' CPU
// time, its cap and measured point-to-point costs.
TEST(PlannerCost, CachedGroupSizesEqualTheDirectCosts) {
  for (uint64_t seed : {11, 12, 13}) {
    Profile p = makeModelShapedProfile(60, seed);
    if (seed == 12)
      p.allgather.cpuPerByte = p.allreduce.cpuPerByte = 2e-9;
    if (seed == 13) {
      p.allgather.cpuPerByte = 3e-9;
      p.allgather.cpuFraction = 0.25;
      p.gtopk = AlphaBeta{1e-5, 2e-9, 1e-9, 0.5, 0.0};
      p.sparseAllreduce = AlphaBeta{2e-5, 1e-9, 0.0, std::nullopt, 1e-10};
    }
    int64_t L = static_cast<int64_t>(p.layers.size());
    const CollectiveConstants constants(p);
    for (int64_t end = L; end > 0; --end) {
      // The group [begin, end) grows as begin falls (backprop order).
      TopKWalk topkOfN(p), topkOf2K(p);
      int64_t n = 0;
      for (int64_t begin = end - 1; begin >= 0; --begin) {
        n += p.layers[begin].numel;
        int64_t k = p.topkK(n);
        GroupSize cached{n, k, topkOfN(n), topkOf2K(2 * k)};
        double backwardAfter = 1e-3 * static_cast<double>(begin);
        for (Collective c : CollectiveSet::all().members()) {
          GroupCost direct = groupCost(p, n, c, backwardAfter);
          GroupCost fromCache = groupCost(constants, cached, c, backwardAfter);
          EXPECT_EQ(fromCache.topk, direct.topk) << stringifyCollective(c).str() << " n = " << n;
          EXPECT_EQ(fromCache.comm, direct.comm) << stringifyCollective(c).str() << " n = " << n;
        }
      }
    }
  }
}

TEST(PlannerCost, CollectiveTimes) {
  Profile p = small();          // P = 2, rho = 1/2
  EXPECT_EQ(p.topkK(1), 1);     // max(1, floor(0.5))
  EXPECT_EQ(p.topkK(3), 1);     // floor(1.5)
  EXPECT_EQ(p.topkK(257), 128); // floor(128.5)
  p.density = 1.0;
  EXPECT_EQ(p.topkK(7), 7);
  p.density = 0.001;
  EXPECT_EQ(p.topkK(999), 1);
  EXPECT_EQ(p.topkK(2500), 2);
  p = small();
  // alpha + beta * 8 * k * P: 1/4 + 2^-12 * 8 * 128 * 2.
  EXPECT_EQ(p.allgatherSeconds(257), 0.75);
  // alpha + beta * 4 * n: 1/2 + 2^-10 * 4 * 256.
  EXPECT_EQ(p.allreduceSeconds(256), 1.5);
}

//===----------------------------------------------------------------------===//
// The pipeline model
//===----------------------------------------------------------------------===//

TEST(PlannerPredict, LayerwiseByHand) {
  // Backprop order b.bias (n 1, t_b 1/16), b.weight (257, 1/4), a.bias (1,
  // 1/16), a.weight (513, 1/2); t_s = 1/16, 5/64, 1/16, 3/32; t_c = 65/256,
  // 3/4, 65/256, 5/4.
  Profile p = small();
  std::vector<GroupTimes> times;
  EXPECT_EQ(predict(p, planLayerwise(p), &times), 693.0 / 256);
  ASSERT_EQ(times.size(), 4u);
  EXPECT_EQ(times[0].topkEnd, 0.125);
  EXPECT_EQ(times[0].commStart, 0.125);
  EXPECT_EQ(times[0].commEnd, 97.0 / 256);
  EXPECT_EQ(times[1].topkEnd, 29.0 / 64);
  EXPECT_EQ(times[1].commStart, 29.0 / 64); // the comm stream waited
  EXPECT_EQ(times[1].commEnd, 77.0 / 64);
  EXPECT_EQ(times[2].topkEnd, 37.0 / 64);
  EXPECT_EQ(times[2].commStart, 77.0 / 64); // the top-k waited
  EXPECT_EQ(times[3].commEnd, 693.0 / 256);
}

TEST(PlannerPredict, MixedCollectivesByHand) {
  Profile p = small();
  // {b.bias} dense: ends 1/16 + 1/2 + 1/256; {b.weight, a.bias, a.weight}
  // sparse: top-k over 771 ends at 7/8 + 1/16 + 770/2^14, then 1/4 + 385/256.
  std::vector<Group> groups = fromSizes(p, {1, 3}, {Collective::AllReduce, Collective::AllGather});
  double topkEnd = 0.875 + (0.0625 + 770.0 / 16384);
  EXPECT_EQ(predict(p, groups), topkEnd + (0.25 + 385.0 / 256));
  // Dense everything as one group: backward, then one allreduce of 772.
  EXPECT_EQ(predict(p, fromSizes(p, {4}, {Collective::AllReduce})), 0.875 + 0.5 + 772.0 / 256);
}

TEST(PlannerPredict, CollectiveComputeTimeByHand) {
  // The groups of MixedCollectivesByHand, now with collectives that take
  // compute time: the dense {b.bias} (4 bytes) delays the compute stream by
  // 4/64, the sparse group's allgather (8 * 385 * 2 = 6160 bytes) by
  // 6160/8192 = 385/512 more before its collective starts.
  Profile p = small();
  p.allreduce.cpuPerByte = 1.0 / 64;
  p.allgather.cpuPerByte = 1.0 / 8192;
  std::vector<Group> groups = fromSizes(p, {1, 3}, {Collective::AllReduce, Collective::AllGather});
  double topkEnd = 0.875 + (0.0625 + 770.0 / 16384);
  EXPECT_EQ(predict(p, groups), topkEnd + 1.0 / 16 + 385.0 / 512 + (0.25 + 385.0 / 256));
  EXPECT_EQ(p.allreduceComputeSeconds(1), 1.0 / 16);
  EXPECT_EQ(p.allgatherComputeSeconds(771), 385.0 / 512);
  // A slow allgather makes auto all-reduce; a dense collective that takes
  // enough compute time makes it gather again.
  p.allgather.cpuPerByte = 0.0;
  p.allreduce.cpuPerByte = 0.0;
  p.allgather.alpha = 10.0;
  Plan cheap = plan(p, *Strategy::parse("auto"));
  p.allreduce.cpuPerByte = 1.0;
  Plan dear = plan(p, *Strategy::parse("auto"));
  auto denseGroups = [](const Plan &pl) {
    return llvm::count_if(pl.groups,
                          [](const Group &g) { return g.collective == Collective::AllReduce; });
  };
  EXPECT_GT(denseGroups(cheap), 0);
  EXPECT_EQ(denseGroups(dear), 0);
}

TEST(PlannerPredict, CpuFractionCapsTheComputeCharge) {
  // The groups of CollectiveComputeTimeByHand. The dense {b.bias} would take
  // 4 s of compute at 1 s a byte, but only half of the 0.8125 s of backward
  // after it runs beside its collective: 0.40625 s. Nothing runs after the
  // last group: its allgather's 385/512 s go.
  Profile p = small();
  p.allreduce.cpuPerByte = 1.0;
  p.allreduce.cpuFraction = 0.5;
  p.allgather.cpuPerByte = 1.0 / 8192;
  p.allgather.cpuFraction = 0.25;
  std::vector<Group> groups = fromSizes(p, {1, 3}, {Collective::AllReduce, Collective::AllGather});
  EXPECT_DOUBLE_EQ(predict(p, groups),
                   0.875 + 0.40625 + (0.0625 + 770.0 / 16384) + (0.25 + 385.0 / 256));
  EXPECT_EQ(groupCost(p, 1, Collective::AllReduce, 0.8125).topk, 0.40625);
  EXPECT_EQ(groupCost(p, 1, Collective::AllReduce, 100.0).topk, 4.0);
  // The global top-k and the sparse all-reduce derive theirs from the
  // allgather's when the profile has no message costs of their own.
  EXPECT_EQ(groupCost(p, 771, Collective::GTopK, 0.0).topk, p.topkSeconds(771));
  p.gtopk = AlphaBeta{1e-3, 1e-6, 1e-3, 0.125};
  EXPECT_EQ(groupCost(p, 771, Collective::GTopK, 1.0).topk, p.topkSeconds(771) + 0.125);
  // Without cpu_fraction nothing is capped (every profile before it).
  p.allreduce.cpuFraction.reset();
  EXPECT_EQ(groupCost(p, 1, Collective::AllReduce, 0.8125).topk, 4.0);
}

TEST(PlannerPredict, OneLayer) {
  Profile p = small();
  p.layers.resize(1); // a.weight alone
  EXPECT_EQ(predict(p, planSingle(p)), 0.5 + 0.09375 + 1.25);
  EXPECT_EQ(sizesOf(planOptimal(p, true, true)), std::vector<int64_t>{1});
}

TEST(PlannerPredict, VerifyGroups) {
  Profile p = small();
  EXPECT_FALSE(bool(verifyGroups(p, fromSizes(p, {2, 2}))));
  EXPECT_EQ(llvm::toString(verifyGroups(p, fromSizes(p, {2, 1}))),
            "groups: layers [0, 1) are in no group");
  std::vector<Group> forward = {{0, 2, Collective::AllGather}, {2, 4, Collective::AllGather}};
  EXPECT_EQ(llvm::toString(verifyGroups(p, forward)),
            "groups[0]: layers [0, 2) do not continue the backprop order (expected a non-empty "
            "range ending at 4)");
}

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

TEST(PlannerStrategy, NamesRoundTrip) {
  for (const Strategy &s : allStrategies()) {
    llvm::Expected<Strategy> back = Strategy::parse(s.name());
    ASSERT_TRUE(bool(back)) << s.name();
    EXPECT_EQ(back->name(), s.name());
  }
  EXPECT_EQ(allStrategies().size(), 10u);
  EXPECT_EQ(Strategy::parse("threshold:4096")->thresholdBytes, 4096);
  EXPECT_EQ(llvm::toString(Strategy::parse("omgs2").takeError()),
            "unknown strategy 'omgs2'; expected one of dense, mgwfbp, single, layerwise, "
            "threshold:BYTES, greedy, omgs, gtopk, sparse-allreduce, auto");
  for (const char *bad : {"threshold:", "threshold:-1", "threshold:0", "threshold:1e6",
                          "threshold:99999999999999999999999"})
    EXPECT_EQ(llvm::toString(Strategy::parse(bad).takeError()),
              "strategy '" + std::string(bad) +
                  "': BYTES must be a positive integer (bytes of float32 gradients per bucket)");
}

// What each strategy is, as the compiler and the tools ask it.
TEST(PlannerStrategy, Traits) {
  struct Row {
    const char *name;
    bool communicates, merged, sparse, perGroup;
  };
  const Row rows[] = {
      {"none", false, false, false, false},    {"dense", true, false, false, false},
      {"mgwfbp", true, true, false, false},    {"single", true, true, true, false},
      {"layerwise", true, false, true, false}, {"threshold:4096", true, true, true, false},
      {"greedy", true, true, true, false},     {"omgs", true, true, true, false},
      {"gtopk", true, true, true, false},      {"sparse-allreduce", true, true, true, false},
      {"auto", true, true, true, true},
  };
  for (const Row &row : rows) {
    llvm::Expected<Strategy> s = Strategy::parseWithNone(row.name);
    ASSERT_TRUE(bool(s)) << row.name;
    EXPECT_EQ(s->name(), row.name);
    EXPECT_EQ(s->communicates(), row.communicates) << row.name;
    EXPECT_EQ(s->isMerged(), row.merged) << row.name;
    EXPECT_EQ(s->isSparse(), row.sparse) << row.name;
    EXPECT_EQ(s->choosesPerGroup(), row.perGroup) << row.name;
    std::string listed = s->kind == StrategyKind::Threshold ? std::string("threshold:BYTES (")
                                                            : std::string(row.name) + " (";
    EXPECT_NE(strategyHelp().find(listed), llvm::StringRef::npos) << row.name;
  }
  // `none` is the compiler's: the planner has no plan for it.
  EXPECT_EQ(llvm::toString(Strategy::parse("none").takeError()),
            "unknown strategy 'none'; expected one of dense, mgwfbp, single, layerwise, "
            "threshold:BYTES, greedy, omgs, gtopk, sparse-allreduce, auto");
  EXPECT_EQ(strategyNames(), "dense, mgwfbp, single, layerwise, threshold:BYTES, greedy, omgs, "
                            "gtopk, sparse-allreduce, auto");
  EXPECT_TRUE(strategyHelp().starts_with(
      "Gradient communication between data-parallel workers: none (the default: one process, "
      "no communication), dense ("));
  // The traits agree with the plans: dense strategies never sparsify, sparse
  // ones without a per-group choice never stay dense, unmerged ones keep one
  // group per layer.
  Profile p = makeModelShapedProfile(30, 3);
  for (const Strategy &s : allStrategies()) {
    Plan plan = mgs::planner::plan(p, s);
    if (!s.isMerged()) {
      EXPECT_EQ(plan.groups.size(), p.layers.size()) << s.name();
    }
    for (const Group &g : plan.groups) {
      if (!s.isSparse()) {
        EXPECT_EQ(g.collective, Collective::AllReduce) << s.name();
      } else if (!s.choosesPerGroup()) {
        EXPECT_EQ(g.collective, namedCollective(s)) << s.name();
      }
    }
  }
}

TEST(PlannerStrategy, GroupingRules) {
  Profile p = makeModelShapedProfile(30, 3);
  int64_t L = 30;
  std::vector<Group> dense = planDense(p), layerwise = planLayerwise(p), single = planSingle(p);
  ASSERT_EQ(dense.size(), size_t(L));
  ASSERT_EQ(layerwise.size(), size_t(L));
  for (int64_t g = 0; g < L; ++g) {
    EXPECT_EQ(dense[g].begin, L - 1 - g); // backprop order
    EXPECT_EQ(dense[g].collective, Collective::AllReduce);
    EXPECT_EQ(layerwise[g].collective, Collective::AllGather);
  }
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].begin, 0);
  EXPECT_EQ(single[0].end, L);
  for (const Strategy &s : allStrategies()) {
    Plan plan = mgs::planner::plan(p, s);
    EXPECT_EQ(plan.strategy, s.name());
    EXPECT_FALSE(bool(verifyGroups(p, plan.groups))) << s.name();
    EXPECT_EQ(plan.predictedSeconds, predict(p, plan.groups));
    bool denseOnly = s.kind == StrategyKind::Dense || s.kind == StrategyKind::MGWFBP;
    bool mixed = s.kind == StrategyKind::Auto;
    for (const Group &g : plan.groups) {
      if (!mixed) {
        EXPECT_EQ(g.collective, denseOnly ? Collective::AllReduce : namedCollective(s))
            << s.name();
      }
    }
  }
}

TEST(PlannerStrategy, ThresholdClosesBucketsAtBytes) {
  Profile p = small(); // backprop bytes: 4, 1028, 4, 2052
  EXPECT_EQ(sizesOf(planThreshold(p, 1032)), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(sizesOf(planThreshold(p, 1033)), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(sizesOf(planThreshold(p, 4)), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(sizesOf(planThreshold(p, 5)), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(sizesOf(planThreshold(p, 1 << 30)), (std::vector<int64_t>{4}));
}

TEST(PlannerStrategy, GreedyMergesWhenTheStartUpDominates) {
  Profile p = small();
  // Collectives that cost only a start-up: merging always saves one and the
  // waits are short.
  p.allgather = {10.0, 0.0};
  EXPECT_EQ(sizesOf(planGreedy(p)), (std::vector<int64_t>{4}));
  // Free collectives and expensive merged top-k: never merge.
  p.allgather = {0.0, 0.0};
  p.topkPoints = {{1, 0.0}, {2, 100.0}};
  EXPECT_EQ(sizesOf(planGreedy(p)), (std::vector<int64_t>{1, 1, 1, 1}));
  // The small profile: a.bias joins b's group, a.weight does not.
  EXPECT_EQ(sizesOf(planGreedy(small())), (std::vector<int64_t>{3, 1}));
}

TEST(PlannerStrategy, SmallProfilePlans) {
  Profile p = small();
  EXPECT_EQ(plan(p, {StrategyKind::OMGS, 0}).predictedSeconds, 2.39849853515625);
  EXPECT_EQ(sizesOf(planOptimal(p, true, false)), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(plan(p, {StrategyKind::Greedy, 0}).predictedSeconds, 2.4571533203125);
  EXPECT_EQ(plan(p, {StrategyKind::MGWFBP, 0}).predictedSeconds, 4.328125);
  p.allreduce.alpha = 0.125;
  Plan autoPlan = plan(p, {StrategyKind::Auto, 0});
  EXPECT_EQ(autoPlan.predictedSeconds, 2.39453125);
  ASSERT_EQ(autoPlan.groups.size(), 3u);
  EXPECT_EQ(autoPlan.groups[0].collective, Collective::AllReduce);
}

//===----------------------------------------------------------------------===//
// The exact planner against brute force
//===----------------------------------------------------------------------===//

struct BruteForceCase {
  int family;
  const char *name;
};
void PrintTo(const BruteForceCase &c, std::ostream *os) { *os << c.name; }

class PlannerExact : public ::testing::TestWithParam<BruteForceCase> {};

// omgs, mgwfbp and auto equal the least predict() over every grouping, for
// L = 1..12 and many random profiles of each family.
TEST_P(PlannerExact, EqualsBruteForce) {
  std::mt19937_64 rng(1234 + GetParam().family);
  int checked = 0;
  for (int64_t L = 1; L <= 12; ++L) {
    int profiles = L <= 8 ? 40 : 12;
    for (int t = 0; t < profiles; ++t) {
      Profile p = randomProfile(rng, L, GetParam().family);
      ASSERT_FALSE(bool(p.validate()));
      for (auto [sparse, dense] : {std::pair{true, false}, {false, true}, {true, true}}) {
        double expected = bruteForce(p, sparse, dense);
        double got = predict(p, planOptimal(p, sparse, dense));
        ASSERT_TRUE(sameCost(got, expected))
            << "L=" << L << " profile " << t << " sparse=" << sparse << " dense=" << dense
            << ": planner " << got << ", brute force " << expected;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * (8 * 40 + 4 * 12));
}

// The same with search knobs shrunk to force every escalation path (one
// bucket, no label budget) up to the unbounded last run.
TEST_P(PlannerExact, EqualsBruteForceWhenEscalating) {
  std::mt19937_64 rng(99 + GetParam().family);
  OptimalTuning tiny{/*firstBuckets=*/1, /*bucketGrowth=*/2, /*lastBuckets=*/4,
                     /*labelBudgetPerLayer=*/0};
  tiny.certifyByBounds = false; // the search itself at every level
  size_t escalated = 0;
  for (int64_t L = 6; L <= 12; ++L)
    for (int t = 0; t < 10; ++t) {
      Profile p = randomProfile(rng, L, GetParam().family);
      for (auto [sparse, dense] : {std::pair{true, false}, {true, true}}) {
        OptimalStats stats;
        double got = predict(p, planOptimal(p, sparse, dense, &stats, tiny));
        escalated += stats.attempts == 3 && stats.buckets == 4;
        ASSERT_TRUE(sameCost(got, bruteForce(p, sparse, dense))) << "L=" << L << " t=" << t;
      }
    }
  EXPECT_EQ(escalated, 7u * 10 * 2);
}

// With a gap the result is within it of brute force's optimum, and exact
// whenever the planner says so (stats.gap == 0). The knobs force the search
// with the gap from the first level (exactAttempts 0) or after one over-budget
// exact level, with and without the certification by bounds.
TEST_P(PlannerExact, GapIsCertified) {
  std::mt19937_64 rng(4321 + GetParam().family);
  size_t withinGap = 0, exact = 0, certified = 0;
  for (int64_t L = 4; L <= 10; ++L)
    for (int t = 0; t < 10; ++t) {
      Profile p = randomProfile(rng, L, GetParam().family);
      for (auto [sparse, dense] : {std::pair{true, false}, {true, true}}) {
        double opt = bruteForce(p, sparse, dense);
        for (double gap : {1e-3, 0.05, 0.3})
          for (size_t exactAttempts : {0, 1})
            for (bool byBounds : {false, true}) {
              OptimalTuning tuning{/*firstBuckets=*/1, /*bucketGrowth=*/2, /*lastBuckets=*/4,
                                   /*labelBudgetPerLayer=*/0};
              tuning.relativeGap = gap;
              tuning.exactAttempts = exactAttempts;
              tuning.certifyByBounds = byBounds;
              OptimalStats stats;
              double got = predict(p, planOptimal(p, sparse, dense, &stats, tuning));
              ASSERT_TRUE(stats.gap == 0.0 || stats.gap == gap) << stats.gap;
              ASSERT_LE(got, opt / (1.0 - stats.gap) * (1.0 + 1e-12))
                  << "L=" << L << " t=" << t << " gap " << gap;
              ASSERT_FALSE(stats.returnedHeuristic);
              if (stats.gap == 0.0) {
                ASSERT_TRUE(sameCost(got, opt)) << "L=" << L << " t=" << t;
                ++exact;
              } else {
                ++withinGap;
              }
              certified += stats.certifiedByBounds;
            }
      }
    }
  // Both outcomes and the certification happen (the knobs are not vacuous).
  EXPECT_GT(withinGap, 0u);
  EXPECT_GT(exact, 0u);
  EXPECT_GT(certified, 0u);
}

// The certification by the simple bounds alone, before any bucket level
// (stats.attempts == 0): whenever it fires the plan is brute force's optimum,
// and it does fire (on comm-bound profiles, where max(minComm[0], minRest[0])
// is the optimum and the heuristic guided by it finds that plan).
TEST(PlannerExact, SimpleBoundsCertifyTheOptimum) {
  size_t early = 0, checked = 0;
  for (int family = 0; family < 3; ++family) {
    std::mt19937_64 rng(777 + family);
    for (int64_t L = 1; L <= 10; ++L)
      for (int t = 0; t < 12; ++t) {
        Profile p = randomProfile(rng, L, family);
        for (auto [sparse, dense] : {std::pair{true, false}, {false, true}, {true, true}}) {
          OptimalStats stats;
          double got = predict(p, planOptimal(p, sparse, dense, &stats));
          if (!stats.certifiedByBounds || stats.attempts != 0)
            continue;
          ++early;
          ASSERT_EQ(stats.buckets, 0u);
          ASSERT_TRUE(sameCost(got, bruteForce(p, sparse, dense)))
              << "family " << family << " L=" << L << " t=" << t << " sparse=" << sparse
              << " dense=" << dense;
        }
        ++checked;
      }
  }
  EXPECT_EQ(checked, 3u * 10 * 12);
  EXPECT_GT(early, 0u);
}

INSTANTIATE_TEST_SUITE_P(Families, PlannerExact,
                         ::testing::Values(BruteForceCase{0, "ModelShaped"},
                                           BruteForceCase{1, "Generic"},
                                           BruteForceCase{2, "Degenerate"}),
                         [](const auto &info) { return std::string(info.param.name); });

// Beyond brute force: the planner with its default bounds and with the
// weakest ones (one bucket, no label budget: the escalation ends with only 4
// buckets) finds the same optimum.
TEST(PlannerExact, WeakAndStrongBoundsAgree) {
  std::mt19937_64 rng(11);
  OptimalTuning weak{/*firstBuckets=*/1, /*bucketGrowth=*/4, /*lastBuckets=*/4,
                     /*labelBudgetPerLayer=*/0};
  for (int t = 0; t < 60; ++t) {
    int64_t L = 16 + static_cast<int64_t>(rng() % 100);
    Profile p = randomProfile(rng, L, t % 3);
    for (auto [sparse, dense] : {std::pair{true, false}, {false, true}, {true, true}}) {
      double strong = predict(p, planOptimal(p, sparse, dense));
      double weakCost = predict(p, planOptimal(p, sparse, dense, nullptr, weak));
      EXPECT_TRUE(sameCost(strong, weakCost))
          << "L=" << L << " t=" << t << ": " << strong << " vs " << weakCost;
    }
  }
}

// On larger profiles: the exact plans are never beaten by the heuristics,
// auto by nothing sparse or dense.
TEST(PlannerExact, NeverWorseThanHeuristics) {
  std::mt19937_64 rng(5);
  for (int t = 0; t < 40; ++t) {
    bool modelShaped = t % 2 == 0;
    int64_t L = modelShaped ? 20 + static_cast<int64_t>(rng() % 180)
                            : 13 + static_cast<int64_t>(rng() % 40);
    Profile p = randomProfile(rng, L, modelShaped ? 0 : 1);
    double omgs = predict(p, planOptimal(p, true, false));
    double autoCost = predict(p, planOptimal(p, true, true));
    double mgwfbp = predict(p, planOptimal(p, false, true));
    double slack = 1e-12 * omgs;
    EXPECT_LE(omgs, predict(p, planGreedy(p)) + slack);
    EXPECT_LE(omgs, predict(p, planSingle(p)) + slack);
    EXPECT_LE(omgs, predict(p, planLayerwise(p)) + slack);
    EXPECT_LE(omgs, predict(p, planThreshold(p, 1 << 20)) + slack);
    EXPECT_LE(mgwfbp, predict(p, planDense(p)) + slack);
    EXPECT_LE(autoCost, omgs + slack);
    EXPECT_LE(autoCost, mgwfbp + slack);
  }
}

// The paper's greedy rule is not optimal: on model-shaped profiles it is
// above omgs on a good share of them.
TEST(PlannerExact, GreedyIsNotOptimal) {
  int worse = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Profile p = makeModelShapedProfile(65, seed);
    double greedy = predict(p, planGreedy(p));
    double omgs = predict(p, planOptimal(p, true, false));
    EXPECT_GE(greedy, omgs * (1 - 1e-12));
    worse += greedy > omgs * (1 + 1e-9);
  }
  EXPECT_GE(worse, 10);
}

//===----------------------------------------------------------------------===//
// The global top-k and the balanced sparse all-reduce
//===----------------------------------------------------------------------===//

TEST(PlannerCollectives, GlobalTopKRounds) {
  // Powers of two: log2 P butterfly rounds, a merge each; otherwise the
  // fold and the unfold add a round each, and the fold a merge.
  const std::pair<int64_t, std::pair<int64_t, int64_t>> rows[] = {
      {1, {0, 0}}, {2, {1, 1}}, {3, {3, 2}},   {4, {2, 2}},    {5, {4, 3}},
      {7, {4, 3}}, {8, {3, 3}}, {9, {5, 4}},   {1024, {10, 10}}, {1025, {12, 11}},
      {4096, {12, 12}}};
  for (auto [p, rm] : rows) {
    EXPECT_EQ(Profile::gtopkRounds(p), rm.first) << p;
    EXPECT_EQ(Profile::gtopkMerges(p), rm.second) << p;
  }
}

TEST(PlannerCollectives, PointToPointDerivedFromTheAllGather) {
  Profile p = small(); // measured on P_c = 2: a_p = alpha, b_p = 2 beta
  AlphaBeta ab = p.pointToPoint(p.gtopk);
  EXPECT_EQ(ab.alpha, 0.25);
  EXPECT_EQ(ab.beta, 2 * 0.000244140625);
  p.workers = 64; // planning for another P keeps the measured P_c
  EXPECT_EQ(p.pointToPoint(std::nullopt).alpha, 0.25);
  p.measuredWorkers = 5; // ring of 5: alpha / 4, beta * 5 / 4
  EXPECT_EQ(p.pointToPoint(std::nullopt).alpha, 0.0625);
  EXPECT_EQ(p.pointToPoint(std::nullopt).beta, 0.00030517578125);
  p.measuredWorkers = 1; // one worker: the fit itself
  EXPECT_EQ(p.pointToPoint(std::nullopt).alpha, 0.25);
  AlphaBeta measured{1.0, 2.0, 3.0};
  EXPECT_EQ(p.pointToPoint(measured).beta, 2.0);
}

TEST(PlannerCollectives, CostsByHand) {
  Profile p = small(); // rho = 1/2; t_s(n) = 1/16 + (n - 1) / 2^14
  p.gtopk = AlphaBeta{0.5, 0.0078125, 0.0};
  p.sparseAllreduce = AlphaBeta{0.25, 0.00390625, 0.0};
  p.workers = 4;
  // n = 257, k = 128: 2 rounds of (1/2 + 8 * 128 / 128) + 2 merges of t_s(256).
  EXPECT_EQ(p.gtopkSeconds(257), 2 * (0.5 + 8.0) + 2 * (0.0625 + 255.0 / 16384));
  // sparse all-reduce, P = 4, k = 128, n = 257: boundaries in 2 messages of
  // 8 * 3 bytes; 3 reduce messages of 8 * 128 / 4 = 256 bytes; the gather in
  // ceil(log2 4) = 2 messages, 3 regions of min(1024, 1028 / 4 = 257) = 257
  // bytes (dense: the union would be larger).
  EXPECT_EQ(p.sparseAllreduceSeconds(257),
            (2 + 3 + 2) * 0.25 + (2 * 24 + 3 * 256 + 3 * 257) * 0.00390625);
  // A group so sparse that no region fills: sparse both ways.
  p.density = 0.001;
  p.workers = 2; // k = 4 of n = 4000: 1 + 1 + 1 messages of 8, 16 and 32 bytes
  EXPECT_EQ(p.sparseAllreduceSeconds(4000), 3 * 0.25 + (8 + 16 + 32) * 0.00390625);
  // P = 5: the boundaries fold like the global top-k (4 messages), the
  // gather takes 3.
  p.workers = 5; // k = 4: 4 * 8 * 4 + 4 * (32 / 5 + 32) bytes
  EXPECT_EQ(p.sparseAllreduceSeconds(4000),
            (4 + 4 + 3) * 0.25 + (4 * 32 + 4 * (32.0 / 5 + 32)) * 0.00390625);
  // One worker: nothing to exchange.
  p.workers = 1;
  EXPECT_EQ(p.gtopkSeconds(4000), 0.0);
  EXPECT_EQ(p.sparseAllreduceSeconds(4000), 0.0);
  // Their compute-stream share: cpu_per_byte times the received bytes.
  p.workers = 4;
  p.gtopk->cpuPerByte = 1.0;
  EXPECT_EQ(p.gtopkComputeSeconds(4000), 2 * 8 * 4.0);
}

TEST(PlannerCollectives, OptionalProfileKeys) {
  Profile p = small();
  EXPECT_FALSE(p.gtopk.has_value());
  EXPECT_FALSE(p.sparseAllreduce.has_value());
  EXPECT_EQ(p.measuredWorkers, 2);
  std::string json = smallWith(R"("layers")", R"("gtopk": {"alpha": 1e-5, "beta": 2e-9},
      "sparse_allreduce": {"alpha": 3e-5, "beta": 4e-9, "cpu_per_byte": 1e-10}, "layers")");
  llvm::Expected<Profile> q = parseProfile(json);
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->gtopk->alpha, 1e-5);
  EXPECT_EQ(q->sparseAllreduce->cpuPerByte, 1e-10);
  llvm::Expected<Profile> back = parseProfile(llvm::formatv("{0}", profileToJSON(*q)).str());
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(back->sparseAllreduce->beta, 4e-9);
  EXPECT_EQ(parseError(smallWith(R"("layers")", R"("gtopk": {"alpha": -1, "beta": 0}, "layers")")),
            "gtopk.alpha: expected a non-negative number of seconds, got -1");
  EXPECT_EQ(parseError(smallWith(R"("layers")", R"("sparse_allreduce": 3, "layers")")),
            "sparse_allreduce: expected an object, got 3");
  EXPECT_EQ(parseError(smallWith(R"("layers")", R"("gtopk": {"alpha": 1}, "layers")")),
            "gtopk.beta: missing field");
}

/// The least predict() over every contiguous grouping and every choice of
/// an allowed collective for each group.
double bruteForceOver(const Profile &p, CollectiveSet allowed) {
  llvm::SmallVector<Collective, 4> cs = allowed.members();
  int64_t L = static_cast<int64_t>(p.layers.size());
  double best = INFINITY;
  for (uint32_t cuts = 0; cuts < (1u << (L - 1)); ++cuts) {
    std::vector<int64_t> sizes;
    int64_t run = 0;
    for (int64_t q = 0; q < L; ++q)
      if (++run, q == L - 1 || (cuts >> q & 1)) {
        sizes.push_back(run);
        run = 0;
      }
    uint64_t choices = 1;
    for (size_t g = 0; g < sizes.size(); ++g)
      choices *= cs.size();
    for (uint64_t pick = 0; pick < choices; ++pick) {
      std::vector<Collective> chosen;
      for (uint64_t rest = pick, g = 0; g < sizes.size(); ++g, rest /= cs.size())
        chosen.push_back(cs[rest % cs.size()]);
      best = std::min(best, predict(p, fromSizes(p, sizes, chosen)));
    }
  }
  return best;
}

/// A random profile with P anywhere in 1..4096 (powers of two and not) and,
/// for some, measured point-to-point costs of the new collectives.
Profile randomWideProfile(std::mt19937_64 &rng, int64_t layers, int family) {
  Profile p = randomProfile(rng, layers, family);
  const int64_t ps[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 33, 64, 100, 256, 1000, 4096};
  p.workers = ps[rng() % std::size(ps)];
  p.measuredWorkers = 1 + static_cast<int64_t>(rng() % 32);
  auto draw = [&]() -> std::optional<AlphaBeta> {
    if (rng() % 2)
      return std::nullopt;
    double scale = std::exp(std::uniform_real_distribution<double>(-3, 3)(rng));
    return AlphaBeta{p.allgather.alpha * scale / 10, p.allgather.beta * scale, 0.0};
  };
  p.gtopk = draw();
  p.sparseAllreduce = draw();
  return p;
}

// Every grouping and every per-group choice among the four collectives, for
// L = 1..7, equals the exact planner; each collective is somewhere optimal.
TEST_P(PlannerExact, FourCollectivesEqualBruteForce) {
  std::mt19937_64 rng(4242 + GetParam().family);
  std::map<Collective, int> chosen;
  int checked = 0;
  for (int64_t L = 1; L <= 7; ++L)
    for (int t = 0; t < (L <= 5 ? 30 : 8); ++t) {
      Profile p = randomWideProfile(rng, L, GetParam().family);
      ASSERT_FALSE(bool(p.validate()));
      for (CollectiveSet allowed :
           {CollectiveSet::all(), CollectiveSet{Collective::GTopK},
            CollectiveSet{Collective::SparseAllReduce},
            CollectiveSet{Collective::GTopK, Collective::AllReduce}}) {
        std::vector<Group> groups = planOptimal(p, allowed);
        double got = predict(p, groups), expected = bruteForceOver(p, allowed);
        ASSERT_TRUE(sameCost(got, expected))
            << "L=" << L << " profile " << t << ": planner " << got << ", brute force "
            << expected;
        for (const Group &g : groups) {
          ASSERT_TRUE(allowed.contains(g.collective));
          chosen[g.collective] += allowed.members().size() == 4;
        }
        ++checked;
      }
    }
  EXPECT_EQ(checked, 4 * (5 * 30 + 2 * 8));
  if (GetParam().family != 2) { // the degenerate family has P <= 4 costs and ties
    for (Collective c : CollectiveSet::all().members())
      EXPECT_GT(chosen[c], 0) << stringifyCollective(c).str();
  }
}

double paretoOptimum(const Profile &p, CollectiveSet allowed);

// With every collective's CPU charge capped by its cpu_fraction of the
// backward after the group, the exact planner still equals brute force over
// every grouping and per-group choice, and the plain Pareto DP.
TEST_P(PlannerExact, CappedCpuEqualsBruteForce) {
  std::mt19937_64 rng(5151 + GetParam().family);
  int checked = 0, capped = 0;
  for (int64_t L = 1; L <= 6; ++L)
    for (int t = 0; t < 12; ++t) {
      Profile p = randomWideProfile(rng, L, GetParam().family);
      std::uniform_real_distribution<double> unit(0.0, 1.0);
      for (AlphaBeta *ab : {&p.allgather, &p.allreduce}) {
        ab->cpuPerByte = ab->beta * 2 * unit(rng);
        ab->cpuFraction = unit(rng);
      }
      for (std::optional<AlphaBeta> *ab : {&p.gtopk, &p.sparseAllreduce})
        if (*ab) {
          (*ab)->cpuPerByte = (*ab)->beta * unit(rng);
          (*ab)->cpuFraction = unit(rng);
        }
      ASSERT_FALSE(bool(p.validate()));
      double total = 0;
      for (const LayerProfile &l : p.layers)
        total += l.backward;
      capped += p.allreduceComputeSeconds(p.layers[0].numel) > *p.allreduce.cpuFraction * total;
      for (CollectiveSet allowed : {CollectiveSet::all(), CollectiveSet{Collective::AllReduce},
                                    CollectiveSet{Collective::AllGather, Collective::GTopK}}) {
        double got = predict(p, planOptimal(p, allowed)), expected = bruteForceOver(p, allowed);
        ASSERT_TRUE(sameCost(got, expected))
            << "L=" << L << " profile " << t << ": planner " << got << ", brute force "
            << expected;
        ASSERT_TRUE(sameCost(got, paretoOptimum(p, allowed))) << "L=" << L << " profile " << t;
        ++checked;
      }
    }
  EXPECT_EQ(checked, 3 * 6 * 12);
  if (GetParam().family != 2) {
    EXPECT_GT(capped, 0);
  }
}

// auto over four collectives is never worse than over any subset.
TEST(PlannerExact, AutoNeverWorseThanEachCollective) {
  std::mt19937_64 rng(77);
  for (int t = 0; t < 30; ++t) {
    int64_t L = 13 + static_cast<int64_t>(rng() % 100);
    Profile p = randomWideProfile(rng, L, t % 2);
    double all = predict(p, planOptimal(p, CollectiveSet::all()));
    for (Collective c : CollectiveSet::all().members())
      EXPECT_LE(all, predict(p, planOptimal(p, {c})) * (1 + 1e-12)) << t;
    EXPECT_LE(all, predict(p, planOptimal(p, true, true)) * (1 + 1e-12)) << t;
  }
}

/// The least predict() by the plain Pareto DP over (top-k time, end of the
/// last collective) with no bounds and no pruning but dominance: every
/// grouping of [0, i) and every collective per group is matched by a label
/// of boundary i. Slow (every label extended by every group) but simple.
double paretoOptimum(const Profile &p, CollectiveSet allowed) {
  int64_t L = static_cast<int64_t>(p.layers.size());
  std::vector<int64_t> prefixNumel(L + 1, 0);
  std::vector<double> prefixBackward(L + 1, 0.0);
  for (int64_t i = 0; i < L; ++i) { // backprop order
    prefixNumel[i + 1] = prefixNumel[i] + p.layers[L - 1 - i].numel;
    prefixBackward[i + 1] = prefixBackward[i] + p.layers[L - 1 - i].backward;
  }
  // front[i]: (X, Y) labels, X ascending and Y descending.
  std::vector<std::vector<std::pair<double, double>>> front(L + 1);
  front[0] = {{0.0, 0.0}};
  for (int64_t i = 1; i <= L; ++i) {
    std::vector<std::pair<double, double>> all;
    for (int64_t j = 0; j < i; ++j)
      for (Collective c : allowed.members()) {
        auto [s, comm] = groupCost(p, prefixNumel[i] - prefixNumel[j], c,
                                    prefixBackward[L] - prefixBackward[i]);
        for (auto [x, y] : front[j]) {
          double nx = x + s;
          all.push_back({nx, std::max(y, prefixBackward[i] + nx) + comm});
        }
      }
    std::sort(all.begin(), all.end());
    for (auto [x, y] : all)
      if (front[i].empty() || y < front[i].back().second)
        front[i].push_back({x, y});
  }
  return front[L].back().second;
}

// The exact planner with its bounds, prunings and escalations gives the
// same cost as the plain Pareto DP on the planner benchmark's profiles
// (bench/planner_bench draws seeds 1000..1029) at L = 60, for omgs, auto
// over all four collectives and auto over the all-gather and the all-reduce.
TEST(PlannerExact, FastEqualsPlainParetoOnBenchProfiles) {
  const CollectiveSet sets[] = {{Collective::AllGather},
                                CollectiveSet::all(),
                                {Collective::AllGather, Collective::AllReduce}};
  for (uint64_t seed = 1000; seed < 1030; seed += 3) {
    Profile p = makeModelShapedProfile(60, seed);
    for (CollectiveSet allowed : sets) {
      double fast = predict(p, planOptimal(p, allowed));
      double slow = paretoOptimum(p, allowed);
      EXPECT_TRUE(sameCost(fast, slow))
          << "seed " << seed << ": planner " << fast << ", Pareto DP " << slow;
    }
  }
}

/// A model-shaped profile whose dense and sparse groups trade start-up for
/// start-up exactly: every collective's start-up equals the top-k launch
/// time (the all-reduce's is twice it), the top-k time is the launch alone
/// and, when `noBandwidth`, the links cost nothing per byte, so that very
/// many groupings tie exactly (dyadic times: sums are exact).
Profile tiedStartUpProfile(int64_t layers, uint64_t seed, bool noBandwidth) {
  Profile p = makeModelShapedProfile(layers, seed);
  double launch = std::ldexp(1.0, -14 - static_cast<int>(seed % 4));
  p.topkPoints = {{1, launch}, {int64_t(1) << 32, launch}};
  p.allgather.alpha = launch;
  p.allreduce.alpha = 2 * launch;
  if (noBandwidth)
    p.allgather.beta = p.allreduce.beta = 0.0;
  for (LayerProfile &layer : p.layers) // dyadic backward times
    layer.backward = std::ldexp(std::round(std::ldexp(layer.backward, 20)), -20);
  return p;
}

// Every pruning rule (suffix bounds, the wider dominance rules, the label
// budget's escalations) keeps an optimal plan: the fast search equals the
// plain Pareto DP on all 30 benchmark seeds at L = 40 and on profiles where
// the start-up costs equal the top-k launch time (near and exact ties), with
// the default search knobs and with knobs shrunk to take every escalation.
TEST(PlannerExact, PruningKeepsTheOptimum) {
  const CollectiveSet sets[] = {{Collective::AllGather},
                                CollectiveSet::all(),
                                {Collective::AllGather, Collective::AllReduce}};
  OptimalTuning tiny{/*firstBuckets=*/1, /*bucketGrowth=*/2, /*lastBuckets=*/8,
                     /*labelBudgetPerLayer=*/0};
  tiny.certifyByBounds = false; // the exact search on every profile
  std::vector<std::pair<std::string, Profile>> profiles;
  for (uint64_t seed = 1000; seed < 1030; ++seed)
    profiles.push_back({llvm::formatv("bench seed {0}", seed).str(),
                        makeModelShapedProfile(40, seed)});
  for (uint64_t seed = 0; seed < 8; ++seed)
    for (bool noBandwidth : {false, true})
      profiles.push_back({llvm::formatv("tied seed {0} noBandwidth {1}", seed, noBandwidth).str(),
                          tiedStartUpProfile(30, seed, noBandwidth)});
  size_t certified = 0;
  for (const auto &[name, p] : profiles) {
    ASSERT_FALSE(bool(p.validate())) << name;
    for (CollectiveSet allowed : sets) {
      double slow = paretoOptimum(p, allowed);
      OptimalStats stats, tinyStats;
      double fast = predict(p, planOptimal(p, allowed, &stats));
      double escalated = predict(p, planOptimal(p, allowed, &tinyStats, tiny));
      EXPECT_TRUE(sameCost(fast, slow)) << name << ": planner " << fast << ", Pareto DP " << slow;
      EXPECT_TRUE(sameCost(escalated, slow))
          << name << ": escalating planner " << escalated << ", Pareto DP " << slow;
      // The exact search itself kept an optimal plan (the heuristics' plan,
      // its fallback, may be optimal and hide a cut).
      EXPECT_FALSE(stats.returnedHeuristic) << name;
      EXPECT_FALSE(tinyStats.returnedHeuristic) << name;
      EXPECT_FALSE(tinyStats.certifiedByBounds) << name;
      EXPECT_EQ(stats.gap, 0.0) << name;
      certified += stats.certifiedByBounds;
    }
  }
  // The bounds alone settle some of these profiles (each checked above).
  EXPECT_GT(certified, 0u);
}

/// The last level's test profiles: the benchmark seeds at L = 40 and the
/// tied start-up profiles, half of them without bandwidth costs.
std::vector<std::pair<std::string, Profile>> lastLevelProfiles() {
  std::vector<std::pair<std::string, Profile>> profiles;
  for (uint64_t seed = 1000; seed < 1030; ++seed)
    profiles.push_back({llvm::formatv("bench seed {0}", seed).str(),
                        makeModelShapedProfile(40, seed)});
  for (uint64_t seed = 0; seed < 8; ++seed)
    profiles.push_back({llvm::formatv("tied seed {0}", seed).str(),
                        tiedStartUpProfile(30, seed, seed % 2 == 0)});
  return profiles;
}

// The last level's windowed suffix bounds (a prefix frontier narrows each
// boundary's bucket range and drops the suffix points no prefix corner can be
// followed by) keep an optimal plan: with knobs shrunk so that every profile
// reaches the last level after overflowing the others, the search with the
// windows equals the plain Pareto DP and the search without them, on the
// benchmark seeds at L = 40 and on the tied start-up profiles; and the
// windows do drop points.
TEST(PlannerExact, WindowedLastLevelKeepsTheOptimum) {
  const CollectiveSet sets[] = {CollectiveSet::all(),
                                {Collective::AllGather, Collective::AllReduce}};
  OptimalTuning windowed{/*firstBuckets=*/1, /*bucketGrowth=*/2, /*lastBuckets=*/8,
                         /*labelBudgetPerLayer=*/0};
  windowed.certifyByBounds = false;
  OptimalTuning plain = windowed;
  plain.windowedLastLevel = false;
  std::vector<std::pair<std::string, Profile>> profiles = lastLevelProfiles();
  size_t drops = 0;
  for (const auto &[name, p] : profiles) {
    for (CollectiveSet allowed : sets) {
      OptimalStats stats, plainStats;
      double got = predict(p, planOptimal(p, allowed, &stats, windowed));
      double without = predict(p, planOptimal(p, allowed, &plainStats, plain));
      double slow = paretoOptimum(p, allowed);
      EXPECT_TRUE(sameCost(got, slow)) << name << ": windowed " << got << ", Pareto DP " << slow;
      EXPECT_TRUE(sameCost(without, slow)) << name << ": plain " << without;
      EXPECT_TRUE(stats.windowed) << name;
      EXPECT_FALSE(plainStats.windowed) << name;
      EXPECT_FALSE(stats.returnedHeuristic) << name;
      drops += stats.windowDrops;
    }
  }
  EXPECT_GT(drops, 0u);
}

// The windowed level's exact frontiers (boundaries keeping their suffix
// points themselves instead of bucket corners) keep an optimal plan: with
// every profile sent to the last level, the search equals the plain Pareto DP
// with them on every boundary, with them on the last few only (a cap of two
// points: the rest fall back to buckets) and without them; and a bound that
// loses nothing is tight: where every boundary kept its points and the
// certificate is allowed, the guided heuristic's plan is certified.
TEST(PlannerExact, ExactFrontierKeepsTheOptimum) {
  const CollectiveSet sets[] = {CollectiveSet::all(),
                                {Collective::AllGather, Collective::AllReduce}};
  OptimalTuning exact{/*firstBuckets=*/1, /*bucketGrowth=*/2, /*lastBuckets=*/8,
                      /*labelBudgetPerLayer=*/0};
  exact.certifyByBounds = false;
  OptimalTuning capped = exact, none = exact, certifying = exact;
  capped.exactFrontierPoints = 2;
  none.exactFrontierPoints = 0;
  certifying.certifyByBounds = true;
  std::vector<std::pair<std::string, Profile>> profiles = lastLevelProfiles();
  size_t exactRuns = 0, cappedFallbacks = 0, certifiedExact = 0, reachedExact = 0;
  for (const auto &[name, p] : profiles) {
    for (CollectiveSet allowed : sets) {
      OptimalStats stats, cappedStats, noneStats, certStats;
      double slow = paretoOptimum(p, allowed);
      double got = predict(p, planOptimal(p, allowed, &stats, exact));
      double mixed = predict(p, planOptimal(p, allowed, &cappedStats, capped));
      double without = predict(p, planOptimal(p, allowed, &noneStats, none));
      double certified = predict(p, planOptimal(p, allowed, &certStats, certifying));
      EXPECT_TRUE(sameCost(got, slow)) << name << ": exact frontier " << got << ", Pareto DP "
                                       << slow;
      EXPECT_TRUE(sameCost(mixed, slow)) << name << ": capped " << mixed;
      EXPECT_TRUE(sameCost(without, slow)) << name << ": without " << without;
      EXPECT_TRUE(sameCost(certified, slow)) << name << ": certifying " << certified;
      EXPECT_FALSE(stats.returnedHeuristic) << name;
      EXPECT_FALSE(cappedStats.returnedHeuristic) << name;
      EXPECT_FALSE(noneStats.exactFrontier) << name;
      exactRuns += stats.exactFrontier;
      cappedFallbacks += cappedStats.windowed && !cappedStats.exactFrontier;
      if (certStats.windowed && certStats.exactFrontier) {
        ++reachedExact;
        certifiedExact += certStats.certifiedByBounds;
      }
    }
  }
  EXPECT_GT(exactRuns, 0u);
  EXPECT_GT(cappedFallbacks, 0u);
  EXPECT_GT(reachedExact, 0u);
  EXPECT_EQ(certifiedExact, reachedExact);
}

// Past the last level's label budget the search returns the best grouping
// known with the gap its bounds certify: with coarse bounds and a budget of
// one label a layer, some profiles overflow it, and each result is then within
// its gap of the Pareto DP's optimum (and never below it); the others are the
// optimum. The same with a gap allowed (the last level then tries the search
// with the gap before giving up, and a result over budget is certified within
// at least that gap) and with the windowed last level.
TEST(PlannerExact, OverBudgetReturnsACertifiedGap) {
  const CollectiveSet sets[] = {CollectiveSet::all(),
                                {Collective::AllGather, Collective::AllReduce}};
  // Coarse bounds (two buckets, no windows) leave the search many labels.
  OptimalTuning tight{/*firstBuckets=*/1, /*bucketGrowth=*/2, /*lastBuckets=*/2,
                      /*labelBudgetPerLayer=*/0};
  tight.certifyByBounds = false;
  tight.windowedLastLevel = false;
  tight.lastLevelLabelsPerLayer = 1;
  OptimalTuning withGap = tight, windowed = tight;
  withGap.relativeGap = 1e-3;
  withGap.exactAttempts = 8; // the exact search first, then the gap's
  windowed.lastBuckets = 8;
  windowed.windowedLastLevel = true;
  struct Case {
    const char *what;
    OptimalTuning tuning;
    size_t over = 0, within = 0;
  } cases[] = {{"plain", tight}, {"gap", withGap}, {"windowed", windowed}};
  std::vector<std::pair<std::string, Profile>> profiles = lastLevelProfiles();
  for (Case &c : cases) {
    for (const auto &[name, p] : profiles) {
      for (CollectiveSet allowed : sets) {
        OptimalStats stats;
        double got = predict(p, planOptimal(p, allowed, &stats, c.tuning));
        double slow = paretoOptimum(p, allowed);
        std::string where = std::string(c.what) + " " + name;
        EXPECT_FALSE(stats.returnedHeuristic) << where;
        EXPECT_GE(got, slow * (1.0 - 1e-12)) << where;
        EXPECT_LE(got * (1.0 - stats.gap), slow * (1.0 + 1e-12))
            << where << ": " << got << " within " << stats.gap << " of " << slow;
        EXPECT_LT(stats.gap, 1.0) << where;
        if (!stats.overBudget) {
          ++c.within;
          if (c.tuning.relativeGap == 0.0) {
            EXPECT_TRUE(sameCost(got, slow)) << where << ": " << got << ", Pareto DP " << slow;
          }
          continue;
        }
        ++c.over;
        EXPECT_GE(stats.gap, c.tuning.relativeGap) << where;
        EXPECT_GT(stats.gap, 0.0) << where;
      }
    }
  }
  EXPECT_GT(cases[0].over, 0u);
  EXPECT_GT(cases[0].within, 0u);
  EXPECT_GT(cases[1].over, 0u);
  EXPECT_GT(cases[2].within, 0u);
}

// On a 500-layer profile where the exact auto search outgrows its budgets
// (bench/planner_bench's seed 1028: seconds), a gap of 1% ends it with a plan
// certified within the gap, which plan() reports and no rule beats by more.
TEST(PlannerExact, PlanCarriesTheGap) {
  Profile p = makeModelShapedProfile(500, 1028);
  Strategy autoAll{StrategyKind::Auto, 0, CollectiveSet::all()};
  Plan withGap = plan(p, autoAll, {0.01});
  EXPECT_EQ(withGap.gap, 0.01);
  EXPECT_DOUBLE_EQ(withGap.predictedSeconds, predict(p, withGap.groups));
  for (const Strategy &s : allStrategies()) {
    if (s.kind != StrategyKind::None) {
      EXPECT_LE(withGap.predictedSeconds * (1.0 - 0.01), plan(p, s, {0.01}).predictedSeconds)
          << s.name();
    }
  }
  std::string json;
  llvm::raw_string_ostream os(json);
  printPlanJSON(os, p, withGap);
  EXPECT_NE(json.find("\"gap\": 0.01,"), std::string::npos) << json;
  EXPECT_EQ(planToJSON(p, withGap).getAsObject()->getNumber("gap"), 0.01);
}

TEST(PlannerSynthetic, ModelShapedProfilesAreValidAndDeterministic) {
  for (int64_t L : {1, 2, 3, 65, 500}) {
    Profile p = makeModelShapedProfile(L, 42);
    EXPECT_FALSE(bool(p.validate())) << L;
    EXPECT_EQ(static_cast<int64_t>(p.layers.size()), L);
    Profile q = makeModelShapedProfile(L, 42);
    EXPECT_EQ(q.layers.back().backward, p.layers.back().backward);
  }
}

} // namespace
