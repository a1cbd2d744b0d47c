//===- CommandLine.h - Focused --help for the mgs tools ---------*- C++ -*-===//

#ifndef MGS_SUPPORT_COMMANDLINE_H
#define MGS_SUPPORT_COMMANDLINE_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mgs {

/// Keeps --help to the tool's own options (those in `category`) and LLVM's
/// generic ones (--help, --version): every other registered option (LLVM's
/// code generator flags, MLIR's printing and pass-manager options) moves to
/// --help-hidden and still parses. Unlike llvm::cl::HideUnrelatedOptions,
/// which hides them from --help-hidden too. Call before parsing.
void showOnlyInHelp(llvm::cl::OptionCategory &category);

/// --version prints "mgs version X" after LLVM's own lines. Call before
/// parsing.
void addVersionPrinter();

/// "--NAME given twice" for the first option of `category` that takes one
/// value and was given more than once (LLVM keeps the last silently); empty
/// when none was. Call after parsing.
std::string optionGivenTwice(llvm::cl::OptionCategory &category);

} // namespace mgs

#endif // MGS_SUPPORT_COMMANDLINE_H
