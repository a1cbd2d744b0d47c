#!/usr/bin/env bash
# The main job end to end on a fresh machine: set-up and build, then export
# the default model (a small CNN for 8x8 digits, with BatchNorm and dropout)
# with torch in TRAINING mode, import it (printing its summary), compile it
# with mgsc into a data-parallel training executable (OMGS-SGD: gradients
# merged into buckets by the planner, top-1% sparsified, all-gathered) and
# train it on 2 MPI workers on the digits data set that Debian's
# python3-sklearn ships, printing progress and the final held-out accuracy.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${MGS_BUILD_DIR:-$root/build}
digits=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz

"$root/scripts/setup.sh" "$build"
echo "run: building (ninja -j2)"
ninja -C "$build" -j2 mgs-import-onnx mgsc >/dev/null
out=$build/run
mkdir -p "$out"
echo "run: exporting the default model with torch"
/usr/bin/python3 "$root/scripts/export_models.py" "$out" cnn:15
echo "run: importing it"
"$build/bin/mgs-import-onnx" "$out/cnn-opset15.onnx" --batch-size 16 -o "$out/cnn.mlir" --summary
echo "run: compiling it into a training executable for 2 workers (the module: $out/cnn.mlir)"
"$build/bin/mgsc" "$out/cnn-opset15.onnx" --batch-size 16 --strategy omgs --workers 2 \
  --density 0.01 -o "$out/train_cnn"
echo "run: training on digits ($digits) with 2 MPI workers (global batch 32)"
mpirun --allow-run-as-root --oversubscribe -np 2 \
  "$out/train_cnn" --data "$digits" --epochs 10 --lr 0.05 --momentum 0.9 --seed 1 \
  --progress-every 20 --save "$out/cnn-trained.onnx"
