//===- TestUtil.h - Temporary files for the driver tests --------*- C++ -*-===//

#ifndef MGSRT_TEST_DRIVER_TESTUTIL_H
#define MGSRT_TEST_DRIVER_TESTUTIL_H

#include "mgsrt/status.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>
#include <zlib.h>

namespace mgs::rt::driver::test {

/// A fresh directory under $TMPDIR (or /tmp), removed at destruction.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/mgsrt-driver-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
      ADD_FAILURE() << "mkdtemp failed";
    path_ = buf.data();
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string operator/(const std::string &name) const { return path_ + "/" + name; }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

inline void writeGzip(const std::string &path, const std::string &bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

inline std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void makeDir(const std::string &path) { ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << path; }

template <typename T> void append(std::string &s, const T &v) {
  s.append(reinterpret_cast<const char *>(&v), sizeof v);
}

inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// Success, or a failure that shows the status's message:
/// ASSERT_TRUE(succeeded(readWeights(path, tensors))).
inline ::testing::AssertionResult succeeded(const Status &s) {
  if (s.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.message;
}

} // namespace mgs::rt::driver::test

#endif // MGSRT_TEST_DRIVER_TESTUTIL_H
