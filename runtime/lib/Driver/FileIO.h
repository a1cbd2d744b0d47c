//===- FileIO.h - Binary files for the driver (internal) --------*- C++ -*-===//
//
// Little-endian readers and writers over stdio with error messages that name
// the file, the tensor-record encoding shared by weights files and
// checkpoints, and atomic replacement (write a temporary, then rename).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_FILEIO_H
#define MGSRT_DRIVER_FILEIO_H

#include "mgsrt/driver.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the mgs driver's file formats are little-endian; port FileIO.h first"
#endif

namespace mgs::rt::driver {

/// Reads a binary file sequentially; every failure becomes one message.
class Reader {
public:
  Reader() = default;
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;
  ~Reader();

  bool open(const std::string &path, const char *what, std::string &error);
  const std::string &path() const { return path_; }
  /// Bytes left to read.
  uint64_t remaining() const { return size_ - offset_; }

  bool read(void *dst, uint64_t bytes, const char *what, std::string &error);
  template <typename T> bool readValue(T &v, const char *what, std::string &error) {
    return read(&v, sizeof v, what, error);
  }
  bool fail(const std::string &what, std::string &error) const;
  /// zlib's CRC-32 of every byte read so far.
  uint32_t crc() const { return crc_; }

private:
  std::FILE *file_ = nullptr;
  std::string path_, kind_;
  uint64_t size_ = 0, offset_ = 0;
  uint32_t crc_ = 0;
};

/// Writes `path` through a temporary file in the same directory; commit()
/// renames it over `path`. Abandoned (destroyed uncommitted) writes are removed.
class AtomicWriter {
public:
  AtomicWriter() = default;
  AtomicWriter(const AtomicWriter &) = delete;
  AtomicWriter &operator=(const AtomicWriter &) = delete;
  ~AtomicWriter();

  bool open(const std::string &path, std::string &error);
  bool write(const void *src, uint64_t bytes, std::string &error);
  template <typename T> bool writeValue(const T &v, std::string &error) {
    return write(&v, sizeof v, error);
  }
  bool commit(std::string &error);
  /// zlib's CRC-32 of every byte written so far.
  uint32_t crc() const { return crc_; }

private:
  std::FILE *file_ = nullptr;
  std::string path_, tmpPath_;
  uint32_t crc_ = 0;
};

/// One tensor record: u32 name length, name, u32 rank, i64 dims[rank], f32 data.
bool writeTensorRecord(AtomicWriter &w, const Tensor &t, std::string &error);
bool readTensorRecord(Reader &r, Tensor &t, std::string &error);
/// u64 count, then the records.
bool writeTensorList(AtomicWriter &w, const std::vector<Tensor> &ts, std::string &error);
bool readTensorList(Reader &r, std::vector<Tensor> &ts, std::string &error);

/// matchWeights with `source` ("weights file 'x'", "checkpoint 'y'") in messages.
bool matchParams(const Manifest &manifest, const std::string &source, std::vector<Tensor> &tensors,
                 std::string &error);

/// Whole file contents, through zlib (so gzip-compressed or plain).
bool readMaybeGzip(const std::string &path, std::vector<unsigned char> &bytes, std::string &error);

bool isDirectory(const std::string &path);
bool isRegularFile(const std::string &path);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_FILEIO_H
