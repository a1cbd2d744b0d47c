//===- FileIO.cpp - Binary files for the driver ---------------------------===//

#include "FileIO.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace mgs::rt::driver {

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

namespace {

// "cannot open <what> 'path': <reason>"; directories and missing files get
// their own words.
std::string openError(const std::string &path, const char *what, int err) {
  if (isDirectory(path))
    return std::string("cannot open ") + what + " '" + path + "': it is a directory";
  return std::string("cannot open ") + what + " '" + path + "': " + std::strerror(err);
}

/// zlib's crc32 continued over `bytes` (which may exceed its uInt).
uint32_t crc32Of(uint32_t crc, const void *data, uint64_t bytes) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  while (bytes) {
    const uInt chunk = static_cast<uInt>(std::min<uint64_t>(bytes, 1u << 30));
    crc = static_cast<uint32_t>(::crc32(crc, p, chunk));
    p += chunk;
    bytes -= chunk;
  }
  return crc;
}

} // namespace

//===--- Reader -----------------------------------------------------------===//

Reader::~Reader() {
  if (file_)
    std::fclose(file_);
}

bool Reader::open(const std::string &path, const char *what, std::string &error) {
  path_ = path;
  kind_ = what;
  if (isDirectory(path)) {
    error = openError(path, what, EISDIR);
    return false;
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    error = openError(path, what, errno);
    return false;
  }
  struct stat st;
  if (::fstat(fileno(file_), &st) != 0) {
    error = openError(path, what, errno);
    return false;
  }
  size_ = static_cast<uint64_t>(st.st_size);
  return true;
}

bool Reader::fail(const std::string &what, std::string &error) const {
  error = kind_ + " '" + path_ + "': " + what;
  return false;
}

bool Reader::read(void *dst, uint64_t bytes, const char *what, std::string &error) {
  if (bytes > remaining())
    return fail(std::string("truncated file (") + std::to_string(size_) + " bytes) while reading " +
                    what + " at offset " + std::to_string(offset_),
                error);
  unsigned char *out = static_cast<unsigned char *>(dst);
  uint64_t done = 0;
  while (done < bytes) {
    size_t got = std::fread(out + done, 1, bytes - done, file_);
    if (got == 0)
      return fail(std::string("read error while reading ") + what + ": " +
                      (std::ferror(file_) ? std::strerror(errno) : "unexpected end of file"),
                  error);
    done += got;
  }
  offset_ += bytes;
  crc_ = crc32Of(crc_, out, bytes);
  return true;
}

//===--- AtomicWriter -----------------------------------------------------===//

AtomicWriter::~AtomicWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(tmpPath_.c_str());
  }
}

bool AtomicWriter::open(const std::string &path, std::string &error) {
  path_ = path;
  tmpPath_ = path + ".tmp." + std::to_string(::getpid());
  file_ = std::fopen(tmpPath_.c_str(), "wb");
  if (!file_) {
    error = "cannot write '" + tmpPath_ + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool AtomicWriter::write(const void *src, uint64_t bytes, std::string &error) {
  if (bytes && std::fwrite(src, 1, bytes, file_) != bytes) {
    error = "cannot write '" + tmpPath_ + "': " + std::strerror(errno);
    return false;
  }
  crc_ = crc32Of(crc_, src, bytes);
  return true;
}

bool AtomicWriter::commit(std::string &error) {
  std::FILE *f = file_;
  file_ = nullptr;
  bool ok = std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  int err = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    error = "cannot write '" + tmpPath_ + "': " + std::strerror(err ? err : errno);
    std::remove(tmpPath_.c_str());
    return false;
  }
  if (std::rename(tmpPath_.c_str(), path_.c_str()) != 0) {
    error = "cannot rename '" + tmpPath_ + "' to '" + path_ + "': " + std::strerror(errno);
    std::remove(tmpPath_.c_str());
    return false;
  }
  return true;
}

//===--- Tensor records ---------------------------------------------------===//

bool writeTensorRecord(AtomicWriter &w, const Tensor &t, std::string &error) {
  uint32_t nameLen = static_cast<uint32_t>(t.name.size());
  uint32_t rank = static_cast<uint32_t>(t.dims.size());
  return w.writeValue(nameLen, error) && w.write(t.name.data(), nameLen, error) &&
         w.writeValue(rank, error) && w.write(t.dims.data(), rank * sizeof(int64_t), error) &&
         w.write(t.data.data(), t.data.size() * sizeof(float), error);
}

bool readTensorRecord(Reader &r, Tensor &t, std::string &error) {
  uint32_t nameLen;
  if (!r.readValue(nameLen, "a tensor name length", error))
    return false;
  if (nameLen > r.remaining() || nameLen > (1u << 20))
    return r.fail("bad tensor name length " + std::to_string(nameLen) +
                      " (corrupt or truncated file)",
                  error);
  t.name.resize(nameLen);
  if (!r.read(t.name.data(), nameLen, "a tensor name", error))
    return false;
  uint32_t rank;
  if (!r.readValue(rank, "a tensor rank", error))
    return false;
  if (rank > 64)
    return r.fail("tensor '" + t.name + "' has rank " + std::to_string(rank) + " (corrupt file)",
                  error);
  t.dims.resize(rank);
  if (!r.read(t.dims.data(), rank * sizeof(int64_t), "tensor dimensions", error))
    return false;
  uint64_t elements = 1;
  for (int64_t d : t.dims) {
    if (d < 0)
      return r.fail("tensor '" + t.name + "' has a negative dimension (corrupt file)", error);
    if (d && elements > r.remaining() / static_cast<uint64_t>(d))
      return r.fail("tensor '" + t.name + "' of shape " + formatShape(t.dims) +
                        " does not fit in the file (truncated)",
                    error);
    elements *= static_cast<uint64_t>(d);
  }
  if (elements * sizeof(float) > r.remaining())
    return r.fail("tensor '" + t.name + "' of shape " + formatShape(t.dims) +
                      " does not fit in the file (truncated)",
                  error);
  t.data.resize(elements);
  return r.read(t.data.data(), elements * sizeof(float), "tensor data", error);
}

bool writeTensorList(AtomicWriter &w, const std::vector<Tensor> &ts, std::string &error) {
  uint64_t count = ts.size();
  if (!w.writeValue(count, error))
    return false;
  for (const Tensor &t : ts)
    if (!writeTensorRecord(w, t, error))
      return false;
  return true;
}

bool readTensorList(Reader &r, std::vector<Tensor> &ts, std::string &error) {
  uint64_t count;
  if (!r.readValue(count, "the tensor count", error))
    return false;
  // Each record takes at least 8 bytes.
  if (count > r.remaining() / 8)
    return r.fail("tensor count " + std::to_string(count) +
                      " does not fit in the file (corrupt or truncated file)",
                  error);
  ts.clear();
  ts.resize(count);
  for (Tensor &t : ts)
    if (!readTensorRecord(r, t, error))
      return false;
  return true;
}

//===--- Whole files through zlib -----------------------------------------===//

bool readMaybeGzip(const std::string &path, std::vector<unsigned char> &bytes, std::string &error) {
  bytes.clear();
  if (isDirectory(path)) {
    error = "cannot open '" + path + "': it is a directory";
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot open '" + path + "': " + std::strerror(errno ? errno : ENOMEM);
    return false;
  }
  gzbuffer(f, 1 << 20);
  bytes.reserve(static_cast<size_t>(st.st_size));
  constexpr unsigned kChunk = 1u << 22;
  for (;;) {
    size_t old = bytes.size();
    bytes.resize(old + kChunk);
    int got = gzread(f, bytes.data() + old, kChunk);
    if (got < 0) {
      int code;
      const char *msg = gzerror(f, &code);
      error = "cannot read '" + path + "': " +
              (code == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg)) +
              " (corrupt or truncated file)";
      gzclose(f);
      bytes.clear();
      return false;
    }
    bytes.resize(old + static_cast<size_t>(got));
    if (got == 0)
      break;
  }
  int code;
  const char *msg = gzerror(f, &code);
  if (code != Z_OK) {
    error = "cannot read '" + path + "': " + msg + " (corrupt or truncated file)";
    gzclose(f);
    bytes.clear();
    return false;
  }
  gzclose(f);
  return true;
}

} // namespace mgs::rt::driver
