//===- PlaneBlocks.h - Blocks of planes as vector lanes --------*- C++ -*-===//
//
// What the kernels that run small planes in blocks share (Pool.cpp's pools,
// DepthwiseConv.cpp's convolutions): kLanes planes of NCHW data transposed so
// that a position's kLanes values lie side by side (oneDNN's nChw16c layout,
// made per call in a thread's scratch, where it stays in cache), the lanes as
// GCC vector types, and the loop over blocks on the OpenMP threads.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_PLANEBLOCKS_H
#define MGSRT_KERNELS_CPU_PLANEBLOCKS_H

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mgs::rt::cpu {

/// Planes a block holds: the lanes of the block kernels' vectors.
constexpr int64_t kLanes = 16;

// A block's lanes at one position, as GCC vector types: each clone of a
// function (MGSRT_SIMD_CLONES) lowers them to its own registers (one AVX-512
// register, two AVX2 ones, ...).
typedef float Floats __attribute__((vector_size(kLanes * sizeof(float))));

// Loads and stores through memcpy: the lanes of a row need no alignment.
template <typename V, typename T> inline void loadLanes(V &v, const T *p) {
  std::memcpy(&v, p, sizeof v);
}
template <typename V, typename T> inline void storeLanes(T *p, const V &v) {
  std::memcpy(p, &v, sizeof v);
}

/// Rows [0, lanes) of src (each `size` long, `size` apart) into dst's
/// columns: dst[i * kLanes + l] = src[l * size + i], and 0 for lanes past
/// `lanes` where a tile of kLanes positions is transposed whole.
void toLanes(const float *src, int64_t lanes, int64_t size, float *dst);

/// The inverse: dst[l * size + i] = src[i * kLanes + l] for l < lanes.
void fromLanes(const float *src, int64_t lanes, int64_t size, float *dst);

/// body(i, scratch) for i in [0, count), spread over the OpenMP threads when
/// `parallel` (a static schedule), each thread with its own of `scratches`,
/// which grows (by make()) to the thread count first: before the parallel
/// region, so that running out of memory is the kernel's error, not an
/// exception escaping the region. A caller that keeps `scratches` from call
/// to call allocates them once.
template <typename Scratch, typename Make, typename Body>
void forEachWithScratch(int64_t count, bool parallel, std::vector<Scratch> &scratches, Make &&make,
                        Body &&body) {
  const int threads = parallel ? std::max(1, omp_get_max_threads()) : 1;
  while (scratches.size() < static_cast<size_t>(threads))
    scratches.push_back(make());
#pragma omp parallel if (parallel) num_threads(threads)
  {
    Scratch &scratch = scratches[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (int64_t i = 0; i < count; ++i)
      body(i, scratch);
  }
}

/// The same with scratches made for this call.
template <typename Make, typename Body>
void forEachWithScratch(int64_t count, bool parallel, Make &&make, Body &&body) {
  std::vector<decltype(make())> scratches;
  forEachWithScratch(count, parallel, scratches, make, body);
}

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_PLANEBLOCKS_H
