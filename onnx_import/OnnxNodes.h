//===- OnnxNodes.h - ONNX nodes read and built before the walk --*- C++ -*-===//
//
// The helpers the rewrites of the ONNX model before the graph walk share
// (Prepare.cpp, Einsum.cpp, Loops.cpp, PoolCeilMode.cpp, InputBindings.cpp):
// reading a node's attributes and a constant's integers, and building nodes
// with the attributes ONNX's ops take. Internal to onnx_import.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_ONNXNODES_H
#define MGS_ONNX_IMPORT_ONNXNODES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mgs::onnx_import {

/// Whether `node` is an op of ONNX's default domain ("" or "ai.onnx").
bool inDefaultDomain(const onnx::NodeProto &node);

/// The attribute `name` of `node`, or null.
const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node, llvm::StringRef name);

/// The attribute `name` of `node`, to change, or null.
onnx::AttributeProto *findAttribute(onnx::NodeProto &node, llvm::StringRef name);

/// The INT attribute `name` of `node`, or `otherwise` when it has none.
int64_t intAttribute(const onnx::NodeProto &node, llvm::StringRef name, int64_t otherwise);

/// The INTS attribute `name` of `node`, or `count` values `fill` when it has
/// none (a window op's strides, dilations, pads).
std::vector<int64_t> intsAttribute(const onnx::NodeProto &node, llvm::StringRef name, size_t count,
                                   int64_t fill);

/// Whether `node` only changes the shape of its input 0 (Reshape, Flatten,
/// Squeeze, Unsqueeze, Identity): token ids stay token ids through it.
bool isReshapeOnly(const onnx::NodeProto &node);

/// Whether `op` orders two values (Less, LessOrEqual, Greater,
/// GreaterOrEqual): a uniform draw compared so starts a dropout mask.
bool isOrderComparison(llvm::StringRef op);

/// A narrow integer dtype's width and sign: UINT8, INT8, UINT16, INT16,
/// UINT32 and UINT64 (those PyTorch 2.x's exporter writes beside INT64 and
/// INT32); none for any other dtype.
struct NarrowInt {
  int bits;
  bool isSigned;
};
std::optional<NarrowInt> narrowIntType(int dtype);

/// The integers a tensor of an integer dtype holds (INT64, INT32, and the
/// 8-, 16-bit and unsigned ones PyTorch 2.x's exporter writes), or a BOOL
/// tensor's as 0 and 1; none for a null tensor, another dtype, a UINT64 past
/// int64's range, or data of the wrong size (which the importer reports where
/// it reads the tensor).
std::optional<std::vector<int64_t>> tensorInts(const onnx::TensorProto *t);

/// A node `op` named `name`, reading `inputs`, writing `output`.
onnx::NodeProto makeNode(llvm::StringRef op, const std::string &name,
                         llvm::ArrayRef<std::string> inputs, const std::string &output);

/// makeNode appended to `graph`; returns the node, for its attributes.
onnx::NodeProto *appendNode(onnx::GraphProto &graph, llvm::StringRef op, const std::string &name,
                            llvm::ArrayRef<std::string> inputs, const std::string &output);

/// Adds the INT attribute `name` = `value` to `node`; returns it.
onnx::AttributeProto &addIntAttribute(onnx::NodeProto &node, llvm::StringRef name, int64_t value);

/// Adds the INTS attribute `name` = `values` to `node`; returns it.
onnx::AttributeProto &addIntsAttribute(onnx::NodeProto &node, llvm::StringRef name, llvm::ArrayRef<int64_t> values);

/// Adds an empty TENSOR attribute `name` to `node` and returns its tensor.
onnx::TensorProto &addTensorAttribute(onnx::NodeProto &node, llvm::StringRef name);

/// Appends a Constant node `name` -> out and returns its value, to fill.
onnx::TensorProto &appendConstant(onnx::GraphProto &graph, const std::string &name,
                                  const std::string &out);

/// Appends a Constant node `name` of the INT64 vector `values` -> out.
void appendInt64Constant(onnx::GraphProto &graph, const std::string &name,
                         llvm::ArrayRef<int64_t> values, const std::string &out);

/// Appends a Constant node `name` of the scalar `value` of dtype `type`
/// (INT64, INT32 or BOOL) -> out.
void appendScalarConstant(onnx::GraphProto &graph, const std::string &name, int64_t value,
                          onnx::TensorProto::DataType type, const std::string &out);

/// Appends Transpose(in, perm) -> out to `graph`, the node named `name`.
void appendTranspose(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                     llvm::ArrayRef<int64_t> perm, const std::string &out);

/// Appends Reshape(in, shape) -> out to `graph`, the node named `name`, its
/// shape a Constant node `name`Shape (output `out`_shape).
void appendReshape(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                   llvm::ArrayRef<int64_t> shape, const std::string &out);

/// Appends Unsqueeze(in) at `axis` -> out; the axes an input (a Constant
/// node `name`Axes before it) from opset 13 on, an attribute before.
void appendUnsqueeze(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                     int64_t axis, const std::string &out, int64_t opset);

/// Appends ReduceSum(in) over `axes` (keepdims 0) -> out; the axes an input
/// from opset 13 on, as for appendUnsqueeze.
void appendReduceSum(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                     llvm::ArrayRef<int64_t> axes, const std::string &out, int64_t opset);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_ONNXNODES_H
