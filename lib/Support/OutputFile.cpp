//===- OutputFile.cpp - Writing a tool's output file safely ---------------===//

#include "mgs/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace llvm;

namespace mgs {

mlir::LogicalResult checkOutputPath(StringRef path, std::string &error, StringRef input) {
  if (path == "-")
    return mlir::success();
  if (!input.empty() && sys::fs::equivalent(input, path)) {
    error = "the output '" + path.str() + "' is the input model; name another with -o";
    return mlir::failure();
  }
  if (sys::fs::is_directory(path)) {
    error = "the output '" + path.str() + "' is a directory; name a file with -o";
    return mlir::failure();
  }
  StringRef dir = sys::path::parent_path(path);
  if (!dir.empty() && !sys::fs::is_directory(dir)) {
    error = "cannot write '" + path.str() + "': no directory '" + dir.str() + "'";
    return mlir::failure();
  }
  // A regular file is written beside its path (writeOutputFile): make sure a
  // file can be created there (not /proc, not a read-only mount) before the
  // work. A device or a pipe is written in place and left alone here.
  SmallString<256> target(path);
  if (sys::fs::is_symlink_file(path) && sys::fs::real_path(path, target))
    target = path;
  if (sys::fs::exists(target) && !sys::fs::is_regular_file(target))
    return mlir::success();
  SmallString<256> probe;
  int fd;
  if (std::error_code ec = sys::fs::createUniqueFile(target + ".probe-%%%%%%", fd, probe)) {
    StringRef targetDir = sys::path::parent_path(target);
    error = "cannot write '" + path.str() + "': cannot create a file in '" +
            (targetDir.empty() ? StringRef(".") : targetDir).str() + "': " + ec.message();
    return mlir::failure();
  }
  sys::Process::SafelyCloseFileDescriptor(fd);
  sys::fs::remove(probe);
  return mlir::success();
}

mlir::LogicalResult writeOutputFile(StringRef path, function_ref<void(raw_ostream &)> write,
                                    std::string &error) {
  auto fail = [&](std::error_code ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return mlir::failure();
  };
  // What the stream could not write is an error here, not the fatal error
  // raw_fd_ostream's destructor would raise.
  auto streamError = [](raw_fd_ostream &os) {
    std::error_code ec = os.error();
    os.clear_error();
    return ec;
  };
  if (path == "-") {
    write(outs());
    outs().flush();
    if (std::error_code ec = streamError(outs()))
      return fail(ec);
    return mlir::success();
  }
  // Through a link, the file it points to is written (the link stays).
  SmallString<256> target(path);
  if (sys::fs::is_symlink_file(path))
    if (std::error_code ec = sys::fs::real_path(path, target))
      return fail(ec);
  sys::fs::file_status status;
  if (!sys::fs::status(target, status) && !sys::fs::is_regular_file(status)) {
    // A device or a pipe (/dev/full, a FIFO): written in place, never
    // replaced or removed.
    std::error_code ec;
    raw_fd_ostream os(target, ec);
    if (ec)
      return fail(ec);
    write(os);
    os.close();
    if (std::error_code closeError = streamError(os))
      return fail(closeError);
    return mlir::success();
  }
  // A regular file is written beside its path and renamed over it: a failed
  // write (a full disk) leaves what was there before, and no partial file.
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(target + ".tmp-%%%%%%", sys::fs::all_read | sys::fs::all_write);
  if (!temp)
    return fail(errorToErrorCode(temp.takeError()));
  raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
  write(os);
  os.flush();
  if (std::error_code ec = streamError(os)) {
    consumeError(temp->discard());
    return fail(ec);
  }
  if (Error e = temp->keep(target))
    return fail(errorToErrorCode(std::move(e)));
  return mlir::success();
}

} // namespace mgs
