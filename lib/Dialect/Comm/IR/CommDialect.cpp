//===- CommDialect.cpp - The comm dialect ---------------------------------===//

#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Planner/Profile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mgs::comm;

#include "mgs/Dialect/Comm/IR/CommOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "mgs/Dialect/Comm/IR/CommOpsTypes.cpp.inc"

void CommDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "mgs/Dialect/Comm/IR/CommOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mgs/Dialect/Comm/IR/CommOps.cpp.inc"
      >();
}

LogicalResult CommDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  StringAttr name = attribute.getName();
  if (name == getBucketAttrHelper().getName()) {
    if (!isa<StringAttr>(attribute.getValue()))
      return op->emitOpError() << "'" << name.getValue() << "' must be a string (the bucket's name)";
    if (op->getName().getStringRef() != "train.concat")
      return op->emitOpError() << "'" << name.getValue()
                               << "' belongs on the train.concat of a bucket's gradients";
    return success();
  }
  if (name == getDenseAttrHelper().getName()) {
    if (!isa<UnitAttr>(attribute.getValue()))
      return op->emitOpError() << "'" << name.getValue() << "' must be a unit attribute";
    if (!isa<AllReduceStartOp>(op))
      return op->emitOpError() << "'" << name.getValue()
                               << "' belongs on a comm.all_reduce_start";
    return success();
  }
  if (name == getCollectiveAttrHelper().getName()) {
    auto value = dyn_cast<StringAttr>(attribute.getValue());
    if (!value || (value.getValue() != "gtopk" && value.getValue() != "sparse-allreduce"))
      return op->emitOpError() << "'" << name.getValue()
                               << "' must be \"gtopk\" or \"sparse-allreduce\"";
    if (!isa<AllReduceStartOp>(op))
      return op->emitOpError() << "'" << name.getValue()
                               << "' belongs on a comm.all_reduce_start";
    return success();
  }
  return op->emitOpError() << "unknown comm dialect attribute '" << name.getValue() << "'";
}

LogicalResult WaitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       ValueRange operands, DictionaryAttr, OpaqueProperties,
                                       RegionRange, SmallVectorImpl<Type> &inferred) {
  auto request = dyn_cast<RequestType>(operands.front().getType());
  if (!request)
    return emitOptionalError(loc, "expects a !comm.request");
  llvm::append_range(inferred, request.getResultTypes());
  return success();
}

static int64_t numElementsOf(Value v) { return cast<RankedTensorType>(v.getType()).getNumElements(); }

/// `workers` in [1, kMaxWorkers], the bound the passes and the planner take
/// (sizes computed from it stay far from overflow).
static LogicalResult verifyWorkers(Operation *op, uint64_t attr) {
  const int64_t workers = static_cast<int64_t>(attr);
  if (workers < 1 || workers > mgs::planner::kMaxWorkers)
    return op->emitOpError() << "workers must be in [1, " << mgs::planner::kMaxWorkers << "], got "
                             << workers;
  return success();
}

/// The train.parameter `residual` names, checked to have the gradient's type
/// `gradType` (the lowering reads and writes it as the gradient).
static LogicalResult verifyResidual(Operation *op, SymbolTableCollection &symbolTable,
                                    FlatSymbolRefAttr name, Type gradType) {
  Operation *residual = symbolTable.lookupNearestSymbolFrom(op, name);
  if (!residual || residual->getName().getStringRef() != "train.parameter")
    return op->emitOpError() << "residual '" << name.getValue()
                             << "' does not name a train.parameter";
  auto type = residual->getAttrOfType<TypeAttr>("type");
  if (!type || type.getValue() != gradType)
    return op->emitOpError() << "residual '" << name.getValue()
                             << "' must have the gradient's type " << gradType;
  return success();
}

LogicalResult TopKSparsifyOp::verify() {
  int64_t n = numElementsOf(getGrad()), k = static_cast<int64_t>(getK());
  if (k < 1 || k > n)
    return emitOpError() << "k (" << k << ") must be in [1, " << n << "]";
  for (Value v : {getValues(), getIndices()})
    if (cast<RankedTensorType>(v.getType()).getShape() != ArrayRef<int64_t>{k})
      return emitOpError() << "values and indices must have shape " << k;
  return success();
}

LogicalResult TopKSparsifyOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyResidual(*this, symbolTable, getResidualAttr(), getGrad().getType());
}

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyWorkers(*this, getWorkers())))
    return failure();
  int64_t k = numElementsOf(getValues()), p = static_cast<int64_t>(getWorkers());
  if (numElementsOf(getIndices()) != k)
    return emitOpError() << "values and indices differ in size";
  if (getHalfValues() && getBf16Values())
    return emitOpError() << "half_values and bf16_values exclude each other";
  auto request = getRequest().getType();
  if (request.getResultTypes().size() != 2)
    return emitOpError() << "the request must carry the gathered values and indices";
  SmallVector<Type> sent{getValues().getType(), getIndices().getType()};
  for (auto [t, elem] : llvm::zip(request.getResultTypes(), sent)) {
    auto gathered = dyn_cast<RankedTensorType>(t);
    if (!gathered || gathered.getShape() != ArrayRef<int64_t>{p * k} ||
        gathered.getElementType() != cast<RankedTensorType>(elem).getElementType())
      return emitOpError() << "the request must carry " << p << " x " << k
                           << " gathered values and indices";
  }
  return success();
}

/// values and indices: one 1-D size k; returns k, or -1 after the error.
static int64_t sparsePairSize(Operation *op, Value values, Value indices) {
  int64_t k = numElementsOf(values);
  if (numElementsOf(indices) != k) {
    op->emitOpError() << "values and indices differ in size";
    return -1;
  }
  return k;
}

LogicalResult GTopKStartOp::verify() {
  if (failed(verifyWorkers(*this, getWorkers())))
    return failure();
  if (sparsePairSize(*this, getValues(), getIndices()) < 0)
    return failure();
  ArrayRef<Type> carried = getRequest().getType().getResultTypes();
  if (carried.size() != 2 || carried[0] != getValues().getType() ||
      carried[1] != getIndices().getType())
    return emitOpError() << "the request must carry the global values and indices, typed as "
                            "the values and indices sent";
  return success();
}

LogicalResult GTopKStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // The residual is the sparsified gradient's, which the lowering reads and
  // writes as that gradient: its type, when the comm.topk_sparsify that gives
  // the values shows it (convert-train-to-runtime refuses values from
  // elsewhere).
  if (auto topk = getValues().getDefiningOp<TopKSparsifyOp>())
    return verifyResidual(*this, symbolTable, getResidualAttr(), topk.getGrad().getType());
  Operation *residual = symbolTable.lookupNearestSymbolFrom(*this, getResidualAttr());
  if (!residual || residual->getName().getStringRef() != "train.parameter")
    return emitOpError() << "residual '" << getResidual() << "' does not name a train.parameter";
  return success();
}

LogicalResult SparseAllReduceStartOp::verify() {
  if (failed(verifyWorkers(*this, getWorkers())))
    return failure();
  int64_t k = sparsePairSize(*this, getValues(), getIndices());
  if (k < 0)
    return failure();
  ArrayRef<Type> carried = getRequest().getType().getResultTypes();
  auto dense = carried.size() == 1 ? dyn_cast<RankedTensorType>(carried[0]) : nullptr;
  if (!dense || !dense.getElementType().isF32())
    return emitOpError() << "the request must carry one dense f32 tensor";
  if (dense.getNumElements() < k)
    return emitOpError() << "the dense result (" << dense.getNumElements()
                         << " elements) is smaller than the " << k << " entries sent";
  return success();
}

LogicalResult ScatterAddOp::verify() {
  if (failed(verifyWorkers(*this, getWorkers())))
    return failure();
  if (numElementsOf(getValues()) != numElementsOf(getIndices()))
    return emitOpError() << "values and indices differ in size";
  return success();
}

#define GET_OP_CLASSES
#include "mgs/Dialect/Comm/IR/CommOps.cpp.inc"
