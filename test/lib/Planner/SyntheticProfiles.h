//===- SyntheticProfiles.h - Random model-shaped planner profiles -*- C++ -*-===//
//
// Test support for the planner's unit tests and benchmark: seeded random
// profiles shaped like CNNs, the same on every platform.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_TEST_LIB_PLANNER_SYNTHETICPROFILES_H
#define MGS_TEST_LIB_PLANNER_SYNTHETICPROFILES_H

#include "mgs/Planner/Profile.h"

#include <cstdint>

namespace mgs::planner {

/// A random CNN-shaped profile with `numTensors` tensors: stages of
/// conv weight + batch-norm weight/bias triples with channels doubling and
/// feature maps halving per stage, a final fc weight + bias; backward times
/// proportional to each tensor's FLOPs; top-k times from s*n*log2(n) plus a
/// launch overhead; network constants, workers and density drawn over wide
/// ranges (1 Gbit/s to 100 Gbit/s, 2-64 workers). Deterministic per seed on
/// every platform.
Profile makeModelShapedProfile(int64_t numTensors, uint64_t seed);

} // namespace mgs::planner

#endif // MGS_TEST_LIB_PLANNER_SYNTHETICPROFILES_H
