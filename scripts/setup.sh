#!/usr/bin/env bash
# Installs the Debian packages mgs needs (idempotent: quiet when all are there)
# and configures the CMake build directory. Used by run.sh and test.sh.
#   scripts/setup.sh [--bench] [BUILD_DIR]
# --bench also installs what the benchmarks in bench/ need beyond the build
# (docs/benchmarks.md): a tuned BLAS for Debian's PyTorch (libopenblas0-pthread;
# its libblas.so.3 alternative outranks the reference BLAS), ip/tc/ping for the
# netcluster (iproute2, iputils-ping), matplotlib for --plot, GNU time for
# bench/import_vgg16.sh and xz for bench/gpu_bundle.sh; and the PyTorch 2.x
# that bench/transformer_step.py and recurrent_step.py compare against beside
# Debian's torch 1.13: a venv (torch, its CPU wheel where reachable; torchvision, NumPy)
# in $MGS_TORCH2_VENV, default ~/.cache/mgs-torch2, made once.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=0
if [ "${1:-}" = "--bench" ]; then
  bench=1
  shift
fi
build=${1:-$root/build}

packages=(
  cmake ninja-build g++ libgtest-dev
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata curl ca-certificates
  libopenmpi-dev openmpi-bin libdnnl-dev libpng-dev libjpeg-dev
  python3-torch python3-torchvision python3-onnx python3-sklearn python3-pil
  dataset-fashion-mnist
)
if ((bench)); then
  packages+=(libopenblas0-pthread iproute2 iputils-ping python3-matplotlib time xz-utils)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: packages installed"
fi

# ONNX's C++ library (checker, shape inference, parser): Debian's libonnx (1.12) knows opsets
# up to 17 and IR version 8, but today's PyTorch exports opset 20 with IR version 9 or 10. So
# scripts/build_onnx.sh builds a current ONNX from its source release on PyPI once, with
# Debian's protobuf, into $MGS_DEPS (default ~/.cache/mgs-deps), and the build uses that. Where
# PyPI cannot be reached it says so and the build uses Debian's (models up to opset 17 only).
onnx_dir=$("$root/scripts/build_onnx.sh")

if [ -f "$build/build.ninja" ] &&
   ! grep -qxF "ONNX_DIR:PATH=$onnx_dir" "$build/CMakeCache.txt" 2>/dev/null; then
  echo "setup: $build was configured with another ONNX; reconfiguring with $onnx_dir"
  cmake -S "$root" -B "$build" -DONNX_DIR:PATH="$onnx_dir" >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; exit 1; }
fi
if [ ! -f "$build/build.ninja" ]; then
  echo "setup: configuring $build"
  cmake -G Ninja -S "$root" -B "$build" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DONNX_DIR:PATH="$onnx_dir" \
    -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; exit 1; }
fi

if ((bench)); then
  venv=${MGS_TORCH2_VENV:-$HOME/.cache/mgs-torch2}
  if ! "$venv/bin/python" -c "import torch, torchvision, numpy" 2>/dev/null; then
    echo "setup: making the PyTorch 2.x venv $venv (torch, torchvision, numpy)"
    /usr/bin/python3 -m venv "$venv"
    # PyTorch's CPU-only wheels when its index is reachable, else PyPI's (which bundle CUDA
    # libraries: several GB, but the CPU runs are the same).
    "$venv/bin/pip" install -q --retries 0 --timeout 20 \
      --index-url https://download.pytorch.org/whl/cpu torch torchvision 2>/dev/null \
      || "$venv/bin/pip" install -q torch torchvision
    "$venv/bin/pip" install -q numpy
  fi
  echo "setup: PyTorch 2.x for the benches: $venv/bin/python ($("$venv/bin/python" -c \
    'import torch; print("torch", torch.__version__)'))"
fi
