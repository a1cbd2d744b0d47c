#!/usr/bin/python3
"""Writes the first COUNT samples of an IDX data set (MNIST's layout, gzip) to
OUT_DIR: the tests' small training and test sets cut from Fashion-MNIST.

    idx_subset.py SRC_DIR SPLIT COUNT OUT_DIR [--side S] [--add-to-labels K]

SPLIT is train or t10k, the prefix of the files read and written
(SPLIT-images-idx3-ubyte.gz, SPLIT-labels-idx1-ubyte.gz). --side S keeps the
top-left S x S pixels of each image (a sample shape the model does not take),
--add-to-labels K adds K to every label (classes the model does not have).
"""
import argparse
import gzip
import os
import struct


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    rank = data[3]
    dims = list(struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank]))
    return dims, data[4 + 4 * rank:]


def write_idx(path, dims, body):
    header = bytes([0, 0, 8, len(dims)]) + struct.pack(">" + "I" * len(dims), *dims)
    with gzip.open(path, "wb") as f:
        f.write(header + body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("split", choices=["train", "t10k"])
    p.add_argument("count", type=int)
    p.add_argument("out")
    p.add_argument("--side", type=int, default=0)
    p.add_argument("--add-to-labels", type=int, default=0)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dims, images = read_idx(os.path.join(a.src, f"{a.split}-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(a.src, f"{a.split}-labels-idx1-ubyte.gz"))
    n, rows, cols = min(a.count, dims[0]), dims[1], dims[2]
    side = a.side or rows
    body = bytearray()
    for i in range(n):
        image = images[i * rows * cols:(i + 1) * rows * cols]
        for r in range(side):
            body += image[r * cols:r * cols + side]
    write_idx(os.path.join(a.out, f"{a.split}-images-idx3-ubyte.gz"), [n, side, side], bytes(body))
    write_idx(os.path.join(a.out, f"{a.split}-labels-idx1-ubyte.gz"), [n],
              bytes(l + a.add_to_labels for l in labels[:n]))


if __name__ == "__main__":
    main()
