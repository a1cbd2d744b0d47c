#!/usr/bin/python3
"""Compares two weights files (the runtime's MGSW format) tensor by tensor.

    compare_weights.py A.weights B.weights [--tol T] [--exclude REGEX]
                       [--noise N.weights [--noise-factor F]] [--initial W0.weights]

Either file may be a checkpoint (MGSCKPT2 to MGSCKPT7): its params are compared (the
workers' checkpoints of one run hold the same params when they stay in step).

Prints the largest relative difference ||a - b|| / ||b|| over the tensors and
exits 1 if it exceeds --tol (default 1e-5), if the tensors differ in names or
shapes, or if any value of either file is NaN or infinite (a NaN compares as
no difference at all, so it must fail on its own).

--noise N.weights: B's own rounding noise, N being B's run again from inputs
perturbed in their last bits: a tensor's tolerance is then the larger of --tol
and F (default 10) times its difference N vs B. Where a model amplifies
rounding (BatchNorm over few values, a value that is zero but for rounding),
two float32 devices differ as much as one device from itself.

--initial W0.weights: the weights A, B (and N) started from: their updates
(A - W0, ...) are compared instead, so that a step that moved a tensor little
is still checked (its update, not its value, must agree). A W0 with no
residual (mgs.residual/), as mgsc writes them, has each of them at zero.
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
    if data[:8] not in (b"MGSCKPT2", b"MGSCKPT3", b"MGSCKPT4", b"MGSCKPT5", b"MGSCKPT6",
                        b"MGSCKPT7"):
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
    ap.add_argument("--noise", help="B run again from inputs perturbed in their last bits")
    ap.add_argument("--noise-factor", type=float, default=10.0)
    ap.add_argument("--initial", help="the weights A and B started from: compare the updates")
    args = ap.parse_args()
    paths = [args.a, args.b] + [p for p in (args.noise, args.initial) if p]
    files = [read_params(p) for p in paths]
    w0 = files[-1] if args.initial else {}
    if w0 and not any(n.startswith("mgs.residual/") for n in w0):
        # mgsc's file, which leaves out the residuals: they start at zero
        files[-1] = {n: w0[n] if n in w0 else np.zeros_like(t) for n, t in files[1].items()
                     if n in w0 or n.startswith("mgs.residual/")}
        files[-1].update({n: t for n, t in w0.items() if n not in files[-1]})
    if args.exclude:
        files = [{n: t for n, t in d.items() if not re.search(args.exclude, n)} for d in files]
    a, b = files[0], files[1]
    for path, d in zip(paths[2:], files[2:]):
        if list(d) != list(b) or any(d[n].shape != b[n].shape for n in b):
            print(f"{path} holds other tensors than {args.b}")
            return 1
        if not all(np.all(np.isfinite(t)) for t in d.values()):
            print(f"{path} holds NaN or infinity")
            return 1
    noise = files[2] if args.noise else None
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
    if args.initial:
        w0 = files[-1]
        a, b = ({n: t[n] - w0[n] for n in t} for t in (a, b))
        if noise is not None:
            noise = {n: noise[n] - w0[n] for n in noise}
    def rel(x, y):
        return float(np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30))
    diffs = [(rel(a[n], b[n]), n) for n in a]
    if not all(np.isfinite(d) for d, _ in diffs):  # an overflow in the norms
        print("a difference is not finite")
        return 1
    if noise is None:
        worst = max(diffs)
        print(f"max relative difference {worst[0]:.2e} ({worst[1]}), tolerance {args.tol:g}")
        return 0 if worst[0] <= args.tol else 1
    # The tensor nearest its tolerance, which is the larger of --tol and the scaled noise.
    tols = {n: max(args.tol, args.noise_factor * rel(noise[n], b[n])) for n in a}
    worst = max(diffs, key=lambda dn: dn[0] / tols[dn[1]])
    print(f"max relative difference over tolerance {worst[0] / tols[worst[1]]:.2g} "
          f"({worst[1]}: {worst[0]:.2e}, tolerance {tols[worst[1]]:.2e}: the larger of "
          f"{args.tol:g} and {args.noise_factor:g} x its noise)")
    return 0 if worst[0] <= tols[worst[1]] else 1


if __name__ == "__main__":
    sys.exit(main())
