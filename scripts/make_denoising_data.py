#!/usr/bin/python3
"""A diffusion model's training data from scikit-learn's digits (nothing is downloaded): the
inputs of scripts/export_models.py's "denoiser" (a DDPM noise predictor of three graph inputs)
and the noise it must predict, for the training executable's --input-data.

    make_denoising_data.py OUT_DIR [--copies K] [--test N] [--seed S]

Each image x0 (pixels / 8 - 1, in [-1, 1]) is noised at a time step t drawn from [0, 50) of a
linear schedule (betas 1e-4 .. 0.2, DDPM's): x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps with
eps ~ N(0, 1); its condition c is its class's code (the label's 4 bits as -1/+1). --copies K
draws K noisings of every image (the samples a DDPM would draw over K epochs). The first N
images of a seeded permutation (default 297) are the test set, noised once. Writes
OUT_DIR/{train,test}_{x,t,c,eps,x0}.npy: x_t (N, 1, 8, 8) float32, t (N,) int64, c (N, 4)
float32, eps (N, 1, 8, 8) float32, the target of mgsc --loss mse, and the clean images x0 (for
"ddpm", which draws its noise in its graph and takes x0, t and c):

    mgsc denoiser-opset15.onnx --batch-size 32 --loss mse -o den
    ./den --data OUT/train_x.npy --labels OUT/train_eps.npy --input-data t=OUT/train_t.npy \
        --input-data c=OUT/train_c.npy --test-data OUT/test_x.npy --test-labels OUT/test_eps.npy \
        --test-input-data t=OUT/test_t.npy --test-input-data c=OUT/test_c.npy --optimizer adamw
"""
import argparse
import os

import numpy as np

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
STEPS = 50  # the denoiser's nn.Embedding rows


def noised(x0, labels, rng):
    """(x_t, t, c, eps) of images x0 with their labels, each at a random time step."""
    betas = np.linspace(1e-4, 0.2, STEPS)
    abar = np.cumprod(1 - betas)
    t = rng.integers(0, STEPS, len(x0))
    eps = rng.standard_normal(x0.shape)
    scale = abar[t].reshape(-1, 1, 1, 1)
    xt = np.sqrt(scale) * x0 + np.sqrt(1 - scale) * eps
    c = ((labels[:, None] >> np.arange(4)) & 1) * 2.0 - 1
    return (xt.astype(np.float32), t.astype(np.int64), c.astype(np.float32),
            eps.astype(np.float32))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--test", type=int, default=297)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.copies < 1:
        raise SystemExit("--copies must be at least 1")
    a = np.loadtxt(DIGITS, delimiter=",")
    x0 = (a[:, :64] / 8 - 1).reshape(-1, 1, 8, 8)
    labels = a[:, 64].astype(np.int64)
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(labels))
    if not 0 < args.test < len(order):
        raise SystemExit(f"--test must be in [1, {len(order) - 1}]")
    test, train = order[:args.test], np.tile(order[args.test:], args.copies)
    os.makedirs(args.out_dir, exist_ok=True)
    for split, index in (("train", train), ("test", test)):
        for name, values in zip("x t c eps".split(), noised(x0[index], labels[index], rng)):
            np.save(os.path.join(args.out_dir, f"{split}_{name}.npy"), values)
        np.save(os.path.join(args.out_dir, f"{split}_x0.npy"), x0[index].astype(np.float32))
    print(f"{args.out_dir}: {len(train)} training samples ({args.copies} noisings of "
          f"{len(order) - args.test} images), {len(test)} test samples")


if __name__ == "__main__":
    main()
