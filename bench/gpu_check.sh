#!/bin/bash
# Every GPU test and GPU benchmark of mgs, in one run, on a machine with an
# NVIDIA GPU (H200-class: a few minutes; the correctness steps run first):
#   1. the GPU kernel tests (GoogleTest, the CPU kernels as the oracle), and the
#      convolution tests again with MGSRT_CUDNN_FIND=1 (algorithms measured);
#   2. top-k at n = 25,557,032, k = 0.001 n against torch.topk(x.abs(), k) on the
#      same GPU and against the one-read bandwidth bound (bench/topk_gpu_bench.py);
#   3. the MLP trained on digits by an mgsc --target=cuda executable: its
#      parameters after one epoch against the CPU executable's, and its accuracy;
#   4. the default CNN with OMGS sparsification on the GPU (NCCL, one rank);
#   5. calibration of the CNN on the GPU (mgsc --profile-generate, --calibrate);
#   6. the density warm-up on the GPU;
#   7. the ResNet-20 (batch 32, 128, 512) and ResNet-50 (32, 64) training steps
#      against PyTorch on the same GPU (bench/resnet_gpu_step.py);
#   8. the LSTM, GRU and bidirectional LSTM trained on digits by --target=cuda
#      executables: their parameters after one epoch against the CPU's.
#   9. 2 and 4 ranks on one GPU, their collectives over MPI (--comm mpi):
#      test/e2e/data-parallel-gpu-mpi.test's checks (dense against one process,
#      the refusal without --comm mpi, layerwise, OMGS, fp16 values, density
#      warm-up, the sparse collectives at density 1, checkpoint and resume);
#      OpenMPI's launcher comes in the bundle where the machine has none;
#  10. the sparse collectives' NCCL forms: their GPU tests (the device
#      algorithms on 1 to 5 and 8 ranks of one GPU, NCCL's own calls on one
#      rank), then the MLP trained with each on NCCL against staged over the
#      host (one rank; the GPU-vs-GPU tolerance, 1e-4);
#  11. the ViT-small and the GPT-style language model's training step (AdamW)
#      against PyTorch eager on the same GPU (bench/transformer_step.py
#      --device cuda), fp32 without TF32 on both sides;
#  12. compute-sanitizer memcheck on the newer kernels' tests and on 2 ranks.
#  13. today's models (ViT, GPT, MobileNetV3, ...): GPU vs CPU parameters after one step;
#  14. the recurrent models' training step (the LSTM language model, GRU,
#      bidirectional LSTM) against PyTorch on the same GPU (bench/recurrent_step.py).
#  15. the step as a CUDA graph (--cuda-graph): the kernel-by-kernel run's
#      parameters bit for bit (SGD; AdamW on a cosine schedule; a density
#      warm-up; norm clipping; the default CNN with dropout), refusals said;
#      the step times with it are columns of 7, 11 and 14.
# Each step is stopped after GPU_CHECK_STEP_LIMIT seconds (default 240);
# GPU_CHECK_ONLY=REGEX runs only the steps whose names it matches.
# First, before the GPU is needed, the bundle's commit and the table of what
# changed on the GPU side since the last GPU run (bench/gpu_changes.sh, made
# with the bundle): the CUDA sources and GPU tests changed, and the GPU tests
# that never ran on a GPU.
#
#   bench/gpu_check.sh [BUNDLE.tar.xz | BUNDLE_DIR]
#
# Without an argument it makes the bundle from ./build (bench/gpu_bundle.sh);
# a GPU machine without this project's toolchain gets a bundle made elsewhere.
# Exits non-zero if any step fails; every step runs regardless.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARG=${1:-}
if [[ -z $ARG ]]; then
  "$ROOT/bench/gpu_bundle.sh" "$ROOT/build" "$ROOT/gpu-bundle.tar.xz" || exit 1
  ARG=$ROOT/gpu-bundle.tar.xz
fi
if [[ -f $ARG ]]; then
  WORK=$(mktemp -d)
  tar -C "$WORK" -xJf "$ARG" || { echo "gpu_check: cannot unpack $ARG"; exit 1; }
  B=$WORK/gpu-bundle
else
  B=$(realpath "$ARG")
fi
[[ -x $B/bin/MGSRuntimeCudaTests ]] || { echo "gpu_check: $B is not a bundle"; exit 1; }

echo "gpu_check: bundle of commit $(cat "$B/COMMIT" 2>/dev/null || echo unknown)"
if [[ -f $B/CHANGES.txt ]]; then
  cat "$B/CHANGES.txt"
elif git -C "$ROOT" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  "$ROOT/bench/gpu_changes.sh" || true
else
  echo "gpu_check: no table of changes (the bundle has none and $ROOT is no git checkout)"
fi
echo

if ! nvidia-smi -L; then
  echo "gpu_check: no NVIDIA GPU here (nvidia-smi -L failed): nothing to check"
  exit 1
fi
# The GPU machine's CUDA libraries: PyTorch's pip packages and the toolkit.
PY=python3
NVLIBS=$($PY - <<'PYEOF' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except ImportError:
    roots = []
print(":".join(sorted({os.path.dirname(p) for r in roots for p in glob.glob(r + "/*/lib/*.so*")})))
PYEOF
)
export LD_LIBRARY_PATH="$B/lib:${NVLIBS}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
TORCH_VERSION=$($PY -c \
  'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)
echo "gpu_check: the PyTorch baseline is $TORCH_VERSION"
export MGSRT_CUDA_LIBRARY=$B/lib/libmgsrt_cuda.so
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
# A machine with an OpenMPI of its own runs the ranks with it (its mpirun, its
# libmpi: the same ABI); one without gets the bundle's (bench/gpu_bundle.sh):
# its libraries, and its trees copied to their absolute paths where nothing
# is there yet.
# (grep without -q: under pipefail, ldconfig killed by an early-exiting grep fails the test.)
if command -v mpirun > /dev/null && ldconfig -p | grep 'libmpi\.so\.40 ' > /dev/null; then
  echo "gpu_check: this machine's $(mpirun --allow-run-as-root --version 2>&1 | head -1)"
elif [[ -f $B/mpi/TREES ]]; then
  while read -r tree; do
    [[ -e $tree ]] && continue
    mkdir -p "$(dirname "$tree")" && cp -a "$B/mpi$tree" "$tree" ||
      echo "gpu_check: cannot copy the bundle's OpenMPI to $tree"
  done < "$B/mpi/TREES"
  export PATH=$B/mpi/bin:$PATH LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$B/mpi/lib
  # Single-copy (CMA) between ranks needs ptrace rights a VM may not give.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  echo "gpu_check: the bundle's $(mpirun --allow-run-as-root --version 2>&1 | head -1)"
fi
RUN=$(mktemp -d)
FAILED=()
# Ranks on GPU 0 under mpirun (the ranks' steps and memcheck add -np N).
MPI_GPU0=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x MGSRT_CUDA_LIBRARY
          -x OMP_NUM_THREADS=2 -x CUDA_VISIBLE_DEVICES=0)
# Each step runs in its own process group, stopped after STEP_LIMIT seconds
# (GPU_CHECK_STEP_LIMIT, default 240): a hung collective fails its step, not
# the whole check.
STEP_LIMIT=${GPU_CHECK_STEP_LIMIT:-240}
STEPS_RUN=0
# GPU_CHECK_ONLY=REGEX runs only the steps whose name it matches.
step() { # NAME COMMAND...
  local name=$1
  shift
  [[ -n ${GPU_CHECK_ONLY:-} && ! $name =~ $GPU_CHECK_ONLY ]] && return 0
  STEPS_RUN=$((STEPS_RUN + 1))
  echo
  echo "=== $name"
  local t0=$SECONDS rc
  set -m
  "$@" &
  local pid=$!
  set +m
  # The watchdog's sleeps hold no output: one left behind would keep a pipe
  # reading this script's output (| tee) open until it ends.
  (sleep "$STEP_LIMIT" > /dev/null && echo "gpu_check: '$name' still running after" \
    "$STEP_LIMIT s: stopped" && kill -TERM -- "-$pid" && sleep 5 > /dev/null &&
    kill -KILL -- "-$pid") 2> /dev/null &
  local watchdog=$!
  wait "$pid"
  rc=$?
  pkill -P "$watchdog" 2> /dev/null # its sleep first: killed first, the shell could not be asked
  kill -- "$watchdog" 2> /dev/null
  if ((rc == 0)); then
    echo "=== $name: ok ($((SECONDS - t0)) s)"
  else
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
    FAILED+=("$name")
  fi
}
accuracy_at_least() { # LOG MIN
  awk -v min="$2" '/^final held-out accuracy:/ { found = 1; print; if ($4 + 0 < min) exit 1 }
                   END { if (!found) exit 1 }' "$1"
}

# Every GPU test, unfiltered; on a GPU machine none may skip (a test skips
# only when it finds no GPU).
gpu_tests() {
  local listed rc
  listed=$("$B/bin/MGSRuntimeCudaTests" --gtest_list_tests | grep -c '^  ')
  "$B/bin/MGSRuntimeCudaTests" --gtest_brief=1 > "$RUN/gpu-tests.log" 2>&1
  rc=$?
  tail -40 "$RUN/gpu-tests.log"
  echo "$listed tests listed"
  if grep -q '^\[  SKIPPED \]' "$RUN/gpu-tests.log"; then
    echo "gpu_check: GPU tests skipped on a GPU machine"
    return 1
  fi
  return "$rc"
}

# The convolutions again with cuDNN's algorithms ranked by measurement
# (MGSRT_CUDNN_FIND=1): the same accuracy rules, so the same CPU comparison.
# Then MGSRT_CUDNN_ALGOS=any (every FP32 algorithm, as cudnn.benchmark): the
# CNN still trains, and a bad value is refused by name.
gpu_conv_find() {
  MGSRT_CUDNN_FIND=1 "$B/bin/MGSRuntimeCudaTests" --gtest_brief=1 --gtest_filter='GpuConv*' 2>&1 |
    tail -20
  local rc=${PIPESTATUS[0]}
  local args=(--data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0)
  local find
  for find in 0 1; do
    echo "MGSRT_CUDNN_ALGOS=any MGSRT_CUDNN_FIND=$find:"
    MGSRT_CUDNN_FIND=$find MGSRT_CUDNN_ALGOS=any "$B/bin/cnn-omgs-gpu" "${args[@]}" --epochs 5 \
      > "$RUN/cnn-any.log" && accuracy_at_least "$RUN/cnn-any.log" 95 || rc=1
  done
  if MGSRT_CUDNN_ALGOS=fast "$B/bin/cnn-omgs-gpu" "${args[@]}" --epochs 1 \
    > "$RUN/cnn-bad.log" 2>&1 ||
    ! grep -q "MGSRT_CUDNN_ALGOS='fast' is neither 'accurate' nor 'any'" "$RUN/cnn-bad.log"; then
    echo "MGSRT_CUDNN_ALGOS=fast was not refused by name:"
    tail -n 3 "$RUN/cnn-bad.log"
    rc=1
  fi
  return $rc
}

# (And gradient accumulation on the GPU: 2 batches of 16 a step end where
# the CPU's steps of 32 do, as test/e2e/accumulate.test checks on the CPU.)
mlp() {
  local args=(--data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0)
  "$B/bin/mlp-gpu" "${args[@]}" --epochs 1 --save-weights "$RUN/gpu.w" > "$RUN/mlp-gpu.log" &&
    "$B/bin/mlp-cpu" "${args[@]}" --epochs 1 --save-weights "$RUN/cpu.w" > "$RUN/mlp-cpu.log" &&
    $PY "$ROOT/scripts/compare_weights.py" "$RUN/gpu.w" "$RUN/cpu.w" --tol 1e-4 &&
    "$B/bin/mlp-acc2-gpu" "${args[@]}" --epochs 1 --save-weights "$RUN/acc2.w" \
      > "$RUN/mlp-acc2.log" &&
    $PY "$ROOT/scripts/compare_weights.py" "$RUN/acc2.w" "$RUN/cpu.w" --tol 1e-4 &&
    "$B/bin/mlp-gpu" "${args[@]}" --epochs 10 > "$RUN/mlp-gpu10.log" &&
    accuracy_at_least "$RUN/mlp-gpu10.log" 95
  local rc=$?
  tail -n 3 "$RUN"/mlp-*.log
  return $rc
}

# The recurrent models: GPU parameters after one epoch against the CPU's
# (their products sum in another order than oneDNN's: 1e-3 relative).
recurrent() {
  local args=(--data "$B/data/digits.csv.gz" --lr 0.1 --seed 1 --progress-every 0 --epochs 1)
  local rc=0 m
  for m in lstm gru bilstm; do
    echo "$m:"
    "$B/bin/$m-gpu" "${args[@]}" --save-weights "$RUN/$m-gpu.w" > "$RUN/$m-gpu.log" &&
      "$B/bin/$m-cpu" "${args[@]}" --save-weights "$RUN/$m-cpu.w" > "$RUN/$m-cpu.log" &&
      $PY "$ROOT/scripts/compare_weights.py" "$RUN/$m-gpu.w" "$RUN/$m-cpu.w" --tol 1e-3 || rc=1
    grep -h '^final' "$RUN/$m-gpu.log" "$RUN/$m-cpu.log"
  done
  return $rc
}

# bfloat16 and half (compiled with --unverified-gpu-precision: mgsc refuses
# them for --target=cuda until this passes): after one epoch the MLP's GPU
# parameters are the CPU's within float32's summation-order noise (both
# compute on the same products of the same operands: rounded copies, or the
# CPU's oneDNN bfloat16 kernels where it has them), ten epochs of the MLP and the CNN reach the CPU
# tests' floor, and a half run drops an overflowing step of its dynamic loss
# scale.
reduced_precision() {
  local args=(--data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0)
  local rc=0 p m
  for p in f16 bf16; do
    for m in mlp cnn; do
      echo "$m $p:"
      if ! "$B/bin/$m-$p-cpu" "${args[@]}" --epochs 1 --save-weights "$RUN/$m-$p-cpu.w" \
          > "$RUN/$m-$p-cpu.log" 2>&1; then
        grep -h 'error' "$RUN/$m-$p-cpu.log"
        rc=1
        continue
      fi
      "$B/bin/$m-$p-gpu" "${args[@]}" --epochs 1 --save-weights "$RUN/$m-$p-gpu.w" \
        > "$RUN/$m-$p-gpu.log" &&
        { [[ $m != mlp ]] || # (the CNN's BatchNorm amplifies the order noise: accuracy alone)
          $PY "$ROOT/scripts/compare_weights.py" "$RUN/$m-$p-gpu.w" "$RUN/$m-$p-cpu.w" \
            --tol 1e-3; } &&
        "$B/bin/$m-$p-gpu" "${args[@]}" --epochs 10 > "$RUN/$m-$p-gpu10.log" &&
        accuracy_at_least "$RUN/$m-$p-gpu10.log" 95 || rc=1
      grep -h -E '^(final|loss scale)' "$RUN/$m-$p-gpu10.log" 2>/dev/null
    done
  done
  MGSRT_FAULT_OVERFLOW=2 "$B/bin/mlp-f16-gpu" "${args[@]}" --epochs 1 \
    > "$RUN/mlp-f16-drop.log" &&
    grep 'iteration 2: loss scale 65536 -> 32768' "$RUN/mlp-f16-drop.log" || rc=1
  return $rc
}

cnn_omgs() {
  local args=(--data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0 --epochs 5)
  "$B/bin/cnn-omgs-gpu" "${args[@]}" > "$RUN/cnn-gpu.log" &&
    accuracy_at_least "$RUN/cnn-gpu.log" 95
  local rc=$?
  tail -n 3 "$RUN/cnn-gpu.log"
  return $rc
}

calibrate() {
  "$B/bin/cnn-cal-gpu" --data "$B/data/digits.csv.gz" --calibrate "$RUN/gpu-profile.json" &&
    cat "$RUN/gpu-profile.json"
}

warmup() {
  "$B/bin/cnn-warmup-gpu" --data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0 \
    --epochs 6 > "$RUN/warmup.log" && accuracy_at_least "$RUN/warmup.log" 95
  local rc=$?
  grep -E 'density|final' "$RUN/warmup.log"
  return $rc
}

# gtopk and sparse-allreduce staged over MPI on 4 ranks at density 1: every
# entry is exchanged, so each ends with the dense run's parameters (four.w)
# within rounding (sparse-density-one.test's check, on the GPU).
sparse_collectives_at_density_one() {
  local c
  for c in gtopk sparse-allreduce; do
    "${MPI_GPU0[@]}" -np 4 "$B/bin/mlp-$c-d1-gpu" --comm mpi "${args[@]}" --epochs 1 \
      --save-weights "$RUN/$c-d1.w" > "$RUN/$c-d1.log" &&
      $PY "$ROOT/scripts/compare_weights.py" "$RUN/$c-d1.w" "$RUN/four.w" --tol 1e-5 \
        --exclude mgs.residual/ || return 1
  done
}

# 2 and 4 ranks on GPU 0, their collectives over MPI through pinned host
# memory (--comm mpi): test/e2e/data-parallel-gpu-mpi.test, which lit runs
# where the toolchain is, with the bundle's executables. Dense against the
# CPU's whole batch; several ranks without --comm mpi refused clearly;
# layerwise, OMGS, fp16 values and the density warm-up trained to the CPU
# tests' floors; checkpoint and resume on 2 ranks against a straight run.
# Without an mpirun here it says so and is skipped (unverified, not failed).
ranks_on_one_gpu() {
  if ! command -v mpirun > /dev/null; then
    echo "skipped: no mpirun on this machine (several ranks on one GPU are unverified)"
    return 0
  fi
  local mpi=("${MPI_GPU0[@]}")
  local args=(--data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0)
  local rc=0 m
  check() { # WHAT COMMAND...: runs it, says FAILED with WHAT when it fails
    local what=$1
    shift
    "$@" || { echo "FAILED: $what" >&2; rc=1; }
  }
  check "4 ranks dense" "${mpi[@]}" -np 4 "$B/bin/mlp-dense8-gpu" --comm mpi "${args[@]}" \
    --epochs 1 --save-weights "$RUN/four.w" > "$RUN/four.log"
  check "2 ranks dense" "${mpi[@]}" -np 2 "$B/bin/mlp-dense16-gpu" --comm mpi "${args[@]}" \
    --epochs 1 --save-weights "$RUN/two.w" > "$RUN/two.log"
  "$B/bin/mlp-cpu" "${args[@]}" --epochs 1 --save-weights "$RUN/one.w" > /dev/null
  check "4 ranks = one process" $PY "$ROOT/scripts/compare_weights.py" "$RUN/four.w" \
    "$RUN/one.w" --tol 1e-4
  check "2 ranks = one process" $PY "$ROOT/scripts/compare_weights.py" "$RUN/two.w" \
    "$RUN/one.w" --tol 1e-4
  grep -h 'workers (MPI)' "$RUN/four.log" "$RUN/two.log"
  if "${mpi[@]}" -np 2 "$B/bin/mlp-dense16-gpu" "${args[@]}" --epochs 1 > "$RUN/shared.log" 2>&1 ||
    ! grep -q 'NCCL needs a GPU per rank; run the collectives over MPI' "$RUN/shared.log"; then
    echo "FAILED: 2 ranks on one GPU without --comm mpi not refused clearly:" >&2
    rc=1
  fi
  grep -m1 'NCCL needs' "$RUN/shared.log"
  check "layerwise, 2 ranks" "${mpi[@]}" -np 2 "$B/bin/mlp-layerwise2-gpu" --comm mpi \
    "${args[@]}" --epochs 10 > "$RUN/layerwise.log"
  check "layerwise accuracy" accuracy_at_least "$RUN/layerwise.log" 94
  for m in omgs4 fp16-4 warmup4; do
    check "$m" "${mpi[@]}" -np 4 "$B/bin/mlp-$m-gpu" --comm mpi "${args[@]}" --epochs 10 \
      > "$RUN/$m.log"
    check "$m accuracy" accuracy_at_least "$RUN/$m.log" 94
  done
  check "sparse collectives at density 1" sparse_collectives_at_density_one
  # Checkpoint and resume on 2 ranks: a straight run's parameters within 1e-4
  # (the GPU top-k's atomic counters may order a bucket's entries otherwise).
  local lw=("${mpi[@]}" -np 2 "$B/bin/mlp-layerwise2-gpu" --comm mpi "${args[@]}")
  check "straight run" "${lw[@]}" --epochs 4 --save-weights "$RUN/straight.w" > /dev/null
  check "checkpoint" "${lw[@]}" --epochs 2 --checkpoint "$RUN/ckpt" > /dev/null
  check "checkpoint files" test -s "$RUN/ckpt" -a -s "$RUN/ckpt.rank1"
  check "resume" "${lw[@]}" --epochs 4 --resume "$RUN/ckpt" --save-weights "$RUN/resumed.w" \
    > /dev/null
  check "resumed = straight" $PY "$ROOT/scripts/compare_weights.py" "$RUN/resumed.w" \
    "$RUN/straight.w" --tol 1e-4
  return $rc
}

# The sparse collectives on NCCL (DeviceSparseCollectives.cu): their tests
# again, by name (step 1 ran them among the rest), then the MLP with each on
# NCCL against the same executable staged (--comm mpi): one rank, within the
# GPU-vs-GPU tolerance (the collectives are bit for bit; the rest of a GPU
# step need not be).
nccl_sparse() {
  "$B/bin/MGSRuntimeCudaTests" --gtest_brief=1 \
    --gtest_filter='*GpuDeviceSparse*:GpuComm.Sparse*' > "$RUN/nccl-sparse.log" 2>&1
  local rc=$?
  tail -20 "$RUN/nccl-sparse.log"
  if ((rc)) || grep -q '^\[  SKIPPED \]' "$RUN/nccl-sparse.log"; then
    return 1
  fi
  local args=(--data "$B/data/digits.csv.gz" --lr 0.05 --seed 1 --progress-every 0 --epochs 2)
  local c
  for c in gtopk sparse-allreduce; do
    "$B/bin/mlp-$c-w1-gpu" "${args[@]}" --save-weights "$RUN/$c-nccl.w" > "$RUN/$c-nccl.log" &&
      "$B/bin/mlp-$c-w1-gpu" --comm mpi "${args[@]}" --save-weights "$RUN/$c-staged.w" \
        > /dev/null &&
      $PY "$ROOT/scripts/compare_weights.py" "$RUN/$c-nccl.w" "$RUN/$c-staged.w" --tol 1e-4 &&
      grep '^final' "$RUN/$c-nccl.log" || return 1
  done
}

# compute-sanitizer's memcheck on the GPU tests of the kernels and
# collectives added since the last sanitized run, then on 2 ranks sharing the
# GPU over MPI (each rank under memcheck), one epoch of the layerwise MLP.
# Memory errors only: NCCL probes kernels built for other GPUs and gets
# cudaErrorNoKernelImageForDevice, an API error memcheck would count.
SANITIZED_TESTS='GpuReduce*:GpuGather*:GpuLayerNorm*:GpuGelu*:GpuScan*:GpuSelect*:GpuLoss*'
SANITIZED_TESTS+=':GpuRecurrent*:GpuSoftmax*:GpuElementwise*:GpuCommChoice*:OneGpu/*'
memcheck() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null) || {
    echo "skipped: no compute-sanitizer on this machine (memcheck unverified)"
    return 0
  }
  local rc=0
  local sanitizer=("$cs" --tool memcheck --report-api-errors no --error-exitcode 99
                   --print-limit 20)
  if command -v mpirun > /dev/null; then
    "${MPI_GPU0[@]}" -np 2 "${sanitizer[@]}" "$B/bin/mlp-layerwise2-gpu" --comm mpi \
      --data "$B/data/digits.csv.gz" --epochs 1 --progress-every 0 \
      > "$RUN/memcheck-ranks.log" 2>&1 || rc=1
    grep -E 'ERROR SUMMARY|^final|Invalid' "$RUN/memcheck-ranks.log" | head -20
  fi
  "${sanitizer[@]}" "$B/bin/MGSRuntimeCudaTests" --gtest_brief=1 \
    --gtest_filter="$SANITIZED_TESTS" > "$RUN/memcheck-tests.log" 2>&1 || rc=1
  grep -E '^\[ *(PASSED|FAILED) *\]|ERROR SUMMARY|Invalid|out of bounds' "$RUN/memcheck-tests.log" |
    head -30
  return $rc
}

# Today's models (bundle: today-NAME-cpu and -gpu, batch 8): one step on
# synthetic data (bench/model_data.py) from the same weights: the step's loss
# within 1e-3, and each tensor's update (its change from the initial weights)
# within 1e-3 relative or 10 times the CPU's own noise (its run again from
# inputs perturbed in their last bits), whichever is larger (BatchNorm over 8
# values amplifies rounding: a 1e-7 input perturbation moves the CPU's own
# result by 1e-3; over 4 steps with momentum, MobileNetV2's by 0.4).
todays_models() {
  local rc=0 cpu m args exclude compared
  for cpu in "$B"/bin/today-*-cpu; do
    m=${cpu##*/today-}
    m=${m%-cpu}
    args=(--labels "$RUN/$m-y.npy" --epochs 1 --holdout 0 --lr 0.01 --seed 1 --progress-every 0)
    exclude=()
    [[ $m == gpt ]] && exclude=(--exclude '^mask$') # frozen, and -inf above the diagonal
    # (the weights the bundle leaves out for their size: made here)
    if ! { [[ -f $cpu.weights ]] || $PY "$ROOT/bench/model_data.py" --weights "$cpu" \
             "$cpu.weights"; } ||
       ! $PY "$ROOT/bench/model_data.py" "$cpu" 8 "$RUN/$m" --perturbed ||
       ! "$cpu" --data "$RUN/$m-x.npy" "${args[@]}" --save-weights "$RUN/$m-cpu.w" \
         > "$RUN/$m-cpu.log" 2>&1 ||
       ! "$cpu" --data "$RUN/$m-xp.npy" "${args[@]}" --save-weights "$RUN/$m-noise.w" \
         > "$RUN/$m-noise.log" 2>&1 ||
       ! "$B/bin/today-$m-gpu" --data "$RUN/$m-x.npy" "${args[@]}" --weights "$cpu.weights" \
         --save-weights "$RUN/$m-gpu.w" > "$RUN/$m-gpu.log" 2>&1; then
      echo "$m: FAILED to run:"
      tail -n 2 "$RUN/$m-cpu.log" "$RUN/$m-noise.log" "$RUN/$m-gpu.log" 2> /dev/null
      rc=1
      continue
    fi
    compared=$($PY "$ROOT/scripts/compare_weights.py" "$RUN/$m-gpu.w" "$RUN/$m-cpu.w" \
      --tol 1e-3 --noise "$RUN/$m-noise.w" --initial "$cpu.weights" "${exclude[@]}" 2>&1) ||
      rc=1
    local losses
    losses=$(awk '/^epoch 1:/ { print $5 }' "$RUN/$m-gpu.log" "$RUN/$m-cpu.log" | paste -sd ' ')
    awk -v l="$losses" 'BEGIN { split(l, v, " "); d = v[1] - v[2];
                               exit !(v[1] != "" && v[2] != "" && d <= 1e-3 && d >= -1e-3) }' ||
      { echo "$m: the step's loss differs"; rc=1; }
    echo "$m: $(tail -n 1 <<< "$compared"); loss GPU, CPU: $losses"
  done
  return $rc
}

# --cuda-graph (test/e2e/train-cuda-graph.test's checks): the step captured
# once and replayed ends with the kernel-by-kernel run's parameters bit for
# bit (the MLP with SGD, and with AdamW on a cosine schedule, whose lr and
# bias correction change every step; with OMGS on NCCL and a density warm-up,
# captured again each epoch; with norm clipping, its factor worked out on the
# device; the default CNN with dropout, BatchNorm and OMGS); the global top-k
# says why it runs kernel by kernel.
cuda_graph() {
  local common=(--data "$B/data/digits.csv.gz" --seed 1 --progress-every 0)
  local rc=0 run
  local -a runs=("mlp-gpu --epochs 2 --lr 0.05"
    "mlp-gpu --epochs 2 --optimizer adamw --lr 0.001 --lr-schedule cosine --weight-decay 0.01"
    "mlp-warmup1-gpu --epochs 3 --lr 0.05" "mlp-clip-gpu --epochs 2 --lr 0.05"
    "cnn-omgs-gpu --epochs 2 --lr 0.05")
  for run in "${runs[@]}"; do
    read -r -a a <<<"$run"
    echo "${a[*]}:"
    "$B/bin/${a[0]}" "${common[@]}" "${a[@]:1}" --save-weights "$RUN/g-eager.w" \
      > "$RUN/g-eager.log" &&
      "$B/bin/${a[0]}" "${common[@]}" "${a[@]:1}" --save-weights "$RUN/g-graph.w" --cuda-graph \
        > "$RUN/g-graph.log" || rc=1
    grep -h -e '^cuda graph' -e '^--cuda-graph' -e '^final' "$RUN/g-graph.log"
    if ! cmp -s "$RUN/g-eager.w" "$RUN/g-graph.w"; then
      echo "the graph's parameters differ from the kernel-by-kernel run's:"
      $PY "$ROOT/scripts/compare_weights.py" "$RUN/g-graph.w" "$RUN/g-eager.w" --tol 0
      rc=1
    fi
    awk '/^cuda graph:/ { found = 1; if ($3 != $5 - 1) exit 1 } END { if (!found) exit 1 }' \
      "$RUN/g-graph.log" || { echo "not every step after the first was replayed"; rc=1; }
  done
  "$B/bin/mlp-gtopk-w1-gpu" "${common[@]}" --epochs 1 --lr 0.05 --cuda-graph > "$RUN/g-gtopk.log" &&
    grep -q '^--cuda-graph: the step runs kernel by kernel: gtopk_start: reads its exchange back' \
      "$RUN/g-gtopk.log" && accuracy_at_least "$RUN/g-gtopk.log" 80 || rc=1
  grep -h -e '^--cuda-graph' -e '^final' "$RUN/g-gtopk.log"
  return $rc
}

# The benchmarks' large weights (the transformers', ResNet-50's), made here
# (bench/gpu_bundle.sh leaves them out): timing needs no trained values.
bench_weights() {
  local exe
  for exe in "$B"/bin/{vit_small,gpt_medium,lstmlm_medium}-gpu "$B"/bin/resnet50-gpu-b*[0-9]; do
    [[ -f $exe.weights ]] || $PY "$ROOT/bench/model_data.py" --weights "$exe" "$exe.weights" ||
      return 1
  done
}

# The correctness steps first, the timings after them.
step "GPU kernel tests" gpu_tests
step "2 and 4 ranks on one GPU over MPI (--comm mpi)" ranks_on_one_gpu
step "sparse collectives on NCCL (gtopk, sparse-allreduce)" nccl_sparse
step "MLP on digits: GPU vs CPU parameters, accuracy" mlp
step "LSTM, GRU, bidirectional LSTM: GPU vs CPU parameters" recurrent
step "today's models: GPU vs CPU parameters after one step" todays_models
step "CNN with OMGS sparsification on the GPU" cnn_omgs
step "reduced precision on the GPU (bf16, f16 and its loss scale; not yet enabled)" \
  reduced_precision
step "density warm-up on the GPU" warmup
step "the step as a CUDA graph (--cuda-graph): the same parameters" cuda_graph
step "calibration on the GPU (marks, top-k, NCCL fits)" calibrate
step "GPU convolution tests, MGSRT_CUDNN_FIND=1, MGSRT_CUDNN_ALGOS=any" gpu_conv_find
step "top-k vs torch.topk on the GPU" $PY "$ROOT/bench/topk_gpu_bench.py" "$B"
if [[ -z ${GPU_CHECK_ONLY:-} || "ResNet-50 ViT-small LSTM LM" =~ $GPU_CHECK_ONLY ]]; then
  bench_weights || echo "gpu_check: cannot make the benchmarks' weights"
fi
step "ResNet-20 step vs PyTorch on the GPU" $PY "$ROOT/bench/resnet_gpu_step.py" \
  --exe 32="$B/bin/resnet20-gpu-b32" --exe 128="$B/bin/resnet20-gpu-b128" \
  --exe 512="$B/bin/resnet20-gpu-b512" --profile-batch 128
step "ResNet-50 step vs PyTorch on the GPU" $PY "$ROOT/bench/resnet_gpu_step.py" \
  --model resnet50 --exe 32="$B/bin/resnet50-gpu-b32" --exe 64="$B/bin/resnet50-gpu-b64"
step "ViT-small and GPT-style LM step vs PyTorch eager on the GPU" $PY \
  "$ROOT/bench/transformer_step.py" "$RUN/transformers" --device cuda --torch2 $PY --no-compile \
  --repeats 1 --window 10 --windows 4 \
  --exe vit_small="$B/bin/vit_small-gpu" --exe gpt_medium="$B/bin/gpt_medium-gpu"
step "LSTM LM, GRU, bidirectional LSTM step vs PyTorch on the GPU" $PY \
  "$ROOT/bench/recurrent_step.py" "$RUN/recurrent" --device cuda --python $PY --rounds 1 \
  --threads 8 --exe lstmlm_medium="$B/bin/lstmlm_medium-gpu" --exe gru="$B/bin/gru-gpu" \
  --exe bilstm="$B/bin/bilstm-gpu" --digits "$B/data/digits.csv.gz"
step "compute-sanitizer memcheck (new kernels' tests, 2 ranks over MPI)" memcheck

echo
if ((STEPS_RUN == 0)); then
  echo "gpu_check: no step's name matches GPU_CHECK_ONLY='${GPU_CHECK_ONLY:-}'"
  exit 1
fi
if ((${#FAILED[@]})); then
  echo "gpu_check: FAILED: ${FAILED[*]}"
  exit 1
fi
echo "gpu_check: all steps passed"
