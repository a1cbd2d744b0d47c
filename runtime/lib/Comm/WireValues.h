//===- WireValues.h - How a sparse exchange's values travel -----*- C++ -*-===//
//
// The allgather descriptor's values field (MGSRT_VALUES_*): float32, IEEE
// half or bfloat16 on the wire, both 16-bit forms rounded to nearest even and
// widened back to float32 on arrival. Shared by the CPU collectives
// (CommCAPI.cpp) and the GPU's staged ones (StagedCollectives.cpp), which pack
// on the host; NCCL's convert on the device (NCCL/NcclKernels.cu) with the
// same rounding (Support/Rounding.h).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_COMM_WIREVALUES_H
#define MGSRT_COMM_WIREVALUES_H

#include "mgsrt/mgsrt.h"
#include "Support/Rounding.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mgs::rt {

enum class WireValues { F32 = MGSRT_VALUES_F32, F16 = MGSRT_VALUES_F16, BF16 = MGSRT_VALUES_BF16 };

/// Bytes of one value on the wire.
inline size_t wireBytes(WireValues w) { return w == WireValues::F32 ? 4 : 2; }

/// k values into their wire form at `out` (k * wireBytes(w) bytes).
inline void packValues(WireValues w, const float *in, void *out, size_t k) {
  switch (w) {
  case WireValues::F32:
    std::memcpy(out, in, k * sizeof(float));
    return;
  case WireValues::F16: {
    _Float16 *h = static_cast<_Float16 *>(out);
    for (size_t j = 0; j < k; ++j)
      h[j] = static_cast<_Float16>(in[j]); // rounds to nearest even
    return;
  }
  case WireValues::BF16: {
    uint16_t *h = static_cast<uint16_t *>(out);
    for (size_t j = 0; j < k; ++j)
      h[j] = floatToBf16(in[j]);
    return;
  }
  }
}

/// k wire values at `in` widened into `out`.
inline void unpackValues(WireValues w, const void *in, float *out, size_t k) {
  switch (w) {
  case WireValues::F32:
    std::memcpy(out, in, k * sizeof(float));
    return;
  case WireValues::F16: {
    const _Float16 *h = static_cast<const _Float16 *>(in);
    for (size_t j = 0; j < k; ++j)
      out[j] = static_cast<float>(h[j]);
    return;
  }
  case WireValues::BF16: {
    const uint16_t *h = static_cast<const uint16_t *>(in);
    for (size_t j = 0; j < k; ++j)
      out[j] = bf16ToFloat(h[j]);
    return;
  }
  }
}

} // namespace mgs::rt

#endif // MGSRT_COMM_WIREVALUES_H
