#!/usr/bin/python3
"""Compares two weights files (the runtime's MGSW format) tensor by tensor.

    compare_weights.py A.weights B.weights [--tol T]

Prints the largest relative difference ||a - b|| / ||b|| over the tensors and
exits 1 if it exceeds --tol (default 1e-5) or the tensors differ in names or
shapes.
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
    if list(a) != list(b) or any(a[n].shape != b[n].shape for n in a):
        print("the files hold different tensors")
        return 1
    worst = max((float(np.linalg.norm(a[n] - b[n]) / max(np.linalg.norm(b[n]), 1e-30)), n)
                for n in a)
    print(f"max relative difference {worst[0]:.2e} ({worst[1]}), tolerance {args.tol:g}")
    return 0 if worst[0] <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
