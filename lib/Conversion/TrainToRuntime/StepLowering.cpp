//===- StepLowering.cpp - One step function as LLVM calls into mgsrt -----===//
//
// Storage for every value of a step (io slots, constant globals, arena
// offsets by liveness; copy-free bucket slices) and the LLVM function that
// calls the kernels.
//
//===----------------------------------------------------------------------===//

#include "StepLowering.h"

#include "mgs/Conversion/TrainToRuntime/BufferPlan.h"
#include "mgs/Dialect/Comm/IR/CommDialect.h"
#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "llvm/ADT/MapVector.h"

#include <cmath>

namespace mgs::lowering {

using namespace mlir;
using namespace mgs::train;
using contract::Kernel;


bool StepLowering::readBefore(Value v, Operation *concat) {
  for (Operation *user : v.getUsers()) {
    if (user == concat)
      continue;
    if (isa<ReshapeOp, FlattenOp>(user) ||
        (isa<GradientOp>(user) && gradientAliases(cast<GradientOp>(user)))) {
      if (!readBefore(user->getResult(0), concat))
        return false;
      continue;
    }
    if (!user->isBeforeInBlock(concat))
      return false;
  }
  return true;
}

/// Copy-free buckets. A bucket's gradients are computed straight into their
/// slices of the bucket's buffer (the concat then needs no kernel), and the
/// pieces a split hands back are slices of its input (no kernel either).
/// A gradient keeps its own buffer (and the bucket its copy) when it is read
/// after the bucket is formed: a dense bucket is averaged in place.
void StepLowering::planSlices(Block &body) {
  for (Operation &op : body.without_terminator()) {
    if (auto c = dyn_cast<ConcatOp>(op)) {
      if (!comm::commDialect(c->getContext()).getBucketAttrHelper().isAttrPresent(c) ||
          shapeOf(c.getResult()).size() != 1)
        continue;
      SmallVector<Value> members;
      DenseSet<Value> seen;
      bool ok = true;
      for (Value in : c.getInputs()) {
        Value r = root(in);
        Operation *def = r.getDefiningOp();
        if (!def || isa<GetParamOp, arith::ConstantOp>(def) || slices.count(r) ||
            !seen.insert(r).second || !readBefore(r, c)) {
          ok = false;
          break;
        }
        members.push_back(r);
      }
      if (!ok)
        continue;
      int64_t offset = 0;
      for (auto [in, r] : llvm::zip(c.getInputs(), members)) {
        slices[r] = {c.getResult(), offset};
        offset += byteSize(in);
      }
      freeOps.insert(c);
      ++numCopyFreeBuckets;
    } else if (auto sp = dyn_cast<SplitOp>(op)) {
      ArrayRef<int64_t> whole = shapeOf(sp.getInput());
      if (normalizedAxis(sp.getAxis(), whole.size()) != 0)
        continue;
      int64_t offset = 0;
      for (Value r : sp.getResults()) {
        slices[r] = {sp.getInput(), offset};
        offset += byteSize(r);
      }
      freeOps.insert(sp);
      ++numCopyFreeSplits;
    }
  }
}

LLVM::GlobalOp StepLowering::constantGlobal(arith::ConstantOp c) {
  auto attr = cast<DenseElementsAttr>(c.getValue());
  const int64_t count = attr.getNumElements();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  if (attr.getElementType().isInteger(64)) {
    // Constant indices (a gather's at import-known positions).
    auto tensorType = RankedTensorType::get({count}, b.getI64Type());
    return LLVM::GlobalOp::create(
        b, c.getLoc(), LLVM::LLVMArrayType::get(b.getI64Type(), count), /*isConstant=*/true,
        LLVM::Linkage::Internal, "__mgs_const_" + std::to_string(globals.counter++),
        DenseElementsAttr::get(tensorType, ArrayRef<int64_t>(SmallVector<int64_t>(
                                               attr.getValues<int64_t>()))),
        /*alignment=*/64);
  }
  auto type = LLVM::LLVMArrayType::get(b.getF32Type(), count);
  auto tensorType = RankedTensorType::get({count}, b.getF32Type());
  // All +0 (the zero gradients of unused pieces, an LSTM's absent bias): a
  // zero-initialized global, in .bss rather than in the executable's file.
  const bool zeros = attr.isSplat() && std::signbit(attr.getSplatValue<float>()) == 0 &&
                     attr.getSplatValue<float>() == 0.0f;
  DenseElementsAttr value =
      zeros ? DenseElementsAttr::get(tensorType, 0.0f)
            : DenseElementsAttr::get(tensorType, ArrayRef<float>(SmallVector<float>(
                                                     attr.getValues<float>())));
  return LLVM::GlobalOp::create(b, c.getLoc(), type, /*isConstant=*/!zeros,
                                LLVM::Linkage::Internal,
                                "__mgs_const_" + std::to_string(globals.counter++), value,
                                /*alignment=*/64);
}

LLVM::GlobalOp StepLowering::descGlobal(Location loc, ArrayRef<int64_t> desc) {
  LLVM::GlobalOp &global = globals.descs[std::vector<int64_t>(desc.begin(), desc.end())];
  if (global)
    return global;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI64Type(), desc.size());
  auto tensorType = RankedTensorType::get({static_cast<int64_t>(desc.size())}, b.getI64Type());
  global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
                                  "__mgs_desc_" + std::to_string(globals.counter++),
                                  DenseElementsAttr::get(tensorType, desc));
  return global;
}

LLVM::LLVMFuncOp StepLowering::kernelDecl(StringRef symbol) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(symbol))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::LLVMFuncOp::create(
      b, module.getLoc(), symbol, LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, ptr, ptr}));
}

Value StepLowering::slotPointer(int64_t slot) {
  Value &loaded = loadedSlots[slot];
  if (!loaded) {
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    Value addr = LLVM::GEPOp::create(b, io.getLoc(), ptr, ptr, io, ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
    loaded = LLVM::LoadOp::create(b, io.getLoc(), ptr, addr);
  }
  return loaded;
}

Value StepLowering::constantPointer(const Storage &s) {
  Value &loaded = loadedConstants[s.index];
  if (!loaded) {
    Location loc = io.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    Value table = LLVM::AddressOfOp::create(b, loc, ptr, kConstantTable);
    Value entry = LLVM::GEPOp::create(b, loc, ptr, ptr, table,
                                      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(s.index)});
    loaded = LLVM::LoadOp::create(b, loc, ptr, entry);
  }
  return loaded;
}

Value StepLowering::pointerTo(Value v) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Location loc = io.getLoc();
  if (!v)
    return LLVM::ZeroOp::create(b, loc, ptr);
  auto [r, offset] = base(v);
  if (offset) {
    // A slice of a copy-free bucket (or of a split's input).
    Value o = LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(offset));
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), pointerTo(r), ArrayRef<LLVM::GEPArg>{o});
  }
  const Storage &s = storage.lookup(r);
  switch (s.kind) {
  case Storage::Slot:
    return slotPointer(s.index);
  case Storage::Arena: {
    // A dynamic index: constant GEP indices hold only 29 bits, and arenas of
    // large models (VGG-16, ResNet-50) go past 256 MiB.
    Value offset = LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(s.index));
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), arena, ArrayRef<LLVM::GEPArg>{offset});
  }
  case Storage::Global:
    return deviceConstants ? constantPointer(s) : LLVM::AddressOfOp::create(b, loc, s.global);
  case Storage::Unset:
    break;
  }
  return LLVM::ZeroOp::create(b, loc, ptr); // a nullable output nobody reads
}

LogicalResult StepLowering::lower(func::FuncOp func, bool train, StringRef name) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // 1. Describe (copy-free concats and splits need no kernel).
  planSlices(body);
  SmallVector<KernelCall> calls;
  DenseMap<Operation *, int64_t> slots;
  for (Operation &op : body.without_terminator()) {
    if (freeOps.contains(&op))
      continue;
    if (isa<comm::AllReduceStartOp, comm::AllGatherStartOp, comm::GTopKStartOp,
            comm::SparseAllReduceStartOp>(op))
      ++numCollectives;
    // The manifest records one worker count: every sparse exchange's.
    int64_t workers = 0;
    if (auto gather = dyn_cast<comm::AllGatherStartOp>(op))
      workers = static_cast<int64_t>(gather.getWorkers());
    else if (auto global = dyn_cast<comm::GTopKStartOp>(op))
      workers = static_cast<int64_t>(global.getWorkers());
    else if (auto sparse = dyn_cast<comm::SparseAllReduceStartOp>(op))
      workers = static_cast<int64_t>(sparse.getWorkers());
    if (workers && compiledWorkers && workers != compiledWorkers)
      return op.emitError() << "convert-train-to-runtime: this exchange is compiled for "
                            << workers << " workers, an earlier one for " << compiledWorkers
                            << "; a step runs on one number of workers";
    if (workers)
      compiledWorkers = workers;
    auto described = describe(&op, slots, precision);
    if (failed(described))
      return failure();
    if (*described)
      calls.push_back(std::move(**described));
    // Marks for calibration: -1 when the loss (and so backprop) starts, the
    // backprop index when a gradient is complete.
    if (instrument && train) {
      auto ce = dyn_cast<SoftmaxCrossEntropyOp>(op);
      if ((ce && !ce.getInGraph()) || isa<ElementwiseLossOp>(op))
        calls.push_back(KernelCall{&op, Kernel::mark, {contract::MarkDesc::kBackpropStart}, {}});
      else if (auto g = dyn_cast<GradientOp>(op))
        calls.push_back(KernelCall{&op, Kernel::mark,
                                   {static_cast<int64_t>(g.getBackpropIndex())}, {}});
    }
  }

  // 2. Storage of io values.
  int64_t numArgs = func.getNumArguments();
  int64_t firstInput = 1 + numParams + (train ? numVelocities : 0);
  for (int64_t i = 0; i < numArgs; ++i)
    storage[func.getArgument(i)] = {Storage::Slot, firstInput + i};
  int64_t firstResult = firstInput + numArgs;
  for (Operation &op : body.without_terminator()) {
    if (auto get = dyn_cast<GetParamOp>(op))
      storage[get.getResult()] = {Storage::Slot, 1 + paramIndex.lookup(get.getName())};
    else if (auto c = dyn_cast<arith::ConstantOp>(op); c && !onlyAssignedAsZeros(c)) {
      LLVM::GlobalOp global = constantGlobal(c);
      storage[c.getResult()] = {Storage::Global,
                                static_cast<int64_t>(globals.constants.size()), global};
      globals.constants.push_back(global);
    }
  }
  // Results computed straight into their io slot when nothing else owns them.
  SmallVector<std::pair<Value, int64_t>> resultCopies;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value r = root(v);
    if (!storage.count(r) && r.getDefiningOp() && !slices.count(r))
      storage[r] = {Storage::Slot, firstResult + static_cast<int64_t>(i)};
    else
      resultCopies.push_back({v, firstResult + static_cast<int64_t>(i)});
  }

  // 3. Arena values and their live ranges (in call indices; results that are
  // copied at the end live to the end).
  // In order of first use, so that the placement (and the compiled code) is
  // the same on every compile: a DenseMap's order follows the values' addresses.
  llvm::MapVector<Value, std::pair<int64_t, int64_t>> live;
  auto touch = [&](Value v, int64_t at) {
    Value r = base(v).first;
    if (storage.count(r))
      return;
    auto [it, inserted] = live.try_emplace(r, at, at);
    if (!inserted) {
      it->second.first = std::min(it->second.first, at);
      it->second.second = std::max(it->second.second, at);
    }
  };
  for (auto [i, c] : llvm::enumerate(calls))
    for (BufArg &arg : c.bufs) {
      if (arg.value && arg.nullable && arg.value.use_empty())
        arg.value = Value(); // nobody reads it: pass null
      if (arg.value)
        touch(arg.value, i);
    }
  for (auto [i, c] : llvm::enumerate(calls))
    for (Value v : c.keepAlive)
      touch(v, i);
  for (auto [v, slot] : resultCopies)
    touch(v, calls.size());
  SmallVector<Value> arenaValues;
  SmallVector<BufferInterval> intervals;
  for (auto &[v, range] : live) {
    arenaValues.push_back(v);
    intervals.push_back({byteSize(v), range.first, range.second});
    unplannedBytes += byteSize(v);
  }
  BufferPlan plan = planBuffers(intervals);
  for (auto [v, offset] : llvm::zip(arenaValues, plan.offsets))
    storage[v] = {Storage::Arena, offset};
  arenaBytes = plan.arenaBytes;

  // 4. Emit.
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, func.getLoc(), name,
                                     LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, ptr}));
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value ctxArg = entry->getArgument(0);
  io = entry->getArgument(1);
  loadedSlots.clear();
  loadedConstants.clear();
  arena = slotPointer(0);
  // The buffer-pointer array every call fills: as long as the longest call's
  // list, including the copies of results at the end (two pointers each; a
  // step of aliases alone has no other call, and an array of one overflowed).
  size_t maxBufs = resultCopies.empty() ? 1 : 2;
  for (const KernelCall &c : calls)
    maxBufs = std::max(maxBufs, c.bufs.size());
  Value count = LLVM::ConstantOp::create(b, func.getLoc(), b.getI64Type(),
                                         b.getI64IntegerAttr(maxBufs));
  Value bufs = LLVM::AllocaOp::create(b, func.getLoc(), ptr, ptr, count, 8);

  auto emitCall = [&](Location loc, Kernel kernel, ArrayRef<int64_t> desc,
                      ArrayRef<Value> pointers) {
    for (auto [j, p] : llvm::enumerate(pointers)) {
      Value addr = LLVM::GEPOp::create(b, loc, ptr, ptr, bufs,
                                       ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(j)});
      LLVM::StoreOp::create(b, loc, p, addr);
    }
    Value descAddr = LLVM::AddressOfOp::create(b, loc, descGlobal(loc, desc));
    LLVM::CallOp::create(b, loc, kernelDecl(contract::kernelSymbol(kernel)), ValueRange{ctxArg, descAddr, bufs});
    ++numCalls;
  };

  for (const KernelCall &c : calls) {
    SmallVector<Value> pointers;
    for (const BufArg &arg : c.bufs)
      pointers.push_back(pointerTo(arg.value));
    if (auto update = dyn_cast<SGDUpdateOp>(c.op)) {
      pointers[0] = slotPointer(1 + paramIndex.lookup(update.getParam()));
      pointers[2] = slotPointer(1 + numParams + velocityIndex.lookup(update.getParam()));
    } else if (auto assign = dyn_cast<AssignParamOp>(c.op)) {
      pointers.back() = slotPointer(1 + paramIndex.lookup(assign.getParam()));
    } else if (auto topk = dyn_cast<comm::TopKSparsifyOp>(c.op)) {
      pointers[1] = slotPointer(1 + paramIndex.lookup(topk.getResidual()));
    } else if (auto global = dyn_cast<comm::GTopKStartOp>(c.op)) {
      pointers[2] = slotPointer(1 + paramIndex.lookup(global.getResidual()));
    }
    emitCall(c.op->getLoc(), c.kernel, c.desc, pointers);
  }
  for (auto [v, slot] : resultCopies)
    emitCall(ret.getLoc(), Kernel::copy, countDesc((byteSize(v) + 3) / 4),
             {pointerTo(v), slotPointer(slot)});

  auto statusFn = module.lookupSymbol<LLVM::LLVMFuncOp>(contract::symbols::kCtxStatus);
  if (!statusFn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    statusFn = LLVM::LLVMFuncOp::create(b, module.getLoc(), contract::symbols::kCtxStatus,
                                        LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr}));
  }
  Value status = LLVM::CallOp::create(b, ret.getLoc(), statusFn, ValueRange{ctxArg}).getResult();
  LLVM::ReturnOp::create(b, ret.getLoc(), status);
  return success();
}

} // namespace mgs::lowering
