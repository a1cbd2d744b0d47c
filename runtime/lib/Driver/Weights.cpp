//===- Weights.cpp - The <executable>.weights file ------------------------===//
//
// Little-endian: magic "MGSW0002" (8 bytes), u64 count, then per tensor: u32
// name length, name bytes, u32 rank, i64 dims[rank], float32 data; last, u32
// zlib's CRC-32 of every byte before it. mgsc writes one entry per param of
// the manifest but the error-feedback residuals (mgs.residual/..., zero at
// the start: the driver starts one the file leaves out at zero, which
// halves a sparsified model's file); the driver reads it at start and writes
// the trained params, residuals too, in the same format (--save-weights).
// The first version, "MGSW0001", is the same without the CRC and is still
// read.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include "mgsrt/contract.h"

#include <cmath>
#include <cstring>
#include <map>

namespace mgs::rt::driver {

namespace {
constexpr char kMagicV1[8] = {'M', 'G', 'S', 'W', '0', '0', '0', '1'};
constexpr char kMagic[8] = {'M', 'G', 'S', 'W', '0', '0', '0', '2'};
} // namespace

Status readWeights(const std::string &path, std::vector<Tensor> &tensors) {
  Reader r;
  if (Status s = r.open(path, "weights file"); !s.ok())
    return s;
  char magic[8];
  if (Status s = r.read(magic, 8, "the magic"); !s.ok())
    return s;
  const bool v1 = std::memcmp(magic, kMagicV1, 8) == 0;
  if (!v1 && std::memcmp(magic, kMagic, 8) != 0)
    return r.fail("not a weights file (the magic is not \"MGSW0002\" or \"MGSW0001\")");
  if (Status s = readTensorList(r, tensors); !s.ok())
    return s;
  if (!v1) {
    if (Status s = r.readCrc(); !s.ok())
      return s;
  }
  if (r.remaining() != 0)
    return r.fail(std::to_string(r.remaining()) + " unexpected bytes after the last tensor");
  std::map<std::string, int> seen;
  for (const Tensor &t : tensors)
    if (seen[t.name]++)
      return r.fail("tensor '" + t.name + "' appears twice");
  return Status::success();
}

Status writeWeights(const std::string &path, const std::vector<Tensor> &tensors) {
  AtomicWriter w;
  w.open(path);
  w.write(kMagic, 8);
  writeTensorList(w, tensors);
  w.writeCrc();
  return w.commit();
}

Status matchWeights(const Manifest &manifest, const std::string &path,
                    std::vector<Tensor> &tensors) {
  return matchParams(manifest, "weights file '" + path + "'", tensors, /*zeroResiduals=*/true);
}

Status matchParams(const Manifest &manifest, const std::string &source,
                   std::vector<Tensor> &tensors, bool zeroResiduals) {
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < tensors.size(); ++i)
    byName[tensors[i].name] = i;
  std::vector<Tensor> ordered;
  ordered.reserve(manifest.params.size());
  for (const TensorSpec &p : manifest.params) {
    auto it = byName.find(p.name);
    // Accumulators are zero between steps and stored nowhere; residuals
    // start at zero where the file is a weights file.
    if (it == byName.end() && (contract::manifest::isAccumulatorName(p.name) ||
                               (zeroResiduals && contract::manifest::isResidualName(p.name)))) {
      Tensor &zero = ordered.emplace_back();
      zero.name = p.name;
      zero.dims = p.dims;
      zero.data.assign(p.numElements(), 0.0f);
      continue;
    }
    if (it == byName.end())
      return badInput(source + " has no tensor for param '" + p.name + "' (shape " +
                      formatShape(p.dims) + ")");
    Tensor &t = tensors[it->second];
    if (t.dims != p.dims)
      return badInput(source + ": param '" + p.name + "' has shape " + formatShape(t.dims) +
                      " but the model expects " + formatShape(p.dims));
    // What is trained (and each worker's residual) must be finite; a frozen
    // buffer may hold infinities (a causal mask's -inf).
    if (p.trainable || contract::manifest::isWorkerStateName(p.name))
      for (size_t i = 0; i < t.data.size(); ++i)
        if (!std::isfinite(t.data[i]))
          return badInput(source + ": tensor '" + p.name + "' holds " +
                          (t.data[i] > 0 ? "inf" : "-inf") + " at element " + std::to_string(i) +
                          " (not finite: a diverged or corrupt file)");
    byName.erase(it);
    ordered.push_back(std::move(t));
  }
  if (!byName.empty()) {
    // Report the first extra tensor in file order.
    size_t first = tensors.size();
    for (auto &[name, index] : byName)
      first = std::min(first, index);
    return badInput(
        source + " has tensor '" + tensors[first].name + "', which is not a param of the model" +
        (byName.size() > 1 ? " (and " + std::to_string(byName.size() - 1) + " more)" : ""));
  }
  tensors = std::move(ordered);
  return Status::success();
}

} // namespace mgs::rt::driver
