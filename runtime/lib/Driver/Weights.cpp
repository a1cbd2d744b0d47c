//===- Weights.cpp - The <executable>.weights file ------------------------===//
//
// Little-endian: magic "MGSW0001" (8 bytes), u64 count, then per tensor: u32
// name length, name bytes, u32 rank, i64 dims[rank], float32 data. mgsc
// writes one entry per param of the manifest; the driver reads it at start
// and writes the trained params in the same format (--save-weights).
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <cstring>
#include <map>

namespace mgs::rt::driver {

namespace {
constexpr char kMagic[8] = {'M', 'G', 'S', 'W', '0', '0', '0', '1'};
} // namespace

bool readWeights(const std::string &path, std::vector<Tensor> &tensors, std::string &error) {
  Reader r;
  if (!r.open(path, "weights file", error))
    return false;
  char magic[8];
  if (!r.read(magic, 8, "the magic", error))
    return false;
  if (std::memcmp(magic, kMagic, 8) != 0)
    return r.fail("not a weights file (the magic is not \"MGSW0001\")", error);
  if (!readTensorList(r, tensors, error))
    return false;
  if (r.remaining() != 0)
    return r.fail(std::to_string(r.remaining()) + " unexpected bytes after the last tensor", error);
  std::map<std::string, int> seen;
  for (const Tensor &t : tensors)
    if (seen[t.name]++)
      return r.fail("tensor '" + t.name + "' appears twice", error);
  return true;
}

bool writeWeights(const std::string &path, const std::vector<Tensor> &tensors,
                  std::string &error) {
  AtomicWriter w;
  return w.open(path, error) && w.write(kMagic, 8, error) && writeTensorList(w, tensors, error) &&
         w.commit(error);
}

bool matchWeights(const Manifest &manifest, const std::string &path, std::vector<Tensor> &tensors,
                  std::string &error) {
  return matchParams(manifest, "weights file '" + path + "'", tensors, error);
}

bool matchParams(const Manifest &manifest, const std::string &source, std::vector<Tensor> &tensors,
                 std::string &error) {
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < tensors.size(); ++i)
    byName[tensors[i].name] = i;
  std::vector<Tensor> ordered;
  ordered.reserve(manifest.params.size());
  for (const TensorSpec &p : manifest.params) {
    auto it = byName.find(p.name);
    if (it == byName.end()) {
      error = source + " has no tensor for param '" + p.name + "' (shape " +
              formatShape(p.dims) + ")";
      return false;
    }
    Tensor &t = tensors[it->second];
    if (t.dims != p.dims) {
      error = source + ": param '" + p.name + "' has shape " +
              formatShape(t.dims) + " but the model expects " + formatShape(p.dims);
      return false;
    }
    byName.erase(it);
    ordered.push_back(std::move(t));
  }
  if (!byName.empty()) {
    // Report the first extra tensor in file order.
    size_t first = tensors.size();
    for (auto &[name, index] : byName)
      first = std::min(first, index);
    error = source + " has tensor '" + tensors[first].name +
            "', which is not a param of the model" +
            (byName.size() > 1 ? " (and " + std::to_string(byName.size() - 1) + " more)" : "");
    return false;
  }
  tensors = std::move(ordered);
  return true;
}

} // namespace mgs::rt::driver
