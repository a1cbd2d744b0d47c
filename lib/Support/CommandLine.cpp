//===- CommandLine.cpp - Focused --help for the mgs tools -----------------===//

#include "mgs/Support/CommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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

std::string mgs::unknownOption(int argc, char **argv, cl::OptionCategory &category) {
  auto &options = cl::getRegisteredOptions();
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (arg.size() < 2 || arg[0] != '-')
      continue; // a positional argument
    StringRef name = arg.drop_front(arg.starts_with("--") ? 2 : 1);
    bool inlineValue = name.contains('=');
    name = name.take_until([](char c) { return c == '='; });
    if (name == "h")
      continue; // --help's alias, registered only while parsing (a default option)
    if (cl::Option *option = options.lookup(name)) {
      if (!inlineValue && option->getValueExpectedFlag() == cl::ValueRequired)
        ++i; // its value, whatever it looks like
      continue;
    }
    std::string nearest;
    unsigned best = std::max<unsigned>(2, name.size() / 4) + 1;
    for (auto &entry : options) {
      StringRef candidate = entry.first;
      bool own = (is_contained(entry.second->Categories, &category) &&
                  entry.second->getOptionHiddenFlag() == cl::NotHidden) ||
                 candidate == "help" || candidate == "version";
      if (!own)
        continue;
      if (unsigned d = name.edit_distance(candidate, true, best); d < best) {
        best = d;
        nearest = (candidate.size() == 1 ? "-" : "--") + candidate.str();
      }
    }
    return "unknown option '" + arg.take_until([](char c) { return c == '='; }).str() + "'" +
           (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)");
  }
  return "";
}
