//===- ProfileFuzzer.cpp - Calibration profiles from users, fuzzed --------===//
//
// A libFuzzer target over the profile reader (mgsc --profile-use, mgs-plan,
// the merge pass): the input is the JSON text, parsed from memory. The parse
// must fail with a message, or give a profile that validates, whose JSON
// (profileToJSON) parses back to the same JSON, and whose cost functions are
// never NaN nor negative; never crash, hang or touch memory it should not
// (ASan/UBSan). Plain C++ over LLVMSupport: no MLIR.
//
// Built with clang's -fsanitize=fuzzer by lib/Planner/fuzz/run.sh; the test
// suite replays the committed corpus (lib/Planner/fuzz/corpus) through the
// same entry point (test/mgs-plan/fuzz-replay.test).
//
//===----------------------------------------------------------------------===//

#include "mgs/Planner/Profile.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mgs::planner;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "profile: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::string toJSON(const Profile &p) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << profileToJSON(p);
  return text;
}

/// Every cost function at a few group sizes: the model's, one element, one
/// layer's and the top-k points' own sizes.
void checkCosts(const Profile &p) {
  std::vector<int64_t> sizes = {1, 2, 1000};
  int64_t total = 0;
  for (const LayerProfile &l : p.layers) {
    sizes.push_back(l.numel);
    total += l.numel; // validate() bounds the sum
  }
  sizes.push_back(total);
  for (const TopKPoint &t : p.topkPoints)
    sizes.push_back(t.n);
  for (int64_t n : sizes) {
    if (p.topkK(n) < 1 || p.topkK(n) > n)
      fail("topkK out of [1, n]", std::to_string(n));
    const double costs[] = {p.topkSeconds(n),
                            p.allgatherSeconds(n),
                            p.allreduceSeconds(n),
                            p.allgatherComputeSeconds(n),
                            p.allreduceComputeSeconds(n),
                            p.gtopkSeconds(n),
                            p.gtopkComputeSeconds(n),
                            p.sparseAllreduceSeconds(n),
                            p.sparseAllreduceComputeSeconds(n)};
    for (double c : costs)
      if (std::isnan(c) || c < 0)
        fail("a cost function gave a NaN or negative time", "n = " + std::to_string(n));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  static const bool verbose = std::getenv("MGS_FUZZ_VERBOSE") != nullptr;
  llvm::Expected<Profile> profile = parseProfile(text);
  if (!profile) {
    std::string message = llvm::toString(profile.takeError());
    if (message.empty())
      fail("the parse failed without a message", "");
    if (verbose)
      std::printf("parseProfile: error: %s\n", message.c_str());
    return 0;
  }
  if (llvm::Error e = profile->validate())
    fail("a parsed profile does not validate", llvm::toString(std::move(e)));
  const std::string json = toJSON(*profile);
  llvm::Expected<Profile> again = parseProfile(json);
  if (!again)
    fail("its JSON does not parse back", llvm::toString(again.takeError()) + "\n" + json);
  if (toJSON(*again) != json)
    fail("its JSON reads back different", json + "\n" + toJSON(*again));
  checkCosts(*profile);
  if (verbose)
    std::printf("parseProfile: ok\n");
  return 0;
}
