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
#include <set>
#include <string>
#include <unistd.h>

namespace mgs::fuzz {

/// The directory and the files written in it, removed at exit.
struct WorkFiles {
  std::string dir;
  std::set<std::string> files;
  static WorkFiles &get() {
    static WorkFiles w;
    return w;
  }
  static void removeAll() {
    WorkFiles &w = get();
    for (const std::string &f : w.files)
      std::remove(f.c_str());
    if (!w.dir.empty())
      ::rmdir(w.dir.c_str());
  }
};

/// $TMPDIR (or /tmp)/<prefix>-XXXXXX, made on first use (one per process).
inline const std::string &workDir(const char *prefix) {
  WorkFiles &w = WorkFiles::get();
  if (w.dir.empty()) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    w.dir = pattern;
    std::atexit(WorkFiles::removeAll);
  }
  return w.dir;
}

/// Writes the bytes to workDir(prefix)/name; returns the path.
inline std::string writeInput(const char *prefix, const std::string &name, const uint8_t *data,
                              size_t size) {
  std::string path = workDir(prefix) + "/" + name;
  WorkFiles::get().files.insert(path);
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

} // namespace mgs::fuzz

#endif // MGSRT_FUZZ_FUZZFILES_H
