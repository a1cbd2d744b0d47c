//===- Passes.h - mgs conversions -------------------------------*- C++ -*-===//

#ifndef MGS_CONVERSION_PASSES_H
#define MGS_CONVERSION_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace mgs {

#define GEN_PASS_DECL
#include "mgs/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mgs/Conversion/Passes.h.inc"

} // namespace mgs

#endif // MGS_CONVERSION_PASSES_H
