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

/// "unknown option '--X' (did you mean '--Y'?)" for the first argument of
/// argv (before a "--") that names no registered option, suggesting the
/// nearest option of `category` (or --help, --version) when one is near;
/// empty when every option is known. The values of options that take one
/// are skipped (--ignore-index -100). Call before parsing: LLVM's own
/// message would go on to count the misspelled option's value as a stray
/// positional argument.
std::string unknownOption(int argc, char **argv, llvm::cl::OptionCategory &category);

/// "--NAME given twice" for the first option of `category` that takes one
/// value and was given more than once (LLVM keeps the last silently); empty
/// when none was. Call after parsing.
std::string optionGivenTwice(llvm::cl::OptionCategory &category);

} // namespace mgs

#endif // MGS_SUPPORT_COMMANDLINE_H
