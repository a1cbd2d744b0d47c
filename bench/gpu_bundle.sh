#!/bin/bash
# Packs what bench/gpu_check.sh needs into one archive, for a GPU machine that
# has CUDA's libraries and PyTorch but not this project's toolchain (MLIR,
# oneDNN, OpenMPI, ONNX): the GPU test binary, the CUDA kernel library, the
# top-k benchmark, training executables compiled by mgsc for --target=cuda
# (and their CPU twins, the oracle), the digits data, and the non-CUDA
# shared libraries they load. The CUDA libraries (cuBLAS, cuDNN, NCCL) are
# the GPU machine's own. Also the commit it was built from (COMMIT, with
# "-dirty" for uncommitted changes) and what changed on the GPU side since the
# last GPU run (CHANGES.txt, bench/gpu_changes.sh), which gpu_check.sh prints.
#
#   bench/gpu_bundle.sh [BUILD_DIR] [OUT.tar.xz]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
OUT=$(realpath -m "${2:-$ROOT/gpu-bundle.tar.xz}")
DIGITS=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz

echo "gpu_bundle: building in $BUILD"
ninja -C "$BUILD" -j2 mgsc MGSRuntimeCudaTests mgsrt_cuda mgsrt_topk_cuda_bench mgs-test-models >/dev/null
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
B=$STAGE/gpu-bundle
mkdir -p "$B/bin" "$B/lib" "$B/data"
cp "$BUILD/test/unit/MGSRuntimeCudaTests" "$BUILD/bin/mgsrt_topk_cuda_bench" "$B/bin/"
cp "$BUILD/runtime/lib/Kernels/CUDA/libmgsrt_cuda.so" "$B/lib/"
cp "$DIGITS" "$B/data/"
if git -C "$ROOT" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  echo "$(git -C "$ROOT" rev-parse --short=12 HEAD)$([[ -n $(git -C "$ROOT" status --porcelain \
    --untracked-files=no) ]] && echo -dirty)" > "$B/COMMIT"
  "$ROOT/bench/gpu_changes.sh" > "$B/CHANGES.txt" || true
fi

MODELS=$BUILD/test/models
compile() { # NAME MODEL ARGS...
  local name=$1 model=$2
  shift 2
  echo "gpu_bundle: mgsc $(basename "$model") $* -> $name"
  "$BUILD/bin/mgsc" "$model" --quiet -o "$B/bin/$name" "$@"
}
compile mlp-gpu "$MODELS/mlp-opset15.onnx" --batch-size 32 --target=cuda
compile mlp-cpu "$MODELS/mlp-opset15.onnx" --batch-size 32
compile mlp-acc2-gpu "$MODELS/mlp-opset15.onnx" --batch-size 16 --accumulate 2 --target=cuda
# bfloat16 and half on the GPU, not yet enabled there (mgsc refuses them with
# --target=cuda until gpu_check.sh's "reduced precision" step has passed):
# the MLP and the CNN (GEMMs and convolutions), GPU and CPU.
for p in bf16 f16; do
  for m in mlp cnn; do
    compile "$m-$p-gpu" "$MODELS/$m-opset15.onnx" --batch-size 32 --target=cuda \
      --precision "$p" --unverified-gpu-precision
    compile "$m-$p-cpu" "$MODELS/$m-opset15.onnx" --batch-size 32 --precision "$p"
  done
done
compile cnn-omgs-gpu "$MODELS/cnn-opset15.onnx" --batch-size 32 --target=cuda \
  --strategy omgs --workers 1 --density 0.01
compile cnn-omgs-cpu "$MODELS/cnn-opset15.onnx" --batch-size 32 \
  --strategy omgs --workers 1 --density 0.01
compile cnn-cal-gpu "$MODELS/cnn-opset15.onnx" --batch-size 32 --target=cuda --profile-generate
compile cnn-warmup-gpu "$MODELS/cnn-opset15.onnx" --batch-size 32 --target=cuda \
  --strategy omgs --workers 1 --density 0.001 --density-warmup 0.25,0.0625,0.015625,0.004
# --cuda-graph's density warm-up and clipping checks (gpu_check.sh, cuda_graph).
compile mlp-warmup1-gpu "$MODELS/mlp-opset15.onnx" --batch-size 32 --target=cuda \
  --strategy omgs --workers 1 --density 0.01 --density-warmup 0.25,0.0625
compile mlp-clip-gpu "$MODELS/mlp-opset15.onnx" --batch-size 32 --target=cuda --clip-grad-norm 0.5
compile resnet20-gpu-b32 "$MODELS/resnet20-opset15.onnx" --batch-size 32 --target=cuda
compile resnet20-gpu-b128 "$MODELS/resnet20-opset15.onnx" --batch-size 128 --target=cuda
compile resnet20-gpu-b512 "$MODELS/resnet20-opset15.onnx" --batch-size 512 --target=cuda
# ResNet-50 (ImageNet shape): its 100 MB of weights are made on the GPU machine.
for b in 32 64; do
  compile "resnet50-gpu-b$b" "$MODELS/resnet50-opset15.onnx" --batch-size "$b" --target=cuda
  rm "$B/bin/resnet50-gpu-b$b.weights"
done
# The recurrent layers (digits rows as sequences), GPU and CPU.
for m in lstm gru bilstm; do
  compile "$m-gpu" "$MODELS/$m-opset15.onnx" --batch-size 16 --target=cuda
  compile "$m-cpu" "$MODELS/$m-opset15.onnx" --batch-size 16
done
# Several ranks on one GPU over MPI (--comm mpi): dense and OMGS for 4 ranks.
# The transformers of bench/transformer_step.py (its batches and flags).
"$ROOT/scripts/export_models.py" "$STAGE/models" vit_small gpt_medium lstmlm_medium >/dev/null
compile vit_small-gpu "$STAGE/models/vit_small-opset15.onnx" --batch-size 16 --target=cuda
compile gpt_medium-gpu "$STAGE/models/gpt_medium-opset15.onnx" --batch-size 4 --target=cuda \
  --freeze mask
# The paper's LSTM language model, for bench/recurrent_step.py --device cuda.
compile lstmlm_medium-gpu "$STAGE/models/lstmlm_medium-opset15.onnx" --batch-size 16 --target=cuda
# Their weights (40 MB) are made on the GPU machine (bench/model_data.py --weights).
rm "$B"/bin/{vit_small,gpt_medium,lstmlm_medium}-gpu.weights
# Today's models (docs/models.md's families), GPU and CPU, batch 8: the GPU
# executable reads the CPU's weights (--weights), gpu_check.sh makes the data.
for spec in vit gpt:--freeze,mask transformer lngelu lngelu:17 mobilenetv3 mobilenetv2 \
            shufflenetv2 convnext mnasnet swin decoder maxvit padattn seq2seq \
            segnet:--class-axis,1 lstmlm_seq:--class-axis,-1 lraspp:--class-axis,1 r2plus1d; do
  IFS=: read -r m rest <<< "$spec"
  opset=15 name=$m flags=()
  if [[ $rest == 17 ]]; then
    opset=17 name=${m}17
  else
    IFS=, read -r -a flags <<< "$rest"
  fi
  compile "today-$name-cpu" "$MODELS/$m-opset$opset.onnx" --batch-size 8 "${flags[@]}"
  compile "today-$name-gpu" "$MODELS/$m-opset$opset.onnx" --batch-size 8 "${flags[@]}" --target=cuda
  rm "$B/bin/today-$name-gpu.weights"
  # The large ones' weights (R(2+1)D's 50 MB, LR-ASPP's 13 MB) are made on the GPU machine
  # too (gpu_check.sh's todays_models: bench/model_data.py --weights, PyTorch's default
  # initialization's bounds).
  [[ $name == r2plus1d || $name == lraspp ]] && rm "$B/bin/today-$name-cpu.weights"
done
compile mlp-dense8-gpu "$MODELS/mlp-opset15.onnx" --batch-size 8 --strategy dense --target=cuda
compile mlp-dense16-gpu "$MODELS/mlp-opset15.onnx" --batch-size 16 --strategy dense --target=cuda
compile mlp-layerwise2-gpu "$MODELS/mlp-opset15.onnx" --batch-size 16 --target=cuda \
  --strategy layerwise --workers 2 --density 0.01
compile mlp-omgs4-gpu "$MODELS/mlp-opset15.onnx" --batch-size 8 --target=cuda \
  --strategy omgs --workers 4 --density 0.01
compile mlp-fp16-4-gpu "$MODELS/mlp-opset15.onnx" --batch-size 8 --target=cuda \
  --strategy omgs --workers 4 --density 0.01 --fp16-values
compile mlp-warmup4-gpu "$MODELS/mlp-opset15.onnx" --batch-size 8 --target=cuda \
  --strategy omgs --workers 4 --density 0.01 --density-warmup 0.25,0.0625
# The sparse collectives staged over MPI: at density 1 on 4 ranks (every
# entry exchanged: the dense run's parameters within rounding); on NCCL
# (one rank: NCCL takes a GPU per rank) against staged, at density 0.01.
for c in gtopk sparse-allreduce; do
  compile "mlp-$c-d1-gpu" "$MODELS/mlp-opset15.onnx" --batch-size 8 --target=cuda \
    --strategy layerwise --workers 4 --density 1 --sparse-collective "$c"
  compile "mlp-$c-w1-gpu" "$MODELS/mlp-opset15.onnx" --batch-size 32 --target=cuda \
    --strategy layerwise --workers 1 --density 0.01 --sparse-collective "$c"
done

# OpenMPI's launcher, for several ranks on one GPU (--comm mpi): the GPU
# machine has no MPI. OpenMPI 4 reads its plugins, help texts and settings
# from the absolute paths Debian installed them at, so the trees keep those
# paths under mpi/ and gpu_check.sh copies them there where they are absent.
MPI_TREES=(/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 /usr/lib/x86_64-linux-gnu/pmix2
           /usr/share/openmpi /etc/openmpi)
mkdir -p "$B/mpi/bin"
for d in "${MPI_TREES[@]}"; do
  mkdir -p "$B/mpi$(dirname "$d")"
  cp -a "$d" "$B/mpi$d"
done
rm -rf "$B"/mpi/usr/lib/x86_64-linux-gnu/pmix2/include
cp -L "$(command -v orterun)" "$(command -v orted)" "$B/mpi/bin/"
ln -s orterun "$B/mpi/bin/mpirun"
printf '%s\n' "${MPI_TREES[@]}" > "$B/mpi/TREES"

# The shared libraries the binaries load, except the C/C++ runtime (the GPU
# machine's own is as new or newer) and CUDA's. OpenMPI's (libmpi, what it
# loads, and what its launcher and plugins load) go to mpi/lib, used only on
# a machine without an OpenMPI of its own: a machine's mpirun must find its
# own PMIx and plugins, not these.
closure() { # FILE...: the shared libraries they load, one path a line
  local f
  for f in "$@"; do
    ldd "$f" | awk '$3 ~ /^\// { print $3 }'
  done | sort -u
}
LIBMPI=$(closure "$B/bin/mlp-cpu" | grep '/libmpi\.so' | head -1)
MPI_LIBS=$( (echo "$LIBMPI"; closure "$LIBMPI" "$B"/mpi/bin/orte* \
  $(find "$B/mpi" -name '*.so' -type f)) | sort -u)
mkdir -p "$B/mpi/lib"
{
  closure $(ls "$B"/bin/* "$B"/lib/libmgsrt_cuda.so | grep -v '\.weights$')
  echo "$MPI_LIBS"
} | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    libcuda*|libcublas*|libcudnn*|libnccl*|libnvrtc*) ;;
    *) if grep -qxF "$lib" <<< "$MPI_LIBS"; then
         cp -L "$lib" "$B/mpi/lib/"
       else
         cp -L "$lib" "$B/lib/"
       fi ;;
  esac
done
strip --strip-unneeded "$B"/lib/*.so* "$B"/mpi/lib/*.so* 2>/dev/null || true
tar -C "$STAGE" -cJf "$OUT" gpu-bundle
echo "gpu_bundle: wrote $OUT ($(du -h "$OUT" | cut -f1))"
