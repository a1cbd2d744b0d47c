#!/usr/bin/python3
"""Checks mgs's training step against PyTorch on one batch.

    check_gradients.py MGSC MODEL WORKDIR [--steps K] [--lr LR] [--tol T] [--opset N]
                       [--vs-float32 F] [--float32-samples S] [--outliers FRACTION:FACTOR]
                       [--optimizer sgd|adamw] [--clip-grad-norm C]

Exports MODEL (lstmlm, gpt: language models on int64 token ids, a label per
token; transformer: a classifier of token ids; mlp, lenet, cnn, lstm, lngelu, gru, bilstm:
digits-shaped; resnet20, googlenet, mobilenetv3, shufflenetv2, vit, convnext, mnasnet,
swin: CIFAR-shaped;
inception3: 75x75, resnet50: 224x224, NumPy data) with torch,
compiles it with mgsc, writes one batch in the data format the executable
reads (digits CSV, CIFAR-10 binary or NumPy .npy: the same bytes torch sees, after the
same scaling), and runs the executable for K steps on that batch with plain
SGD. The trained parameters are read back from the ONNX model the
executable's --save writes. With K = 1 the gradient of every parameter is recovered exactly enough
as (w0 - w1) / lr (lr = 1000, so float32 rounding of w1 is negligible) and
compared with torch's autograd; with K > 1 the parameters after K steps, and
the BatchNorm running statistics, are compared with torch.optim.SGD's. The reference runs in float64: on ResNet-20
torch's own float32 run is up to 5e-3 away from it after a step (its BatchNorm
statistics are accumulated in float32), while mgs stays within ~1e-5. The
error of a tensor is ||mgs - ref|| / ||ref|| (/ the largest ||ref|| of all
tensors where ||ref|| is below 1e-10 of it: zero in exact arithmetic, as a
BatchNorm's bias is when the next BatchNorm cancels it); every tensor must be within --tol,
or, with --vs-float32 F, within F times PyTorch's own float32 error on it
(the largest over --float32-samples runs; --outliers lets a few tensors be
further, see its help) (but never 0.75 or more: a tensor that was not updated is 1 away): on
GoogLeNet, PyTorch's float32 gradients are up to 2e-3 from float64 (its
BatchNorm biases after 3 steps up to 0.5: they start at 0 and their gradients
cancel), and mgs's errors above 1e-4 are within 1.13x of PyTorch's.
With --optimizer adamw the executable runs K steps of AdamW (lr 0.01,
decoupled weight decay 0.01, torch's betas and eps) and what is compared, for
K = 1 too, is each tensor's displacement w_K - w0 against torch.optim.AdamW's
(the weights themselves would hide the update's error behind w0).
With --clip-grad-norm C, mgsc compiles the step with global gradient-norm
clipping and the reference calls torch.nn.utils.clip_grad_norm_(C) before each
update: with K = 1 and SGD, the gradient recovered is the clipped one.
Prints one line per parameter and exits 1 on a mismatch.
"""
import argparse
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402


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
# infinities (that mask) is compared for equality.
MGSC_ARGS = {"gpt": ["--freeze", "mask"]}

# Models fed NumPy data, and one sample's shape (their export's).
NPY_INPUTS = {"inception3": (3, 75, 75), "resnet50": (3, 224, 224)}


def make_batch(name, n, workdir):
    """Writes a batch of n samples; returns (path, format, torch input, labels)."""
    rng = np.random.default_rng(1234)
    if name in ("lstmlm", "gpt", "transformer"):
        # Token ids and the next token at every position (NumPy, int64), or
        # one of 4 classes a sequence (transformer).
        tokens = rng.integers(0, 50, (n, 13))
        path = os.path.join(workdir, f"{name}-batch.npy")
        np.save(path, tokens[:, :12].astype(np.int64))
        labels = rng.integers(0, 4, n) if name == "transformer" else tokens[:, 1:]
        np.save(os.path.join(workdir, f"{name}-labels.npy"), labels.astype(np.int64))
        return path, "npy", torch.tensor(tokens[:, :12]), labels.reshape(-1)
    labels = rng.integers(0, 10, n)
    if name in NPY_INPUTS:
        # NumPy data: inputs of any shape, taken as stored.
        x = rng.standard_normal((n, *NPY_INPUTS[name])).astype(np.float32)
        path = os.path.join(workdir, f"{name}-batch.npy")
        np.save(path, x)
        np.save(os.path.join(workdir, f"{name}-labels.npy"), labels.astype(np.int64))
        return path, "npy", torch.tensor(x), labels
    if name in ("resnet20", "googlenet", "mobilenetv3", "shufflenetv2", "vit", "convnext",
                "mnasnet", "swin"):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mgsc")
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--opset", type=int, default=15,
                    help="the ONNX opset the model is exported at (lngelu: 17 exports "
                         "LayerNormalization, 15 its decomposition)")
    ap.add_argument("--vs-float32", type=float, default=0.0,
                    help="also accept a tensor within this multiple of PyTorch's own float32 "
                         "error on it (for models whose float32 result is ill-conditioned)")
    ap.add_argument("--float32-samples", type=int, default=1,
                    help="PyTorch float32 runs whose largest error on a tensor is its float32 "
                         "error: the first on the batch itself, the others on the batch with "
                         "each input moved by at most one float32 rounding (what a float32 "
                         "error is on an ill-conditioned tensor depends on the rounding's luck; "
                         "the largest of several samples does not)")
    ap.add_argument("--outliers", default="",
                    help="FRACTION:FACTOR: with --vs-float32 F, up to this fraction of the tensors "
                         "may be within FACTOR (instead of F) times PyTorch's float32 error, if "
                         "the median of mgs's error over PyTorch's is within F (a few tensors "
                         "whose float32 gradient is a sum that nearly cancels: their error "
                         "follows the summation order of the CPU's kernels)")
    ap.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    ap.add_argument("--clip-grad-norm", type=float, default=0.0,
                    help="compile with mgsc --clip-grad-norm C; the reference clips with "
                         "torch.nn.utils.clip_grad_norm_ before each update")
    args = ap.parse_args()
    adamw = args.optimizer == "adamw"
    os.makedirs(args.workdir, exist_ok=True)
    torch.set_num_threads(1)

    export_models.export(args.model, args.opset, args.workdir)
    onnx_path = os.path.join(args.workdir, f"{args.model}-opset{args.opset}.onnx")
    exe = os.path.join(args.workdir, f"train_{args.model}")
    clip_args = ["--clip-grad-norm", str(args.clip_grad_norm)] if args.clip_grad_norm > 0 else []
    subprocess.run([args.mgsc, onnx_path, "--batch-size", str(args.batch), "-o", exe, "--quiet",
                    *clip_args, *MGSC_ARGS.get(args.model, [])], check=True)

    # The same initial weights: the export's (the build with the same seed).
    torch.manual_seed(0)
    model, _ = export_models.build(args.model)
    model.train()
    w0 = read_weights(exe + ".weights")
    with torch.no_grad():
        for pname, p in model.named_parameters():
            assert np.array_equal(p.numpy(), w0[pname]), f"{pname}: initial weights differ"

    path, fmt, x, labels = make_batch(args.model, args.batch, args.workdir)
    y = torch.tensor(labels, dtype=torch.long)
    lr = args.lr if args.lr is not None else (1000.0 if args.steps == 1 and not adamw else 0.01)
    if adamw:
        opt_args = ["--optimizer", "adamw", "--weight-decay", "0.01"]
    else:
        opt_args = ["--momentum", "0" if args.steps == 1 else "0.9",
                    "--weight-decay", "0" if args.steps == 1 else "1e-4"]
    trained = os.path.join(args.workdir, f"{args.model}-trained.onnx")
    labels_args = ["--labels", path.replace("-batch.npy", "-labels.npy")] if fmt == "npy" else []
    subprocess.run([exe, "--data", path, "--data-format", fmt, *labels_args, "--epochs", str(args.steps),
                    "--holdout", "0", "--lr", str(lr), *opt_args,
                    "--progress-every", "0", "--save", trained],
                   check=True, stdout=subprocess.DEVNULL)
    saved = onnx.load(trained)
    onnx.checker.check_model(saved)
    w1 = {t.name: onnx.numpy_helper.to_array(t) for t in saved.graph.initializer}

    def reference(dtype, perturb=None):
        """torch's result in `dtype`: gradients (1 step) or parameters after K steps;
        `perturb`: a seed for moving each float input by up to one float32 rounding."""
        torch.manual_seed(0)
        ref, _ = export_models.build(args.model)
        ref.train()
        # Start from exactly what mgs starts from: the exported initializers.
        # (torch.onnx.export traces a training-mode forward, which moves the
        # BatchNorm running statistics away from the fresh model's 0 and 1.)
        with torch.no_grad():
            for n, t in ref.state_dict().items():
                if n in w0:
                    t.copy_(torch.from_numpy(w0[n].copy()))
        ref.to(dtype)
        xs = x if not x.is_floating_point() else x.to(dtype)
        if perturb is not None and x.is_floating_point():
            g = torch.Generator().manual_seed(perturb)
            u = (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1) * 2.0**-24
            xs = (x.double() * (1 + u)).to(dtype)
        def clip():
            if args.clip_grad_norm > 0:
                norms.append(float(torch.nn.utils.clip_grad_norm_(ref.parameters(),
                                                                  args.clip_grad_norm)))
        if args.steps == 1 and not adamw:
            F.cross_entropy(ref(xs), y).backward()
            clip()
            return {n: p.grad.double().numpy() for n, p in ref.named_parameters()}
        if adamw:
            opt = torch.optim.AdamW(ref.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8,
                                    weight_decay=0.01)
        else:
            opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
        for _ in range(args.steps):
            opt.zero_grad()
            F.cross_entropy(ref(xs), y).backward()
            clip()
            opt.step()
        if adamw:  # the displacement from the start
            return {n: t.detach().double().numpy() - w0[n].astype(np.float64)
                    for n, t in ref.state_dict().items() if n in w0 and t.is_floating_point()}
        # (Integer buffers, BatchNorm's step count or position ids, are not
        # the step's.)
        return {n: t.detach().double().numpy() for n, t in ref.state_dict().items()
                if t.is_floating_point()}

    norms = []
    exact = reference(torch.float64)
    if args.clip_grad_norm > 0:
        # The test means something only if the clipping changed the update.
        shown = ", ".join(f"{n:.4g}" for n in norms[:args.steps])
        print(f"gradient norms before clipping (float64), step by step: {shown}")
        if norms[0] <= args.clip_grad_norm:
            print(f"MISMATCH: the first gradient norm {norms[0]:.4g} is within --clip-grad-norm "
                  f"{args.clip_grad_norm:g}: nothing was clipped")
            sys.exit(1)
    samples32 = [reference(torch.float32)] + [reference(torch.float32, perturb=s)
                                              for s in range(1, args.float32_samples)]
    if adamw:
        ours = {n: w1[n].astype(np.float64) - w0[n].astype(np.float64) for n in exact}
        what = f"AdamW displacement (w{args.steps} - w0) after {args.steps} step(s)"
    elif args.steps == 1:
        ours = {n: (w0[n].astype(np.float64) - w1[n]) / lr for n in exact}
        what = "gradient"
    else:
        ours = {n: w1[n].astype(np.float64) for n in exact}
        what = f"parameters and running statistics after {args.steps} steps"
    pairs = [(n, ours[n], exact[n]) for n in exact]

    # A tensor whose reference is zero in exact arithmetic (within float64
    # rounding of the largest tensor: the bias of a BatchNorm whose every path
    # to the loss runs through another training-mode BatchNorm, which is
    # invariant to a shift of its input, as in MobileNetV3's blocks) has no
    # relative error: its error is measured against the largest reference
    # tensor instead, i.e. it must be zero up to rounding.
    largest = max(float(np.linalg.norm(t)) for t in exact.values() if np.isfinite(t).all())
    zero_floor = 1e-10 * largest
    zeros = {n for n, t in exact.items() if np.linalg.norm(t) <= zero_floor}

    def rel(a, b):
        if not np.isfinite(b).all():
            return 0.0 if np.array_equal(a, b) else float("inf")
        norm = np.linalg.norm(b)
        return float(np.linalg.norm(a - b) / (largest if norm <= zero_floor else max(norm, 1e-30)))
    def err32_of(name):
        return max(rel(t[name], exact[name]) for t in samples32)
    torch_worst = max(err32_of(n) for n in exact)

    out_fraction, out_factor = (float(v) for v in args.outliers.split(":")) if args.outliers else (0.0, 0.0)
    worst, bad, outliers, ratios = 0.0, [], [], []
    for name, ours, ref in pairs:
        err, err32 = rel(ours, ref), err32_of(name)
        worst = max(worst, err)
        # Capped: a tensor never updated (error 1) or of the wrong sign never passes.
        allowed = max(args.tol, min(args.vs_float32 * err32, 0.75))
        zero = " (zero in exact arithmetic: error relative to the largest tensor)" \
            if name in zeros else ""
        print(f"  {name:40s} rel err {err:.2e} (PyTorch float32: {err32:.2e}){zero}")
        if err > args.tol and err32 > 0:
            ratios.append(err / err32)
        if err <= allowed:
            continue
        if err <= max(args.tol, min(out_factor * err32, 0.75)):
            outliers.append(f"{name} ({err / err32:.1f}x)")
        else:
            bad.append(name)
    if outliers:
        median = float(np.median(ratios)) if ratios else 0.0
        print(f"outliers within {out_factor:g}x PyTorch float32's error: {', '.join(outliers)}; "
              f"median of mgs's error over PyTorch's: {median:.2f}")
        if len(outliers) > out_fraction * len(pairs) or median > args.vs_float32:
            bad += [o.split(" ")[0] for o in outliers]
    bound = f"tolerance {args.tol:g}"
    if args.vs_float32:
        bound += f" or {args.vs_float32:g}x PyTorch float32's error on the tensor, at most 0.75"
    if args.clip_grad_norm > 0:
        what += f", gradient norm clipped to {args.clip_grad_norm:g}"
    print(f"{args.model}: {what} of {len(pairs)} tensors vs PyTorch (float64): max rel err {worst:.2e} "
          f"({bound}; PyTorch's own float32 run: {torch_worst:.2e})")
    if bad:
        print("MISMATCH: " + ", ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
