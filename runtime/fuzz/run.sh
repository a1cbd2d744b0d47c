#!/bin/bash
# Fuzzes the training executable's readers of user files (weights, checkpoints,
# digits CSV, MNIST IDX, CIFAR-10, NumPy .npy, the manifest) with libFuzzer, ASan and UBSan
# (clang++-14 from Debian's clang-14; not part of ./test.sh, which replays the
# committed corpus instead: test/runtime/fuzz-replay.test).
#
#   runtime/fuzz/run.sh [SECONDS=300] [WORKDIR=/tmp/mgs-fuzz] [FAMILY=all] [LIBFUZZER_ARGS...]
#
# FAMILY picks the readers (DriverInputsFuzzer.cpp's kinds): all, files (weights
# and checkpoints), data (CSV, IDX, CIFAR-10, npy), manifest or images (an image
# folder's PNG or JPEG); each family is
# its own fuzzer, WORKDIR/driver-inputs-fuzzer-FAMILY, rebuilt only when a source
# changed. SECONDS=0 only builds. The inputs are written to $TMPDIR (a tmpfs
# such as /dev/shm makes that cheap). New inputs that found coverage go to
# WORKDIR/corpus-FAMILY; a crash leaves WORKDIR/crash-* and exits non-zero.
# Copy a crasher, once fixed, into runtime/fuzz/corpus/ with its first byte set
# to its kind (scripts/fuzz-campaign.sh does), so the replay keeps it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-300}
work=${2:-/tmp/mgs-fuzz}
family=${3:-all}
shift $(($# < 3 ? $# : 3))
case $family in
  all) kinds="0,1,2,3,4,5,6,7,8" ;;
  files) kinds="0,1" ;;
  data) kinds="2,3,4,6,7" ;;
  manifest) kinds="5" ;;
  images) kinds="8" ;;
  *) echo "run.sh: unknown family '$family' (all, files, data, manifest, images)"; exit 1 ;;
esac
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cxx" >/dev/null || { echo "run.sh: $cxx not found (apt-get install clang-14)"; exit 1; }
mkdir -p "$work/corpus-$family"
lib=$here/../lib/Driver
srcs=("$here/DriverInputsFuzzer.cpp" "$lib/FileIO.cpp" "$lib/Checkpoint.cpp" "$lib/Data.cpp" "$lib/Npy.cpp"
      "$lib/Manifest.cpp" "$lib/Weights.cpp" "$lib/ImageFolder.cpp")
exe=$work/driver-inputs-fuzzer-$family
newer=$(find "${srcs[@]}" "$here"/*.h "$lib"/*.h "$here/../include" -newer "$exe" 2>/dev/null \
        | head -1 || true)
if [[ ! -x $exe || -n $newer ]]; then
  echo "fuzz: building $exe with $cxx (libFuzzer, ASan, UBSan)"
  "$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fexceptions -DMGS_FUZZ_KINDS="$kinds" -I "$here/../include" -I "$lib" "${srcs[@]}" -lz -lpng16 -ljpeg \
    -o "$exe"
fi
[[ $seconds == 0 ]] && exit 0
echo "fuzz: running for $seconds s (seeds: runtime/fuzz/corpus)"
cd "$work"
ASAN_OPTIONS=detect_leaks=1 "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 \
  -timeout=10 -max_len=65536 -print_final_stats=1 "$@" "corpus-$family" "$here/corpus"
