//===- SparseComm.cu - Device work of the sparse collectives --------------===//
//
// The global top-k's error feedback on a GPU: the entries the merges dropped
// go back into the residual at the wait, residual[i] += v, in the order the
// CPU adds them (CommCAPI.cpp's finishGTopK). The host hands them sorted by
// index with a repeated index's entries in entry order (droppedEntries in
// Comm/SparseCollectives.h), so one thread per distinct index adds its run
// in order: the bits of the CPU's serial loop, with no atomics.
//
//===----------------------------------------------------------------------===//

#include "Kernels/CUDA/Device.h"

namespace {

__global__ void addSortedEntriesKernel(float *residual, const int32_t *indices,
                                       const float *values, int64_t count) {
  for (int64_t j = mgs::rt::cuda::firstIndex(); j < count; j += mgs::rt::cuda::gridStride()) {
    const int32_t i = indices[j];
    if (j > 0 && indices[j - 1] == i)
      continue; // a later entry of the run that thread (first of the run) adds
    float acc = residual[i];
    for (int64_t m = j; m < count && indices[m] == i; ++m)
      acc = __fadd_rn(acc, values[m]);
    residual[i] = acc;
  }
}

} // namespace

namespace mgs::rt::cuda {

cudaError_t addSortedEntries(float *residual, const int32_t *indices, const float *values,
                             int64_t count, cudaStream_t stream) {
  if (count > 0)
    addSortedEntriesKernel<<<gridFor(count), 256, 0, stream>>>(residual, indices, values, count);
  return cudaPeekAtLastError();
}

} // namespace mgs::rt::cuda
