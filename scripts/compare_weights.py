#!/usr/bin/python3
"""Compares two weights files (the runtime's MGSW format) tensor by tensor.

    compare_weights.py A.weights B.weights [--tol T] [--exclude REGEX]

Either file may be a checkpoint (MGSCKPT2, MGSCKPT3 or MGSCKPT4): its params are compared (the
workers' checkpoints of one run hold the same params when they stay in step).

Prints the largest relative difference ||a - b|| / ||b|| over the tensors and
exits 1 if it exceeds --tol (default 1e-5), if the tensors differ in names or
shapes, or if any value of either file is NaN or infinite (a NaN compares as
no difference at all, so it must fail on its own).
"""
import argparse
import os
import re
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_gradients import read_records, read_weights  # noqa: E402


def read_params(path):
    """A weights file's tensors, or a checkpoint's params (its first tensor list)."""
    data = open(path, "rb").read()
    if data[:8] not in (b"MGSCKPT2", b"MGSCKPT3", b"MGSCKPT4"):
        return read_weights(path)
    (length,) = struct.unpack_from("<Q", data, 8)
    pos = 16 + length + 6 * 8  # seed, holdout, samples, epochs, iterations, rng state
    return read_records(data, pos)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--exclude", default=None,
                    help="leave out the tensors whose name this regular expression finds "
                         "(each worker's own state: mgs.residual/ for the error-feedback "
                         "residuals, running_ for BatchNorm's statistics of its batches)")
    args = ap.parse_args()
    a, b = read_params(args.a), read_params(args.b)
    if args.exclude:
        a, b = ({n: t for n, t in d.items() if not re.search(args.exclude, n)} for d in (a, b))
    if list(a) != list(b):
        print(f"the files hold different tensors: {list(a)} vs {list(b)}")
        return 1
    for n in a:
        if a[n].shape != b[n].shape:
            print(f"tensor {n} has shape {a[n].shape} in {args.a}, {b[n].shape} in {args.b}")
            return 1
        for path, t in ((args.a, a[n]), (args.b, b[n])):
            if not np.all(np.isfinite(t)):
                print(f"tensor {n} of {path} holds NaN or infinity")
                return 1
    if not a:
        print("the files hold no tensors")
        return 1
    diffs = [(float(np.linalg.norm(a[n] - b[n]) / max(np.linalg.norm(b[n]), 1e-30)), n)
             for n in a]
    if not all(np.isfinite(d) for d, _ in diffs):  # an overflow in the norms
        print("a difference is not finite")
        return 1
    worst = max(diffs)
    print(f"max relative difference {worst[0]:.2e} ({worst[1]}), tolerance {args.tol:g}")
    return 0 if worst[0] <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
