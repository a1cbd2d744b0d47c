//===- FileIO.cpp - Binary files for the driver ---------------------------===//

#include "FileIO.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <signal.h>
#include <sys/mman.h>
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

Status listDirectory(const std::string &dir, std::vector<std::string> &names) {
  names.clear();
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return ioError("cannot read directory '" + dir + "': " + std::strerror(errno));
  while (const dirent *e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return Status::success();
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

namespace {
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}
} // namespace

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return a == b;
}

std::string runningExecutable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

Status resolveOutputFile(const std::string &path, std::string &resolved) {
  resolved = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      char *real = ::realpath(path.c_str(), nullptr);
      if (!real)
        return ioError("'" + path + "' is a link whose target cannot be resolved: " +
                       std::strerror(errno));
      resolved = real;
      std::free(real);
      if (::stat(resolved.c_str(), &st) != 0)
        return ioError("cannot write '" + resolved + "': " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
      return ioError("'" + path + "' is " + fileKind(st.st_mode) +
                     ": only a regular file is replaced by what is written");
  } else if (errno != ENOENT) {
    return ioError("cannot write '" + path + "': " + std::strerror(errno));
  }
  size_t slash = resolved.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : resolved.substr(0, slash);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return ioError("cannot write '" + resolved + "': " + std::strerror(errno));
  // access() says yes to root everywhere, also where nothing can be created
  // (/proc, a read-only mount): create a file beside it to be sure, before
  // the run whose result would be lost.
  // (Workers on several hosts sharing the folder may have equal PIDs: random
  // bits keep their probes apart.)
  std::string probe = resolved + ".probe." + std::to_string(::getpid()) + "." +
                      std::to_string(std::random_device{}());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return ioError("cannot write '" + resolved + "': cannot create a file in '" + dir +
                   "': " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return Status();
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

Status Reader::open(const std::string &path, const char *what) {
  path_ = path;
  kind_ = what;
  if (isDirectory(path))
    return ioError(openError(path, what, EISDIR));
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_)
    return ioError(openError(path, what, errno));
  struct stat st;
  if (::fstat(fileno(file_), &st) != 0)
    return ioError(openError(path, what, errno));
  size_ = static_cast<uint64_t>(st.st_size);
  return Status::success();
}

Status Reader::fail(const std::string &problem) const {
  return badInput(kind_ + " '" + path_ + "': " + problem);
}

Status Reader::read(void *dst, uint64_t bytes, const char *what) {
  if (bytes > remaining())
    return fail(std::string("truncated file (") + std::to_string(size_) + " bytes) while reading " +
                what + " at offset " + std::to_string(offset_));
  unsigned char *out = static_cast<unsigned char *>(dst);
  uint64_t done = 0;
  while (done < bytes) {
    size_t got = std::fread(out + done, 1, bytes - done, file_);
    if (got == 0)
      return ioError(kind_ + " '" + path_ + "': read error while reading " + what + ": " +
                     (std::ferror(file_) ? std::strerror(errno) : "unexpected end of file"));
    done += got;
  }
  offset_ += bytes;
  crc_ = crc32Of(crc_, out, bytes);
  return Status::success();
}

Status Reader::readCrc() {
  const uint32_t computed = crc_;
  uint32_t stored = 0;
  if (Status s = readValue(stored, "the CRC"); !s.ok())
    return s;
  if (stored != computed)
    return fail("corrupt: its CRC-32 does not match its contents (the file was changed after it "
                "was written)");
  return Status::success();
}

//===--- AtomicWriter -----------------------------------------------------===//

AtomicWriter::~AtomicWriter() { discard(); }

void AtomicWriter::open(const std::string &path) {
  if (Status s = resolveOutputFile(path, path_); !s.ok()) {
    status_ = s;
    return;
  }
  tmpPath_ = path_ + ".tmp." + std::to_string(::getpid());
  file_ = std::fopen(tmpPath_.c_str(), "wb");
  if (!file_)
    status_ = ioError("cannot write '" + path_ + "': " + std::strerror(errno));
}

void AtomicWriter::write(const void *src, uint64_t bytes) {
  if (!status_.ok())
    return;
  if (bytes && std::fwrite(src, 1, bytes, file_) != bytes) {
    status_ = ioError("cannot write '" + path_ + "': " + std::strerror(errno));
    return;
  }
  crc_ = crc32Of(crc_, src, bytes);
}

Status AtomicWriter::finish() {
  std::FILE *f = file_;
  file_ = nullptr;
  if (!status_.ok()) {
    if (f) {
      std::fclose(f);
      std::remove(tmpPath_.c_str());
    }
    return status_;
  }
  if (!f)
    return status_ = ioError("internal error: '" + path_ + "' written twice");
  bool ok = std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  int err = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    status_ = ioError("cannot write '" + path_ + "': " + std::strerror(err ? err : errno) +
                      " (the old file, if any, is unchanged)");
    std::remove(tmpPath_.c_str());
    return status_;
  }
  finished_ = true;
  return status_;
}

Status AtomicWriter::publish() {
  if (!status_.ok() || !finished_)
    return status_;
  finished_ = false;
  if (std::rename(tmpPath_.c_str(), path_.c_str()) != 0) {
    status_ =
        ioError("cannot write '" + path_ + "': renaming its temporary '" + tmpPath_ +
                "' over it: " + std::strerror(errno));
    std::remove(tmpPath_.c_str());
    return status_;
  }
  if (!syncParentDirectory(path_))
    status_ = ioError("cannot sync the folder of '" + path_ + "' after writing it: " +
                      std::strerror(errno));
  return status_;
}

void AtomicWriter::discard() {
  if (file_)
    std::fclose(file_);
  if (file_ || finished_)
    std::remove(tmpPath_.c_str());
  file_ = nullptr;
  finished_ = false;
}

Status AtomicWriter::commit() {
  if (Status s = finish(); !s.ok())
    return s;
  return publish();
}

bool syncParentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return false;
  // Some file systems cannot sync a folder (EINVAL): nothing more to do there.
  bool ok = ::fsync(fd) == 0 || errno == EINVAL;
  int err = errno;
  ::close(fd);
  errno = err;
  return ok;
}

//===--- Tensor records ---------------------------------------------------===//

void writeTensorRecord(AtomicWriter &w, const Tensor &t) {
  uint32_t nameLen = static_cast<uint32_t>(t.name.size());
  uint32_t rank = static_cast<uint32_t>(t.dims.size());
  w.writeValue(nameLen);
  w.write(t.name.data(), nameLen);
  w.writeValue(rank);
  w.write(t.dims.data(), rank * sizeof(int64_t));
  w.write(t.data.data(), t.data.size() * sizeof(float));
}

Status readTensorRecord(Reader &r, Tensor &t) {
  uint32_t nameLen;
  if (Status s = r.readValue(nameLen, "a tensor name length"); !s.ok())
    return s;
  if (nameLen > r.remaining() || nameLen > (1u << 20))
    return r.fail("bad tensor name length " + std::to_string(nameLen) +
                  " (corrupt or truncated file)");
  t.name.resize(nameLen);
  if (Status s = r.read(t.name.data(), nameLen, "a tensor name"); !s.ok())
    return s;
  uint32_t rank;
  if (Status s = r.readValue(rank, "a tensor rank"); !s.ok())
    return s;
  if (rank > 64)
    return r.fail("tensor '" + t.name + "' has rank " + std::to_string(rank) + " (corrupt file)");
  t.dims.resize(rank);
  if (Status s = r.read(t.dims.data(), rank * sizeof(int64_t), "tensor dimensions"); !s.ok())
    return s;
  uint64_t elements = 1;
  for (int64_t d : t.dims) {
    if (d < 0)
      return r.fail("tensor '" + t.name + "' has a negative dimension (corrupt file)");
    if (d && elements > r.remaining() / static_cast<uint64_t>(d))
      return r.fail("tensor '" + t.name + "' of shape " + formatShape(t.dims) +
                    " does not fit in the file (truncated)");
    elements *= static_cast<uint64_t>(d);
  }
  if (elements * sizeof(float) > r.remaining())
    return r.fail("tensor '" + t.name + "' of shape " + formatShape(t.dims) +
                  " does not fit in the file (truncated)");
  t.data.resize(elements);
  return r.read(t.data.data(), elements * sizeof(float), "tensor data");
}

void writeTensorList(AtomicWriter &w, const std::vector<Tensor> &ts) {
  uint64_t count = ts.size();
  w.writeValue(count);
  for (const Tensor &t : ts)
    writeTensorRecord(w, t);
}

Status readTensorList(Reader &r, std::vector<Tensor> &ts) {
  uint64_t count;
  if (Status s = r.readValue(count, "the tensor count"); !s.ok())
    return s;
  // Each record takes at least 8 bytes.
  if (count > r.remaining() / 8)
    return r.fail("tensor count " + std::to_string(count) +
                  " does not fit in the file (corrupt or truncated file)");
  ts.clear();
  ts.resize(count);
  for (Tensor &t : ts) {
    if (Status s = readTensorRecord(r, t); !s.ok())
      return s;
    // A NaN is a diverged run's (or a corrupt file's): training from it would
    // only go on producing NaN. An infinity may be a buffer's (an attention
    // mask's -inf): matchParams refuses it in what is trained.
    for (size_t i = 0; i < t.data.size(); ++i)
      if (std::isnan(t.data[i])) {
        char value[32];
        std::snprintf(value, sizeof value, "%g", static_cast<double>(t.data[i]));
        return r.fail("tensor '" + t.name + "' holds " + value + " at element " +
                      std::to_string(i) + " (not finite: a diverged or corrupt file)");
      }
  }
  return Status::success();
}

//===--- Whole files through zlib -----------------------------------------===//

Status readMaybeGzip(const std::string &path, std::vector<unsigned char> &bytes) {
  bytes.clear();
  if (isDirectory(path))
    return ioError("cannot open '" + path + "': it is a directory");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ioError("cannot open '" + path + "': " + std::strerror(errno));
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    return ioError("cannot open '" + path + "': " + std::strerror(errno ? errno : ENOMEM));
  // zlib's buffers (this size in, twice it out) and the chunks read grow with
  // the file: a small file costs no megabytes to allocate and clear, a large
  // one reads in 4 MiB steps.
  gzbuffer(f, static_cast<unsigned>(std::clamp<off_t>(st.st_size, 1 << 13, 1 << 20)));
  bytes.reserve(static_cast<size_t>(st.st_size));
  constexpr size_t kMinChunk = size_t(1) << 12, kMaxChunk = size_t(1) << 22;
  for (;;) {
    size_t old = bytes.size();
    size_t chunk = old == 0 ? static_cast<size_t>(st.st_size) + 1 : old; // +1: sees the end
    chunk = std::clamp(chunk, kMinChunk, kMaxChunk);
    bytes.resize(old + chunk);
    int got = gzread(f, bytes.data() + old, static_cast<unsigned>(chunk));
    if (got < 0) {
      int code;
      const char *msg = gzerror(f, &code);
      Status s = Status::error(
          code == Z_ERRNO ? MGSRT_ERROR_IO : MGSRT_ERROR_INVALID_ARGUMENT,
          "cannot read '" + path +
              "': " + (code == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg)) +
              " (corrupt or truncated file)");
      gzclose(f);
      bytes.clear();
      return s;
    }
    bytes.resize(old + static_cast<size_t>(got));
    if (got == 0)
      break;
  }
  int code;
  const char *msg = gzerror(f, &code);
  if (code != Z_OK) {
    Status s = badInput("cannot read '" + path + "': " + msg + " (corrupt or truncated file)");
    gzclose(f);
    bytes.clear();
    return s;
  }
  gzclose(f);
  return Status::success();
}

//===--- Mapped files and SIGBUS ------------------------------------------===//
//
// A page of a mapping past the end of its file (truncated, or rewritten
// shorter, while the run reads it) faults with SIGBUS. Its handler tells the
// user which file changed, and how to avoid it, rather than a bare "Bus
// error": the mappings are registered here with the message's parts, and the
// handler only reads them (async-signal-safe: atomics, write(2), _exit).

namespace {

struct MappedFile {
  std::atomic<const unsigned char *> begin{nullptr};
  std::atomic<size_t> size{0};
  char path[512] = {};
};
constexpr int kMaxMappedFiles = 32;
MappedFile mappedFiles[kMaxMappedFiles];
char faultPrefix[256] = "mgs-model: error: ";
struct sigaction previousBusAction;

void appendText(char *buffer, size_t &length, size_t capacity, const char *text) {
  for (; *text && length + 1 < capacity; ++text)
    buffer[length++] = *text;
}

void appendNumber(char *buffer, size_t &length, size_t capacity, uint64_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value);
  while (n > 0 && length + 1 < capacity)
    buffer[length++] = digits[--n];
}

void onBusError(int signal, siginfo_t *info, void *) {
  const auto *at = static_cast<const unsigned char *>(info->si_addr);
  for (const MappedFile &file : mappedFiles) {
    const unsigned char *begin = file.begin.load(std::memory_order_acquire);
    const size_t size = file.size.load(std::memory_order_relaxed);
    if (!begin || at < begin || at >= begin + size)
      continue;
    char message[1536];
    size_t length = 0;
    const size_t capacity = sizeof(message);
    appendText(message, length, capacity, faultPrefix);
    appendText(message, length, capacity, "the data file '");
    appendText(message, length, capacity, file.path);
    appendText(message, length, capacity,
               "' shrank while this run reads it in place (truncated or rewritten): byte ");
    appendNumber(message, length, capacity, static_cast<uint64_t>(at - begin));
    appendText(message, length, capacity, " of the ");
    appendNumber(message, length, capacity, size);
    appendText(message, length, capacity,
               " it had is gone. Replace a data file by writing a new one and renaming it over "
               "the old (a run keeps the file it opened), or read the data whole with "
               "MGSRT_READ_DATA=1\n");
    ssize_t ignored = ::write(2, message, length);
    (void)ignored;
    ::_exit(1);
  }
  // Not a data file's fault: the action before ours, when the instruction
  // faults again on return.
  ::sigaction(signal, &previousBusAction, nullptr);
}

/// Registers a mapping for onBusError (installed with the first); false when
/// the table is full.
bool registerMapping(const unsigned char *begin, size_t size, const std::string &path) {
  static const bool installed = [] {
    struct sigaction action = {};
    action.sa_sigaction = onBusError;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, &previousBusAction) == 0;
  }();
  if (!installed)
    return false;
  for (MappedFile &file : mappedFiles) {
    if (file.begin.load(std::memory_order_relaxed))
      continue;
    const size_t n = std::min(path.size(), sizeof(file.path) - 1);
    std::memcpy(file.path, path.data(), n);
    file.path[n] = '\0';
    file.size.store(size, std::memory_order_relaxed);
    file.begin.store(begin, std::memory_order_release);
    return true;
  }
  return false;
}

void unregisterMapping(const void *begin) {
  for (MappedFile &file : mappedFiles)
    if (file.begin.load(std::memory_order_relaxed) == begin)
      file.begin.store(nullptr, std::memory_order_release);
}

} // namespace

void setDataFaultPrefix(const std::string &prefix) {
  const size_t n = std::min(prefix.size(), sizeof(faultPrefix) - 1);
  std::memcpy(faultPrefix, prefix.data(), n);
  faultPrefix[n] = '\0';
}

Status mapOrRead(const std::string &path, FileBytes &bytes) {
  bytes = FileBytes();
  auto readWhole = [&] {
    auto whole = std::make_shared<std::vector<unsigned char>>();
    Status s = readMaybeGzip(path, *whole);
    bytes.data = whole->data();
    bytes.size = whole->size();
    bytes.owner = std::move(whole);
    return s;
  };
  const char *readData = std::getenv("MGSRT_READ_DATA");
  if (readData && std::strcmp(readData, "1") == 0)
    return readWhole();
  // Only a regular file is opened here (a FIFO is read once, whole).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2)
    return readWhole(); // its errors name the file
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2) {
    if (fd >= 0)
      ::close(fd);
    return readWhole();
  }
  unsigned char magic[2] = {};
  const bool gzip = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  void *at = gzip ? MAP_FAILED
                  : ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd); // the mapping stays
  if (at == MAP_FAILED)
    return readWhole();
  const size_t size = static_cast<size_t>(st.st_size);
  if (!registerMapping(static_cast<const unsigned char *>(at), size, path)) {
    ::munmap(at, size);
    return readWhole();
  }
  bytes.owner = std::shared_ptr<const void>(at, [size](const void *p) {
    unregisterMapping(p);
    ::munmap(const_cast<void *>(p), size);
  });
  bytes.data = static_cast<const unsigned char *>(at);
  bytes.size = size;
  bytes.mapped = true;
  return Status::success();
}

} // namespace mgs::rt::driver
