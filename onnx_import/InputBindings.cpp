//===- InputBindings.cpp - --dim and --bind-input -------------------------===//
//
// What a user's export leaves to the caller beside the samples: symbolic
// dimensions other than the batch (a sequence length), and graph inputs that
// the training executable does not feed (it feeds one: the samples). An
// export of a Hugging Face model takes input_ids, attention_mask and often
// token_type_ids; --bind-input gives the others their values in the graph,
// as nodes computed from the ids, and the importer goes on as if the model
// had built them in its forward (RuntimeMask.cpp follows such a mask).
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"
#include "OnnxNodes.h"
#include "Prepare.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace mgs::onnx_import {

namespace {

/// Parses a finite number; `what` names it in the error.
std::optional<std::string> parseNumber(StringRef text, double &value, StringRef what) {
  text = text.trim();
  if (text.empty() || text.getAsDouble(value) || !std::isfinite(value))
    return llvm::formatv("{0} '{1}' is not a finite number", what, text).str();
  return std::nullopt;
}

bool isIdentifier(StringRef name) { return !name.empty() && name.trim() == name; }

/// A value as it was given: an integer without decimals.
std::string formatValue(double value) {
  if (value == std::trunc(value) && std::abs(value) < 1e18)
    return std::to_string(static_cast<int64_t>(value));
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string describe(const InputBinding &b) {
  std::string value = formatValue(b.value);
  if (b.other.empty())
    return b.name + "=" + value;
  return b.name + "=" + b.other + (b.equal ? "==" : "!=") + value;
}

/// The graph inputs that are not initializers (the data), by position.
SmallVector<int> dataInputs(const onnx::GraphProto &graph) {
  llvm::StringSet<> inits;
  for (const auto &init : graph.initializer())
    inits.insert(init.name());
  SmallVector<int> inputs;
  for (int i = 0; i < graph.input_size(); ++i)
    if (!inits.contains(graph.input(i).name()))
      inputs.push_back(i);
  return inputs;
}

std::string quotedList(const onnx::GraphProto &graph, ArrayRef<int> inputs) {
  std::string list;
  for (int i : inputs)
    list += (list.empty() ? "'" : ", '") + graph.input(i).name() + "'";
  return list.empty() ? "none" : list;
}

/// Whether `value` is one of dtype's values (integers exactly, BOOL 0 or 1).
bool representable(double value, int dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    return true;
  case onnx::TensorProto::BOOL:
    return value == 0 || value == 1;
  case onnx::TensorProto::INT32:
    return value == std::trunc(value) && std::abs(value) <= 2147483647.0;
  case onnx::TensorProto::INT64:
    return value == std::trunc(value) && std::abs(value) <= 9007199254740992.0; // 2^53
  default:
    return false;
  }
}

/// A one-element tensor of `dtype` holding `value` (rank 0, or rank 1 for
/// ConstantOfShape's value).
onnx::TensorProto scalar(int dtype, double value, bool rank1) {
  onnx::TensorProto t;
  t.set_data_type(dtype);
  if (rank1)
    t.add_dims(1);
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    t.add_float_data(static_cast<float>(value));
    break;
  case onnx::TensorProto::INT64:
    t.add_int64_data(static_cast<int64_t>(value));
    break;
  default: // INT32, BOOL
    t.add_int32_data(static_cast<int32_t>(value));
    break;
  }
  return t;
}

std::optional<std::string> parseDimOption(StringRef spec, std::pair<std::string, int64_t> &dim) {
  auto [name, value] = spec.split('=');
  if (!spec.contains('=') || !isIdentifier(name))
    return "expected NAME=N (a symbolic dimension's name and its size), got '" + spec.str() + "'";
  int64_t n = 0;
  if (value.trim().getAsInteger(10, n) || n < 1 || n > kMaxBatchSize)
    return llvm::formatv("'{0}': the size must be an integer from 1 to {1}, got '{2}'", spec,
                         kMaxBatchSize, value)
        .str();
  dim = {name.str(), n};
  return std::nullopt;
}

std::optional<std::string> parseBindInputOption(StringRef spec, InputBinding &binding) {
  auto [name, rhs] = spec.split('=');
  if (!spec.contains('=') || !isIdentifier(name) || rhs.empty())
    return "expected NAME=VALUE, NAME=INPUT!=VALUE or NAME=INPUT==VALUE, got '" + spec.str() + "'";
  binding = InputBinding{name.str(), "", false, 0};
  StringRef number = rhs;
  if (size_t at = rhs.find("!="); at != StringRef::npos) {
    binding.other = rhs.take_front(at).str();
    number = rhs.drop_front(at + 2);
  } else if (size_t at = rhs.find("=="); at != StringRef::npos) {
    binding.other = rhs.take_front(at).str();
    binding.equal = true;
    number = rhs.drop_front(at + 2);
  }
  if (rhs.size() != number.size() && !isIdentifier(binding.other))
    return "'" + spec.str() + "': no input named before the comparison";
  if (auto error = parseNumber(number, binding.value, "'" + spec.str() + "': the value"))
    return error;
  return std::nullopt;
}

} // namespace

std::optional<std::string> parseInputOptions(ArrayRef<std::string> dimSpecs,
                                             ArrayRef<std::string> bindSpecs,
                                             ImportOptions &options) {
  for (const std::string &spec : dimSpecs) {
    std::pair<std::string, int64_t> dim;
    if (auto error = parseDimOption(spec, dim))
      return "--dim: " + *error;
    options.dims.push_back(std::move(dim));
  }
  for (const std::string &spec : bindSpecs) {
    InputBinding binding;
    if (auto error = parseBindInputOption(spec, binding))
      return "--bind-input: " + *error;
    options.bindings.push_back(std::move(binding));
  }
  return std::nullopt;
}

LogicalResult setNamedDims(onnx::ModelProto &model,
                           ArrayRef<std::pair<std::string, int64_t>> dims, Location loc) {
  onnx::GraphProto *graph = model.mutable_graph();
  SmallVector<int> inputs = dataInputs(*graph);
  for (const auto &[name, size] : dims) {
    int set = 0;
    std::string symbolic;
    llvm::StringSet<> listed;
    for (int i : inputs) {
      auto *type = graph->mutable_input(i)->mutable_type();
      if (!type->has_tensor_type() || !type->tensor_type().has_shape())
        continue;
      for (auto &dim : *type->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (!dim.has_dim_param())
          continue;
        if (dim.dim_param() == name) {
          dim.clear_dim_param();
          dim.set_dim_value(size);
          ++set;
        } else if (listed.insert(dim.dim_param()).second) {
          symbolic += (symbolic.empty() ? "'" : ", '") + dim.dim_param() + "'";
        }
      }
    }
    if (!set)
      return emitError(loc) << "--dim " << name << "=" << size
                            << ": no graph input has a dimension named '" << name << "' ("
                            << (symbolic.empty() ? "they have no other symbolic dimensions"
                                                 : "their symbolic dimensions: " + symbolic)
                            << ")";
  }
  if (!dims.empty()) {
    graph->clear_value_info();
    for (auto &vi : *graph->mutable_output())
      if (vi.type().has_tensor_type())
        vi.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return success();
}

LogicalResult bindInputs(onnx::ModelProto &model, ArrayRef<InputBinding> bindings,
                         Location loc) {
  if (bindings.empty())
    return success();
  onnx::GraphProto *graph = model.mutable_graph();
  const SmallVector<int> inputs = dataInputs(*graph);
  auto findInput = [&](StringRef name) -> const onnx::ValueInfoProto * {
    for (int i : inputs)
      if (graph->input(i).name() == name)
        return &graph->input(i);
    return nullptr;
  };
  llvm::StringSet<> bound;
  for (const InputBinding &b : bindings)
    bound.insert(b.name);

  std::vector<onnx::NodeProto> added;
  llvm::StringSet<> done;
  for (const InputBinding &b : bindings) {
    auto fail = [&]() { return emitError(loc) << "--bind-input " << describe(b) << ": "; };
    if (!done.insert(b.name).second)
      return fail() << "'" << b.name << "' is bound twice";
    const onnx::ValueInfoProto *in = findInput(b.name);
    if (!in) {
      bool initializer = llvm::any_of(graph->initializer(),
                                      [&](const auto &t) { return t.name() == b.name; });
      return fail() << (initializer ? "'" + b.name + "' is an initializer (a parameter)"
                                    : "the model has no graph input '" + b.name + "'")
                    << "; its graph inputs: " << quotedList(*graph, inputs);
    }
    // Its type, which the values take: a static shape (the batch and --dim set).
    auto staticShape = [&](const onnx::ValueInfoProto &vi,
                           SmallVector<int64_t> &shape) -> LogicalResult {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
        return fail() << "graph input '" << vi.name() << "' has no tensor shape";
      const auto &dims = vi.type().tensor_type().shape().dim();
      for (int d = 0; d < dims.size(); ++d) {
        if (dims[d].has_dim_value() && dims[d].dim_value() >= 0) {
          shape.push_back(dims[d].dim_value());
          continue;
        }
        InFlightDiagnostic diag = fail();
        diag << "graph input '" << vi.name() << "' has a dynamic dimension " << d;
        if (d == 0)
          diag << "; set the batch size with --batch-size";
        else if (dims[d].has_dim_param())
          diag << " ('" << dims[d].dim_param() << "'); set it with --dim " << dims[d].dim_param()
               << "=N";
        return diag;
      }
      return success();
    };
    SmallVector<int64_t> shape;
    if (failed(staticShape(*in, shape)))
      return failure();
    const int dtype = in->type().tensor_type().elem_type();
    if (dtype != onnx::TensorProto::FLOAT && dtype != onnx::TensorProto::INT64 &&
        dtype != onnx::TensorProto::INT32 && dtype != onnx::TensorProto::BOOL)
      return fail() << "'" << b.name << "' has dtype " << dtypeName(dtype)
                    << "; --bind-input gives FLOAT, INT64, INT32 or BOOL inputs";
    const std::string prefix = "--bind-input " + b.name;

    if (b.other.empty()) {
      if (!representable(b.value, dtype))
        return fail() << formatValue(b.value) << " is not a value of '" << b.name << "''s dtype, "
                      << dtypeName(dtype);
      // ConstantOfShape(shape) with the value: its size costs nothing here.
      onnx::TensorProto dims;
      dims.set_data_type(onnx::TensorProto::INT64);
      dims.add_dims(static_cast<int64_t>(shape.size()));
      for (int64_t d : shape)
        dims.add_int64_data(d);
      const std::string shapeName = "__mgs_bind_shape_" + b.name;
      onnx::NodeProto shapeNode = makeNode("Constant", prefix + " (shape)", {}, shapeName);
      addTensorAttribute(shapeNode, "value") = std::move(dims);
      onnx::NodeProto fill = makeNode("ConstantOfShape", prefix, {shapeName}, b.name);
      addTensorAttribute(fill, "value") = scalar(dtype, b.value, /*rank1=*/true);
      added.push_back(std::move(shapeNode));
      added.push_back(std::move(fill));
      continue;
    }

    const onnx::ValueInfoProto *other = findInput(b.other);
    if (!other || bound.contains(b.other))
      return fail() << "'" << b.other << "' is not a graph input the executable feeds; "
                    << (other ? "it is bound too" : "the graph inputs: " + quotedList(*graph, inputs));
    SmallVector<int64_t> otherShape;
    if (failed(staticShape(*other, otherShape)))
      return failure();
    if (otherShape != shape)
      return fail() << "'" << b.name << "' has shape " << train::shapeToString(shape) << " and '"
                    << b.other << "' " << train::shapeToString(otherShape)
                    << "; a mask has its input's shape";
    const int otherType = other->type().tensor_type().elem_type();
    if (otherType != onnx::TensorProto::FLOAT && otherType != onnx::TensorProto::INT64 &&
        otherType != onnx::TensorProto::INT32)
      return fail() << "'" << b.other << "' has dtype " << dtypeName(otherType)
                    << "; a mask compares FLOAT, INT64 or INT32 inputs";
    if (!representable(b.value, otherType))
      return fail() << formatValue(b.value) << " is not a value of '" << b.other
                    << "''s dtype, " << dtypeName(otherType);
    const std::string valueName = "__mgs_bind_value_" + b.name;
    const std::string equalName = "__mgs_bind_equal_" + b.name;
    const std::string notName = "__mgs_bind_not_" + b.name;
    const bool isBool = dtype == onnx::TensorProto::BOOL;
    onnx::NodeProto value = makeNode("Constant", prefix + " (value)", {}, valueName);
    addTensorAttribute(value, "value") = scalar(otherType, b.value, /*rank1=*/false);
    added.push_back(std::move(value));
    // Equal, then Not for !=, then Cast to the input's dtype (unless BOOL):
    // each writes the bound name when it is the last.
    const std::string maskName = b.equal ? equalName : notName;
    added.push_back(makeNode("Equal", prefix + " (Equal)", {b.other, valueName},
                             isBool && b.equal ? b.name : equalName));
    if (!b.equal)
      added.push_back(makeNode("Not", prefix + " (Not)", {equalName}, isBool ? b.name : notName));
    if (!isBool) {
      onnx::NodeProto cast = makeNode("Cast", prefix + " (Cast)", {maskName}, b.name);
      addIntAttribute(cast, "to", dtype);
      added.push_back(std::move(cast));
    }
  }

  // The bound inputs leave the graph's inputs; their nodes come first.
  for (int i = graph->input_size() - 1; i >= 0; --i)
    if (bound.contains(graph->input(i).name()))
      graph->mutable_input()->DeleteSubrange(i, 1);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (onnx::NodeProto &node : added)
    nodes.Add()->Swap(&node);
  for (onnx::NodeProto &node : *graph->mutable_node())
    nodes.Add()->Swap(&node);
  graph->mutable_node()->Swap(&nodes);
  graph->clear_value_info();
  return success();
}

} // namespace mgs::onnx_import
