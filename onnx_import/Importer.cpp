//===- Importer.cpp - The graph walk --------------------------------------===//
//
// GraphImporter: walks the prepared graph (ImportFile.cpp) in order, makes the
// function's arguments, parameters and constants, and hands every node to its
// converter (OpConverters.cpp).
//
// ONNX and protobuf report errors by throwing; this library is built with
// exceptions and turns every exception into an MLIR diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "Buffers.h"
#include "ConstantFolding.h"
#include "OpConverters.h"
#include "GraphImporter.h"
#include "Prepare.h"
#include "TorchExport.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

using namespace mlir;
using namespace mgs::train;

namespace mgs::onnx_import {

std::string dtypeName(int dtype) {
  return onnx::TensorProto_DataType_IsValid(dtype)
             ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(dtype))
             : "dtype " + std::to_string(dtype);
}

namespace {

/// The MLIR element type for an ONNX dtype, or null if mgs has none.
Type elementTypeFor(MLIRContext &ctx, int dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(&ctx);
  case onnx::TensorProto::BOOL:
    return IntegerType::get(&ctx, 1);
  case onnx::TensorProto::INT64:
    return IntegerType::get(&ctx, 64);
  default:
    return {};
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Graph import
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType> GraphImporter::toTensorType(const onnx::TypeProto &type, StringRef what,
                                                        Location loc, Type expected) {
  if (!type.has_tensor_type())
    return mlir::emitError(loc) << what << " is not a tensor";
  const auto &tensor = type.tensor_type();
  Type elem = elementTypeFor(ctx, tensor.elem_type());
  if (!elem || (expected && elem != expected))
    return mlir::emitError(loc) << what << " has unsupported dtype "
                                << dtypeName(tensor.elem_type()) << "; mgs supports FLOAT here";
  if (!tensor.has_shape())
    return mlir::emitError(loc) << what << " has no shape after ONNX shape inference";
  SmallVector<int64_t> shape;
  for (int d = 0; d < tensor.shape().dim_size(); ++d) {
    const auto &dim = tensor.shape().dim(d);
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      InFlightDiagnostic diag = mlir::emitError(loc);
      diag << what << " has a dynamic dimension " << d;
      if (dim.has_dim_param())
        diag << " ('" << dim.dim_param() << "')";
      diag << "; mgs needs static shapes";
      if (d == 0)
        diag << " (set the batch dimension with --batch-size)";
      else if (dim.has_dim_param())
        diag << " (set it with --dim " << dim.dim_param() << "=N)";
      return diag;
    }
    shape.push_back(dim.dim_value());
  }
  return RankedTensorType::get(shape, elem);
}

FailureOr<RankedTensorType> GraphImporter::initializerType(const onnx::TensorProto &t,
                                                           Location loc) {
  if (t.data_type() != onnx::TensorProto::FLOAT)
    return mlir::emitError(loc) << "initializer '" << t.name() << "' has unsupported dtype "
                                << dtypeName(t.data_type())
                                << "; only FLOAT initializers can be parameters";
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  return RankedTensorType::get(shape, b.getF32Type());
}

/// The first element of a FLOAT initializer that is an infinity or a NaN,
/// with its value (read in place: raw_data is little-endian float32, as on
/// every host mgs builds for); nullopt when all are finite.
static std::optional<std::pair<size_t, float>> firstNonFinite(const onnx::TensorProto &t) {
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    for (size_t at = 0; at + sizeof(float) <= raw.size(); at += sizeof(float)) {
      float v;
      std::memcpy(&v, raw.data() + at, sizeof v);
      if (!std::isfinite(v))
        return std::pair{at / sizeof(float), v};
    }
    return std::nullopt;
  }
  for (int i = 0; i < t.float_data_size(); ++i)
    if (!std::isfinite(t.float_data(i)))
      return std::pair{static_cast<size_t>(i), t.float_data(i)};
  return std::nullopt;
}

FailureOr<Value> GraphImporter::parameterValue(StringRef name, const onnx::TensorProto &t) {
  Location paramLoc = NameLoc::get(b.getStringAttr(name), fileLoc);
  ParameterOp &param = params[name];
  if (!param) {
    auto type = initializerType(t, paramLoc);
    if (failed(type))
      return failure();
    ElementsAttr init;
    if (options.inlineWeights) {
      std::vector<float> data = onnx::ParseData<float>(&t);
      if (static_cast<int64_t>(data.size()) != type->getNumElements())
        return mlir::emitError(paramLoc) << "initializer '" << name << "' holds " << data.size()
                                         << " values for shape " << shapeToString(type->getShape());
      init = DenseElementsAttr::get(*type, ArrayRef<float>(data));
    }
    OpBuilder mb(&ctx);
    mb.setInsertionPoint(func);
    bool buffer = exportBuffers.contains(name);
    // No update keeps a tensor with an infinity finite (-inf - lr * (g + wd *
    // -inf) is NaN): such an initializer is a buffer the export did not name
    // (a causal mask's -inf), imported frozen. A NaN is no one's initial value.
    std::optional<std::pair<size_t, float>> bad = firstNonFinite(t);
    if (bad && std::isnan(bad->second))
      return mlir::emitError(paramLoc)
             << "initializer '" << name << "' holds NaN at element " << bad->first
             << " (a model's initial values must be numbers: re-export it)";
    bool nonFinite = !buffer && bad.has_value();
    param = ParameterOp::create(mb, paramLoc, b.getStringAttr(name), TypeAttr::get(*type),
                                buffer || nonFinite ? UnitAttr() : b.getUnitAttr(), init);
    if (buffer)
      param->setAttr(kExportBufferAttrName, b.getUnitAttr());
    if (nonFinite)
      param->setAttr(kNonFiniteInitAttrName, b.getUnitAttr());
  }
  return Value(GetParamOp::create(b, paramLoc, param.getType(),
                                  FlatSymbolRefAttr::get(param.getSymNameAttr())));
}

FailureOr<Value> GraphImporter::constantValue(StringRef name, const onnx::TensorProto &t) {
  Location constLoc = NameLoc::get(b.getStringAttr(name), fileLoc);
  if (t.data_type() != onnx::TensorProto::FLOAT)
    return mlir::emitError(constLoc) << "constant '" << name << "' has unsupported dtype "
                                     << dtypeName(t.data_type()) << "; mgs supports FLOAT here";
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  auto type = RankedTensorType::get(shape, b.getF32Type());
  std::vector<float> data = onnx::ParseData<float>(&t);
  if (static_cast<int64_t>(data.size()) != type.getNumElements())
    return mlir::emitError(constLoc) << "constant '" << name << "' holds " << data.size()
                                     << " values for shape " << shapeToString(shape);
  return Value(arith::ConstantOp::create(b, constLoc, type,
                                         DenseElementsAttr::get(type, ArrayRef<float>(data))));
}

FailureOr<Value> GraphImporter::lookup(const std::string &name, Location useLoc, bool forNode) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  std::string user = forNode ? "node '" + nodeLabel + "' (" + curNode->op_type() + "): input '"
                             : std::string("graph output '");
  if (auto it = rejected.find(name); it != rejected.end())
    return mlir::emitError(useLoc) << user << name << "': " << it->second;
  if (indexValues.count(name) || reshapedIndices.count(name) || transposedIndices.count(name))
    return mlir::emitError(useLoc) << user << name
                                   << "': an INT64 graph input (token ids, labels), which mgs "
                                      "reads as the indices of a Gather (an embedding), "
                                      "GatherElements, OneHot or ScatterElements, compares, or "
                                      "casts to FLOAT";
  if (auto it = runtimeInts.find(name); it != runtimeInts.end())
    return mlir::emitError(useLoc)
           << user << name << "': integers computed at run time " << it->second.origin
           << ", which mgs reads only as indices or casts to FLOAT";
  FailureOr<Value> v = failure();
  if (auto it = constants.find(name); it != constants.end())
    v = constantValue(name, *it->second);
  else if (auto it = initializers.find(name); it != initializers.end())
    v = bufferInitializers.contains(name) ? constantValue(name, *it->second)
                                          : parameterValue(name, *it->second);
  else
    return mlir::emitError(useLoc)
           << user << name
           << "' is neither a graph input, an initializer nor an output of an earlier node";
  if (succeeded(v))
    values[name] = *v;
  return v;
}

FailureOr<Value> GraphImporter::input(int i) {
  if (!hasInput(i))
    return emitError() << "required input " << i << " is missing";
  return lookup(curNode->input(i), curLoc, /*forNode=*/true);
}

FailureOr<const onnx::TensorProto *> GraphImporter::constantInput(int i) {
  if (!hasInput(i))
    return emitError() << "required input " << i << " is missing";
  const std::string &name = curNode->input(i);
  if (auto it = constants.find(name); it != constants.end())
    return it->second;
  if (auto it = initializers.find(name); it != initializers.end())
    return it->second;
  return emitError() << "input " << i << " ('" << name
                     << "') must be a constant (an initializer or a Constant node)";
}

FailureOr<SmallVector<int64_t>> GraphImporter::constantInts(int i) {
  auto t = constantInput(i);
  if (failed(t))
    return failure();
  if ((*t)->data_type() == onnx::TensorProto::INT64) {
    std::vector<int64_t> data = onnx::ParseData<int64_t>(*t);
    return SmallVector<int64_t>(data.begin(), data.end());
  }
  if ((*t)->data_type() == onnx::TensorProto::INT32) {
    std::vector<int32_t> data = onnx::ParseData<int32_t>(*t);
    return SmallVector<int64_t>(data.begin(), data.end());
  }
  return emitError() << "input " << i << " has dtype " << dtypeName((*t)->data_type())
                     << ", expected INT64";
}

FailureOr<std::vector<float>> GraphImporter::constantFloats(int i) {
  auto t = constantInput(i);
  if (failed(t))
    return failure();
  if ((*t)->data_type() != onnx::TensorProto::FLOAT)
    return emitError() << "input " << i << " has dtype " << dtypeName((*t)->data_type())
                       << "; mgs supports FLOAT here";
  return onnx::ParseData<float>(*t);
}

FailureOr<float> GraphImporter::constantFloat(int i) {
  auto data = constantFloats(i);
  if (failed(data))
    return failure();
  if (data->size() != 1)
    return emitError() << "input " << i << " must hold one value, got " << data->size();
  return (*data)[0];
}

FailureOr<bool> GraphImporter::constantBool(int i) {
  auto t = constantInput(i);
  if (failed(t))
    return failure();
  if ((*t)->data_type() != onnx::TensorProto::BOOL)
    return emitError() << "input " << i << " has dtype " << dtypeName((*t)->data_type())
                       << ", expected BOOL";
  const onnx::TensorProto &tensor = **t;
  size_t count = tensor.has_raw_data() ? tensor.raw_data().size() : tensor.int32_data_size();
  if (count != 1)
    return emitError() << "input " << i << " must hold one value, got " << count;
  return tensor.has_raw_data() ? tensor.raw_data()[0] != 0 : tensor.int32_data(0) != 0;
}

bool GraphImporter::inputIsConstant(int i) const {
  if (!hasInput(i))
    return false;
  const std::string &name = curNode->input(i);
  if (constants.count(name))
    return true;
  auto it = initializers.find(name);
  return it != initializers.end() && (it->second->data_type() != onnx::TensorProto::FLOAT ||
                                      bufferInitializers.contains(name));
}

void GraphImporter::markStateParameter(int i) {
  if (!hasInput(i))
    return;
  if (auto it = params.find(curNode->input(i)); it != params.end()) {
    it->second.setTrainable(false);
    it->second->removeAttr(kExportBufferAttrName); // state, whatever the export calls it
    it->second->removeAttr(kNonFiniteInitAttrName);
  }
}

FailureOr<RankedTensorType> GraphImporter::outputType(int i, Type elementType) {
  if (!hasOutput(i))
    return emitError() << "output " << i << " is required";
  const std::string &name = curNode->output(i);
  std::string what = "node '" + nodeLabel + "' (" + curNode->op_type() + "): output '" + name + "'";
  auto it = valueTypes.find(name);
  if (it == valueTypes.end())
    return mlir::emitError(curLoc) << what << " has no type after ONNX shape inference";
  return toTensorType(*it->second, what, curLoc, elementType);
}

LogicalResult GraphImporter::recordConstant() {
  if (!hasOutput(0))
    return success();
  const std::string &output = curNode->output(0);
  if (curNode->attribute_size() == 1 && curNode->attribute(0).name() == "value") {
    constants[output] = &curNode->attribute(0).t();
    return success();
  }
  onnx::TensorProto &t = ownedConstants.emplace_back();
  if (std::string problem = scalarConstant(*curNode, t); !problem.empty())
    return emitError() << problem;
  constants[output] = &t;
  return success();
}

const onnx::TensorProto *GraphImporter::foldableConstant(const std::string &name) const {
  if (auto it = constants.find(name); it != constants.end())
    return it->second;
  // FLOAT initializers are parameters: computing with them is training
  // them, so they are never folded away (unless no gradient reaches them).
  if (auto it = initializers.find(name);
      it != initializers.end() && (it->second->data_type() != onnx::TensorProto::FLOAT ||
                                   bufferInitializers.contains(name)))
    return it->second;
  return nullptr;
}

FoldContext GraphImporter::foldContext() {
  FoldContext fc;
  fc.opset = opsetVersion;
  fc.constant = [this](const std::string &name) { return foldableConstant(name); };
  fc.elementType = [this](const std::string &name) { return valueTypeOf(name); };
  fc.staticShape = [this](const std::string &name) { return knownShape(name); };
  return fc;
}

LogicalResult GraphImporter::foldConstant(bool &folded) {
  FoldContext fc = foldContext();
  onnx::TensorProto result;
  std::string error;
  switch (foldNode(*curNode, fc, result, error)) {
  case FoldResult::NotConstant:
    return success();
  case FoldResult::Failed:
    return emitError() << error;
  case FoldResult::Folded:
    break;
  }
  folded = true; // with no output 0 there is nothing to keep
  if (!hasOutput(0))
    return success();
  ownedConstants.push_back(std::move(result));
  constants[curNode->output(0)] = &ownedConstants.back();
  return success();
}

int GraphImporter::valueTypeOf(const std::string &name) const {
  if (auto it = initializers.find(name); it != initializers.end())
    return it->second->data_type();
  if (auto it = valueTypes.find(name); it != valueTypes.end() && it->second->has_tensor_type())
    return it->second->tensor_type().elem_type();
  return onnx::TensorProto::FLOAT;
}

/// How a graph input beside the samples gets its values (errors suggest it).
static std::string bindInputUsage(const std::string &name) {
  return "--bind-input " + name + "=VALUE or " + name + "=INPUT!=VALUE";
}

std::string GraphImporter::originOf(const std::string &name) {
  if (auto it = initializers.find(name); it != initializers.end())
    return "is a parameter (a FLOAT initializer, trained)";
  if (rejected.count(name) && dataInputCount > 1)
    return "is a graph input (run-time data where mgs needs a value known at import: give "
           "this one its values in the model with " +
           bindInputUsage(name) + ")";
  if (indexValues.count(name) || rejected.count(name))
    return "is a graph input";
  auto it = values.find(name);
  if (it == values.end())
    return "is computed at run time";
  if (isa<BlockArgument>(it->second))
    return "is a graph input";
  // Does the value depend on a function argument (the input data)?
  SmallVector<Value> work{it->second};
  llvm::DenseSet<Operation *> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (isa<BlockArgument>(v))
      return "depends on the input data";
    if (Operation *def = v.getDefiningOp(); def && seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return "is computed at run time from the parameters";
}

LogicalResult GraphImporter::emitNotStatic(bool hasConverter, int outputType) {
  int i = 0;
  while (i < curNode->input_size() && (!hasInput(i) || foldableConstant(curNode->input(i))))
    ++i;
  if (i == curNode->input_size()) // not expected: the folder saw a non-constant input
    return emitError() << "mgs evaluates " << curNode->op_type() << " only at import";
  // The input's name in the op's schema (the last one for variadic inputs).
  std::string role = "input " + std::to_string(i);
  if (const onnx::OpSchema *schema =
          onnx::OpSchemaRegistry::Schema(curNode->op_type(), opsetVersion, "");
      schema && !schema->inputs().empty())
    role = "'" + schema->inputs()[std::min<size_t>(i, schema->inputs().size() - 1)].GetName() +
           "' input";
  InFlightDiagnostic diag = emitError();
  if (hasConverter)
    diag << "it computes " << dtypeName(outputType) << " values at run time: ";
  diag << "its " << role << " ('" << curNode->input(i) << "') " << originOf(curNode->input(i))
       << "; mgs evaluates "
       << (hasConverter ? std::string("integer and BOOL values") : curNode->op_type());
  // A FLOAT tensor computed at run time where the op has no converter is not
  // a shape problem: the op is supported on constants only.
  if (!hasConverter && outputType == onnx::TensorProto::FLOAT && valueTypeOf(curNode->input(i)) ==
                                                                   onnx::TensorProto::FLOAT)
    diag << " only at import, on constants (there is no conversion of it for computed tensors)";
  else
    diag << " only at import and needs shapes static once the batch size is fixed";
  return diag;
}

/// The converters build ops from the shapes ONNX's shape inference gave, and
/// that inference lets some inconsistent models through (a Gemm whose inner
/// dimensions differ once an attribute is dropped, a Flatten axis that no
/// longer fits the next layer, a bias of the wrong rank: found by
/// scripts/mutate_onnx.py). The ops' verifiers catch them; checked here, node
/// by node, the error names the node and says it is the model's, instead of
/// a whole-module verifier failure at the end.
LogicalResult GraphImporter::verifyNodeOps(Operation *lastBefore, Block *block) {
  Operation *first =
      lastBefore ? lastBefore->getNextNode() : (block->empty() ? nullptr : &block->front());
  for (Operation *op = first; op; op = op->getNextNode()) {
    std::string message;
    LogicalResult result = success();
    {
      ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error && message.empty())
          message = diag.str();
        return success();
      });
      result = verify(op);
    }
    if (failed(result))
      return emitError() << "the model's shapes are inconsistent here (" << message
                         << "); ONNX's shape inference did not catch it";
  }
  return success();
}

LogicalResult GraphImporter::importGraph(const onnx::GraphProto &graph) {
  for (const auto &init : graph.initializer())
    initializers[init.name()] = &init;
  bufferInitializers = nonDifferentiableInitializers(graph);
  ExportedNonParameters exported = exportedNonParameters(graph);
  for (const auto &constant : exported.constants)
    bufferInitializers.insert(constant.getKey());
  exportBuffers = std::move(exported.buffers);
  for (const auto &vi : graph.input())
    valueTypes[vi.name()] = &vi.type();
  for (const auto &vi : graph.value_info())
    valueTypes[vi.name()] = &vi.type();
  for (const auto &vi : graph.output())
    valueTypes[vi.name()] = &vi.type();
  for (const auto &node : graph.node())
    for (const std::string &out : node.output())
      producers[out] = &node;

  llvm::StringSet<> gatherIndices = findTokenIds(graph);

  // Graph inputs that are not initializers are the function's arguments.
  SmallVector<Type> argTypes;
  SmallVector<StringRef> argNames;
  dataInputCount = llvm::count_if(
      graph.input(), [&](const onnx::ValueInfoProto &vi) { return !initializers.count(vi.name()); });
  for (const auto &vi : graph.input()) {
    if (initializers.count(vi.name()))
      continue;
    Location argLoc = NameLoc::get(b.getStringAttr(vi.name()), fileLoc);
    std::string what = "graph input '" + vi.name() + "'";
    // INT64 inputs that a Gather reads as its indices are token ids (an
    // embedding), as are RotaryEmbedding's position_ids; other integer inputs
    // (shapes, axes) must be constants.
    if (vi.type().has_tensor_type() &&
        vi.type().tensor_type().elem_type() == onnx::TensorProto::INT64 &&
        gatherIndices.contains(vi.name())) {
      auto type = toTensorType(vi.type(), what, argLoc, b.getI64Type());
      if (failed(type))
        return failure();
      indexArgs.push_back({vi.name(), argTypes.size()});
      argTypes.push_back(*type);
      argNames.push_back(vi.name());
      continue;
    }
    // Any other non-float input is only an error where it is used: as data it
    // has an unsupported dtype, as a shape or pads input it is not a constant.
    if (vi.type().has_tensor_type() &&
        vi.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT) {
      const int dtype = vi.type().tensor_type().elem_type();
      rejected[vi.name()] = what + " has unsupported dtype " + dtypeName(dtype) +
                            "; mgs supports FLOAT here";
      if (dataInputCount > 1 && (dtype == onnx::TensorProto::INT64 ||
                                 dtype == onnx::TensorProto::INT32 ||
                                 dtype == onnx::TensorProto::BOOL))
        rejected[vi.name()] += " (a mask or token types beside the ids? give it its values in "
                               "the model with " + bindInputUsage(vi.name()) + ")";
      continue;
    }
    auto type = toTensorType(vi.type(), what, argLoc, b.getF32Type());
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(vi.name());
  }

  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, fileLoc, options.functionName,
                              b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "train.name", b.getStringAttr(name));
    const size_t argNo = i; // (a structured binding cannot be captured in C++17)
    if (llvm::any_of(indexArgs, [&](const auto &a) { return a.second == argNo; }))
      indexValues[name] = entry->getArgument(i);
    else
      values[name] = entry->getArgument(i);
  }
  b.setInsertionPointToEnd(entry);

  const auto &converters = opConverters();
  for (int idx = 0; idx < graph.node_size(); ++idx) {
    curNode = &graph.node(idx);
    nodeLabel = labelOf(*curNode, idx);
    curLoc = NameLoc::get(b.getStringAttr(nodeLabel), fileLoc);
    Operation *lastBefore = entry->empty() ? nullptr : &entry->back();
    // The ops made for this node verify, or the error names the node (see
    // verifyNodeOps()).
    auto verified = [&] { return verifyNodeOps(lastBefore, entry); };
    const std::string &domain = curNode->domain();
    if (!domain.empty() && domain != "ai.onnx")
      return emitError() << "unsupported ONNX op '" << curNode->op_type() << "' of domain '"
                         << domain << "'; supported (default domain): " << supportedList();
    if (curNode->op_type() == "Constant") {
      if (failed(recordConstant()))
        return failure();
      continue;
    }
    // The patterns read across nodes, each claiming the node it handles.
    bool handled = false;
    for (auto pattern : {&GraphImporter::importUniformNumbers, &GraphImporter::importDataIntegers,
                         &GraphImporter::importRuntimeInt, &GraphImporter::importDataCast,
                         &GraphImporter::importRuntimeMask, &GraphImporter::importRandomMask,
                         &GraphImporter::importIsNaN, &GraphImporter::importComputedTruth,
                         &GraphImporter::importIndexReshape, &GraphImporter::importSequence}) {
      if (failed((this->*pattern)(handled)))
        return failure();
      if (handled)
        break;
    }
    if (handled) {
      if (failed(verified()))
        return failure();
      continue;
    }
    if (isFoldableOp(curNode->op_type())) {
      bool folded = false;
      if (failed(foldConstant(folded)))
        return failure();
      if (folded)
        continue;
      // Converters compute FLOAT tensors: integer and BOOL ones (shapes,
      // masks) exist only as constants.
      const int outputType =
          hasOutput(0) ? valueTypeOf(curNode->output(0)) : int(onnx::TensorProto::FLOAT);
      const bool hasConverter = converters.count(curNode->op_type());
      if (!hasConverter || outputType != onnx::TensorProto::FLOAT)
        return emitNotStatic(hasConverter, outputType);
    }
    auto it = converters.find(curNode->op_type());
    if (it == converters.end()) {
      InFlightDiagnostic diag = emitError();
      diag << "unsupported ONNX op '" << curNode->op_type() << "'";
      // Random sampling other than a dropout mask's (RandomMask.cpp) or
      // normal draws (converters/Random.cpp).
      if (curNode->op_type() == "Multinomial")
        diag << " (random sampling in the graph: mgs imports normal draws (RandomNormal, "
                "RandomNormalLike), uniform ones (RandomUniformLike, RandomUniform) and "
                "Bernoulli draws, as numbers or a dropout's mask)";
      return diag << "; supported: " << supportedList();
    }
    if (failed(it->second(*this)) || failed(verified()))
      return failure();
  }

  SmallVector<Value> results;
  for (const auto &vi : graph.output()) {
    Location outLoc = NameLoc::get(b.getStringAttr(vi.name()), fileLoc);
    auto v = lookup(vi.name(), outLoc, /*forNode=*/false);
    if (failed(v))
      return failure();
    results.push_back(*v);
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, vi] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "train.name", b.getStringAttr(vi.name()));
  return success();
}

} // namespace mgs::onnx_import
