#!/usr/bin/python3
"""Synthetic data and parameters for a compiled mgs executable, shaped by its
own manifest (mgs_model_manifest, read from the executable file).

    bench/model_data.py EXECUTABLE SAMPLES OUT_PREFIX [--perturbed]
    bench/model_data.py --weights EXECUTABLE OUT.weights

The first writes SAMPLES inputs (normal floats, or token ids below the
classes for an index input) and class labels (one per sample, or one per
token for a model with a label per token) to OUT_PREFIX-x.npy and
OUT_PREFIX-y.npy, which the executable's --data and --labels read (token
ids from 1: 0 is the padding some models mask; --perturbed: also
OUT_PREFIX-xp.npy, the float inputs times 1 + 1e-7 noise, for
scripts/compare_weights.py --noise); a model
with more than one input, or trained against float targets, is refused
(exit status 1). The second writes a weights file (the runtime's MGSW0002
format) of every param but the error-feedback residuals (mgs.residual/,
which the driver starts at zero, as mgsc's files leave them out): a matrix
or kernel uniform in +-1/sqrt(fan-in), a vector of ones when it is a scale
(".weight", a running variance), else zeros. Timing runs need no trained
values: the GPU machine makes them so that the bundle need not carry large
weights files.
"""
import struct
import sys
import zlib

import numpy as np


def manifest(path):
    data = open(path, "rb").read()
    start = data.find(b"mgs-manifest ")
    if start < 0:
        sys.exit(f"model_data.py: {path}: no mgs manifest in this file")
    return data[start:data.index(b"\0", start)].decode().splitlines()


def write_weights(exe, out):
    rng = np.random.default_rng(0)
    records = []
    params = [w for w in (line.split() for line in manifest(exe))
              if w[0] == "param" and not w[1].startswith("mgs.residual/")]
    for w in params:
        name, dims = w[1], [int(d) for d in w[4:4 + int(w[3])]]
        if len(dims) >= 2:
            bound = 1.0 / np.sqrt(max(1, int(np.prod(dims[1:]))))
            values = rng.uniform(-bound, bound, dims)
        elif name.endswith(".weight") or "running_var" in name:
            values = np.ones(dims)
        else:
            values = np.zeros(dims)
        key = name.encode()
        records.append(struct.pack("<I", len(key)) + key + struct.pack("<I", len(dims)) +
                       struct.pack(f"<{len(dims)}q", *dims) +
                       values.astype("<f4").tobytes())
    data = b"MGSW0002" + struct.pack("<Q", len(records)) + b"".join(records)
    with open(out, "wb") as f:
        f.write(data + struct.pack("<I", zlib.crc32(data)))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--weights":
        return write_weights(sys.argv[2], sys.argv[3])
    perturbed = sys.argv[4:] == ["--perturbed"]
    if len(sys.argv) != 4 + perturbed:
        sys.exit(__doc__)
    exe, samples, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lines = [line.split() for line in manifest(exe)]
    inputs = [w for w in lines if w[0] in ("input", "index_input")]
    batch = next(int(w[1]) for w in lines if w[0] == "batch_size")
    classes = [int(w[1]) for w in lines if w[0] == "classes"]
    labels = [[int(d) for d in w[2:]] for w in lines if w[0] == "labels"]
    if len(inputs) != 1 or not classes or not labels:
        sys.exit(f"model_data.py: {exe}: one input and class labels only")
    dims = [int(d) for d in inputs[0][3:]]
    rng = np.random.default_rng(0)
    shape = (samples, *dims[1:])
    if inputs[0][0] == "index_input":
        x = rng.integers(1, max(2, min(classes[0], 8)), shape).astype(np.int64)
    else:
        x = rng.standard_normal(shape).astype(np.float32)
    per_sample = labels[0][0] // batch
    y = rng.integers(0, classes[0], (samples, per_sample) if per_sample > 1 else samples)
    np.save(prefix + "-x.npy", x)
    if perturbed:
        noise = 1 + 1e-7 * rng.standard_normal(shape) if x.dtype == np.float32 else 1
        np.save(prefix + "-xp.npy", (x * noise).astype(x.dtype))
    np.save(prefix + "-y.npy", y.astype(np.int64))


if __name__ == "__main__":
    main()
