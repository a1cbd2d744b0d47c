//===- CommandLine.cpp - Focused --help for the mgs tools -----------------===//

#include "mgs/Support/CommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

void mgs::addVersionPrinter() {
  cl::AddExtraVersionPrinter([](raw_ostream &os) { os << "mgs version " MGS_VERSION "\n"; });
}

void mgs::showOnlyInHelp(cl::OptionCategory &category) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    StringRef name = entry.first;
    if (option->getOptionHiddenFlag() != cl::NotHidden ||
        is_contained(option->Categories, &category))
      continue;
    if (name == "help" || name == "help-list" || name == "version")
      continue;
    option->setHiddenFlag(cl::Hidden);
  }
}

std::string mgs::optionGivenTwice(cl::OptionCategory &category) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    // cl::opt is Optional (a list is ZeroOrMore): one value, which a second
    // occurrence would silently replace.
    if (is_contained(option->Categories, &category) &&
        option->getNumOccurrencesFlag() == cl::Optional && option->getNumOccurrences() > 1)
      return (entry.first.size() == 1 ? "-" : "--") + entry.first.str() + " given twice";
  }
  return "";
}
