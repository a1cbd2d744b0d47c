//===- OnnxNodes.cpp - ONNX nodes read and built before the walk ----------===//
//
// OnnxNodes.h.
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cstdint>
#include <limits>

using namespace llvm;

namespace mgs::onnx_import {

bool inDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node, StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

onnx::AttributeProto *findAttribute(onnx::NodeProto &node, StringRef name) {
  return const_cast<onnx::AttributeProto *>(
      findAttribute(static_cast<const onnx::NodeProto &>(node), name));
}

int64_t intAttribute(const onnx::NodeProto &node, StringRef name, int64_t otherwise) {
  const onnx::AttributeProto *a = findAttribute(node, name);
  return a ? a->i() : otherwise;
}

std::vector<int64_t> intsAttribute(const onnx::NodeProto &node, StringRef name, size_t count,
                                   int64_t fill) {
  if (const onnx::AttributeProto *a = findAttribute(node, name))
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  return std::vector<int64_t>(count, fill);
}

bool isReshapeOnly(const onnx::NodeProto &node) {
  return node.input_size() >= 1 && node.output_size() >= 1 &&
         llvm::is_contained({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"},
                            node.op_type());
}

bool isOrderComparison(llvm::StringRef op) {
  return op == "Less" || op == "LessOrEqual" || op == "Greater" || op == "GreaterOrEqual";
}

/// A tensor of a narrow integer dtype (`type`) as int64 values: raw_data
/// little-endian, else int32_data (8 and 16 bits) or uint64_data (UINT32,
/// UINT64); none for a UINT64 past int64's range or data of the wrong size.
std::optional<NarrowInt> narrowIntType(int dtype) {
  switch (dtype) {
  case onnx::TensorProto::UINT8:
    return NarrowInt{8, false};
  case onnx::TensorProto::INT8:
    return NarrowInt{8, true};
  case onnx::TensorProto::UINT16:
    return NarrowInt{16, false};
  case onnx::TensorProto::INT16:
    return NarrowInt{16, true};
  case onnx::TensorProto::UINT32:
    return NarrowInt{32, false};
  case onnx::TensorProto::UINT64:
    return NarrowInt{64, false};
  default:
    return std::nullopt;
  }
}

static std::optional<std::vector<int64_t>> narrowInts(const onnx::TensorProto &t, NarrowInt type) {
  const bool isSigned = type.isSigned;
  const size_t bytes = type.bits / 8;
  int64_t count = 1;
  for (int64_t d : t.dims())
    count *= d;
  std::vector<int64_t> out;
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    if (raw.size() != static_cast<size_t>(count) * bytes)
      return std::nullopt;
    for (size_t at = 0; at < raw.size(); at += bytes) {
      uint64_t u = 0;
      for (size_t k = 0; k < bytes; ++k)
        u |= uint64_t(static_cast<unsigned char>(raw[at + k])) << (8 * k);
      if (isSigned && (u >> (8 * bytes - 1)))
        out.push_back(static_cast<int64_t>(u) - (int64_t(1) << (8 * bytes)));
      else if (u > uint64_t(std::numeric_limits<int64_t>::max()))
        return std::nullopt;
      else
        out.push_back(static_cast<int64_t>(u));
    }
    return out;
  }
  if (bytes <= 2) {
    out.assign(t.int32_data().begin(), t.int32_data().end());
  } else {
    for (uint64_t u : t.uint64_data()) {
      if (u > uint64_t(std::numeric_limits<int64_t>::max()))
        return std::nullopt;
      out.push_back(static_cast<int64_t>(u));
    }
  }
  if (static_cast<int64_t>(out.size()) != count)
    return std::nullopt;
  return out;
}

std::optional<std::vector<int64_t>> tensorInts(const onnx::TensorProto *t) {
  if (!t)
    return std::nullopt;
  try {
    switch (t->data_type()) {
    case onnx::TensorProto::INT64:
      return onnx::ParseData<int64_t>(t);
    case onnx::TensorProto::INT32: {
      std::vector<int32_t> v = onnx::ParseData<int32_t>(t);
      return std::vector<int64_t>(v.begin(), v.end());
    }
    case onnx::TensorProto::BOOL: {
      // One byte a value in raw_data, else one int32 a value.
      std::vector<int64_t> out;
      if (t->has_raw_data())
        out.assign(t->raw_data().begin(), t->raw_data().end());
      else
        out.assign(t->int32_data().begin(), t->int32_data().end());
      for (int64_t &v : out)
        v = v != 0;
      return out;
    }
    default:
      if (std::optional<NarrowInt> narrow = narrowIntType(t->data_type()))
        return narrowInts(*t, *narrow);
      return std::nullopt;
    }
  } catch (const std::exception &) {
    return std::nullopt; // ParseData's: data of the wrong size
  }
}

onnx::NodeProto makeNode(StringRef op, const std::string &name, ArrayRef<std::string> inputs,
                         const std::string &output) {
  onnx::NodeProto node;
  node.set_op_type(op.str());
  node.set_name(name);
  for (const std::string &in : inputs)
    node.add_input(in);
  node.add_output(output);
  return node;
}

onnx::NodeProto *appendNode(onnx::GraphProto &graph, StringRef op, const std::string &name,
                            ArrayRef<std::string> inputs, const std::string &output) {
  onnx::NodeProto *node = graph.add_node();
  *node = makeNode(op, name, inputs, output);
  return node;
}

onnx::AttributeProto &addIntAttribute(onnx::NodeProto &node, StringRef name, int64_t value) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
  return *a;
}

onnx::AttributeProto &addIntsAttribute(onnx::NodeProto &node, StringRef name,
                                       ArrayRef<int64_t> values) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    a->add_ints(v);
  return *a;
}

onnx::TensorProto &addTensorAttribute(onnx::NodeProto &node, StringRef name) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name.str());
  a->set_type(onnx::AttributeProto::TENSOR);
  return *a->mutable_t();
}

onnx::TensorProto &appendConstant(onnx::GraphProto &graph, const std::string &name,
                                  const std::string &out) {
  return addTensorAttribute(*appendNode(graph, "Constant", name, {}, out), "value");
}

void appendInt64Constant(onnx::GraphProto &graph, const std::string &name, ArrayRef<int64_t> values,
                         const std::string &out) {
  onnx::TensorProto &t = appendConstant(graph, name, out);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t d : values)
    t.add_int64_data(d);
}

void appendScalarConstant(onnx::GraphProto &graph, const std::string &name, int64_t value,
                          onnx::TensorProto::DataType type, const std::string &out) {
  onnx::TensorProto &t = appendConstant(graph, name, out);
  t.set_data_type(type);
  if (type == onnx::TensorProto::INT64)
    t.add_int64_data(value);
  else // INT32 and BOOL: int32_data
    t.add_int32_data(type == onnx::TensorProto::BOOL ? value != 0 : static_cast<int32_t>(value));
}

void appendTranspose(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                     ArrayRef<int64_t> perm, const std::string &out) {
  addIntsAttribute(*appendNode(graph, "Transpose", name, {in}, out), "perm", perm);
}

void appendReshape(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                   ArrayRef<int64_t> shape, const std::string &out) {
  appendInt64Constant(graph, name + "Shape", shape, out + "_shape");
  appendNode(graph, "Reshape", name, {in, out + "_shape"}, out);
}

namespace {
/// Appends `op`(in) over `axes` -> out: the axes an input (a Constant before
/// the node that reads it) from opset 13 on, an attribute before.
onnx::NodeProto *appendWithAxes(onnx::GraphProto &graph, StringRef op, const std::string &name,
                                const std::string &in, ArrayRef<int64_t> axes,
                                const std::string &out, int64_t opset) {
  if (opset >= 13) {
    appendInt64Constant(graph, name + "Axes", axes, out + "_axes");
    return appendNode(graph, op, name, {in, out + "_axes"}, out);
  }
  onnx::NodeProto *node = appendNode(graph, op, name, {in}, out);
  addIntsAttribute(*node, "axes", axes);
  return node;
}
} // namespace

void appendUnsqueeze(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                     int64_t axis, const std::string &out, int64_t opset) {
  appendWithAxes(graph, "Unsqueeze", name, in, {axis}, out, opset);
}

void appendReduceSum(onnx::GraphProto &graph, const std::string &name, const std::string &in,
                     ArrayRef<int64_t> axes, const std::string &out, int64_t opset) {
  addIntAttribute(*appendWithAxes(graph, "ReduceSum", name, in, axes, out, opset), "keepdims", 0);
}

} // namespace mgs::onnx_import
