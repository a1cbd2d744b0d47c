#!/usr/bin/python3
"""Transformer training-step time and peak memory on the CPU (or a GPU): mgs
against PyTorch eager (and torch.compile where the PyTorch has it) on the same
model, batch and thread count, in one run.

    bench/transformer_step.py [BUILD_DIR] [--threads T] [--window W] [--windows K]
                              [--repeats R] [--models vit_small,gpt_medium]
                              [--torch2 PYTHON] [--mgsc MGSC]
                              [--device cuda [--exe NAME=PATH ...]] [--bf16] [--f16]

Models (scripts/export_models.py): vit_small, a VisionTransformer (image 32,
patch 4, 6 layers, width 192, 3 heads, MLP 768; batch 16 of CIFAR-shaped
float data) and gpt_medium, the GPT-style causal LM (6 blocks, width 256, 4
heads, 128 tokens a sequence, 2,000 tokens; batch 4 sequences, a label per
token; its causal -inf mask frozen: mgsc --freeze mask). Both sides train with
AdamW (lr 1e-3, no weight decay) on the same synthetic batches.

mgs: mgsc compiles the torch export; the executable trains 1 + K windows of W
steps, printing a progress line every W steps: the step time is the median over
the K windows after the first (which includes oneDNN's primitive creation),
each timed by when its line arrives.
PyTorch: the same model from export_models.build, W warm-up steps, then the
median of K timed windows of W steps: Debian's PyTorch 1.13 and, with --torch2
PYTHON (a Python with PyTorch 2.x; by default the venv that scripts/setup.sh
--bench makes, if present) that PyTorch eager and torch.compile (default mode; its compile
time is in the warm-up and reported apart) run too. Peak RSS: GNU time's
maximum resident set of the mgs executable, getrusage's of each PyTorch child
(the whole process, interpreter and libraries included, as for mgs).

Each of the R repeats runs every side once, one after the other (the machine
may be shared): the table gives each side's median over the repeats and the
median of the per-repeat ratios mgs/PyTorch (goal: time <= 1.0, peak RSS
<= 0.5 against Debian's PyTorch eager).

--bf16 (CPU): mixed precision beside float32: mgs-bf16 is the executable compiled with mgsc
--precision bf16 (GEMMs, matmuls and convolutions on bfloat16 operands, float32
accumulation) and torch2-autocast PyTorch 2.x eager with its forward under
torch.autocast("cpu", dtype=torch.bfloat16) (torch.compile is skipped).

--f16 (CPU): mgs-f16, compiled with mgsc --precision f16 (operands rounded to IEEE half, the
default dynamic loss scale), beside mgs's float32 step and torch2-autocast-f16, PyTorch 2.x
eager under torch.autocast("cpu", dtype=torch.float16) (torch.compile is skipped): on a CPU
without half arithmetic mgs's kernels compute on rounded float32 copies, so this measures what
the rounding passes and the loss scale's per-step snapshot cost, not a speed-up.

--device cuda: mgs's executables are compiled with --target=cuda (or given
prebuilt with --exe, as bench/gpu_check.sh does from its bundle) and PyTorch
(--torch2, default python3) runs the same model on the GPU, fp32 without TF32
as mgs; each window ends with a synchronization (mgs's steps do: the loss
comes back every step). Debian's PyTorch 1.13 has no CUDA and does not run;
the ratios are against PyTorch eager on the GPU, and PyTorch's peak is its
peak GPU memory (torch.cuda.max_memory_allocated) beside mgs's host RSS.
On a GPU mgs-graph is the same executable with --cuda-graph (its step captured
once as a CUDA graph and replayed; where it cannot be, the line printed says why).
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import benchlib  # noqa: E402

BATCH = {"vit_small": 16, "gpt_medium": 4}
MGSC_ARGS = {"gpt_medium": ["--freeze", "mask"]}
LR = 1e-3


def make_data(name, n, work):
    """n synthetic samples for model name: (data .npy, labels .npy)."""
    rng = np.random.default_rng(0)
    if name.startswith("gpt"):
        tokens = rng.integers(0, 2000, (n, 129))
        x, y = tokens[:, :-1], tokens[:, 1:]
    else:
        x = rng.standard_normal((n, 3, 32, 32)).astype(np.float32)
        y = rng.integers(0, 10, n)
    paths = (os.path.join(work, f"{name}-x.npy"), os.path.join(work, f"{name}-y.npy"))
    np.save(paths[0], x)
    np.save(paths[1], y.astype(np.int64))
    return paths


def torch_child(name, threads, window, windows, compile_, data, labels, device, autocast):
    """Runs in a child process: prints a JSON line with PyTorch's median step
    time over the timed windows, every window, the warm-up time and the peak
    RSS (and peak GPU memory on a GPU)."""
    import torch
    import torch.nn.functional as F
    import export_models
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    gpu = device == "cuda"
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    model, _ = export_models.build(name)
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    run = torch.compile(model) if compile_ else model
    xs = torch.from_numpy(np.load(data)).to(device)
    ys = torch.from_numpy(np.load(labels)).to(device)
    b = BATCH[name]
    sync = torch.cuda.synchronize if gpu else (lambda: None)

    def step(i):
        j = (i * b) % (len(ys) - b + 1)
        x, y = xs[j:j + b], ys[j:j + b].reshape(-1)
        opt.zero_grad()
        with torch.autocast(device, dtype=torch.float16 if autocast == "f16" else torch.bfloat16,
                            enabled=autocast != "0"):
            out = run(x)
        F.cross_entropy(out.float(), y).backward()
        opt.step()
    start = time.perf_counter()
    for i in range(window):
        step(i)
    sync()
    warmup = time.perf_counter() - start
    times = []
    for k in range(windows):
        start = time.perf_counter()
        for i in range(window):
            step(window * (k + 1) + i)
        sync()
        times.append((time.perf_counter() - start) / window * 1000)
    res = {"ms": statistics.median(times), "windows": times, "warmup_s": warmup,
           "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "torch": torch.__version__}
    if gpu:
        res["gpu_peak_kb"] = torch.cuda.max_memory_allocated() // 1024
    print(json.dumps(res))


def run_torch(python, name, args, compile_, data, labels, env, autocast="0"):
    """autocast: "0" (none), "bf16" or "f16"."""
    cmd = [python, os.path.abspath(__file__), args.build, "--threads", str(args.threads),
           "--window", str(args.window), "--windows", str(args.windows),
           "--device", args.device,
           "--torch-child", name, "1" if compile_ else "0", data, labels,
           autocast]
    out = benchlib.run_checked(cmd, f"PyTorch ({python}) on {name}", timeout=1800, env=env)
    return json.loads(out.strip().splitlines()[-1])


def run_mgs(exe, name, args, data, labels, env, extra=()):
    """The executable's windows timed by when each progress line arrives (its
    samples/s has one decimal: too coarse at a few samples/s)."""
    cmd = ["/usr/bin/time", "-f", "maxrss_kb %M", exe, "--data", data, "--labels", labels,
           "--epochs", "1", "--holdout", "0", "--optimizer", "adamw", "--lr", str(LR),
           "--seed", "1", "--progress-every", str(args.window), *extra]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, env=env)
    arrivals, out = [], []
    for line in p.stdout:
        out.append(line)
        if benchlib.RATE_RE.search(line):
            arrivals.append(time.perf_counter())
        elif line.startswith("--cuda-graph: "):  # it ran kernel by kernel: say why
            print(f"{name}: {line.strip()}", flush=True)
    err = p.stderr.read()
    if p.wait() != 0 or len(arrivals) < 2:
        raise RuntimeError(f"mgs on {name}: exit status {p.returncode}: {err.strip()[-500:]}")
    times = [(b - a) / args.window * 1000 for a, b in zip(arrivals, arrivals[1:])]
    return {"ms": statistics.median(times), "windows": times,
            "rss_kb": int(re.search(r"maxrss_kb (\d+)", err).group(1))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--window", type=int, default=5, help="steps a timed window")
    ap.add_argument("--windows", type=int, default=4, help="timed windows after the warm-up")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", default="vit_small,gpt_medium")
    ap.add_argument("--mgsc", help="the mgsc to use (default: BUILD_DIR/bin/mgsc)")
    ap.add_argument("--torch2", default=benchlib.torch2_python(),
                    help="a Python with PyTorch 2.x: its eager and torch.compile too (default: "
                         "the venv of scripts/setup.sh --bench, when there is one; 'none': skip)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="where both sides train (cuda: mgsc --target=cuda, PyTorch on the GPU)")
    ap.add_argument("--exe", action="append", default=[], metavar="NAME=PATH",
                    help="a prebuilt mgs executable for model NAME (no export, no mgsc)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile's side")
    ap.add_argument("--bf16", action="store_true",
                    help="CPU: also mgsc --precision bf16 and PyTorch 2.x under bf16 autocast")
    ap.add_argument("--f16", action="store_true",
                    help="CPU: also mgsc --precision f16 (its cost over mgs's float32 step)")
    ap.add_argument("--torch-child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        name, comp, data, labels, autocast = args.torch_child
        torch_child(name, args.threads, args.window, args.windows, comp == "1", data, labels,
                    args.device, autocast)
        return
    gpu = args.device == "cuda"
    if gpu and (args.bf16 or args.f16):
        sys.exit("transformer_step.py: --bf16 and --f16 are for the CPU (mgsc --precision bf16 "
                 "and f16 are CPU-only)")
    prebuilt = {}
    for item in args.exe:
        name, sep, path = item.partition("=")
        if not sep or name not in BATCH or not os.path.exists(path):
            sys.exit(f"transformer_step.py: --exe {item}: expected NAME=PATH with NAME one of "
                     f"{', '.join(BATCH)} and PATH an existing executable")
        prebuilt[name] = path

    work = os.path.join(args.build, "bench")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    models = args.models.split(",")
    mgsc = args.mgsc or os.path.join(args.build, "bin", "mgsc")
    setups = {}
    for name in models:
        if name not in BATCH:
            sys.exit(f"transformer_step.py: unknown model '{name}'; known: {', '.join(BATCH)}")
        if name in prebuilt:
            exe, params = prebuilt[name], None
        else:
            model, params = benchlib.export_model(name, os.path.join(work, "models"))
            exe = os.path.join(work, f"train_{name}" + ("_cuda" if gpu else ""))
            benchlib.run_checked([mgsc, model, "--batch-size", str(BATCH[name]),
                                  *MGSC_ARGS.get(name, []), *(["--target=cuda"] if gpu else []),
                                  "-o", exe, "--quiet"], f"mgsc {name}")
            for precision in ("bf16", "f16"):
                if getattr(args, precision):
                    benchlib.run_checked([mgsc, model, "--batch-size", str(BATCH[name]),
                                          *MGSC_ARGS.get(name, []), "--precision", precision,
                                          "-o", f"{exe}_{precision}", "--quiet"],
                                         f"mgsc {name} {precision}")
        data = make_data(name, BATCH[name] * args.window * (args.windows + 1), work)
        setups[name] = (exe, params, data)

    if args.torch2 == "none":
        args.torch2 = None
    if gpu:
        # Debian's PyTorch has no CUDA: the GPU's baseline is the given one.
        args.torch2 = args.torch2 or "python3"
        print(f"PyTorch sides: {args.torch2}'s, on the GPU", flush=True)
        # mgs-graph: the executable's --cuda-graph (the step captured once, replayed).
        sides = [("mgs", None, False), ("mgs-graph", None, False),
                 ("torch-eager", args.torch2, False), ("torch-compile", args.torch2, True)]
    else:
        print("PyTorch sides: torch-1.13 is Debian's (/usr/bin/python3); " +
              (f"torch2-* is {args.torch2}'s" if args.torch2 else
               "no PyTorch 2.x (scripts/setup.sh --bench makes one)"), flush=True)
        sides = [("mgs", None, False), ("torch-1.13", "/usr/bin/python3", False)]
        if args.torch2:
            sides += [("torch2-eager", args.torch2, False), ("torch2-compile", args.torch2, True)]
        if args.bf16:
            sides.insert(1, ("mgs-bf16", None, False))
            sides = [side for side in sides if not side[2]]
            if args.torch2:
                sides.append(("torch2-autocast", args.torch2, False))
        if args.f16:
            sides.insert(1, ("mgs-f16", None, False))
            sides = [side for side in sides if not side[2]]
            if args.torch2:
                sides.append(("torch2-autocast-f16", args.torch2, False))
    if args.no_compile:
        sides = [side for side in sides if not side[2]]
    baseline = next(side for side, python, _ in sides if python)
    results = {name: {side: [] for side, _, _ in sides} for name in models}
    for r in range(args.repeats):
        for name in models:
            exe, _, (data, labels) = setups[name]
            for side, python, comp in sides:
                try:
                    suffix = {"mgs-bf16": "_bf16", "mgs-f16": "_f16"}.get(side, "")
                    extra = ["--cuda-graph"] if side == "mgs-graph" else []
                    res = (run_mgs(exe + suffix, name, args, data, labels, env, extra)
                           if python is None else
                           run_torch(python, name, args, comp, data, labels, env,
                                     autocast={"torch2-autocast": "bf16",
                                               "torch2-autocast-f16": "f16"}.get(side, "0")))
                except RuntimeError as e:
                    res = {"error": str(e).splitlines()[0]}
                results[name][side].append(res)
                print(f"repeat {r + 1} {name} {side}: {json.dumps(res)}", flush=True)

    where = "a GPU, fp32 (no TF32)" if gpu else f"the CPU, {args.threads} threads"
    print(f"\nTraining step on {where}, AdamW; medians over "
          f"{args.repeats} repeats of {args.windows} windows of {args.window} steps:")
    for name in models:
        _, params, _ = setups[name]
        print(f"\n{name}" + (f" ({params:,} parameters)" if params else "") +
              f", batch {BATCH[name]}:")
        base = results[name][baseline]
        for side, _, _ in sides:
            runs = [x for x in results[name][side] if "ms" in x]
            if not runs:
                print(f"  {side:15s} failed: {results[name][side][0]['error']}")
                continue
            ms = statistics.median(x["ms"] for x in runs)
            rss = statistics.median(x["rss_kb"] for x in runs) / 1024
            line = f"  {side:15s} {ms:9.1f} ms/step   peak RSS {rss:7.1f} MiB"
            if "gpu_peak_kb" in runs[0]:
                gpu_peak = statistics.median(x["gpu_peak_kb"] for x in runs) / 1024
                line += f"   peak GPU memory {gpu_peak:7.1f} MiB"
            def ratios(other):
                """The medians of the per-repeat time and RSS ratios side / other."""
                pairs = [(x, y) for x, y in zip(results[name][side], results[name][other])
                         if "ms" in x and "ms" in y]
                if not pairs:
                    return ""
                tr = statistics.median(x["ms"] / y["ms"] for x, y in pairs)
                mr = statistics.median(x["rss_kb"] / y["rss_kb"] for x, y in pairs)
                return f"   vs {other}: time {tr:.3f}x  RSS {mr:.3f}x"
            if side != baseline:
                line += ratios(baseline)
            # Mixed precision against float32 and against PyTorch's own.
            if side in ("mgs-bf16", "mgs-f16"):
                line += ratios("mgs")
                theirs = "torch2-autocast" + ("-f16" if side == "mgs-f16" else "")
                if theirs in results[name]:
                    line += ratios(theirs)
            if "warmup_s" in runs[0]:
                line += f"   (warm-up {statistics.median(x['warmup_s'] for x in runs):.1f} s, "
                line += f"torch {runs[0]['torch']})"
            print(line)
    # On a GPU (bench/gpu_check.sh's step) mgs or its baseline failing fails the run.
    if gpu and any(all("error" in x for x in results[name][side])
                   for name in models for side in ("mgs", baseline)):
        sys.exit("transformer_step.py: mgs or PyTorch eager failed on the GPU (above)")


if __name__ == "__main__":
    main()
