//===- KernelCalls.h - train/comm ops as runtime kernel calls ---*- C++ -*-===//
//
// Internal to convert-train-to-runtime. The first of its three phases: each
// op of a step becomes a call of a runtime entry point (mgsrt/contract.h)
// with a constant descriptor and a buffer list, or nothing (aliases and
// storage). StepLowering.h places the buffers and emits the calls.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_CONVERSION_TRAINTORUNTIME_KERNELCALLS_H
#define MGS_LIB_CONVERSION_TRAINTORUNTIME_KERNELCALLS_H

#include "mgs/Dialect/Train/IR/ShapeUtils.h"
#include "mgs/Dialect/Train/IR/TrainOps.h"

#include "mgsrt/contract.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mgs::lowering {

/// The static shape of a ranked tensor value.
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}
inline int64_t numel(mlir::Value v) { return train::numElements(shapeOf(v)); }
/// Bytes of v's buffer (i1 as one byte; at least 1).
int64_t byteSize(mlir::Value v);

/// A buffer of a kernel call: a value, or null. A nullable output that
/// nobody reads is passed as null.
struct BufArg {
  mlir::Value value;
  bool nullable = false;
};

struct KernelCall {
  mlir::Operation *op;
  contract::Kernel kernel;
  llvm::SmallVector<int64_t> desc;
  llvm::SmallVector<BufArg> bufs;
  /// Values the call does not pass but whose memory it uses (a collective in
  /// flight until its wait).
  llvm::SmallVector<mlir::Value> keepAlive;
};

/// A gradient tag shares its operand's buffer unless that value has other
/// readers, which the in-place collective on the gradient would disturb.
inline bool gradientAliases(train::GradientOp g) { return g.getGrad().hasOneUse(); }

/// An assignment of zeros to a state parameter (a splat +0 constant): the
/// zero kernel on the parameter, with no constant in memory.
bool assignsZeros(train::AssignParamOp a);
/// A constant that only assignsZeros() reads: it needs no global.
bool onlyAssignedAsZeros(mlir::Value constant);
/// assign_param @p, add(get_param @p, g) of one shape, the add read by
/// nothing else (a gradient accumulator, train-accumulate-gradients): one
/// in-place accumulate kernel on the parameter; the add gets no call of its
/// own. Null otherwise.
train::AddOp inPlaceAccumulation(train::AssignParamOp a);

/// The descriptor of a kernel over `count` elements (copy, zero, clip, ...).
llvm::SmallVector<int64_t> countDesc(int64_t count);

/// The kernel call for `op`, or nullopt for ops that need none (aliases and
/// storage). Fails, with an error at the op, for an op the runtime has no
/// kernel for. `slots` holds the request slot of each collective in flight
/// (updated: a start takes the lowest free slot, its wait frees it).
/// `precision` (MGSRT_PRECISION_*) goes into the descriptors of the GEMMs,
/// matmuls and convolutions.
llvm::FailureOr<std::optional<KernelCall>>
describe(mlir::Operation *op, llvm::DenseMap<mlir::Operation *, int64_t> &slots,
         int64_t precision);

} // namespace mgs::lowering

#endif // MGS_LIB_CONVERSION_TRAINTORUNTIME_KERNELCALLS_H
