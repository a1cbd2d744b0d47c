//===- Passes.td - mgs conversions -------------------------*- tablegen -*-===//

#ifndef MGS_CONVERSION_PASSES_TD
#define MGS_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTrainToRuntime : Pass<"convert-train-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower the training and evaluation steps to LLVM calls into the mgs runtime";
  let description = [{
    Turns `@train_step` and `@eval_step` (built by train-build-step) into the
    functions the runtime's driver calls (runtime/include/mgsrt/mgsrt.h,
    "The compiled model"): `mgs_train_step`, `mgs_eval_step` and
    `mgs_model_manifest`, in the LLVM dialect.

    Every op becomes one call `mgsrt_<kernel>(ctx, desc, bufs)` with a
    constant descriptor per call site. Every tensor gets a buffer: parameters,
    inputs and outputs live in the io array; reshapes, flattens and gradient
    tags alias their operand; everything else is placed in one arena by
    liveness (values whose lifetimes do not overlap share memory), whose size
    the manifest reports. A gradient bucket (comm-merge-buckets) costs no
    copy: its gradients are computed straight into their slices of the
    bucket's buffer, and the pieces split back are slices too (a gradient
    that is read after its bucket is formed keeps its own buffer and is
    copied). Outputs nobody reads are passed as null where the
    kernel allows it.

    With `target=cuda` the manifest says `target cuda`: the driver then
    attaches the runtime context to a GPU and places the io buffers and the
    arena in device memory; the calls are the same (the runtime dispatches).

    With `precision=bf16` (`f16`) every GEMM, batched matmul and convolution,
    forward and backward, computes on bfloat16 (half) operands with float32
    accumulation (the descriptors' precision field); buffers, parameters,
    residuals and optimizer state stay float32. The manifest says which, and
    with f16 the training executable scales the loss (--loss-scale).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Where the runtime runs the kernels: cpu or cuda (recorded in the "
           "manifest; the compiled calls are the same)">,
    ListOption<"densitySchedule", "density-schedule", "double",
               "Density per epoch (the last one for the rest), recorded in the "
               "manifest: the driver sets it before each epoch (a density warm-up)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "The arithmetic of the GEMMs, matmuls and convolutions: f32, bf16 or "
           "f16 (operands rounded to bfloat16 or half, float32 accumulation and "
           "results; target cpu: the CUDA kernels have not run on a GPU yet)">,
    Option<"unverifiedGpuPrecision", "unverified-gpu-precision", "bool",
           /*default=*/"false",
           "Allow precision bf16 or f16 with target cuda before their CUDA kernels "
           "have been verified on a GPU (bench/gpu_check.sh does)">,
    Option<"instrument", "instrument", "bool", /*default=*/"false",
           "Calibration build: mark the start of backprop and each gradient's "
           "completion (mgsrt_mark) so the executable's --calibrate can time "
           "every layer's backward">,
  ];
  let statistics = [
    Statistic<"numKernelCalls", "num-kernel-calls", "Runtime kernel calls emitted">,
    Statistic<"arenaBytes", "arena-bytes", "Bytes of the activation/gradient arena">,
    Statistic<"unplannedBytes", "unplanned-bytes", "Bytes the arena would need without reuse">,
    Statistic<"copyFreeBuckets", "copy-free-buckets",
              "Gradient buckets whose gradients are computed in place (no concat copy)">,
    Statistic<"copyFreeSplits", "copy-free-splits",
              "Splits whose pieces are slices of their input (no copy)">,
  ];
}

#endif // MGS_CONVERSION_PASSES_TD
