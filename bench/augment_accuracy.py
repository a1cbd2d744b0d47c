#!/usr/bin/python3
"""What --augment buys in accuracy: a model trained on a part of Fashion-MNIST's training split,
with and without random crops and flips, evaluated on the official test split (10,000
images), in one run.

    bench/augment_accuracy.py [BUILD_DIR] [--models fashioncnn] [--samples 3000]
        [--epochs 40] [--seeds 1,2,3] [--augment crop=2,flip] [--lr 0.05] [--batch-size 32]
        [--work DIR]

Each model is exported by scripts/export_models.py (torch), compiled once with mgsc (one
process, SGD with momentum 0.9 and a cosine schedule), and trained for every seed twice,
without and with --augment, on the first --samples training images. Augmentation is a
regularizer: it pays where a model overfits its training set (fashioncnn, 421 K parameters, on
3,000 images: its training loss falls to ~0.002) and costs accuracy where it underfits (the
default digits CNN's 20 K parameters scaled to 28x28, or an MLP, which shifts do not suit). The table gives each run's final test accuracy and the mean
difference (with augmentation minus without) over the seeds. Needs Debian's
dataset-fashion-mnist (scripts/setup.sh).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(benchlib.ROOT, "build"))
    ap.add_argument("--models", default="fashioncnn")
    ap.add_argument("--samples", type=int, default=3000)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--augment", default="crop=2,flip")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    mgsc = os.path.join(os.path.abspath(args.build), "bin", "mgsc")
    if not os.access(mgsc, os.X_OK):
        sys.exit(f"{mgsc} not found (build the project first)")
    if not os.path.isdir(FASHION):
        sys.exit(f"{FASHION} not found: run scripts/setup.sh (dataset-fashion-mnist)")
    seeds = [int(s) for s in args.seeds.split(",")]
    work = args.work or tempfile.mkdtemp(prefix="mgs-augment-")
    os.makedirs(work, exist_ok=True)

    subset = os.path.join(work, "train")
    os.makedirs(subset, exist_ok=True)
    benchlib.run_checked(["/usr/bin/python3", os.path.join(benchlib.ROOT, "test", "e2e", "Inputs",
                                                          "idx_subset.py"),
                          FASHION, "train", str(args.samples), subset], "cutting the training set")
    print(f"Fashion-MNIST: the first {args.samples} training images, tested on the 10,000 of "
          f"the test split; {args.epochs} epochs, SGD lr {args.lr} (cosine) momentum 0.9, batch "
          f"{args.batch_size}, one process; --augment {args.augment} against none")
    print(f"{'model':<12} {'seed':>4} {'plain %':>8} {'augment %':>10} {'diff':>6}")
    summary = []
    for name in args.models.split(","):
        onnx_path, params = benchlib.export_model(name, work)
        exe = os.path.join(work, f"train_{name}")
        benchlib.run_checked([mgsc, onnx_path, "--batch-size", str(args.batch_size), "-o", exe,
                              "--quiet"], f"compiling {name}")
        diffs, losses = [], []
        for seed in seeds:
            acc = []
            for extra in ([], ["--augment", args.augment]):
                out = benchlib.run_checked(
                    [exe, "--data", subset, "--test-data", FASHION, "--epochs", str(args.epochs),
                     "--lr", str(args.lr), "--lr-schedule", "cosine", "--seed", str(seed),
                     "--progress-every", "0", *extra],
                    f"training {name}", timeout=3600)
                m = re.search(r"final test accuracy: ([0-9.]+)%", out)
                loss = re.findall(r"train loss ([0-9.]+)", out)
                if not m:
                    raise RuntimeError(f"{name}: no final test accuracy in:\n{out[-2000:]}")
                acc.append(float(m.group(1)))
                losses.append(loss[-1] if loss else "?")
            diffs.append(acc[1] - acc[0])
            print(f"{name:<12} {seed:>4} {acc[0]:>8.2f} {acc[1]:>10.2f} {diffs[-1]:>+6.2f}   "
                  f"final train loss {losses[-2]} / {losses[-1]}", flush=True)
        summary.append(f"{name} ({params:,} parameters): mean difference {statistics.mean(diffs):+.2f} "
                       f"points over {len(seeds)} seed(s), min {min(diffs):+.2f}, max "
                       f"{max(diffs):+.2f}")
    print("\n".join(summary))


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.SubprocessError) as e:
        sys.exit(f"augment_accuracy.py: {e}")
