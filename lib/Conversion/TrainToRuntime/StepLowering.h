//===- StepLowering.h - One step function as LLVM calls into mgsrt -*- C++ -*-===//
//
// Internal to convert-train-to-runtime: its second and third phases for one
// step function. Every value gets storage (an io slot, a constant global, or
// an arena offset placed by liveness: BufferPlan), then an LLVM function
// fills a pointer array per kernel call (KernelCalls.h), calls the kernel and
// returns the context's sticky status.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_CONVERSION_TRAINTORUNTIME_STEPLOWERING_H
#define MGS_LIB_CONVERSION_TRAINTORUNTIME_STEPLOWERING_H

#include "KernelCalls.h"

#include "mgs/Dialect/Comm/IR/CommDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <vector>

namespace mgs::lowering {

using mlir::ArrayRef;
using mlir::Block;
using mlir::LogicalResult;
using mlir::Location;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::StringRef;
using mlir::Value;
namespace LLVM = mlir::LLVM;
namespace arith = mlir::arith;
namespace func = mlir::func;
using llvm::DenseMap;
using llvm::DenseSet;

/// Where a value lives.
struct Storage {
  enum Kind { Slot, Arena, Global, Unset } kind = Unset;
  int64_t index = 0; // io slot or arena offset
  LLVM::GlobalOp global;
};

/// The constant globals of the module, shared by both steps: descriptors
/// with the same contents are emitted once.
struct Globals {
  int counter = 0;
  std::map<std::vector<int64_t>, LLVM::GlobalOp> descs;
  /// The constants of every step, in the order of mgs_model_constants's
  /// table (a GPU step reads each through its entry there).
  std::vector<LLVM::GlobalOp> constants;
};

/// The table of mgs_model_constants (mgsrt.h): a GPU step's constants are
/// read through it, the driver putting each one's device copy there.
inline constexpr const char *kConstantTable = "__mgs_const_table";

class StepLowering {
public:
  StepLowering(ModuleOp module, const llvm::StringMap<int64_t> &paramIndex,
               const llvm::StringMap<int64_t> &velocityIndex, int64_t numParams,
               int64_t numVelocities, Globals &globals)
      : module(module), b(module.getContext()), paramIndex(paramIndex),
        velocityIndex(velocityIndex), numParams(numParams), numVelocities(numVelocities),
        globals(globals) {}

  /// Lowers `func` (train_step when `train`) to an LLVM function `name`.
  LogicalResult lower(func::FuncOp func, bool train, StringRef name);

  int64_t arenaBytes = 0, unplannedBytes = 0, numCalls = 0, numCollectives = 0;
  int64_t compiledWorkers = 0; // the workers a sparse exchange was compiled for (0: any)
  /// Calibration (mgsc --profile-generate): mark the start of backprop and
  /// each gradient's completion with mgsrt_mark calls.
  bool instrument = false;
  /// A GPU step (--target=cuda): constants are read through the table the
  /// driver fills with their device copies, not at their host addresses.
  bool deviceConstants = false;
  /// MGSRT_PRECISION_* of the GEMMs, matmuls and convolutions.
  int64_t precision = MGSRT_PRECISION_F32;
  int64_t numCopyFreeBuckets = 0, numCopyFreeSplits = 0;

private:
  Value root(Value v) {
    while (true) {
      Operation *def = v.getDefiningOp();
      if (auto r = llvm::dyn_cast_or_null<train::ReshapeOp>(def))
        v = r.getInput();
      else if (auto f = llvm::dyn_cast_or_null<train::FlattenOp>(def))
        v = f.getInput();
      else if (auto g = llvm::dyn_cast_or_null<train::GradientOp>(def); g && gradientAliases(g))
        v = g.getGrad();
      else if (auto wait = llvm::dyn_cast_or_null<comm::WaitOp>(def);
               wait && wait.getRequest().getDefiningOp<comm::AllReduceStartOp>())
        v = wait.getRequest().getDefiningOp<comm::AllReduceStartOp>().getInput();
      else
        return v;
    }
  }
  /// The value whose buffer holds v's (its root, or the root of the buffer
  /// it is a slice of) and v's byte offset in it.
  std::pair<Value, int64_t> base(Value v) {
    int64_t offset = 0;
    Value r = root(v);
    for (auto it = slices.find(r); it != slices.end(); it = slices.find(r)) {
      offset += it->second.second;
      r = root(it->second.first);
    }
    return {r, offset};
  }
  /// Whether every reader of `v`'s buffer (through aliases) other than the
  /// path into `concat` comes before it.
  bool readBefore(Value v, Operation *concat);
  void planSlices(Block &body);
  LLVM::GlobalOp constantGlobal(arith::ConstantOp c);
  LLVM::GlobalOp descGlobal(Location loc, ArrayRef<int64_t> desc);
  LLVM::LLVMFuncOp kernelDecl(StringRef symbol);
  Value slotPointer(int64_t slot);
  Value constantPointer(const Storage &s);
  Value pointerTo(Value v);

  ModuleOp module;
  OpBuilder b;
  const llvm::StringMap<int64_t> &paramIndex, &velocityIndex;
  int64_t numParams, numVelocities;
  Globals &globals;
  DenseMap<Value, Storage> storage;
  /// Copy-free buckets: a value laid out inside another's buffer (value ->
  /// the buffer's value, byte offset), and the concats and splits that so
  /// need no kernel.
  DenseMap<Value, std::pair<Value, int64_t>> slices;
  DenseSet<Operation *> freeOps;
  DenseMap<int64_t, Value> loadedSlots, loadedConstants;
  Value io, arena;
};

} // namespace mgs::lowering

#endif // MGS_LIB_CONVERSION_TRAINTORUNTIME_STEPLOWERING_H
