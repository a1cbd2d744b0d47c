#!/usr/bin/env python3
"""One-step gradient check of probe_zoo.py's "hf ..." rows (Hugging Face transformers models),
"timm ..." rows (timm's classifiers) and "pyg ..." rows (PyTorch Geometric's graph networks).

    check_hf_gradients.py [--build DIR] [--work DIR] [--only NAME,...] [--tol T] [--verbose]
                          [--inject NAME:FACTOR]

For each row (default: every "hf ...", "timm ..." and "pyg ..." row but those with dropout and "(pad id 0)", whose padding
row PyTorch never updates: it differs by design, docs/models.md): the row's export (probe_zoo.py's
export(): its exporter and opset) is compiled by DIR/bin/mgsc with the row's mgsc options (the
decoders' rotary inv_freq frozen), and the executable takes one step of plain SGD (lr 1000, no
momentum, no weight decay) on the first batch of the row's data; mgs's gradient is
(w0 - w1) / lr, each parameter's, against PyTorch's on the same batch from the same initial
weights (the executable's .weights) in float64, bounded by check_gradients.py's compare()
(--tol, 1e-4 by default: the whole model's relative error, and each tensor's within it at the
larger of its norm and the model's scale). PyTorch's float32 gradient's error is printed beside
(with --float32-samples N, the largest over N float32 runs: the batch, and the batch with each
input moved by one float32 rounding).
A row whose tensors fail that fixed bound passes "at PyTorch float32's level" when each of them
is within max(--tol, 2x PyTorch float32's error on it) and the whole model within max(--tol, 2x
float32's): the rule for tiny random models whose gradients cancel in places.
--inject NAME:FACTOR scales mgs's gradient of tensor NAME (in the rows that have it) before the
comparison: the check must then fail.
Run with a Python that has torch 2.x and transformers (the benches' venv,
~/.cache/mgs-torch2/bin/python) from the repository root. Prints one line a row; exits 1 if
any row's gradient fails (a row that does not compile is skipped).
"""
import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import types
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_gradients  # noqa: E402
import probe_zoo  # noqa: E402

LR = 1000.0


def gradients(ctor, w0, x, y, dtype, smoothing=0.0):
    """PyTorch's gradient of the mean cross entropy in `dtype`, from the weights `w0`. A
    parameter the logits do not read (CLIP's vision post_layernorm under its classifier) is
    not in the export, nor compared."""
    torch.manual_seed(0)
    model = ctor()
    model.train()
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n in w0:
                p.copy_(torch.from_numpy(w0[n].copy()))
    model.to(dtype)
    xs = x.to(dtype) if x.is_floating_point() else x
    F.cross_entropy(model(xs), y.reshape(-1), label_smoothing=smoothing).backward()
    # (a parameter PyTorch does not train, Whisper's sinusoidal embed_positions, has no
    # gradient: frozen by the row's mgsc options too, not compared)
    return {n: p.grad.double().numpy() for n, p in model.named_parameters()
            if n in w0 and p.requires_grad}


def moved(x, seed):
    """`x` (seed 0: as it is) with each element moved by one float32 rounding up or down at
    random; token ids as they are."""
    if seed == 0 or not x.is_floating_point():
        return x
    a = x.numpy()
    up = np.random.default_rng(seed).random(a.shape) < 0.5
    return torch.from_numpy(np.nextafter(
        a, np.where(up, np.float32(np.inf), np.float32(-np.inf)).astype(a.dtype)))


def check(name, spec, args):
    ctor, shape, kind, batch, samples, _ = spec
    work = os.path.join(args.work, re.sub(r"[^A-Za-z0-9_]", "_", name))
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    with contextlib.redirect_stdout(io.StringIO()):  # (the torch.export-based exporter's steps)
        probe_zoo.export(name, ctor, shape, kind, path, batch)
    exe = os.path.join(work, "train")
    p = subprocess.run([os.path.join(args.build, "bin", "mgsc"), path, "--batch-size", str(batch),
                        "--quiet", *probe_zoo.MGSC_ARGS.get(name, []),
                        *probe_zoo.INPUT_ARGS.get(name, []), "-o", exe,
                        *(["--label-smoothing", str(args.label_smoothing)]
                          if args.label_smoothing else [])],
                       capture_output=True, text=True)
    if p.returncode != 0:  # not a gradient mismatch: the row's table says so
        print(f"{name}: does not compile, skipped ({probe_zoo.first_error(p.stderr)})", flush=True)
        return True
    xf, yf = probe_zoo.make_data(kind, shape, samples, work)
    x, y = np.load(xf)[:batch], np.load(yf)[:batch]  # the first batch
    if args.pad_labels:  # padding both losses ignore (Hugging Face's labels of -100)
        y = y.copy()
        if y.ndim == 2:  # a label per token: the last 1 to 5 of every other sequence
            for i in range(0, batch, 2):
                y[i, y.shape[1] - 1 - (i // 2) % 5:] = -100
        else:  # a label per sample: every third
            y[::3] = -100
    bx, by = os.path.join(work, "batch-x.npy"), os.path.join(work, "batch-y.npy")
    np.save(bx, x)
    np.save(by, y)
    trained = os.path.join(work, "trained.onnx")
    subprocess.run([exe, "--data", bx, "--labels", by, "--epochs", "1", "--holdout", "0",
                    "--lr", str(LR), "--momentum", "0", "--weight-decay", "0",
                    "--progress-every", "0", "--save", trained],
                   check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, OMP_NUM_THREADS="1"))
    w0 = check_gradients.read_weights(exe + ".weights")
    w1 = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(trained).graph.initializer}
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    exact = gradients(ctor, w0, xt, yt, torch.float64, args.label_smoothing)
    # PyTorch float32's runs: on the batch, and (--float32-samples) on the batch with each input
    # moved by one float32 rounding: a model with an activation a rounding away from a ReLU's
    # kink is off float64 in any float32 run that rounds it across (GhostNetV2 at 64x64).
    samples32 = [gradients(ctor, w0, moved(xt, s), yt, torch.float32, args.label_smoothing)
                 for s in range(args.float32_samples)]
    g32 = samples32[0]
    ours = {n: (w0[n].astype(np.float64) - w1[n]) / LR for n in exact}
    if args.inject and args.inject.rsplit(":", 1)[0] in ours:
        check_gradients.inject(ours, "the gradient", args.inject)
    opts = types.SimpleNamespace(tol=args.tol, vs_float32=0.0, tensor_factor=1.0,
                                 tensor_vs_float32=0.0, low_name="PyTorch float32")
    with contextlib.redirect_stdout(io.StringIO()) as per_tensor:
        r = check_gradients.compare(ours, exact, samples32, set(exact), opts)
    ok = not r["bad"]
    verdict = "ok" if ok else "MISMATCH " + ", ".join(r["bad"])
    # The relative rule where the fixed bound fails a tensor: each such tensor within
    # max(--tol, 2x PyTorch float32's error on it), the whole model within its bound (a tiny
    # random model whose gradients cancel in places: MobileViT's biases, float32's own error
    # on them past 1e-4).
    if not ok and r["model"] <= max(args.tol, 2 * r["model32"]):
        def rel(a, b):
            return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)
        # (r["bad"] names the whole model too when it is past the fixed bound)
        worst = max((rel(ours[n], exact[n]) /
                     max(args.tol, 2 * max(rel(g[n], exact[n]) for g in samples32))
                     for n in r["bad"] if n in ours), default=0.0)
        if worst <= 1.0:
            ok = True
            verdict = (f"ok at PyTorch float32's level: {len(r['bad'])} tensors past the fixed "
                       f"bound, each within 2x float32's own error on it (at {worst:.2f} of that)")
    print(f"{name}: {len(exact)} tensors, whole model {r['model']:.2e} (PyTorch float32 "
          f"{r['model32']:.2e}), worst tensor {r['worst']:.2e} ({r['tensor_worst']}, "
          f"{r['tensor_ratio']:.3f} of its bound): {verdict}", flush=True)
    if args.verbose or not ok:
        print(per_tensor.getvalue(), end="")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the mgs build tree (default build)")
    ap.add_argument("--work", default="build/hf-gradients", help="scratch directory")
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--inject", default="", help="NAME:FACTOR: scale mgs's gradient of NAME")
    ap.add_argument("--verbose", action="store_true", help="print every tensor's error")
    ap.add_argument("--pad-labels", action="store_true",
                    help="labels of -100 (padding, ignored by both losses): the last 1 to 5 of "
                         "every other sequence, or every third sample's")
    ap.add_argument("--float32-samples", type=int, default=1,
                    help="PyTorch float32 runs whose largest error is float32's: the first on "
                         "the batch, the others on it with each input moved by one rounding")
    ap.add_argument("--label-smoothing", type=float, default=0.0,
                    help="mgsc --label-smoothing E, and the reference's label_smoothing")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    table = {n: s for n, s in {**probe_zoo.hf_models(), **probe_zoo.timm_models(),
                               **probe_zoo.pyg_models()}.items() if "dropout" not in n}
    if not table:
        sys.exit("check_hf_gradients.py: needs Hugging Face transformers, timm or torch_geometric "
                 "(and PyTorch 2.x)")
    # "(pad id 0)" differs by design (its padding_idx row: docs/models.md): on --only alone
    names = [n for n in args.only.split(",") if n] or [n for n in table if "pad id 0" not in n]
    unknown = [n for n in names if n not in table]
    if unknown:
        sys.exit(f"check_hf_gradients.py: unknown row(s) {', '.join(unknown)}; known: "
                 f"{', '.join(table)}")
    results = [check(n, table[n], args) for n in names]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
