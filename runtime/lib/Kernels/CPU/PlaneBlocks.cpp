//===- PlaneBlocks.cpp - Planes to and from vector lanes ------------------===//
//
// The transposes of PlaneBlocks.h in tiles of kLanes x kLanes, each in
// registers: kLanes rows of kLanes positions loaded, transposed by four
// rounds of two-source shuffles (round b swaps, in each pair of rows b apart,
// the b x b blocks off the diagonal: after b = 8, 4, 2, 1 the tile is
// transposed) and stored as kLanes positions of kLanes lanes. What is left
// of a plane past its last whole tile goes element by element.
//
//===----------------------------------------------------------------------===//

#include "Kernels/CPU/PlaneBlocks.h"
#include "Kernels/CPU/VectorMath.h"

namespace mgs::rt::cpu {

namespace {

static_assert(kLanes == 16, "the shuffle masks below are for 16 lanes");
typedef int32_t Indices __attribute__((vector_size(kLanes * sizeof(int32_t))));

// Round b: row i (i & b == 0) keeps its columns j & b == 0 and takes row
// i + b's columns j - b for the others (mask `Low`); row i + b takes row i's
// columns j + b for j & b == 0 and keeps its others (`High`). Indices of 16
// and up pick the second operand.
constexpr Indices kLow8 = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
constexpr Indices kHigh8 = {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
constexpr Indices kLow4 = {0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27};
constexpr Indices kHigh4 = {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31};
constexpr Indices kLow2 = {0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29};
constexpr Indices kHigh2 = {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31};
constexpr Indices kLow1 = {0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30};
constexpr Indices kHigh1 = {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31};

inline void swapRound(Floats *r, int b, const Indices &low, const Indices &high) {
  for (int i = 0; i < kLanes; ++i) {
    if (i & b)
      continue;
    const Floats a = r[i], c = r[i + b];
    r[i] = __builtin_shuffle(a, c, low);
    r[i + b] = __builtin_shuffle(a, c, high);
  }
}

/// The tile r (row i: kLanes values) transposed in place.
inline void transposeTile(Floats *r) {
  swapRound(r, 8, kLow8, kHigh8);
  swapRound(r, 4, kLow4, kHigh4);
  swapRound(r, 2, kLow2, kHigh2);
  swapRound(r, 1, kLow1, kHigh1);
}

} // namespace

MGSRT_SIMD_CLONES void toLanes(const float *src, int64_t lanes, int64_t size, float *dst) {
  int64_t i0 = 0;
  for (; i0 + kLanes <= size; i0 += kLanes) {
    Floats r[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      r[l] = Floats{};
      if (l < lanes)
        loadLanes(r[l], src + l * size + i0);
    }
    transposeTile(r);
    for (int64_t q = 0; q < kLanes; ++q)
      storeLanes(dst + (i0 + q) * kLanes, r[q]);
  }
  for (int64_t l = 0; l < lanes; ++l)
    for (int64_t i = i0; i < size; ++i)
      dst[i * kLanes + l] = src[l * size + i];
}

MGSRT_SIMD_CLONES void fromLanes(const float *src, int64_t lanes, int64_t size, float *dst) {
  int64_t i0 = 0;
  for (; i0 + kLanes <= size; i0 += kLanes) {
    Floats r[kLanes];
    for (int64_t q = 0; q < kLanes; ++q)
      loadLanes(r[q], src + (i0 + q) * kLanes);
    transposeTile(r);
    for (int64_t l = 0; l < lanes; ++l)
      storeLanes(dst + l * size + i0, r[l]);
  }
  for (int64_t l = 0; l < lanes; ++l)
    for (int64_t i = i0; i < size; ++i)
      dst[l * size + i] = src[i * kLanes + l];
}

} // namespace mgs::rt::cpu
