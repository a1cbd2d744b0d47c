//===- FileIO.h - Binary files for the driver (internal) --------*- C++ -*-===//
//
// Little-endian readers and writers over stdio with error messages that name
// the file, the tensor-record encoding shared by weights files and
// checkpoints, and atomic replacement (write a temporary, then rename).
// Failures are Status values (mgsrt/status.h): MGSRT_ERROR_IO when the system
// cannot open, read or write a file, MGSRT_ERROR_INVALID_ARGUMENT when its
// contents are wrong.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_FILEIO_H
#define MGSRT_DRIVER_FILEIO_H

#include "mgsrt/driver.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the mgs driver's file formats are little-endian; port FileIO.h first"
#endif

namespace mgs::rt::driver {

/// Reads a binary file sequentially; every failure becomes one Status.
class Reader {
public:
  Reader() = default;
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;
  ~Reader();

  /// Opens `path`; `what` ("weights file") names it in messages.
  Status open(const std::string &path, const char *what);
  const std::string &path() const { return path_; }
  /// Bytes left to read.
  uint64_t remaining() const { return size_ - offset_; }

  /// Reads `bytes` bytes; `what` ("the magic") names them in messages.
  Status read(void *dst, uint64_t bytes, const char *what);
  template <typename T> Status readValue(T &v, const char *what) {
    return read(&v, sizeof v, what);
  }
  /// An MGSRT_ERROR_INVALID_ARGUMENT status "<what> '<path>': <problem>".
  Status fail(const std::string &problem) const;
  /// zlib's CRC-32 of every byte read so far.
  uint32_t crc() const { return crc_; }
  /// Reads a u32 CRC-32 and checks it against every byte before it.
  Status readCrc();

private:
  std::FILE *file_ = nullptr;
  std::string path_, kind_;
  uint64_t size_ = 0, offset_ = 0;
  uint32_t crc_ = 0;
};

/// Writes `path` through a temporary file in the same directory; commit()
/// renames it over `path`. Abandoned (destroyed uncommitted) writes are removed.
/// Its status is sticky: after the first failure (of open or a write) writes
/// do nothing, and commit() returns that failure and removes the temporary.
class AtomicWriter {
public:
  AtomicWriter() = default;
  AtomicWriter(const AtomicWriter &) = delete;
  AtomicWriter &operator=(const AtomicWriter &) = delete;
  ~AtomicWriter();

  void open(const std::string &path);
  void write(const void *src, uint64_t bytes);
  template <typename T> void writeValue(const T &v) { write(&v, sizeof v); }
  /// The first failure so far, or the rename's: finish() then publish().
  Status commit();
  /// Flushes the temporary to the disk (fsync) and closes it, without
  /// renaming it: several writers (the workers' checkpoints) can agree that
  /// every one finished before any publishes. On failure the temporary is
  /// removed.
  Status finish();
  /// Renames the finished temporary over the target, then syncs the folder
  /// (so the rename survives a crash). Destroyed unpublished, the temporary
  /// is removed.
  Status publish();
  /// Removes the temporary (open or finished) without publishing it.
  void discard();
  /// zlib's CRC-32 of every byte written so far.
  uint32_t crc() const { return crc_; }
  /// Writes that CRC-32 (u32), which Reader::readCrc checks.
  void writeCrc() {
    const uint32_t crc = crc_;
    writeValue(crc);
  }

private:
  std::FILE *file_ = nullptr;
  std::string path_, tmpPath_;
  bool finished_ = false; // the temporary is complete and closed, not yet renamed
  uint32_t crc_ = 0;
  Status status_;
};

/// Syncs the folder holding `path` (after a rename into it); false if it
/// cannot (errno says why).
bool syncParentDirectory(const std::string &path);

/// writeCheckpoint without its last step: the temporary is finished in `w`
/// and published by the caller (Driver::saveCheckpoint, once every worker's
/// write succeeded).
Status writeCheckpointUnpublished(const std::string &path, const Checkpoint &c, AtomicWriter &w);

/// An MGSRT_ERROR_IO status: the system cannot find, open, read or write a file.
inline Status ioError(std::string message) {
  return Status::error(MGSRT_ERROR_IO, std::move(message));
}
/// An MGSRT_ERROR_INVALID_ARGUMENT status: a file holds what its reader does
/// not take (corrupt, truncated, another format, not what the model expects).
inline Status badInput(std::string message) {
  return Status::error(MGSRT_ERROR_INVALID_ARGUMENT, std::move(message));
}

/// One tensor record: u32 name length, name, u32 rank, i64 dims[rank], f32 data.
void writeTensorRecord(AtomicWriter &w, const Tensor &t);
Status readTensorRecord(Reader &r, Tensor &t);
/// u64 count, then the records.
void writeTensorList(AtomicWriter &w, const std::vector<Tensor> &ts);
Status readTensorList(Reader &r, std::vector<Tensor> &ts);

/// matchWeights with `source` ("weights file 'x'", "checkpoint 'y'") in messages.
/// `zeroResiduals`: an error-feedback residual (mgs.residual/...) the file
/// leaves out starts at zero (mgsc writes none: they all start at zero).
Status matchParams(const Manifest &manifest, const std::string &source,
                   std::vector<Tensor> &tensors, bool zeroResiduals = false);

/// Whole file contents, through zlib (so gzip-compressed or plain).
Status readMaybeGzip(const std::string &path, std::vector<unsigned char> &bytes);

/// A file's bytes where they can be read in place: a read-only mapping of a
/// plain file (pages read as they are touched, shared by every process that
/// maps it: the workers on a node hold one copy), or, for a gzip-compressed
/// file (or one that cannot be mapped), its contents in memory. `owner`
/// keeps them alive.
struct FileBytes {
  std::shared_ptr<const void> owner;
  const unsigned char *data = nullptr;
  size_t size = 0;
  bool mapped = false;
};
/// MGSRT_READ_DATA=1 reads plain files whole instead (the behaviour before
/// mapping, for comparisons). A mapped file that shrinks while mapped (a
/// read past its new end raises SIGBUS) ends the process with status 1 and an
/// error naming it (after setDataFaultPrefix's prefix).
Status mapOrRead(const std::string &path, FileBytes &bytes);
/// "PROG: error: [worker R: ]": what the SIGBUS error of a mapped data file
/// begins with.
void setDataFaultPrefix(const std::string &prefix);

bool isDirectory(const std::string &path);
bool isRegularFile(const std::string &path);
/// The entries of `dir` but "." and "..", sorted by name; an error names the
/// directory.
Status listDirectory(const std::string &dir, std::vector<std::string> &names);
bool endsWith(std::string_view s, std::string_view suffix);
/// ASCII lower case (file extensions).
std::string lower(std::string s);
/// Whether two paths name one file: the same file when both exist (links and
/// other spellings included), else the same spelling.
bool sameFile(const std::string &a, const std::string &b);
/// The file this process runs (/proc/self/exe, links resolved); empty when
/// the kernel does not say.
std::string runningExecutable();

/// Where a file written whole to `path` goes: `path` itself, or the file a
/// link at `path` leads to (the link is kept). Refuses a path that is neither
/// a regular file nor absent (a device, a directory, a FIFO: replacing it
/// would destroy it) and a folder that cannot be written into, so that a
/// run can check its outputs before it starts.
Status resolveOutputFile(const std::string &path, std::string &resolved);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_FILEIO_H
