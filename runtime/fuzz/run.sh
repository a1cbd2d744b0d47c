#!/bin/bash
# Fuzzes the training executable's readers of user files (weights, checkpoints,
# digits CSV, MNIST IDX, CIFAR-10, NumPy .npy, the manifest) with libFuzzer, ASan and UBSan
# (clang++-14 from Debian's clang-14; not part of ./test.sh, which replays the
# committed corpus instead: test/runtime/fuzz-replay.test).
#
#   runtime/fuzz/run.sh [SECONDS=300] [WORKDIR=/tmp/mgs-fuzz]
#
# New inputs that found coverage go to WORKDIR/corpus; a crash leaves
# WORKDIR/crash-* and exits non-zero. Copy a crasher, once fixed, into
# runtime/fuzz/corpus/ so the replay keeps it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-300}
work=${2:-/tmp/mgs-fuzz}
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cxx" >/dev/null || { echo "run.sh: $cxx not found (apt-get install clang-14)"; exit 1; }
mkdir -p "$work/corpus"
lib=$here/../lib/Driver
echo "fuzz: building with $cxx (libFuzzer, ASan, UBSan)"
"$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fexceptions -I "$here/../include" -I "$lib" \
  "$here/DriverInputsFuzzer.cpp" "$lib/FileIO.cpp" "$lib/Checkpoint.cpp" "$lib/Data.cpp" \
  "$lib/Manifest.cpp" "$lib/Weights.cpp" -lz -o "$work/driver-inputs-fuzzer"
echo "fuzz: running for $seconds s (seeds: runtime/fuzz/corpus)"
cd "$work"
ASAN_OPTIONS=detect_leaks=1 ./driver-inputs-fuzzer -max_total_time="$seconds" -rss_limit_mb=2048 \
  -timeout=10 -max_len=65536 -print_final_stats=1 corpus "$here/corpus"
