#!/usr/bin/env bash
# The main job end to end on a fresh machine: set-up, build, then export the
# default model (a small CNN for 8x8 digits, with BatchNorm and dropout) with
# torch in TRAINING mode, import it into MLIR and print the module and a
# one-line summary.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${MGS_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh" "$build"
echo "run: building (ninja -j2)"
ninja -C "$build" -j2 mgs-import-onnx >/dev/null
out=$build/run
mkdir -p "$out"
echo "run: exporting the default model with torch"
/usr/bin/python3 "$root/scripts/export_models.py" "$out" cnn:15 2>/dev/null
echo "run: importing $out/cnn-opset15.onnx (batch size 32)"
"$build/bin/mgs-import-onnx" "$out/cnn-opset15.onnx" --batch-size 32 -o "$out/cnn.mlir" --summary
cat "$out/cnn.mlir"
