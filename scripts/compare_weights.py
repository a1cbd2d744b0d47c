#!/usr/bin/python3
"""Compares two weights files (the runtime's MGSW format) tensor by tensor.

    compare_weights.py A.weights B.weights [--tol T]

Prints the largest relative difference ||a - b|| / ||b|| over the tensors and
exits 1 if it exceeds --tol (default 1e-5), if the tensors differ in names or
shapes, or if any value of either file is NaN or infinite (a NaN compares as
no difference at all, so it must fail on its own).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_gradients import read_weights  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    a, b = read_weights(args.a), read_weights(args.b)
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
