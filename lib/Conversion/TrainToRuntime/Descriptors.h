//===- Descriptors.h - Kernel descriptors by field name ---------*- C++ -*-===//
//
// Internal to convert-train-to-runtime: each runtime kernel's descriptor, an
// int64 array in the layout mgsrt/contract.h names field by field, built from
// an op's shapes and attributes (Descriptors.cpp), for KernelCalls.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MGS_LIB_CONVERSION_TRAINTORUNTIME_DESCRIPTORS_H
#define MGS_LIB_CONVERSION_TRAINTORUNTIME_DESCRIPTORS_H

#include "mgs/Dialect/Comm/IR/CommDialect.h"

#include "mgsrt/contract.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <utility>

namespace mgs::lowering {

using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;
using mlir::FloatAttr;
using mlir::Value;
using mlir::ValueRange;

/// A fixed-layout descriptor D: D::Size entries, each given by its field.
template <typename D>
SmallVector<int64_t> fields(std::initializer_list<std::pair<int64_t, int64_t>> values) {
  SmallVector<int64_t> d(D::Size, 0);
  for (auto [field, value] : values)
    d[field] = value;
  return d;
}

/// A float as the bits of a double, how descriptors hold floats.
int64_t bitsOf(double d);

int64_t bitsOf(FloatAttr f);

SmallVector<int64_t> unaryDesc(int64_t op, int64_t count, double alpha, double beta = 0);

SmallVector<int64_t> convDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> w, ArrayRef<int64_t> y,
                              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                              ArrayRef<int64_t> dilations, int64_t group);

SmallVector<int64_t> poolDesc(int64_t kind, ArrayRef<int64_t> x, ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> y, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                              bool countIncludePad, int64_t storageOrder);

/// Operand shapes left-padded with 1s to the output's rank.
SmallVector<int64_t> binaryDesc(int64_t op, ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                ArrayRef<int64_t> out);

/// The runtime's op codes (mgsrt.h) for the kinds of elementwiseKind().
int64_t binaryCode(StringRef kind);

int64_t unaryCode(StringRef kind);

SmallVector<int64_t> gemmDesc(ArrayRef<int64_t> a, ArrayRef<int64_t> b, bool transA, bool transB,
                              FloatAttr alpha, FloatAttr beta, Value c);

/// Batched matmul, with numpy's 1-D promotion resolved and the batch shapes
/// left-padded with 1s to the broadcast batch rank; a transposed operand
/// (rank >= 2) is stored with its last two dimensions swapped.
SmallVector<int64_t> matmulDesc(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs, bool transLhs,
                                bool transRhs);

SmallVector<int64_t> batchNormDesc(ArrayRef<int64_t> x, bool training, int64_t epsilonBits,
                                   int64_t momentumBits, bool unbiasedRunningVar, bool relu);

/// A gather from `table` (rows x the rest) at `indices`.
SmallVector<int64_t> gatherDesc(ArrayRef<int64_t> table, Value indices);

/// x: steps x batch x input; r: directions x 4H x H.
SmallVector<int64_t> lstmDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> r);

/// A layer norm of x over its dimensions from `axis` on: rows x cols.
SmallVector<int64_t> layerNormDesc(ArrayRef<int64_t> x, int64_t axis, int64_t epsilonBits);

/// A GELU of `count` elements, exact ("none") or the tanh approximation.
SmallVector<int64_t> geluDesc(int64_t count, StringRef approximate);

/// A cumulative sum of `in` along `axis`: outer x len x inner.
SmallVector<int64_t> cumSumDesc(ArrayRef<int64_t> in, int64_t axis, bool exclusive, bool reverse);

/// The positions of each of `rows` rows' k greatest or least of `len` entries.
SmallVector<int64_t> topKPositionsDesc(int64_t rows, int64_t len, int64_t k, bool largest);

/// x: steps x batch x input; r: 1 x 3H x H.
SmallVector<int64_t> gruDesc(ArrayRef<int64_t> x, ArrayRef<int64_t> r, bool linearBeforeReset);

/// Dropout of `data`'s elements with `mask` (one entry per block of
/// numel(data) / numel(mask) elements: the verifier's leading-dimensions rule).
SmallVector<int64_t> dropoutDesc(Value data, Value mask, FloatAttr ratio, bool training);
/// numel(result) normal draws.
SmallVector<int64_t> randomNormalDesc(Value result, FloatAttr mean, FloatAttr scale);
/// numel(result) uniform draws.
SmallVector<int64_t> randomUniformDesc(Value result, FloatAttr low, FloatAttr high);

/// A softmax over `axis`: outer x axis x inner.
SmallVector<int64_t> softmaxDesc(ArrayRef<int64_t> shape, int64_t axis, bool log);

SmallVector<int64_t> transposeDesc(ArrayRef<int64_t> in, ArrayRef<int64_t> perm);

/// A concat/split of `whole` along `axis` into `parts`.
SmallVector<int64_t> concatDesc(ArrayRef<int64_t> whole, int64_t axis, ValueRange parts);

/// A sum over `axes` of `in`, times 1 (sum) or 1 / the reduced count (mean).
SmallVector<int64_t> reduceDesc(StringRef kind, ArrayRef<int64_t> in, ArrayRef<int64_t> axes);

SmallVector<int64_t> padDesc(ArrayRef<int64_t> in, ArrayRef<int64_t> pads, FloatAttr value);

/// How an allgather's values travel (MGSRT_VALUES_*).
int64_t wireValues(comm::AllGatherStartOp gather);

} // namespace mgs::lowering

#endif // MGS_LIB_CONVERSION_TRAINTORUNTIME_DESCRIPTORS_H
