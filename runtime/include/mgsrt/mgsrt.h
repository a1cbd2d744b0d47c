/*===- mgsrt.h - The mgs runtime C ABI ------------------------------------===*
 *
 * The one contract between code compiled by mgsc and the runtime. No MLIR
 * here. All tensors are float32 (int64 for labels and MaxPool indices, uint8
 * for dropout masks), dense, row-major (NCHW for images), with shapes fixed
 * at compile time.
 *
 * Kernels share one signature:
 *
 *   mgsrt_status_t mgsrt_<kernel>(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
 *
 * `desc` is a constant array the compiler emits once per call site (its
 * address is stable, so the runtime may cache per-call-site state such as
 * oneDNN primitives keyed by it). `bufs` lists the tensors, inputs first,
 * outputs last; a buffer documented as "nullable" may be NULL. Float
 * attributes are stored in `desc` as the bit pattern of a double
 * (mgsrt_f64_from_bits). Outputs never alias inputs unless stated.
 *
 * Errors are sticky, like CUDA's: a failing kernel returns a non-zero status
 * and records it with a message in `ctx`; later kernels on that context do
 * nothing and return the same status until mgsrt_ctx_clear. The compiled step
 * functions return the context's status at their end.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MGSRT_MGSRT_H
#define MGSRT_MGSRT_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MGSRT_EXPORT __attribute__((visibility("default")))

typedef int32_t mgsrt_status_t;
enum {
  MGSRT_OK = 0,
  MGSRT_ERROR_INVALID_ARGUMENT = 1, /* a descriptor or buffer is malformed */
  MGSRT_ERROR_OUT_OF_MEMORY = 2,
  MGSRT_ERROR_BACKEND = 3,          /* oneDNN (or another library) failed */
  MGSRT_ERROR_IO = 4,               /* a file could not be read or written */
  MGSRT_ERROR_UNAVAILABLE = 5,      /* the device asked for is not present, or a kernel has
                                       no implementation on it */
};

typedef struct mgsrt_ctx mgsrt_ctx_t;

static inline double mgsrt_f64_from_bits(int64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/*===--- Context ----------------------------------------------------------===*/

/* Creates a context. `seed` seeds the random stream (dropout, random_normal,
 * random_uniform). Returns NULL only when out of memory. */
MGSRT_EXPORT mgsrt_ctx_t *mgsrt_ctx_create(uint64_t seed);
MGSRT_EXPORT void mgsrt_ctx_destroy(mgsrt_ctx_t *ctx);
/* The first error recorded since creation or the last clear (MGSRT_OK if none)
 * and its message ("" if none). The message is owned by the context. */
MGSRT_EXPORT mgsrt_status_t mgsrt_ctx_status(const mgsrt_ctx_t *ctx);
MGSRT_EXPORT const char *mgsrt_ctx_message(const mgsrt_ctx_t *ctx);
MGSRT_EXPORT void mgsrt_ctx_clear(mgsrt_ctx_t *ctx);
/* Records an error (keeps the first one). Returns `status`. */
MGSRT_EXPORT mgsrt_status_t mgsrt_ctx_fail(mgsrt_ctx_t *ctx, mgsrt_status_t status,
                                           const char *message);
/* Hyper-parameters read by mgsrt_sgd_update; they may change every step.
 * With AdamW (mgsrt_ctx_set_adamw), lr and weight_decay are AdamW's and
 * momentum is unused. */
MGSRT_EXPORT void mgsrt_ctx_set_sgd(mgsrt_ctx_t *ctx, float lr, float momentum,
                                    float weight_decay);
/* Makes mgsrt_sgd_update apply AdamW from now on (the context never goes back
 * to SGD): betas in [0, 1), eps >= 0, and `step` the 1-based number of the
 * update about to run (bias correction 1 - beta^step); call before each step. */
MGSRT_EXPORT void mgsrt_ctx_set_adamw(mgsrt_ctx_t *ctx, float beta1, float beta2, float eps,
                                      int64_t step);
/* Loss scaling (mixed precision, as torch.amp.GradScaler): the loss kernels
 * (mgsrt_softmax_cross_entropy, mgsrt_elementwise_loss) multiply the
 * gradient they start backprop with by `scale`, and mgsrt_sgd_update and
 * mgsrt_clip_grad_norm divide the gradients they read by it, so what the
 * optimizer applies does not change (bit for bit when the scale is a power
 * of two and nothing overflows or underflows). The gradients and what
 * accumulates them between steps (sparsification's residuals) are in scaled
 * units: the caller rescales residuals when it changes the scale. scale: a
 * positive finite float, 1 by default; anything else is ignored. */
MGSRT_EXPORT void mgsrt_ctx_set_loss_scale(mgsrt_ctx_t *ctx, float scale);
MGSRT_EXPORT float mgsrt_ctx_loss_scale(const mgsrt_ctx_t *ctx);
/* The random stream (dropout, random_normal, random_uniform): its state (for
 * checkpoints) and a reset. */
MGSRT_EXPORT uint64_t mgsrt_ctx_rng_state(const mgsrt_ctx_t *ctx);
MGSRT_EXPORT void mgsrt_ctx_set_rng_state(mgsrt_ctx_t *ctx, uint64_t state);
/* Non-finite gradients: mgsrt_sgd_update notes, as it reads each gradient
 * (no extra pass), whether it held a NaN or an infinity (a GPU's notes come
 * back with its next copy to or from the host, or mgsrt_synchronize). Returns
 * how many updates met one since the last call, sets *param (may be NULL) to
 * the first one's param buffer (NULL if none), and starts counting afresh. */
MGSRT_EXPORT int64_t mgsrt_ctx_take_nonfinite(mgsrt_ctx_t *ctx, const void **param);

/*===--- Devices ----------------------------------------------------------===*
 * A context runs its kernels on the CPU (the default) or on a GPU. On a GPU
 * context every buffer a kernel or collective is given must be device memory
 * (mgsrt_alloc), kernels are queued on the context's stream and return before
 * they finish (errors they meet surface at the next mgsrt_synchronize or
 * copy to the host), and collectives run on their own stream (NCCL),
 * ordered with events, so they overlap the kernels queued after them.
 *===----------------------------------------------------------------------===*/

enum { MGSRT_DEVICE_CPU = 0, MGSRT_DEVICE_CUDA = 1 };

/* Makes the context run on `device` (ordinal: which GPU; < 0: the process's
 * local rank under mpirun (OMPI_COMM_WORLD_LOCAL_RANK) modulo the GPUs present,
 * 0 without mpirun: one process per GPU). Call it before any
 * kernel and before mgsrt_ctx_set_comm. CUDA loads the runtime's CUDA library
 * (libmgsrt_cuda.so, beside the runtime at build time, or $MGSRT_CUDA_LIBRARY):
 * MGSRT_ERROR_UNAVAILABLE with a message when no GPU is present, when the
 * runtime was built without CUDA or when the library cannot be loaded. */
MGSRT_EXPORT mgsrt_status_t mgsrt_ctx_set_device(mgsrt_ctx_t *ctx, int device, int ordinal);
MGSRT_EXPORT int mgsrt_ctx_device(const mgsrt_ctx_t *ctx);
/* Memory on the context's device (CPU: 64-byte aligned host memory). *out is
 * NULL on failure (recorded in ctx). bytes = 0 gives NULL and MGSRT_OK. */
MGSRT_EXPORT mgsrt_status_t mgsrt_alloc(mgsrt_ctx_t *ctx, size_t bytes, void **out);
MGSRT_EXPORT void mgsrt_free(mgsrt_ctx_t *ctx, void *ptr);
/* Copies between host memory and the context's device (both plain memcpy on
 * a CPU context). They wait for the kernels queued before them. */
MGSRT_EXPORT mgsrt_status_t mgsrt_copy_to_device(mgsrt_ctx_t *ctx, void *dst, const void *src,
                                                 size_t bytes);
MGSRT_EXPORT mgsrt_status_t mgsrt_copy_to_host(mgsrt_ctx_t *ctx, void *dst, const void *src,
                                               size_t bytes);
/* mgsrt_copy_to_device without the wait: queued after the kernels before it
 * and before those after it, it returns at once. src must stay allocated and
 * unchanged until the next call that waits for the device (a copy to the
 * host, mgsrt_synchronize). A CPU context copies at once. */
MGSRT_EXPORT mgsrt_status_t mgsrt_copy_to_device_async(mgsrt_ctx_t *ctx, void *dst,
                                                       const void *src, size_t bytes);
/* Host memory for copies to and from the context's device: page-locked on a
 * GPU (its copies run at full speed and mgsrt_copy_to_device_async overlaps
 * them with the host's work), 64-byte aligned host memory on the CPU. *out is
 * NULL on failure (recorded in ctx). bytes = 0 gives NULL and MGSRT_OK. Free
 * with mgsrt_host_free on the same context, before it is destroyed. */
MGSRT_EXPORT mgsrt_status_t mgsrt_host_alloc(mgsrt_ctx_t *ctx, size_t bytes, void **out);
MGSRT_EXPORT void mgsrt_host_free(mgsrt_ctx_t *ctx, void *ptr);
/* Waits for every kernel queued on the context; returns the context's status. */
MGSRT_EXPORT mgsrt_status_t mgsrt_synchronize(mgsrt_ctx_t *ctx);

/* The training step as a CUDA graph (a GPU context; the CPU's is
 * MGSRT_ERROR_UNAVAILABLE). Between mgsrt_graph_begin and mgsrt_graph_end the
 * kernels and collectives the context is given are captured, not run: call
 * the compiled step once between them (after one step run as usual, which
 * allocates what the step needs), then mgsrt_graph_launch to run it, and
 * again each step. What a graph cannot hold (a result read back to the host
 * within the step, scratch memory that grows, the sparse collectives,
 * collectives staged through host memory, profiling) fails the
 * capture with MGSRT_ERROR_UNAVAILABLE naming it: mgsrt_graph_end returns the
 * context's status, nothing is kept, and after mgsrt_ctx_clear the step runs
 * as usual. The replays use the context's current learning rate, momentum,
 * weight decay and AdamW step, and move its random stream on as the step
 * would; mgsrt_graph_launch sets *ran = 0 without
 * running anything when no graph is kept or it is stale (scratch memory
 * moved, or the loss scale or top-k density changed since its capture):
 * capture again. Non-finite gradients and bad labels come back, as a step's,
 * with the next copy to the host or mgsrt_synchronize. keep = 0 drops a
 * capture that succeeded. */
MGSRT_EXPORT mgsrt_status_t mgsrt_graph_begin(mgsrt_ctx_t *ctx);
MGSRT_EXPORT mgsrt_status_t mgsrt_graph_end(mgsrt_ctx_t *ctx, int keep);
MGSRT_EXPORT mgsrt_status_t mgsrt_graph_launch(mgsrt_ctx_t *ctx, int *ran);

/*===--- Kernels ----------------------------------------------------------===*
 * Notation: S = number of spatial dims (1..3); shapes listed in desc order.
 *===----------------------------------------------------------------------===*/

/* Unary elementwise.  desc: [op, n, alpha_bits, beta_bits]
 *   op: 0 relu, 1 leaky_relu (alpha), 2 sigmoid, 3 tanh, 4 sqrt, 5 erf,
 *       6 pow (x to the constant power alpha),
 *       7 hard_sigmoid: y = max(0, min(1, alpha x + beta)),
 *       8 hard_swish: y = x max(0, min(1, alpha x + beta)) (ONNX: alpha 1/6, beta 1/2),
 *       9 exp, 10 cos, 11 sin (rotary position embeddings' angles),
 *       12 abs, 13 log, 14 softsign: x / (1 + |x|), 15 mish: x tanh(softplus(x)),
 *       16 elu: x > 0 ? x : alpha (exp(x) - 1),
 *       17 celu: x > 0 ? x : alpha (exp(x / alpha) - 1),
 *       18 selu: beta (x > 0 ? x : alpha (exp(x) - 1)) (ONNX's gamma is beta),
 *       19 round: half to even, 20 floor, 21 ceil (their gradients 0: a compiled step never
 *       takes them).
 *   beta_bits is read by hard_sigmoid, hard_swish and selu only (a descriptor
 *   of the other ops may end after alpha_bits).
 * fwd  bufs: x, y
 * bwd  bufs: x, y, dy, dx   (relu, leaky, erf, pow, the hard ops, cos, sin, 12-21 use x;
 *   sigmoid, tanh, sqrt and exp use y).
 *   hard_sigmoid's gradient is alpha where 0 < alpha x + beta < 1, else 0;
 *   hard_swish's is 0 where alpha x + beta < 0, 1 where it is > 1, else
 *   2 alpha x + beta (PyTorch's choice at the kinks). */
/* clang-format off */
enum { MGSRT_UNARY_RELU = 0, MGSRT_UNARY_LEAKY_RELU = 1, MGSRT_UNARY_SIGMOID = 2,
       MGSRT_UNARY_TANH = 3, MGSRT_UNARY_SQRT = 4, MGSRT_UNARY_ERF = 5, MGSRT_UNARY_POW = 6,
       MGSRT_UNARY_HARD_SIGMOID = 7, MGSRT_UNARY_HARD_SWISH = 8, MGSRT_UNARY_EXP = 9,
       MGSRT_UNARY_COS = 10, MGSRT_UNARY_SIN = 11, MGSRT_UNARY_ABS = 12, MGSRT_UNARY_LOG = 13,
       MGSRT_UNARY_SOFTSIGN = 14, MGSRT_UNARY_MISH = 15, MGSRT_UNARY_ELU = 16,
       MGSRT_UNARY_CELU = 17, MGSRT_UNARY_SELU = 18, MGSRT_UNARY_ROUND = 19,
       MGSRT_UNARY_FLOOR = 20, MGSRT_UNARY_CEIL = 21 };
/* clang-format on */
MGSRT_EXPORT mgsrt_status_t mgsrt_unary_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_unary_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Clip to one-element bounds.  desc: [n]
 * fwd  bufs: x, min, max, y
 * bwd  bufs: x, min, max, dy, dx   (dx = dy where min <= x <= max, else 0) */
MGSRT_EXPORT mgsrt_status_t mgsrt_clip_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_clip_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Broadcasting binary op.  desc: [op, R, out[R], lhs[R], rhs[R]]; lhs/rhs shapes
 *   left-padded with 1s to rank R. op: 0 add, 1 sub, 2 mul, 3 div; 4 greater, 5
 *   greater_equal, 6 equal (1 or 0, 0 with a NaN; no gradient); 7 keep_where (lhs
 *   where rhs is not 0, else 0; lhs's gradient likewise, rhs's 0). */
/* fwd  bufs: lhs, rhs, out
 * bwd  bufs: lhs, rhs, dout, dlhs (nullable), drhs (nullable), summed over the broadcast dims */
/* clang-format off */
enum { MGSRT_BINARY_ADD = 0, MGSRT_BINARY_SUB = 1, MGSRT_BINARY_MUL = 2, MGSRT_BINARY_DIV = 3,
       MGSRT_BINARY_GREATER = 4, MGSRT_BINARY_GREATER_EQUAL = 5, MGSRT_BINARY_EQUAL = 6,
       MGSRT_BINARY_KEEP_WHERE = 7 };
/* clang-format on */
MGSRT_EXPORT mgsrt_status_t mgsrt_binary_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_binary_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* How a sparse exchange's values travel (the allgather descriptor's values
 * field): float32, or IEEE half or bfloat16 (6 bytes per entry, not 8),
 * rounded to nearest even and widened back to float32 on arrival. */
enum { MGSRT_VALUES_F32 = 0, MGSRT_VALUES_F16 = 1, MGSRT_VALUES_BF16 = 2 };

/* The arithmetic of a GEMM, batched matmul or convolution (its descriptor's
 * precision field).  Buffers are float32 either way.
 *   F32:  float32 operands and accumulation.
 *   BF16: mixed precision: the operands (inputs and incoming gradients) are
 *         rounded to bfloat16 (to nearest, ties to even), the products are
 *         accumulated in float32 and the result is float32. Products of
 *         bfloat16 values are exact in float32 too, so a CPU without oneDNN's
 *         bfloat16 kernels computes on rounded float32 copies.
 *   F16:  the same with the operands rounded to IEEE half (to nearest, ties to
 *         even; above 65504 to infinity, small values to half's subnormals or
 *         zero). Products of halves are exact in float32, so on a CPU without
 *         half arithmetic the kernels compute on rounded float32 copies with
 *         the same results. Gradients that underflow half need a loss scale
 *         (mgsrt_ctx_set_loss_scale). */
enum { MGSRT_PRECISION_F32 = 0, MGSRT_PRECISION_BF16 = 1, MGSRT_PRECISION_F16 = 2 };

/* Whether the context's GEMMs, matmuls and convolutions compute in
 * `precision`'s own arithmetic (1), or in float32 on operands rounded to it
 * (0: the same products, float32 accumulation as above, without the speed):
 * on a CPU, half always, bfloat16 where oneDNN has no bfloat16 kernels (they
 * need AVX-512; DNNL_MAX_CPU_ISA can withhold them); on a GPU, both for now.
 * float32 is 1; a value that is not an MGSRT_PRECISION_* is -1. */
MGSRT_EXPORT int mgsrt_ctx_precision_native(const mgsrt_ctx_t *ctx, int precision);

/* Gemm: Y = alpha * op(A) op(B) + beta * C.  desc: [M, N, K, trans_a, trans_b,
 *   alpha_bits, beta_bits, c0, c1, precision]
 *   (C's shape left-padded to 2-D; c0 = c1 = 0: no C; precision: MGSRT_PRECISION_*)
 * fwd  bufs: A, B, C (nullable), Y
 * bwd  bufs: A, B, dY, dA (nullable), dB (nullable), dC (nullable) */
MGSRT_EXPORT mgsrt_status_t mgsrt_gemm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_gemm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Batched matmul with broadcast batch dims (1-D promotion resolved by the
 * compiler).  desc: [B, out_batch[B], lhs_batch[B], rhs_batch[B], M, K, N,
 *   trans_lhs, trans_rhs, precision]
 *   lhs is lhs_batch x M x K, rhs is rhs_batch x K x N, out is out_batch x M x N.
 * fwd  bufs: lhs, rhs, out
 * bwd  bufs: lhs, rhs, dout, dlhs (nullable), drhs (nullable) */
MGSRT_EXPORT mgsrt_status_t mgsrt_matmul_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_matmul_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Grouped N-D convolution (ONNX Conv).  desc: [S, N, C, M, group, in[S],
 *   kernel[S], out[S], strides[S], pads_begin[S], pads_end[S], dilations[S],
 *   precision]
 *   x: N x C x in, w: M x C/group x kernel, b: M, y: N x M x out.
 * fwd          bufs: x, w, b (nullable), y
 * bwd_data     bufs: dy, w, dx
 * bwd_weights  bufs: x, dy, dw, db (nullable) */
MGSRT_EXPORT mgsrt_status_t mgsrt_conv_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_conv_bwd_data(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_conv_bwd_weights(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Pooling (ONNX MaxPool / AveragePool; GlobalAveragePool is an average pool
 * whose kernel is the whole input).  desc: [kind, S, N, C, in[S], kernel[S],
 *   out[S], strides[S], pads_begin[S], pads_end[S], dilations[S],
 *   count_include_pad, storage_order]
 *   kind: 0 max (padding never wins; ties: the first in row-major window
 *   order), 1 average (divisor: the whole window if count_include_pad, else
 *   the in-bounds elements; windows overhanging the padded input in ceil mode
 *   count only up to the padded input's end, as in ONNX's reference).
 * fwd  bufs: x, y, indices (nullable int64, max only: ONNX Indices semantics)
 * bwd  bufs: x, dy, dx   (max routes dy to the chosen element of each window) */
enum { MGSRT_POOL_MAX = 0, MGSRT_POOL_AVG = 1 };
MGSRT_EXPORT mgsrt_status_t mgsrt_pool_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_pool_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Batch normalization over axis 1.  desc: [N, C, D, training, eps_bits,
 *   momentum_bits, unbiased_running_var, relu]
 *   x is N x C x D (D = product of the spatial dims, 1 if none).
 * fwd  bufs: x, scale, bias, mean, var, y, running_mean_out, running_var_out,
 *            saved_mean (nullable), saved_invstd (nullable)
 *      inference: normalizes with mean/var, copies them to the running outputs.
 *      training: normalizes with the batch mean and biased variance;
 *      running_out = running * momentum + batch * (1 - momentum), where the
 *      batch variance in the running update is the biased one (ONNX) or, if
 *      unbiased_running_var, the unbiased one (PyTorch, the exporter of most
 *      models, computes it so).
 *      saved_* (training only): batch mean and 1/sqrt(biased var + eps).
 * relu: y = max(0, normalized * scale + bias) (a fused ReLU).
 * bwd  bufs: x, scale, saved_mean, saved_invstd, dy, dx, dscale, dbias (training form),
 *            and with relu: bias (the ReLU's mask is recomputed from x exactly as the
 *            forward computed it; dy is then the gradient of the ReLU's output) */
MGSRT_EXPORT mgsrt_status_t mgsrt_batch_norm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_batch_norm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Gather of table rows (an embedding).  desc: [rows, row_size, count]
 * fwd  bufs: table (rows x row_size), indices (int64, count), y (count x row_size):
 *      y[i] = table[indices[i]] (a negative index counts from the end, as in ONNX);
 *      an index outside [-rows, rows) is an error naming it.
 * bwd  bufs: indices, dy (count x row_size), dtable (rows x row_size, overwritten):
 *      zero, then dy[i] added into row indices[i] for i in order. */
MGSRT_EXPORT mgsrt_status_t mgsrt_gather_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_gather_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* LSTM, one layer, forward direction (ONNX LSTM with its default
 *   activations: sigmoid gates, tanh cell and output).
 *   desc: [T, N, I, H]; x is T x N x I (sequence first). Gate order as ONNX:
 *   i, o, f, c. w is 4H x I, r is 4H x H, b is 8H (input then recurrent
 *   biases). Per step: g = x_t w^T + h r^T + b_w + b_r; i, o, f = sigmoid,
 *   c~ = tanh; c = f c + i c~; h = o tanh(c).
 * fwd  bufs: x, w, r, b, y (T x N x H: every h), y_h (nullable, N x H: the
 *            last h), y_c (nullable, N x H: the last c), saved (T x N x 5H:
 *            i, o, f, c~ and c of every step, for the backward pass),
 *            h0, c0 (nullable, N x H: the initial states; null: zero)
 * bwd  bufs: x, w, r, y, saved, dy (nullable: zero), dy_h (nullable),
 *            dy_c (nullable), dx (nullable: not computed), dw, dr, db
 *            (backpropagation through time; dw, dr, db are overwritten),
 *            h0, c0 (nullable, as the fwd's), dh0, dc0 (nullable) */
MGSRT_EXPORT mgsrt_status_t mgsrt_lstm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_lstm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Dropout.  desc: [n, ratio_bits, training, inner]
 *   the n elements are n / inner blocks of `inner` consecutive elements, one
 *   mask entry each (inner = 1: every element on its own; the elements of a
 *   sample: stochastic depth, which keeps or drops whole samples).
 * fwd  bufs: x, y, mask (nullable uint8, n / inner entries: 1 kept, 0 dropped)
 *      training: each block is kept with probability 1 - ratio (from the
 *      context's random stream) and scaled by 1 / (1 - ratio); else y = x, mask = 1.
 * bwd  bufs: dy, mask, dx   (dx = dy * mask / (1 - ratio); training only) */
MGSRT_EXPORT mgsrt_status_t mgsrt_dropout_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_dropout_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Normally distributed values (ONNX RandomNormal, RandomNormalLike: a VAE's
 * reparameterization, a diffusion model's noise).  desc: [n, mean_bits, scale_bits]
 * bufs: y (n floats). Value i is mean + scale z, z = sqrt(-2 ln u1) cos(2 pi u2)
 * (Box-Muller, in double, rounded to float) with u1 = (hi + 1) 2^-32 and
 * u2 = lo 2^-32 the halves of the (i+1)-th value of the context's random
 * stream from its state at entry (splitmix64: mix(state + (i+1) gamma)); the
 * state then advances by n, as dropout's does. */
MGSRT_EXPORT mgsrt_status_t mgsrt_random_normal(mgsrt_ctx_t *ctx, const int64_t *desc,
                                                void *const *bufs);

/* Uniformly distributed values in [low, high) (ONNX RandomUniform, RandomUniformLike used
 * other than as a dropout mask: a diffusion objective's time steps, (torch.rand(N) * T).long()).
 * desc: [n, low_bits, high_bits] (low < high, finite)  bufs: y (n floats). Value i is
 * low + (high - low) u (in double, rounded to float; the float below high should that round
 * to high), u = top24 2^-24 with top24 the top 24 bits of the (i+1)-th value of the
 * context's random stream (as dropout draws); the state then advances by n. */
MGSRT_EXPORT mgsrt_status_t mgsrt_random_uniform(mgsrt_ctx_t *ctx, const int64_t *desc,
                                                 void *const *bufs);

/* Softmax / log-softmax along one axis.  desc: [outer, axis, inner, log]
 *   the tensor is outer x axis x inner.
 * fwd  bufs: x, y
 * bwd  bufs: y, dy, dx */
MGSRT_EXPORT mgsrt_status_t mgsrt_softmax_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_softmax_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Transpose.  desc: [R, in[R], perm[R]]   out dim i = in dim perm[i].
 * bufs: x, y */
MGSRT_EXPORT mgsrt_status_t mgsrt_transpose(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Concat along an axis and its inverse.  desc: [outer, inner, K, extent[K]]
 *   input k is outer x extent[k] x inner; the output is outer x sum(extent) x inner.
 * concat  bufs: in_0 .. in_{K-1}, out
 * split   bufs: out, in_0 .. in_{K-1}  (each nullable: that slice is skipped) */
MGSRT_EXPORT mgsrt_status_t mgsrt_concat(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_split(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Constant padding (negative pads crop).  desc: [R, in[R], pads[2R], value_bits]
 * fwd  bufs: x, y
 * bwd  bufs: dy, dx   (dx = the part of dy that came from x) */
MGSRT_EXPORT mgsrt_status_t mgsrt_pad_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_pad_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Copies, fills, sums.  desc: [n]
 * copy  bufs: x, y
 * zero  bufs: y
 * accumulate  bufs: a, b, y   (y = a + b; y may alias a or b) */
MGSRT_EXPORT mgsrt_status_t mgsrt_copy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_zero(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_accumulate(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Softmax cross-entropy against int64 class labels, mean over the counted
 * samples (torch.nn.functional.cross_entropy): a label equal to ignore_index
 * is not counted; label smoothing e targets (1 - e) onehot + e / C. Every
 * label ignored: loss 0, dlogits 0. With class weights w (the weight= of
 * torch.nn.CrossEntropyLoss), a sample's loss is
 *   (1 - e) w[label] (-log p[label]) + e / C sum_j w[j] (-log p[j])
 * and the mean divides by the sum of w[label] over the counted samples, as
 * PyTorch's (0 when that sum is 0). With flag 1 (reduction "sum") the loss
 * is the sum over the counted samples and dlogits is not divided; with flag
 * 2 dlogits is not multiplied by the loss scale (a cross-entropy inside a
 * loss the graph computes, whose own gradient carries the scale); flags 6
 * (4 with 2: reduction "none" inside such a loss) give each sample's loss,
 * N floats (0 on an ignored sample), and each row's own gradient, undivided.
 * Flag 8 with any of those: the logits are log-probabilities already (the
 * negative log-likelihood, torch.nn.functional.nll_loss): no softmax, a
 * sample's loss is -w[label] logits[label] and its row's gradient
 * -w[label] at the label, 0 elsewhere; label smoothing must be 0.
 * desc: [N, C, ignore_index, label_smoothing_bits (float64 bits, in [0, 1]), flags (0 to 3 or 6,
 *        plus 8)]
 * bufs: logits (N x C), labels (N, int64), loss (1 float; N with flags 6), dlogits (nullable, N x
 * C), weight (nullable: every class 1; C floats). A label outside [0, C) that is not ignore_index
 * is an MGSRT_ERROR_INVALID_ARGUMENT naming it. */
MGSRT_EXPORT mgsrt_status_t mgsrt_softmax_cross_entropy(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* The mean (sum = 1: the sum) over every element of a loss of a prediction x
 * against a float target t, and its gradient (torch.nn's losses, reduction
 * "mean" or "sum"):
 *   MGSRT_LOSS_MSE              (x - t)^2
 *   MGSRT_LOSS_L1               |x - t|
 *   MGSRT_LOSS_SMOOTH_L1        0.5 (x - t)^2 / beta where |x - t| < beta, else |x - t| - 0.5 beta
 *   MGSRT_LOSS_BCE_WITH_LOGITS  -(p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), computed
 *                               as (1 - t) x + (1 + (p - 1) t) (log(1 + exp(-|x|)) + max(-x, 0)),
 *                               p = pos_weight[i mod last] (BCEWithLogitsLoss's pos_weight;
 *                               1 without it)
 *   MGSRT_LOSS_VALUE            x (t unread): the model's own loss, computed in its graph;
 *                               its gradient 1 (times the loss scale, over count)
 * desc: [kind, count, beta_bits (smooth_l1's beta >= 0, float64 bits), last (the length of
 *        the last axis: count is a multiple of it), sum (0 or 1)]
 * bufs: x (count), t (count), loss (1 float), dx (nullable, count),
 *       pos_weight (nullable; bce_with_logits only; last floats) */
enum {
  MGSRT_LOSS_MSE = 0,
  MGSRT_LOSS_L1 = 1,
  MGSRT_LOSS_SMOOTH_L1 = 2,
  MGSRT_LOSS_BCE_WITH_LOGITS = 3,
  MGSRT_LOSS_VALUE = 4
};
MGSRT_EXPORT mgsrt_status_t mgsrt_elementwise_loss(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* The optimizer's update of one parameter, in place. g = grad * s, where s
 * is the scale the step's last mgsrt_clip_grad_norm set (1 without one).
 * SGD with momentum and weight decay, as torch.optim.SGD:
 *   g += weight_decay * param; v = momentum * v + g; param -= lr * v
 * (lr, momentum, weight_decay from mgsrt_ctx_set_sgd).  desc: [n]
 * bufs: param (updated), grad, velocity (n floats, updated)
 * After mgsrt_ctx_set_adamw, AdamW as torch.optim.AdamW (t = step):
 *   param *= 1 - lr * weight_decay; m = beta1 * m + (1 - beta1) * g;
 *   v = beta2 * v + (1 - beta2) * g * g;
 *   param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * and the velocity buffer holds 2n floats: m (exp_avg), then v (exp_avg_sq). */
MGSRT_EXPORT mgsrt_status_t mgsrt_sgd_update(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Global gradient-norm clipping, as torch.nn.utils.clip_grad_norm_ (norm 2):
 * norm = sqrt(sum of g^2 over every buffer), accumulated in double in a fixed
 * order (the same norm on every worker for the same gradients); sets the
 * scale the following mgsrt_sgd_update calls apply to their gradient:
 * min(1, max_norm / (norm + 1e-6)). The buffers are not changed.
 * desc: [count C, max_norm_bits, n[C]]   bufs: grad 0 .. grad C-1 */
MGSRT_EXPORT mgsrt_status_t mgsrt_clip_grad_norm(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Sum over some axes, times a scale (1: ReduceSum, 1 / the reduced count:
 * ReduceMean).  desc: [R, scale_bits, in[R], out[R]]
 *   out[d] = in[d] on a kept axis, 1 on a reduced one (keepdims or not, the
 *   data are the same). Sums are accumulated in double.
 * fwd  bufs: x (in), y (out)      y = scale * sum of x over the reduced axes
 * bwd  bufs: dy (out), dx (in)    dx = scale * dy broadcast back over them */
MGSRT_EXPORT mgsrt_status_t mgsrt_reduce_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_reduce_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* GRU, one layer, forward direction (ONNX GRU with its default activations:
 *   sigmoid gates, tanh candidate).
 *   desc: [T, N, I, H, linear_before_reset]; x is T x N x I. Gate
 *   order as ONNX: z, r, h. w is 3H x I, r is 3H x H, b is 6H (Wb, then Rb).
 *   Per step: z, r = sigmoid(x_t w^T + h r^T + Wb + Rb) (their rows);
 *   linear_before_reset = 1 (PyTorch): n = tanh(x_t Wh^T + Wbh + r (h Rh^T + Rbh));
 *   linear_before_reset = 0: n = tanh(x_t Wh^T + Wbh + (r h) Rh^T + Rbh);
 *   h = (1 - z) n + z h.
 * fwd  bufs: x, w, r, b, y (T x N x H: every h), y_h (nullable, N x H: the
 *            last h), saved (T x N x 4H: z, r, n and the recurrent
 *            candidate term (h Rh^T + Rbh, or (r h) Rh^T + Rbh) of each step),
 *            h0 (nullable, N x H: the initial state; null: zero)
 * bwd  bufs: x, w, r, y, saved, dy (nullable: zero), dy_h (nullable),
 *            dx (nullable: not computed), dw, dr, db (overwritten), h0
 *            (nullable), dh0 (nullable) */
MGSRT_EXPORT mgsrt_status_t mgsrt_gru_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_gru_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Layer normalization over the last dimension of a rows x cols x.
 *   desc: [rows, cols, epsilon_bits (double)]. Per row:
 *   mean = E[x], inv_std = 1 / sqrt(E[(x - mean)^2] + epsilon),
 *   y = (x - mean) * inv_std * scale + bias (scale, bias: cols each).
 * fwd  bufs: x, scale, bias, y, mean (rows), inv_std (rows)
 * bwd  bufs: x, scale, mean, inv_std, dy, dx, dscale, dbias (the gradients
 *            nullable: not computed; overwritten) */
MGSRT_EXPORT mgsrt_status_t mgsrt_layer_norm_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_layer_norm_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* GELU, elementwise (ONNX Gelu, PyTorch's nn.GELU): y = x Phi(x).
 *   desc: [count, approximate (MGSRT_GELU_*)]. MGSRT_GELU_NONE: Phi is the
 *   standard normal distribution function, 0.5 (1 + erf(x / sqrt(2)));
 *   MGSRT_GELU_TANH: 0.5 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
 * fwd  bufs: x, y
 * bwd  bufs: x, dy, dx      dx = dy dy/dx, recomputed from x */
enum { MGSRT_GELU_NONE = 0, MGSRT_GELU_TANH = 1 };
MGSRT_EXPORT mgsrt_status_t mgsrt_gelu_fwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_gelu_bwd(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Cumulative sum along one axis (ONNX CumSum) of an outer x len x inner x.
 *   desc: [outer, len, inner, exclusive, reverse]; exclusive = 1: each sum
 *   leaves out its own element (the first is 0); reverse = 1: summed from
 *   the end. Sums are accumulated in float, in order (exact on integers
 *   below 2^24). The gradient is the same sum of dy with reverse flipped.
 * bufs: x, y */
MGSRT_EXPORT mgsrt_status_t mgsrt_cumsum(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Floats to int64 indices, rounded toward zero (ONNX Cast to INT64): the
 *   indices a Gather reads that were computed at run time (position ids).
 *   desc: [count]. A NaN, an infinity or a value outside int64 is an
 *   MGSRT_ERROR_INVALID_ARGUMENT naming its position and value.
 * bufs: x (float), y (int64) */
MGSRT_EXPORT mgsrt_status_t mgsrt_to_index(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* Int64 values fed as data (class labels, token ids) as floats, for the
 *   integer arithmetic compiled code does in float (a one-hot of labels).
 *   desc: [count, lo, hi], -2^24 <= lo <= hi <= 2^24 (where a float holds
 *   every integer). A value outside [lo, hi] is an
 *   MGSRT_ERROR_INVALID_ARGUMENT naming its position, its value and the range.
 * bufs: x (int64), y (float) */
MGSRT_EXPORT mgsrt_status_t mgsrt_from_index(mgsrt_ctx_t *ctx, const int64_t *desc,
                                             void *const *bufs);

/* The positions of each row's k greatest (largest = 1) or least (largest = 0)
 *   entries, in that order (ONNX TopK on the last axis; its values are a
 *   gather of x at the positions, which carries the gradient). Positions are
 *   written as floats (exact: len is at most 2^24). Equal entries come in
 *   ascending position; a NaN counts as greater than every number (as in
 *   PyTorch). desc: [rows, len, k, largest]; 0 <= k <= len.
 * bufs: x (rows x len), y (rows x k) */
MGSRT_EXPORT mgsrt_status_t mgsrt_topk_positions(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/*===--- Top-k sparsification (OMGS-SGD) ----------------------------------===*
 * Each worker keeps the k largest-magnitude entries of its gradient plus
 * residual and carries the rest over (error feedback); the workers' values
 * and indices are allgathered (mgsrt_allgather_start) and every worker
 * scatter-adds the P contributions and divides by P.
 *===----------------------------------------------------------------------===*/

/* Density warm-up: with a density rho in (0, 1] set (0: off, the default),
 * every top-k exchange sends k_eff = min(k, max(1, floor(rho * n))) entries
 * instead of its compiled k (k is then the most it may send; n the size of
 * the gradient): topk_sparsify selects k_eff (values/indices past k_eff are
 * left untouched), allgather_start sends k_eff per rank (recv_*[r * k_eff + j]),
 * gtopk_start and sparse_allreduce_start read k_eff entries (gtopk_start writes
 * k_eff) and scatter_add adds P * k_eff. Every rank must use the same rho. */
MGSRT_EXPORT void mgsrt_ctx_set_density(mgsrt_ctx_t *ctx, double density);

/* Top-k sparsification with error feedback.  desc: [n, k]   (1 <= k <= n < 2^31)
 * bufs: grad (n, in), residual (n, in/out), values (k, out), indices (k int32, out)
 *   acc = grad + residual. The k entries of largest |acc| are selected, ties
 *   broken by the lower index; NaN ranks above +-inf and all NaNs tie, -0
 *   ties with +0. values[j] = acc[indices[j]] (bit for bit, NaN payloads
 *   included) with indices ascending; residual = acc with the selected
 *   entries set to +0, so the values scattered back plus residual are acc
 *   exactly. k = 0 or k > n is an MGSRT_ERROR_INVALID_ARGUMENT. */
MGSRT_EXPORT mgsrt_status_t mgsrt_topk_sparsify(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/* The average of P workers' sparse gradients.  desc: [n, k, P]   (k >= 0, 1 <= P <= 2^24)
 * bufs: values (P*k, in), indices (P*k int32, in), out (n, out)
 *   out = 0; out[indices[j]] += values[j] for j = 0 .. P*k-1 in that order;
 *   then out /= P (every touched element divided once, in float). An index
 *   outside [0, n) is an MGSRT_ERROR_INVALID_ARGUMENT naming it and its
 *   position; out is then untouched. */
MGSRT_EXPORT mgsrt_status_t mgsrt_scatter_add(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/*===--- Communication ----------------------------------------------------===*
 * A communicator is this process's (or thread's) rank in a group of P ranks.
 * Backends: "mpi" (MPI_COMM_WORLD, duplicated; OpenMPI) and "loopback" (a
 * group of one rank; in-process groups of N threads exist for tests).
 *
 * Collectives run asynchronously: a *_start kernel starts one in a slot of
 * the context's request table (MGSRT_COMM_MAX_SLOTS slots) and returns at
 * once; mgsrt_comm_wait on that slot completes it. Every rank must start the
 * same collectives in the same order with the same sizes (as in MPI;
 * "loopback" reports mismatches, "mpi" cannot). Until the wait, the buffers a
 * start names as received or in/out must not be read or written.
 *
 * Progress: the "mpi" backend makes every MPI call on one communication
 * thread per process (nonblocking MPI_I* collectives, tested every
 * MGSRT_MPI_POLL_US microseconds, default 50, while any is pending; idle, it
 * sleeps), so collectives advance while the compute kernels run. If mgsrt
 * initializes MPI, it does so on that thread with MPI_THREAD_FUNNELED and
 * finalizes it at exit; if the application initialized MPI, it must have done
 * so with MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE. Every MPI error
 * (MPI_ERRORS_RETURN is set on the communicator) becomes an
 * MGSRT_ERROR_BACKEND with MPI_Error_string's text.
 *
 * A context's pending requests must be waited for before the context is
 * destroyed (mgsrt_ctx_destroy waits for any left) and before its
 * communicator is destroyed or replaced.
 *===----------------------------------------------------------------------===*/

#define MGSRT_COMM_MAX_SLOTS 1024 /* a dense ResNet-50 step keeps 161 in flight */

typedef struct mgsrt_comm mgsrt_comm_t;

/* Creates a communicator of the named backend ("mpi" or "loopback"). On
 * failure returns a non-zero status, sets *out to NULL and writes a message
 * into error (truncated to error_size - 1 characters; error may be NULL).
 * The caller owns *out and frees it with mgsrt_comm_destroy. */
MGSRT_EXPORT mgsrt_status_t mgsrt_comm_create(const char *backend, mgsrt_comm_t **out,
                                              char *error, size_t error_size);
/* Frees a communicator (NULL: no-op). No context may have requests pending on it. */
MGSRT_EXPORT void mgsrt_comm_destroy(mgsrt_comm_t *comm);
/* Ends every process of the communicator's group with exit code `code`
 * ("mpi": MPI_Abort), for a failure on one rank that the others cannot see
 * and would wait for forever. Returns only for groups within one process. */
MGSRT_EXPORT void mgsrt_comm_abort(mgsrt_comm_t *comm, int code);
/* Liveness. The progress (a count the caller advances: iterations done) this
 * rank's heartbeat sends the others: "mpi" starts, at the first call, a
 * heartbeat on its communication thread (every 0.25 s each rank sends every
 * other its progress on a communicator of its own), so a rank can tell a
 * stopped peer (silent) from a slow one (beating, behind). Other backends
 * ignore it. */
MGSRT_EXPORT void mgsrt_comm_set_progress(mgsrt_comm_t *comm, int64_t progress);
/* What this rank last heard from `peer`: 1 with its progress and how many
 * seconds ago, or 0 when nothing was heard (or the backend keeps no
 * heartbeat). */
MGSRT_EXPORT int mgsrt_comm_peer_status(const mgsrt_comm_t *comm, int peer, int64_t *progress,
                                        double *seconds_ago);
MGSRT_EXPORT int mgsrt_comm_rank(const mgsrt_comm_t *comm);
MGSRT_EXPORT int mgsrt_comm_size(const mgsrt_comm_t *comm);
/* Sets the communicator the context's collectives use (NULL: none; not
 * owned). With requests pending, fails with MGSRT_ERROR_INVALID_ARGUMENT
 * (recorded in the context) and keeps the old one. */
MGSRT_EXPORT mgsrt_status_t mgsrt_ctx_set_comm(mgsrt_ctx_t *ctx, mgsrt_comm_t *comm);
/* A GPU context's collectives: 0 (the default) on NCCL, made over the
 * context's communicator at its first collective (one GPU per rank); 1 on the
 * communicator's own backend (mpi), the device buffers staged through pinned
 * host memory, asynchronously (several ranks may share a GPU). Set it before
 * the first collective. A CPU context, and a GPU context whose collectives
 * already run, fail with MGSRT_ERROR_INVALID_ARGUMENT (recorded). */
MGSRT_EXPORT mgsrt_status_t mgsrt_ctx_set_staged_comm(mgsrt_ctx_t *ctx, int staged);

/* The collective kernels. A context without a communicator, a slot outside
 * [0, MGSRT_COMM_MAX_SLOTS), a start on a slot that is pending and a wait on
 * one that is not are MGSRT_ERROR_INVALID_ARGUMENT.
 *
 * Allreduce average.  desc: [n, slot]   bufs: data (n, in/out)
 *   After the wait, data holds the elementwise sum over the ranks divided by P.
 * Allgather of sparse gradients.  desc: [k, slot, n, values]   (n: the size
 *   of the gradient the k were selected from, for the density warm-up; 0:
 *   none; values: MGSRT_VALUES_*, how the values travel)
 *   bufs: values (k, in), indices (k int32, in), recv_values (P*k, out),
 *         recv_indices (P*k int32, out)
 *   After the wait, recv_*[r*k + j] is rank r's values/indices[j]. values and
 *   indices are copied by the start and may be reused at once (the two are
 *   sent as one message of 8k bytes per rank).
 * Global top-k (gTop-k).  desc: [k, slot, n]   (0 <= k <= n; the indices in [0, n))
 *   bufs: values (k, in), indices (k int32, in), residual (n, in/out),
 *         out_values (k, out), out_indices (k int32, out)
 *   The ranks beyond the largest power of two P2 <= P fold their entries
 *   into rank r - P2; the P2 ranks run log2(P2) rounds of recursive doubling
 *   (k entries to and from rank r ^ 2^i), each keeping the top k of the union
 *   (values at a shared index summed); the result goes back to the folded
 *   ranks. Top-k order: larger |value| first (NaN above inf), then the
 *   smaller index. After the wait, out_* hold the same k entries on every rank,
 *   sorted by index, values summed over the ranks and divided by P (apply
 *   with scatter_add over 1 worker), and each of this rank's entries that the
 *   merges dropped is added back into residual[index] (error feedback stays
 *   exact: the values that made it plus the residual are the accumulated
 *   gradient). At most 2 ceil(log2 P) messages of 8k + 8 bytes a rank.
 * Balanced sparse all-reduce.  desc: [k, slot, n, balanced]   (indices in [0, n))
 *   bufs: values (k, in), indices (k int32, in), out (n, out)
 *   The index space is split into P regions (balanced = 1: at the mean over
 *   the ranks of each rank's index quantiles, one all-reduce of P - 1
 *   integers more; 0: equal ranges); rank q sums the entries in region q (rank order, then
 *   entry order) and the reduced regions are all-gathered, each sent dense
 *   when more than half of it is touched. After the wait, out is the sum of
 *   every rank's sparse vector divided by P, bit for bit what scatter_add
 *   over every rank's entries gives.
 *   Both copy values and indices at the start; out_*, residual and out must
 *   not be touched until the wait. A GPU context runs both staged
 *   (mgsrt_ctx_set_staged_comm(ctx, 1)), with the same results bit for bit;
 *   there its indices are checked on the host after their copy, so an index
 *   outside [0, n) is the wait's error (the rank still takes part, with no
 *   entries). On NCCL (a GPU context's default) both run on the device with
 *   the same results bit for bit; an index outside [0, n) is likewise the
 *   wait's error. There the sparse all-reduce's start waits once for the
 *   exchange's sizes (so for the compute stream's work before it), and the
 *   global top-k's wait waits for its completion.
 * Wait.  desc: [slot]   bufs: none (may be NULL)
 *   Blocks until the slot's collective completes, frees the slot and returns
 *   its status. On a context that has already failed it still completes and
 *   frees a pending slot (releasing its buffers) and returns the sticky status.
 * Broadcast (blocking, no slot).  desc: [n_bytes, root]   bufs: data (n_bytes, in/out)
 *   Every rank's data becomes root's. */
MGSRT_EXPORT mgsrt_status_t mgsrt_allreduce_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_allgather_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_gtopk_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_sparse_allreduce_start(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_comm_wait(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
MGSRT_EXPORT mgsrt_status_t mgsrt_broadcast(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);

/*===--- Calibration marks ------------------------------------------------===*
 * mgsc --profile-generate builds a step that calls mgsrt_mark where backprop
 * starts (id -1) and where each gradient is complete (id = its backprop
 * index); the executable's --calibrate times every layer's backward from them.
 *===----------------------------------------------------------------------===*/

/* desc: [id]   bufs: none (may be NULL). Records (id, seconds on a monotonic
 * clock) while recording is on; on a GPU context, after the kernels queued
 * before it have finished. */
MGSRT_EXPORT mgsrt_status_t mgsrt_mark(mgsrt_ctx_t *ctx, const int64_t *desc, void *const *bufs);
/* Turns recording on or off; either way the recorded marks are dropped. */
MGSRT_EXPORT void mgsrt_ctx_record_marks(mgsrt_ctx_t *ctx, int on);
/* Copies up to `capacity` recorded marks, oldest first; returns how many were recorded. */
MGSRT_EXPORT int64_t mgsrt_ctx_marks(const mgsrt_ctx_t *ctx, int64_t *ids, double *seconds,
                                     int64_t capacity);

/*===--- Timeline -----------------------------------------------------------===*
 * While tracing is on, the context records every kernel (its time), every
 * collective from its start to its completion (MPI: when the communication
 * thread saw it complete; otherwise the end of its wait), every mark, and the
 * phases of a sparse all-reduce on the communication thread (CPU; recorded at
 * its wait; the executable's --trace writes them all as a chrome://tracing
 * timeline). On a GPU
 * context each kernel is waited for, so its time is the GPU's. Times are
 * seconds on a monotonic clock.
 *===----------------------------------------------------------------------===*/

enum {
  MGSRT_TRACE_KERNEL = 0,
  MGSRT_TRACE_COLLECTIVE = 1,
  MGSRT_TRACE_MARK = 2,
  MGSRT_TRACE_PHASE = 3
};
typedef struct mgsrt_trace_event {
  const char *name; /* the kernel ("conv_bwd_data"), collective ("allgather") or phase
                       ("sparse_allreduce reduce"); static */
  int64_t arg;      /* collectives: the slot; marks: the mark's id; phases: the bytes this
                       rank received in it */
  double start, end;
  int32_t kind;     /* MGSRT_TRACE_* */
} mgsrt_trace_event_t;

/* Turns tracing on or off; either way the recorded events are dropped. */
MGSRT_EXPORT void mgsrt_ctx_record_trace(mgsrt_ctx_t *ctx, int on);
/* The events recorded, oldest first (*events valid until the next kernel or
 * mgsrt_ctx_record_trace); returns their number. */
MGSRT_EXPORT int64_t mgsrt_ctx_trace(const mgsrt_ctx_t *ctx, const mgsrt_trace_event_t **events);

/*===--- The compiled model ----------------------------------------------===*
 * mgsc emits an object file that defines these; the training executable's
 * main (runtime/lib/Driver) calls them.
 *
 * mgs_model_manifest: a text description, one item a line:
 *   mgs-manifest 3
 *   mode train|inference
 *   batch_size N
 *   arena_bytes BYTES          (scratch memory for activations and gradients)
 *   param NAME trainable|state RANK D0 D1 ...   (one line per parameter, in io order)
 *   input NAME RANK D0 ...     (float32 graph inputs, in io order)
 *   index_input NAME RANK D0 ... (an int64 graph input in the same order: indices,
 *                               e.g. the token ids an embedding reads)
 *   output NAME RANK D0 ...    (float32 graph outputs, in io order)
 *   labels RANK D0             (train mode: int64 class labels, one per row of the
 *                               loss: a multiple of batch_size, e.g. one per token)
 *   classes C                  (train mode: number of classes of the loss)
 *   collectives N              (optional: collectives per training step; > 0 makes the
 *                               driver join the workers, MPI ranks under mpirun)
 *   workers P                  (optional: sparse exchanges are compiled for exactly P workers)
 *   target cpu|cuda            (optional, default cpu: cuda makes the driver attach
 *                               the context to a GPU and keep every io buffer there)
 *   precision bf16|f16         (optional, default float32: the GEMMs, matmuls and
 *                               convolutions are bfloat16 or half ones; for the run's
 *                               header, and f16 makes the driver scale the loss)
 *   density_schedule R0 R1 ... (optional: the driver calls mgsrt_ctx_set_density with
 *                               R[min(epoch, last)] before each epoch: a warm-up)
 *   accumulate N               (optional, N >= 2: an optimizer step takes N batches:
 *                               mgs_accum_step for the first N - 1, mgs_train_step for
 *                               the last; mgsc --accumulate)
 *   instrumented 1             (optional: the step calls mgsrt_mark; --calibrate works)
 *   mark B NAME                (instrumented: mark B is param NAME's gradient completing)
 *   source PATH                (optional: the ONNX model compiled, for --save)
 * Params named "mgs.residual/..." are the compiler's error-feedback residuals,
 * "mgs.accum/..." its gradient accumulators (zero between optimizer steps):
 * state, but not the model's (--save leaves them out of the ONNX file).
 *
 * mgs_train_step (mode train) io: arena, every param, one velocity buffer per
 *   trainable param (in param order: the param's size with SGD, twice it with
 *   AdamW, see mgsrt_sgd_update), every input, labels,
 *   loss (1 float, written: mean cross-entropy), every output (written).
 *   Runs forward (BatchNorm batch statistics, dropout on), loss, backward and
 *   the SGD update; updates trainable params, velocities and BatchNorm
 *   running statistics in place.
 * mgs_accum_step (a model compiled with accumulation) io: mgs_train_step's.
 *   Runs forward, loss and backward like it, but adds each gradient to its
 *   accumulator (param "mgs.accum/NAME") instead of exchanging and applying
 *   it; BatchNorm running statistics update. mgs_train_step then exchanges
 *   and applies the accumulated gradients and zeroes the accumulators.
 *   Without accumulation it fails with a message.
 * mgs_eval_step io: arena, every param, every input, every output.
 *   Forward in inference form (running statistics, no dropout); params are
 *   not changed. Present in both modes.
 * Both return the context's status (see the sticky errors above).
 * mgs_model_constants: the constants the steps read (a broadcast scalar, a
 *   gather's fixed indices, the zero gradient of an unused piece), for a
 *   model of target cuda: returns their number, sets *table to the writable
 *   array of their addresses the steps read them through and *bytes to their
 *   sizes. The driver copies each to the GPU once, before the first step, and
 *   puts the device copy's address in its entry: kernels read device memory
 *   only. A CPU model's steps address their constants directly: it returns 0.
 *===----------------------------------------------------------------------===*/
const char *mgs_model_manifest(void);
int64_t mgs_model_constants(void ***table, const int64_t **bytes);
mgsrt_status_t mgs_train_step(mgsrt_ctx_t *ctx, void *const *io);
mgsrt_status_t mgs_eval_step(mgsrt_ctx_t *ctx, void *const *io);
mgsrt_status_t mgs_accum_step(mgsrt_ctx_t *ctx, void *const *io);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MGSRT_MGSRT_H */
