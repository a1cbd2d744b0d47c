#!/bin/bash
# The fuzz campaign: runs each libFuzzer target until RUNS
# executions (or MAX_SECONDS), two at a time at nice 19, then keeps what it
# found: the inputs that add coverage to the committed corpus (libFuzzer's
# -merge=1) and every crasher go into the target's corpus, which ./test.sh
# replays (test/*/fuzz-replay.test). Prints a table (docs/architecture.md,
# "Fuzzing", holds the last one) and writes it to WORKDIR/results.txt.
#
#   scripts/fuzz-campaign.sh [RUNS=1000000] [WORKDIR=/dev/shm/mgs-fuzz] [BUILD=build] [TARGET...]
#
# TARGETs: import (onnx_import/fuzz), data (CSV, IDX, CIFAR-10, npy), files
# (weights and checkpoints), manifest (runtime/fuzz), profile (lib/Planner/fuzz);
# all five by default, the slowest first. MAX_SECONDS (default 21600) bounds
# each run; KEEP=0 leaves the corpora alone. The importer's target needs
# BUILD's libraries (ninja -C BUILD mgs-import-onnx); inputs are written to
# WORKDIR/tmp, so a tmpfs WORKDIR (/dev/shm) keeps the file readers fast.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1000000}
work=${2:-/dev/shm/mgs-fuzz}
build=$(realpath -m "${3:-$root/build}") # only the importer needs it
shift $(($# < 3 ? $# : 3))
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(import data files profile manifest images)
max_seconds=${MAX_SECONDS:-21600}
keep=${KEEP:-1}
mkdir -p "$work/tmp"
renice -n 19 $$ >/dev/null # the builds and the fuzzers: other work shares the cores

# How each target is built and run, its fuzzer and its committed corpus.
runner() { # TARGET SECONDS [ARGS...]
  local t=$1 s=$2
  shift 2
  case $t in
    import) "$root/onnx_import/fuzz/run.sh" "$s" "$work/import" "$build" "$@" ;;
    data | files | manifest | images) "$root/runtime/fuzz/run.sh" "$s" "$work/runtime" "$t" "$@" ;;
    profile) "$root/lib/Planner/fuzz/run.sh" "$s" "$work/profile" "$@" ;;
    *) echo "fuzz-campaign: unknown target '$t'" >&2; return 1 ;;
  esac
}
fuzzer() {
  case $1 in
    import) echo "$work/import/import-fuzzer" ;;
    profile) echo "$work/profile/profile-fuzzer" ;;
    *) echo "$work/runtime/driver-inputs-fuzzer-$1" ;;
  esac
}
corpus() {
  case $1 in
    import) echo "$root/onnx_import/fuzz/corpus" ;;
    profile) echo "$root/lib/Planner/fuzz/corpus" ;;
    *) echo "$root/runtime/fuzz/corpus" ;;
  esac
}
newcorpus() {
  case $1 in
    import) echo "$work/import/corpus" ;;
    profile) echo "$work/profile/corpus" ;;
    *) echo "$work/runtime/corpus-$1" ;;
  esac
}
# The runtime families' fuzzers map an input's first byte onto their readers
# (DriverInputsFuzzer.cpp, kindOf); the replay runs every reader, so a kept
# input's first byte becomes the kind it ran.
canonicalize() { # TARGET FILE...
  local kinds
  case $1 in
    data) kinds="2,3,4,6,7" ;;
    files) kinds="0,1" ;;
    manifest) kinds="5" ;;
    images) kinds="8" ;;
    *) return 0 ;;
  esac
  shift
  python3 - "$kinds" "$@" <<'PY'
import sys
kinds = [int(k) for k in sys.argv[1].split(",")]
for path in sys.argv[2:]:
    data = bytearray(open(path, "rb").read())
    if data:
        kind = data[0] % 9
        data[0] = kind if kind in kinds else kinds[kind % len(kinds)]
        open(path, "wb").write(bytes(data))
PY
}

# Builds (one at a time: each compiles with sanitizers).
for t in "${targets[@]}"; do
  runner "$t" 0 || exit 1
done

campaign() { # TARGET
  local t=$1 log=$work/$1.log start end
  start=$(date +%s)
  TMPDIR=$work/tmp runner "$t" "$max_seconds" -runs="$runs" -artifact_prefix="$work/$t-" \
    >"$log" 2>&1 || true
  end=$(date +%s)
  echo "$((end - start))" >"$work/$t.wall"
}

# Two at a time, in the order given.
for t in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge 2 ]]; do wait -n || true; done
  echo "fuzz-campaign: $t: up to $runs executions ($(date -u +%H:%M) UTC)"
  campaign "$t" &
done
wait

# Keeps the new coverage and the crashers; reports.
results=$work/results.txt
printf '%-9s %12s %9s %9s %8s\n' target executions execs/s wall_s crashes | tee "$results"
for t in "${targets[@]}"; do
  log=$work/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  crashers=$(find "$work" -maxdepth 1 -type f \( -name "$t-crash-*" -o -name "$t-leak-*" -o \
    -name "$t-timeout-*" -o -name "$t-oom-*" \) | sort)
  crashes=$(printf '%s' "$crashers" | grep -c . || true)
  printf '%-9s %12s %9s %9s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$(cat "$work/$t.wall")" \
    "$crashes" | tee -a "$results"
  [[ $keep == 1 ]] || continue
  for c in $crashers; do
    kept=$(corpus "$t")/crash-$t-$(sha1sum "$c" | cut -c1-12)
    cp "$c" "$kept" && canonicalize "$t" "$kept"
  done
  merged=$work/$t-merged
  rm -rf "$merged" && cp -r "$(corpus "$t")" "$merged"
  before=$(ls "$merged" | sort)
  TMPDIR=$work/tmp ASAN_OPTIONS=detect_leaks=0 "$(fuzzer "$t")" -merge=1 -rss_limit_mb=4096 \
    -timeout=20 "$merged" "$(newcorpus "$t")" >"$work/$t.merge.log" 2>&1
  for f in $(comm -13 <(echo "$before") <(ls "$merged" | sort)); do
    canonicalize "$t" "$merged/$f"
    cp "$merged/$f" "$(corpus "$t")/cmin-$t-${f:0:12}"
  done
done
