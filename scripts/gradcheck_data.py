"""The files scripts/check_gradients.py reads and writes: the executable's weights files, and
the one batch each model trains on in the format the executable reads (the same bytes torch
sees, after the same scaling)."""
import os
import struct
import zlib

import numpy as np
import torch

import export_models


def read_records(data, pos):
    """A u64 count and that many tensor records (u32 len, name, u32 rank, i64 dims, f32 data)
    from `pos`: ({name: array}, the position after them)."""
    (count,), pos, out = struct.unpack_from("<Q", data, pos), pos + 8, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        (rank,) = struct.unpack_from("<I", data, pos)
        dims = struct.unpack_from(f"<{rank}q", data, pos + 4)
        pos += 4 + 8 * rank
        size = int(np.prod(dims)) if rank else 1
        out[name] = np.frombuffer(data, np.float32, size, pos).reshape(dims)
        pos += 4 * size
    return out, pos


def read_weights(path):
    """The runtime's weights format: MGSW0002, the tensor records, a u32 CRC-32 of all before
    it (MGSW0001: the same without the CRC)."""
    data = open(path, "rb").read()
    assert data[:8] in (b"MGSW0001", b"MGSW0002"), f"{path}: not a weights file"
    if data[:8] == b"MGSW0002":
        (crc,) = struct.unpack_from("<I", data, len(data) - 4)
        assert zlib.crc32(data[:-4]) == crc, f"{path}: corrupt (its CRC-32 does not match)"
        data = data[:-4]
    out, pos = read_records(data, 8)
    assert pos == len(data), f"{path}: {len(data) - pos} bytes after the last tensor"
    return out


# mgsc's options per model: the GPT's causal mask is a buffer (an ONNX
# initializer like the weights): kept at its value. A tensor that holds
# infinities (that mask) is compared for equality. Swin V2's table of relative
# coordinates (the input of its position bias MLP) is a float buffer that the loss
# reaches through the MLP: frozen too, as PyTorch never updates it.
# The Llama's rotary inv_freq likewise (the angles' Cos and Sin are computed from it).


# Segmentation models: one image's shape and the classes of its pixels (NumPy labels (N, H, W)).
SEGMENTATION = {"segnet": ((1, 8, 8), 11), "lraspp": ((3, 64, 64), 5)}

# Models fed NumPy data, and one sample's shape (their export's).
NPY_INPUTS = {"inception3": (3, 75, 75), "resnet50": (3, 224, 224), "mobilenetv2": (3, 64, 64),
              "r2plus1d": (3, 8, 32, 32), "s3d": (3, 16, 64, 64)}


def make_other_inputs(name, n, workdir):
    """Writes the samples of model `name`'s graph inputs beside the first (OTHER_INPUTS), one
    NumPy file each; returns [(input name, path, torch tensor)] (none for most models)."""
    rng = np.random.default_rng(4321)
    out = []
    for input_name, make in export_models.OTHER_INPUTS.get(name, []):
        values = make(n, rng)
        path = os.path.join(workdir, f"{name}-{input_name}.npy")
        np.save(path, values)
        out.append((input_name, path, torch.from_numpy(values)))
    return out


def make_batch(name, n, workdir):
    """Writes a batch of n samples; returns (path, format, torch input, labels)."""
    rng = np.random.default_rng(1234)
    if name in SEGMENTATION:
        # Images (segnet's digits-shaped) and a class per pixel (NumPy, labels (N, H, W)).
        shape, classes = SEGMENTATION[name]
        x = (rng.integers(0, 17, (n, *shape)) / 16.0 if name == "segnet"
             else rng.standard_normal((n, *shape))).astype(np.float32)
        labels = rng.integers(0, classes, (n, *shape[1:]))
        path = os.path.join(workdir, f"{name}-batch.npy")
        np.save(path, x)
        np.save(os.path.join(workdir, f"{name}-labels.npy"), labels.astype(np.int64))
        return path, "npy", torch.tensor(x), labels.reshape(-1)
    if name in ("lstmlm", "lstmlm_seq", "onehotgru", "embbag", "gpt", "transformer", "decoder",
                "padattn", "seq2seq",
                "robertapos", "hfmask", "hfinputs", "hfpairs") or \
            name in export_models.TORCH_EXPORT:
        # Token ids and the next token at every position (NumPy, int64), or
        # one of 4 classes a sequence (transformer, padattn, embbag); the Llamas' 16 of 64 tokens.
        vocab, length = (64, 16) if name in export_models.TORCH_EXPORT else (50, 12)
        tokens = rng.integers(0, vocab, (n, length + 1))
        if name in ("padattn", "seq2seq", "hfmask", "hfinputs", "hfpairs"):  # padding (id 0): the last 1 to 5 of every other
            for i in range(0, n, 2):        # sequence
                tokens[i, 11 - (i // 2) % 5:12] = 0
        if name in ("seq2seq", "hfmask", "hfinputs", "hfpairs"):  # under a causal mask a first id 0 leaves a row no key
            tokens[tokens[:, 0] == 0, 0] = 1
        if name == "robertapos":  # its pad id 1 at a quarter of the positions, anywhere
            tokens[rng.random(tokens.shape) < 0.25] = 1
        path = os.path.join(workdir, f"{name}-batch.npy")
        np.save(path, tokens[:, :length].astype(np.int64))
        labels = (rng.integers(0, 4, n) if name in ("transformer", "padattn", "robertapos", "embbag")
                  else tokens[:, 1:])
        np.save(os.path.join(workdir, f"{name}-labels.npy"), labels.astype(np.int64))
        return path, "npy", torch.tensor(tokens[:, :length]), labels.reshape(-1)
    labels = rng.integers(0, 10, n)
    if name in NPY_INPUTS:
        # NumPy data: inputs of any shape, taken as stored.
        x = rng.standard_normal((n, *NPY_INPUTS[name])).astype(np.float32)
        path = os.path.join(workdir, f"{name}-batch.npy")
        np.save(path, x)
        np.save(os.path.join(workdir, f"{name}-labels.npy"), labels.astype(np.int64))
        return path, "npy", torch.tensor(x), labels
    if name in ("resnet20", "googlenet", "mobilenetv3", "shufflenetv2", "vit", "convnext",
                "mnasnet", "swin", "swin_v2", "maxvit"):
        pixels = rng.integers(0, 256, (n, 3 * 32 * 32)).astype(np.uint8)
        path = os.path.join(workdir, f"{name}-batch.bin")
        with open(path, "wb") as f:
            f.write(np.concatenate([labels[:, None].astype(np.uint8), pixels], 1).tobytes())
        x = torch.tensor(pixels.astype(np.float32) / 255.0).reshape(n, 3, 32, 32)
        return path, "cifar10", x, labels
    pixels = rng.integers(0, 17, (n, 64))
    path = os.path.join(workdir, f"{name}-batch.csv")
    with open(path, "w") as f:
        for row, label in zip(pixels, labels):
            f.write(",".join(str(v) for v in row) + f",{label}\n")
    x = torch.tensor(pixels.astype(np.float32) / 16.0).reshape(n, 1, 8, 8)
    return path, "digits", x, labels
