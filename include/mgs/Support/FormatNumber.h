//===- FormatNumber.h - A number as a user gave it ---------------*- C++ -*-===//
//
// Messages quote option values as the user would write them: "%.9g" keeps
// 1.0000001 apart from 1 (std::to_string prints 1.000000) and prints 0.001
// as 0.001 (MLIR's diagnostics print 1.000000e-03).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_SUPPORT_FORMATNUMBER_H
#define MGS_SUPPORT_FORMATNUMBER_H

#include <cstdio>
#include <string>

namespace mgs {

inline std::string formatNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

} // namespace mgs

#endif // MGS_SUPPORT_FORMATNUMBER_H
