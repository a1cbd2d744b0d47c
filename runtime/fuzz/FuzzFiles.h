//===- FuzzFiles.h - Fuzz inputs as files (header only) ---------*- C++ -*-===//
//
// The readers under fuzz take paths: each input is written to a file in a
// private directory made once per process. Shared by the fuzz targets of the
// runtime and of the importer (no MLIR here).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_FUZZ_FUZZFILES_H
#define MGSRT_FUZZ_FUZZFILES_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace mgs::fuzz {

/// $TMPDIR (or /tmp)/<prefix>-XXXXXX, made on first use.
inline const std::string &workDir(const char *prefix) {
  static const std::string dir = [prefix] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    return pattern;
  }();
  return dir;
}

/// Writes the bytes to workDir(prefix)/name; returns the path.
inline std::string writeInput(const char *prefix, const std::string &name, const uint8_t *data,
                              size_t size) {
  std::string path = workDir(prefix) + "/" + name;
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

} // namespace mgs::fuzz

#endif // MGSRT_FUZZ_FUZZFILES_H
