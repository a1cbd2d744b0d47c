//===- OutputFile.h - Writing a tool's output file safely -------*- C++ -*-===//
//
// The tools' output files: checked before the long work that produces them,
// and written so that a failed write (a full disk, /dev/full) is an error
// naming the file rather than LLVM's fatal "IO failure on output stream".
//
//===----------------------------------------------------------------------===//

#ifndef MGS_SUPPORT_OUTPUTFILE_H
#define MGS_SUPPORT_OUTPUTFILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mgs {

/// Succeeds when a file can be created at `path` ("-" is stdout): not the
/// `input` file (when given), not a directory, and a file can be created in
/// its directory. Otherwise `error` says which.
mlir::LogicalResult checkOutputPath(llvm::StringRef path, std::string &error,
                                    llvm::StringRef input = {});

/// Writes `path` ("-": stdout) with `write`. A regular file is written to a
/// temporary file beside it and renamed over it, so a failed write leaves the
/// old file; a device or pipe (/dev/full) is written in place. On an open,
/// write or rename error, `error` is "cannot write 'PATH': REASON".
mlir::LogicalResult writeOutputFile(llvm::StringRef path,
                                    llvm::function_ref<void(llvm::raw_ostream &)> write,
                                    std::string &error);

} // namespace mgs

#endif // MGS_SUPPORT_OUTPUTFILE_H
