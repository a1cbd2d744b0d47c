#!/usr/bin/env bash
# Import time and peak memory of VGG-16 (the largest model of the paper), as
# ratios against its goals: under 10 s, and peak RSS under 2x the
# file size. Uses the build tree of ./test.sh (exports the model if needed).
#   bench/import_vgg16.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
model=$build/test/models/vgg16-opset15.onnx
[ -f "$model" ] || ninja -C "$build" -j2 "$model" >/dev/null
ninja -C "$build" -j2 mgs-import-onnx >/dev/null

bytes=$(stat -c %s "$model")
best=""
for run in 1 2 3; do
  out=$( { /usr/bin/time -f "%e %M" "$build/bin/mgs-import-onnx" "$model" --batch-size 32 -o /dev/null; } 2>&1 | tail -1)
  echo "run $run: $out (seconds, peak KiB)"
  best=$(printf '%s\n%s\n' "$best" "$out" | sed '/^$/d' | sort -n | head -1)
done
read -r secs kib <<<"$best"
awk -v s="$secs" -v k="$kib" -v b="$bytes" 'BEGIN {
  mb = b / 1048576; peak = k / 1024;
  printf "VGG-16 import (%.0f MiB file, batch 32): best of 3 = %.2f s, peak RSS %.0f MiB\n", mb, s, peak;
  printf "  time / 10 s goal        = %.3f (goal <= 1)\n", s / 10;
  printf "  peak RSS / file size    = %.2f  (goal <= 2)\n", peak / mb;
}'
