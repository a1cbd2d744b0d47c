#!/usr/bin/python3
"""Synthetic token sequences for the language-model tests (nothing is
downloaded): arithmetic progressions modulo the vocabulary, each with its own
start and step (1, 2, 3 or 5), so the next token follows from the ones
before once the step is seen.

    make_token_data.py OUT_DIR [--samples N] [--length T] [--vocab V] [--seed S]

Writes OUT_DIR/tokens.npy (int64, N x T: the inputs), OUT_DIR/next.npy
(int64, N x T: the token after each, the labels) and OUT_DIR/steps.npy
(int64, N: each sequence's step as a class, 0..3 for 1, 2, 3, 5: labels for
a sequence classifier).
"""
import argparse
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--length", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    start = rng.integers(0, args.vocab, args.samples)
    steps = np.array([1, 2, 3, 5])
    step_class = rng.integers(0, len(steps), args.samples)
    step = steps[step_class]
    seq = (start[:, None] + step[:, None] * np.arange(args.length + 1)[None, :]) % args.vocab
    np.save(os.path.join(args.out_dir, "tokens.npy"), seq[:, :-1].astype(np.int64))
    np.save(os.path.join(args.out_dir, "next.npy"), seq[:, 1:].astype(np.int64))
    np.save(os.path.join(args.out_dir, "steps.npy"), step_class.astype(np.int64))


if __name__ == "__main__":
    main()
