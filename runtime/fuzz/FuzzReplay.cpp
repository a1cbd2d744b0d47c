//===- FuzzReplay.cpp - Runs a libFuzzer target over files -----------------===//
//
// The fuzz target's entry point, called once per file or per file in each
// directory given (sorted), with any compiler: the test suite replays the
// committed corpus (runtime/fuzz/corpus) through it without libFuzzer.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

std::vector<std::string> filesOf(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return {};
  if (!S_ISDIR(st.st_mode))
    return {path};
  std::vector<std::string> files;
  if (DIR *d = ::opendir(path.c_str())) {
    while (const dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        files.push_back(path + "/" + e->d_name);
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<std::string> files = filesOf(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "%s: no input at '%s'\n", argv[0], argv[i]);
      return 2;
    }
    for (const std::string &f : files) {
      std::ifstream in(f, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
      std::printf("%s\n", f.c_str());
      std::fflush(stdout);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++runs;
    }
  }
  std::printf("replayed %zu inputs\n", runs);
  return 0;
}
