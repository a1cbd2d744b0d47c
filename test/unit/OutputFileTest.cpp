//===- OutputFileTest.cpp - mgs::writeOutputFile and checkOutputPath ------===//

#include "mgs/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <csignal>
#include <sys/resource.h>

using namespace llvm;

namespace {

/// A fresh directory, removed with what it holds.
struct TempDir {
  SmallString<128> path;
  TempDir() { EXPECT_FALSE(sys::fs::createUniqueDirectory("mgs-output-file", path)); }
  ~TempDir() { sys::fs::remove_directories(path); }
  std::string file(StringRef name) const {
    SmallString<128> p(path);
    sys::path::append(p, name);
    return std::string(p);
  }
  /// The names in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec))
      out.push_back(sys::path::filename(it->path()).str());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string contents(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : "<unreadable>";
}

mlir::LogicalResult writeText(StringRef path, StringRef text, std::string &error) {
  return mgs::writeOutputFile(path, [&](raw_ostream &os) { os << text; }, error);
}

void writeFile(StringRef path, StringRef text) {
  std::error_code ec;
  raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << text;
}

TEST(OutputFileTest, WritesAndReplacesARegularFile) {
  TempDir dir;
  std::string path = dir.file("out.mlir"), error;
  ASSERT_TRUE(succeeded(writeText(path, "first", error))) << error;
  EXPECT_EQ(contents(path), "first");
  ASSERT_TRUE(succeeded(writeText(path, "second", error))) << error;
  EXPECT_EQ(contents(path), "second");
  EXPECT_EQ(dir.names(), std::vector<std::string>{"out.mlir"}); // no temporary file left
}

TEST(OutputFileTest, WritesThroughALink) {
  TempDir dir;
  writeFile(dir.file("target.mlir"), "old");
  ASSERT_FALSE(sys::fs::create_link("target.mlir", dir.file("link.mlir")));
  std::string error;
  ASSERT_TRUE(succeeded(writeText(dir.file("link.mlir"), "new", error))) << error;
  EXPECT_TRUE(sys::fs::is_symlink_file(dir.file("link.mlir")));
  EXPECT_EQ(contents(dir.file("target.mlir")), "new");
}

// A write that fails part-way (a file size limit stands in for a full disk)
// is an error naming the file and leaves the old file as it was.
TEST(OutputFileTest, FailedWriteKeepsTheOldFile) {
  TempDir dir;
  std::string path = dir.file("keep.mlir"), error;
  writeFile(path, "the old contents");
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto savedHandler = std::signal(SIGXFSZ, SIG_IGN); // write() then fails with EFBIG
  struct rlimit limit = saved;
  limit.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  mlir::LogicalResult result = writeText(path, std::string(8192, 'x'), error);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, savedHandler);
  EXPECT_TRUE(failed(result));
  EXPECT_EQ(error, "cannot write '" + path + "': File too large");
  EXPECT_EQ(contents(path), "the old contents");
  EXPECT_EQ(dir.names(), std::vector<std::string>{"keep.mlir"});
}

TEST(OutputFileTest, DeviceIsWrittenInPlaceAndKept) {
  if (!sys::fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full on this machine";
  std::string error;
  EXPECT_TRUE(failed(writeText("/dev/full", "x", error)));
  EXPECT_EQ(error, "cannot write '/dev/full': No space left on device");
  sys::fs::file_status status;
  ASSERT_FALSE(sys::fs::status("/dev/full", status));
  EXPECT_EQ(status.type(), sys::fs::file_type::character_file);
}

TEST(OutputFileTest, CheckOutputPath) {
  TempDir dir;
  std::string error;
  EXPECT_TRUE(succeeded(mgs::checkOutputPath(dir.file("new.mlir"), error)));
  EXPECT_TRUE(succeeded(mgs::checkOutputPath("-", error)));
  EXPECT_TRUE(failed(mgs::checkOutputPath(dir.path, error)));
  EXPECT_EQ(error, "the output '" + dir.path.str().str() + "' is a directory; name a file with -o");
  std::string missing = dir.file("no/such/out.mlir");
  EXPECT_TRUE(failed(mgs::checkOutputPath(missing, error)));
  EXPECT_EQ(error, "cannot write '" + missing + "': no directory '" + dir.file("no/such") + "'");
}

} // namespace
