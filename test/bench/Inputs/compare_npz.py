#!/usr/bin/python3
"""Compares two NumPy .npz files of parameters (torch_baseline_worker.py --save).

    compare_npz.py A.npz B.npz --same TOL     prints "same" if max |a - b| < TOL
    compare_npz.py A.npz B.npz --differs TOL  prints "differs" if max |a - b| > TOL

over every element of every tensor, else prints the largest difference and exits 1. Either
way it exits 1, naming the problem, if the files hold different tensor names, a tensor's
shapes differ, or any value of either file is NaN or infinite: Python's max() and NumPy's
comparisons treat a NaN as no difference at all, so those must fail on their own.
"""
import sys

import numpy as np


def main(argv):
    if len(argv) != 5 or argv[3] not in ("--same", "--differs"):
        sys.exit(__doc__)
    a, b = np.load(argv[1]), np.load(argv[2])
    if sorted(a.files) != sorted(b.files):
        print(f"the files hold different tensors: {sorted(a.files)} vs {sorted(b.files)}")
        return 1
    if not a.files:
        print("the files hold no tensors")
        return 1
    worst = 0.0
    for n in a.files:
        x, y = a[n], b[n]
        if x.shape != y.shape:
            print(f"tensor {n} has shape {x.shape} in {argv[1]}, {y.shape} in {argv[2]}")
            return 1
        for path, t in ((argv[1], x), (argv[2], y)):
            if not np.all(np.isfinite(t)):
                print(f"tensor {n} of {path} holds NaN or infinity")
                return 1
        if x.size:
            worst = max(worst, float(np.abs(x.astype(np.float64) - y).max()))
    tol = float(argv[4])
    if argv[3] == "--same" and worst < tol:
        print("same")
        return 0
    if argv[3] == "--differs" and worst > tol:
        print("differs")
        return 0
    print(f"max abs difference {worst!r} ({argv[3]} {tol:g})")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
