//===- Buffers.h - Initializers that are not trained ------------*- C++ -*-===//
//
// An ONNX file does not say which FLOAT initializers are a model's buffers
// (a causal mask, position ids) rather than its weights. The importer makes
// every FLOAT initializer a parameter except those this analysis finds: the
// ones that reach the graph's outputs only through inputs that carry no
// gradient (a Where's condition, a Gather's indices, a shape, a comparison).
// Those are constants, as integer and BOOL initializers always are; the rest
// can be frozen with mgsc --freeze.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_BUFFERS_H
#define MGS_ONNX_IMPORT_BUFFERS_H

#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

namespace mgs::onnx_import {

/// The FLOAT initializers of `graph` whose every use, directly or through
/// nodes whose outputs are themselves used only so, is an input that carries
/// no gradient.
llvm::StringSet<> nonDifferentiableInitializers(const onnx::GraphProto &graph);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_BUFFERS_H
