#!/usr/bin/python3
"""An imbalanced split of scikit-learn's digits (nothing is downloaded), for
training with class weights (mgsc --class-weights) and judging the result by
class (the executable's --per-class).

    make_imbalanced_digits.py OUT_DIR [--keep F] [--rare 0,1,2,3,4] [--test N] [--seed S]

The first N samples of a seeded permutation are a test set, as balanced as
the digits are; of the others, the --rare classes keep a fraction F of their
samples (default 0.1), the rest all of theirs. Writes OUT_DIR/train_x.npy,
train_y.npy, test_x.npy, test_y.npy (pixels / 16 as float32, int64 labels) and
OUT_DIR/weights.txt, inverse-frequency weights n / (C * count_c) of the
training labels (sklearn's "balanced"), for mgsc --class-weights.
"""
import argparse
import os

import numpy as np

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--keep", type=float, default=0.1)
    ap.add_argument("--rare", default="0,1,2,3,4")
    ap.add_argument("--test", type=int, default=540)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not 0 < args.keep <= 1:
        raise SystemExit("--keep must be in (0, 1]")
    rare = {int(c) for c in args.rare.split(",")}
    a = np.loadtxt(DIGITS, delimiter=",")
    x, y = (a[:, :64] / 16).astype(np.float32), a[:, 64].astype(np.int64)
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(y))
    test, rest = order[:args.test], order[args.test:]
    train = np.array([i for i in rest if y[i] not in rare or rng.random() < args.keep])
    os.makedirs(args.out_dir, exist_ok=True)
    for name, idx in (("train", train), ("test", test)):
        np.save(os.path.join(args.out_dir, f"{name}_x.npy"), x[idx])
        np.save(os.path.join(args.out_dir, f"{name}_y.npy"), y[idx])
    counts = np.bincount(y[train], minlength=10)
    if (counts == 0).any():
        raise SystemExit(f"a class has no training sample left: {counts.tolist()}")
    weights = len(train) / (10 * counts)
    with open(os.path.join(args.out_dir, "weights.txt"), "w") as f:
        f.write(" ".join(f"{w:.6g}" for w in weights) + "\n")
    print(f"train {len(train)} samples, per class {counts.tolist()}; test {len(test)}")


if __name__ == "__main__":
    main()
