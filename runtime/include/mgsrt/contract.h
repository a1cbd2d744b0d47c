//===- contract.h - What compiled code and the runtime agree on -*- C++ -*-===//
//
// The one definition of what crosses between code that mgsc compiles and the
// runtime, besides the C declarations of mgsrt.h:
//  - every entry point a compiled step calls (Kernel, kernelSymbol) and the
//    symbols a compiled model defines;
//  - each kernel's descriptor, field by field (the *Desc structs below: the
//    index of each scalar field, the offset of each array);
//  - the manifest's version and keys (manifest::);
//  - the top-k rule k(n, density) (topkCount).
// convert-train-to-runtime (lib/Conversion) builds descriptors and the
// manifest through these names; the runtime (runtime/lib/Descriptors, the
// kernels, the driver) reads them through the same names. No MLIR and no
// runtime internals here: C++17 and mgsrt.h only.
//
// A descriptor is a constant int64_t array, one per call site. Floats are
// stored as the bit pattern of a double (mgsrt_f64_from_bits). Arrays follow
// their header in the order listed, each as long as the field named.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_CONTRACT_H
#define MGSRT_CONTRACT_H

#include "mgsrt/mgsrt.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

//===--- Entry points -------------------------------------------------------===//

/// Every compute kernel but the top-k exchange's (whose k a density warm-up
/// changes at run time). Each is `mgsrt_<name>` in mgsrt.h.
#define MGSRT_NON_TOPK_KERNELS(X)                                                                  \
  X(unary_fwd)                                                                                     \
  X(unary_bwd)                                                                                     \
  X(clip_fwd)                                                                                      \
  X(clip_bwd)                                                                                      \
  X(binary_fwd)                                                                                    \
  X(binary_bwd)                                                                                    \
  X(gemm_fwd)                                                                                      \
  X(gemm_bwd)                                                                                      \
  X(matmul_fwd)                                                                                    \
  X(matmul_bwd)                                                                                    \
  X(conv_fwd)                                                                                      \
  X(conv_bwd_data)                                                                                 \
  X(conv_bwd_weights)                                                                              \
  X(pool_fwd)                                                                                      \
  X(pool_bwd)                                                                                      \
  X(batch_norm_fwd)                                                                                \
  X(batch_norm_bwd)                                                                                \
  X(gather_fwd)                                                                                    \
  X(gather_bwd)                                                                                    \
  X(lstm_fwd)                                                                                      \
  X(lstm_bwd)                                                                                      \
  X(dropout_fwd)                                                                                   \
  X(dropout_bwd)                                                                                   \
  X(softmax_fwd)                                                                                   \
  X(softmax_bwd)                                                                                   \
  X(transpose)                                                                                     \
  X(concat)                                                                                        \
  X(split)                                                                                         \
  X(pad_fwd)                                                                                       \
  X(pad_bwd)                                                                                       \
  X(copy)                                                                                          \
  X(zero)                                                                                          \
  X(accumulate)                                                                                    \
  X(softmax_cross_entropy)                                                                         \
  X(sgd_update)                                                                                    \
  X(reduce_fwd)                                                                                    \
  X(reduce_bwd)                                                                                    \
  X(gru_fwd)                                                                                       \
  X(gru_bwd)                                                                                       \
  X(clip_grad_norm)                                                                                \
  X(layer_norm_fwd)                                                                                \
  X(layer_norm_bwd)                                                                                \
  X(gelu_fwd)                                                                                      \
  X(gelu_bwd)                                                                                      \
  X(cumsum)                                                                                        \
  X(to_index)                                                                                      \
  X(from_index)                                                                                    \
  X(topk_positions)                                                                                \
  X(elementwise_loss)                                                                              \
  X(random_normal)                                                                                 \
  X(random_uniform)

/// Every compute kernel: CPU implementations (lib/Kernels/CPU) and a device's.
#define MGSRT_COMPUTE_KERNELS(X)                                                                   \
  MGSRT_NON_TOPK_KERNELS(X)                                                                        \
  X(topk_sparsify)                                                                                 \
  X(scatter_add)

/// The collectives: lib/Comm on the CPU, NCCL on a device.
#define MGSRT_COMM_KERNELS(X)                                                                      \
  X(allreduce_start)                                                                               \
  X(allgather_start)                                                                               \
  X(gtopk_start)                                                                                   \
  X(sparse_allreduce_start)                                                                        \
  X(comm_wait)                                                                                     \
  X(broadcast)

/// Every entry point with the kernel signature (ctx, desc, bufs) that a
/// compiled step may call: the kernels, the collectives and the calibration
/// mark.
#define MGSRT_STEP_ENTRY_POINTS(X)                                                                 \
  MGSRT_COMPUTE_KERNELS(X)                                                                         \
  MGSRT_COMM_KERNELS(X)                                                                            \
  X(mark)

namespace mgs::contract {

/// An entry point a compiled step calls, by its mgsrt.h name without the
/// `mgsrt_` prefix.
enum class Kernel {
#define MGSRT_KERNEL_ENUMERATOR(name) name,
  MGSRT_STEP_ENTRY_POINTS(MGSRT_KERNEL_ENUMERATOR)
#undef MGSRT_KERNEL_ENUMERATOR
};

/// The C symbol of `kernel` ("mgsrt_conv_fwd").
constexpr const char *kernelSymbol(Kernel kernel) {
  switch (kernel) {
#define MGSRT_KERNEL_SYMBOL(name)                                                                  \
  case Kernel::name:                                                                               \
    return "mgsrt_" #name;
    MGSRT_STEP_ENTRY_POINTS(MGSRT_KERNEL_SYMBOL)
#undef MGSRT_KERNEL_SYMBOL
  }
  return "";
}

/// The kernel's own name ("conv_fwd"): how the runtime's messages, trace
/// and profile name it.
constexpr const char *kernelName(Kernel kernel) {
  switch (kernel) {
#define MGSRT_KERNEL_NAME(name)                                                                    \
  case Kernel::name:                                                                               \
    return #name;
    MGSRT_STEP_ENTRY_POINTS(MGSRT_KERNEL_NAME)
#undef MGSRT_KERNEL_NAME
  }
  return "";
}

/// The other runtime functions a compiled model calls.
namespace symbols {
inline constexpr const char *kCtxStatus = "mgsrt_ctx_status"; ///< mgsrt_ctx_status(ctx)
inline constexpr const char *kCtxFail = "mgsrt_ctx_fail";     ///< mgsrt_ctx_fail(ctx, status, msg)
/// What a compiled model defines (mgsrt.h, "The compiled model").
inline constexpr const char *kModelManifest = "mgs_model_manifest";
inline constexpr const char *kModelConstants = "mgs_model_constants";
inline constexpr const char *kTrainStep = "mgs_train_step";
inline constexpr const char *kEvalStep = "mgs_eval_step";
inline constexpr const char *kAccumStep = "mgs_accum_step";
} // namespace symbols

//===--- Descriptors --------------------------------------------------------===//
//
// Per kernel family: an enum of its scalar fields' indices (Size: the length
// when there are no arrays, Head: where the arrays start otherwise) and, for
// variable-length descriptors, at()/size() giving the arrays' offsets from the
// length field. Read as the layouts mgsrt.h documents.

/// unary_fwd / unary_bwd: [op (MGSRT_UNARY_*), count, alpha_bits, beta_bits];
/// beta_bits is read by the hard_sigmoid and hard_swish ops only.
struct UnaryDesc {
  enum : int64_t { Op, Count, AlphaBits, BetaBits, Size };
};

/// clip_*, copy, zero, accumulate, sgd_update, to_index: [count].
struct CountDesc {
  enum : int64_t { Count, Size };
};

/// from_index: [count, lo, hi]: int64 values checked to lie in [lo, hi].
struct FromIndexDesc {
  enum : int64_t { Count, Lo, Hi, Size };
};

/// binary_fwd / binary_bwd: [op (MGSRT_BINARY_*), rank, out[rank], lhs[rank],
/// rhs[rank]]; lhs and rhs left-padded with 1s to the rank.
struct BinaryDesc {
  enum : int64_t { Op, Rank, Head };
  enum Array : int64_t { Out, Lhs, Rhs, NumArrays };
  static constexpr int64_t at(Array a, int64_t rank) { return Head + a * rank; }
  static constexpr int64_t size(int64_t rank) { return Head + NumArrays * rank; }
};

/// gemm_fwd / gemm_bwd: Y = alpha op(A) op(B) + beta C; C's shape left-padded
/// to 2-D as (c0, c1); c0 = c1 = 0: no C; precision: MGSRT_PRECISION_*.
struct GemmDesc {
  enum : int64_t { M, N, K, TransA, TransB, AlphaBits, BetaBits, C0, C1, Precision, Size };
};

/// matmul_fwd / matmul_bwd: [batch_rank, out_batch[B], lhs_batch[B],
/// rhs_batch[B], m, k, n, trans_lhs, trans_rhs, precision] (lhs batch x m x
/// k, rhs batch x k x n; trans_lhs = 1: lhs stored batch x k x m, trans_rhs =
/// 1: rhs stored batch x n x k; precision: MGSRT_PRECISION_*).
struct MatMulDesc {
  enum : int64_t { BatchRank, Head };
  enum Array : int64_t { OutBatch, LhsBatch, RhsBatch, NumArrays };
  enum Tail : int64_t { M, K, N, TransLhs, TransRhs, Precision, NumTail };
  static constexpr int64_t at(Array a, int64_t batchRank) { return Head + a * batchRank; }
  static constexpr int64_t at(Tail t, int64_t batchRank) {
    return Head + NumArrays * batchRank + t;
  }
  static constexpr int64_t size(int64_t batchRank) {
    return Head + NumArrays * batchRank + NumTail;
  }
};

/// conv_fwd / conv_bwd_data / conv_bwd_weights: [spatial_rank S, batch,
/// channels, filters, group, in[S], kernel[S], out[S], strides[S],
/// pads_begin[S], pads_end[S], dilations[S], precision] (MGSRT_PRECISION_*).
struct ConvDesc {
  enum : int64_t { SpatialRank, Batch, Channels, Filters, Group, Head };
  enum Array : int64_t { In, Kernel, Out, Strides, PadsBegin, PadsEnd, Dilations, NumArrays };
  enum Tail : int64_t { Precision, NumTail };
  static constexpr int64_t at(Array a, int64_t s) { return Head + a * s; }
  static constexpr int64_t at(Tail t, int64_t s) { return Head + NumArrays * s + t; }
  static constexpr int64_t size(int64_t s) { return Head + NumArrays * s + NumTail; }
};

/// pool_fwd / pool_bwd: [kind (MGSRT_POOL_*), spatial_rank S, batch, channels,
/// in[S], kernel[S], out[S], strides[S], pads_begin[S], pads_end[S],
/// dilations[S], count_include_pad, storage_order].
struct PoolDesc {
  enum : int64_t { Kind, SpatialRank, Batch, Channels, Head };
  enum Array : int64_t { In, Kernel, Out, Strides, PadsBegin, PadsEnd, Dilations, NumArrays };
  enum Tail : int64_t { CountIncludePad, StorageOrder, NumTail };
  static constexpr int64_t at(Array a, int64_t s) { return Head + a * s; }
  static constexpr int64_t at(Tail t, int64_t s) { return Head + NumArrays * s + t; }
  static constexpr int64_t size(int64_t s) { return Head + NumArrays * s + NumTail; }
};

/// batch_norm_fwd / batch_norm_bwd: x is batch x channels x spatial.
struct BatchNormDesc {
  enum : int64_t {
    Batch,
    Channels,
    Spatial,
    Training,
    EpsilonBits,
    MomentumBits,
    UnbiasedRunningVar,
    Relu,
    Size
  };
};

/// gather_fwd / gather_bwd: table rows x row_size, count indices.
struct GatherDesc {
  enum : int64_t { Rows, RowSize, Count, Size };
};

/// lstm_fwd / lstm_bwd: x is steps x batch x input_size; hidden_size H.
struct LstmDesc {
  enum : int64_t { Steps, Batch, InputSize, HiddenSize, Size };
};

/// dropout_fwd / dropout_bwd: count elements, one mask entry (one draw) for
/// each `inner` consecutive ones (1: ordinary dropout; the elements of one
/// sample: stochastic depth's per-sample mask).
struct DropoutDesc {
  enum : int64_t { Count, RatioBits, Training, Inner, Size };
};

/// random_normal: count float32 values drawn from the normal distribution of
/// mean and standard deviation `scale` (float64 bits), one draw of the
/// context's random stream each.
struct RandomNormalDesc {
  enum : int64_t { Count, MeanBits, ScaleBits, Size };
};

/// random_uniform: count float32 values drawn uniformly from [low, high)
/// (float64 bits), one draw of the context's random stream each.
struct RandomUniformDesc {
  enum : int64_t { Count, LowBits, HighBits, Size };
};

/// softmax_fwd / softmax_bwd: the tensor is outer x axis x inner; log = 1:
/// log-softmax.
struct SoftmaxDesc {
  enum : int64_t { Outer, Axis, Inner, Log, Size };
};

/// transpose: [rank, in[rank], perm[rank]].
struct TransposeDesc {
  enum : int64_t { Rank, Head };
  enum Array : int64_t { In, Perm, NumArrays };
  static constexpr int64_t at(Array a, int64_t rank) { return Head + a * rank; }
  static constexpr int64_t size(int64_t rank) { return Head + NumArrays * rank; }
};

/// concat / split: [outer, inner, parts, extent[parts]].
struct ConcatDesc {
  enum : int64_t { Outer, Inner, Parts, Head };
  static constexpr int64_t extentAt(int64_t part) { return Head + part; }
  static constexpr int64_t size(int64_t parts) { return Head + parts; }
};

/// pad_fwd / pad_bwd: [rank, in[rank], pads[2 rank] (begins, then ends),
/// value_bits].
struct PadDesc {
  enum : int64_t { Rank, Head };
  static constexpr int64_t inAt(int64_t rank) { return Head + 0 * rank; }
  static constexpr int64_t padsAt(int64_t rank) { return Head + rank; }
  static constexpr int64_t valueBitsAt(int64_t rank) { return Head + 3 * rank; }
  static constexpr int64_t size(int64_t rank) { return Head + 3 * rank + 1; }
};

/// softmax_cross_entropy: logits batch x classes; labels equal to
/// ignore_index are not counted; label_smoothing_bits: the smoothing's
/// float64 bits (0: none); flags: kSum for reduction "sum" (the loss and its
/// gradient not divided by the counted labels' count or weight; else the
/// mean), kUnscaled for a cross-entropy inside a loss the graph computes (its
/// gradient not multiplied by the loss scale: the loss's own gradient, which
/// carries it, multiplies it), kPerSample for reduction "none" inside such a
/// loss (the loss buffer holds each sample's loss, 0 on ignored ones, and
/// dlogits each row's own gradient, neither divided), kLogProbabilities with
/// any of those for logits that are log-probabilities already (no softmax: the
/// negative log-likelihood, -w[label] logit[label] a row; no label smoothing).
/// The class weights, if any, are a buffer.
struct SoftmaxCrossEntropyDesc {
  enum : int64_t { Batch, Classes, IgnoreIndex, LabelSmoothingBits, Flags, Size };
  enum : int64_t { kSum = 1, kUnscaled = 2, kPerSample = 4, kLogProbabilities = 8 };
};

/// elementwise_loss: the mean over `count` elements of a loss of a
/// prediction against a float target; kind: MGSRT_LOSS_*; beta_bits:
/// smooth_l1's beta (float64 bits); last: the length of the last axis (the
/// pos_weight buffer's, if any); sum: 1 for reduction "sum" (not divided by
/// count), 0 for the mean.
struct ElementwiseLossDesc {
  enum : int64_t { Kind, Count, BetaBits, Last, Sum, Size };
};

/// topk_sparsify: select k of count entries.
struct TopKDesc {
  enum : int64_t { Count, K, Size };
};

/// scatter_add: k entries from each of `workers` into count.
struct ScatterAddDesc {
  enum : int64_t { Count, K, Workers, Size };
};

/// allreduce_start: count floats, in place, in request slot `slot`.
struct AllReduceDesc {
  enum : int64_t { Count, Slot, Size };
};

/// allgather_start: k values and indices a rank, in request slot `slot`;
/// source_count: the gradient the k were selected from (density warm-up; 0:
/// none); values: how they travel (MGSRT_VALUES_*).
struct AllGatherDesc {
  enum : int64_t { K, Slot, SourceCount, Values, Size };
};

/// gtopk_start: the global top-k of every rank's k entries selected from a
/// gradient of count entries (its residual's size; also the density
/// warm-up's n), in request slot `slot`.
struct GTopKDesc {
  enum : int64_t { K, Slot, Count, Size };
};

/// sparse_allreduce_start: every rank's k entries summed into a dense
/// tensor of count entries, in request slot `slot`; balanced = 1: regions
/// from the entries' index quantiles, 0: equal ranges.
struct SparseAllReduceDesc {
  enum : int64_t { K, Slot, Count, Balanced, Size };
};

/// comm_wait.
struct WaitDesc {
  enum : int64_t { Slot, Size };
};

/// broadcast (blocking): bytes from rank root.
struct BroadcastDesc {
  enum : int64_t { Bytes, Root, Size };
};

/// mark: id -1 where backprop starts, else a gradient's backprop index.
struct MarkDesc {
  enum : int64_t { Id, Size };
  static constexpr int64_t kBackpropStart = -1;
};

/// reduce_fwd / reduce_bwd: [rank, scale_bits, in[rank], out[rank]]; out is
/// in with 1 on each reduced axis.
struct ReduceDesc {
  enum : int64_t { Rank, ScaleBits, Head };
  enum Array : int64_t { In, Out, NumArrays };
  static constexpr int64_t at(Array a, int64_t rank) { return Head + a * rank; }
  static constexpr int64_t size(int64_t rank) { return Head + NumArrays * rank; }
};

/// gru_fwd / gru_bwd: x is steps x batch x input_size; hidden_size H;
/// linear_before_reset as ONNX's attribute (1: what PyTorch exports).
struct GruDesc {
  enum : int64_t { Steps, Batch, InputSize, HiddenSize, LinearBeforeReset, Size };
};

/// clip_grad_norm: [count C, max_norm_bits, n[C]]: the sizes of the C
/// gradients whose global norm is clipped to max_norm.
struct ClipGradNormDesc {
  enum : int64_t { Count, MaxNormBits, Head };
  static constexpr int64_t sizeAt(int64_t grad) { return Head + grad; }
  static constexpr int64_t size(int64_t count) { return Head + count; }
};

/// layer_norm_fwd / layer_norm_bwd: x is rows x cols, each row normalized.
struct LayerNormDesc {
  enum : int64_t { Rows, Cols, EpsilonBits, Size };
};

/// gelu_fwd / gelu_bwd: count elements, approximate MGSRT_GELU_NONE (erf) or
/// MGSRT_GELU_TANH.
struct GeluDesc {
  enum : int64_t { Count, Approximate, Size };
};

/// cumsum: the tensor is outer x len x inner, summed along len; exclusive =
/// 1: each sum leaves out its own element; reverse = 1: from the end.
struct CumSumDesc {
  enum : int64_t { Outer, Len, Inner, Exclusive, Reverse, Size };
};

/// topk_positions: x is rows x len; each row's k greatest (largest = 1) or
/// least (largest = 0) entries' positions.
struct TopKPositionsDesc {
  enum : int64_t { Rows, Len, K, Largest, Size };
};

//===--- The top-k rule -----------------------------------------------------===//

/// Entries a top-k exchange of an n-element gradient sends at `density`:
/// max(1, floor(density * n)) (the OMGS-SGD paper's k). The compiler's k,
/// the runtime's density warm-up, the planner's cost model and calibration
/// all use this.
inline int64_t topkCount(int64_t n, double density) {
  const int64_t k = static_cast<int64_t>(std::floor(density * static_cast<double>(n)));
  return std::max<int64_t>(1, k);
}

//===--- The manifest -------------------------------------------------------===//
//
// mgs_model_manifest()'s text, one item a line ("KEY VALUE ..."), documented
// in mgsrt.h; written by convert-train-to-runtime, parsed by the driver
// (runtime/lib/Driver/Manifest.cpp).

namespace manifest {
/// The first line: "mgs-manifest <kVersion>". A runtime refuses other versions.
/// Version 2: the allgather descriptor became [k, slot, source_count, half].
/// Version 3: gemm, matmul and conv descriptors end in a precision field;
/// the allgather's half flag became its values format (2: bfloat16).
inline constexpr std::string_view kHeader = "mgs-manifest";
inline constexpr int kVersion = 3;

inline constexpr std::string_view kMode = "mode"; ///< kModeTrain | kModeInference
inline constexpr std::string_view kModeTrain = "train";
inline constexpr std::string_view kModeInference = "inference";
inline constexpr std::string_view kBatchSize = "batch_size";
inline constexpr std::string_view kArenaBytes = "arena_bytes";
/// "param NAME trainable|state RANK D0 ..."
inline constexpr std::string_view kParam = "param";
inline constexpr std::string_view kTrainable = "trainable";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kInput = "input";            ///< float32: NAME RANK D0 ...
inline constexpr std::string_view kIndexInput = "index_input"; ///< int64: NAME RANK D0 ...
/// "index_rows NAME R TABLE" (optional, after NAME's index_input line): the
/// int64 input NAME is gathered from, directly, tables of R rows at least
/// (TABLE: the param with the fewest, or "-" for a computed one), so its
/// values must be in [-R, R); the driver checks the data against it.
inline constexpr std::string_view kIndexRows = "index_rows";
/// "index_range NAME LO HI" (optional, after NAME's index_input line): the
/// int64 input NAME is also read as numbers (train.from_index), which takes
/// values in [LO, HI] only; the driver checks the data against it.
inline constexpr std::string_view kIndexRange = "index_range";
inline constexpr std::string_view kOutput = "output";          ///< NAME RANK D0 ...
inline constexpr std::string_view kLabels = "labels";          ///< RANK D0 ...
/// "label_shape RANK N D1 ..." (optional, after kLabels, the cross-entropy):
/// the labels are rows of scores of rank >= 3 (mgsc --class-axis), one per
/// position of (N, D1, ...), as many as kLabels says; labels data of rank
/// > 2 must have that shape.
inline constexpr std::string_view kLabelShape = "label_shape";
/// "loss KIND" (train mode, instead of kClasses): the loss is an
/// elementwise_loss (mse, l1, "smooth_l1 BETA", bce_with_logits) against
/// float32 targets of the labels' shape, or "value": the first output, a
/// scalar, is the loss the graph computes (labels of rank 0, unread: the
/// targets are inputs); absent: the cross-entropy against int64 class labels
/// (rank 1).
inline constexpr std::string_view kLoss = "loss";
/// The elementwise_loss kinds by their manifest name (the compiler's
/// train.elementwise_loss kinds).
struct LossKindName {
  std::string_view name;
  int kind; ///< MGSRT_LOSS_*
};
inline constexpr LossKindName kLossKinds[] = {{"mse", MGSRT_LOSS_MSE},
                                              {"l1", MGSRT_LOSS_L1},
                                              {"smooth_l1", MGSRT_LOSS_SMOOTH_L1},
                                              {"bce_with_logits", MGSRT_LOSS_BCE_WITH_LOGITS},
                                              {"value", MGSRT_LOSS_VALUE}};
/// The MGSRT_LOSS_* kind named `name`, or -1.
constexpr int lossKindNamed(std::string_view name) {
  for (const LossKindName &k : kLossKinds)
    if (k.name == name)
      return k.kind;
  return -1;
}
/// "pos_weight W0 W1 ..." (optional, with loss bce_with_logits): one weight
/// of the positive targets per position of the labels' last axis
/// (BCEWithLogitsLoss's pos_weight), as float32 decimals.
inline constexpr std::string_view kPosWeight = "pos_weight";
inline constexpr std::string_view kClasses = "classes";
/// "ignore_index I" (optional, train mode; kDefaultIgnoreIndex when absent):
/// labels of this value are padding the loss ignores (the data may hold them).
inline constexpr std::string_view kIgnoreIndex = "ignore_index";
inline constexpr int64_t kDefaultIgnoreIndex = -100; ///< PyTorch's ignore_index

inline constexpr std::string_view kCollectives = "collectives";
/// "sparse_collectives NAME ..." (target cuda): the sparse collectives the
/// step runs, named as mgsc's --sparse-collective (kGTopK, kSparseAllReduce);
/// a GPU runs them on NCCL or, with the executable's --comm mpi, staged
/// over MPI (informational: every GPU communicator runs both).
inline constexpr std::string_view kSparseCollectives = "sparse_collectives";
inline constexpr std::string_view kGTopK = "gtopk";
inline constexpr std::string_view kSparseAllReduce = "sparse-allreduce";
inline constexpr std::string_view kWorkers = "workers";
inline constexpr std::string_view kTarget = "target"; ///< kTargetCpu | kTargetCuda
inline constexpr std::string_view kTargetCpu = "cpu";
inline constexpr std::string_view kTargetCuda = "cuda";
/// "precision bf16|f16" (optional; absent: float32): the GEMMs, matmuls and
/// convolutions compute on bfloat16 or half operands (their descriptors say
/// so; this line is for the run's header, and f16 turns on loss scaling).
inline constexpr std::string_view kPrecision = "precision";
inline constexpr std::string_view kPrecisionBf16 = "bf16";
inline constexpr std::string_view kPrecisionF16 = "f16";
inline constexpr std::string_view kDensitySchedule = "density_schedule";
/// "accumulate N" (optional, train mode; absent: 1): an optimizer step takes
/// N batches, mgs_accum_step for the first N - 1 and mgs_train_step for the
/// last (mgsc --accumulate).
inline constexpr std::string_view kAccumulate = "accumulate";
inline constexpr int64_t kMaxAccumulate = int64_t(1) << 20; ///< mgsc --accumulate's bound
inline constexpr std::string_view kInstrumented = "instrumented"; ///< always "1"
inline constexpr std::string_view kMark = "mark";                 ///< B NAME
inline constexpr std::string_view kSource = "source";             ///< the rest of the line
/// "checksum HEX", the last line (optional: older executables lack it): 16
/// hex digits of checksum() over every byte before the line, so an
/// executable whose manifest was patched (an arena size) is refused before
/// anything is allocated from it.
inline constexpr std::string_view kChecksum = "checksum";
/// FNV-1a 64.
inline constexpr uint64_t checksum(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}
/// Parameters named with this prefix are the compiler's error-feedback
/// residuals (state, not the model's: --save leaves them out).
inline constexpr std::string_view kResidualPrefix = "mgs.residual/";
/// Parameters named with this prefix are the compiler's gradient
/// accumulators (mgsc --accumulate): zero between optimizer steps.
inline constexpr std::string_view kAccumulatorPrefix = "mgs.accum/";
inline bool isResidualName(std::string_view name) {
  return name.substr(0, kResidualPrefix.size()) == kResidualPrefix;
}
inline bool isAccumulatorName(std::string_view name) {
  return name.substr(0, kAccumulatorPrefix.size()) == kAccumulatorPrefix;
}
/// The compiler's per-worker gradient state (residuals and accumulators):
/// zero at the start, each worker's own, in the loss scale's units, and not
/// the model's (--save leaves it out).
inline bool isWorkerStateName(std::string_view name) {
  return isResidualName(name) || isAccumulatorName(name);
}
} // namespace manifest

} // namespace mgs::contract

#endif // MGSRT_CONTRACT_H
