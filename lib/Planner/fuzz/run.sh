#!/bin/bash
# Fuzzes the calibration profile's reader (parseProfile: mgsc --profile-use,
# mgs-plan, the merge pass) with libFuzzer, ASan and UBSan (clang++-14 from
# Debian's clang-14). Profile.cpp is compiled here with coverage; LLVMSupport
# comes from LLVM 22 (no MLIR, no build tree needed). Not part of ./test.sh,
# which replays the committed corpus (test/mgs-plan/fuzz-replay.test).
#
#   lib/Planner/fuzz/run.sh [SECONDS=300] [WORKDIR=/tmp/mgs-profile-fuzz] [LIBFUZZER_ARGS...]
#
# SECONDS=0 only builds (WORKDIR/profile-fuzzer, rebuilt when a source changed).
# New inputs go to WORKDIR/corpus; a crash leaves WORKDIR/crash-* and exits
# non-zero. Copy a crasher, once fixed, into lib/Planner/fuzz/corpus/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
seconds=${1:-300}
work=${2:-/tmp/mgs-profile-fuzz}
shift $(($# < 2 ? $# : 2))
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cxx" >/dev/null ||
  { echo "run.sh: $cxx not found (apt-get install clang-14)"; exit 1; }
llvm=/usr/lib/llvm-22
mkdir -p "$work/corpus"
exe=$work/profile-fuzzer
newer=$(find "$here/ProfileFuzzer.cpp" "$root/lib/Planner"/*.{cpp,h} "$root/include/mgs/Planner" \
        "$root/runtime/include/mgsrt/contract.h" -newer "$exe" 2>/dev/null | head -1 || true)
if [[ ! -x $exe || -n $newer ]]; then
  echo "fuzz: building $exe with $cxx (libFuzzer, ASan, UBSan)"
  flags=(-std=gnu++17 -g -O1 -fexceptions -fsanitize=address,undefined
         -fno-sanitize-recover=undefined -I "$root/include" -I "$root/runtime/include"
         -I "$root/lib/Planner" -isystem "$llvm/include")
  "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$root/lib/Planner/Profile.cpp" \
    -o "$work/Profile.o"
  "$cxx" "${flags[@]}" -fsanitize=fuzzer -c "$here/ProfileFuzzer.cpp" -o "$work/ProfileFuzzer.o"
  "$cxx" -fsanitize=fuzzer,address,undefined "$work/Profile.o" "$work/ProfileFuzzer.o" \
    "$llvm/lib/libLLVM.so.1" -Wl,-rpath,"$llvm/lib" -o "$exe"
fi
[[ $seconds == 0 ]] && exit 0
echo "fuzz: running for $seconds s (seeds: lib/Planner/fuzz/corpus)"
cd "$work"
"$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -print_final_stats=1 "$@" corpus "$here/corpus"
